/* The MCP client side of code mode (upstream.h): an upstream server over
 * stdio (a child process, newline-delimited JSON-RPC: upstream_pipe.c
 * starts it and writes to it, upstream_read.c reads it) or streamable
 * HTTP (upstream_http.c); starting it, its requests, the guest's calls
 * and their cancellation. An upstream is never trusted (upstream_read.c
 * says how its messages are checked).
 *
 * No thread but the upstream's own writer ever waits on its input, and
 * the eval's thread never waits on the upstream at all: a call to an
 * upstream that is not running, and every HTTP call, is made by a thread
 * of its own, which starts the upstream again first. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "upstream_http.h"
#include "upstream_int.h"
#include "upstream_pipe.h"

const char *mcp_upstream_name(const struct mcp_upstream *u)
{
	return u->name;
}

uint64_t mcp_upstream_max_calls(const struct mcp_upstream *u)
{
	return u->max_calls;
}

void mcp_upstream_set_max_calls(struct mcp_upstream *u, uint64_t max_calls)
{
	u->max_calls = max_calls;
}

const struct mcp_up_tool *mcp_upstream_tools(const struct mcp_upstream *u, size_t *n)
{
	*n = u->n_tools;
	return u->tools;
}

/* ---- the command line ---- */

/* Split s as a shell splits words (quotes, backslashes; no expansion).
 * Returns an owned NULL-terminated vector, or NULL (empty or unbalanced). */
static char **split_words(const char *s)
{
	size_t cap = 8, n = 0;
	char **v = calloc(cap, sizeof(*v));
	char *w = malloc(strlen(s) + 1);
	if (!v || !w)
		goto bad;
	while (*s) {
		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		size_t k = 0;
		while (*s && *s != ' ' && *s != '\t' && *s != '\n') {
			if (*s == '\'') {
				const char *e = strchr(s + 1, '\'');
				if (!e)
					goto bad;
				memcpy(w + k, s + 1, (size_t)(e - s - 1));
				k += (size_t)(e - s - 1);
				s = e + 1;
			} else if (*s == '"') {
				for (s++; *s && *s != '"'; s++) {
					if (*s == '\\' && s[1] && strchr("\"\\$`", s[1]))
						s++;
					w[k++] = *s;
				}
				if (*s != '"')
					goto bad;
				s++;
			} else if (*s == '\\' && s[1]) {
				w[k++] = s[1];
				s += 2;
			} else {
				w[k++] = *s++;
			}
		}
		if (n + 2 > cap) {
			char **nv = realloc(v, (cap *= 2) * sizeof(*v));
			if (!nv)
				goto bad;
			v = nv;
		}
		v[n] = strndup(w, k);
		if (!v[n++])
			goto bad;
		v[n] = NULL;
	}
	free(w);
	if (n)
		return v;
	free(v);
	return NULL;
bad:
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
	free(w);
	return NULL;
}

struct mcp_upstream *mcp_upstream_parse(const char *spec, const char **why)
{
	const char *eq = strchr(spec, '=');
	if (!eq || !cc_identifier_ok(spec, (size_t)(eq - spec)) || eq - spec > 64) {
		*why = "--upstream wants NAME=COMMAND ARG... with NAME an identifier "
		       "([A-Za-z_][A-Za-z0-9_]*, at most 64 characters)";
		return NULL;
	}
	bool http = !strncmp(eq + 1, "http://", 7) || !strncmp(eq + 1, "https://", 8);
	struct mcp_upstream *u = calloc(1, sizeof(*u));
	if (!u || !(u->name = strndup(spec, (size_t)(eq - spec))) ||
	    (http ? !(u->url = strdup(eq + 1)) : !(u->argv = split_words(eq + 1)))) {
		*why = "--upstream NAME=COMMAND: the command is empty or has an unbalanced quote";
		mcp_upstream_free(u);
		return NULL;
	}
	u->max_calls = UINT64_MAX;
	u->next_id = 1;
	u->inited = true;
	pthread_mutex_init(&u->start_lock, NULL);
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->cond, NULL);
	return u;
}

