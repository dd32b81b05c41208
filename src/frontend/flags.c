/* Flags shared by the CLI and `codecage mcp` (flags.h). */
#include "flags.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "error.h"

int cc_flag_decimal(const char *arg, double *out)
{
	char *end = NULL;
	errno = 0;
	*out = strtod(arg, &end);
	return errno || end == arg || *end ? -1 : 0;
}

/* A whole number of MiB, digits only: 0, or -1 when arg is not one, or 1
 * when it is one too large for its bytes to fit in 64 bits (out of any
 * range the library takes). */
int cc_flag_whole_mib(const char *arg, uint64_t *out)
{
	char *end = NULL;
	if (*arg < '0' || *arg > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	if (*end)
		return -1;
	if (errno || v > (UINT64_MAX >> 20))
		return 1;
	*out = v;
	return 0;
}

/* The library's range in bytes as whole MiB: the least MiB at or above lo,
 * the most at or below hi. */
static unsigned long long mib_up(uint64_t lo)
{
	return (unsigned long long)((lo + (1u << 20) - 1) >> 20);
}

static unsigned long long mib_down(uint64_t hi)
{
	return (unsigned long long)(hi >> 20);
}

/* The library's word on o: 0, or -1 with *why "FLAG: message, not 'ARG'"
 * (sep in place of ": "). */
static int library_check_sep(const cc_options *o, const char *flag, const char *sep,
			     const char *arg, char **why)
{
	cc_error err = { 0 };
	if (cc_options_check(o, &err) == 0)
		return 0;
	*why = cc_strprintf("%s%s%s, not '%s'", flag, sep,
			    err.message ? err.message : "out of range", arg);
	cc_error_clear(&err);
	return -1;
}

static int library_check(const cc_options *o, const char *flag, const char *arg, char **why)
{
	return library_check_sep(o, flag, ": ", arg, why);
}

int cc_flag_timeout(const char *arg, double *out, char **why)
{
	cc_options o;
	cc_options_init(&o, CC_LANG_JAVASCRIPT);
	if (cc_flag_decimal(arg, &o.limits.timeout_s) < 0) {
		*why = cc_strprintf("--timeout wants seconds, not '%s'", arg);
		return -1;
	}
	if (library_check(&o, "--timeout", arg, why) < 0)
		return -1;
	*out = o.limits.timeout_s;
	return 0;
}

/* The library judges the range (cc_options_check); its message counts
 * bytes, so the flag's own says the range in MiB, the unit it takes. */
int cc_flag_memory(const char *arg, uint64_t *mib, char **why)
{
	cc_options o;
	cc_options_init(&o, CC_LANG_JAVASCRIPT);
	uint64_t v = 0;
	int rc = cc_flag_whole_mib(arg, &v);
	if (rc < 0) {
		*why = cc_strprintf("--memory wants a whole number of MiB, not '%s'", arg);
		return -1;
	}
	o.limits.max_memory = v << 20;
	cc_error err = { 0 };
	if (rc > 0 || cc_options_check(&o, &err) < 0) {
		cc_error_clear(&err);
		*why = cc_strprintf("--memory wants MiB from %llu to %llu, not '%s'",
				    mib_up(CC_MAX_MEMORY_MIN), mib_down(CC_MAX_MEMORY_MAX), arg);
		return -1;
	}
	*mib = v;
	return 0;
}

int cc_flag_scratch(const char *arg, uint64_t *mib, char **why)
{
	cc_options o;
	cc_options_init(&o, CC_LANG_JAVASCRIPT);
	uint64_t v = 0;
	int rc = cc_flag_whole_mib(arg, &v);
	if (rc < 0) {
		*why = cc_strprintf("--scratch wants a whole number of MiB (0: none), not '%s'",
				    arg);
		return -1;
	}
	o.scratch_bytes = v << 20;
	cc_error err = { 0 };
	if (rc > 0 || cc_options_check(&o, &err) < 0) {
		cc_error_clear(&err);
		*why = cc_strprintf("--scratch wants MiB: 0 for none, or %llu to %llu, not '%s'",
				    mib_up(CC_SCRATCH_MIN), mib_down(CC_SCRATCH_MAX), arg);
		return -1;
	}
	*mib = v;
	return 0;
}

/* A whole number, digits only. */
static int whole(const char *arg, uint64_t *out)
{
	char *end = NULL;
	if (*arg < '0' || *arg > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int cc_flag_limit(const char *flag, const char *arg, uint64_t *out, char **why)
{
	cc_options o;
	cc_options_init(&o, CC_LANG_JAVASCRIPT);
	cc_limits *l = &o.limits;
	uint64_t v;
	bool narrow = strcmp(flag, "--max-result") != 0; /* a uint32_t field */
	if (whole(arg, &v) < 0 || (narrow && v > UINT32_MAX)) {
		*why = cc_strprintf("%s wants a whole number, not '%s'", flag, arg);
		return -1;
	}
	if (!strcmp(flag, "--max-result"))
		l->max_result = v;
	else if (!strcmp(flag, "--cpu"))
		l->cpu_s = (uint32_t)v;
	else if (!strcmp(flag, "--max-open-files"))
		l->max_open_files = (uint32_t)v;
	else {
		*why = cc_strprintf("unknown limit flag %s", flag);
		return -1;
	}
	if (library_check_sep(&o, flag, " wants what the library takes: ", arg, why) < 0)
		return -1;
	*out = v;
	return 0;
}

int cc_flag_sandbox(const char *arg, cc_sandbox_mode *mode, char **why)
{
	if (cc_sandbox_mode_parse(arg, mode) == 0)
		return 0;
	*why = cc_strprintf("--sandbox wants require, auto or off, not '%s'", arg);
	return -1;
}

int cc_flag_mount(char *arg, cc_mount *mounts, size_t *n, char **why)
{
	if (*n == CC_MAX_MOUNTS) {
		*why = cc_strprintf("--mount: at most %d grants, not more (at '%s')", CC_MAX_MOUNTS,
				    arg);
		return -1;
	}
	size_t len = strlen(arg);
	bool suffix = len > 3 && (!strcmp(arg + len - 3, ":rw") || !strcmp(arg + len - 3, ":ro"));
	char *colon = NULL;
	for (size_t i = suffix ? len - 3 : len; i-- > 0;)
		if (arg[i] == ':') {
			colon = arg + i;
			break;
		}
	if (!colon || colon == arg || colon[1] != '/') {
		*why = cc_strprintf("--mount wants HOST:GUEST[:rw] with an absolute GUEST path "
				    "(after the last ':'), not '%s'",
				    arg);
		return -1;
	}
	cc_mount *m = &mounts[(*n)++];
	m->writable = suffix && arg[len - 1] == 'w';
	if (suffix)
		arg[len - 3] = 0;
	*colon = 0;
	m->host = arg;
	m->guest = colon + 1;
	m->name = NULL; /* messages name host, as given */
	return 0;
}

int cc_flag_append(const char *flag, const char *arg, const char **list, size_t *n, size_t cap,
		   char **why)
{
	if (*n == cap) {
		*why = cc_strprintf("%s: at most %zu, not more (at '%s')", flag, cap, arg);
		return -1;
	}
	list[(*n)++] = arg;
	return 0;
}
