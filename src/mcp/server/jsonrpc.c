/* JSON-RPC 2.0 framing (see jsonrpc.h). jansson does the parsing: it
 * rejects invalid UTF-8, \u0000 escapes (no JSON_ALLOW_NUL), lone
 * surrogate escapes and trailing data, and caps nesting, so binary
 * garbage ends as a parse error here. The two escapes are valid JSON,
 * though, and the request they are in still has an id to answer: the
 * text is parsed again without them (not_text) to find it. */
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

static int hex4(const char *s)
{
	int v = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* A copy of buf[0..len) whose \u0000 and lone surrogate escapes (a high
 * one not followed by a low one, a low one alone) are \ufffd, the same
 * length; NULL when it has none (or out of memory). */
static char *not_text(const char *buf, size_t len)
{
	char *copy = NULL;
	for (size_t i = 0; i + 1 < len; i++) {
		if (buf[i] != '\\')
			continue;
		if (buf[i + 1] != 'u' || i + 6 > len) {
			i++; /* another escape: skip its character */
			continue;
		}
		int cp = hex4(buf + i + 2);
		bool pair = cp >= 0xd800 && cp <= 0xdbff && i + 12 <= len && buf[i + 6] == '\\' &&
			    buf[i + 7] == 'u' && hex4(buf + i + 8) >= 0xdc00 &&
			    hex4(buf + i + 8) <= 0xdfff;
		if (pair || !(cp == 0 || (cp >= 0xd800 && cp <= 0xdfff))) {
			i += pair ? 11 : 5;
			continue;
		}
		if (!copy) {
			if (!(copy = malloc(len)))
				return NULL;
			memcpy(copy, buf, len);
		}
		memcpy(copy + i, "\\ufffd", 6);
		i += 5;
	}
	return copy;
}

/* buf failed to parse: the error response, with the message's id when
 * only \u0000 or a lone surrogate kept it from parsing. */
static char *parse_error(const char *buf, size_t len, const json_error_t *jerr)
{
	char *fixed = not_text(buf, len);
	if (!fixed)
		return jsonrpc_error(NULL, JSONRPC_PARSE_ERROR, "Parse error: %s (at byte %d)",
				     jerr->text, jerr->position);
	json_error_t again;
	json_t *root = json_loadb(fixed, len, JSON_DECODE_ANY, &again);
	free(fixed);
	if (!root) { /* another fault too: in jansson's words, not its flags' */
		const json_error_t *e = strstr(jerr->text, "JSON_") ? &again : jerr;
		return jsonrpc_error(NULL, JSONRPC_PARSE_ERROR, "Parse error: %s (at byte %d)",
				     e->text, e->position);
	}
	json_t *id = json_object_get(root, "id");
	char *e =
		jsonrpc_error(valid_id(id) ? id : NULL, JSONRPC_INVALID_REQUEST,
			      "Invalid Request: a string holds the escape \\u0000 (NUL) or a lone "
			      "UTF-16 surrogate (\\ud800-\\udfff without its pair), which is not "
			      "text: send the text without it");
	json_decref(root);
	return e;
}

int jsonrpc_parse(const char *buf, size_t len, struct jsonrpc_msg *m, char **error)
{
	memset(m, 0, sizeof(*m));
	*error = NULL;
	json_error_t jerr;
	json_t *root = json_loadb(buf, len, JSON_DECODE_ANY, &jerr);
	if (!root) {
		*error = parse_error(buf, len, &jerr);
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
