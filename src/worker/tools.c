/* The worker's side of host tool calls: "call" frames out, "reply" frames
 * in (HACKING.md, "Protocol"). Single-threaded, like the rest of the
 * worker. Replies can arrive in any order; those not yet asked for are
 * kept until their call is collected. */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "frame.h"
#include "hygiene.h"
#include "message.h"
#include "value.h"
#include "worker.h"
#include "worker_exit.h"
#include "worker_internal.h"

struct held {
	uint64_t id;
	bool arrived;
	struct cc_call_reply reply;
};

static struct {
	uint64_t next_id; /* call ids grow across the session: never reused */
	uint64_t eval_id;
	bool in_eval;
	struct held *calls; /* started, not yet collected */
	size_t n, cap;
	int64_t next_look; /* cc_worker_calls_tick's next look at the channel */
	bool tick_asked;   /* cc_worker_calls_due was called, its tick not yet run */
} t = { .next_id = 1 };

void (*cc_worker_calls_due)(int64_t due_ns);

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static bool any_unanswered(void)
{
	for (size_t i = 0; i < t.n; i++)
		if (!t.calls[i].arrived)
			return true;
	return false;
}

void cc_worker_calls_tick(void)
{
	if (!t.in_eval || t.n == 0)
		return;
	int64_t now = mono_ns();
	if (now < t.next_look) {
		/* Another tick came first (held output): the one asked for may
		 * have been replaced by it, so ask again. */
		if (t.tick_asked && cc_worker_calls_due)
			cc_worker_calls_due(t.next_look);
		return;
	}
	t.next_look = now + CC_CALLS_LOOK_NS;
	while (any_unanswered() && cc_worker_input_waiting())
		cc_worker_file_incoming();
	t.tick_asked = any_unanswered() && cc_worker_calls_due;
	if (t.tick_asked)
		cc_worker_calls_due(t.next_look);
}

void cc_call_reply_free(struct cc_call_reply *r)
{
	cc_value_free(r->value);
	free(r->err_name);
	free(r->err_message);
	free(r->err_bases);
	memset(r, 0, sizeof(*r));
}

void cc_worker_tools_begin(uint64_t eval_id)
{
	t.eval_id = eval_id;
	t.in_eval = true;
	t.next_look = 0;
	t.tick_asked = false; /* an earlier eval's early tick is gone (guest_enter) */
}

/* Eval over: calls nobody collected keep their slot (without the reply)
 * so a late reply is recognised and dropped, not taken as a stray. */
void cc_worker_tools_end(void)
{
	t.in_eval = false;
	size_t k = 0;
	for (size_t i = 0; i < t.n; i++) {
		cc_call_reply_free(&t.calls[i].reply);
		if (!t.calls[i].arrived)
			t.calls[k++] = t.calls[i];
	}
	t.n = k;
}

size_t cc_worker_calls_pending(void)
{
	return t.in_eval ? t.n : 0;
}

uint64_t cc_worker_call_start(const char *name, const char *args, size_t args_len,
			      const char *kwargs, size_t kwargs_len)
{
	if (!t.in_eval || cc_worker_should_stop())
		return 0;
	if (t.n == t.cap) {
		size_t cap = t.cap ? t.cap * 2 : 8;
		struct held *c = realloc(t.calls, cap * sizeof(*c));
		if (!c)
			return 0;
		t.calls = c;
		t.cap = cap;
	}
	cc_worker_flush_output();
	uint64_t id = t.next_id++;
	struct cc_msgbuf m;
	cc_msgbuf_begin(&m, kwargs ? 6 : 5, "call");
	cc_pack_kv_u64(&m.pk, "id", t.eval_id);
	cc_pack_kv_u64(&m.pk, "call", id);
	cc_pack_kv_str(&m.pk, "name", name);
	cc_pack_cstr(&m.pk, "args");
	msgpack_sbuffer_write(&m.sb, args, args_len);
	if (kwargs) {
		cc_pack_cstr(&m.pk, "kwargs");
		msgpack_sbuffer_write(&m.sb, kwargs, kwargs_len);
	}
	/* Recorded before sending: replies filed while the frame goes out must
	 * find their call. */
	t.calls[t.n++] = (struct held){ .id = id };
	cc_worker_send_frame(m.sb.data, m.sb.size);
	cc_msgbuf_free(&m);
	if (cc_worker_calls_due && !t.tick_asked) {
		/* The guest may go on computing without awaiting it: the first
		 * call asks for the tick, which asks again while any is
		 * unanswered (one timer change per look, not per call). */
		t.tick_asked = true;
		t.next_look = mono_ns() + CC_CALLS_LOOK_NS;
		cc_worker_calls_due(t.next_look);
	}
	return id;
}

static struct held *find(uint64_t id)
{
	for (size_t i = 0; i < t.n; i++)
		if (t.calls[i].id == id)
			return &t.calls[i];
	return NULL;
}

/* The reply's `bases` (an array of strings) joined with commas, or NULL
 * (absent, malformed, or out of memory: the bases only refine a class). */
