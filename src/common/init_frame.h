/* The init frame's limits, listed once (HACKING.md, Protocol): the
 * supervisor packs them in this order (send_init, src/lib/runtime.c) and
 * the worker reads every one of them (read_init, src/worker/main.c) into
 * the same struct; each is a MessagePack uint. The frame's other fields
 * (mode, mounts, template, preload, libraries, web_polyfills) are not
 * limits and are packed and read beside these. */
#ifndef CC_COMMON_INIT_FRAME_H
#define CC_COMMON_INIT_FRAME_H

#include <stdint.h>

/* X(name): the field's name in the frame and in struct cc_init_limits. */
#define CC_INIT_LIMITS(X)                                                                          \
	X(max_memory)	  /* engine heap cap, bytes */                                             \
	X(max_stdout)	  /* captured stdout per eval, bytes */                                    \
	X(max_stderr)	  /* captured stderr per eval, bytes */                                    \
	X(max_result)	  /* packed result value, bytes */                                         \
	X(max_source)	  /* code of an eval or a library, bytes */                                \
	X(cpu_s)	  /* RLIMIT_CPU, seconds */                                                \
	X(max_open_files) /* RLIMIT_NOFILE */                                                      \
	X(max_file_size)  /* RLIMIT_FSIZE, bytes (cc_file_size_cap) */                             \
	X(scratch_bytes)  /* the private tmpfs on /tmp, bytes; 0 = none */

struct cc_init_limits {
#define CC_INIT_FIELD(name) uint64_t name;
	CC_INIT_LIMITS(CC_INIT_FIELD)
#undef CC_INIT_FIELD
};

/* How many limits the frame carries. */
#define CC_INIT_COUNT_ONE(name) +1
#define CC_INIT_LIMITS_COUNT (0 CC_INIT_LIMITS(CC_INIT_COUNT_ONE))

#endif