/* ---- sending ---- */

/* Queue text[0..n) for the upstream's stdin (upstream_pipe.c writes it),
 * bounded by cap bytes queued. Caller holds u->lock. Returns 0 or -1 (not
 * running, over cap, its input closed). Never waits. */
static int send_locked(struct mcp_upstream *u, const char *text, size_t n, size_t cap)
{
	return u->alive && u->pipe ? up_pipe_send(u->pipe, text, n, cap) : -1;
}

/* msg as one line of text (owned; *n its length with the newline). */
static char *line_of(const json_t *msg, size_t *n)
{
	char *text = json_dumps(msg, JSON_COMPACT);
	if (!text)
		return NULL;
	*n = strlen(text);
	text[(*n)++] = '\n'; /* json_dumps' terminator becomes the newline */
	return text;
}

int up_send_json(struct mcp_upstream *u, const json_t *msg, size_t cap)
{
	size_t n = 0;
	char *text = line_of(msg, &n);
	if (!text)
		return -1;
	pthread_mutex_lock(&u->lock);
	int rc = send_locked(u, text, n, cap);
	pthread_mutex_unlock(&u->lock);
	free(text);
	return rc;
}

static json_t *request_msg(int64_t id, const char *method, json_t *params)
{
	return json_pack("{s:s, s:I, s:s, s:o}", "jsonrpc", "2.0", "id", (json_int_t)id, "method",
			 method, "params", params ? params : json_object());
}

/* Register a waiter of request() (under u->lock). */
static struct up_pending *add_waiter(struct mcp_upstream *u)
{
	struct up_pending *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->id = u->next_id++;
	p->up = u;
	p->next = u->pending;
	u->pending = p;
	return p;
}

/* Unlink p if still pending (under u->lock). Returns whether it was.
 * Only for an entry the caller owns (a waiter's): see up_pending. */
static bool take_pending(struct mcp_upstream *u, struct up_pending *p)
{
	for (struct up_pending **q = &u->pending; *q; q = &(*q)->next)
		if (*q == p) {
			*q = p->next;
			return true;
		}
	return false;
}

struct up_pending *up_take_id(struct mcp_upstream *u, int64_t id, bool parked_too)
{
	for (struct up_pending **q = &u->pending; *q; q = &(*q)->next)
		if ((*q)->id == id && (parked_too || !(*q)->parked)) {
			struct up_pending *p = *q;
			*q = p->next;
			return p;
		}
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static json_t *http_request(struct mcp_upstream *u, const char *method, json_t *params,
			    double timeout_s, char **why);

/* A synchronous request (initialize, tools/list): the response's result
 * (owned), or NULL with *why (owned). Takes params. */
static json_t *request(struct mcp_upstream *u, const char *method, json_t *params, double timeout_s,
		       char **why)
{
	if (u->url)
		return http_request(u, method, params, timeout_s, why);
	pthread_mutex_lock(&u->lock);
	struct up_pending *p = add_waiter(u);
	pthread_mutex_unlock(&u->lock);
	json_t *msg = p ? request_msg(p->id, method, params) : (json_decref(params), NULL);
	size_t n = 0;
	char *text = msg ? line_of(msg, &n) : NULL;
	json_decref(msg);
	double deadline = now_s() + timeout_s;
	pthread_mutex_lock(&u->lock);
	bool sent = text && send_locked(u, text, n, MCP_UPSTREAM_QUEUE_MAX) == 0;
	free(text);
	while (sent && !p->done && now_s() < deadline) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50 * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&u->cond, &u->lock, &ts);
	}
	if (p && !p->done)
		take_pending(u, p);
	/* why_dead: what fail_all found (done and dead), or a death before
	 * the send (not alive) */
	char *dead = u->why_dead && (!u->alive || (p && p->dead)) ? strdup(u->why_dead) : NULL;
	pthread_mutex_unlock(&u->lock);
	json_t *reply = p ? p->reply : NULL, *res = json_object_get(reply, "result");
	const char *emsg =
		json_string_value(json_object_get(json_object_get(reply, "error"), "message"));
	int r;
	if (!p)
		r = -1;
	else if (!sent && dead) /* before the send: the same to the user */
		r = asprintf(why, "it %s during %s", dead, method);
	else if (!sent)
		r = asprintf(why, "cannot send %s (it is not reading its input)", method);
	else if (!p->done)
		r = asprintf(why, "no answer to %s within %.0f s", method, timeout_s);
	else if (p->dead)
		r = asprintf(why, "it %s during %s", dead ? dead : "exited", method);
	else if (p->why)
		r = asprintf(why, "its answer to %s %s", method, p->why);
	else if (!json_is_object(res))
		r = asprintf(why, "%s failed: %.300s", method, emsg ? emsg : "no result object");
	else
		r = 0, *why = NULL, json_incref(res);
	if (r < 0)
		*why = NULL;
	free(dead);
	free(p);
	json_decref(reply);
	return *why || r < 0 ? NULL : res;
}

