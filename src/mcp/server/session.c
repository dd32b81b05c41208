/* A session's runtimes and its tools/calls: one runtime per language,
 * started on first use and kept across calls (state persists like a
 * notebook), replaced on the next call after it ended (crash, kill on
 * timeout, cancellation, idle reaping, reset: true), with a note saying so
 * in that call's result. Cancellation interrupts the running eval. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "files.h"
#include "inputs.h"
#include "mcp_deps.h"
#include "metrics.h"
#include "pools.h"
#include "session.h"
#include "upstream.h"

bool mcp_queued_method(const char *method)
{
	return !strcmp(method, "tools/call") || !strcmp(method, "resources/list") ||
	       !strcmp(method, "resources/read");
}

struct mcp_call *mcp_call_begin(struct mcp_session *s, struct jsonrpc_msg *m)
{
	if (m->kind != JSONRPC_REQUEST || !mcp_queued_method(m->method))
		return NULL;
	struct mcp_call *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->msg = *m;
	memset(m, 0, sizeof(*m));
	c->id = c->msg.id;
	c->lang = -1;
	c->s = s;
	mcp_session_ref(s);
	pthread_mutex_lock(&s->lock);
	c->next = s->calls;
	s->calls = c;
	s->busy++;
	c->ticket = s->next_ticket++;
	pthread_mutex_unlock(&s->lock);
	return c;
}

static void call_end(struct mcp_call *c)
{
	struct mcp_session *s = c->s;
	pthread_mutex_lock(&s->lock);
	for (struct mcp_call **p = &s->calls; *p; p = &(*p)->next) {
		if (*p == c) {
			*p = c->next;
			break;
		}
	}
	s->busy--;
	clock_gettime(CLOCK_MONOTONIC, &s->last_used);
	pthread_mutex_unlock(&s->lock);
	jsonrpc_msg_clear(&c->msg);
	free(c);
	mcp_session_unref(s);
}

void mcp_session_interrupt_locked(struct mcp_session *s)
{
	for (struct mcp_call *c = s->calls; c; c = c->next) {
		c->aborted = true;
		if (c->running)
			cc_runtime_interrupt(s->rt[c->lang]);
	}
}

void mcp_session_cancel(struct mcp_session *s, const json_t *params)
{
	const json_t *id = json_object_get(params, "requestId");
	if (!id)
		return;
	pthread_mutex_lock(&s->lock);
	for (struct mcp_call *c = s->calls; c; c = c->next) {
		if (!json_equal(c->id, id))
			continue;
		c->cancelled = true;
		if (c->running)
			cc_runtime_interrupt(s->rt[c->lang]);
	}
	pthread_mutex_unlock(&s->lock);
}

static void set_ended(struct mcp_session *s, int lang, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_ended(struct mcp_session *s, int lang, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = cc_vstrprintf(fmt, ap);
	va_end(ap);
	free(s->ended[lang]);
	s->ended[lang] = text;
}

/* s cut to about max bytes for a note: at the last word end outside
 * parentheses before max (or the first after it, when there is none),
 * then "…"; never inside a word or a parenthesis. Whole when short, or
 * when no such point exists. Owned; NULL when out of memory. */
static char *clip(const char *s, size_t max)
{
	size_t n = strlen(s), cut = 0;
	int depth = 0;
	for (size_t i = 0; i < n && n > max; i++) {
		depth += s[i] == '(' ? 1 : s[i] == ')' && depth ? -1 : 0;
		if (s[i] != ' ' || depth)
			continue;
		if (i > max && cut)
			break;
		cut = i;
		if (i > max)
			break;
	}
	while (cut && strchr(" ,;:", s[cut - 1]))
		cut--;
	return cut ? cc_strprintf("%.*s\u2026", (int)cut, s) : strdup(s);
}

void mcp_session_close_runtimes_locked(struct mcp_session *s, const char *why)
{
	for (int i = 0; i < MCP_LANGS; i++) {
		if (!s->rt[i])
			continue;
		cc_runtime_close(s->rt[i]);
		s->rt[i] = NULL;
		set_ended(s, i, "%s", why);
	}
}

/* Check arguments: {code: string, timeout_s?: number > 0, reset?: bool,
 * files?: {path: text | {"$bytes": base64}}, inputs?: {name: tagged
 * JSON}} (inputs are only found here: mcp_inputs_parse checks them).
 * Returns NULL when fine, else the reason. */
