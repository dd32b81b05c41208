/* Validation of every frame the worker sends (DESIGN.md section 4).
 *
 * The worker is hostile once guest code has run, so each message must be
 * exactly one of the known shapes:
 *   ready  {t, engine:str, version:str, applied:str, missing:str,
 *           landlock_abi:int, seccomp_allowed:int[,
 *           preload_skipped:array of 1..CC_PRELOAD_SKIPPED_MAX str, each at
 *           most CC_PRELOAD_SKIPPED_LEN bytes: a template's optional
 *           preload modules that did not import, "name: Type: message"]}
 *   fail   {t, kind:str, message:str}
 *   out    {t, id:int, fd:1|2, data:bin of at most CC_OUTPUT_CHUNK bytes}
 *   result {t, id:int, ok:true, value:any[, displays]}
 *        | {t, id:int, ok:false, error:{kind, type, message, traceback: str}
 *           [, displays]}
 *          displays: a non-empty array of at most CC_MAX_DISPLAYS maps, each
 *          non-empty, its keys known MIME types (image/png: bin holding a PNG
 *          signature; the others str), the data of all of them at most
 *          max_result bytes
 *   call   {t, id:int, call:int > 0, name:str, args:array[, kwargs:map]}
 *          (kwargs, when present, is a non-empty map: keyword arguments)
 * A call of the reserved name "__codecage_net" (net.h) is a network
 * request; its arguments are checked by cc_net_req_parse below.
 * Unknown or missing fields, wrong types and kinds a worker may not report
 * are protocol violations. Strings were already checked for UTF-8 and the
 * value for depth and size caps by the decoder. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "error.h"
#include "frame.h"
#include "net.h"
#include "supervisor.h"

struct field {
	const char *name;
	cc_value_type type; /* CC_VALUE_NULL = any value */
};

static const struct field ready_fields[] = {
	{ "t", CC_VALUE_STRING },
	{ "engine", CC_VALUE_STRING },
	{ "version", CC_VALUE_STRING },
	{ "applied", CC_VALUE_STRING },
	{ "missing", CC_VALUE_STRING },
	{ "landlock_abi", CC_VALUE_INT },
	{ "seccomp_allowed", CC_VALUE_INT },
	{ NULL, 0 },
};
static const struct field fail_fields[] = {
	{ "t", CC_VALUE_STRING },
	{ "kind", CC_VALUE_STRING },
	{ "message", CC_VALUE_STRING },
	{ NULL, 0 },
};
static const struct field out_fields[] = {
	{ "t", CC_VALUE_STRING },
	{ "id", CC_VALUE_INT },
	{ "fd", CC_VALUE_INT },
	{ "data", CC_VALUE_BYTES },
	{ NULL, 0 },
};
static const struct field wait_fields[] = {
	{ "t", CC_VALUE_STRING },
	{ "id", CC_VALUE_INT },
	{ NULL, 0 },
};
static const struct field result_ok_fields[] = {
	{ "t", CC_VALUE_STRING },
	{ "id", CC_VALUE_INT },
	{ "ok", CC_VALUE_BOOL },
	{ "value", CC_VALUE_NULL },
	{ NULL, 0 },
};
static const struct field result_text_fields[] = {
	{ "t", CC_VALUE_STRING },	   { "id", CC_VALUE_INT },
	{ "ok", CC_VALUE_BOOL },	   { "value", CC_VALUE_STRING },
	{ "value_type", CC_VALUE_STRING }, { NULL, 0 },
};
static const struct field result_err_fields[] = {
	{ "t", CC_VALUE_STRING },
	{ "id", CC_VALUE_INT },
	{ "ok", CC_VALUE_BOOL },
	{ "error", CC_VALUE_MAP },
	{ NULL, 0 },
};
static const struct field call_fields[] = {
	{ "t", CC_VALUE_STRING },    { "id", CC_VALUE_INT },	 { "call", CC_VALUE_INT },
	{ "name", CC_VALUE_STRING }, { "args", CC_VALUE_ARRAY }, { NULL, 0 },
};
static const struct field call_kw_fields[] = {
	{ "t", CC_VALUE_STRING },
	{ "id", CC_VALUE_INT },
	{ "call", CC_VALUE_INT },
	{ "name", CC_VALUE_STRING },
	{ "args", CC_VALUE_ARRAY },
	{ "kwargs", CC_VALUE_MAP },
	{ NULL, 0 },
};
static const struct field error_fields[] = {
	{ "kind", CC_VALUE_STRING },
	{ "type", CC_VALUE_STRING },
	{ "message", CC_VALUE_STRING },
	{ "traceback", CC_VALUE_STRING },
	{ NULL, 0 },
};

