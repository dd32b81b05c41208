/* cc_pool: a bounded set of ready sessions, kept full by one filler
 * thread, checked out with a timeout. A session is handed out once and
 * never comes back: the caller closes it, and the filler makes a fresh
 * one, so no state crosses from one user to the next. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "supervisor.h"

/* After a failed start the filler waits this long before trying again,
 * so a host without the sandbox's layers is not hammered. */
#define CC_POOL_RETRY_NS 200000000

struct cc_pool {
	cc_options opts;
	cc_forkserver *fs; /* NULL: sessions are spawned (cc_runtime_new) */
	unsigned size;
	pthread_mutex_t lock;
	pthread_cond_t changed; /* a session came, one left, or the pool closes */
	cc_runtime **ready;
	unsigned nready;
	bool closing;
	cc_error_kind fail_kind; /* the filler's last failure, 0 after a success */
	char *fail_msg;
	pthread_t filler;
};

static void deadline_ts(struct timespec *ts, int64_t deadline_ns)
{
	/* pthread_cond_timedwait takes CLOCK_REALTIME: convert the
	 * monotonic deadline by the distance left. */
	int64_t left = deadline_ns - cc_now_ns();
	clock_gettime(CLOCK_REALTIME, ts);
	if (left < 0)
		left = 0;
	int64_t ns = ts->tv_nsec + left % 1000000000;
	ts->tv_sec += left / 1000000000 + ns / 1000000000;
	ts->tv_nsec = ns % 1000000000;
}

static int make_session(cc_pool *p, cc_runtime **rt, cc_error *err)
{
	return p->fs ? cc_forkserver_spawn(p->fs, rt, err) : cc_runtime_new(&p->opts, rt, err);
}

/* One throwaway eval of a constant before the session is offered: a
 * fresh process (a fork above all) pays page faults the first time it
 * runs the eval path, copy-on-write ones for every page it writes, and
 * this moves that cost off the checkout. A constant leaves no state the
 * guest can see (the eval counter of the channel aside). */
static int warm_up(cc_pool *p, cc_runtime *rt, cc_error *err)
{
	const char *code = p->opts.language == CC_LANG_PYTHON ? "None" : "undefined";
	cc_result *r = cc_runtime_eval(rt, code, strlen(code), 10.0);
	int rc = 0;
	if (!cc_result_ok(r))
		rc = cc_fail(err, cc_result_error_kind(r), "warming a new session up: %s",
			     cc_result_error_message(r));
	cc_result_free(r);
	return rc;
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
		pthread_mutex_unlock(&p->lock);
		cc_runtime *rt = NULL;
		cc_error err = { 0 };
		int rc = make_session(p, &rt, &err);
		if (rc == 0 && warm_up(p, rt, &err) < 0) {
			cc_runtime_close(rt);
			rc = -1;
		}
		pthread_mutex_lock(&p->lock);
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

CC_EXPORT int cc_pool_new(const cc_options *opts, unsigned size, bool fork_server,
			  const char *preload, cc_pool **out, cc_error *err)
{
	*out = NULL;
	if (!opts)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "options are required");
	if (size < 1 || size > 1024)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "pool size is %u; it must be between 1 and 1024 sessions", size);
	if (cc_options_check(opts, err) < 0)
		return -1;
	cc_pool *p = calloc(1, sizeof(*p));
	if (p)
		p->ready = calloc(size, sizeof(*p->ready));
	if (!p || !p->ready) {
		free(p);
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	}
	p->opts = *opts;
	p->opts.worker_dir = NULL;
	p->size = size;
	/* Sessions that write files need a scratch tmpfs of their own, which
	 * only a spawned worker gets today: those pools spawn. */
	if (fork_server && opts->limits.max_file_size == 0 &&
	    cc_forkserver_new(opts, preload, &p->fs, err) < 0) {
		free(p->ready);
		free(p);
		return -1;
	}
	if (!p->fs && opts->worker_dir)
		p->opts.worker_dir = strdup(opts->worker_dir); /* the filler spawns with it */
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->changed, NULL);
	int rc = pthread_create(&p->filler, NULL, filler_main, p);
	if (rc != 0) {
		cc_forkserver_close(p->fs);
		free((char *)p->opts.worker_dir);
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

CC_EXPORT int cc_pool_checkout(cc_pool *p, double timeout_s, cc_runtime **out, cc_error *err)
{
	*out = NULL;
	if (!p)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "no pool given");
	if (!(timeout_s >= 0 && timeout_s <= 86400))
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "checkout timeout must be in [0, 86400] seconds");
	int64_t deadline = cc_now_ns() + (int64_t)(timeout_s * 1e9);
	int rc = 0;
	pthread_mutex_lock(&p->lock);
	for (;;) {
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
		if (p->fail_kind) {
			rc = cc_fail(err, p->fail_kind, "%s", p->fail_msg ? p->fail_msg : "");
			cc_fail_wrap(err, "the pool cannot start sessions");
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
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->filler, NULL);
	for (unsigned i = 0; i < p->nready; i++)
		cc_runtime_close(p->ready[i]);
	cc_forkserver_close(p->fs);
	pthread_cond_destroy(&p->changed);
	pthread_mutex_destroy(&p->lock);
	free((char *)p->opts.worker_dir);
	free(p->fail_msg);
	free(p->ready);
	free(p);
}