/* ---- streamable HTTP (upstream_http.c moves the bytes) ---- */

/* POST msg with the current session id; a 404 (the session is gone) or a
 * failure to connect marks the upstream dead, so the next call starts
 * again with initialize. */
static int http_post(struct mcp_upstream *u, const json_t *msg, json_t **reply, double timeout_s,
		     const volatile int *cancel, char **why)
{
	pthread_mutex_lock(&u->lock);
	char *session = u->session ? strdup(u->session) : NULL;
	pthread_mutex_unlock(&u->lock);
	int status = 0;
	int rc = mcp_up_http_post(u->url, &session, msg, reply, timeout_s, cancel, &status, why);
	pthread_mutex_lock(&u->lock);
	if (rc == 0 && session && (!u->session || strcmp(u->session, session))) {
		free(u->session);
		u->session = session;
		session = NULL;
	}
	if (rc < 0 && (status == 404 || status == 0) && !(cancel && *cancel))
		u->alive = false;
	pthread_mutex_unlock(&u->lock);
	free(session);
	return rc;
}

static void http_notify(struct mcp_upstream *u, const json_t *note)
{
	json_t *reply = NULL;
	char *why = NULL;
	http_post(u, note, &reply, 10, NULL, &why);
	json_decref(reply);
	free(why);
}

static json_t *http_request(struct mcp_upstream *u, const char *method, json_t *params,
			    double timeout_s, char **why)
{
	pthread_mutex_lock(&u->lock);
	int64_t id = u->next_id++;
	pthread_mutex_unlock(&u->lock);
	json_t *msg = request_msg(id, method, params), *reply = NULL;
	if (!msg || http_post(u, msg, &reply, timeout_s, NULL, why) < 0) {
		json_decref(msg);
		return NULL;
	}
	json_decref(msg);
	json_t *res = json_incref(json_object_get(reply, "result"));
	if (!json_is_object(res)) {
		const char *m = json_string_value(
			json_object_get(json_object_get(reply, "error"), "message"));
		if (asprintf(why, "%s failed: %.300s", method, m ? m : "no result object") < 0)
			*why = NULL;
		json_decref(res);
		res = NULL;
	}
	json_decref(reply);
	return res;
}

/* ---- calls on threads of their own ---- */

/* Run fn(arg) on a detached thread that mcp_upstream_free waits for (it
 * ends with job_done). Returns 0, or -1 (no thread: nothing ran). */
static int run_job(struct mcp_upstream *u, void *(*fn)(void *), void *arg)
{
	pthread_mutex_lock(&u->lock);
	u->jobs++;
	pthread_mutex_unlock(&u->lock);
	pthread_t th;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	int rc = pthread_create(&th, &at, fn, arg);
	pthread_attr_destroy(&at);
	if (rc == 0)
		return 0;
	pthread_mutex_lock(&u->lock);
	u->jobs--;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	return -1;
}

static void job_done(struct mcp_upstream *u)
{
	pthread_mutex_lock(&u->lock);
	u->jobs--;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
}

static bool alive(struct mcp_upstream *u)
{
	pthread_mutex_lock(&u->lock);
	bool a = u->alive;
	pthread_mutex_unlock(&u->lock);
	return a;
}

