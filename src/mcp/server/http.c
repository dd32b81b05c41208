/* The streamable HTTP transport (MCP 2025-06-18) with libmicrohttpd, one
 * thread per connection, so a long call in one session never blocks
 * another. One endpoint, /mcp:
 *  - POST one JSON-RPC message. A request is answered with application/json,
 *    or, for tools/call when the client accepts it, a text/event-stream
 *    carrying the call's notifications as they happen (guest output, logs,
 *    progress) and then its response (a cancelled call's stream ends
 *    without one). Notifications and
 *    responses get 202 and no body.
 *  - initialize (without Mcp-Session-Id) opens a session; its id comes back
 *    in the Mcp-Session-Id header and must accompany every later request
 *    (400 without it, 404 once the session is gone).
 *  - DELETE ends the session. GET with Accept: text/event-stream opens the
 *    session's server-to-client stream (one at a time, 409 for a second):
 *    the notifications of calls that answered as plain JSON go there, and
 *    a ": keep-alive" comment every 15 s; it ends with the session. A
 *    tools/call's event stream sends one too while the call is silent.
 *  - A connection idle for MCP_HTTP_IDLE_S (60 s) is closed.
 * GET /healthz answers 200 "ok" (no authentication: it tells nothing);
 * GET /metrics the counters in the Prometheus text format (metrics.c).
 * --auth-token-file: every other request needs Authorization: Bearer
 * TOKEN, checked before its body is read (401 and WWW-Authenticate:
 * Bearer otherwise); without a token only a loopback bind is allowed.
 * A Content-Length over --max-request gets 413 before the body is read.
 * DNS rebinding: a request whose Origin is not a loopback origin gets 403;
 * on a loopback bind, so does one whose Host is not a loopback name. */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "auth.h"
#include "buf.h"
#include "events.h"
#include "metrics.h"
#include "server.h"

/* A connection that sends or receives nothing for MCP_HTTP_IDLE_S is
 * closed (before it, one that never sent a request held one of the 1024
 * slots for ever: a lock-out for anyone who can connect, token or not);
 * event streams send a keep-alive every MCP_HTTP_KEEPALIVE_S meanwhile.
 * A call answered as plain JSON is not cut: MHD does not count the time
 * the handler takes. Seconds. */
#define MCP_HTTP_IDLE_S 60
#define MCP_HTTP_KEEPALIVE_S 15

struct http {
	struct mcp_server *srv;
	const struct mcp_config *cfg;
	bool loopback;
	/* tools/calls running on their own thread for an event stream */
	pthread_mutex_t lock;
	pthread_cond_t idle;
	unsigned streams;
};

/* Per-request state: the body, read up to max_request bytes. */
struct req {
	char *body;
	size_t len;
	bool too_large;
};

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned status, const char *type,
			       char *body, const char *session)
{
	struct MHD_Response *r =
		body ? MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE)
		     : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	if (type)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (session)
		MHD_add_response_header(r, "Mcp-Session-Id", session);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, POST, DELETE");
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result respond_error(struct MHD_Connection *conn, unsigned status, int code,
				     const char *msg)
{
	return respond(conn, status, "application/json", jsonrpc_error(NULL, code, "%s", msg),
		       NULL);
}

/* 401 for a request without the right bearer token (RFC 6750). */
static enum MHD_Result respond_unauthorized(struct MHD_Connection *conn, bool had_header)
{
	char *body = jsonrpc_error(NULL, JSONRPC_INVALID_REQUEST,
				   "Unauthorized: send Authorization: Bearer TOKEN with the token "
				   "of the server's --auth-token-file");
	struct MHD_Response *r =
		body ? MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE)
		     : NULL;
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
				had_header ? "Bearer realm=\"codecage\", error=\"invalid_token\""
					   : "Bearer realm=\"codecage\"");
	enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_UNAUTHORIZED, r);
	MHD_destroy_response(r);
	return ret;
}

/* GET /healthz and GET /metrics; other methods get 405. */
static enum MHD_Result do_ops(struct http *h, struct MHD_Connection *conn, const char *url,
			      const char *method)
{
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		struct MHD_Response *r =
			MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
		if (!r)
			return MHD_NO;
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET");
		enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_METHOD_NOT_ALLOWED, r);
		MHD_destroy_response(r);
		return ret;
	}
	if (!strcmp(url, "/healthz"))
		return respond(conn, MHD_HTTP_OK, "text/plain; charset=utf-8", strdup("ok\n"),
			       NULL);
	char *text = mcp_metrics_render(h->srv);
	if (!text)
		return respond_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, JSONRPC_INTERNAL_ERROR,
				     "Internal error: out of memory rendering the metrics");
	return respond(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text, NULL);
}

