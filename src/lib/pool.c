/* cc_pool: a bounded set of ready sessions, kept full by one filler
 * thread, checked out with a timeout. A session is handed out once and
 * never comes back: the caller closes it, and the filler makes a fresh
 * one, so no state crosses from one user to the next. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "deps.h"
#include "error.h"
#include "net.h"
#include "supervisor.h"

/* After a failed start the filler waits this long before trying again,
 * so a host without the sandbox's layers is not hammered. */
#define CC_POOL_RETRY_NS 200000000

struct cc_pool {
	cc_options opts;
	cc_forkserver *fs;	   /* NULL: sessions are spawned (cc_runtime_new); only
				      the filler thread replaces it */
	char *preload;		   /* what a replacement template imports */
	struct cc_libset *libs;	   /* read once, at cc_pool_new: every session loads them */
	struct cc_net_policy *net; /* cc_options.net's, copied at cc_pool_new; NULL: none */
	char **python_path;	   /* owned copy behind opts.python_path */
	cc_deps *deps;		   /* its dependencies (a reference), or NULL */
	unsigned size;
	pthread_mutex_t lock;
	pthread_cond_t changed; /* a session came, one left, or the pool closes */
	cc_runtime **ready;
	unsigned nready;
	bool closing;
	unsigned in_checkout;	 /* callers inside cc_pool_checkout; close waits */
	cc_error_kind fail_kind; /* the filler's last failure, 0 after a success */
	char *fail_msg;
	/* The filler's attempts, numbered as they begin, and the number of the
	 * one that failed last: a checkout reports only a failure of an
	 * attempt that began after it did. */
	unsigned long begun, failed;
	pthread_t filler;
};

/* The pool's condition variable runs on CLOCK_MONOTONIC (set in
 * cc_pool_new), so a wall-clock jump changes no timeout. */
static void deadline_ts(struct timespec *ts, int64_t deadline_ns)
{
	if (deadline_ns < 0)
		deadline_ns = 0;
	ts->tv_sec = (time_t)(deadline_ns / 1000000000);
	ts->tv_nsec = (long)(deadline_ns % 1000000000);
}

static int make_session(cc_pool *p, cc_runtime **rt, cc_error *err)
{
	if (!p->fs) {
		if (cc_runtime_start(&p->opts, NULL, p->libs, rt, err) < 0)
			return -1;
		(*rt)->deps = cc_deps_ref(p->deps);
		if (cc_net_install(*rt, cc_net_policy_ref(p->net), err) == 0)
			return 0;
		cc_runtime_close(*rt);
		*rt = NULL;
		return -1;
	}
	if (cc_forkserver_spawn(p->fs, rt, err) == 0)
		return 0;
	/* A template that died (killed from outside, out of memory) is
	 * replaced; sessions already handed out keep the old one alive. */
	if (cc_forkserver_alive(p->fs))
		return -1;
	cc_forkserver *fresh = NULL;
	cc_error e2 = { 0 };
	if (cc_forkserver_start(&p->opts, p->preload, p->libs, p->net, &fresh, &e2) < 0) {
		cc_error_clear(err);
		*err = e2;
		return -1;
	}
	cc_forkserver_close(p->fs);
	p->fs = fresh;
	cc_forkserver_hold_deps(p->fs, p->deps);
	cc_error_clear(err);
	return cc_forkserver_spawn(p->fs, rt, err);
}

/* Failures that no retry will cure soon: a checkout reports them at once
 * rather than waiting out its timeout. */
static bool lasting_failure(cc_error_kind k)
{
	return k == CC_ERR_SANDBOX_UNAVAILABLE || k == CC_ERR_PROTOCOL_VIOLATION;
}

/* A few throwaway evals of constants before the session is offered: a
 * fresh process (a fork above all) pays page faults the first time it
 * runs each path of an eval (compiling, the allocator's pools for ints,
 * lists, dicts, strings, packing the result), copy-on-write ones for
 * every page it writes, and this moves that cost off the checkout
 * (bench/floor.c measures what a fault costs). Constants leave no state
 * the guest can see (the eval counter of the channel aside). */