/* Fields f, all present with their types, and n_optional other fields
 * the caller checked itself. */
static int check_fields_opt(const cc_value *m, const struct field *f, const char *what,
			    size_t n_optional, cc_error *err)
{
	size_t n = 0;
	for (; f[n].name; n++) {
		bool found = false;
		const cc_value *v = cc_value_map_get(m, f[n].name, &found);
		if (!found)
			return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "%s message lacks '%s'",
				       what, f[n].name);
		if (f[n].type != CC_VALUE_NULL && cc_value_type_of(v) != f[n].type)
			return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
				       "%s message field '%s' has the wrong type", what, f[n].name);
	}
	if (m->u.map.len != n + n_optional)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "%s message has unknown fields",
			       what);
	return 0;
}

static int check_fields(const cc_value *m, const struct field *f, const char *what, cc_error *err)
{
	return check_fields_opt(m, f, what, 0, err);
}

/* ready's optional preload_skipped: NULL when absent. */
static int ready_skipped(const cc_value *root, const cc_value **out, cc_error *err)
{
	bool found = false;
	const cc_value *v = cc_value_map_get(root, "preload_skipped", &found);
	*out = NULL;
	if (!found)
		return 0;
	if (cc_value_type_of(v) != CC_VALUE_ARRAY || v->u.array.len == 0 ||
	    v->u.array.len > CC_PRELOAD_SKIPPED_MAX)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
			       "ready message field 'preload_skipped' is not an array of 1 to %d "
			       "strings",
			       CC_PRELOAD_SKIPPED_MAX);
	for (size_t i = 0; i < v->u.array.len; i++) {
		const cc_value *s = v->u.array.items[i];
		if (cc_value_type_of(s) != CC_VALUE_STRING || s->u.str.len == 0 ||
		    s->u.str.len >= CC_PRELOAD_SKIPPED_LEN || memchr(s->u.str.ptr, 0, s->u.str.len))
			return cc_fail(
				err, CC_ERR_PROTOCOL_VIOLATION,
				"ready message field 'preload_skipped' holds an entry that is "
				"not a string of 1 to %d bytes",
				CC_PRELOAD_SKIPPED_LEN - 1);
	}
	*out = v;
	return 0;
}

static bool is(const cc_value *s, const char *lit)
{
	return s && s->type == CC_VALUE_STRING && strlen(lit) == s->u.str.len &&
	       memcmp(s->u.str.ptr, lit, s->u.str.len) == 0;
}

/* Kinds a worker may report for an eval; the rest are the supervisor's. */
static bool worker_eval_kind(int k)
{
	return k == CC_ERR_GUEST || k == CC_ERR_SYNTAX || k == CC_ERR_TIMEOUT ||
	       k == CC_ERR_MEMORY_LIMIT || k == CC_ERR_OUTPUT_LIMIT;
}

/* Kinds a worker may report when it refuses to start. */
/* Kinds a worker may give for refusing to start (invalid_input: a fork
 * server's preload list named a module that does not import). */
static bool worker_fail_kind(int k)
{
	return k == CC_ERR_SANDBOX_UNAVAILABLE || k == CC_ERR_INTERNAL ||
	       k == CC_ERR_MEMORY_LIMIT || k == CC_ERR_PROTOCOL_VIOLATION ||
	       k == CC_ERR_INVALID_INPUT;
}

static const char *const display_mimes[] = {
	"image/png", "image/svg+xml", "text/html", "text/plain", "application/json",
};

/* One display: a non-empty map of known MIME types to their data. Adds
 * the data's bytes to *bytes. */
