/* The MCP client side of code mode (upstream.h): an upstream server over
 * stdio (a child process, newline-delimited JSON-RPC), its requests and
 * the reader thread that answers the guest's pending calls. An upstream
 * is never trusted: every message is size-capped, parsed by jansson (whose
 * nesting is capped), and converted to a guest value with its own depth
 * cap; anything malformed is dropped. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "upstream_http.h"

extern char **environ;

/* A request waiting for its response: a guest's call, or a waiter of
 * request() (call == NULL). */
struct up_pending {
	int64_t id;
	cc_tool_call *call;
	json_t *reply; /* waiter: the response (owned) once done */
	bool done;
	bool dead; /* the upstream died before answering */
	struct mcp_upstream *up;
	struct up_pending *next;
};

struct mcp_upstream {
	char *name;
	char **argv;   /* owned, NULL-terminated; NULL for HTTP */
	char *url;     /* streamable HTTP: the endpoint (owned), else NULL */
	char *session; /* HTTP: Mcp-Session-Id (owned; under lock) */
	int jobs;      /* HTTP: request threads running (under lock; cond) */
	bool inited;
	uint64_t max_calls;

	pthread_mutex_t start_lock; /* one start at a time */
	pthread_mutex_t lock;	    /* guards everything below */
	pthread_cond_t cond;
	bool alive;
	pid_t pid;
	int in_fd, out_fd; /* its stdin (we write), its stdout (we read) */
	pthread_t reader;
	bool have_reader;
	int64_t next_id;
	struct up_pending *pending;
	char *why_dead; /* owned */

	struct mcp_up_tool *tools;
	size_t n_tools;
	bool listed;
};

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
	u->in_fd = u->out_fd = -1;
	u->next_id = 1;
	u->inited = true;
	pthread_mutex_init(&u->start_lock, NULL);
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->cond, NULL);
	return u;
}

/* ---- sending ---- */

/* Write all of msg and a newline to the upstream's stdin within 5 s
 * (it may stop reading: that must not hold the host). Returns 0 or -1. */
static int send_json(struct mcp_upstream *u, json_t *msg)
{
	char *text = json_dumps(msg, JSON_COMPACT);
	if (!text)
		return -1;
	size_t n = strlen(text);
	text[n] = '\n'; /* json_dumps' terminator becomes the newline */
	pthread_mutex_lock(&u->lock);
	int fd = u->alive ? u->in_fd : -1, rc = fd < 0 ? -1 : 0;
	size_t off = 0;
	while (rc == 0 && off < n + 1) {
		ssize_t w = write(fd, text + off, n + 1 - off);
		if (w > 0) {
			off += (size_t)w;
		} else if (w < 0 && errno == EAGAIN) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			if (poll(&p, 1, 5000) <= 0)
				rc = -1;
		} else if (!(w < 0 && errno == EINTR)) {
			rc = -1;
		}
	}
	pthread_mutex_unlock(&u->lock);
	free(text);
	return rc;
}

static json_t *request_msg(int64_t id, const char *method, json_t *params)
{
	return json_pack("{s:s, s:I, s:s, s:o}", "jsonrpc", "2.0", "id", (json_int_t)id, "method",
			 method, "params", params ? params : json_object());
}

/* Register a pending request (under u->lock). */
static struct up_pending *add_pending(struct mcp_upstream *u, cc_tool_call *call)
{
	struct up_pending *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->id = u->next_id++;
	p->call = call;
	p->up = u;
	p->next = u->pending;
	u->pending = p;
	return p;
}

/* Unlink p if still pending (under u->lock). Returns whether it was. */
static bool take_pending(struct mcp_upstream *u, struct up_pending *p)
{
	for (struct up_pending **q = &u->pending; *q; q = &(*q)->next)
		if (*q == p) {
			*q = p->next;
			return true;
		}
	return false;
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
	struct up_pending *p = add_pending(u, NULL);
	pthread_mutex_unlock(&u->lock);
	json_t *msg = p ? request_msg(p->id, method, params) : NULL;
	if (!p || !msg || send_json(u, msg) < 0) {
		json_decref(msg);
		if (p) {
			pthread_mutex_lock(&u->lock);
			take_pending(u, p);
			pthread_mutex_unlock(&u->lock);
			free(p);
		}
		if (asprintf(why, "cannot send %s (the process is not reading)", method) < 0)
			*why = NULL;
		return NULL;
	}
	json_decref(msg);
	double deadline = now_s() + timeout_s;
	pthread_mutex_lock(&u->lock);
	while (!p->done && now_s() < deadline) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50 * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&u->cond, &u->lock, &ts);
	}
	if (!p->done)
		take_pending(u, p);
	pthread_mutex_unlock(&u->lock);
	json_t *reply = p->reply, *res = json_object_get(reply, "result");
	const char *emsg =
		json_string_value(json_object_get(json_object_get(reply, "error"), "message"));
	int r;
	if (!p->done)
		r = asprintf(why, "no answer to %s within %.0f s", method, timeout_s);
	else if (p->dead)
		r = asprintf(why, "it exited during %s", method);
	else if (!json_is_object(res))
		r = asprintf(why, "%s failed: %.300s", method, emsg ? emsg : "no result object");
	else
		r = 0, *why = NULL, json_incref(res);
	if (r < 0)
		*why = NULL;
	free(p);
	json_decref(reply);
	return *why || r < 0 ? NULL : res;
}

