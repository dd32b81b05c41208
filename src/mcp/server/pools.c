/* Where a session's runtimes come from: one pool of ready sessions per
 * language (cc_pool_new with a fork server, --pool N), started at
 * server start (in a thread of its own, so serving begins at once), so a
 * new MCP session's first call and a reset cost a checkout
 * instead of a worker start. --pool 0, or a pool that cannot start (the
 * host lacks what the fork server needs), falls back to cc_runtime_new for
 * that start; a failed pool is tried again after MCP_POOL_RETRY_S. Either
 * way the runtime gets the same options (mcp_runtime_options), then the
 * network policy and redaction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "pools.h"
#include "upstream.h"
#include "session.h"

/* How long a start waits for the pool's thread before starting a worker
 * itself, s; and how long after a failed cc_pool_new to try again, s. */
#define MCP_POOL_WAIT_S 5.0
#define MCP_POOL_RETRY_S 30.0

struct mcp_pools {
	const struct mcp_config *cfg;
	pthread_mutex_t lock; /* guards the fields below, and pool starts */
	cc_pool *pool[MCP_LANGS];
	pthread_t starter; /* starts both pools at server start */
	bool have_starter;
	double failed_at[MCP_LANGS]; /* mcp_now() of the last failed start; 0 = none */
};

void mcp_runtime_options(const struct mcp_config *cfg, int lang, cc_options *o)
{
	cc_options_init(o, mcp_lang_cc(lang));
	o->sandbox = cfg->sandbox;
	o->web_polyfills = cfg->web_polyfills && lang != MCP_LANG_PY;
	o->limits.timeout_s = cfg->timeout_s;
	if (cfg->memory_mib)
		o->limits.max_memory = cfg->memory_mib << 20;
	o->limits.max_stdout = cfg->max_output;
	o->limits.max_stderr = cfg->max_output;
	o->limits.max_result = cfg->max_result;
	if (cfg->cpu_s)
		o->limits.cpu_s = cfg->cpu_s;
	if (cfg->max_open_files)
		o->limits.max_open_files = cfg->max_open_files;
	if (cfg->max_file_size_mib)
		o->limits.max_file_size = cfg->max_file_size_mib << 20;
	o->limits.max_source = cfg->max_request;
	if (lang != MCP_LANG_PY) {
		o->libraries = cfg->libraries;
		o->n_libraries = cfg->n_libraries;
		o->node_modules = cfg->node_modules;
	}
	if (lang == MCP_LANG_PY) {
		o->python_path = cfg->python_path;
		o->n_python_path = cfg->n_python_path;
	}
	o->scratch_bytes = cfg->scratch_mib << 20;
	o->max_sessions = cfg->fork_max_sessions;
	o->mounts = cfg->mounts;
	o->n_mounts = cfg->n_mounts;
	o->deps = &cfg->deps.o;
}

static cc_pool *pool_get(struct mcp_pools *p, int lang);

/* --fork-max-sessions as the library applies it (0: its default). */
static unsigned cc_max_sessions_of(const struct mcp_config *cfg)
{
	return cfg->fork_max_sessions ? cfg->fork_max_sessions : CC_FORK_MAX_SESSIONS_DEFAULT;
}

static void *starter_main(void *arg)
{
	struct mcp_pools *p = arg;
	for (int i = 0; i < MCP_LANGS; i++)
		pool_get(p, i);
	return NULL;
}

struct mcp_pools *mcp_pools_new(const struct mcp_config *cfg)
{
	struct mcp_pools *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->cfg = cfg;
	pthread_mutex_init(&p->lock, NULL);
	/* Without the thread, each pool starts on its language's first use. */
	p->have_starter = cfg->pool_size && !pthread_create(&p->starter, NULL, starter_main, p);
	return p;
}