/* One tools/call over HTTP, on its own thread: it starts the upstream
 * again first when it is not running. The eval's end sets cancel (the
 * POST stops; the answer, dropped, still frees the call). */
struct http_job {
	struct mcp_upstream *u;
	const struct mcp_up_tool *t;
	json_t *input; /* owned reference */
	cc_tool_call *call;
	volatile int cancel;
};

/* Only in tests/meson.build's cc-mcp-slowcancel: each cancel hook takes
 * its time first, so an upstream's answer lands while it runs (the race
 * of tests/mcp/test_upstream_lifecycle.py, made wide). */
static void test_cancel_delay(void)
{
#ifdef CC_MCP_TEST_CANCEL_DELAY_MS
	struct timespec ts = { 0, CC_MCP_TEST_CANCEL_DELAY_MS * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
#endif
}

static void http_cancel(void *data)
{
	struct http_job *j = data; /* valid while this runs: see up_pending */
	test_cancel_delay();
	__atomic_store_n(&j->cancel, 1, __ATOMIC_RELEASE);
}

static void *http_job_main(void *arg)
{
	struct http_job *j = arg;
	struct mcp_upstream *u = j->u;
	json_t *reply = NULL, *msg = NULL;
	char *why = NULL;
	int rc = alive(u) ? 0 : mcp_upstream_start(u, &why);
	if (rc < 0) {
		cc_tool_call_fail(j->call, "UpstreamError",
				  "%s (it is tried again on the next call)",
				  why ? why : "cannot start");
	} else if (__atomic_load_n(&j->cancel, __ATOMIC_ACQUIRE)) {
		cc_tool_call_fail(j->call, "UpstreamError", "cancelled: the eval ended");
	} else {
		pthread_mutex_lock(&u->lock);
		int64_t id = u->next_id++;
		pthread_mutex_unlock(&u->lock);
		msg = request_msg(
			id, "tools/call",
			json_pack("{s:s, s:O}", "name", j->t->name, "arguments", j->input));
		if (!msg || http_post(u, msg, &reply, 0, &j->cancel, &why) < 0)
			cc_tool_call_fail(j->call, "UpstreamError",
					  "upstream %s: %s; it is restarted on the next call",
					  u->name, why ? why : "the request failed");
		else
			up_answer(u, j->call, reply);
	}
	json_decref(reply);
	json_decref(msg);
	json_decref(j->input);
	free(why);
	free(j); /* the call is answered: http_cancel is done with j */
	job_done(u);
	return NULL;
}

static void http_call(const struct mcp_up_tool *t, json_t *input, cc_tool_call *call)
{
	struct mcp_upstream *u = t->up;
	struct http_job *j = calloc(1, sizeof(*j));
	if (j) {
		*j = (struct http_job){ .u = u, .t = t, .input = json_incref(input), .call = call };
		cc_tool_call_on_cancel(call, http_cancel, j);
		if (run_job(u, http_job_main, j) == 0)
			return;
		cc_tool_call_on_cancel(call, NULL, NULL);
		json_decref(j->input);
		free(j);
	}
	cc_tool_call_fail(call, "UpstreamError", "upstream %s: cannot start a request thread",
			  u->name);
}

/* ---- the process ---- */

static void stop(struct mcp_upstream *u)
{
	pthread_mutex_lock(&u->lock);
	if (u->url) {
		u->alive = false;
		free(u->session);
		u->session = NULL;
	}
	bool have = u->have_reader;
	u->have_reader = false;
	struct up_pipe *pipe = u->pipe;
	if (pipe)
		up_pipe_kill(pipe);
	pthread_mutex_unlock(&u->lock);
	if (have)
		pthread_join(u->reader, NULL); /* it reaps the process, fails the rest */
	pthread_mutex_lock(&u->lock);
	u->pipe = NULL; /* no sender holds it now: they do under the lock */
	pthread_mutex_unlock(&u->lock);
	up_pipe_free(pipe);
}

static int spawn(struct mcp_upstream *u, char **why)
{
	struct up_pipe *pipe = NULL;
	if (up_pipe_start(u->argv, &pipe, why) < 0)
		return -1;
	pthread_mutex_lock(&u->lock);
	u->pipe = pipe;
	u->alive = true;
	pthread_mutex_unlock(&u->lock);
	if (pthread_create(&u->reader, NULL, up_reader_main, u)) {
		up_pipe_reap(pipe);
		pthread_mutex_lock(&u->lock);
		u->pipe = NULL;
		u->alive = false;
		pthread_mutex_unlock(&u->lock);
		up_pipe_free(pipe);
		return asprintf(why, "cannot start a thread"), -1;
	}
	u->have_reader = true;
	return 0;
}

/* A Python keyword, or a name starting "__" (a dunder such as __class__
 * cannot be set on the guest's namespace): it gets a trailing '_', in both
 * guests, so such a tool neither breaks every run_python call nor the
 * stubs. */
static bool needs_suffix(const char *g)
{
	static const char *const kw[] = {
		"False",  "None",   "True",    "and",	   "as",       "assert", "async",
		"await",  "break",  "class",   "continue", "def",      "del",	 "elif",
		"else",	  "except", "finally", "for",	   "from",     "global", "if",
		"import", "in",	    "is",      "lambda",   "nonlocal", "not",	 "or",
		"pass",	  "raise",  "return",  "try",	   "while",    "with",	 "yield",
	};
	if (!strncmp(g, "__", 2))
		return true;
	for (size_t i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
		if (!strcmp(g, kw[i]))
			return true;
	return false;
}

/* "get-weather" -> "get_weather"; a leading digit gets a '_'; "class" ->
 * "class_" and "__class__" -> "__class___" (needs_suffix). */
static char *guest_name(const char *server, const char *tool)
{
	size_t n = strlen(tool);
	if (!n || n > 128)
		return NULL;
	char *g = malloc(strlen(server) + n + 4), *p = g;
	if (!g)
		return NULL;
	p += sprintf(p, "%s.", server);
	if (tool[0] >= '0' && tool[0] <= '9')
		*p++ = '_';
	for (const char *s = tool; *s; s++) {
		char c = *s;
		bool ok =
			(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		*p++ = ok ? c : '_';
	}
	*p = 0;
	if (needs_suffix(strchr(g, '.') + 1))
		strcpy(p, "_");
	return g;
}

/* Keep the listed tools (at most 512; unnamed or clashing ones dropped). */
static void keep_tools(struct mcp_upstream *u, const json_t *list)
{
	size_t i;
	json_t *t;
	json_array_foreach(list, i, t)
	{
		const char *name = json_string_value(json_object_get(t, "name"));
		char *g = name ? guest_name(u->name, name) : NULL;
		bool clash = false;
		for (size_t k = 0; g && k < u->n_tools; k++)
			clash |= !strcmp(u->tools[k].guest, g);
		struct mcp_up_tool *nt = g && !clash && u->n_tools < 512
						 ? realloc(u->tools, (u->n_tools + 1) * sizeof(*nt))
						 : NULL;
		if (!nt) {
			free(g);
			continue;
		}
		u->tools = nt;
		u->tools[u->n_tools++] =
			(struct mcp_up_tool){ u, g, strdup(name), json_incref((json_t *)t) };
	}
}

int mcp_upstream_start(struct mcp_upstream *u, char **why)
{
	*why = NULL;
	pthread_mutex_lock(&u->start_lock);
	pthread_mutex_lock(&u->lock);
	bool alive = u->alive;
	pthread_mutex_unlock(&u->lock);
	int rc = 0;
	if (alive)
		goto out;
	stop(u);
	rc = -1;
	if (u->url) {
		pthread_mutex_lock(&u->lock);
		u->alive = true; /* until a request fails */
		pthread_mutex_unlock(&u->lock);
	} else if (spawn(u, why) < 0) {
		goto out;
	}
	json_t *init =
		request(u, "initialize",
			json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion", "2025-06-18",
				  "capabilities", "clientInfo", "name", "codecage", "version", "1"),
			MCP_UPSTREAM_START_S, why);
	if (!init)
		goto out;
	json_decref(init);
	json_t *note =
		json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", "notifications/initialized");
	if (u->url)
		http_notify(u, note);
	else
		up_send_json(u, note, MCP_UPSTREAM_QUEUE_MAX);
	json_decref(note);
	json_t *cursor = NULL;
	for (int page = 0; !u->listed && page < 16; page++) {
		json_t *params = cursor ? json_pack("{s:O}", "cursor", cursor) : json_object();
		json_t *res = request(u, "tools/list", params, MCP_UPSTREAM_START_S, why);
		json_decref(cursor);
		cursor = NULL;
		if (!res)
			goto out;
		keep_tools(u, json_object_get(res, "tools"));
		cursor = json_incref(json_object_get(res, "nextCursor"));
		json_decref(res);
		if (!json_is_string(cursor))
			break;
	}
	json_decref(cursor);
	u->listed = true;
	rc = 0;
out:
	if (rc < 0) {
		char *w = NULL;
		if (asprintf(&w, "upstream %s: %s", u->name, *why ? *why : "out of memory") < 0)
			w = NULL;
		free(*why);
		*why = w;
		stop(u);
	}
	pthread_mutex_unlock(&u->start_lock);
	return rc;
}

/* The eval ended before the upstream answered: stop waiting and tell the
 * upstream (notifications/cancelled; dropped when its input is full). */
static void on_cancel(void *data)
{
	struct up_pending *p = data; /* valid while this runs: see up_pending */
	test_cancel_delay();
	struct mcp_upstream *u = p->up;
	int64_t id = p->id;
	json_t *n = json_pack("{s:s, s:s, s:{s:I, s:s}}", "jsonrpc", "2.0", "method",
			      "notifications/cancelled", "params", "requestId", (json_int_t)id,
			      "reason", "the guest's eval ended");
	size_t len = 0;
	char *text = n ? line_of(n, &len) : NULL;
	json_decref(n);
	pthread_mutex_lock(&u->lock);
	struct up_pending *mine = up_take_id(u, id, true);
	if (mine && text)
		send_locked(u, text, len, MCP_UPSTREAM_QUEUE_MAX);
	pthread_mutex_unlock(&u->lock);
	free(text);
	if (!mine)
		return; /* answered meanwhile: its answerer frees it */
	cc_tool_call_fail(mine->call, "UpstreamError", "cancelled: the eval ended");
	free(mine);
}

/* Queue the tools/call of entry id, if it is still pending. Returns 0
 * (queued, or no longer pending: someone else answered it) or -1. */
static int send_call(struct mcp_upstream *u, int64_t id, const struct mcp_up_tool *t, json_t *input)
{
	json_t *msg = request_msg(id, "tools/call",
				  json_pack("{s:s, s:O}", "name", t->name, "arguments", input));
	size_t n = 0;
	char *text = msg ? line_of(msg, &n) : NULL;
	json_decref(msg);
	pthread_mutex_lock(&u->lock);
	struct up_pending *p = u->pending;
	while (p && p->id != id)
		p = p->next;
	if (p)
		p->parked = false; /* sent now: the instance answers, or fails it */
	int rc = !p ? 0 : text ? send_locked(u, text, n, MCP_UPSTREAM_QUEUE_MAX) : -1;
	pthread_mutex_unlock(&u->lock);
	free(text);
	return rc;
}

/* Fail entry id's call, if it is still pending: with why (static text),
 * or with NULL why it is not taking input (it died, its queue is full,
 * it closed its stdin). */
static void fail_id(struct mcp_upstream *u, int64_t id, const char *why)
{
	pthread_mutex_lock(&u->lock);
	struct up_pending *p = up_take_id(u, id, true);
	size_t queued = u->pipe ? up_pipe_queued(u->pipe) : 0;
	char *dead = !u->alive && u->why_dead ? strdup(u->why_dead) : NULL;
	pthread_mutex_unlock(&u->lock);
	if (p && why)
		cc_tool_call_fail(p->call, "UpstreamError", "upstream %s: %s", u->name, why);
	else if (p && dead)
		cc_tool_call_fail(p->call, "UpstreamError",
				  "upstream %s %s; it is restarted on the next call", u->name,
				  dead);
	else if (p && queued)
		cc_tool_call_fail(p->call, "UpstreamError",
				  "upstream %s is not reading its input (%zu bytes are waiting for "
				  "it)",
				  u->name, queued);
	else if (p)
		cc_tool_call_fail(p->call, "UpstreamError",
				  "upstream %s closed its input; it is restarted on the next call",
				  u->name);
	free(dead);
	free(p);
}

/* A stdio call to an upstream that is not running: start it, then send. */
struct restart_job {
	struct mcp_upstream *u;
	const struct mcp_up_tool *t;
	json_t *input; /* owned reference */
	int64_t id;    /* its pending entry */
};

static void *restart_main(void *arg)
{
	struct restart_job *j = arg;
	struct mcp_upstream *u = j->u;
	char *why = NULL;
	if (mcp_upstream_start(u, &why) < 0) {
		pthread_mutex_lock(&u->lock);
		struct up_pending *p = up_take_id(u, j->id, true);
		pthread_mutex_unlock(&u->lock);
		if (p)
			cc_tool_call_fail(p->call, "UpstreamError",
					  "%s (it is tried again on the next call)",
					  why ? why : "cannot start");
		free(p);
	} else if (send_call(u, j->id, j->t, j->input) < 0) {
		fail_id(u, j->id, NULL);
	}
	free(why);
	json_decref(j->input);
	free(j);
	job_done(u);
	return NULL;
}

void mcp_upstream_call(const struct mcp_up_tool *t, json_t *input, cc_tool_call *call)
{
	struct mcp_upstream *u = t->up;
	if (u->url) {
		http_call(t, input, call);
		return;
	}
	struct up_pending *p = calloc(1, sizeof(*p));
	if (!p) {
		cc_tool_call_fail(call, "UpstreamError", "upstream %s: out of memory", u->name);
		return;
	}
	p->call = call;
	p->up = u;
	/* Before p is pending: from then on fail_all may answer the call. */
	cc_tool_call_on_cancel(call, on_cancel, p);
	pthread_mutex_lock(&u->lock);
	int64_t id = p->id = u->next_id++;
	p->next = u->pending;
	u->pending = p;
	bool running = u->alive;
	p->parked = !running; /* the restart's own failure answers it, by name */
	pthread_mutex_unlock(&u->lock);
	/* p is no longer ours to touch: only id is */
	if (running) {
		if (send_call(u, id, t, input) < 0)
			fail_id(u, id, NULL);
		return;
	}
	struct restart_job *j = calloc(1, sizeof(*j));
	if (j) {
		*j = (struct restart_job){ .u = u, .t = t, .input = json_incref(input), .id = id };
		if (run_job(u, restart_main, j) == 0)
			return;
		json_decref(j->input);
		free(j);
	}
	fail_id(u, id, "cannot start a thread to start it again");
}

void mcp_upstream_free(struct mcp_upstream *u)
{
	if (!u)
		return;
	if (u->inited) {
		/* HTTP request threads still running use u: their evals ended
		 * (the runtimes are closed first), so their POSTs are stopping */
		pthread_mutex_lock(&u->lock);
		while (u->jobs > 0)
			pthread_cond_wait(&u->cond, &u->lock);
		pthread_mutex_unlock(&u->lock);
		stop(u);
		pthread_mutex_destroy(&u->lock);
		pthread_mutex_destroy(&u->start_lock);
		pthread_cond_destroy(&u->cond);
	}
	for (size_t i = 0; i < u->n_tools; i++) {
		free(u->tools[i].guest);
		free(u->tools[i].name);
		json_decref(u->tools[i].def);
	}
	free(u->tools);
	for (char **a = u->argv; a && *a; a++)
		free(*a);
	free(u->argv);
	free(u->why_dead);
	free(u->url);
	free(u->session);
	free(u->name);
	free(u);
}