/* ---- answers ---- */

/* Depth-capped JSON to guest value (*out; NULL is null). Returns 0, or
 * -1 when nested deeper than 32 levels or out of memory. */
static int to_value(const json_t *j, int depth, cc_value **out)
{
	*out = NULL;
	if (depth > 32)
		return -1;
	const char *k;
	size_t i;
	json_t *v;
	cc_value *x;
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		if (!(*out = cc_value_new_map()))
			return -1;
		json_object_foreach((json_t *)j, k, v)
		{
			if (to_value(v, depth + 1, &x) < 0 ||
			    cc_value_map_set(*out, k, strlen(k), x) < 0)
				goto fail;
		}
		return 0;
	case JSON_ARRAY:
		if (!(*out = cc_value_new_array()))
			return -1;
		json_array_foreach(j, i, v)
		{
			if (to_value(v, depth + 1, &x) < 0 || cc_value_array_push(*out, x) < 0)
				goto fail;
		}
		return 0;
	case JSON_STRING:
		*out = cc_value_new_string(json_string_value(j), json_string_length(j));
		break;
	case JSON_INTEGER:
		*out = cc_value_new_int(json_integer_value(j));
		break;
	case JSON_REAL:
		*out = cc_value_new_float(json_real_value(j));
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		*out = cc_value_new_bool(json_is_true(j));
		break;
	default:
		return 0;
	}
	return *out ? 0 : -1;
fail:
	cc_value_free(*out);
	*out = NULL;
	return -1;
}

/* The text blocks of content, joined by newlines (owned). */
static char *content_text(const json_t *content)
{
	struct cc_buf b = { 0 };
	size_t i;
	json_t *blk;
	json_array_foreach(content, i, blk)
	{
		const char *t = json_string_value(json_object_get(blk, "text"));
		if (!t)
			continue;
		if (b.len)
			cc_buf_puts(&b, "\n");
		cc_buf_add(&b, t, json_string_length(json_object_get(blk, "text")));
	}
	cc_buf_puts(&b, "");
	return b.data;
}

/* Answer a guest's call from a tools/call response. */
static void answer(struct mcp_upstream *u, cc_tool_call *call, const json_t *reply)
{
	const json_t *res = json_object_get(reply, "result"), *e = json_object_get(reply, "error");
	if (!json_is_object(res)) {
		const char *m = json_string_value(json_object_get(e, "message"));
		cc_tool_call_fail(call, "UpstreamError", "upstream %s refused the call: %.1000s",
				  u->name, m ? m : "no result");
		return;
	}
	const json_t *sc = json_object_get(res, "structuredContent");
	char *text = content_text(json_object_get(res, "content"));
	if (json_is_true(json_object_get(res, "isError"))) {
		cc_tool_call_fail(call, "UpstreamToolError", "%.4000s", text ? text : "");
		free(text);
		return;
	}
	json_t *parsed = NULL;
	if (!sc && text) {
		parsed = json_loads(text, JSON_DECODE_ANY, NULL);
		sc = parsed;
	}
	cc_value *v = NULL;
	bool ok = true;
	if (sc)
		ok = to_value(sc, 0, &v) == 0;
	else if (text)
		ok = (v = cc_value_new_string(text, strlen(text))) != NULL;
	json_decref(parsed);
	free(text);
	if (ok)
		cc_tool_call_return(call, v);
	else
		cc_tool_call_fail(call, "ToolResultError",
				  "upstream %s returned a value nested deeper than 32 levels",
				  u->name);
}

/* Requests from the upstream: ping is answered, anything else refused. */
static void serve_request(struct mcp_upstream *u, json_t *msg)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *id = json_object_get(msg, "id");
	json_t *r = !strcmp(method, "ping")
			    ? json_pack("{s:s, s:O, s:{}}", "jsonrpc", "2.0", "id", id, "result")
			    : json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id,
					"error", "code", -32601, "message",
					"codecage does not offer this to upstream servers");
	if (r)
		send_json(u, r);
	json_decref(r);
}