static int warm_up(cc_pool *p, cc_runtime *rt, cc_error *err)
{
	static const char *const py[] = { "None", "0+0", "[0]", "{'a': 0}", "'a' + str(0)" };
	static const char *const js[] = { "undefined", "0+0", "[0]", "({a: 0})",
					  "'a' + String(0)" };
	const char *const *code = p->opts.language == CC_LANG_PYTHON ? py : js;
	for (size_t i = 0; i < sizeof(py) / sizeof(py[0]); i++) {
		cc_result *r = cc_runtime_eval(rt, code[i], strlen(code[i]), 10.0);
		int rc = 0;
		if (!cc_result_ok(r))
			rc = cc_fail(err, cc_result_error_kind(r), "warming a new session up: %s",
				     cc_result_error_message(r));
		cc_result_free(r);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static void *filler_main(void *arg)
{
	cc_pool *p = arg;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->closing && p->nready >= p->size)
			pthread_cond_wait(&p->changed, &p->lock);
		if (p->closing)
			break;
		unsigned long attempt = ++p->begun;
		pthread_mutex_unlock(&p->lock);
		cc_runtime *rt = NULL;
		cc_error err = { 0 };
		int rc = make_session(p, &rt, &err);
		if (rc == 0 && warm_up(p, rt, &err) < 0) {
			cc_runtime_close(rt);
			rc = -1;
		}
		pthread_mutex_lock(&p->lock);
		if (rc < 0)
			p->failed = attempt;
		if (rc == 0) {
			p->ready[p->nready++] = rt;
			p->fail_kind = 0;
		} else {
			p->fail_kind = err.kind;
			free(p->fail_msg);
			p->fail_msg = err.message;
			err.message = NULL;
		}
		pthread_cond_broadcast(&p->changed);
		if (rc < 0 && !p->closing) {
			struct timespec ts;
			deadline_ts(&ts, cc_now_ns() + CC_POOL_RETRY_NS);
			pthread_cond_timedwait(&p->changed, &p->lock, &ts);
		}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Check what cc_pool_new takes and allocate the pool. */
static int pool_prepare(const cc_options *opts, unsigned size, cc_pool **out, cc_error *err)
{
	if (size < 1 || size > 1024)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "pool size is %u; it must be between 1 and 1024 sessions", size);
	if (cc_options_check(opts, err) < 0)
		return -1;
	struct cc_grants gs; /* checked now, resolved again by each start */
	if (cc_grants_resolve(opts, &gs, err) < 0)
		return -1;
	cc_grants_free(&gs);
	cc_pool *p = calloc(1, sizeof(*p));
	if (p)
		p->ready = calloc(size, sizeof(*p->ready));
	if (!p || !p->ready) {
		free(p);
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	}
	*out = p;
	return 0;
}

/* cc_pool_new once the dependencies are applied (opts has none left):
 * takes net. */
static int pool_new(const cc_options *opts, cc_deps *deps, unsigned size, bool fork_server,
		    const char *preload, struct cc_net_policy *net, cc_pool **out, cc_error *err)
{
	cc_pool *p = NULL;
	if (fork_server && size > cc_max_sessions(opts)) {
		cc_net_policy_unref(net);
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "pool size is %u, over its fork server's max_sessions (%u); raise "
			       "max_sessions or make the pool smaller",
			       size, cc_max_sessions(opts));
	}
	if (pool_prepare(opts, size, &p, err) < 0) {
		cc_net_policy_unref(net);
		return -1;
	}
	p->net = net;
	p->opts = *opts;
	p->opts.worker_dir = NULL;
	p->opts.libraries = NULL; /* borrowed: read into p->libs now */
	p->opts.n_libraries = 0;
	p->opts.node_modules = NULL;
	p->opts.net = NULL; /* borrowed: p->net is its copy */
	p->opts.mounts = cc_mounts_copy(opts->mounts, opts->n_mounts);
	p->python_path = cc_strv_copy(opts->python_path, opts->n_python_path);
	p->opts.python_path = (const char *const *)p->python_path;
	if ((opts->n_mounts && !p->opts.mounts) || (opts->n_python_path && !p->python_path)) {
		cc_mounts_free((cc_mount *)p->opts.mounts, p->opts.n_mounts);
		cc_strv_free(p->python_path);
		cc_net_policy_unref(p->net);
		free(p->ready);
		free(p);
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	}
	p->size = size;
	if (cc_libset_load(opts, deps, &p->libs, err) < 0 ||
	    (fork_server && cc_forkserver_start(opts, preload, p->libs, p->net, &p->fs, err) < 0)) {
		cc_net_policy_unref(p->net);
		cc_libset_free(p->libs);
		cc_mounts_free((cc_mount *)p->opts.mounts, p->opts.n_mounts);
		cc_strv_free(p->python_path);
		free(p->ready);
		free(p);
		return -1;
	}
	if (!p->fs && opts->worker_dir)
		p->opts.worker_dir = strdup(opts->worker_dir); /* the filler spawns with it */
	p->deps = cc_deps_ref(deps);
	if (p->fs)
		cc_forkserver_hold_deps(p->fs, deps);
	p->preload = preload ? strdup(preload) : NULL;
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->changed, &ca);
	pthread_condattr_destroy(&ca);
	int rc = pthread_create(&p->filler, NULL, filler_main, p);
	if (rc != 0) {
		cc_forkserver_close(p->fs);
		cc_net_policy_unref(p->net);
		cc_libset_free(p->libs);
		free((char *)p->opts.worker_dir);
		cc_mounts_free((cc_mount *)p->opts.mounts, p->opts.n_mounts);
		free(p->preload);
		cc_strv_free(p->python_path);
		cc_deps_free(p->deps);
		pthread_cond_destroy(&p->changed);
		pthread_mutex_destroy(&p->lock);
		free(p->ready);
		free(p);
		return cc_fail(err, CC_ERR_INTERNAL, "starting the pool's thread: %s",
			       strerror(rc));
	}
	*out = p;
	return 0;
}

