/* Deferred answers of asynchronous host tools (codecage.h, "deferred tool
 * replies"). Supervisor side.
 *
 * An asynchronous tool gets a cc_tool_call and answers it later, from any
 * thread. The answer goes into the runtime's queue and an eventfd wakes
 * the eval's thread, which sends it to the worker (runtime.c polls the
 * eventfd beside the socket). The queue is reference-counted: each pending
 * call holds a reference, so an answer that comes after the eval ended or
 * after the runtime was closed finds the queue still there and is dropped.
 * Only answers for the eval that made the call are accepted: call ids grow
 * over a session, and the queue remembers which eval is open.
 *
 * The queue also keeps the eval's unanswered calls (the "live" list): their
 * number is what the in-flight cap (limits.max_pending_calls, tools.c)
 * counts, and when the eval ends each one still live is cancelled: its
 * cancel function (cc_tool_call_on_cancel) runs, on the eval's thread.
 * An answer from another thread while that function runs waits until it
 * returned (deliver()), so the host may free the function's data as soon
 * as the call is answered: before, an upstream's reader thread answered
 * and freed what the MCP server's cancel function was still using.
 *
 * A live call may be held (cc_tool_call_hold): it waits for a person's
 * approval, so runtime.c stops the eval's deadline clock while any call is
 * held and bounds the wait by the earliest held call's approval timeout
 * instead (cc_replyq_held). Whether that timeout passed is decided here,
 * per call and under the lock, with the clock read there: by the eval's
 * thread (cc_replyq_expire, which then expires every held call of the
 * eval, whose end it starts) or by the host's decision
 * (cc_tool_call_unhold), whichever comes first. An expired call is never
 * to run: unhold says so, and an answer to it is dropped. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "buf.h"
#include "error.h"
#include "supervisor.h"

struct answer {
	struct answer *next;
	uint64_t call;
	cc_value *value; /* owned; when ename is NULL */
	char *ename, *emsg;
	char *ebases; /* comma-separated builtin base names, or NULL */
	bool redact;  /* the call's: the guest sees CC_REDACTED_MESSAGE */
};

struct cc_replyq {
	pthread_mutex_t lock;
	int refs;
	int efd;
	uint64_t eval_id; /* the eval whose answers are accepted; 0 = none */
	struct answer *head, **tail;
	struct cc_tool_call *live; /* the open eval's unanswered calls */
	size_t nlive;
	size_t nheld; /* of those, the ones held for approval */
	bool woken;   /* the eventfd counts a change of holds, not an answer */
	/* cancel_live() runs cancel functions on this thread; an answer
	 * from any other thread waits on `cancelled` while its call's runs */
	pthread_t canceller;
	pthread_cond_t cancelled;
};

struct cc_tool_call {
	struct cc_replyq *q; /* a reference */
	uint64_t eval_id;
	uint64_t call;
	struct cc_tool_call *prev, *next; /* in q->live while linked */
	bool linked;
	bool cancelling;    /* its cancel function runs: cancel_live frees it */
	bool answered;	    /* answered by its own cancel function */
	bool held;	    /* waits for approval: the eval's clock is stopped */
	bool expired;	    /* its approval timed out: never answered to the guest */
	int64_t hold_until; /* cc_now_ns() past which the approval timed out */
	double hold_s;	    /* its approval timeout, seconds */
	bool redact;	    /* its tool's redaction when it was made */
	void (*cancel)(void *data);
	void *data;
};

static void answer_free(struct answer *a)
{
	cc_value_free(a->value);
	free(a->ename);
	free(a->emsg);
	free(a->ebases);
	free(a);
}

/* Drop every queued answer. Called with the lock held. */
static void drop_all(struct cc_replyq *q)
{
	while (q->head) {
		struct answer *a = q->head;
		q->head = a->next;
		answer_free(a);
	}
	q->tail = &q->head;
}