static void dispatch(struct mcp_upstream *u, json_t *msg)
{
	if (!json_is_object(msg))
		return;
	if (json_is_string(json_object_get(msg, "method"))) {
		if (json_object_get(msg, "id"))
			serve_request(u, msg);
		return; /* notifications (progress, logging, list_changed): ignored */
	}
	json_t *id = json_object_get(msg, "id");
	if (!json_is_integer(id))
		return;
	pthread_mutex_lock(&u->lock);
	struct up_pending *p = u->pending;
	while (p && p->id != json_integer_value(id))
		p = p->next;
	cc_tool_call *call = p ? p->call : NULL;
	if (p)
		take_pending(u, p);
	if (p && !call) { /* a waiter: request() frees p once woken */
		p->reply = json_incref(msg);
		p->done = true;
		pthread_cond_broadcast(&u->cond);
	}
	pthread_mutex_unlock(&u->lock);
	if (call) {
		answer(u, call, msg);
		free(p);
	}
}

/* Fail everything pending after the upstream died (under no lock). */
static void fail_all(struct mcp_upstream *u, const char *why)
{
	pthread_mutex_lock(&u->lock);
	struct up_pending *p = u->pending;
	u->pending = NULL;
	u->alive = false;
	free(u->why_dead);
	u->why_dead = strdup(why);
	for (struct up_pending *q = p; q; q = q->next)
		if (!q->call)
			q->done = q->dead = true;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	while (p) {
		struct up_pending *next = p->next;
		if (p->call) {
			cc_tool_call_fail(p->call, "UpstreamError",
					  "upstream %s %s; it is restarted on the next call",
					  u->name, why);
			free(p);
		}
		p = next;
	}
}

