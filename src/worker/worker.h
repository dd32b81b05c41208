/* The worker core's interface to its engine (QuickJS or CPython).
 *
 * The worker is a process, not a library: this state is process-global on
 * purpose. Worker side only: nothing here runs in the host. After the first
 * guest instruction the whole process is assumed hostile; the supervisor
 * re-checks everything this code reports. */
#ifndef CC_WORKER_WORKER_H
#define CC_WORKER_WORKER_H

#include <msgpack.h>
#include <stdbool.h>
#include <stdint.h>

#include "codecage.h"

/* Limits the supervisor sent in the init frame. */
struct cc_worker_limits {
	uint64_t max_memory;  /* engine heap cap, bytes */
	uint64_t max_stdout;  /* per eval, bytes */
	uint64_t max_stderr;
	uint64_t max_result;  /* packed result value, bytes */
	uint32_t cpu_s;
	uint32_t max_open_files;
	uint64_t max_file_size;
};

extern struct cc_worker_limits cc_worker_limits;

/* Guest output. fd is 1 (stdout) or 2 (stderr). Sends the bytes (any bytes;
 * the supervisor repairs UTF-8) to the supervisor in "out" frames, keeping
 * only what fits under the per-eval cap. Returns 0, or -1 once the cap is
 * exceeded: the engine should then stop the guest (cc_worker_should_stop()
 * turns true with reason CC_ERR_OUTPUT_LIMIT). */
int cc_worker_output(int fd, const char *data, size_t len);

/* True when the running eval must stop: its deadline passed or an output
 * cap was exceeded. Cheap enough for an interrupt handler (a vDSO clock
 * read). */
bool cc_worker_should_stop(void);

/* Why cc_worker_should_stop() said true: CC_ERR_TIMEOUT or
 * CC_ERR_OUTPUT_LIMIT; CC_OK while it is false. */
cc_error_kind cc_worker_stop_reason(void);

/* Absolute deadline of the running eval, CLOCK_MONOTONIC nanoseconds. */
int64_t cc_worker_deadline_ns(void);

/* What one eval (or set_global) produced. The engine fills it; the worker
 * core sends it and then calls cc_outcome_reset. */
struct cc_outcome {
	bool ok;
	/* When ok: the packed value (exactly one MessagePack item, written
	 * with msgpack-c and the helpers of value.h). Empty means null. */
	msgpack_sbuffer value;
	/* When !ok: kind plus heap strings (NULL allowed for each). */
	cc_error_kind kind;
	char *type;      /* "TypeError", "ZeroDivisionError", ... */
	char *message;
	char *traceback; /* guest frames only */
};

/* Record an error outcome; copies the strings. Returns -1. */
int cc_outcome_fail(struct cc_outcome *o, cc_error_kind kind, const char *type,
		    const char *message, const char *traceback);

/* An engine. Every callback runs in the worker's single thread. */
struct cc_engine {
	const char *name; /* "javascript" | "python" */
	/* Create the engine (after confinement). *version gets a static or
	 * heap string such as "QuickJS 2025-04-26". Returns 0, or -1 with err
	 * filled (kind internal or memory_limit). */
	int (*init)(const char **version, cc_error *err);
	/* Evaluate UTF-8 source code (no NUL inside; code[len] == 0). The
	 * value of a final expression statement (Python) or the completion
	 * value (JavaScript) is packed into o->value; Promises and top-level
	 * await are awaited until settled or cc_worker_should_stop().
	 * Kinds the engine may report: guest_error, syntax_error, timeout,
	 * memory_limit, output_limit (result over max_result). */
	void (*eval)(const char *code, size_t len, struct cc_outcome *o);
	/* Bind global `name` (an identifier) to a copy of v (borrowed;
	 * NULL = null/None). Kinds: guest_error, memory_limit. */
	void (*set_global)(const char *name, const cc_value *v, struct cc_outcome *o);
};

extern const struct cc_engine cc_engine_quickjs;
extern const struct cc_engine cc_engine_cpython;

#endif
