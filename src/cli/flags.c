/* Flags shared by the CLI and `codecage mcp` (flags.h). */
#include "flags.h"

#include <errno.h>
#include <stdlib.h>

#include "buf.h"
#include "error.h"

/* A decimal number, the whole of arg. */
static int decimal(const char *arg, double *out)
{
	char *end = NULL;
	errno = 0;
	*out = strtod(arg, &end);
	return errno || end == arg || *end ? -1 : 0;
}

/* The library's word on o: 0, or -1 with *why "FLAG: message, not 'ARG'". */
static int library_check(const cc_options *o, const char *flag, const char *arg, char **why)
{
	cc_error err = { 0 };
	if (cc_options_check(o, &err) == 0)
		return 0;
	*why = cc_strprintf("%s: %s, not '%s'", flag, err.message ? err.message : "out of range",
			    arg);
	cc_error_clear(&err);
	return -1;
}

int cc_flag_timeout(const char *arg, double *out, char **why)
{
	cc_options o;
	cc_options_init(&o, CC_LANG_JAVASCRIPT);
	if (decimal(arg, &o.limits.timeout_s) < 0) {
		*why = cc_strprintf("--timeout wants seconds, not '%s'", arg);
		return -1;
	}
	if (library_check(&o, "--timeout", arg, why) < 0)
		return -1;
	*out = o.limits.timeout_s;
	return 0;
}