static void unref(struct cc_replyq *q)
{
	pthread_mutex_lock(&q->lock);
	int left = --q->refs;
	pthread_mutex_unlock(&q->lock);
	if (left)
		return;
	drop_all(q);
	close(q->efd);
	pthread_cond_destroy(&q->cancelled);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

int cc_replyq_ensure(cc_runtime *rt, cc_error *err)
{
	if (rt->replyq)
		return 0;
	struct cc_replyq *q = calloc(1, sizeof(*q));
	if (!q)
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->efd < 0) {
		free(q);
		return cc_fail(err, CC_ERR_INTERNAL, "eventfd for asynchronous tools: %s",
			       strerror(errno));
	}
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cancelled, NULL);
	q->refs = 1;
	q->tail = &q->head;
	rt->replyq = q;
	return 0;
}

static void unlink_call(struct cc_replyq *q, cc_tool_call *c)
{
	if (!c->linked)
		return;
	if (c->prev)
		c->prev->next = c->next;
	else
		q->live = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = c->next = NULL;
	c->linked = false;
	q->nlive--;
	if (c->held)
		q->nheld--;
}

/* Cancel every live call: each cancel function runs once, without the
 * lock. It may answer its call, which deliver() then leaves to us; an
 * answer from another thread meanwhile waits in deliver() until the
 * function returned, and then frees the call itself. */
static void cancel_live(struct cc_replyq *q)
{
	pthread_mutex_lock(&q->lock);
	cc_tool_call *list = q->live;
	for (cc_tool_call *c = list; c; c = c->next) {
		c->linked = false;
		c->cancelling = true;
	}
	q->live = NULL;
	q->nlive = 0;
	q->nheld = 0;
	q->canceller = pthread_self();
	pthread_mutex_unlock(&q->lock);
	while (list) {
		cc_tool_call *c = list;
		list = c->next;
		c->prev = c->next = NULL;
		if (c->cancel)
			c->cancel(c->data);
		pthread_mutex_lock(&q->lock);
		bool answered = c->answered;
		c->cancelling = false;
		pthread_cond_broadcast(&q->cancelled);
		pthread_mutex_unlock(&q->lock);
		if (answered)
			free(c); /* deliver() already dropped its reference */
	}
}

void cc_replyq_open(struct cc_replyq *q, uint64_t eval_id)
{
	if (!q)
		return;
	cancel_live(q);
	pthread_mutex_lock(&q->lock);
	q->eval_id = eval_id;
	/* Answers that came after the eval's last flush are dropped, and so
	 * is their count on the eventfd: cc_replyq_flush reads it only when
	 * it takes answers, and a count left behind would keep the next
	 * eval's wait waking for nothing. */
	bool dropped = q->head != NULL || q->woken;
	q->woken = false;
	drop_all(q);
	uint64_t n;
	if (dropped && read(q->efd, &n, sizeof(n)) < 0) {
		/* EAGAIN: a flush that raced with the answer drained it */
	}
	pthread_mutex_unlock(&q->lock);
}

size_t cc_replyq_in_flight(struct cc_replyq *q)
{
	if (!q)
		return 0;
	pthread_mutex_lock(&q->lock);
	size_t n = q->nlive;
	pthread_mutex_unlock(&q->lock);
	return n;
}

CC_EXPORT void cc_tool_call_on_cancel(cc_tool_call *call, void (*fn)(void *data), void *data)
{
	if (!call)
		return;
	pthread_mutex_lock(&call->q->lock);
	call->cancel = fn;
	call->data = data;
	pthread_mutex_unlock(&call->q->lock);
}

