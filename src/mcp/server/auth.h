/* Bearer-token authentication of the HTTP transport (auth.c). */
#ifndef CC_MCP_AUTH_H
#define CC_MCP_AUTH_H

#include <stdbool.h>
#include <stddef.h>

/* Read the token from path: the file's content without a trailing
 * newline, 16..4096 bytes of printable ASCII (RFC 6750 token68 plus
 * what a file editor leaves). Returns the token (owned), or NULL after
 * writing why (naming the file) to why[0..cap). */
char *mcp_auth_read_token(const char *path, char *why, size_t cap);

/* Does an Authorization header value (NULL = none) carry "Bearer TOKEN"
 * for token? The comparison of the token takes the same time whatever
 * the bytes (it depends only on the lengths). */
bool mcp_auth_ok(const char *header, const char *token);

#endif
