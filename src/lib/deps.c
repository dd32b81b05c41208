/* Dependencies on demand (cc_options.dependencies, codecage_deps.h),
 * supervisor side: the policy's defaults and checks, the request the
 * helper gets (deps_run.c), the installed lock a runtime holds (a shared
 * flock on its cache folder, so no other process evicts it while used),
 * a small table of requests this process resolved lately (so a second
 * runtime with the same dependencies spawns no helper), the options a
 * runtime starts with once they are applied, and the PEP 723 check of
 * cc_runtime_eval. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "cleanup.h"
#include "deps.h"
#include "error.h"
#include "utf8.h"

#define CC_DEPS_CACHE_BYTES (4ull << 30)
#define CC_DEPS_INSTALL_BYTES (1ull << 30)
#define CC_DEPS_TIMEOUT_S 300.0
#define CC_DEPS_REFRESH_S 86400.0
/* The longest spec, and the largest lock file, bytes. */
#define CC_DEPS_SPEC_MAX 256
#define CC_DEPS_LOCK_MAX (1u << 20)
/* Requests this process keeps resolved (each holds its folder). */
#define CC_DEPS_MEMO 8
/* How long the PEP 723 reading may take, s. */
#define CC_DEPS_SCRIPT_TIMEOUT_S 30.0

struct cc_deps {
	int refs; /* atomic */
	char *key, *path, *log, *packages;
	char **load, **requested; /* NULL-terminated */
	size_t n_load, n_requested;
	bool cached;
	int lock_fd; /* shared flock on the key's lock file; -1 when none */
};

CC_EXPORT void cc_deps_options_init(cc_deps_options *o)
{
	memset(o, 0, sizeof(*o));
	o->max_cache_bytes = CC_DEPS_CACHE_BYTES;
	o->max_install_bytes = CC_DEPS_INSTALL_BYTES;
	o->timeout_s = CC_DEPS_TIMEOUT_S;
	o->refresh_s = CC_DEPS_REFRESH_S;
}

CC_EXPORT char *cc_deps_default_cache(void)
{
	if (geteuid() == 0)
		return strdup("/var/cache/codecage/deps");
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	if (x && x[0] == '/')
		return cc_strprintf("%s/codecage/deps", x);
	if (home && home[0] == '/')
		return cc_strprintf("%s/.cache/codecage/deps", home);
	return NULL;
}

cc_deps *cc_deps_ref(cc_deps *d)
{
	if (d)
		__atomic_add_fetch(&d->refs, 1, __ATOMIC_RELAXED);
	return d;
}

static void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

CC_EXPORT void cc_deps_free(cc_deps *d)
{
	if (!d || __atomic_sub_fetch(&d->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	if (d->lock_fd >= 0)
		close(d->lock_fd); /* releases the shared flock */
	free(d->key);
	free(d->path);
	free(d->log);
	free(d->packages);
	strv_free(d->load);
	strv_free(d->requested);
	free(d);
}

CC_EXPORT const char *cc_deps_key(const cc_deps *d)
{
	return d && d->key ? d->key : "";
}

CC_EXPORT const char *cc_deps_path(const cc_deps *d)
{
	return d ? d->path : NULL;
}

CC_EXPORT const char *cc_deps_log(const cc_deps *d)
{
	return d && d->log ? d->log : "";
}

CC_EXPORT const char *cc_deps_packages(const cc_deps *d)
{
	return d && d->packages ? d->packages : "";
}

CC_EXPORT bool cc_deps_cached(const cc_deps *d)
{
	return d && d->cached;
}

const char *cc_deps_node_modules(const cc_deps *d)
{
	return d ? d->path : NULL;
}

const char *const *cc_deps_load(const cc_deps *d, size_t *n)
{
	*n = d ? d->n_load : 0;
	return d ? (const char *const *)d->load : NULL;
}

CC_EXPORT const cc_deps *cc_runtime_deps(const cc_runtime *rt)
{
	return rt ? rt->deps : NULL;
}

/* ---- the request ---- */

int cc_deps_options_check(const cc_deps_options *p, cc_error *err)
{
	if (!(p->timeout_s > 0 && p->timeout_s <= CC_MAX_TIMEOUT_S))
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "the dependency timeout must be in (0, %d] seconds",
			       CC_MAX_TIMEOUT_S);
	if (!(p->refresh_s >= 0 && p->refresh_s <= 365.0 * 86400))
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "the dependency refresh must be in [0, 31536000] seconds");
	if (p->max_install_bytes < (1u << 20) || p->max_cache_bytes < p->max_install_bytes)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "max_install_bytes must be at least 1 MiB and max_cache_bytes at "
			       "least max_install_bytes");
	if (p->cache_dir && p->cache_dir[0] != '/')
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "the dependency cache '%s' must be an absolute path", p->cache_dir);
	if ((p->n_allow && !p->allow) || (p->n_deny && !p->deny))
		return cc_fail(err, CC_ERR_INVALID_INPUT, "n_allow or n_deny without a list");
	return 0;
}