static char *join_bases(const cc_value *b)
{
	if (cc_value_type_of(b) != CC_VALUE_ARRAY || !b->u.array.len)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < b->u.array.len; i++) {
		const cc_value *s = b->u.array.items[i];
		if (cc_value_type_of(s) != CC_VALUE_STRING || !s->u.str.len ||
		    memchr(s->u.str.ptr, ',', s->u.str.len))
			return NULL;
		n += s->u.str.len + 1;
	}
	char *out = malloc(n), *p = out;
	for (size_t i = 0; out && i < b->u.array.len; i++) {
		const cc_value *s = b->u.array.items[i];
		memcpy(p, s->u.str.ptr, s->u.str.len);
		p += s->u.str.len;
		*p++ = ',';
	}
	if (out)
		p[-1] = '\0';
	return out;
}

/* Take a decoded "reply" frame (borrowed). A reply to a call we never made
 * means the supervisor is broken: stop rather than guess. */
void cc_worker_take_reply(cc_value *m)
{
	const cc_value *call = cc_value_map_get(m, "call", NULL);
	const cc_value *ok = cc_value_map_get(m, "ok", NULL);
	struct held *h = NULL;
	if (cc_value_type_of(call) == CC_VALUE_INT && call->u.i > 0)
		h = find((uint64_t)call->u.i);
	if (!h || h->arrived || cc_value_type_of(ok) != CC_VALUE_BOOL)
		_exit(CC_WORKER_EXIT_BAD_FRAME);
	h->arrived = true;
	h->reply.ok = ok->u.b;
	if (ok->u.b) {
		/* Copy the value out of the frame's tree by stealing it. */
		for (size_t i = 0; i < m->u.map.len; i++)
			if (!strcmp(m->u.map.keys[i], "value")) {
				h->reply.value = m->u.map.vals[i];
				m->u.map.vals[i] = NULL;
			}
	} else {
		const cc_value *e = cc_value_map_get(m, "error", NULL);
		const cc_value *n = cc_value_map_get(e, "name", NULL);
		const cc_value *msg = cc_value_map_get(e, "message", NULL);
		h->reply.err_name =
			strdup(cc_value_type_of(n) == CC_VALUE_STRING ? n->u.str.ptr : "Error");
		h->reply.err_message =
			strdup(cc_value_type_of(msg) == CC_VALUE_STRING ? msg->u.str.ptr : "");
		h->reply.err_bases = join_bases(cc_value_map_get(e, "bases", NULL));
	}
	if (!t.in_eval) {
		/* A late reply to a call of a finished eval: drop it. */
		cc_call_reply_free(&h->reply);
		*h = t.calls[--t.n];
	}
}

/* About to block for replies: tell the supervisor (a "wait" frame), so a
 * host that shows pending calls to a person knows the fan-out is complete
 * (cc_runtime_set_wait_handler). Only a hint: nothing depends on it. */
static void send_wait(void)
{
	struct cc_msgbuf m;
	cc_msgbuf_begin(&m, 2, "wait");
	cc_pack_kv_u64(&m.pk, "id", t.eval_id);
	cc_worker_send_frame(m.sb.data, m.sb.size);
	cc_msgbuf_free(&m);
}

static int read_one(void)
{
	if (cc_worker_spin_for_input()) {
		cc_worker_file_incoming();
		return 0;
	}
	if (t.in_eval)
		send_wait();
	/* until input, or the deadline: should_stop() then says timeout */
	do {
		if (cc_worker_should_stop())
			return -1;
	} while (!cc_worker_poll_input(cc_worker_deadline_ns()));
	cc_worker_file_incoming();
	return 0;
}

void cc_worker_file_incoming(void)
{
	char *buf = NULL;
	size_t len = 0;
	if (cc_worker_read_frame(&buf, &len, cc_worker_limits.max_result + CC_FRAME_ENVELOPE) != 0)
		_exit(CC_WORKER_EXIT_CHANNEL); /* the supervisor is gone or broke the channel */
	cc_value *m = NULL;
	cc_value_caps caps = cc_value_frame_caps(cc_worker_limits.max_result);
	caps.mem_cap = 0; /* the worker's own memory: its rlimits bound it */
	cc_error err = { 0 };
	int rc = cc_value_decode_all(buf, len, &m, &caps, &err);
	free(buf);
	const cc_value *ty = cc_value_map_get(m, "t", NULL);
	if (rc < 0 || cc_value_type_of(ty) != CC_VALUE_STRING)
		_exit(CC_WORKER_EXIT_BAD_FRAME);
	if (!strcmp(ty->u.str.ptr, "clock"))
		cc_worker_take_clock(m); /* a call waits for approval, or no longer */
	else if (!strcmp(ty->u.str.ptr, "reply"))
		cc_worker_take_reply(m);
	else
		_exit(CC_WORKER_EXIT_BAD_FRAME); /* during an eval the supervisor sends only replies
						    and clocks */
	cc_value_free(m);
}

int cc_worker_call_wait(uint64_t id, struct cc_call_reply *r)
{
	memset(r, 0, sizeof(*r));
	struct held *h = find(id);
	if (!h || !t.in_eval)
		return -1;
	while (!(h = find(id))->arrived)
		if (read_one() < 0)
			return -1;
	*r = h->reply;
	*h = t.calls[--t.n];
	return 0;
}

uint64_t cc_worker_call_wait_any(void)
{
	if (!t.in_eval || t.n == 0)
		return 0;
	for (;;) {
		for (size_t i = 0; i < t.n; i++)
			if (t.calls[i].arrived)
				return t.calls[i].id;
		if (read_one() < 0)
			return 0;
	}
}