CC_EXPORT int cc_pool_new(const cc_options *opts, unsigned size, bool fork_server,
			  const char *preload, cc_pool **out, cc_error *err)
{
	struct cc_net_policy *net = NULL;
	*out = NULL;
	if (!opts)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "options are required");
	if (cc_net_from_options(opts, &net, err) < 0)
		return -1;
	/* Dependencies are installed once, here: every session shares them. */
	struct cc_deps_opts dop;
	if (cc_options_check(opts, err) < 0 || cc_deps_apply(opts, &dop, err) < 0) {
		cc_net_policy_unref(net);
		return -1;
	}
	int rc = pool_new(&dop.o, dop.d, size, fork_server, preload, net, out, err);
	cc_deps_opts_done(&dop);
	return rc;
}

CC_EXPORT int cc_pool_checkout(cc_pool *p, double timeout_s, cc_runtime **out, cc_error *err)
{
	*out = NULL;
	if (!p)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "no pool given");
	if (!(timeout_s >= 0 && timeout_s <= CC_MAX_TIMEOUT_S))
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "checkout timeout must be in [0, %d] seconds", CC_MAX_TIMEOUT_S);
	int64_t deadline = cc_now_ns() + (int64_t)(timeout_s * 1e9);
	int rc = 0;
	pthread_mutex_lock(&p->lock);
	p->in_checkout++;
	unsigned long seen = p->begun;
	for (;;) {
		if (p->closing) {
			rc = cc_fail(err, CC_ERR_INVALID_INPUT,
				     "the pool was closed while waiting for a session");
			goto out;
		}
		while (p->nready > 0) {
			cc_runtime *rt = p->ready[--p->nready];
			pthread_cond_broadcast(&p->changed); /* the filler makes another */
			/* It may have died waiting (killed from outside, the
			 * host out of memory): never hand that out. */
			if (rt->alive && !cc_child_try_reap(&rt->child)) {
				*out = rt;
				goto out;
			}
			pthread_mutex_unlock(&p->lock);
			cc_runtime_close(rt);
			pthread_mutex_lock(&p->lock);
		}
		/* A lasting failure is reported at once, but only one of an
		 * attempt that began after this checkout did: sessions closed
		 * before it (a full fork server) may have made room, so the
		 * filler is woken from its retry wait to try again now. */
		if (p->fail_kind && lasting_failure(p->fail_kind) && p->failed > seen) {
			rc = cc_fail(err, p->fail_kind, "%s", p->fail_msg ? p->fail_msg : "");
			cc_fail_wrap(err, "the pool cannot start sessions");
			goto out;
		}
		if (p->fail_kind && lasting_failure(p->fail_kind))
			pthread_cond_broadcast(&p->changed);
		if (cc_now_ns() >= deadline && p->fail_kind) {
			/* the filler keeps failing: say why, with its kind */
			rc = cc_fail(err, p->fail_kind, "%s", p->fail_msg ? p->fail_msg : "");
			cc_fail_wrap(err,
				     "no session became ready within %g s; the pool's last "
				     "attempt failed",
				     timeout_s);
			goto out;
		}
		if (cc_now_ns() >= deadline) {
			rc = cc_fail(err, CC_ERR_TIMEOUT,
				     "no session became ready within %g s (a pool of %u); "
				     "raise the timeout or the pool size",
				     timeout_s, p->size);
			goto out;
		}
		struct timespec ts;
		deadline_ts(&ts, deadline);
		pthread_cond_timedwait(&p->changed, &p->lock, &ts);
	}
out:
	p->in_checkout--;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->lock);
	return rc;
}

CC_EXPORT unsigned cc_pool_ready(cc_pool *p)
{
	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	unsigned n = p->nready;
	pthread_mutex_unlock(&p->lock);
	return n;
}

CC_EXPORT void cc_pool_close(cc_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->closing = true;
	pthread_cond_broadcast(&p->changed);
	/* Checkouts in other threads see closing and leave first. */
	while (p->in_checkout > 0)
		pthread_cond_wait(&p->changed, &p->lock);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->filler, NULL);
	for (unsigned i = 0; i < p->nready; i++)
		cc_runtime_close(p->ready[i]);
	cc_forkserver_close(p->fs);
	cc_net_policy_unref(p->net);
	cc_libset_free(p->libs);
	pthread_cond_destroy(&p->changed);
	pthread_mutex_destroy(&p->lock);
	free((char *)p->opts.worker_dir);
	cc_mounts_free((cc_mount *)p->opts.mounts, p->opts.n_mounts);
	free(p->fail_msg);
	free(p->preload);
	cc_strv_free(p->python_path);
	cc_deps_free(p->deps);
	free(p->ready);
	free(p);
}
