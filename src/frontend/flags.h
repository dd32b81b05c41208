/* Option flags shared by `codecage run`/`eval` (cli/main.c) and `codecage
 * mcp` (mcp/server/main.c): each is parsed here, once, so the same text means the
 * same in both; a range is the library's (cc_options_check), so its error
 * is the library's message with the flag's name in front.
 *
 * Every function takes the flag's argument (getopt's optarg, which
 * cc_flag_mount edits in place) and returns 0, or -1 with *why a heap
 * message naming the flag and the argument (the caller prints it with its
 * usage text and frees it; NULL when out of memory). */
#ifndef CC_CLI_FLAGS_H
#define CC_CLI_FLAGS_H

#include <stddef.h>
#include <stdint.h>

#include "codecage.h"

/* A decimal number, the whole of arg, into *out; 0 or -1. */
int cc_flag_decimal(const char *arg, double *out);
/* A whole number of MiB (digits only, whose bytes fit in 64 bits) into
 * *out, in MiB; 0 or -1. */
int cc_flag_whole_mib(const char *arg, uint64_t *out);

/* --timeout SECONDS into *out: a decimal number in (0, CC_MAX_TIMEOUT_S]. */
int cc_flag_timeout(const char *arg, double *out, char **why);

/* --memory MIB into *mib: a whole number of MiB whose bytes
 * cc_options_check takes as max_memory (16 MiB to 1 TiB); a refusal says
 * the range in MiB (CC_MAX_MEMORY_MIN/_MAX), the flag's unit. */
int cc_flag_memory(const char *arg, uint64_t *mib, char **why);

/* --scratch MIB into *mib: 0 (no scratch) or a whole number of MiB whose
 * bytes cc_options_check takes as scratch_bytes (up to 64 GiB); a refusal
 * says the range in MiB (CC_SCRATCH_MIN/_MAX). */
int cc_flag_scratch(const char *arg, uint64_t *mib, char **why);

/* A whole number for the cc_limits field flag names, checked by
 * cc_options_check: "--max-result" (bytes, max_result), "--cpu" (seconds,
 * cpu_s), "--max-open-files" (max_open_files). Any other flag is a bug
 * (-1, "unknown limit flag"). */
int cc_flag_limit(const char *flag, const char *arg, uint64_t *out, char **why);

/* --sandbox require|auto|off into *mode. */
int cc_flag_sandbox(const char *arg, cc_sandbox_mode *mode, char **why);

/* --mount HOST:GUEST[:rw|:ro] as mounts[*n] (at most CC_MAX_MOUNTS), then
 * ++*n. The guest path is what follows the last ':' once a trailing :rw or
 * :ro is taken off, and must be absolute: so a host path may hold ':'
 * (a guest path may not). Edits arg; the mount's strings point into it.
 * The library checks the rest (the host path exists, the guest path is
 * allowed) when a runtime starts. */
int cc_flag_mount(char *arg, cc_mount *mounts, size_t *n, char **why);

/* A repeatable flag (--library, --python-path): arg as list[*n], then
 * ++*n; at most cap of them. */
int cc_flag_append(const char *flag, const char *arg, const char **list, size_t *n, size_t cap,
		   char **why);

#endif
