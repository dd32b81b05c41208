/* Guest output, the per-eval stop conditions, and outcome helpers.
 *
 * Output is buffered per stream and sent as "out" frames of at most
 * CC_OUTPUT_CHUNK bytes when a buffer fills, when the eval ends, before a
 * tool call, and as it is printed: at a newline or an explicit flush (a
 * "flush point"), unless a frame went out less than CC_STREAM_GAP_NS ago.
 * Then the bytes are held and go at the first of: the next flush point or
 * tick (cc_worker_output_tick, which the engines call from their
 * interrupt points and, for a guest that waits, from a timer the
 * cc_worker_output_due hook arms) after the gap. So a line reaches the
 * supervisor within about one gap, and a flood costs at most one frame
 * per gap plus one per full chunk. The worker keeps at most cap + 1 bytes
 * per stream: the extra byte lets the supervisor see the overflow for
 * itself instead of trusting us. */
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
#include "worker_exit.h"

struct cc_init_limits cc_worker_limits;
bool cc_worker_isolated;

static struct {
	uint64_t id; /* request id of the running eval */
	int64_t deadline_ns;
	cc_error_kind stop; /* sticky for the eval */
	uint64_t sent[3];   /* bytes accepted per stream (index = fd) */
	char buf[3][CC_OUTPUT_CHUNK];
	size_t used[3];
	bool discard;	      /* libraries loading: no "out" frames before "ready" */
	int64_t last_send_ns; /* when the last "out" frame went */
	bool held;	      /* a flush point waits for the gap to pass */
} ev;

void (*cc_worker_output_due)(int64_t due_ns);

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void cc_worker_begin_eval(uint64_t id, uint64_t timeout_ms)
{
	ev.id = id;
	ev.deadline_ns = now_ns() + (int64_t)timeout_ms * 1000000;
	ev.stop = CC_OK;
	memset(ev.sent, 0, sizeof(ev.sent));
	memset(ev.used, 0, sizeof(ev.used));
	ev.last_send_ns = 0;
	ev.held = false;
}

static void flush_stream(int fd)
{
	if (!ev.used[fd])
		return;
	struct cc_msgbuf m;
	cc_msgbuf_begin(&m, 4, "out");
	cc_pack_kv_u64(&m.pk, "id", ev.id);
	cc_pack_kv_int(&m.pk, "fd", fd);
	cc_pack_kv_bin(&m.pk, "data", ev.buf[fd], ev.used[fd]);
	cc_worker_send_frame(m.sb.data, m.sb.size);
	cc_msgbuf_free(&m);
	ev.used[fd] = 0;
	ev.last_send_ns = now_ns();
	if (!ev.used[1] && !ev.used[2])
		ev.held = false;
}

void cc_worker_flush_output(void)
{
	flush_stream(1);
	flush_stream(2);
}

void cc_worker_discard_output(bool on)
{
	ev.discard = on;
}

void cc_worker_output_flush_point(void)
{
	if (!ev.used[1] && !ev.used[2])
		return;
	int64_t due = ev.last_send_ns + CC_STREAM_GAP_NS;
	if (now_ns() >= due) {
		cc_worker_flush_output();
		return;
	}
	if (!ev.held && cc_worker_output_due)
		cc_worker_output_due(due);
	ev.held = true;
}

void cc_worker_output_tick(void)
{
	if (ev.held && now_ns() >= ev.last_send_ns + CC_STREAM_GAP_NS)
		cc_worker_flush_output();
}

int cc_worker_output(int fd, const char *data, size_t len)
{
	if (fd != 1 && fd != 2)
		return -1;
	if (ev.discard)
		return 0;
	/* Keep the order across the two streams: what the other stream
	 * buffered was written first. */
	flush_stream(fd == 1 ? 2 : 1);
	uint64_t cap = fd == 1 ? cc_worker_limits.max_stdout : cc_worker_limits.max_stderr;
	uint64_t room = cap + 1 > ev.sent[fd] ? cap + 1 - ev.sent[fd] : 0;
	size_t take = len < room ? len : (size_t)room;
	bool newline = take && memchr(data, '\n', take); /* of what is kept */
	ev.sent[fd] += take;
	while (take > 0) {
		size_t n = CC_OUTPUT_CHUNK - ev.used[fd];
		if (n > take)
			n = take;
		memcpy(ev.buf[fd] + ev.used[fd], data, n);
		ev.used[fd] += n;
		data += n;
		take -= n;
		if (ev.used[fd] == CC_OUTPUT_CHUNK)
			flush_stream(fd);
	}
	if (ev.sent[fd] > cap) {
		if (ev.stop == CC_OK)
			ev.stop = CC_ERR_OUTPUT_LIMIT;
		return -1;
	}
	if (newline)
		cc_worker_output_flush_point();
	return 0;
}

bool cc_worker_should_stop(void)
{
	if (ev.stop != CC_OK)
		return true;
	if (now_ns() >= ev.deadline_ns) {
		ev.stop = CC_ERR_TIMEOUT;
		return true;
	}
	return false;
}