/* The reader: lines of at most MCP_UPSTREAM_MAX_MESSAGE bytes. */
static void *reader_main(void *arg)
{
	struct mcp_upstream *u = arg;
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	const char *why = "exited";
	bool over = false;
	while (buf && !over) {
		if (len == cap) { /* len <= MAX here: cap grows to 16 MiB at most */
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(u->out_fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		size_t start = 0;
		for (size_t i = len; i < len + (size_t)r && !over; i++) {
			if (buf[i] != '\n')
				continue;
			over = i - start > MCP_UPSTREAM_MAX_MESSAGE;
			json_t *msg = over ? NULL : json_loadb(buf + start, i - start, 0, NULL);
			dispatch(u, msg); /* malformed (NULL) is dropped */
			json_decref(msg);
			start = i + 1;
		}
		len += (size_t)r;
		memmove(buf, buf + start, len - start);
		len -= start;
		over |= len > MCP_UPSTREAM_MAX_MESSAGE;
	}
	if (over)
		why = "sent a message over 8 MiB (it was stopped)";
	free(buf);
	kill(u->pid, SIGKILL);
	int st = 0;
	waitpid(u->pid, &st, 0);
	char text[160];
	if (!strcmp(why, "exited") && WIFEXITED(st))
		snprintf(text, sizeof(text), "exited (status %d)", WEXITSTATUS(st));
	else if (!strcmp(why, "exited") && WIFSIGNALED(st))
		snprintf(text, sizeof(text), "was killed by signal %d", WTERMSIG(st));
	else
		snprintf(text, sizeof(text), "%s", why);
	fail_all(u, text);
	return NULL;
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

/* One tools/call over HTTP, on its own thread; the eval's end sets
 * cancel (the POST stops; the answer, dropped, still frees the call). */
struct http_job {
	struct mcp_upstream *u;
	json_t *msg;
	cc_tool_call *call;
	volatile int cancel;
};

static void http_cancel(void *data)
{
	struct http_job *j = data;
	__atomic_store_n(&j->cancel, 1, __ATOMIC_RELEASE);
}

static void *http_job_main(void *arg)
{
	struct http_job *j = arg;
	json_t *reply = NULL;
	char *why = NULL;
	if (http_post(j->u, j->msg, &reply, 0, &j->cancel, &why) < 0)
		cc_tool_call_fail(j->call, "UpstreamError",
				  "upstream %s: %s; it is restarted on the next call", j->u->name,
				  why ? why : "the request failed");
	else
		answer(j->u, j->call, reply);
	json_decref(reply);
	json_decref(j->msg);
	free(why);
	struct mcp_upstream *u = j->u;
	free(j);
	pthread_mutex_lock(&u->lock);
	u->jobs--;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	return NULL;
}

static void http_call(const struct mcp_up_tool *t, json_t *input, cc_tool_call *call)
{
	struct mcp_upstream *u = t->up;
	struct http_job *j = calloc(1, sizeof(*j));
	pthread_mutex_lock(&u->lock);
	int64_t id = u->next_id++;
	pthread_mutex_unlock(&u->lock);
	if (j)
		j->msg = request_msg(id, "tools/call",
				     json_pack("{s:s, s:O}", "name", t->name, "arguments", input));
	pthread_t th;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (j && j->msg) {
		j->u = u;
		j->call = call;
		cc_tool_call_on_cancel(call, http_cancel, j);
		pthread_mutex_lock(&u->lock);
		u->jobs++;
		pthread_mutex_unlock(&u->lock);
		if (pthread_create(&th, &at, http_job_main, j) == 0) {
			pthread_attr_destroy(&at);
			return;
		}
		pthread_mutex_lock(&u->lock);
		u->jobs--;
		pthread_mutex_unlock(&u->lock);
		cc_tool_call_on_cancel(call, NULL, NULL);
	}
	pthread_attr_destroy(&at);
	if (j)
		json_decref(j->msg);
	free(j);
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
	if (u->pid > 0 && u->alive)
		kill(u->pid, SIGKILL);
	pthread_mutex_unlock(&u->lock);
	if (have)
		pthread_join(u->reader, NULL);
	if (u->in_fd >= 0)
		close(u->in_fd);
	if (u->out_fd >= 0)
		close(u->out_fd);
	u->in_fd = u->out_fd = -1;
	u->pid = 0;
}

static int spawn(struct mcp_upstream *u, char **why)
{
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC) < 0)
		return asprintf(why, "pipe: %s", strerror(errno)), -1;
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in[0]);
		close(in[1]);
		return asprintf(why, "pipe: %s", strerror(errno)), -1;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	pid_t pid = 0;
	int rc = posix_spawnp(&pid, u->argv[0], &fa, NULL, u->argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	close(out[1]);
	if (rc) {
		close(in[1]);
		close(out[0]);
		return asprintf(why, "cannot run '%s': %s", u->argv[0], strerror(rc)), -1;
	}
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	pthread_mutex_lock(&u->lock);
	u->pid = pid;
	u->in_fd = in[1];
	u->out_fd = out[0];
	u->alive = true;
	pthread_mutex_unlock(&u->lock);
	if (pthread_create(&u->reader, NULL, reader_main, u)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		u->alive = false;
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
		send_json(u, note);
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
 * upstream (notifications/cancelled). */
static void on_cancel(void *data)
{
	struct up_pending *p = data;
	struct mcp_upstream *u = p->up;
	pthread_mutex_lock(&u->lock);
	bool mine = take_pending(u, p);
	pthread_mutex_unlock(&u->lock);
	if (!mine)
		return;
	json_t *n = json_pack("{s:s, s:s, s:{s:I, s:s}}", "jsonrpc", "2.0", "method",
			      "notifications/cancelled", "params", "requestId", (json_int_t)p->id,
			      "reason", "the guest's eval ended");
	if (n)
		send_json(u, n);
	json_decref(n);
	cc_tool_call_fail(p->call, "UpstreamError", "cancelled: the eval ended");
	free(p);
}

void mcp_upstream_call(const struct mcp_up_tool *t, json_t *input, cc_tool_call *call)
{
	struct mcp_upstream *u = t->up;
	char *why = NULL;
	if (mcp_upstream_start(u, &why) < 0) {
		cc_tool_call_fail(call, "UpstreamError", "%s (it is tried again on the next call)",
				  why ? why : "cannot start");
		free(why);
		return;
	}
	if (u->url) {
		http_call(t, input, call);
		return;
	}
	pthread_mutex_lock(&u->lock);
	struct up_pending *p = add_pending(u, call);
	pthread_mutex_unlock(&u->lock);
	json_t *msg = p ? request_msg(p->id, "tools/call",
				      json_pack("{s:s, s:O}", "name", t->name, "arguments", input))
			: NULL;
	if (p)
		cc_tool_call_on_cancel(call, on_cancel, p);
	if (!msg || send_json(u, msg) < 0) {
		json_decref(msg);
		pthread_mutex_lock(&u->lock);
		bool mine = !p || take_pending(u, p);
		pthread_mutex_unlock(&u->lock);
		if (mine) {
			cc_tool_call_on_cancel(call, NULL, NULL);
			cc_tool_call_fail(call, "UpstreamError",
					  "upstream %s is not reading its input", u->name);
			free(p);
		}
		return;
	}
	json_decref(msg);
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