static const char *check_args(const json_t *args, const char **code, size_t *len, double *timeout_s,
			      bool *reset, const json_t **files, const json_t **inputs,
			      const json_t **deps)
{
	if (!json_is_object(args))
		return "arguments must be an object {code, timeout_s?, reset?, files?, inputs?, "
		       "dependencies?}";
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)args, key, val)
	{
		if (strcmp(key, "code") && strcmp(key, "timeout_s") && strcmp(key, "reset") &&
		    strcmp(key, "files") && strcmp(key, "inputs") && strcmp(key, "dependencies"))
			return "unknown argument (the arguments are code, timeout_s, reset, files, "
			       "inputs, dependencies)";
	}
	const json_t *dv = json_object_get(args, "dependencies");
	if (dv && !json_is_null(dv)) {
		const char *bad = mcp_deps_check_arg(dv);
		if (bad)
			return bad;
		*deps = dv;
	}
	const json_t *in = json_object_get(args, "inputs");
	if (in && !json_is_null(in))
		*inputs = in;
	const json_t *f = json_object_get(args, "files");
	if (f && !json_is_null(f)) {
		const char *bad = mcp_files_check(f);
		if (bad)
			return bad;
		*files = f;
	}
	json_t *c = json_object_get(args, "code");
	if (!json_is_string(c))
		return "arguments.code must be a string (the program to run)";
	*code = json_string_value(c);
	*len = json_string_length(c);
	json_t *t = json_object_get(args, "timeout_s");
	if (t && !json_is_null(t)) {
		if (!json_is_number(t) || !(json_number_value(t) > 0) ||
		    !isfinite(json_number_value(t)))
			return "arguments.timeout_s must be a number of seconds above 0";
		*timeout_s = json_number_value(t);
	}
	json_t *r = json_object_get(args, "reset");
	if (r && !json_is_null(r)) {
		if (!json_is_boolean(r))
			return "arguments.reset must be true or false";
		*reset = json_is_true(r);
	}
	return NULL;
}

static void emit_text(const struct mcp_sink *sink, char *text)
{
	if (text)
		sink->emit(sink->ctx, text, strlen(text));
	free(text);
}

/* Add to *note (owned): sep and the text, or the text alone when there
 * is no note yet. Out of memory: the note is lost (NULL). */
