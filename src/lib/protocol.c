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
 *   result {t, id:int, ok:true, value:any}
 *        | {t, id:int, ok:false, error:{kind, type, message, traceback: str}}
 *   call   {t, id:int, call:int > 0, name:str, args:array[, kwargs:map]}
 *          (kwargs, when present, is a non-empty map: keyword arguments)
 * Unknown or missing fields, wrong types and kinds a worker may not report
 * are protocol violations. Strings were already checked for UTF-8 and the
 * value for depth and size caps by the decoder. */
#include <string.h>

#include "error.h"
#include "frame.h"
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
static const struct field result_ok_fields[] = {
	{ "t", CC_VALUE_STRING },
	{ "id", CC_VALUE_INT },
	{ "ok", CC_VALUE_BOOL },
	{ "value", CC_VALUE_NULL },
	{ NULL, 0 },
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

/* m must hold exactly the listed fields, each of its type. */
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

static int parse_fields(struct cc_msg *m, cc_error *err)
{
	const cc_value *root = m->root;
	if (cc_value_type_of(root) != CC_VALUE_MAP)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "message is not a map");
	const cc_value *t = cc_value_map_get(root, "t", NULL);
	if (is(t, "ready")) {
		m->what = CC_MSG_READY;
		if (ready_skipped(root, &m->preload_skipped, err) < 0 ||
		    check_fields_opt(root, ready_fields, "ready", m->preload_skipped ? 1 : 0, err) <
			    0)
			return -1;
		m->engine = cc_value_map_get(root, "engine", NULL);
		m->version = cc_value_map_get(root, "version", NULL);
		m->applied = cc_value_map_get(root, "applied", NULL);
		m->missing = cc_value_map_get(root, "missing", NULL);
		m->landlock_abi = cc_value_map_get(root, "landlock_abi", NULL)->u.i;
		m->seccomp_allowed = cc_value_map_get(root, "seccomp_allowed", NULL)->u.i;
		return 0;
	}
	if (is(t, "fail")) {
		m->what = CC_MSG_FAIL;
		if (check_fields(root, fail_fields, "fail", err) < 0)
			return -1;
		const cc_value *k = cc_value_map_get(root, "kind", NULL);
		int kind = cc_error_kind_from_name(k->u.str.ptr, k->u.str.len);
		if (!worker_fail_kind(kind))
			return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
				       "fail message with kind '%s'", k->u.str.ptr);
		m->kind = (cc_error_kind)kind;
		m->message = cc_value_map_get(root, "message", NULL);
		return 0;
	}
	if (is(t, "out")) {
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
	if (is(t, "result")) {
		m->what = CC_MSG_RESULT;
		const cc_value *ok = cc_value_map_get(root, "ok", NULL);
		if (cc_value_type_of(ok) != CC_VALUE_BOOL)
			return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
				       "result message without 'ok'");
		m->ok = ok->u.b;
		if (check_fields(root, m->ok ? result_ok_fields : result_err_fields, "result",
				 err) < 0)
			return -1;
		m->id = (uint64_t)cc_value_map_get(root, "id", NULL)->u.i;
		if (m->ok) {
			/* Steal the value out of the tree: it can be large. */
			for (size_t i = 0; i < root->u.map.len; i++)
				if (!strcmp(root->u.map.keys[i], "value")) {
					m->value = root->u.map.vals[i];
					root->u.map.vals[i] = NULL;
				}
			m->kind = CC_OK;
			return 0;
		}
		const cc_value *e = cc_value_map_get(root, "error", NULL);
		if (check_fields(e, error_fields, "result error", err) < 0)
			return -1;
		const cc_value *k = cc_value_map_get(e, "kind", NULL);
		int kind = cc_error_kind_from_name(k->u.str.ptr, k->u.str.len);
		if (!worker_eval_kind(kind))
			return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
				       "result error with kind '%s'", k->u.str.ptr);
		m->kind = (cc_error_kind)kind;
		m->etype = cc_value_map_get(e, "type", NULL);
		m->message = cc_value_map_get(e, "message", NULL);
		m->traceback = cc_value_map_get(e, "traceback", NULL);
		return 0;
	}
	if (is(t, "call")) {
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
			return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "call id %lld",
				       (long long)call);
		m->call = (uint64_t)call;
		m->tool = cc_value_map_get(root, "name", NULL);
		m->args = cc_value_map_get(root, "args", NULL);
		return 0;
	}
	return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "unknown message type");
}

int cc_msg_parse(const char *buf, size_t len, uint64_t max_result, struct cc_msg *m, cc_error *err)
{
	memset(m, 0, sizeof(*m));
	cc_value_caps caps = cc_value_frame_caps(max_result);
	if (cc_value_decode_all(buf, len, &m->root, &caps, err) < 0)
		return -1;
	if (parse_fields(m, err) < 0) {
		cc_msg_free(m);
		return -1;
	}
	return 0;
}

void cc_msg_free(struct cc_msg *m)
{
	cc_value_free(m->root);
	cc_value_free(m->value);
	memset(m, 0, sizeof(*m));
}