static int check_display(const cc_value *d, uint64_t *bytes, cc_error *err)
{
	static const char png[8] = "\x89PNG\r\n\x1a\n";
	size_t nm = sizeof(display_mimes) / sizeof(display_mimes[0]);

	if (cc_value_type_of(d) != CC_VALUE_MAP || !d->u.map.len || d->u.map.len > nm)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
			       "a display is not a map of 1 to %zu MIME types", nm);
	for (size_t i = 0; i < d->u.map.len; i++) {
		const char *k = d->u.map.keys[i];
		const cc_value *v = d->u.map.vals[i];
		size_t j = 0;
		while (j < nm && strcmp(k, display_mimes[j]))
			j++;
		if (j == nm || strlen(k) != d->u.map.key_lens[i])
			return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
				       "a display has an unknown MIME type");
		if (j == 0 ? cc_value_type_of(v) != CC_VALUE_BYTES || v->u.str.len < sizeof(png) ||
				     memcmp(v->u.str.ptr, png, sizeof(png))
			   : cc_value_type_of(v) != CC_VALUE_STRING)
			return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
				       "a display's %s data is not %s", k,
				       j == 0 ? "a PNG file" : "a string");
		*bytes += v->u.str.len;
	}
	return 0;
}

/* The optional "displays" of a result: checked, then stolen into m. */
static int take_displays(struct cc_msg *m, uint64_t max_result, cc_error *err)
{
	cc_value *root = m->root;
	uint64_t bytes = 0;

	for (size_t i = 0; i < root->u.map.len; i++) {
		if (strcmp(root->u.map.keys[i], "displays"))
			continue;
		const cc_value *a = root->u.map.vals[i];
		if (!a->u.array.len || a->u.array.len > CC_MAX_DISPLAYS)
			return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
				       "result message with %zu displays (1 to %d)", a->u.array.len,
				       CC_MAX_DISPLAYS);
		for (size_t j = 0; j < a->u.array.len; j++)
			if (check_display(a->u.array.items[j], &bytes, err) < 0)
				return -1;
		if (bytes > max_result)
			return cc_fail(
				err, CC_ERR_PROTOCOL_VIOLATION,
				"result message with %llu bytes of displays, over max_result",
				(unsigned long long)bytes);
		m->displays = root->u.map.vals[i];
		root->u.map.vals[i] = NULL;
	}
	return 0;
}

static int parse_ready(struct cc_msg *m, const cc_value *root, uint64_t max_result, cc_error *err)
{
	(void)max_result;
	m->what = CC_MSG_READY;
	if (ready_skipped(root, &m->preload_skipped, err) < 0 ||
	    check_fields_opt(root, ready_fields, "ready", m->preload_skipped ? 1 : 0, err) < 0)
		return -1;
	m->engine = cc_value_map_get(root, "engine", NULL);
	m->version = cc_value_map_get(root, "version", NULL);
	m->applied = cc_value_map_get(root, "applied", NULL);
	m->missing = cc_value_map_get(root, "missing", NULL);
	m->landlock_abi = cc_value_map_get(root, "landlock_abi", NULL)->u.i;
	m->seccomp_allowed = cc_value_map_get(root, "seccomp_allowed", NULL)->u.i;
	return 0;
}

static int parse_fail(struct cc_msg *m, const cc_value *root, uint64_t max_result, cc_error *err)
{
	(void)max_result;
	m->what = CC_MSG_FAIL;
	if (check_fields(root, fail_fields, "fail", err) < 0)
		return -1;
	const cc_value *k = cc_value_map_get(root, "kind", NULL);
	int kind = cc_error_kind_from_name(k->u.str.ptr, k->u.str.len);
	if (!worker_fail_kind(kind))
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "fail message with kind '%s'",
			       k->u.str.ptr);
	m->kind = (cc_error_kind)kind;
	m->message = cc_value_map_get(root, "message", NULL);
	return 0;
}

static int parse_out(struct cc_msg *m, const cc_value *root, uint64_t max_result, cc_error *err)
{
	(void)max_result;
	m->what = CC_MSG_OUT;
	if (check_fields(root, out_fields, "out", err) < 0)
		return -1;
	m->id = (uint64_t)cc_value_map_get(root, "id", NULL)->u.i;
	int64_t fd = cc_value_map_get(root, "fd", NULL)->u.i;
	if (fd != 1 && fd != 2)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "out message for fd %lld",
			       (long long)fd);
	m->fd = (int)fd;
	m->data = cc_value_map_get(root, "data", NULL);
	if (m->data->u.str.len > CC_OUTPUT_CHUNK)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
			       "out message of %zu bytes; the worker sends at most %d",
			       m->data->u.str.len, CC_OUTPUT_CHUNK);
	return 0;
}