void mcp_pools_free(struct mcp_pools *p)
{
	if (!p)
		return;
	if (p->have_starter)
		pthread_join(p->starter, NULL);
	for (int i = 0; i < MCP_LANGS; i++)
		cc_pool_close(p->pool[i]);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* The pool for lang, started now if need be; NULL = start directly. */
static cc_pool *pool_get(struct mcp_pools *p, int lang)
{
	if (!p || !p->cfg->pool_size)
		return NULL;
	pthread_mutex_lock(&p->lock);
	cc_pool *pool = p->pool[lang];
	if (!pool && (!p->failed_at[lang] || mcp_now() - p->failed_at[lang] >= MCP_POOL_RETRY_S)) {
		cc_options o;
		cc_error err = { 0 };
		mcp_runtime_options(p->cfg, lang, &o);
		if (cc_pool_new(&o, p->cfg->pool_size, true, NULL, &pool, &err) < 0) {
			fprintf(stderr,
				"codecage mcp: the %s pool cannot start (%s: %.300s); starting "
				"workers one by one, next try in %.0f s\n",
				cc_language_name(mcp_lang_cc(lang)), cc_error_kind_name(err.kind),
				err.message ? err.message : "", MCP_POOL_RETRY_S);
			p->failed_at[lang] = mcp_now();
			pool = NULL;
		} else {
			p->pool[lang] = pool;
		}
		cc_error_clear(&err);
	}
	pthread_mutex_unlock(&p->lock);
	return pool;
}

unsigned mcp_pools_ready(struct mcp_pools *p, int lang, bool *started)
{
	pthread_mutex_lock(&p->lock);
	cc_pool *pool = p->pool[lang];
	pthread_mutex_unlock(&p->lock);
	*started = pool != NULL;
	/* A pool is closed only in mcp_pools_free, after every transport. */
	return pool ? cc_pool_ready(pool) : 0;
}

/* The network policy and redaction every runtime gets, however started. */
static int finish(const struct mcp_config *cfg, cc_runtime *rt, cc_error *err)
{
	if (cfg->n_allow_net) {
		cc_net_options net;
		cc_net_options_init(&net);
		net.allow = cfg->allow_net;
		net.n_allow = cfg->n_allow_net;
		net.ca_file = cfg->ca_file;
		if (cc_runtime_set_net(rt, &net, err) < 0)
			return -1;
	}
	/* Host error text stays away from the guest, but for the tools of
	 * code mode's upstreams: their error texts are their results, which
	 * the guest must see (mcp_upstreams_bind turns redaction off for each,
	 * cc_runtime_set_tool_redaction). */
	cc_runtime_set_redaction(rt, true);
	if (mcp_upstreams_bind(cfg->upstreams, cfg->n_upstreams, rt, err) < 0)
		return cc_fail_wrap(err, "binding the upstream tools");
	/* A value with no JSON form comes back as its text, never a failure. */
	cc_runtime_set_value_fallback(rt, true);
	return 0;
}

int mcp_runtime_start(struct mcp_server *srv, int lang, const char *const *deps, size_t n_deps,
		      cc_runtime **out, bool *pooled, cc_error *err)
{
	const struct mcp_config *cfg = mcp_server_config(srv);
	/* With dependencies, no pool: the library's shared fork server for
	 * their folder (a template per lock) makes the runtime. */
	cc_pool *pool = n_deps ? NULL : pool_get(mcp_server_pools(srv), lang);
	*out = NULL;
	*pooled = false;
	if (pool) {
		cc_error perr = { 0 };
		if (cc_pool_checkout(pool, MCP_POOL_WAIT_S, out, &perr) == 0)
			*pooled = true;
		/* A full fork server (--fork-max-sessions, or the threads and
		 * timers its sessions share) is a refusal, not a reason to
		 * start workers past the cap: the caller's tool error says so. */
		if (!*out && perr.kind == CC_ERR_SANDBOX_UNAVAILABLE) {
			*err = perr;
			return cc_fail_wrap(err,
					    "a new %s runtime from its fork server "
					    "(codecage mcp --fork-max-sessions %u) is refused",
					    lang == MCP_LANG_PY ? "python" : "javascript",
					    cc_max_sessions_of(cfg));
		}
		cc_error_clear(&perr); /* a direct start below says what is wrong */
	}
	if (!*out) {
		cc_options o;
		mcp_runtime_options(cfg, lang, &o);
		o.dependencies = deps;
		o.n_dependencies = n_deps;
		o.fork_server = n_deps > 0;
		if (cc_runtime_new(&o, out, err) < 0)
			return -1;
	}
	if (finish(cfg, *out, err) < 0) {
		cc_runtime_close(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* What run_python has beyond the standard library, for its description:
 * well-known packages that import in the sandbox (one found on the host
 * may not: matplotlib wants /usr/share), with their versions. */
static const char probe_code[] =
	"import sys, importlib.util, importlib.metadata as md\n"
	"found = []\n"
	"for mod, dist in (('numpy', 'numpy'), ('pandas', 'pandas'), ('scipy', 'scipy'),\n"
	"        ('matplotlib', 'matplotlib'), ('sympy', 'sympy'), ('sklearn', 'scikit-learn'),\n"
	"        ('networkx', 'networkx'), ('PIL', 'Pillow'), ('yaml', 'PyYAML'),\n"
	"        ('bs4', 'beautifulsoup4'), ('lxml', 'lxml'), ('requests', 'requests')):\n"
	"    try:\n"
	"        if importlib.util.find_spec(mod) is None:\n"
	"            continue\n"
	"        __import__(mod)\n"
	"    except Exception:\n"
	"        continue\n"
	"    try:\n"
	"        v = md.version(dist)\n"
	"    except Exception:\n"
	"        v = ''\n"
	"    found.append((mod + ' ' + v).strip())\n"
	"'Python %d.%d.%d; importable beyond the standard library: %s' % "
	"(tuple(sys.version_info[:3]) + (', '.join(found) or 'nothing else',))\n";

const char *mcp_probe_code(void)
{
	return probe_code;
}

char *mcp_probe_python(struct mcp_server *srv)
{
	cc_runtime *rt = NULL;
	cc_error err = { 0 };
	bool pooled;
	char *out = NULL;
	if (mcp_runtime_start(srv, MCP_LANG_PY, NULL, 0, &rt, &pooled, &err) == 0) {
		cc_result *r = cc_runtime_eval(rt, probe_code, sizeof(probe_code) - 1, 10.0);
		const cc_value *v = r && cc_result_ok(r) ? cc_result_value(r) : NULL;
		if (v && v->type == CC_VALUE_STRING)
			out = strndup(v->u.str.ptr, v->u.str.len);
		cc_result_free(r);
	}
	cc_error_clear(&err);
	cc_runtime_close(rt);
	return out;
}
