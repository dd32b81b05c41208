/* libFuzzer target: the MCP server's JSON-RPC parser (src/mcp/server/jsonrpc.c),
 * fed whatever a client could send as one stdio line or one HTTP body,
 * and the responses the server builds from what it parsed. Besides
 * crashes, leaks and undefined behaviour (ASan, UBSan) it checks the
 * parser's contract (jsonrpc.h) and aborts when it breaks:
 *
 * - a refusal always comes with an error response that is one JSON object
 *   {jsonrpc: "2.0", id, error: {code, message}}, code -32700 or -32600,
 *   id a string, an integer or null;
 * - an accepted message is classified consistently: a request has a
 *   string method and a string or integer id, a notification a method
 *   and no id, a response an id and no method; params, when present, is
 *   an object or an array;
 * - the result, raw result, error and notification built for it are JSON
 *   texts that carry the same id back.
 *
 * Build and run with `scripts/fuzz SECONDS jsonrpc`; replay.c runs the
 * saved corpus (tests/fuzz/corpus-jsonrpc/) in the normal test suite. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(cond)                                                                              \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_jsonrpc: %s:%d: broken: %s\n", __FILE__, __LINE__,   \
				#cond);                                                            \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

static bool valid_id(const json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

/* text (owned, freed here) is one JSON-RPC 2.0 object whose id equals id
 * (NULL: null); returns it parsed (the caller json_decref()s it), or NULL
 * when text is NULL (allocation failure: allowed, nothing to check). */
static json_t *check_reply(char *text, const json_t *id)
{
	if (!text)
		return NULL;
	json_error_t jerr;
	json_t *o = json_loads(text, 0, &jerr);
	free(text);
	REQUIRE(json_is_object(o));
	const char *version = json_string_value(json_object_get(o, "jsonrpc"));
	REQUIRE(version && !strcmp(version, "2.0"));
	json_t *got = json_object_get(o, "id");
	REQUIRE(got && (id ? json_equal(got, id) : json_is_null(got)));
	return o;
}

static void check_error(char *text, const json_t *id, int code)
{
	json_t *o = check_reply(text, id);
	if (!o)
		return;
	json_t *e = json_object_get(o, "error");
	REQUIRE(json_is_object(e));
	REQUIRE(json_integer_value(json_object_get(e, "code")) == code);
	REQUIRE(json_is_string(json_object_get(e, "message")));
	json_decref(o);
}

/* A refusal (text owned, freed here): an error response whose id is a
 * valid one or null. */
static void check_refusal(char *text)
{
	if (!text)
		return;
	json_t *o = json_loads(text, 0, NULL);
	free(text);
	REQUIRE(json_is_object(o));
	json_t *id = json_object_get(o, "id");
	REQUIRE(id && (json_is_null(id) || valid_id(id)));
	const char *version = json_string_value(json_object_get(o, "jsonrpc"));
	REQUIRE(version && !strcmp(version, "2.0"));
	json_t *e = json_object_get(o, "error");
	json_int_t code = json_integer_value(json_object_get(e, "code"));
	REQUIRE(json_is_object(e) && json_object_size(o) == 3);
	REQUIRE(code == JSONRPC_PARSE_ERROR || code == JSONRPC_INVALID_REQUEST);
	REQUIRE(json_is_string(json_object_get(e, "message")));
	json_decref(o);
}

static void check_kind(const struct jsonrpc_msg *m)
{
	REQUIRE(json_is_object(m->root));
	REQUIRE(!m->params || json_is_object(m->params) || json_is_array(m->params));
	switch (m->kind) {
	case JSONRPC_REQUEST:
		REQUIRE(m->method && valid_id(m->id));
		break;
	case JSONRPC_NOTIFICATION:
		REQUIRE(m->method && !m->id);
		break;
	case JSONRPC_RESPONSE:
		REQUIRE(!m->method && valid_id(m->id) && !m->params);
		break;
	default:
		REQUIRE(!"a known kind");
	}
}

/* The answers the server builds for an accepted message. */
static void answer(const struct jsonrpc_msg *m)
{
	json_t *params = m->params ? json_deep_copy(m->params) : json_object();
	json_t *o = check_reply(jsonrpc_result(m->id, params), m->id);
	if (o)
		REQUIRE(json_object_get(o, "result"));
	json_decref(o);

	char *raw = json_dumps(m->root, JSON_COMPACT);
	if (raw) {
		o = check_reply(jsonrpc_result_raw(m->id, raw, strlen(raw)), m->id);
		if (o)
			REQUIRE(json_equal(json_object_get(o, "result"), m->root));
		json_decref(o);
		free(raw);
	}

	check_error(jsonrpc_error(m->id, JSONRPC_METHOD_NOT_FOUND, "Method not found: %s",
				  m->method ? m->method : "(response)"),
		    m->id, JSONRPC_METHOD_NOT_FOUND);

	if (m->method) {
		char *n = jsonrpc_notification(m->method,
					       m->params ? json_deep_copy(m->params) : NULL);
		json_t *no = n ? json_loads(n, 0, NULL) : NULL;
		REQUIRE(!n || json_is_object(no));
		free(n);
		if (no) {
			const char *method = json_string_value(json_object_get(no, "method"));
			REQUIRE(!json_object_get(no, "id") && method && !strcmp(method, m->method));
			REQUIRE(json_equal(json_object_get(no, "params"), m->params) ||
				(!m->params && !json_object_get(no, "params")));
		}
		json_decref(no);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char unset;
	struct jsonrpc_msg m;
	char *error = &unset;
	if (jsonrpc_parse((const char *)data, size, &m, &error) == 0) {
		REQUIRE(!error);
		check_kind(&m);
		answer(&m);
		jsonrpc_msg_clear(&m);
		REQUIRE(!m.root);
	} else {
		REQUIRE(!m.root && !m.method && !m.id && !m.params);
		REQUIRE(error != &unset); /* NULL only when out of memory */
		check_refusal(error);
	}
	return 0;
}
