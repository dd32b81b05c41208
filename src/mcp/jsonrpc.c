/* JSON-RPC 2.0 framing (see jsonrpc.h). jansson does the parsing: it
 * rejects invalid UTF-8, \u0000 escapes (no JSON_ALLOW_NUL) and trailing
 * data, and caps nesting, so binary garbage ends as a parse error here. */
#include "jsonrpc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "utf8.h"

const char mcp_latest_version[] = "2025-06-18";

static const char *const supported_versions[] = { "2025-06-18", "2025-03-26", "2024-11-05" };

const char *mcp_version_find(const char *version)
{
	for (size_t i = 0; i < sizeof(supported_versions) / sizeof(*supported_versions); i++)
		if (!strcmp(version, supported_versions[i]))
			return supported_versions[i];
	return NULL;
}

/* JSON-RPC ids are strings or integers (MCP: "MUST NOT be null"). */
static bool valid_id(const json_t *id)
{
	return id && (json_is_string(id) || json_is_integer(id));
}

int jsonrpc_parse(const char *buf, size_t len, struct jsonrpc_msg *m, char **error)
{
	memset(m, 0, sizeof(*m));
	*error = NULL;
	json_error_t jerr;
	json_t *root = json_loadb(buf, len, JSON_DECODE_ANY, &jerr);
	if (!root) {
		*error = jsonrpc_error(NULL, JSONRPC_PARSE_ERROR, "Parse error: %s (at byte %d)",
				       jerr.text, jerr.position);
		return -1;
	}
	if (json_is_array(root)) {
		*error = jsonrpc_error(NULL, JSONRPC_INVALID_REQUEST,
				       "Invalid Request: batches are not supported (MCP 2025-06-18 "
				       "removed JSON-RPC batching); send one message at a time");
		json_decref(root);
		return -1;
	}
	if (!json_is_object(root)) {
		*error = jsonrpc_error(NULL, JSONRPC_INVALID_REQUEST,
				       "Invalid Request: a message is a JSON object");
		json_decref(root);
		return -1;
	}
	json_t *id = json_object_get(root, "id");
	const json_t *reply_id = valid_id(id) ? id : NULL;
	json_t *version = json_object_get(root, "jsonrpc");
	const char *why = NULL;
	json_t *method = json_object_get(root, "method");
	if (!json_is_string(version) || strcmp(json_string_value(version), "2.0"))
		why = "\"jsonrpc\" must be \"2.0\"";
	else if (method && !json_is_string(method))
		why = "\"method\" must be a string";
	else if (id && !valid_id(id))
		why = "\"id\" must be a string or an integer";
	if (!why && method) {
		json_t *params = json_object_get(root, "params");
		if (params && !json_is_object(params) && !json_is_array(params))
			why = "\"params\" must be an object";
		m->kind = id ? JSONRPC_REQUEST : JSONRPC_NOTIFICATION;
		m->method = json_string_value(method);
		m->params = params;
	} else if (!why) {
		bool answer = json_object_get(root, "result") || json_object_get(root, "error");
		if (!answer || !id)
			why = "neither a request, a notification nor a response";
		m->kind = JSONRPC_RESPONSE;
	}
	if (why) {
		*error = jsonrpc_error(reply_id, JSONRPC_INVALID_REQUEST, "Invalid Request: %s",
				       why);
		json_decref(root);
		memset(m, 0, sizeof(*m));
		return -1;
	}
	m->root = root;
	m->id = id;
	return 0;
}

void jsonrpc_msg_clear(struct jsonrpc_msg *m)
{
	json_decref(m->root);
	memset(m, 0, sizeof(*m));
}

static char *dump(json_t *obj)
{
	char *s = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
	json_decref(obj);
	return s;
}

static json_t *id_copy(const json_t *id)
{
	return id ? json_deep_copy(id) : json_null();
}

json_t *jsonrpc_vstring(const char *fmt, va_list ap)
{
	char *s = cc_vstrprintf(fmt, ap);
	if (!s)
		return NULL;
	size_t n = strlen(s);
	json_t *j = NULL;
	if (cc_utf8_valid(s, n)) {
		j = json_stringn_nocheck(s, n);
	} else {
		/* jansson refuses invalid UTF-8: a "%.200s" that cut a
		 * character, or quoted input */
		char *fixed = cc_utf8_repair(s, n, &n);
		if (fixed)
			j = json_stringn_nocheck(fixed, n);
		free(fixed);
	}
	free(s);
	return j;
}

char *jsonrpc_error(const json_t *id, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	json_t *m = jsonrpc_vstring(fmt, ap);
	va_end(ap);
	if (!m)
		return NULL;
	return dump(json_pack("{s:s, s:o, s:{s:i, s:o}}", "jsonrpc", "2.0", "id", id_copy(id),
			      "error", "code", code, "message", m));
}

char *jsonrpc_result(const json_t *id, json_t *result)
{
	if (!result)
		return NULL;
	return dump(json_pack("{s:s, s:o, s:o}", "jsonrpc", "2.0", "id", id_copy(id), "result",
			      result));
}

char *jsonrpc_result_raw(const json_t *id, const char *raw, size_t len)
{
	char *ids = id ? json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY) : strdup("null");
	if (!ids)
		return NULL;
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
	static const char mid[] = ",\"result\":";
	size_t n = strlen(head) + strlen(ids) + strlen(mid) + len + 2;
	char *out = malloc(n);
	if (out) {
		char *p = stpcpy(stpcpy(stpcpy(out, head), ids), mid);
		memcpy(p, raw, len);
		p[len] = '}';
		p[len + 1] = 0;
	}
	free(ids);
	return out;
}

char *jsonrpc_notification(const char *method, json_t *params)
{
	json_t *o = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);
	if (o && params)
		json_object_set_new(o, "params", params);
	else
		json_decref(params);
	return dump(o);
}
