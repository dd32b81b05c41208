/* One request's round trip, supervisor side: send the request, then
 * take the worker's frames until its result, one handler per frame type
 * ("out", "call", "wait", "result"; HACKING.md, "Protocol"), with the
 * output captured per stream and the eval's deadline stopped while a tool
 * call waits for approval. Every frame was validated by protocol.c; what
 * may arrive when (ids, call numbers, calls only in evals) is checked
 * here. The supervisor's words replace the worker's for a stop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "frame.h"
#include "message.h"
#include "supervisor.h"
#include "utf8.h"

/* Bytes of a successful result frame besides its value: {"t": "result",
 * "id": u64, "ok": true, "value": ...} takes 32. */
#define CC_RESULT_ENVELOPE 64
/* ... and of its displays besides their data (protocol.c counts that
 * against max_result): headers and MIME names, under 128 bytes each. */
#define CC_DISPLAYS_ENVELOPE (CC_MAX_DISPLAYS * 128)

/* Captured output of one eval: at most cap bytes kept per stream. */
struct capture {
	char *buf;
	size_t len, cap;
	uint64_t total;
	size_t line_start; /* where the output handler's next line begins */
};

/* Hand complete lines of the kept text to the runtime's output handlers
 * (all of what is left when `final`): the text handler once with all of
 * them, newlines kept, then the line handler once per line. Both see
 * repaired UTF-8. */