cc_error_kind cc_worker_stop_reason(void)
{
	return ev.stop;
}

/* A "clock" frame {timeout_ms}: the supervisor moved the eval's deadline
 * to timeout_ms from now (it stopped the eval's clock while a tool call
 * waits for approval, and starts it again with what was left). Only
 * ever sent by the supervisor, whose own deadline is the one that counts;
 * a malformed one is a broken channel. Ignored outside an eval. */
void cc_worker_take_clock(const cc_value *m)
{
	const cc_value *v = cc_value_map_get(m, "timeout_ms", NULL);
	if (!v || v->type != CC_VALUE_INT || v->u.i < 0 ||
	    v->u.i > (int64_t)CC_MAX_TIMEOUT_S * 2 * 1000)
		_exit(CC_WORKER_EXIT_BAD_FRAME);
	if (ev.stop != CC_OK)
		return; /* already stopping: the stop stays */
	ev.deadline_ns = now_ns() + (int64_t)v->u.i * 1000000;
}

int64_t cc_worker_deadline_ns(void)
{
	return ev.deadline_ns;
}

bool cc_worker_value_fallback;
const char *cc_worker_eval_file = "<code>";

void cc_outcome_fallback(struct cc_outcome *o, const char *type_name, const char *text, size_t len)
{
	static const char cut[] = "\n[codecage: text shortened]";
	/* msgpack's str header and the marker fit in the rest of the cap */
	size_t keep =
		cc_worker_limits.max_result > 64 ? (size_t)cc_worker_limits.max_result - 64 : 0;
	bool shorten = len > keep;

	if (shorten) {
		len = keep;
		while (len && ((unsigned char)text[len] & 0xc0) == 0x80)
			len--; /* whole UTF-8 sequences only */
	}
	free(o->type);
	free(o->message);
	free(o->traceback);
	o->type = o->message = o->traceback = NULL;
	o->ok = true;
	o->kind = CC_OK;
	o->value.size = 0;
	msgpack_packer pk;
	msgpack_packer_init(&pk, &o->value, msgpack_sbuffer_write);
	msgpack_pack_str(&pk, len + (shorten ? sizeof(cut) - 1 : 0));
	msgpack_pack_str_body(&pk, text, len);
	if (shorten)
		msgpack_pack_str_body(&pk, cut, sizeof(cut) - 1);
	free(o->value_type);
	o->value_type = strdup(type_name && *type_name ? type_name : "?");
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int cc_outcome_fail(struct cc_outcome *o, cc_error_kind kind, const char *type, const char *message,
		    const char *traceback)
{
	free(o->type);
	free(o->message);
	free(o->traceback);
	o->ok = false;
	o->kind = kind;
	o->type = dup_or_null(type);
	o->message = dup_or_null(message);
	o->traceback = dup_or_null(traceback);
	return -1;
}

void cc_outcome_init(struct cc_outcome *o)
{
	memset(o, 0, sizeof(*o));
	o->ok = true;
	msgpack_sbuffer_init(&o->value);
}

void cc_outcome_reset(struct cc_outcome *o)
{
	msgpack_sbuffer_destroy(&o->value);
	free(o->value_type);
	free(o->type);
	free(o->message);
	free(o->traceback);
	cc_outcome_init(o);
}

/* The last occurrence of needle in hay, or NULL. */
static const char *last_of(const char *hay, const char *needle)
{
	const char *hit = NULL;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		hit = p;
	return hit;
}

void cc_outcome_set_message(struct cc_outcome *o, const char *message)
{
	char *msg = strdup(message), *line = NULL, *tb = NULL;
	const char *type = o->type ? o->type : "", *old = o->message ? o->message : "";

	if (!msg)
		return;
	if (o->traceback && asprintf(&line, "%s: %s", type, old) >= 0) {
		const char *at = last_of(o->traceback, line);
		if (at && asprintf(&tb, "%.*s%s: %s%s", (int)(at - o->traceback), o->traceback,
				   type, message, at + strlen(line)) < 0)
			tb = NULL;
		free(line);
	}
	free(o->message);
	o->message = msg;
	if (tb) {
		free(o->traceback);
		o->traceback = tb;
	}
}

void cc_outcome_append(struct cc_outcome *o, const char *text)
{
	char *msg = NULL, *tb = NULL;

	if (asprintf(&msg, "%s%s", o->message ? o->message : "", text) < 0)
		return;
	if (o->traceback) {
		size_t n = strlen(o->traceback);
		bool nl = n && o->traceback[n - 1] == '\n';
		if (asprintf(&tb, "%.*s%s%s", (int)(n - nl), o->traceback, text, nl ? "\n" : "") <
		    0)
			tb = NULL;
	}
	free(o->message);
	o->message = msg;
	if (tb) {
		free(o->traceback);
		o->traceback = tb;
	}
}
