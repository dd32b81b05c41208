/* An upstream's messages and what they answer (upstream_int.h): the
 * reader thread of a stdio upstream, its answers turned into guest values
 * (HTTP answers too), the upstream's own requests (ping) answered, and
 * everything pending failed when it dies. Every message is size-capped
 * and parsed by jansson, whose nesting is capped: a message too deep for
 * it is reported to the request it answers, found by its id without
 * parsing (scan_id); anything else malformed is dropped. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "upstream_int.h"
#include "upstream_pipe.h"

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

void up_answer(struct mcp_upstream *u, cc_tool_call *call, const json_t *reply)
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
		up_send_json(u, r, MCP_UPSTREAM_ANSWERS_MAX); /* dropped beyond it */
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
	struct up_pending *p = up_take_id(u, json_integer_value(id), false);
	cc_tool_call *call = p ? p->call : NULL;
	if (p && !call) { /* a waiter: request() frees p once woken */
		p->reply = json_incref(msg);
		p->done = true;
		pthread_cond_broadcast(&u->cond);
	}
	pthread_mutex_unlock(&u->lock);
	if (call) {
		up_answer(u, call, msg);
		free(p);
	}
}

/* Fail everything pending after the upstream died. Caller holds no lock;
 * the list is taken whole under it (the waiters are request()'s: they are
 * only marked here, and never walked after the unlock). */
static void fail_all(struct mcp_upstream *u, const char *why)
{
	pthread_mutex_lock(&u->lock);
	struct up_pending *p = u->pending, *calls = NULL;
	u->pending = NULL;
	u->alive = false;
	free(u->why_dead);
	u->why_dead = strdup(why);
	while (p) {
		struct up_pending *next = p->next;
		if (p->parked) { /* not sent to this instance: the restart's */
			p->next = u->pending;
			u->pending = p;
		} else if (p->call) {
			p->next = calls;
			calls = p;
		} else {
			p->done = p->dead = true;
		}
		p = next;
	}
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	while (calls) {
		struct up_pending *next = calls->next;
		cc_tool_call_fail(calls->call, "UpstreamError",
				  "upstream %s %s; it is restarted on the next call", u->name, why);
		free(calls);
		calls = next;
	}
}

/* The id of a JSON-RPC message's top-level object, read without parsing
 * it (a message too deep for jansson). Returns 0 with *id when the top
 * level has an integer "id", else -1. Any nesting; strings skipped. */
static int scan_id(const char *s, size_t n, int64_t *id)
{
	int depth = 0;
	bool key = false; /* at depth 1 of the object, the next string is a key */
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '{' || c == '[') {
			key = ++depth == 1 && c == '{';
		} else if (c == '}' || c == ']') {
			depth--;
		} else if (c == ',' && depth == 1) {
			key = true;
		} else if (c == '"') {
			size_t start = ++i;
			while (i < n && s[i] != '"')
				i += s[i] == '\\' ? 2 : 1;
			bool is_id =
				key && depth == 1 && i - start == 2 && !memcmp(s + start, "id", 2);
			key = false;
			if (!is_id)
				continue;
			size_t j = i + 1;
			while (j < n && strchr(" \t\r\n", s[j]))
				j++;
			if (j >= n || s[j] != ':')
				continue;
			for (j++; j < n && strchr(" \t\r\n", s[j]); j++)
				;
			char *end = NULL;
			long long v = j < n ? strtoll(s + j, &end, 10) : 0;
			if (end && end > s + j && (size_t)(end - s) < n &&
			    strchr(" \t\r\n,}", *end)) {
				*id = v;
				return 0;
			}
		}
	}
	return -1;
}

/* A message jansson would not parse for its depth: the request it answers
 * (found by scan_id) learns that, rather than waiting for its deadline. */
static void too_deep(struct mcp_upstream *u, const char *line, size_t n)
{
	int64_t id = 0;
	if (scan_id(line, n, &id) < 0)
		return;
	static const char why[] = MCP_UPSTREAM_TOO_DEEP;
	pthread_mutex_lock(&u->lock);
	struct up_pending *p = up_take_id(u, id, false);
	cc_tool_call *call = p ? p->call : NULL;
	if (p && !call) { /* a waiter: request() frees p once woken */
		p->why = why;
		p->done = true;
		pthread_cond_broadcast(&u->cond);
	}
	pthread_mutex_unlock(&u->lock);
	if (call) {
		cc_tool_call_fail(call, "UpstreamError", "upstream %s: its answer %s", u->name,
				  why);
		free(p);
	}
}

/* One line from the upstream. */
static void on_line(struct mcp_upstream *u, const char *line, size_t n)
{
	json_error_t jerr;
	json_t *msg = json_loadb(line, n, 0, &jerr);
	if (msg)
		dispatch(u, msg);
	else if (json_error_code(&jerr) == json_error_stack_overflow)
		too_deep(u, line, n);
	json_decref(msg); /* other malformed lines are dropped */
}

void *up_reader_main(void *arg)
{
	struct mcp_upstream *u = arg;
	pthread_mutex_lock(&u->lock);
	struct up_pipe *pipe = u->pipe;
	pthread_mutex_unlock(&u->lock);
	int fd = up_pipe_out_fd(pipe);
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
		ssize_t r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		size_t start = 0;
		for (size_t i = len; i < len + (size_t)r && !over; i++) {
			if (buf[i] != '\n')
				continue;
			over = i - start > MCP_UPSTREAM_MAX_MESSAGE;
			if (!over)
				on_line(u, buf + start, i - start);
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
	int st = up_pipe_reap(pipe);
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