static bool loopback_name(const char *host, size_t n)
{
	static const char *const names[] = { "localhost", "127.0.0.1", "[::1]" };
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (n == strlen(names[i]) && !strncasecmp(host, names[i], n))
			return true;
	return false;
}

/* "host[:port]" -> is host a loopback name? */
static bool loopback_hostport(const char *s)
{
	const char *end = s[0] == '[' ? strchr(s, ']') : strchr(s, ':');
	size_t n = end ? (size_t)(end - s) + (s[0] == '[') : strlen(s);
	return loopback_name(s, n);
}

/* Origin "scheme://host[:port]": only loopback origins may talk to us. */
static bool origin_ok(const char *origin)
{
	const char *p = strstr(origin, "://");
	if (!p)
		return false;
	return loopback_hostport(p + 3);
}

/* Collects what one request produces: every message as an SSE event, and
 * the response (the message with an id) for application/json. */
struct collect {
	pthread_mutex_t lock;
	struct cc_buf sse;
	char *response;
	struct mcp_events *events; /* not an SSE answer: notifications go here */
};

static void collect_emit(void *ctx, const char *json, size_t len)
{
	struct collect *c = ctx;
	pthread_mutex_lock(&c->lock);
	cc_buf_puts(&c->sse, "event: message\ndata: ");
	cc_buf_add(&c->sse, json, len);
	cc_buf_puts(&c->sse, "\n\n");
	/* Notifications come from jsonrpc_notification() alone, whose text
	 * starts with the method; everything else is the response. */
	static const char notif[] = "{\"jsonrpc\":\"2.0\",\"method\"";
	if (strncmp(json, notif, strlen(notif))) {
		free(c->response);
		c->response = strndup(json, len);
	} else if (c->events) {
		mcp_events_push(c->events, json, len); /* dropped without a GET stream */
	}
	pthread_mutex_unlock(&c->lock);
}

/* A tools/call answered as an event stream that goes out while it runs:
 * the call runs on a thread of its own, its sink appends each message as
 * an event, and MHD's reader (on the connection's thread) sends events as
 * they come, then ends the stream when the call is done. Two references:
 * the thread's and the response's. A client that goes away does not stop
 * the call (MCP: a disconnect is not a cancellation); its events are
 * dropped. */
struct stream {
	struct http *h;
	struct mcp_session *s; /* the thread's reference */
	struct jsonrpc_msg m;
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct cc_buf sse;
	size_t sent; /* bytes of sse the reader has passed on */
	bool done, gone;
	int refs;
};