/* A failed result's "error" map. */
static int result_error(struct cc_msg *m, const cc_value *root, cc_error *err)
{
	const cc_value *e = cc_value_map_get(root, "error", NULL);
	if (check_fields(e, error_fields, "result error", err) < 0)
		return -1;
	const cc_value *k = cc_value_map_get(e, "kind", NULL);
	int kind = cc_error_kind_from_name(k->u.str.ptr, k->u.str.len);
	if (!worker_eval_kind(kind))
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "result error with kind '%s'",
			       k->u.str.ptr);
	m->kind = (cc_error_kind)kind;
	m->etype = cc_value_map_get(e, "type", NULL);
	m->message = cc_value_map_get(e, "message", NULL);
	m->traceback = cc_value_map_get(e, "traceback", NULL);
	return 0;
}

/* A result's fields but its value, displays and error. */
static int result_fields(struct cc_msg *m, const cc_value *root, cc_error *err)
{
	const cc_value *ok = cc_value_map_get(root, "ok", NULL);
	if (cc_value_type_of(ok) != CC_VALUE_BOOL)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "result message without 'ok'");
	m->ok = ok->u.b;
	bool text = m->ok && cc_value_map_get(root, "value_type", NULL);
	bool has_displays = false;
	const cc_value *dv = cc_value_map_get(root, "displays", &has_displays);
	if (has_displays && cc_value_type_of(dv) != CC_VALUE_ARRAY)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
			       "result message field 'displays' has the wrong type");
	if (check_fields_opt(root,
			     text    ? result_text_fields
			     : m->ok ? result_ok_fields
				     : result_err_fields,
			     "result", has_displays ? 1 : 0, err) < 0)
		return -1;
	m->value_type = text ? cc_value_map_get(root, "value_type", NULL) : NULL;
	if (m->value_type &&
	    (m->value_type->u.str.len == 0 || m->value_type->u.str.len > CC_VALUE_TYPE_MAX ||
	     memchr(m->value_type->u.str.ptr, 0, m->value_type->u.str.len)))
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
			       "result message field 'value_type' is empty, over %d bytes "
			       "or holds a NUL",
			       CC_VALUE_TYPE_MAX);
	m->id = (uint64_t)cc_value_map_get(root, "id", NULL)->u.i;
	return 0;
}

static int parse_result(struct cc_msg *m, const cc_value *root, uint64_t max_result, cc_error *err)
{
	m->what = CC_MSG_RESULT;
	if (result_fields(m, root, err) < 0 || take_displays(m, max_result, err) < 0)
		return -1;
	if (!m->ok)
		return result_error(m, root, err);
	/* Steal the value out of the tree: it can be large. */
	for (size_t i = 0; i < root->u.map.len; i++)
		if (!strcmp(root->u.map.keys[i], "value")) {
			m->value = root->u.map.vals[i];
			root->u.map.vals[i] = NULL;
		}
	m->kind = CC_OK;
	return 0;
}

static int parse_wait(struct cc_msg *m, const cc_value *root, uint64_t max_result, cc_error *err)
{
	(void)max_result;
	m->what = CC_MSG_WAIT;
	if (check_fields(root, wait_fields, "wait", err) < 0)
		return -1;
	m->id = (uint64_t)cc_value_map_get(root, "id", NULL)->u.i;
	return 0;
}

static int parse_call(struct cc_msg *m, const cc_value *root, uint64_t max_result, cc_error *err)
{
	(void)max_result;
	m->what = CC_MSG_CALL;
	bool kw = false;
	m->kwargs = cc_value_map_get(root, "kwargs", &kw);
	if (check_fields(root, kw ? call_kw_fields : call_fields, "call", err) < 0)
		return -1;
	if (kw && !m->kwargs->u.map.len)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
			       "call message has an empty 'kwargs' (leave it out)");
	m->id = (uint64_t)cc_value_map_get(root, "id", NULL)->u.i;
	int64_t call = cc_value_map_get(root, "call", NULL)->u.i;
	if (call <= 0)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "call id %lld", (long long)call);
	m->call = (uint64_t)call;
	m->tool = cc_value_map_get(root, "name", NULL);
	m->args = cc_value_map_get(root, "args", NULL);
	return 0;
}