static void note_add(char **note, const char *sep, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void note_add(char **note, const char *sep, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *more = cc_vstrprintf(fmt, ap);
	va_end(ap);
	char *both = more && *note ? cc_strprintf("%s%s%s", *note, sep, more) : NULL;
	if (!*note) {
		both = more;
		more = NULL;
	}
	free(more);
	free(*note);
	*note = both;
}

/* The session's scratch lives as long as the session: the files of the
 * runtime being reset (old, still alive) go into its successor rt before
 * old is closed; a dead one's are gone, and the note says so. */
static void carry_scratch(struct mcp_server *srv, cc_runtime *old, cc_runtime *rt, int lang,
			  char **note)
{
	const struct mcp_config *cfg = mcp_server_config(srv);
	if (!old || !cfg->scratch_mib)
		return;
	if (!cc_runtime_alive(old)) {
		note_add(note, "; ", "the previous runtime had ended, so its /tmp files are gone");
		return;
	}
	size_t lost = 0;
	int kept = mcp_scratch_carry(old, rt, lang, cfg->scratch_mib << 20, &lost);
	if (kept > 0 || lost > 0)
		note_add(note, "; ", "the files in /tmp were kept (%d)", kept);
	if (lost > 0)
		note_add(note, ", ", "except %zu that could not be copied (over 1 MiB or no room)",
			 lost);
}

/* Make sure s->rt[lang] is a live runtime with the dependencies want (a
 * set, mcp_deps.h; NULL: keep the session's); *note says what happened to
 * the previous one, if anything (owned); *started: it started now. Runs
 * in the session's turn. */
static int ensure_runtime(struct mcp_server *srv, struct mcp_session *s, int lang, bool reset,
			  const char *want, const struct mcp_sink *sink, char **note, bool *started,
			  cc_error *err)
{
	cc_runtime *old = NULL;
	*started = false;
	pthread_mutex_lock(&s->lock);
	cc_runtime *rt = s->rt[lang];
	bool replaced = rt || s->ended[lang];
	/* other packages than the runtime has: a runtime that has them */
	bool other = want && (!s->deps_set[lang] || strcmp(want, s->deps_set[lang]));
	if (rt && (reset || other || !cc_runtime_alive(rt))) {
		old = rt;
		s->rt[lang] = NULL;
		if (!reset && !other && !s->ended[lang])
			set_ended(s, lang, "the worker died");
		if (other && cc_runtime_alive(old))
			reset = true; /* as a reset: its /tmp files are carried over */
	}
	char *use = want ? strdup(want) : s->deps_set[lang] ? strdup(s->deps_set[lang]) : NULL;
	if (other && old) {
		if (asprintf(note,
			     "the %s runtime was started again with the dependencies asked "
			     "for; earlier variables are gone",
			     cc_language_name(mcp_lang_cc(lang))) < 0)
			*note = NULL;
	} else if (reset) {
		if (asprintf(note, "the %s state was reset (reset: true)",
			     cc_language_name(mcp_lang_cc(lang))) < 0)
			*note = NULL;
	} else if (s->ended[lang]) {
		if (asprintf(note, "the previous %s runtime ended (%s); state was reset%s",
			     cc_language_name(mcp_lang_cc(lang)), s->ended[lang],
			     mcp_server_config(srv)->scratch_mib ? " and its /tmp files are gone"
								 : "") < 0)
			*note = NULL;
	}
	free(s->ended[lang]);
	s->ended[lang] = NULL;
	rt = s->rt[lang];
	pthread_mutex_unlock(&s->lock);
	if (!reset) { /* a dead runtime: nothing to carry */
		cc_runtime_close(old);
		old = NULL;
	}
	if (rt) {
		free(use);
		return 0;
	}
	bool pooled = false;
	const char **specs = NULL;
	size_t n_specs = 0;
	int rc = mcp_deps_split(use, &specs, &n_specs) < 0
			 ? cc_fail(err, CC_ERR_INTERNAL, "out of memory")
			 : mcp_runtime_start(srv, lang, specs, n_specs, &rt, &pooled, err);
	if (n_specs)
		free((void *)specs[0]);
	free(specs);
	if (rc < 0) {
		free(use);
		cc_runtime_close(old);
		mcp_log(s, sink, MCP_ERROR, "cannot start the %s runtime: %s",
			cc_language_name(mcp_lang_cc(lang)), cc_error_kind_name(err->kind));
		return -1;
	}
	*started = true;
	mcp_code_idle(rt, mcp_server_config(srv)->n_upstreams); /* before any eval */
	carry_scratch(srv, old, rt, lang, note);
	cc_runtime_close(old);
	mcp_metrics_runtime(mcp_server_metrics(srv), lang, pooled, replaced);
	const cc_sandbox_report *sb = cc_runtime_sandbox(rt);
	mcp_log(s, sink, MCP_INFO, "started the %s runtime%s: %s; sandbox layers: %s",
		cc_language_name(mcp_lang_cc(lang)), pooled ? " (from the pool)" : "",
		cc_runtime_engine_version(rt), sb->applied);
	pthread_mutex_lock(&s->lock);
	s->rt[lang] = rt;
	free(s->deps_set[lang]);
	s->deps_set[lang] = use;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* Guest output while a call runs: each batch of lines the worker sends
 * (cc_runtime_set_output_text_handler) becomes one notifications/message
 * {level: info, logger: stdout|stderr, data: the lines, without the last
 * newline}, unless the client set a level above info, and, when the
 * request carried params._meta.progressToken, one notifications/progress
 * {progressToken, progress: lines so far, message: the last line}.
 * Nothing more once the client cancelled the call. */
struct live {
	struct mcp_call *c;
	const struct mcp_sink *sink;
	const json_t *token; /* borrowed from the request, or NULL */
	bool logs;
	json_int_t lines;
};

static void live_output(void *user, int fd, const char *text, size_t len)
{
	struct live *l = user;
	pthread_mutex_lock(&l->c->s->lock);
	bool cancelled = l->c->cancelled;
	pthread_mutex_unlock(&l->c->s->lock);
	if (cancelled)
		return;
	size_t n = len && text[len - 1] == '\n' ? len - 1 : len;
	for (size_t i = 0; i < len; i++)
		l->lines += text[i] == '\n' || i == len - 1;
	if (l->logs) {
		json_t *p = json_pack("{s:s, s:s, s:s%}", "level", "info", "logger",
				      fd == 1 ? "stdout" : "stderr", "data", text, n);
		emit_text(l->sink, p ? jsonrpc_notification("notifications/message", p) : NULL);
	}
	if (l->token) {
		const char *last = memrchr(text, '\n', n);
		last = last ? last + 1 : text;
		json_t *p = json_pack("{s:O, s:I, s:s%}", "progressToken", l->token, "progress",
				      l->lines, "message", last, (size_t)(text + n - last));
		emit_text(l->sink, p ? jsonrpc_notification("notifications/progress", p) : NULL);
	}
}

static cc_result *eval_live(struct mcp_call *c, cc_runtime *rt, const char *code, size_t len,
			    double timeout_s, const struct mcp_sink *sink)
{
	const json_t *token =
		json_object_get(json_object_get(c->msg.params, "_meta"), "progressToken");
	struct live l = { .c = c, .sink = sink };
	if (json_is_string(token) || json_is_integer(token))
		l.token = token;
	pthread_mutex_lock(&c->s->lock);
	l.logs = !c->s->level_set || c->s->log_level <= MCP_INFO;
	pthread_mutex_unlock(&c->s->lock);
	if (l.logs || l.token)
		cc_runtime_set_output_text_handler(rt, live_output, &l);
	cc_result *r = cc_runtime_eval(rt, code, len, timeout_s);
	cc_runtime_set_output_text_handler(rt, NULL, NULL);
	return r;
}

/* Run the eval of a call on its live runtime, with its files written
 * and its inputs bound first and what it created or changed listed after. *r is the result
 * (NULL with err when no eval ran). */
static void eval_call(struct mcp_server *srv, struct mcp_call *c, const char *code, size_t len,
		      double timeout_s, const json_t *files, const struct mcp_inputs *inputs,
		      cc_result **r, cc_error *err, struct cc_buf *fjson, struct cc_buf *ftext,
		      const struct mcp_sink *sink)
{
	struct mcp_session *s = c->s;
	const struct mcp_config *cfg = mcp_server_config(srv);
	pthread_mutex_lock(&s->lock);
	bool go = !c->cancelled && !c->aborted;
	cc_runtime *rt = s->rt[c->lang];
	pthread_mutex_unlock(&s->lock);
	if (!go)
		return;
	/* The call's budget is in force before any guest code runs: writing
	 * the files makes their folders with evals */
	struct mcp_code_run *run =
		mcp_code_begin(cfg->upstreams, cfg->n_upstreams, cfg->max_tool_calls, rt);
	struct mcp_snapshot *before = mcp_snapshot_take(rt, cfg);
	if ((files && mcp_files_write(rt, c->lang, files, err) < 0) ||
	    mcp_inputs_bind(inputs, rt, err) < 0) {
		mcp_code_end(run, rt);
		mcp_snapshot_free(before);
		return;
	}
	pthread_mutex_lock(&s->lock);
	go = !c->cancelled && !c->aborted;
	c->running = go;
	pthread_mutex_unlock(&s->lock);
	if (go) {
		*r = eval_live(c, rt, code, len, timeout_s, sink);
		if (!*r)
			cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	}
	mcp_code_end(run, rt);
	pthread_mutex_lock(&s->lock);
	c->running = false;
	bool alive = cc_runtime_alive(rt);
	if (!alive) {
		if (c->cancelled || c->aborted)
			set_ended(s, c->lang, "the client cancelled a running call");
		else if (*r) {
			char *why = clip(cc_result_error_message(*r), 200);
			set_ended(s, c->lang, "%s: %s",
				  cc_error_kind_name(cc_result_error_kind(*r)), why ? why : "");
			free(why);
		}
	}
	pthread_mutex_unlock(&s->lock);
	if (alive && *r) {
		struct mcp_snapshot *after = mcp_snapshot_take(rt, cfg);
		mcp_snapshot_diff(before, after, fjson, ftext);
		mcp_snapshot_free(after);
	}
	mcp_snapshot_free(before);
}

/* Is search_tools listed (upstream.h's MCP_UPSTREAM_LIST_MAX)? */
static bool srv_cfg_has_search(struct mcp_server *srv)
{
	const struct mcp_config *cfg = mcp_server_config(srv);
	return cfg->n_upstreams &&
	       mcp_upstreams_tool_count(cfg->upstreams, cfg->n_upstreams) > MCP_UPSTREAM_LIST_MAX;
}

/* Run a tools/call; returns its outcome for the metrics (a cc_error_kind
 * or MCP_OUTCOME_*). */
static int run_tool(struct mcp_server *srv, struct mcp_call *c, const struct mcp_sink *sink)
{
	struct mcp_session *s = c->s;
	const json_t *params = c->msg.params;
	const char *name = json_string_value(json_object_get(params, "name"));
	if (!json_is_object(params) || !name) {
		emit_text(sink,
			  jsonrpc_error(c->id, JSONRPC_INVALID_PARAMS,
					"Invalid params: tools/call needs params.name "
					"(run_python or run_javascript) and params.arguments"));
		return MCP_OUTCOME_INVALID_PARAMS;
	}
	if (!strcmp(name, "search_tools") && srv_cfg_has_search(srv)) {
		const char *bad = NULL;
		char *raw = mcp_search_tools(mcp_server_config(srv),
					     json_object_get(params, "arguments"), &bad);
		emit_text(sink,
			  raw ? jsonrpc_result_raw(c->id, raw, strlen(raw))
			      : jsonrpc_error(c->id, JSONRPC_INVALID_PARAMS, "Invalid params: %s",
					      bad ? bad : "out of memory"));
		free(raw);
		return raw ? CC_OK : MCP_OUTCOME_INVALID_PARAMS;
	}
	if (!strcmp(name, "run_python")) {
		c->lang = MCP_LANG_PY;
	} else if (!strcmp(name, "run_javascript")) {
		c->lang = MCP_LANG_JS;
	} else {
		emit_text(sink,
			  jsonrpc_error(c->id, JSONRPC_INVALID_PARAMS,
					"Invalid params: unknown tool '%.100s' (the tools are "
					"run_python and run_javascript)",
					name));
		return MCP_OUTCOME_INVALID_PARAMS;
	}
	const char *code = NULL;
	size_t len = 0;
	double limit = mcp_server_config(srv)->timeout_s, timeout_s = limit;
	bool reset = false;
	const json_t *files = NULL, *jinputs = NULL, *jdeps = NULL;
	const char *bad = check_args(json_object_get(params, "arguments"), &code, &len, &timeout_s,
				     &reset, &files, &jinputs, &jdeps);
	struct mcp_inputs *inputs = NULL;
	char why[256];
	if (!bad && jinputs && mcp_inputs_parse(jinputs, &inputs, why, sizeof(why)) < 0)
		bad = why;
	if (bad) {
		emit_text(sink,
			  jsonrpc_error(c->id, JSONRPC_INVALID_PARAMS, "Invalid params: %s", bad));
		return MCP_OUTCOME_INVALID_PARAMS;
	}
	double asked = timeout_s;
	if (timeout_s > limit)
		timeout_s = limit;

	char *note = NULL;
	cc_error err = { 0 };
	cc_result *r = NULL;
	struct cc_buf fjson = { 0 }, ftext = { 0 };
	struct mcp_call_deps deps = { 0 };
	bool started = false;
	char *djson = NULL, *dtext = NULL;
	if (mcp_deps_of_call(mcp_server_config(srv), c->lang, jdeps, code, len, &deps, &err) == 0 &&
	    ensure_runtime(srv, s, c->lang, reset, deps.set, sink, &note, &started, &err) == 0) {
		if (asked > limit)
			note_add(&note, "; ",
				 "timeout_s %g s is over the server's limit: capped to %g s "
				 "(codecage mcp --timeout raises the limit)",
				 asked, limit);
		pthread_mutex_lock(&s->lock);
		cc_runtime *rt = s->rt[c->lang];
		pthread_mutex_unlock(&s->lock);
		mcp_deps_result(rt, started, &djson, &dtext);
		eval_call(srv, c, code, len, timeout_s, files, inputs, &r, &err, &fjson, &ftext,
			  sink);
	}
	mcp_call_deps_free(&deps);
	mcp_inputs_free(inputs);
	pthread_mutex_lock(&s->lock);
	bool cancelled = c->cancelled, aborted = c->aborted;
	pthread_mutex_unlock(&s->lock);
	/* A cancelled request gets no response (MCP cancellation). */
	if (aborted && !cancelled) {
		emit_text(sink, jsonrpc_error(c->id, JSONRPC_INTERNAL_ERROR,
					      "Request aborted: the session ended (DELETE, idle "
					      "reaping or server shutdown) while the code ran"));
	} else if (!cancelled) {
		size_t n = 0;
		struct mcp_files_out fo = { .json = fjson.data,
					    .text = ftext.data,
					    .deps_json = djson,
					    .deps_text = dtext };
		char *raw = mcp_render_result(r, &err, note, &fo, &n);
		char *text = raw ? jsonrpc_result_raw(c->id, raw, n) : NULL;
		free(raw);
		if (!text)
			text = jsonrpc_error(c->id, JSONRPC_INTERNAL_ERROR,
					     "Internal error: out of memory rendering the result");
		emit_text(sink, text);
	}
	int outcome = cancelled || aborted ? MCP_OUTCOME_CANCELLED
		      : r		   ? (int)cc_result_error_kind(r)
					   : (int)err.kind;
	cc_result_free(r);
	cc_error_clear(&err);
	cc_buf_free(&fjson);
	cc_buf_free(&ftext);
	free(djson);
	free(dtext);
	free(note);
	return outcome;
}

/* MCP's "resource not found" error code. */
#define MCP_RESOURCE_NOT_FOUND (-32002)

static void run_resources(struct mcp_server *srv, struct mcp_call *c, const struct mcp_sink *sink)
{
	struct mcp_session *s = c->s;
	const struct mcp_config *cfg = mcp_server_config(srv);
	cc_runtime *rt[MCP_LANGS];
	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < MCP_LANGS; i++)
		rt[i] = s->rt[i] && cc_runtime_alive(s->rt[i]) ? s->rt[i] : NULL;
	pthread_mutex_unlock(&s->lock);
	if (!strcmp(c->msg.method, "resources/list")) {
		json_t *res = mcp_resources_list(rt, cfg);
		emit_text(sink, res ? jsonrpc_result(c->id, res)
				    : jsonrpc_error(c->id, JSONRPC_INTERNAL_ERROR,
						    "Internal error: out of memory"));
		return;
	}
	const char *uri = json_string_value(json_object_get(c->msg.params, "uri")), *path = NULL;
	int lang = mcp_resource_lang(uri, &path);
	if (!uri) {
		emit_text(sink, jsonrpc_error(c->id, JSONRPC_INVALID_PARAMS,
					      "Invalid params: resources/read needs params.uri"));
		return;
	}
	if (lang < 0 || !rt[lang]) {
		emit_text(sink, jsonrpc_error(c->id, MCP_RESOURCE_NOT_FOUND,
					      "Resource not found: %.200s (resources/list names "
					      "the files of this session: codecage://python/... "
					      "and codecage://javascript/...)",
					      uri));
		return;
	}
	cc_error err = { 0 };
	json_t *res = mcp_resource_read(rt[lang], uri, path, &err);
	if (res)
		emit_text(sink, jsonrpc_result(c->id, res));
	else
		emit_text(sink,
			  jsonrpc_error(c->id,
					err.kind == CC_ERR_INVALID_INPUT ? MCP_RESOURCE_NOT_FOUND
									 : JSONRPC_INTERNAL_ERROR,
					"Resource not readable: %.200s: %s: %.300s", uri,
					cc_error_kind_name(err.kind),
					err.kind == CC_ERR_INTERNAL ? "internal error"
					: err.message		    ? err.message
								    : ""));
	cc_error_clear(&err);
}

static void run_locked(struct mcp_server *srv, struct mcp_call *c, const struct mcp_sink *sink)
{
	if (!strcmp(c->msg.method, "tools/call")) {
		double t0 = mcp_now();
		int outcome = run_tool(srv, c, sink);
		mcp_metrics_call(mcp_server_metrics(srv), c->lang, outcome, mcp_now() - t0);
	} else
		run_resources(srv, c, sink);
}

void mcp_call_run(struct mcp_server *srv, struct mcp_call *c, const struct mcp_sink *sink)
{
	struct mcp_session *s = c->s;
	pthread_mutex_lock(&s->lock);
	while (s->serving != c->ticket)
		pthread_cond_wait(&s->turn, &s->lock);
	bool skip = c->cancelled;
	pthread_mutex_unlock(&s->lock);
	if (!skip)
		run_locked(srv, c, sink); /* checks c->aborted itself */
	pthread_mutex_lock(&s->lock);
	s->serving++;
	pthread_cond_broadcast(&s->turn);
	pthread_mutex_unlock(&s->lock);
	call_end(c);
}