static void stream_unref(struct stream *st)
{
	pthread_mutex_lock(&st->lock);
	bool last = --st->refs == 0;
	pthread_mutex_unlock(&st->lock);
	if (!last)
		return;
	cc_buf_free(&st->sse);
	pthread_cond_destroy(&st->more);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

static void stream_emit(void *ctx, const char *json, size_t len)
{
	struct stream *st = ctx;
	pthread_mutex_lock(&st->lock);
	if (!st->gone) {
		cc_buf_puts(&st->sse, "event: message\ndata: ");
		cc_buf_add(&st->sse, json, len);
		cc_buf_puts(&st->sse, "\n\n");
		pthread_cond_broadcast(&st->more);
	}
	pthread_mutex_unlock(&st->lock);
}

static void *stream_run(void *arg)
{
	struct stream *st = arg;
	struct http *h = st->h;
	struct mcp_sink sink = { .emit = stream_emit, .ctx = st };
	mcp_handle(h->srv, st->s, &st->m, &sink);
	mcp_session_unref(st->s);
	pthread_mutex_lock(&st->lock);
	st->done = true;
	pthread_cond_broadcast(&st->more);
	pthread_mutex_unlock(&st->lock);
	stream_unref(st);
	pthread_mutex_lock(&h->lock);
	if (--h->streams == 0)
		pthread_cond_broadcast(&h->idle);
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

/* The call's stream, as it comes; after MCP_HTTP_KEEPALIVE_S without
 * any, a ": keep-alive" comment (a silent call must outlive
 * MCP_HTTP_IDLE_S). */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	static const char ka[] = ": keep-alive\n\n";
	struct stream *st = cls;
	(void)pos;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += MCP_HTTP_KEEPALIVE_S;
	pthread_mutex_lock(&st->lock);
	bool idle = false;
	while (st->sent == st->sse.len && !st->done && !idle)
		idle = pthread_cond_timedwait(&st->more, &st->lock, &until) == ETIMEDOUT;
	ssize_t n = MHD_CONTENT_READER_END_OF_STREAM;
	if (st->sent == st->sse.len && !st->done && max >= sizeof(ka) - 1) {
		memcpy(buf, ka, sizeof(ka) - 1);
		n = (ssize_t)(sizeof(ka) - 1);
	} else if (st->sent < st->sse.len) {
		size_t take = st->sse.len - st->sent < max ? st->sse.len - st->sent : max;
		memcpy(buf, st->sse.data + st->sent, take);
		st->sent += take;
		n = (ssize_t)take;
	} else if (st->sse.oom) {
		n = MHD_CONTENT_READER_END_WITH_ERROR;
	}
	pthread_mutex_unlock(&st->lock);
	return n;
}

static void stream_gone(void *cls)
{
	struct stream *st = cls;
	pthread_mutex_lock(&st->lock);
	st->gone = true;
	pthread_mutex_unlock(&st->lock);
	stream_unref(st);
}

/* Start the call in *m (taken) for session s (its reference taken) and
 * queue an event-stream response that follows it. */
static enum MHD_Result stream_call(struct http *h, struct MHD_Connection *conn,
				   struct mcp_session *s, struct jsonrpc_msg *m)
{
	struct stream *st = calloc(1, sizeof(*st));
	struct MHD_Response *r = NULL;
	pthread_t t;
	if (st) {
		*st = (struct stream){ .h = h, .s = s, .m = *m, .refs = 2 };
		pthread_mutex_init(&st->lock, NULL);
		pthread_cond_init(&st->more, NULL);
		r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, stream_read, st,
						      stream_gone);
	}
	pthread_mutex_lock(&h->lock);
	h->streams++;
	pthread_mutex_unlock(&h->lock);
	if (!r || pthread_create(&t, NULL, stream_run, st) != 0) {
		pthread_mutex_lock(&h->lock);
		h->streams--;
		pthread_mutex_unlock(&h->lock);
		if (r)
			MHD_destroy_response(r); /* calls stream_gone */
		else if (st)
			stream_unref(st);
		if (st) {
			memset(m, 0, sizeof(*m));
			jsonrpc_msg_clear(&st->m);
			stream_unref(st);
		} else {
			jsonrpc_msg_clear(m);
		}
		mcp_session_unref(s);
		return respond_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, JSONRPC_INTERNAL_ERROR,
				     "Internal error: cannot start the call (out of memory or "
				     "threads)");
	}
	memset(m, 0, sizeof(*m));
	pthread_detach(t);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static bool accepts_sse(struct MHD_Connection *conn)
{
	const char *a = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept");
	return a && strstr(a, "text/event-stream");
}

static enum MHD_Result respond_too_large(struct http *h, struct MHD_Connection *conn)
{
	char msg[128];
	snprintf(msg, sizeof(msg), "Invalid Request: message over %zu bytes (--max-request)",
		 h->cfg->max_request);
	return respond_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, JSONRPC_INVALID_REQUEST, msg);
}

/* Does the request declare a body over --max-request (Content-Length)?
 * Then it is refused before any of it is read. */
static bool declared_too_large(struct http *h, struct MHD_Connection *conn)
{
	const char *cl =
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (!cl)
		return false;
	char *end = NULL;
	unsigned long long n = strtoull(cl, &end, 10); /* ERANGE: ULLONG_MAX, too large */
	return end != cl && n > h->cfg->max_request;
}

/* A POST the headers already refuse (too large, not JSON, an unknown
 * protocol version): true after answering it in *ret. */
static bool post_refused(struct http *h, struct MHD_Connection *conn, const struct req *rq,
			 enum MHD_Result *ret)
{
	if (rq->too_large) {
		*ret = respond_too_large(h, conn);
		return true;
	}
	const char *ctype = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
	if (!ctype || strncasecmp(ctype, "application/json", 16)) {
		*ret = respond_error(
			conn, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, JSONRPC_INVALID_REQUEST,
			"Invalid Request: POST a JSON-RPC message as application/json");
		return true;
	}
	const char *pv = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "MCP-Protocol-Version");
	if (pv && !mcp_version_find(pv)) {
		*ret = respond_error(conn, MHD_HTTP_BAD_REQUEST, JSONRPC_INVALID_REQUEST,
				     "Invalid Request: unsupported MCP-Protocol-Version (this "
				     "server speaks 2025-06-18, 2025-03-26, 2024-11-05)");
		return true;
	}
	return false;
}

