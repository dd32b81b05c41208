/* --auth-token-file: every HTTP request must carry Authorization: Bearer
 * TOKEN. The token is read once at start; the check is constant-time in
 * the bytes compared. TLS is the reverse proxy's (README, deployment). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth.h"

#define MCP_TOKEN_MIN 16
#define MCP_TOKEN_MAX 4096

char *mcp_auth_read_token(const char *path, char *why, size_t cap)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		snprintf(why, cap, "--auth-token-file %s: %s", path, strerror(errno));
		return NULL;
	}
	char *buf = calloc(1, MCP_TOKEN_MAX + 2);
	size_t n = buf ? fread(buf, 1, MCP_TOKEN_MAX + 1, f) : 0;
	bool err = ferror(f);
	fclose(f);
	if (!buf || err) {
		snprintf(why, cap, "--auth-token-file %s: cannot read it", path);
		free(buf);
		return NULL;
	}
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = 0;
	bool printable = true;
	for (size_t i = 0; i < n; i++)
		printable &= buf[i] > ' ' && buf[i] < 0x7f;
	if (n < MCP_TOKEN_MIN || n > MCP_TOKEN_MAX || !printable) {
		snprintf(why, cap,
			 "--auth-token-file %s: the token must be %d to %d printable ASCII "
			 "characters without spaces on one line (e.g. `openssl rand -hex 32 > "
			 "FILE`)",
			 path, MCP_TOKEN_MIN, MCP_TOKEN_MAX);
		free(buf);
		return NULL;
	}
	return buf;
}

bool mcp_auth_ok(const char *header, const char *token)
{
	if (!header || strncasecmp(header, "Bearer ", 7))
		return false;
	const char *p = header + 7;
	while (*p == ' ')
		p++;
	size_t n = strlen(p), m = strlen(token);
	while (n && p[n - 1] == ' ')
		n--;
	/* Compare all of token whatever p holds: the time depends on m. */
	unsigned char diff = n != m;
	for (size_t i = 0; i < m; i++)
		diff |= (unsigned char)token[i] ^ (unsigned char)(i < n ? p[i] : 0);
	return diff == 0;
}