/* One parser per message type "t". root is m->root (the result's parser
 * steals its value and displays out of it). */
static const struct {
	const char *t;
	int (*parse)(struct cc_msg *m, const cc_value *root, uint64_t max_result, cc_error *err);
} parsers[] = {
	{ "ready", parse_ready },   { "fail", parse_fail }, { "out", parse_out },
	{ "result", parse_result }, { "wait", parse_wait }, { "call", parse_call },
};

static int parse_fields(struct cc_msg *m, uint64_t max_result, cc_error *err)
{
	const cc_value *root = m->root;
	if (cc_value_type_of(root) != CC_VALUE_MAP)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "message is not a map");
	const cc_value *t = cc_value_map_get(root, "t", NULL);
	for (size_t i = 0; i < sizeof(parsers) / sizeof(parsers[0]); i++)
		if (is(t, parsers[i].t))
			return parsers[i].parse(m, root, max_result, err);
	return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "unknown message type");
}

int cc_msg_parse(const char *buf, size_t len, uint64_t max_result, struct cc_msg *m, cc_error *err)
{
	memset(m, 0, sizeof(*m));
	cc_value_caps caps = cc_value_frame_caps(max_result);
	if (cc_value_decode_all(buf, len, &m->root, &caps, err) < 0)
		return -1;
	if (parse_fields(m, max_result, err) < 0) {
		cc_msg_free(m);
		return -1;
	}
	return 0;
}

void cc_msg_free(struct cc_msg *m)
{
	cc_value_free(m->root);
	cc_value_free(m->value);
	cc_value_free(m->displays);
	memset(m, 0, sizeof(*m));
}

/* ---- a guest's network request (the arguments of a net call) ---- */

bool cc_net_token(const char *s, size_t n)
{
	static const char extra[] = "!#$%&'*+-.^_`|~";
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && (!s[i] || !strchr(extra, s[i])))
			return false;
	return true;
}

bool cc_net_value_ok(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\r' || s[i] == '\n' || s[i] == '\0')
			return false;
	return true;
}

/* Headers the broker sets itself: a guest's would desynchronise what was
 * checked from what is sent. */
static bool header_reserved(const char *n)
{
	static const char *const r[] = {
		"host",	   "content-length", "transfer-encoding", "connection", "te",
		"upgrade", "expect",	     "keep-alive",	  "trailer"
	};
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (!strcasecmp(n, r[i]))
			return true;
	return !strncasecmp(n, "proxy-", 6);
}

static int req_headers(const cc_value *h, struct cc_net_req *r, char **why)
{
	size_t n = h->u.array.len, total = 0;
	if (n > CC_NET_MAX_HEADERS)
		return *why = cc_strprintf("%zu headers; at most %d", n, CC_NET_MAX_HEADERS), -1;
	r->name = calloc(n + 1, sizeof(char *));
	r->value = calloc(n + 1, sizeof(char *));
	if (!r->name || !r->value)
		return *why = cc_strprintf("out of memory"), -1;
	for (size_t i = 0; i < n; i++) {
		const cc_value *p = h->u.array.items[i];
		if (cc_value_type_of(p) != CC_VALUE_ARRAY || p->u.array.len != 2 ||
		    cc_value_type_of(p->u.array.items[0]) != CC_VALUE_STRING ||
		    cc_value_type_of(p->u.array.items[1]) != CC_VALUE_STRING)
			return *why = cc_strprintf(
				       "header %zu is not a [name, value] pair of strings", i),
			       -1;
		const cc_value *k = p->u.array.items[0], *v = p->u.array.items[1];
		total += k->u.str.len + v->u.str.len;
		if (!cc_net_token(k->u.str.ptr, k->u.str.len))
			return *why = cc_strprintf(
				       "the header name '%.64s' is not an HTTP token (no "
				       "spaces, CR, LF, NUL or separators)",
				       k->u.str.ptr),
			       -1;
		if (!cc_net_value_ok(v->u.str.ptr, v->u.str.len))
			return *why = cc_strprintf(
				       "the value of header '%.64s' has a CR, LF or NUL",
				       k->u.str.ptr),
			       -1;
		if (header_reserved(k->u.str.ptr))
			return *why = cc_strprintf(
				       "the header '%.64s' is set by the host, not the guest",
				       k->u.str.ptr),
			       -1;
		if (total > CC_NET_MAX_HEADER_BYTES)
			return *why = cc_strprintf("the headers are over %d bytes",
						   CC_NET_MAX_HEADER_BYTES),
			       -1;
		r->name[i] = strndup(k->u.str.ptr, k->u.str.len);
		r->value[i] = strndup(v->u.str.ptr, v->u.str.len);
		r->nh = i + 1;
		if (!r->name[i] || !r->value[i])
			return *why = cc_strprintf("out of memory"), -1;
	}
	return 0;
}