/* The message's session: a new one for an initialize without
 * Mcp-Session-Id, else the one it names. NULL after answering (and
 * clearing m) in *ret. */
static struct mcp_session *post_session(struct http *h, struct MHD_Connection *conn,
					struct jsonrpc_msg *m, const char *sid, bool init,
					enum MHD_Result *ret)
{
	struct mcp_session *s = NULL;
	char *e = NULL;
	unsigned status = MHD_HTTP_BAD_REQUEST;
	if (init && !sid) {
		if ((s = mcp_session_new(h->srv, true)))
			return s;
		e = jsonrpc_error(m->id, JSONRPC_SERVER_BUSY,
				  "Server busy: %u sessions are open (codecage mcp "
				  "--max-sessions); end one with DELETE or wait for idle "
				  "ones to be reaped",
				  h->cfg->max_sessions);
		status = MHD_HTTP_SERVICE_UNAVAILABLE;
	} else if (!sid) {
		e = jsonrpc_error(m->id, JSONRPC_INVALID_REQUEST,
				  "Bad Request: no Mcp-Session-Id header; send initialize "
				  "first and pass the id it returns");
	} else {
		if ((s = mcp_session_find(h->srv, sid)))
			return s;
		e = jsonrpc_error(m->id, JSONRPC_INVALID_REQUEST,
				  "Session not found: it ended or was reaped after "
				  "being idle; send initialize again");
		status = MHD_HTTP_NOT_FOUND;
	}
	jsonrpc_msg_clear(m);
	*ret = respond(conn, status, "application/json", e, NULL);
	return NULL;
}

/* Answer what mcp_handle collected in c: 202 for a notification, the
 * event stream or JSON of a request, new_sid (a new session's id) or NULL
 * in the header. */
static enum MHD_Result post_answer(struct MHD_Connection *conn, struct collect *c, bool request,
				   bool sse, const char *new_sid)
{
	if (!request)
		return respond(conn, MHD_HTTP_ACCEPTED, NULL, NULL, NULL);
	enum MHD_Result ret;
	if (sse) {
		char *body = c->sse.oom ? NULL : c->sse.data;
		if (!body)
			cc_buf_free(&c->sse);
		ret = respond(conn, MHD_HTTP_OK, "text/event-stream", body, new_sid);
		c->sse.data = NULL;
	} else if (c->response) {
		ret = respond(conn, MHD_HTTP_OK, "application/json", c->response, new_sid);
		c->response = NULL;
	} else {
		/* Cancelled (or its session ended) while it ran. */
		ret = respond(
			conn, MHD_HTTP_OK, "application/json",
			jsonrpc_error(NULL, JSONRPC_INTERNAL_ERROR, "Request cancelled: no result"),
			NULL);
	}
	return ret;
}

static enum MHD_Result do_post(struct http *h, struct MHD_Connection *conn, struct req *rq)
{
	enum MHD_Result ret;
	if (post_refused(h, conn, rq, &ret))
		return ret;
	struct jsonrpc_msg m;
	char *error = NULL;
	if (jsonrpc_parse(rq->body ? rq->body : "", rq->len, &m, &error) < 0)
		return respond(conn, MHD_HTTP_BAD_REQUEST, "application/json", error, NULL);
	const char *sid = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Mcp-Session-Id");
	bool init = m.kind == JSONRPC_REQUEST && !strcmp(m.method, "initialize");
	struct mcp_session *s = post_session(h, conn, &m, sid, init, &ret);
	if (!s)
		return ret;

	bool request = m.kind == JSONRPC_REQUEST;
	bool sse = request && !strcmp(m.method, "tools/call") && accepts_sse(conn);
	if (sse && mcp_session_initialized(s))
		return stream_call(h, conn, s, &m);
	struct collect c = { .sse = { 0 }, .events = sse ? NULL : mcp_session_events(s) };
	pthread_mutex_init(&c.lock, NULL);
	struct mcp_sink sink = { .emit = collect_emit, .ctx = &c };
	mcp_handle(h->srv, s, &m, &sink);

