/* JSON-RPC 2.0 framing for the MCP server: parsing and classifying one
 * message, and building responses, errors and notifications as JSON text.
 * Pure: no I/O, no locks. Every text returned is owned by the caller (free()). */
#ifndef CC_MCP_JSONRPC_H
#define CC_MCP_JSONRPC_H

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* JSON-RPC error codes (JSON-RPC 2.0 section 5.1); MCP uses them as is.
 * JSONRPC_SERVER_BUSY is ours, in the implementation-defined range. */
enum jsonrpc_code {
	JSONRPC_PARSE_ERROR = -32700,
	JSONRPC_INVALID_REQUEST = -32600,
	JSONRPC_METHOD_NOT_FOUND = -32601,
	JSONRPC_INVALID_PARAMS = -32602,
	JSONRPC_INTERNAL_ERROR = -32603,
	JSONRPC_SERVER_BUSY = -32000,
};

enum jsonrpc_kind {
	JSONRPC_REQUEST = 1,	  /* method and id */
	JSONRPC_NOTIFICATION = 2, /* method, no id */
	JSONRPC_RESPONSE = 3,	  /* result or error, and id (the client answering us) */
};

/* One parsed message. root is owned; id, method and params borrow from it
 * (id is NULL for notifications, params NULL when absent). */
struct jsonrpc_msg {
	enum jsonrpc_kind kind;
	json_t *root;
	json_t *id;
	const char *method;
	json_t *params;
};

/* Parse and classify buf[0..len). On success fills *m (release with
 * jsonrpc_msg_clear) and returns 0. On failure returns -1 and sets *error
 * to an owned JSON-RPC error response: -32700 for bytes that are not one
 * JSON text (invalid UTF-8, binary garbage, trailing data), -32600 for
 * valid JSON that is not a JSON-RPC 2.0 message (batches included: MCP
 * 2025-06-18 removed them) and for one whose strings hold a \u0000 or a
 * lone surrogate escape (valid JSON, not text). The error's id is the
 * message's id when one could be read, else null; no message names
 * jansson's flags. */
int jsonrpc_parse(const char *buf, size_t len, struct jsonrpc_msg *m, char **error);

void jsonrpc_msg_clear(struct jsonrpc_msg *m);

/* A new JSON string (a new reference) of printf-formatted text, allocated
 * to its full length, never cut; bytes that are not UTF-8 (a "%.200s" that
 * cut a character, quoted input) become U+FFFD, as jansson accepts only
 * UTF-8. NULL when out of memory. The one formatter of jsonrpc_error and
 * mcp_log. */
json_t *jsonrpc_vstring(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* An error response for id (borrowed; NULL = null) with a printf-formatted
 * message (jsonrpc_vstring). Returns owned text, or NULL when out of
 * memory. */
char *jsonrpc_error(const json_t *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A success response: result is stolen (freed here, also on failure).
 * Returns owned text or NULL when out of memory. */
char *jsonrpc_result(const json_t *id, json_t *result);

/* A success response whose result is already JSON text raw[0..len)
 * (borrowed; must be one valid JSON value). Returns owned text or NULL. */
char *jsonrpc_result_raw(const json_t *id, const char *raw, size_t len);

/* A notification: params stolen (may be NULL). Returns owned text or NULL. */
char *jsonrpc_notification(const char *method, json_t *params);

/* The static copy of version when it is a protocol revision this server
 * speaks (2025-06-18, 2025-03-26, 2024-11-05), else NULL. Borrows version. */
const char *mcp_version_find(const char *version);

/* The newest revision this server speaks ("2025-06-18"). */
extern const char mcp_latest_version[];

#endif
