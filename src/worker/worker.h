/* src/worker/: the worker's core, one process per runtime or session:
 * main.c (start, the request loop, test-only flags), channel.c (frames on
 * the socket), output.c (guest output), tools.c (calls out, replies in),
 * display.c (the displays of a result), files.c (the host's file calls)
 * and forkserver.c (a template's side). It may include src/confine/,
 * src/common/ and the public headers; the engines (src/engine/) include it
 * and implement struct cc_engine.
 *
 * The worker core's interface to its engine (QuickJS or CPython).
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
#include <sys/types.h>

#include "codecage.h"
#include "confine.h"
#include "frame.h"
#include "init_frame.h"

/* A fork server's template: the optional preload modules ('name?') that
 * did not import, each "name: Type: message" (at most
 * CC_PRELOAD_SKIPPED_MAX entries of CC_PRELOAD_SKIPPED_LEN bytes, frame.h);
 * sent in "ready" as preload_skipped (main.c). */
extern char cc_worker_preload_skipped[CC_PRELOAD_SKIPPED_MAX][CC_PRELOAD_SKIPPED_LEN];
extern size_t cc_worker_n_preload_skipped;

/* The init frame's web_polyfills: the JavaScript engine runs its built-in
 * WEB_POLYFILLS in init, before any guest code (js_web.c). */
extern bool cc_worker_web_polyfills;

/* Guest output. fd is 1 (stdout) or 2 (stderr). Sends the bytes (any bytes;
 * the supervisor repairs UTF-8) to the supervisor in "out" frames, keeping
 * only what fits under the per-eval cap. Returns 0, or -1 once the cap is
 * exceeded: the engine should then stop the guest (cc_worker_should_stop()
 * turns true with reason CC_ERR_OUTPUT_LIMIT). */
int cc_worker_output(int fd, const char *data, size_t len);

/* Streaming (output.c's header comment): a flush point is a newline,
 * which cc_worker_output finds itself, or the guest's explicit flush, for
 * which the engine calls cc_worker_output_flush_point(). Buffered output
 * goes at once unless a frame went less than CC_STREAM_GAP_NS ago; then
 * it is held, and cc_worker_output_due (when an engine set it) is called
 * once with the CLOCK_MONOTONIC time in ns from which a call to
 * cc_worker_output_tick() sends it. Engines call cc_worker_output_tick()
 * where they poll for a stop; it is cheap (a vDSO clock read at most). */
#define CC_STREAM_GAP_NS (20 * 1000000LL)
void cc_worker_output_flush_point(void);
void cc_worker_output_tick(void);
extern void (*cc_worker_output_due)(int64_t due_ns);

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
	char *type; /* "TypeError", "ZeroDivisionError", ... */
	char *message;
	char *traceback; /* guest frames only */
	/* When ok and the value is the text form of one that cannot be
	 * converted (cc_worker_value_fallback): its type's name (heap). */
	char *value_type;
	/* Set by a packer that refused a value for its type or shape (no
	 * mapping, too deep), not for a cap: the fallback may apply. */
	bool unconvertible;
};

/* The running eval asked for the fallback ("fallback" in its frame): a
 * last value of a type that cannot be converted comes back as its text
 * (Python repr, JavaScript's console form), value_type naming the type,
 * instead of a TypeError. Engines set it with cc_outcome_fallback. */
extern bool cc_worker_value_fallback;

/* The file name the running eval's code is compiled under: "<code>" (the
 * guest's), or the "file" of its frame, which the supervisor sends only
 * for codecage's own guest-side code ("<codecage:net>", the network
 * shim): tracebacks leave out the frames of every file whose name starts
 * with "<codecage" (py_helper.c's _guest_file; QuickJS,
 * deps/quickjs/patches/0003). Static storage, valid during the eval. */
extern const char *cc_worker_eval_file;

/* Make o an ok outcome whose value is text[0..len) as a string (copied; cut
 * to stay well under max_result, with a marker) from a value of type
 * type_name (copied). */
void cc_outcome_fallback(struct cc_outcome *o, const char *type_name, const char *text, size_t len);

/* Replace an error outcome's message with message (copied), and the line
 * "<type>: <old message>" of its traceback with the new one, so both say
 * the same. Keeps the old state when memory runs out. */
void cc_outcome_set_message(struct cc_outcome *o, const char *message);

/* Append text (copied) to an error outcome's message and to the last line
 * of its traceback (Python's "SyntaxError: ..." line). Keeps the old
 * state when memory runs out. */
void cc_outcome_append(struct cc_outcome *o, const char *text);

/* Record an error outcome; copies the strings. Returns -1. */
int cc_outcome_fail(struct cc_outcome *o, cc_error_kind kind, const char *type, const char *message,
		    const char *traceback);

/* ---- displays (display.c): MIME bundles for the eval's result ----
 *
 * One part of a bundle: mime is one of "image/png" (data: a PNG file),
 * "image/svg+xml", "text/html", "text/plain", "application/json" (data:
 * UTF-8 text, JSON text for the last). Borrowed. */
struct cc_display_part {
	const char *mime;
	const char *data;
	size_t len;
};

enum {
	CC_DISPLAY_BAD = -1,	 /* no parts, an unknown or repeated MIME type */
	CC_DISPLAY_NOT_PNG = -2, /* image/png data without a PNG signature */
	CC_DISPLAY_FULL = -3,	 /* over CC_MAX_DISPLAYS or max_result: dropped, and
				    the eval will end as output_limit */
	CC_DISPLAY_NOMEM = -4,	 /* out of memory copying it: dropped */
};