static void emit_lines(cc_runtime *rt, struct capture *c, int fd, bool final)
{
	if ((!rt->on_output && !rt->on_text) || !c->buf || c->line_start >= c->len)
		return;
	const char *from = c->buf + c->line_start;
	size_t end = c->len;
	if (!final) {
		const char *nl = memrchr(from, '\n', c->len - c->line_start);
		if (!nl)
			return;
		end = (size_t)(nl - c->buf) + 1;
	}
	size_t n = 0;
	char *text = cc_utf8_repair(from, end - c->line_start, &n);
	c->line_start = end;
	if (!text)
		return;
	if (rt->on_text)
		rt->on_text(rt->on_text_user, fd, text, n);
	for (char *p = text; rt->on_output && p < text + n;) {
		char *nl = memchr(p, '\n', (size_t)(text + n - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(text + n - p);
		rt->on_output(rt->on_output_user, fd, p, len);
		p += len + (nl ? 1 : 0);
	}
	free(text);
}

static int capture_add(struct capture *c, const char *p, size_t n)
{
	c->total += n;
	size_t room = c->cap - c->len;
	if (n > room)
		n = room;
	if (!n)
		return 0;
	char *b = realloc(c->buf, c->len + n + 1);
	if (!b)
		return -1;
	c->buf = b;
	memcpy(c->buf + c->len, p, n);
	c->len += n;
	return 0;
}

/* Hand the capture to the result as repaired UTF-8, with a marker when
 * the stream went over its cap. */
static void capture_finish(struct capture *c, cc_result *r, int fd)
{
	size_t n = 0;
	char *text = cc_utf8_repair(c->buf ? c->buf : "", c->len, &n);
	free(c->buf);
	c->buf = NULL;
	if (!text && r->kind == CC_OK) /* never an ok result with its output lost */
		cc_result_set_error(r, CC_ERR_INTERNAL, NULL, "out of memory keeping the eval's %s",
				    fd == 1 ? "stdout" : "stderr");
	if (text && c->total > c->cap) {
		char *marked = NULL;
		if (asprintf(&marked, "%s%s[codecage: %s truncated at %zu bytes]\n", text,
			     n && text[n - 1] != '\n' ? "\n" : "", fd == 1 ? "stdout" : "stderr",
			     c->cap) >= 0) {
			free(text);
			text = marked;
			n = strlen(text);
		}
	}
	r->out[fd] = text;
	r->out_len[fd] = text ? n : 0;
}

/* Approval waits (cc_tool_call_hold): while a call of the eval is held,
 * the eval's deadline clock stops and the earliest held call's approval
 * timeout bounds the wait instead; when none is held any more (answered,
 * or the host decided on it: cc_tool_call_unhold), the deadline moves
 * later by the time spent waiting. The worker's own
 * deadline follows through "clock" frames (HACKING.md, "Protocol"), but
 * the one that counts is this one. An approval that times out starts the
 * clock again with nothing left: the eval ends as a timeout that says so,
 * and no call of that eval is held again. */
struct hold {
	int64_t start;	   /* cc_now_ns() when the wait began; 0 = not waiting */
	int64_t until;	   /* the approval deadline the worker was last told of */
	bool expired;	   /* an approval timed out */
	double waited_s;   /* how long that wait was */
	double approval_s; /* the approval timeout of the earliest held call */
};

static int send_clock(cc_runtime *rt, int64_t left_ns, int64_t limit, cc_error *err)
{
	struct cc_msgbuf m;
	cc_msgbuf_begin(&m, 2, "clock");
	cc_pack_kv_u64(&m.pk, "timeout_ms",
		       left_ns > 0 ? (uint64_t)(left_ns + 999999) / 1000000 : 0);
	int rc = cc_msgbuf_check(&m, "clock", err);
	if (rc == 0)
		rc = cc_chan_send(&rt->child, m.sb.data, m.sb.size, limit, err);
	cc_msgbuf_free(&m);
	return rc;
}

/* Update the hold state; *deadline and *hard move when a wait ends. Sets
 * *now_deadline (the deadline as it stands now, for calls that arrive
 * during a wait) and *limit (when this wait must end). While waiting, the
 * worker's deadline is what the eval had left when the wait began, after
 * the earliest approval deadline (told again whenever that one changes). */
static int track_hold(cc_runtime *rt, struct hold *h, int64_t *deadline, int64_t *hard,
		      int64_t *now_deadline, int64_t *limit, cc_error *err)
{
	int64_t until, now = cc_now_ns();
	double approval_s;
	size_t n = h->expired ? 0 : cc_replyq_held(rt->replyq, &until, &approval_s);
	if (n && !h->start) {
		h->start = now;
		h->until = 0;
	} else if (!n && h->start) {
		*deadline += now - h->start;
		*hard += now - h->start;
		h->start = 0;
		if (send_clock(rt, *deadline - now, *hard, err) < 0)
			return -1;
	}
	if (h->start && cc_replyq_expire(rt->replyq, &approval_s)) {
		/* Nobody answered in time (deferred.c decides, by each call's
		 * own deadline, against the host's cc_tool_call_unhold): the
		 * clock runs again, at zero, and none of the held calls runs. */
		h->expired = true;
		h->waited_s = (double)(now - h->start) / 1e9;
		h->approval_s = approval_s;
		h->start = 0;
		*deadline = now;
		*hard = now + cc_secs_to_ns(rt->opts.limits.grace_s);
		if (send_clock(rt, 0, *hard, err) < 0)
			return -1;
	} else if (h->start && until != h->until) {
		h->until = until;
		if (send_clock(rt, (*deadline - h->start) + (until - now), *hard, err) < 0)
			return -1;
	}
	*now_deadline = h->start ? *deadline + (now - h->start) : *deadline;
	*limit = h->start ? until : *hard;
	return 0;
}

static void approval_timeout_error(cc_result *r, const struct hold *h)
{
	char *tb = r->traceback;
	r->traceback = NULL;
	cc_result_set_error(
		r, CC_ERR_TIMEOUT, "TimeoutError",
		"a tool call waited %.3g s for approval and was not answered within its "
		"approval timeout of %.3g s, so the eval was stopped; answer sooner, or "
		"raise cc_tool_call_hold's approval_timeout_s",
		h->waited_s, h->approval_s);
	r->traceback = tb;
}

/* One request in flight. */
struct request {
	cc_runtime *rt;
	uint64_t id;
	bool is_eval;
	double timeout_s;
	cc_result *r;
	struct capture cap[3]; /* index = fd */
	struct hold hold;
	int64_t start, deadline, hard;
	int64_t now_deadline; /* the deadline as it stands now (calls check it) */
	int64_t limit;	      /* when the current wait must end */
	cc_error err;
};

/* What a handler tells the loop: go on, look again (wait_frame: nothing
 * to read yet), the result is in, or the request failed (q->err). */
enum step {
	STEP_MORE,
	STEP_AGAIN,
	STEP_DONE,
	STEP_FAILED
};

/* Frames a request may see: its own id; calls and waits only in an eval,
 * a call's number always above the last one. */
static bool frame_expected(const struct request *q, const struct cc_msg *m)
{
	if (m->what != CC_MSG_OUT && m->what != CC_MSG_RESULT && m->what != CC_MSG_CALL &&
	    m->what != CC_MSG_WAIT)
		return false;
	if (m->id != q->id)
		return false;
	if (m->what == CC_MSG_CALL || m->what == CC_MSG_WAIT)
		return q->is_eval && (m->what != CC_MSG_CALL || m->call > q->rt->last_call);
	return true;
}

/* "call": a host tool (tools.c). Call ids grow over the session: a worker
 * cannot replay or guess its way to a reply meant for another call. */
static enum step on_call(struct request *q, const struct cc_msg *m)
{
	q->rt->last_call = m->call;
	return cc_tool_dispatch(q->rt, m, q->now_deadline, q->limit, &q->err) < 0 ? STEP_FAILED
										  : STEP_MORE;
}

/* "wait": the worker blocks for replies now (a hint for the host). */
static enum step on_wait(struct request *q, const struct cc_msg *m)
{
	(void)m;
	if (q->rt->on_wait)
		q->rt->on_wait(q->rt->on_wait_user);
	return STEP_MORE;
}

/* "out": guest output, kept up to the stream's cap and streamed by line. */
static enum step on_out(struct request *q, const struct cc_msg *m)
{
	if (capture_add(&q->cap[m->fd], m->data->u.str.ptr, m->data->u.str.len) < 0) {
		cc_fail(&q->err, CC_ERR_INTERNAL, "out of memory for output");
		return STEP_FAILED;
	}
	emit_lines(q->rt, &q->cap[m->fd], m->fd, false);
	return STEP_MORE;
}

/* "result": the request's outcome into r (taking the value, displays and
 * texts out of m). */
static enum step on_result(struct request *q, struct cc_msg *m, size_t frame_len)
{
	const cc_limits *l = &q->rt->opts.limits;
	cc_result *r = q->r;
	r->kind = m->kind;
	if (m->ok && frame_len > l->max_result + CC_RESULT_ENVELOPE +
					 (m->displays ? CC_DISPLAYS_ENVELOPE : 0)) {
		/* The worker checks the cap too; this is the check that
		 * counts. Displays travel in the same frame, so their bytes
		 * count with the value's. */
		cc_result_set_error(r, CC_ERR_OUTPUT_LIMIT, "OutputLimitError",
				    "the result%s is larger than the limit of %llu bytes; "
				    "return less or " CC_RESULT_HINT,
				    m->displays ? " with its displays" : "",
				    (unsigned long long)l->max_result);
		return STEP_DONE;
	}
	if (m->ok && m->value_type && !(q->is_eval && q->rt->asked_fallback)) {
		cc_fail(&q->err, CC_ERR_PROTOCOL_VIOLATION,
			"the worker gave a text-form value that was not asked for");
		return STEP_FAILED;
	}
	r->displays = m->displays;
	m->displays = NULL;
	if (m->ok) {
		r->value = m->value;
		m->value = NULL;
		r->value_type = m->value_type ? cc_dup_str(m->value_type) : NULL;
	} else {
		r->type = cc_dup_str(m->etype);
		r->message = cc_dup_str(m->message);
		r->traceback = cc_dup_str(m->traceback);
	}
	return STEP_DONE;
}

/* Wait for the next frame, answering asynchronous tools meanwhile.
 * STEP_MORE: a frame is there to read; STEP_AGAIN: look again (an answer
 * or an approval timeout came first); STEP_FAILED. */
static enum step wait_frame(struct request *q)
{
	cc_runtime *rt = q->rt;
	/* Frames already queued are read without waiting: check the clock
	 * here too, or a worker that keeps writing keeps us. */
	if (q->is_eval && rt->replyq &&
	    track_hold(rt, &q->hold, &q->deadline, &q->hard, &q->now_deadline, &q->limit, &q->err) <
		    0)
		return STEP_FAILED;
	if (cc_now_ns() >= q->limit) {
		if (q->hold.start)
			return STEP_AGAIN; /* an approval deadline: track_hold decides */
		cc_fail(&q->err, CC_ERR_TIMEOUT, "deadline passed");
		return STEP_FAILED;
	}
	if (!q->is_eval || !rt->replyq)
		return STEP_MORE;
	/* Send what asynchronous tools answered, then wait for the worker or
	 * the next answer, whichever is first. */
	if (cc_replyq_flush(rt, q->limit, &q->err) < 0)
		return STEP_FAILED;
	int which = cc_chan_wait_input(&rt->child, cc_replyq_fd(rt->replyq), q->limit, &q->err);
	if (which < 0 && q->hold.start && q->err.kind == CC_ERR_TIMEOUT) {
		cc_error_clear(&q->err); /* the approval timeout: track_hold */
		return STEP_AGAIN;
	}
	if (which < 0)
		return STEP_FAILED;
	return which == 1 ? STEP_AGAIN : STEP_MORE;
}

/* Read, check and hand one frame to its handler. */
static enum step next_frame(struct request *q)
{
	cc_runtime *rt = q->rt;
	char *buf = NULL;
	size_t len = 0;
	struct cc_msg m;
	if (cc_chan_recv(&rt->child, &buf, &len, cc_runtime_recv_cap(rt), q->limit, &q->err) < 0)
		return STEP_FAILED;
	int rc = cc_msg_parse(buf, len, rt->opts.limits.max_result, &m, &q->err);
	free(buf);
	if (rc < 0) {
		/* A value too big for host memory (value.c's cap) is reported
		 * as such; the worker is still stopped. */
		cc_fail_wrap(&q->err, q->err.kind == CC_ERR_OUTPUT_LIMIT
					      ? "the worker's frame was refused"
					      : "the worker sent an invalid frame");
		return STEP_FAILED;
	}
	enum step s = STEP_FAILED;
	if (!frame_expected(q, &m))
		cc_fail(&q->err, CC_ERR_PROTOCOL_VIOLATION,
			"unexpected message during an eval (type or id mismatch)");
	else if (m.what == CC_MSG_CALL)
		s = on_call(q, &m);
	else if (m.what == CC_MSG_WAIT)
		s = on_wait(q, &m);
	else if (m.what == CC_MSG_OUT)
		s = on_out(q, &m);
	else
		s = on_result(q, &m, len);
	cc_msg_free(&m);
	return s;
}

/* The supervisor's words for a soft stop, the heap cap, a refused budget
 * and an output cap, whatever the worker said. */
static void reword(struct request *q)
{
	cc_runtime *rt = q->rt;
	const cc_limits *l = &rt->opts.limits;
	cc_result *r = q->r;
	if (r->kind == CC_ERR_TIMEOUT && q->hold.expired) {
		approval_timeout_error(r, &q->hold);
	} else if (r->kind == CC_ERR_TIMEOUT) {
		char *tb = r->traceback;
		r->traceback = NULL;
		cc_result_set_error(
			r, CC_ERR_TIMEOUT, "TimeoutError",
			"the code ran past its time limit of %.3g s and was stopped; the "
			"runtime is still usable, with its state; " CC_TIMEOUT_HINT,
			q->timeout_s);
		r->traceback = tb;
	} else if (r->kind == CC_ERR_MEMORY_LIMIT) {
		char *tb = r->traceback, *type = r->type;
		r->traceback = r->type = NULL;
		cc_result_set_error(
			r, CC_ERR_MEMORY_LIMIT, NULL,
			"out of memory: the engine heap limit is %llu bytes (%.4g MiB); "
			"" CC_MEMORY_HINT,
			(unsigned long long)l->max_memory, (double)l->max_memory / (1024 * 1024));
		r->traceback = tb;
		r->type = type;
	}
	/* A ToolBudgetError the guest did not catch surfaces to the host as
	 * its own kind (DESIGN.md section 6) when this request really was
	 * refused a call: the worker cannot claim it on its own. */
	if (r->kind == CC_ERR_GUEST && rt->budget_refused && r->type &&
	    !strcmp(r->type, "ToolBudgetError"))
		r->kind = CC_ERR_TOOL_BUDGET;
	/* Output over a cap ends the eval as output_limit even when the
	 * worker claims success: the supervisor counted the bytes itself, and
	 * its message names the stream. */
	for (int fd = 1; fd <= 2; fd++)
		if (q->cap[fd].total > q->cap[fd].cap &&
		    (r->kind == CC_OK || r->kind == CC_ERR_OUTPUT_LIMIT))
			cc_result_set_error(r, CC_ERR_OUTPUT_LIMIT, "OutputLimitError",
					    "%s exceeded its cap of %zu bytes; print less or raise "
					    "the cap",
					    fd == 1 ? "stdout" : "stderr", q->cap[fd].cap);
}

/* The request could not finish: the worker is stopped, and r says why. */
static void failed(struct request *q)
{
	cc_runtime *rt = q->rt;
	const cc_limits *l = &rt->opts.limits;
	cc_result *r = q->r;
	cc_error *err = &q->err;
	if (err->kind == CC_ERR_TIMEOUT && q->hold.expired) {
		cc_runtime_mark_dead(rt, "killed after an approval timeout", false);
		approval_timeout_error(r, &q->hold);
	} else if (err->kind == CC_ERR_TIMEOUT) {
		cc_runtime_mark_dead(rt, "killed after its deadline", false);
		cc_result_set_error(
			r, CC_ERR_TIMEOUT, "TimeoutError",
			"the code ran past its time limit of %.3g s and did not stop "
			"within the %.3g s grace; the worker was killed and the runtime "
			"is dead: create a new one; " CC_TIMEOUT_HINT,
			q->timeout_s, l->grace_s);
	} else if (err->kind == CC_ERR_WORKER_CRASHED && q->is_eval && cc_now_ns() >= q->deadline) {
		/* Ended past the deadline, before its result: the Python worker
		 * ends itself when the stop lands in a long C call that cannot
		 * be interrupted (engine_py.c, the soft stop). Whatever ended
		 * it, the deadline had passed: the eval timed out. */
		cc_runtime_mark_dead(rt, "past the deadline", true);
		cc_result_set_error(r, CC_ERR_TIMEOUT, "TimeoutError",
				    "the code ran past its time limit of %.3g s inside a call that "
				    "cannot be interrupted (a long C builtin), so the worker was "
				    "ended, %s, and the runtime is dead: create a "
				    "new one; " CC_TIMEOUT_HINT,
				    q->timeout_s, rt->death ? rt->death : "");
	} else {
		cc_runtime_mark_dead(rt, err->message ? err->message : "worker failure",
				     err->kind == CC_ERR_WORKER_CRASHED);
		if (err->kind == CC_ERR_WORKER_CRASHED)
			cc_result_set_error(r, CC_ERR_WORKER_CRASHED, NULL,
					    "%s; create a new runtime", rt->death ? rt->death : "");
		else
			cc_result_set_error(r, err->kind, NULL, "%s",
					    err->message ? err->message : "");
	}
	cc_error_clear(err);
}

void cc_round_trip(cc_runtime *rt, uint64_t id, const msgpack_sbuffer *req, double timeout_s,
		   bool is_eval, cc_result *r)
{
	const cc_limits *l = &rt->opts.limits;
	struct request q = {
		.rt = rt, .id = id, .is_eval = is_eval, .timeout_s = timeout_s, .r = r
	};
	q.cap[1].cap = l->max_stdout;
	q.cap[2].cap = l->max_stderr;
	q.start = cc_now_ns();
	q.deadline = q.start + cc_secs_to_ns(timeout_s);
	q.hard = q.deadline + cc_secs_to_ns(l->grace_s);
	q.now_deadline = q.deadline;
	q.limit = q.hard;
	rt->budget_refused = false;
	/* Answers of asynchronous tools are accepted for this eval only. */
	if (is_eval)
		cc_replyq_open(rt->replyq, id);

	enum step s = cc_chan_send(&rt->child, req->data, req->size, q.hard, &q.err) < 0
			      ? STEP_FAILED
			      : STEP_MORE;
	while (s == STEP_MORE || s == STEP_AGAIN) {
		s = wait_frame(&q);
		if (s == STEP_MORE)
			s = next_frame(&q);
	}
	if (s == STEP_DONE)
		reword(&q);
	else
		failed(&q);
	if (is_eval)
		cc_replyq_open(rt->replyq, 0);
	emit_lines(rt, &q.cap[1], 1, true);
	emit_lines(rt, &q.cap[2], 2, true);
	capture_finish(&q.cap[1], r, 1);
	capture_finish(&q.cap[2], r, 2);
	r->duration = (double)(cc_now_ns() - q.start) / 1e9;
}

int cc_runtime_request(cc_runtime *rt, uint64_t id, const struct cc_msgbuf *m, cc_error *err)
{
	return cc_runtime_request_value(rt, id, m, NULL, err);
}

int cc_runtime_request_value(cc_runtime *rt, uint64_t id, const struct cc_msgbuf *m,
			     cc_value **value, cc_error *err)
{
	if (!rt->alive)
		return cc_fail(err, CC_ERR_WORKER_CRASHED, "this runtime's worker is gone: %s",
			       rt->death ? rt->death : "it was closed");
	if (cc_msgbuf_check(m, "request", err) < 0)
		return -1;
	if (!cc_runtime_enter(rt, err))
		return -1;
	cc_result *r = cc_result_alloc();
	if (!r) {
		cc_runtime_leave(rt);
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	}
	cc_round_trip(rt, id, &m->sb, rt->opts.limits.timeout_s, false, r);
	cc_runtime_leave(rt);
	int rc = 0;
	if (r->kind != CC_OK) {
		rc = cc_fail(err, r->kind, "%s%s%s", r->type ? r->type : "",
			     r->type && *r->type ? ": " : "", r->message ? r->message : "");
	} else if (value) {
		*value = r->value;
		r->value = NULL;
	}
	cc_result_free(r);
	return rc;
}