	const char *new_sid = NULL;
	if (init && !sid) {
		if (mcp_session_initialized(s))
			new_sid = mcp_session_id(s);
		else
			mcp_session_close(h->srv, s);
	}
	ret = post_answer(conn, &c, request, sse, new_sid);
	free(c.response);
	cc_buf_free(&c.sse);
	pthread_mutex_destroy(&c.lock);
	mcp_session_unref(s);
	return ret;
}

static enum MHD_Result do_delete(struct http *h, struct MHD_Connection *conn)
{
	const char *sid = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Mcp-Session-Id");
	if (!sid)
		return respond_error(conn, MHD_HTTP_BAD_REQUEST, JSONRPC_INVALID_REQUEST,
				     "Bad Request: DELETE needs the Mcp-Session-Id header");
	struct mcp_session *s = mcp_session_find(h->srv, sid);
	if (!s)
		return respond_error(conn, MHD_HTTP_NOT_FOUND, JSONRPC_INVALID_REQUEST,
				     "Session not found");
	mcp_session_close(h->srv, s);
	mcp_session_unref(s);
	return respond(conn, MHD_HTTP_OK, NULL, NULL, NULL);
}

/* The GET stream's reader: MHD calls it on the connection's own thread,
 * so it may wait. */
struct get_stream {
	struct mcp_session *s; /* a reference */
};

static ssize_t get_stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct get_stream *st = cls;
	long n = mcp_events_read(mcp_session_events(st->s), buf, max, 15.0);
	return n < 0 ? MHD_CONTENT_READER_END_OF_STREAM : (ssize_t)n;
}

static void get_stream_free(void *cls)
{
	struct get_stream *st = cls;
	mcp_events_release(mcp_session_events(st->s));
	mcp_session_unref(st->s);
	free(st);
}

static enum MHD_Result do_get(struct http *h, struct MHD_Connection *conn)
{
	const char *sid = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Mcp-Session-Id");
	if (!accepts_sse(conn))
		return respond_error(conn, MHD_HTTP_NOT_ACCEPTABLE, JSONRPC_INVALID_REQUEST,
				     "Not Acceptable: GET /mcp opens the server-to-client event "
				     "stream; send Accept: text/event-stream");
	if (!sid)
		return respond_error(conn, MHD_HTTP_BAD_REQUEST, JSONRPC_INVALID_REQUEST,
				     "Bad Request: GET needs the Mcp-Session-Id header");
	struct mcp_session *s = mcp_session_find(h->srv, sid);
	if (!s)
		return respond_error(conn, MHD_HTTP_NOT_FOUND, JSONRPC_INVALID_REQUEST,
				     "Session not found");
	if (!mcp_events_open(mcp_session_events(s))) {
		mcp_session_unref(s);
		return respond_error(conn, MHD_HTTP_CONFLICT, JSONRPC_INVALID_REQUEST,
				     "Conflict: this session's event stream is open already (one "
				     "at a time)");
	}
	struct get_stream *st = calloc(1, sizeof(*st));
	struct MHD_Response *r =
		st ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, get_stream_read, st,
						       get_stream_free)
		   : NULL;
	if (!r) {
		mcp_events_release(mcp_session_events(s));
		mcp_session_unref(s);
		free(st);
		return MHD_NO;
	}
	st->s = s;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
			       const char *method, const char *version, const char *upload,
			       size_t *upload_size, void **con_cls)
{
	(void)version;
	struct http *h = cls;
	struct req *rq = *con_cls;
	if (!rq) {
		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		*con_cls = rq;
		/* Before any of the body is read. /healthz is open. */
		const char *auth =
			MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
		if (h->cfg->auth_token && strcmp(url, "/healthz") &&
		    !mcp_auth_ok(auth, h->cfg->auth_token))
			return respond_unauthorized(conn, auth != NULL);
		/* 413 at once, not after reading (and dropping) all of it; no
		 * "100 Continue" goes out either */
		if (declared_too_large(h, conn))
			return respond_too_large(h, conn);
		return MHD_YES;
	}
	if (*upload_size) {
		size_t n = *upload_size;
		*upload_size = 0;
		if (rq->too_large || rq->len + n > h->cfg->max_request) {
			rq->too_large = true; /* keep reading, keep nothing */
			free(rq->body);
			rq->body = NULL;
			return MHD_YES;
		}
		char *nb = realloc(rq->body, rq->len + n + 1);
		if (!nb)
			return MHD_NO;
		memcpy(nb + rq->len, upload, n);
		rq->body = nb;
		rq->len += n;
		rq->body[rq->len] = 0;
		return MHD_YES;
	}

	if (strcmp(url, "/mcp") && strcmp(url, "/healthz") && strcmp(url, "/metrics"))
		return respond_error(conn, MHD_HTTP_NOT_FOUND, JSONRPC_INVALID_REQUEST,
				     "Not found: the MCP endpoint is /mcp (and GET /healthz, GET "
				     "/metrics)");
	const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
	if (origin && !origin_ok(origin))
		return respond_error(conn, MHD_HTTP_FORBIDDEN, JSONRPC_INVALID_REQUEST,
				     "Forbidden: Origin is not a loopback origin");
	const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
	if (h->loopback && host && !loopback_hostport(host))
		return respond_error(conn, MHD_HTTP_FORBIDDEN, JSONRPC_INVALID_REQUEST,
				     "Forbidden: Host is not a loopback name");
	if (strcmp(url, "/mcp"))
		return do_ops(h, conn, url, method);
	if (!strcmp(method, "POST"))
		return do_post(h, conn, rq);
	if (!strcmp(method, "DELETE"))
		return do_delete(h, conn);
	if (!strcmp(method, "GET"))
		return do_get(h, conn);
	return respond_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, JSONRPC_INVALID_REQUEST,
			     "Method not allowed: POST messages, GET the event stream, DELETE "
			     "the session");
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
		      enum MHD_RequestTerminationCode why)
{
	(void)cls, (void)conn, (void)why;
	struct req *rq = *con_cls;
	if (rq) {
		free(rq->body);
		free(rq);
	}
	*con_cls = NULL;
}

