/* Streamable HTTP for code mode's MCP client (upstream_http.c). */
#ifndef CC_MCP_UPSTREAM_HTTP_H
#define CC_MCP_UPSTREAM_HTTP_H

#include "upstream.h"

/* POST msg (borrowed) to url with the session id *session (owned; NULL =
 * none yet; replaced by the answer's Mcp-Session-Id). For a request
 * (msg has an id), *reply is the response with that id (owned); for a
 * notification nothing is read. timeout_s > 0 bounds the POST; *cancel
 * (may be NULL) turning nonzero stops it. *http_status is the answer's
 * status (0: none). Returns 0, or -1 with *why (owned). */
int mcp_up_http_post(const char *url, char **session, const json_t *msg, json_t **reply,
		     double timeout_s, const volatile int *cancel, int *http_status, char **why);

#endif