CC_EXPORT int cc_tool_call_hold(cc_tool_call *call, double approval_timeout_s)
{
	if (!call || !(approval_timeout_s > 0 && approval_timeout_s <= CC_MAX_TIMEOUT_S))
		return -1;
	int64_t until = cc_now_ns() + (int64_t)(approval_timeout_s * 1e9);
	int rc = -1;
	pthread_mutex_lock(&call->q->lock);
	if (call->linked && !call->expired) {
		if (!call->held)
			call->q->nheld++;
		call->held = true;
		call->hold_until = until;
		call->hold_s = approval_timeout_s;
		rc = 0;
	}
	pthread_mutex_unlock(&call->q->lock);
	return rc;
}

/* Wake the eval's thread for a change that is not an answer (lock held). */
static void wake(struct cc_replyq *q)
{
	uint64_t one = 1;
	q->woken = true;
	/* Only fails when the counter would overflow: readable anyway. */
	if (write(q->efd, &one, sizeof(one)) < 0) {
	}
}

CC_EXPORT int cc_tool_call_unhold(cc_tool_call *call)
{
	if (!call)
		return -1;
	struct cc_replyq *q = call->q;
	int rc = -1;
	pthread_mutex_lock(&q->lock);
	if (call->held && call->linked && !call->expired) {
		if (cc_now_ns() < call->hold_until) {
			call->held = false;
			if (!--q->nheld)
				wake(q); /* the eval's clock runs again from now, not later */
			rc = 0;
		} else {
			/* Too late, by the call's own deadline; the eval's thread
			 * ends the eval when it looks (cc_replyq_expire). */
			call->expired = true;
		}
	}
	pthread_mutex_unlock(&q->lock);
	return rc;
}

bool cc_replyq_expire(struct cc_replyq *q, double *timeout_s)
{
	bool expired = false;
	if (!q)
		return false;
	pthread_mutex_lock(&q->lock);
	int64_t now = cc_now_ns(), first = INT64_MAX;
	for (cc_tool_call *c = q->nheld ? q->live : NULL; c; c = c->next)
		if (c->held && (c->expired || c->hold_until <= now) && c->hold_until < first) {
			first = c->hold_until;
			*timeout_s = c->hold_s;
			expired = true;
		}
	/* The eval ends now: no held call of it may run any more. */
	for (cc_tool_call *c = expired ? q->live : NULL; c; c = c->next)
		if (c->held) {
			c->held = false;
			c->expired = true;
		}
	if (expired)
		q->nheld = 0;
	pthread_mutex_unlock(&q->lock);
	return expired;
}

size_t cc_replyq_held(struct cc_replyq *q, int64_t *until, double *timeout_s)
{
	*until = INT64_MAX;
	*timeout_s = 0;
	if (!q)
		return 0;
	pthread_mutex_lock(&q->lock);
	size_t n = q->nheld;
	for (cc_tool_call *c = n ? q->live : NULL; c; c = c->next)
		if (c->held && c->hold_until < *until) {
			*until = c->hold_until;
			*timeout_s = c->hold_s;
		}
	pthread_mutex_unlock(&q->lock);
	return n;
}

cc_tool_call *cc_replyq_new_call(struct cc_replyq *q, uint64_t call, bool redact)
{
	cc_tool_call *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->q = q;
	c->call = call;
	c->redact = redact;
	pthread_mutex_lock(&q->lock);
	q->refs++;
	c->eval_id = q->eval_id;
	if (c->eval_id) {
		c->next = q->live;
		if (q->live)
			q->live->prev = c;
		q->live = c;
		c->linked = true;
		q->nlive++;
	}
	pthread_mutex_unlock(&q->lock);
	return c;
}

int cc_replyq_fd(const struct cc_replyq *q)
{
	return q->efd;
}

void cc_replyq_release(struct cc_replyq *q)
{
	if (!q)
		return;
	cc_replyq_open(q, 0);
	unref(q);
}