/* "HOST:PORT" (HOST may be [v6]) -> a socket address. */
static int resolve(const char *spec, struct sockaddr_storage *ss, bool *loopback)
{
	const char *colon = strrchr(spec, ':');
	if (!colon || !colon[1])
		return -1;
	char host[256];
	size_t n = (size_t)(colon - spec);
	if (n >= sizeof(host))
		return -1;
	memcpy(host, spec, n);
	host[n] = 0;
	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		memmove(host, host + 1, n - 2);
		host[n - 2] = 0;
	}
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	if (getaddrinfo(*host ? host : NULL, colon + 1, &hints, &ai) || !ai)
		return -1;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
		*loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	} else {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
		*loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
	}
	return 0;
}

int mcp_serve_http(struct mcp_server *srv)
{
	struct http h = { .srv = srv,
			  .cfg = mcp_server_config(srv),
			  .lock = PTHREAD_MUTEX_INITIALIZER,
			  .idle = PTHREAD_COND_INITIALIZER };
	struct sockaddr_storage ss;
	if (resolve(h.cfg->http, &ss, &h.loopback) < 0) {
		fprintf(stderr, "codecage mcp: cannot resolve --http '%s' (want HOST:PORT)\n",
			h.cfg->http);
		return 2;
	}
	if (!h.loopback && !h.cfg->auth_token) {
		fprintf(stderr,
			"codecage mcp: refusing to serve %s, a non-loopback address, without "
			"authentication: anyone who reaches it could run code in the sandbox. Pass "
			"--auth-token-file FILE (and put TLS in front: a reverse proxy), or bind "
			"127.0.0.1\n",
			h.cfg->http);
		return 2;
	}
	/* SIGINT/SIGTERM end the server: block them in every thread and wait
	 * for them here. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_ERROR_LOG | (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
	struct MHD_Daemon *d = MHD_start_daemon(
		flags, 0, NULL, NULL, handler, &h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_CONNECTION_LIMIT,
		(unsigned)1024, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)MCP_HTTP_IDLE_S,
		MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "codecage mcp: cannot listen on %s: %s\n", h.cfg->http,
			strerror(errno));
		return 1;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	char host[INET6_ADDRSTRLEN] = "?";
	if (ss.ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host));
	else
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof(host));
	fprintf(stderr, "codecage mcp: listening on http://%s%s%s:%u/mcp\n",
		ss.ss_family == AF_INET6 ? "[" : "", host, ss.ss_family == AF_INET6 ? "]" : "",
		info ? info->port : 0);
	int sig = 0;
	sigwait(&sigs, &sig);
	fprintf(stderr, "codecage mcp: stopping (signal %d)\n", sig);
	mcp_server_interrupt_all(srv);
	MHD_stop_daemon(d);
	/* Streamed calls run on threads of their own: the server outlives them. */
	pthread_mutex_lock(&h.lock);
	while (h.streams)
		pthread_cond_wait(&h.idle, &h.lock);
	pthread_mutex_unlock(&h.lock);
	return 0;
}
