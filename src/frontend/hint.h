/* Front ends' names for the options that error messages name. The C
 * library's messages end with codecage.h's CC_TIMEOUT_HINT or
 * CC_MEMORY_HINT or CC_RESULT_HINT ("raise cc_limits.timeout_s ..."); a front end swaps that
 * text for its own option (the CLI's "--timeout SECONDS", MCP's
 * "timeout_s"). Pure helper, no I/O. */
#ifndef CC_COMMON_HINT_H
#define CC_COMMON_HINT_H

struct cc_hints {
	const char *timeout; /* replaces CC_TIMEOUT_HINT; NULL keeps it */
	const char *memory;  /* replaces CC_MEMORY_HINT; NULL keeps it */
	const char *result;  /* replaces CC_RESULT_HINT; NULL keeps it */
};

/* msg with the library's hint replaced by the front end's. Borrows msg
 * and h. Returns a heap copy (free it) when something was replaced, NULL
 * when nothing was (use msg as it is) or when memory ran out (likewise). */
char *cc_hint_rewrite(const char *msg, const struct cc_hints *h);

#endif