static int check_policy(const cc_options *o, const cc_deps_options *p, cc_error *err)
{
	if (o->n_dependencies > CC_MAX_DEPENDENCIES || (o->n_dependencies && !o->dependencies))
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "dependencies has %zu entries; give at most %d package specs",
			       o->n_dependencies, CC_MAX_DEPENDENCIES);
	for (size_t i = 0; i < o->n_dependencies; i++) {
		const char *s = o->dependencies[i];
		size_t n = s ? strlen(s) : 0;
		bool printable = s && cc_utf8_valid(s, n);
		for (size_t j = 0; printable && j < n; j++)
			printable = (unsigned char)s[j] >= 0x20 && s[j] != 0x7f;
		if (!n || n > CC_DEPS_SPEC_MAX || !printable)
			return cc_fail(
				err, CC_ERR_INVALID_INPUT,
				"dependencies[%zu] must be a package spec of 1 to %d printable "
				"characters, such as 'polars' or 'vega-lite@5'",
				i, CC_DEPS_SPEC_MAX);
	}
	return cc_deps_options_check(p, err);
}

static json_t *strv_json(const char *const *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		if (!v[i] || json_array_append_new(a, json_string(v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* The lock file's bytes (NUL-terminated), at most CC_DEPS_LOCK_MAX. */
static int read_lock(const char *path, char **out, cc_error *err)
{
	*out = NULL;
	cc_autoclose int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return cc_fail(err, CC_ERR_INVALID_INPUT, "the lock file %s: %s", path,
			       fd < 0 ? strerror(errno) : "not a regular file");
	if (st.st_size > CC_DEPS_LOCK_MAX)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "the lock file %s is over 1 MiB", path);
	char *buf = malloc((size_t)st.st_size + 1);
	ssize_t r = buf ? read(fd, buf, (size_t)st.st_size) : -1;
	if (r != st.st_size) {
		free(buf);
		return cc_fail(err, buf ? CC_ERR_INVALID_INPUT : CC_ERR_INTERNAL,
			       "reading the lock file %s failed", path);
	}
	buf[r] = 0;
	if (!cc_utf8_valid(buf, (size_t)r)) {
		free(buf);
		return cc_fail(err, CC_ERR_INVALID_INPUT, "the lock file %s is not UTF-8 text",
			       path);
	}
	*out = buf;
	return 0;
}

/* The helper's request for o's dependencies, sorted JSON: also what the
 * table of recent requests compares. */
static char *make_request(const cc_options *o, const cc_deps_options *p, const char *cache,
			  cc_error *err)
{
	char *lock = NULL;
	if (p->lock_file && read_lock(p->lock_file, &lock, err) < 0)
		return NULL;
	json_t *r =
		json_pack("{s:s, s:s, s:o?, s:s, s:s?, s:s?, s:s?, s:o?, s:o?, s:I, s:I, s:f, s:s}",
			  "command", "resolve", "kind",
			  o->language == CC_LANG_PYTHON ? "python" : "javascript", "specs",
			  strv_json(o->dependencies, o->n_dependencies), "cache_dir", cache,
			  "index_url", p->index_url, "registry", p->registry, "lock", lock, "allow",
			  strv_json(p->allow, p->n_allow), "deny", strv_json(p->deny, p->n_deny),
			  "max_install_bytes", (json_int_t)p->max_install_bytes, "max_cache_bytes",
			  (json_int_t)p->max_cache_bytes, "refresh_s", p->refresh_s,
			  "site_packages", CC_PY_DISTPACKAGES);
	free(lock);
	char *text = r ? json_dumps(r, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	json_decref(r);
	if (!text)
		cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	return text;
}

/* ---- the answer ---- */

static char **json_strv(const json_t *a, size_t *n)
{
	size_t len = json_is_array(a) ? json_array_size(a) : 0;
	char **v = calloc(len + 1, sizeof(*v));
	*n = 0;
	for (size_t i = 0; v && i < len; i++) {
		const char *s = json_string_value(json_array_get(a, i));
		if (!s || !(v[i] = strdup(s))) {
			strv_free(v);
			return NULL;
		}
		*n = i + 1;
	}
	return v;
}

static bool key_ok(const char *k)
{
	if (!k || strlen(k) != 67 || (strncmp(k, "py-", 3) && strncmp(k, "js-", 3)))
		return false;
	for (const char *c = k + 3; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
			return false;
	return true;
}

/* Hold the key's folder (shared flock) and check it is still there: an
 * evicting process takes the flock exclusively before it removes one.
 * 1 when the folder went meanwhile (resolve again). */
static int hold(cc_deps *d, const char *cache, int64_t deadline, cc_error *err)
{
	char lockp[PATH_MAX];
	snprintf(lockp, sizeof(lockp), "%s/locks/%s.lock", cache, d->key);
	d->lock_fd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (d->lock_fd < 0)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "the dependency cache: %s: %s", lockp,
			       strerror(errno));
	while (flock(d->lock_fd, LOCK_SH | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK || cc_now_ns() > deadline)
			return cc_fail(err, CC_ERR_INVALID_INPUT,
				       "the dependency cache: cannot hold %s: %s", lockp,
				       strerror(errno));
		struct timespec ts = { 0, 20000000 };
		nanosleep(&ts, NULL);
	}
	struct stat st;
	return stat(d->path, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : 1;
}

static cc_deps *from_answer(const json_t *a, const char *cache, cc_error *err)
{
	cc_deps *d = calloc(1, sizeof(*d));
	if (!d) {
		cc_fail(err, CC_ERR_INTERNAL, "out of memory");
		return NULL;
	}
	d->refs = 1;
	d->lock_fd = -1;
	const char *key = json_string_value(json_object_get(a, "key"));
	const char *path = json_string_value(json_object_get(a, "path"));
	const json_t *pk = json_object_get(a, "packages");
	struct cc_buf b = { 0 };
	for (size_t i = 0; json_is_array(pk) && i < json_array_size(pk); i++)
		cc_buf_printf(&b, "%s%s", i ? ", " : "",
			      json_string_value(json_array_get(pk, i)) ?: "?");
	d->packages = b.data ? b.data : strdup("");
	d->log = strdup(json_string_value(json_object_get(a, "log")) ?: "");
	d->cached = json_is_true(json_object_get(a, "cached"));
	d->load = json_strv(json_object_get(a, "load"), &d->n_load);
	d->requested = json_strv(json_object_get(a, "requested"), &d->n_requested);
	/* the helper is the host's own program, but a path it names must be
	 * the key's folder in this cache before anything is granted */
	size_t cl = strlen(cache);
	bool bad = key &&
		   (!key_ok(key) || !path || strncmp(path, cache, cl) || path[cl] != '/' ||
		    strncmp(path + cl + 1, key, 67) ||
		    (strcmp(path + cl + 68, "/site") && strcmp(path + cl + 68, "/node_modules")));
	if (key && !bad) {
		d->key = strdup(key);
		d->path = strdup(path);
	}
	if (bad || !d->packages || !d->log || !d->load || !d->requested ||
	    (key && (!d->key || !d->path))) {
		cc_fail(err, CC_ERR_INTERNAL,
			bad ? "the dependency helper named a folder outside "
			      "its cache"
			    : "out of memory");
		cc_deps_free(d);
		return NULL;
	}
	return d;
}

/* ---- requests resolved lately, in this process ---- */

struct memo {
	char *request;
	cc_deps *d;
	int64_t at; /* cc_now_ns() */
};
static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
static struct memo memo[CC_DEPS_MEMO];
static pthread_once_t memo_once = PTHREAD_ONCE_INIT;

static void memo_forget(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	memo_lock = fresh;
	memset(memo, 0, sizeof(memo)); /* leaked: the parent's */
}

static void memo_init(void)
{
	pthread_atfork(NULL, NULL, memo_forget);
}

static cc_deps *memo_get(const char *request, double refresh_s)
{
	cc_deps *d = NULL;
	int64_t now = cc_now_ns();
	pthread_mutex_lock(&memo_lock);
	for (size_t i = 0; i < CC_DEPS_MEMO; i++) {
		struct memo *m = &memo[i];
		if (!m->request)
			continue;
		struct stat st;
		bool stale = now - m->at > cc_secs_to_ns(refresh_s) ||
			     (m->d->path && stat(m->d->path, &st) < 0);
		if (stale) {
			free(m->request);
			cc_deps_free(m->d);
			memset(m, 0, sizeof(*m));
		} else if (!strcmp(m->request, request)) {
			d = cc_deps_ref(m->d);
		}
	}
	pthread_mutex_unlock(&memo_lock);
	return d;
}

static void memo_put(const char *request, cc_deps *d)
{
	char *copy = strdup(request);
	if (!copy)
		return;
	pthread_mutex_lock(&memo_lock);
	size_t slot = 0;
	for (size_t i = 0; i < CC_DEPS_MEMO; i++) {
		if (!memo[i].request) {
			slot = i;
			break;
		}
		if (memo[i].at < memo[slot].at)
			slot = i;
	}
	free(memo[slot].request);
	cc_deps_free(memo[slot].d);
	memo[slot] = (struct memo){ copy, cc_deps_ref(d), cc_now_ns() };
	pthread_mutex_unlock(&memo_lock);
}

/* ---- resolving ---- */

CC_EXPORT int cc_deps_resolve(const cc_options *o, cc_deps **out, cc_error *err)
{
	*out = NULL;
	if (!o)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "options are required");
	cc_deps_options defaults;
	cc_deps_options_init(&defaults);
	const cc_deps_options *p = o->deps ? o->deps : &defaults;
	if (check_policy(o, p, err) < 0)
		return -1;
	cc_autofree char *cache = p->cache_dir ? strdup(p->cache_dir) : cc_deps_default_cache();
	if (!cache)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "no cache folder for dependencies: set HOME or name one "
			       "(cc_deps_options.cache_dir, --deps-cache DIR)");
	if (!o->n_dependencies && !p->lock_file) { /* nothing asked: nothing installed */
		cc_deps *d = calloc(1, sizeof(*d));
		if (d) {
			d->refs = 1;
			d->lock_fd = -1;
			d->requested = calloc(1, sizeof(char *));
			d->load = calloc(1, sizeof(char *));
		}
		if (!d || !d->requested || !d->load) {
			cc_deps_free(d);
			return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
		}
		*out = d;
		return 0;
	}
	cc_autofree char *request = make_request(o, p, cache, err);
	if (!request)
		return -1;
	pthread_once(&memo_once, memo_init);
	if (p->refresh_s > 0 && (*out = memo_get(request, p->refresh_s)))
		return 0;
	int64_t deadline = cc_now_ns() + cc_secs_to_ns(p->timeout_s);
	for (int attempt = 0; attempt < 2; attempt++) {
		double left = (double)(deadline - cc_now_ns()) / 1e9;
		json_t *a = NULL;
		if (left <= 0)
			break;
		if (cc_deps_run(request, left, &a, err) < 0)
			return cc_fail_wrap(err, "dependencies");
		if (!json_is_true(json_object_get(a, "ok"))) {
			const char *kind = json_string_value(json_object_get(a, "kind"));
			int k = kind ? cc_error_kind_from_name(kind, strlen(kind)) : -1;
			cc_fail(err, k == CC_ERR_INTERNAL ? CC_ERR_INTERNAL : CC_ERR_INVALID_INPUT,
				"dependencies: %s",
				json_string_value(json_object_get(a, "message")) ?: "refused");
			json_decref(a);
			return -1;
		}
		cc_deps *d = from_answer(a, cache, err);
		json_decref(a);
		if (!d)
			return -1;
		int held = d->key ? hold(d, cache, deadline, err) : 0;
		if (held < 0) {
			cc_deps_free(d);
			return -1;
		}
		if (held == 0) {
			if (p->refresh_s > 0)
				memo_put(request, d);
			*out = d;
			return 0;
		}
		cc_deps_free(d); /* evicted meanwhile: resolve again */
	}
	return cc_fail(err, CC_ERR_INVALID_INPUT,
		       "dependencies: the cache folder kept being removed by another process "
		       "(a cache too small for what runs at once?); raise max_cache_bytes");
}

int cc_deps_apply(const cc_options *in, struct cc_deps_opts *out, cc_error *err)
{
	memset(out, 0, sizeof(*out));
	out->o = *in;
	out->o.dependencies = NULL;
	out->o.n_dependencies = 0;
	out->o.deps = NULL;
	if (!in->n_dependencies && !(in->deps && in->deps->lock_file))
		return 0;
	if (cc_deps_resolve(in, &out->d, err) < 0)
		return -1;
	if (in->language != CC_LANG_PYTHON || !out->d->path)
		return 0;
	if (in->n_python_path >= CC_MAX_PYTHON_PATH) {
		cc_deps_opts_done(out);
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "dependencies take one python_path place, and python_path has %zu "
			       "folders already; give at most %d with dependencies",
			       in->n_python_path, CC_MAX_PYTHON_PATH - 1);
	}
	for (size_t i = 0; i < in->n_python_path; i++)
		out->pp[i] = in->python_path[i];
	out->pp[in->n_python_path] = out->d->path;
	out->o.python_path = out->pp;
	out->o.n_python_path = in->n_python_path + 1;
	return 0;
}

void cc_deps_opts_done(struct cc_deps_opts *out)
{
	cc_deps_free(out->d);
	out->d = NULL;
}

/* ---- PEP 723 ---- */

/* Does the code have a line that is exactly "# /// script"? */
static bool has_block(const char *code, size_t len)
{
	static const char mark[] = "# /// script";
	size_t m = sizeof(mark) - 1;
	for (size_t i = 0; i + m <= len; i++) {
		if ((i == 0 || code[i - 1] == '\n') && !memcmp(code + i, mark, m) &&
		    (i + m == len || code[i + m] == '\n' || code[i + m] == '\r'))
			return true;
	}
	return false;
}

/* The helper's reading of the block: its answer (owned), or NULL. */
static json_t *read_block(const char *code, size_t len, cc_error *err)
{
	json_t *r = json_pack("{s:s, s:s%, s:s}", "command", "script", "code", code, len,
			      "site_packages", CC_PY_DISTPACKAGES);
	char *text = r ? json_dumps(r, JSON_COMPACT) : NULL;
	json_decref(r);
	if (!text) {
		cc_fail(err, CC_ERR_INVALID_INPUT,
			"the code's '# /// script' block: the code is not UTF-8 text");
		return NULL;
	}
	json_t *a = NULL;
	int rc = cc_deps_run(text, CC_DEPS_SCRIPT_TIMEOUT_S, &a, err);
	free(text);
	if (rc < 0)
		return NULL;
	if (!json_is_true(json_object_get(a, "ok"))) {
		cc_fail(err, CC_ERR_INVALID_INPUT, "%s",
			json_string_value(json_object_get(a, "message")) ?: "bad script block");
		json_decref(a);
		return NULL;
	}
	return a;
}

CC_EXPORT int cc_script_dependencies(const char *code, size_t len, char ***specs, size_t *n,
				     cc_error *err)
{
	*specs = NULL;
	*n = 0;
	if (!code || !has_block(code, len))
		return 0;
	json_t *a = read_block(code, len, err);
	if (!a)
		return -1;
	char **v = json_strv(json_object_get(a, "dependencies"), n);
	json_decref(a);
	if (!v)
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	if (*n == 0)
		strv_free(v);
	else
		*specs = v;
	return 0;
}

CC_EXPORT void cc_script_dependencies_free(char **specs)
{
	strv_free(specs);
}

int cc_deps_check_script(const cc_runtime *rt, const char *code, size_t len, cc_error *err)
{
	if (rt->opts.language != CC_LANG_PYTHON || !has_block(code, len))
		return 0;
	json_t *a = read_block(code, len, err);
	if (!a)
		return -1;
	const json_t *names = json_object_get(a, "names");
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < json_array_size(names); i++) {
		const char *want = json_string_value(json_array_get(names, i));
		bool have = false;
		for (size_t j = 0; want && rt->deps && j < rt->deps->n_requested; j++)
			have = have || !strcmp(rt->deps->requested[j], want);
		if (!have)
			rc = cc_fail(
				err, CC_ERR_INVALID_INPUT,
				"the code's '# /// script' block needs '%s', which this runtime "
				"was not started with: start one with it in its dependencies "
				"(RuntimeConfig(dependencies=codecage.script_dependencies(code)), "
				"--allow-dependencies, cc_options.dependencies)",
				want ? want : "?");
	}
	json_decref(a);
	return rc;
}
