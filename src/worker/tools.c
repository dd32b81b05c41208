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
} t = { .next_id = 1 };

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
	cc_pack_cstr(&m.pk, "id");
	msgpack_pack_uint64(&m.pk, t.eval_id);
	cc_pack_cstr(&m.pk, "call");
	msgpack_pack_uint64(&m.pk, id);
	cc_pack_cstr(&m.pk, "name");
	cc_pack_cstr(&m.pk, name);
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
		_exit(4);
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

static void file_incoming(void);

/* ---- reading the channel, with read-ahead ----
 *
 * One read() takes what the socket holds (up to the buffer), so a small
 * frame arrives with one system call instead of two (header, payload).
 * Bytes kept here count as input waiting: every wait looks here before it
 * polls the socket. */
static struct {
	char buf[4096];
	size_t len, off;
} ra;

bool cc_worker_input_buffered(void)
{
	return ra.off < ra.len;
}

/* Read exactly n bytes. Returns 0, or -1 (errno 0: end of file). */
static int read_full(char *p, size_t n)
{
	while (n > 0) {
		if (ra.off < ra.len) {
			size_t k = ra.len - ra.off < n ? ra.len - ra.off : n;
			memcpy(p, ra.buf + ra.off, k);
			ra.off += k;
			p += k;
			n -= k;
			continue;
		}
		bool direct = n >= sizeof(ra.buf);
		ssize_t r = read(CC_CHANNEL_FD, direct ? p : ra.buf, direct ? n : sizeof(ra.buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = 0;
			return -1;
		}
		if (direct) {
			p += r;
			n -= (size_t)r;
		} else {
			ra.len = (size_t)r;
			ra.off = 0;
		}
	}
	return 0;
}

int cc_worker_read_frame(char **buf, size_t *len, size_t cap)
{
	unsigned char hdr[CC_FRAME_HEADER];
	*buf = NULL;
	if (read_full((char *)hdr, CC_FRAME_HEADER) < 0)
		return -1;
	size_t n = cc_le32(hdr);
	if (n > cap)
		return -2;
	char *b = malloc(n ? n : 1);
	if (!b || read_full(b, n) < 0) {
		free(b);
		return -1;
	}
	*buf = b;
	*len = n;
	return 0;
}

/* Read and file one frame from the supervisor, waiting until the eval's
 * deadline at most. Returns 0, or -1 when the eval must stop. */
bool cc_worker_spin_for_input(void)
{
	if (cc_worker_input_buffered())
		return true;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int64_t until = (int64_t)t0.tv_sec * 1000000000 + t0.tv_nsec + CC_SPIN_NS;
	for (;;) {
		/* Read for real, into the read-ahead buffer: what arrives is
		 * taken by this one call (a peek would need a second). End of
		 * file or an error is left for the read that follows. */
		ssize_t r = recv(CC_CHANNEL_FD, ra.buf, sizeof(ra.buf), MSG_DONTWAIT);
		if (r > 0) {
			ra.len = (size_t)r;
			ra.off = 0;
			return true;
		}
		if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			return true;
		__builtin_ia32_pause();
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if ((int64_t)t0.tv_sec * 1000000000 + t0.tv_nsec >= until)
			return false;
	}
}

/* About to block for replies: tell the supervisor (a "wait" frame), so a
 * host that shows pending calls to a person knows the fan-out is complete
 * (cc_runtime_set_wait_handler). Only a hint: nothing depends on it. */
static void send_wait(void)
{
	struct cc_msgbuf m;
	cc_msgbuf_begin(&m, 2, "wait");
	cc_pack_cstr(&m.pk, "id");
	msgpack_pack_uint64(&m.pk, t.eval_id);
	cc_worker_send_frame(m.sb.data, m.sb.size);
	cc_msgbuf_free(&m);
}

static int read_one(void)
{
	if (cc_worker_spin_for_input()) {
		file_incoming();
		return 0;
	}
	if (t.in_eval)
		send_wait();
	for (;;) {
		if (cc_worker_should_stop())
			return -1;
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		int64_t left =
			cc_worker_deadline_ns() - ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
		struct pollfd p = { CC_CHANNEL_FD, POLLIN, 0 };
		int n = poll(&p, 1, left > 0 ? (int)((left + 999999) / 1000000) : 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			_exit(3);
		if (n == 0)
			continue; /* should_stop() now says timeout */
		break;
	}
	file_incoming();
	return 0;
}

/* Read one frame that must be a reply or a clock (the only things the
 * supervisor sends while a request is being served) and file it. Blocking. */
static void file_incoming(void)
{
	char *buf = NULL;
	size_t len = 0;
	if (cc_worker_read_frame(&buf, &len, cc_worker_limits.max_result + CC_FRAME_ENVELOPE) != 0)
		_exit(3); /* the supervisor is gone or broke the channel */
	cc_value *m = NULL;
	cc_value_caps caps = cc_value_frame_caps(cc_worker_limits.max_result);
	caps.mem_cap = 0; /* the worker's own memory: its rlimits bound it */
	cc_error err = { 0 };
	int rc = cc_value_decode_all(buf, len, &m, &caps, &err);
	free(buf);
	const cc_value *ty = cc_value_map_get(m, "t", NULL);
	if (rc < 0 || cc_value_type_of(ty) != CC_VALUE_STRING)
		_exit(4);
	if (!strcmp(ty->u.str.ptr, "clock"))
		cc_worker_take_clock(m); /* a call waits for approval, or no longer */
	else if (!strcmp(ty->u.str.ptr, "reply"))
		cc_worker_take_reply(m);
	else
		_exit(4); /* during an eval the supervisor sends only replies and clocks */
	cc_value_free(m);
}

/* Every frame the worker sends goes through here. The supervisor answers
 * calls while we keep writing (more calls, output, the result), so a write
 * that would block first reads and files what the supervisor sent:
 * otherwise both sides could block on full socket buffers forever. */
void cc_worker_send_frame(const void *payload, size_t len)
{
	unsigned char hdr[CC_FRAME_HEADER];
	cc_frame_header(hdr, len);
	const char *parts[2] = { (const char *)hdr, payload };
	size_t sizes[2] = { 4, len };
	/* A small frame goes in one send(): header and payload together
	 * (sendmsg is not on the allow-list). */
	char one[1024];
	if (len <= sizeof(one) - CC_FRAME_HEADER) {
		memcpy(one, hdr, CC_FRAME_HEADER);
		memcpy(one + CC_FRAME_HEADER, payload, len);
		parts[0] = one;
		sizes[0] = CC_FRAME_HEADER + len;
		sizes[1] = 0;
	}
	for (int i = 0; i < 2; i++) {
		size_t off = 0;
		while (off < sizes[i]) {
			ssize_t n = send(CC_CHANNEL_FD, parts[i] + off, sizes[i] - off,
					 MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n > 0) {
				off += (size_t)n;
				continue;
			}
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
				_exit(3);
			struct pollfd p = { CC_CHANNEL_FD, POLLIN | POLLOUT, 0 };
			if (poll(&p, 1, -1) < 0 && errno != EINTR)
				_exit(3);
			if (p.revents & POLLIN)
				file_incoming();
			else if (p.revents & (POLLHUP | POLLERR))
				_exit(3);
		}
	}
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