/* Queue an answer (takes ownership of a) for its call, or drop it. */
static int deliver(cc_tool_call *c, struct answer *a)
{
	struct cc_replyq *q = c->q;
	int rc = 1;
	pthread_mutex_lock(&q->lock);
	unlink_call(q, c);
	if (a && c->eval_id && c->eval_id == q->eval_id && !c->expired) {
		a->call = c->call;
		*q->tail = a;
		q->tail = &a->next;
		a = NULL;
		rc = 0;
		uint64_t one = 1;
		/* Only fails when the counter would overflow: then it is
		 * readable anyway. */
		if (write(q->efd, &one, sizeof(one)) < 0) {
		}
	}
	/* Its cancel function runs. From another thread: wait until it
	 * returned (the host may free its data once we return), then free
	 * the call here. From inside it: cancel_live() frees the call. */
	while (c->cancelling && !pthread_equal(pthread_self(), q->canceller))
		pthread_cond_wait(&q->cancelled, &q->lock);
	bool keep = c->cancelling;
	if (keep)
		c->answered = true;
	pthread_mutex_unlock(&q->lock);
	if (a)
		answer_free(a);
	if (!keep)
		free(c);
	unref(q);
	return rc;
}

CC_EXPORT int cc_tool_call_return(cc_tool_call *call, cc_value *value)
{
	if (!call) {
		cc_value_free(value);
		return -1;
	}
	struct answer *a = calloc(1, sizeof(*a));
	if (a)
		a->value = value;
	else
		cc_value_free(value);
	/* Out of memory: the answer is lost and the eval waits until its
	 * deadline, which is what an unanswered call does. */
	return deliver(call, a);
}

static int call_vfail(cc_tool_call *call, const char *name, const char *bases, const char *fmt,
		      va_list ap)
{
	if (!call)
		return -1;
	struct answer *a = calloc(1, sizeof(*a));
	if (a) {
		a->emsg = cc_vstrprintf(fmt ? fmt : "", ap);
		a->ename = strdup(name ? name : "Error");
		a->ebases = bases ? strdup(bases) : NULL;
		a->redact = call->redact;
		if (!a->ename || !a->emsg || (bases && !a->ebases)) {
			answer_free(a);
			a = NULL;
		}
	}
	return deliver(call, a);
}

CC_EXPORT int cc_tool_call_fail(cc_tool_call *call, const char *name, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = call_vfail(call, name, NULL, fmt, ap);
	va_end(ap);
	return rc;
}

CC_EXPORT int cc_tool_call_fail_bases(cc_tool_call *call, const char *name, const char *bases,
				      const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = call_vfail(call, name, bases, fmt, ap);
	va_end(ap);
	return rc;
}

int cc_replyq_flush(cc_runtime *rt, int64_t deadline_ns, cc_error *err)
{
	struct cc_replyq *q = rt->replyq;
	if (!q)
		return 0;
	pthread_mutex_lock(&q->lock);
	struct answer *list = q->head;
	bool woken = q->woken;
	q->head = NULL;
	q->tail = &q->head;
	q->woken = false;
	pthread_mutex_unlock(&q->lock);
	/* Each answer is queued and counted on the eventfd under the lock:
	 * with none queued the counter is 0 (an earlier flush drained it
	 * after taking the answers), so the common case, a synchronous tool
	 * or no answer yet, costs no system call. One counted after the take
	 * is queued too, and the eval's loop flushes again before it waits. */
	uint64_t n;
	if ((list || woken) && read(q->efd, &n, sizeof(n)) < 0) {
		/* EAGAIN: drained already, by a flush that raced with it */
	}
	int rc = 0;
	while (list) {
		struct answer *a = list;
		list = a->next;
		if (rc == 0) {
			if (a->ename) {
				const char *ename, *emsg;
				cc_tool_failure_text(a->redact, a->ename, a->emsg, &ename, &emsg);
				rc = cc_tool_send_reply(rt, a->call, NULL, ename, a->ebases, emsg,
							deadline_ns, err);
			} else {
				rc = cc_tool_send_reply(rt, a->call, a->value, NULL, NULL, NULL,
							deadline_ns, err);
			}
		}
		answer_free(a);
	}
	return rc;
}
