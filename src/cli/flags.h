/* Option flags shared by `codecage run`/`eval` (cli/main.c) and `codecage
 * mcp` (mcp/main.c): each parses its text the same way in both, and a
 * range is the library's (cc_options_check), so its error is the
 * library's message with the flag's name in front. */
#ifndef CC_CLI_FLAGS_H
#define CC_CLI_FLAGS_H

#include "codecage.h"

/* --timeout SECONDS into *out: a decimal number whose range
 * cc_options_check decides ((0, CC_MAX_TIMEOUT_S]). Returns 0, or -1 with
 * *why a heap message naming the flag and arg ("--timeout: timeout must be
 * in (0, 86400] seconds, not '0'"; the caller frees it; NULL when out of
 * memory). */
int cc_flag_timeout(const char *arg, double *out, char **why);

#endif
