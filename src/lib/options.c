/* cc_options: the defaults (cc_options_init) and the checks every runtime,
 * fork server and pool runs on them before any worker starts; the worker's
 * file size cap derived from them. */
#include <string.h>

#include "defaults.h"
#include "deps.h"
#include "error.h"
#include "net.h"
#include "supervisor.h"

CC_EXPORT const char *cc_version(void)
{
	return CC_VERSION; /* meson.build: the project's version */
}

CC_EXPORT void cc_options_init(cc_options *o, cc_language language)
{
	memset(o, 0, sizeof(*o));
	o->language = language;
	o->sandbox = CC_SANDBOX_REQUIRE;
	o->limits = (cc_limits){
		.timeout_s = CC_DEFAULT_TIMEOUT_S,
		.grace_s = CC_DEFAULT_GRACE_S,
		.max_memory = cc_default_max_memory(language),
		.max_stdout = CC_DEFAULT_MAX_OUTPUT,
		.max_stderr = CC_DEFAULT_MAX_OUTPUT,
		.max_result = CC_DEFAULT_MAX_RESULT,
		.max_source = CC_DEFAULT_MAX_SOURCE,
		.cpu_s = CC_DEFAULT_CPU_S,
		.max_open_files = CC_DEFAULT_MAX_OPEN_FILES,
		.max_file_size = 0,
		.max_pending_calls = CC_DEFAULT_MAX_PENDING_CALLS,
	};
	o->max_sessions = CC_FORK_MAX_SESSIONS_DEFAULT;
}

CC_EXPORT int cc_options_check(const cc_options *o, cc_error *err)
{
	const cc_limits *l = &o->limits;
	if (o->language != CC_LANG_JAVASCRIPT && o->language != CC_LANG_PYTHON)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "unknown language %d; use CC_LANG_JAVASCRIPT or CC_LANG_PYTHON",
			       (int)o->language);
	if (o->sandbox != CC_SANDBOX_REQUIRE && o->sandbox != CC_SANDBOX_AUTO &&
	    o->sandbox != CC_SANDBOX_OFF)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "unknown sandbox mode %d",
			       (int)o->sandbox);
	if (o->web_polyfills && o->language != CC_LANG_JAVASCRIPT)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "web_polyfills are JavaScript's; turn the option off for a python "
			       "runtime");
	if (!(l->timeout_s > 0 && l->timeout_s <= CC_MAX_TIMEOUT_S))
		return cc_fail(err, CC_ERR_INVALID_INPUT, "timeout must be in (0, %d] seconds",
			       CC_MAX_TIMEOUT_S);
	if (!(l->grace_s >= 0 && l->grace_s <= 60))
		return cc_fail(err, CC_ERR_INVALID_INPUT, "grace must be in [0, 60] seconds");
	if (l->max_memory < CC_MAX_MEMORY_MIN || l->max_memory > CC_MAX_MEMORY_MAX)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "max_memory is %llu bytes; it must be between 16 MiB (16777216) and "
			       "1 TiB, in bytes",
			       (unsigned long long)l->max_memory);
	if (l->max_stdout > (256u << 20) || l->max_stderr > (256u << 20))
		return cc_fail(err, CC_ERR_INVALID_INPUT, "output caps must be at most 256 MiB");
	if (l->max_result < 1024 || l->max_result > (1u << 30))
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "max_result must be between 1 KiB and 1 GiB");
	if (l->max_source < 1 || l->max_source > (1u << 30))
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "max_source must be between 1 byte and 1 GiB");
	if (o->scratch_bytes > 0 &&
	    (o->scratch_bytes < CC_SCRATCH_MIN || o->scratch_bytes > CC_SCRATCH_MAX))
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "scratch_bytes is %llu; it must be 0 (no scratch) or between 4 KiB "
			       "and 64 GiB",
			       (unsigned long long)o->scratch_bytes);
	if (l->cpu_s < 1 || l->max_open_files < 8 || l->max_open_files > 65536)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "cpu_s must be >= 1 and max_open_files in [8, 65536]");
	if (l->max_pending_calls < 1 || l->max_pending_calls > 65536)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "max_pending_calls is %u; it must be in [1, 65536]",
			       l->max_pending_calls);
	if (o->max_sessions > CC_FORK_MAX_SESSIONS_LIMIT)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "max_sessions is %u; it must be between 1 and %u sessions per fork "
			       "server (0: the default, %u); start more fork servers for more",
			       o->max_sessions, CC_FORK_MAX_SESSIONS_LIMIT,
			       CC_FORK_MAX_SESSIONS_DEFAULT);
	if (o->net && cc_net_check(o->net, err) < 0)
		return cc_fail_wrap(err, "cc_options.net");
	if (o->deps && cc_deps_options_check(o->deps, err) < 0)
		return cc_fail_wrap(err, "cc_options.deps");
	return 0;
}

unsigned cc_max_sessions(const cc_options *o)
{
	return o->max_sessions ? o->max_sessions : CC_FORK_MAX_SESSIONS_DEFAULT;
}

uint64_t cc_scratch_bytes(const cc_options *o)
{
	return o->scratch_bytes ? o->scratch_bytes : o->limits.max_file_size;
}

/* RLIMIT_FSIZE for the worker: limits.max_file_size when set, else the
 * scratch size, else 1 GiB when a grant is writable (each file in it is
 * still capped), else 0 (no file writes). */
uint64_t cc_file_size_cap(const cc_options *o, const struct cc_grants *gs)
{
	if (o->limits.max_file_size)
		return o->limits.max_file_size;
	if (o->scratch_bytes)
		return o->scratch_bytes;
	for (size_t i = 0; i < gs->n; i++)
		if (gs->g[i].writable)
			return CC_GRANT_DEFAULT_FSIZE;
	return 0;
}