/* Whether one more display fits the count (check before rendering one). */
bool cc_worker_display_room(void);
/* Copy one bundle of n parts into the eval's displays. Returns 0 or one
 * of the CC_DISPLAY_* codes above. */
int cc_worker_display_add(const struct cc_display_part *parts, size_t n);

/* ---- host tool calls (the engine's side of "call" and "reply" frames) ----
 *
 * A call is identified by the id cc_worker_call_start returns. Calls only
 * exist while an eval runs; the supervisor decides whether a call reaches
 * the host (bound name, budget) and answers every call with a reply. */

/* Start a call of tool `name` with args: exactly one packed MessagePack
 * array (msgpack-c plus value.h helpers; the same value rules as results,
 * checked against the same caps). Flushes pending guest output first so it
 * stays in order with the call. Never waits for the host. Returns the
 * call's id (> 0), or 0 when no call can be made: no eval is running, the
 * eval must stop, or the channel broke (then cc_worker_should_stop()). */
uint64_t cc_worker_call_start(const char *name, const char *args, size_t args_len,
			      const char *kwargs, size_t kwargs_len);

/* What a reply said. */
struct cc_call_reply {
	bool ok;
	cc_value *value; /* when ok: owned by the caller; NULL = null */
	char *err_name;	 /* when !ok: owned; e.g. "PermissionError", "ToolBudgetError" */
	char *err_message;
	char *err_bases; /* when !ok: owned, comma-separated builtin base names, or NULL */
};

void cc_call_reply_free(struct cc_call_reply *r);

/* Block until the reply to call `id` arrives (keeping replies to other
 * calls that come first) and move it into *r. Returns 0, or -1 when the
 * eval must stop first (deadline, channel broke): *r is then empty and the
 * engine should unwind as for any stop. The deadline covers the host
 * tool's time too. */
int cc_worker_call_wait(uint64_t id, struct cc_call_reply *r);

/* Block until a reply to any started, not yet collected call arrives;
 * returns that call's id (its cc_worker_call_wait returns at once), or 0
 * when no call is pending or the eval must stop. For engines that resolve
 * promises: call it when the job queue is empty and calls are pending. */
uint64_t cc_worker_call_wait_any(void);

/* Calls started and not yet collected by cc_worker_call_wait. */
size_t cc_worker_calls_pending(void);

/* While a call of the eval is unanswered, the guest may keep running (a
 * Promise or task it has not awaited yet) and read no frame: engines call
 * cc_worker_calls_tick() where they poll for a stop (it is cheap: a flag,
 * then a vDSO clock read), and at most every CC_CALLS_LOOK_NS it takes
 * what the supervisor sent, so that its "clock" frame (an approval timed
 * out: the deadline is now) stops a guest that computes as the deadline
 * would, and the runtime lives on. cc_worker_calls_due, when the engine
 * set it, is called with the CLOCK_MONOTONIC time from which the next
 * tick should run (for an engine whose polls need a timer: Python). */
#define CC_CALLS_LOOK_NS (20 * 1000000LL)
void cc_worker_calls_tick(void);
extern void (*cc_worker_calls_due)(int64_t due_ns);

/* An engine. Every callback runs in the worker's single thread. */
struct cc_engine {
	const char *name; /* "javascript" | "python" */
	/* Confinement policy (struct cc_engine_policy, confine.h), which the
	 * engine also names as cc_worker_policy. */
	struct cc_engine_policy policy;
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
	/* Make host tool `name` (an identifier) callable by the guest: a
	 * global function of that name that returns the tool's result, plus
	 * tools.<name> (JavaScript: returns a Promise; Python: synchronous,
	 * and atools.<name> is the awaitable form). A failed call throws an
	 * Error (JS) / raises an exception (Python) whose name is the reply's
	 * err_name and whose message is err_message. Kinds: guest_error. */
	void (*bind_tool)(const char *name, struct cc_outcome *o);
	/* Evaluate a host-read library (a browser bundle: UTF-8, no NUL,
	 * code[len] == 0) as a classic script in the global scope before
	 * "ready", then run the jobs it queued; its completion value is
	 * dropped. file: the name stack traces show. frame: the whole lib
	 * frame (borrowed); with a "global" the code is an ES module graph's
	 * entry, evaluated as a module with its "modules", whose namespace
	 * becomes that global (src/engine/quickjs/js_library.c). NULL for an engine
	 * without libraries. Kinds: those of eval. */
	void (*load_library)(const char *file, const char *code, size_t len,
			     const struct cc_value *frame, struct cc_outcome *o);
	/* After a request's result is sent, before the next frame is read:
	 * work put off so that the result is not late (JavaScript: freeing
	 * what a stopped eval left queued). May be NULL. */
	void (*after_result)(void);
	/* ---- the fork server (src/worker/forkserver.c); each may be NULL ----
	 * Import modules in the template after init: a comma-separated list
	 * of names, a trailing '?' marks one that may be missing. Returns 0,
	 * or -1 with err (invalid_input: a required module failed to import,
	 * the message says which and why). */
	int (*preload)(const char *modules, cc_error *err);
	/* Around the template's fork(): before, then in the parent after. */
	void (*before_fork)(void);
	void (*after_fork_parent)(void);
	/* In the new session, under its own layers, before "ready": make
	 * what fork() shares or loses per-process again (random state, the
	 * stop timer). Returns 0, or -1 with err (internal). */
	int (*after_fork_child)(cc_error *err);
};

extern const struct cc_engine cc_engine_quickjs;
extern const struct cc_engine cc_engine_cpython;

#endif