static const struct field net_fields[] = {
	{ "method", CC_VALUE_STRING },
	{ "url", CC_VALUE_STRING },
	{ "headers", CC_VALUE_ARRAY },
	{ "body", CC_VALUE_NULL },
	{ NULL, 0 },
};

int cc_net_req_parse(const cc_value *args, uint64_t max_body, struct cc_net_req *r, char **why)
{
	memset(r, 0, sizeof(*r));
	*why = NULL;
	cc_error e = { 0 };
	const cc_value *m = cc_value_type_of(args) == CC_VALUE_ARRAY && args->u.array.len == 1
				    ? args->u.array.items[0]
				    : NULL;
	if (cc_value_type_of(m) != CC_VALUE_MAP || check_fields(m, net_fields, "net", &e) < 0) {
		*why = cc_strprintf("malformed network request: %s",
				    e.message ? e.message : "not one map");
		cc_error_clear(&e);
		return -1;
	}
	const cc_value *meth = cc_value_map_get(m, "method", NULL);
	const cc_value *url = cc_value_map_get(m, "url", NULL);
	const cc_value *body = cc_value_map_get(m, "body", NULL);
	if (meth->u.str.len > 16 || !cc_net_token(meth->u.str.ptr, meth->u.str.len))
		return *why = cc_strprintf("the method is not an HTTP token of at most 16 bytes"),
		       -1;
	for (size_t i = 0; i < meth->u.str.len; i++)
		r->method[i] = (char)toupper((unsigned char)meth->u.str.ptr[i]);
	if (!strcmp(r->method, "CONNECT") || !strcmp(r->method, "TRACE") ||
	    !strcmp(r->method, "TRACK"))
		return *why = cc_strprintf("the method %s is not allowed", r->method), -1;
	if (strlen(url->u.str.ptr) != url->u.str.len)
		return *why = cc_strprintf("the URL has a NUL byte"), -1;
	r->url = strdup(url->u.str.ptr);
	if (!r->url)
		return *why = cc_strprintf("out of memory"), -1;
	if (req_headers(cc_value_map_get(m, "headers", NULL), r, why) < 0)
		return -1;
	cc_value_type bt = cc_value_type_of(body);
	if (bt == CC_VALUE_NULL)
		return 0;
	if (bt != CC_VALUE_BYTES && bt != CC_VALUE_STRING)
		return *why = cc_strprintf("the body is not bytes, a string or null"), -1;
	if (body->u.str.len > max_body)
		return *why = cc_strprintf("the request body of %zu bytes is over the net option "
					   "max_body_bytes (%llu bytes)",
					   body->u.str.len, (unsigned long long)max_body),
		       -1;
	r->body = malloc(body->u.str.len + 1);
	if (!r->body)
		return *why = cc_strprintf("out of memory"), -1;
	memcpy(r->body, body->u.str.ptr, body->u.str.len);
	r->body_len = body->u.str.len;
	return 0;
}

void cc_net_req_free(struct cc_net_req *r)
{
	for (size_t i = 0; i < r->nh; i++) {
		free(r->name[i]);
		free(r->value[i]);
	}
	free(r->name);
	free(r->value);
	free(r->url);
	free(r->body);
	memset(r, 0, sizeof(*r));
}
