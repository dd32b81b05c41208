/* The QuickJS engine (DESIGN.md section 1): a runtime with a heap cap, a
 * stack cap and an interrupt handler; a context with chosen intrinsics and
 * no quickjs-libc (no std/os modules, no module loading, never bytecode
 * from outside); the eval loop that drives the job queue; and the mapping
 * of everything that can go wrong onto the closed set of error kinds.
 * Worker side: this runs in the confined worker, after confinement. */
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "confine.h"
#include "error.h"
#include "js_fs.h"
#include "js_hints.h"
#include "js_library.h"
#include "js_value.h"
#include "value.h"
#include "lang_guess.h"
#include "message.h"
#include "utf8.h"
#include "seccomp_policy.h"
#include "worker.h"

/* 1 MiB of the main thread's 8 MiB: QuickJS stops guest recursion here
 * with a catchable InternalError, leaving room below for the worker core,
 * our conversions (depth-capped at CC_VALUE_MAX_DEPTH) and libc. */
#define JS_STACK_SIZE (1024 * 1024)
/* Longest message or traceback reported; the rest becomes " [truncated]". */
#define JS_TEXT_MAX (64 * 1024)
/* What quickjs.c's default allocator counts per block. */
#define JS_MALLOC_OVERHEAD 8
/* Extra heap an eval gets when live data already fills the cap, and the
 * most such extra there can ever be (see js_begin): half the 64 MiB the
 * kernel's RLIMIT_DATA allows on top of the cap. */
#define JS_HEADROOM (4 * 1024 * 1024)
#define JS_SLACK_MAX (32 * 1024 * 1024)

static JSRuntime *rt;
static JSContext *ctx;
/* Per eval (or set_global), reset by js_begin: */
static bool js_stopped;		 /* the interrupt handler stopped the guest */
static bool js_oom;		 /* an allocation was refused */
static bool js_drop_due;	 /* a stop left jobs queued: js_after_result drops them */
static JSMallocState *js_heap;	 /* rt's allocator state, as the allocator sees it */
static size_t js_cap = SIZE_MAX; /* limits.max_memory */

static void js_fallback(JSValueConst v, struct cc_outcome *o);

/* ---- allocator ----
 *
 * QuickJS's default allocator, plus the js_oom flag: it records that the
 * heap cap (or malloc itself, under the worker's RLIMIT_DATA) refused a
 * block, so an "out of memory" error is known to be real before it is
 * reported as memory_limit, not a guest's own throw. */

/* Once the cap has refused a block, QuickJS still needs memory to build
 * the "out of memory" error and its backtrace, and some of those paths do
 * not survive a second refusal (seen: build_backtrace() dereferencing a
 * half-built object in QuickJS 2025-04-26). So after the first refusal of
 * an eval, this much more is granted; the kernel's RLIMIT_DATA headroom
 * is far above it. Reset with js_oom at the start of each eval. */
#define JS_OOM_RESERVE (1u << 20)

static size_t heap_limit(const JSMallocState *s)
{
	return js_oom && s->malloc_limit <= SIZE_MAX - JS_OOM_RESERVE
		       ? s->malloc_limit + JS_OOM_RESERVE
		       : s->malloc_limit;
}

static void *js_cc_malloc(JSMallocState *s, size_t size)
{
	void *p = NULL;
	js_heap = s; /* the first call, in JS_NewRuntime2, passes a temporary */
	size_t limit = heap_limit(s);
	if (s->malloc_size < limit && size <= limit - s->malloc_size)
		p = malloc(size);
	if (!p) {
		js_oom = true;
		return NULL;
	}
	s->malloc_count++;
	s->malloc_size += malloc_usable_size(p) + JS_MALLOC_OVERHEAD;
	return p;
}

static void js_cc_free(JSMallocState *s, void *ptr)
{
	if (!ptr)
		return;
	s->malloc_count--;
	s->malloc_size -= malloc_usable_size(ptr) + JS_MALLOC_OVERHEAD;
	free(ptr);
}

static void *js_cc_realloc(JSMallocState *s, void *ptr, size_t size)
{
	if (!ptr)
		return size ? js_cc_malloc(s, size) : NULL;
	if (!size) {
		js_cc_free(s, ptr);
		return NULL;
	}
	size_t old = malloc_usable_size(ptr);
	size_t limit = heap_limit(s);
	void *p = NULL;
	if (size <= old || (s->malloc_size < limit && size - old <= limit - s->malloc_size))
		p = realloc(ptr, size);
	if (!p) {
		js_oom = true;
		return NULL;
	}
	s->malloc_size += malloc_usable_size(p);
	s->malloc_size -= old;
	return p;
}

static size_t js_cc_usable_size(const void *ptr)
{
	return malloc_usable_size((void *)ptr);
}

static char *js_own_text(JSValueConst err, const char *prop);

void cc_js_note_oom(void)
{
	js_oom = true;
}

/* ---- hooks ---- */

/* Polled by the bytecode loop, the regexp matcher (lre_check_timeout) and
 * a few native loops. A nonzero answer raises an uncatchable
 * InternalError("interrupted"). cc_worker_should_stop stays true for the
 * rest of the eval, so the guest cannot outrun it by catching the rejected
 * promise of an interrupted async function. */
static int js_interrupt(JSRuntime *r, void *opaque)
{
	(void)r;
	(void)opaque;
	cc_worker_output_tick(); /* held output whose gap has passed */
	cc_worker_calls_tick();	 /* a clock frame while calls are unanswered */
	if (!cc_worker_should_stop())
		return 0;
	js_stopped = true;
	return 1;
}

/* No module loading at all: import() rejects with this TypeError (a static
 * import is a SyntaxError in a script, except that of fs: js_compile). */
static char *js_no_module_name(JSContext *c, const char *base, const char *name, void *opaque)
{
	(void)base;
	(void)name;
	(void)opaque;
	JS_ThrowTypeError(c, "%s", cc_js_no_modules_text());
	return NULL;
}

static JSModuleDef *js_no_module(JSContext *c, const char *name, void *opaque)
{
	js_no_module_name(c, NULL, name, opaque);
	return NULL;
}

/* ---- Math.random ----
 *
 * QuickJS seeds its own generator once, from the time of day, when the
 * context is made; forked sessions would all replay the template's
 * sequence. This one (xorshift128+, as V8 uses) is seeded from getrandom
 * at start and again in every forked session. Not for cryptography, as
 * the specification says of Math.random. */
static uint64_t rnd_state[2];

static int rnd_seed(cc_error *err)
{
	do {
		if (getrandom(rnd_state, sizeof(rnd_state), 0) != (ssize_t)sizeof(rnd_state))
			return cc_fail(err, CC_ERR_INTERNAL, "getrandom for Math.random failed");
	} while (!rnd_state[0] && !rnd_state[1]);
	return 0;
}

static JSValue js_math_random(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv)
{
	(void)this_val;
	(void)argc;
	(void)argv;
	uint64_t s1 = rnd_state[0];
	const uint64_t s0 = rnd_state[1];
	rnd_state[0] = s0;
	s1 ^= s1 << 23;
	rnd_state[1] = s1 ^ s0 ^ (s1 >> 17) ^ (s0 >> 26);
	return JS_NewFloat64(c, (double)((rnd_state[1] + s0) >> 11) * 0x1.0p-53);
}

static int rnd_install(JSContext *c)
{
	JSValue global = JS_GetGlobalObject(c);
	JSValue math = JS_GetPropertyStr(c, global, "Math");
	JS_FreeValue(c, global);
	JSValue fn = JS_NewCFunction(c, js_math_random, "random", 0);
	int r = JS_IsObject(math) && !JS_IsException(fn)
			? JS_DefinePropertyValueStr(c, math, "random", fn,
						    JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE)
			: -1;
	JS_FreeValue(c, math);
	return r < 0 ? -1 : 0;
}

static int js_after_fork_child(cc_error *err)
{
	return rnd_seed(err);
}

/* Intrinsics that come bundled with ones we keep, taken off the global
 * object before any guest code: SharedArrayBuffer and Atomics (with
 * JS_AddIntrinsicTypedArrays). Nothing shares memory with a guest, and a
 * shared buffer is a high-resolution timer's raw material. Nothing else
 * hands out their constructors. -1 (an exception pending) on failure:
 * the worker does not start with them present. */
static int js_remove_globals(JSContext *c)
{
	static const char *const gone[] = { "SharedArrayBuffer", "Atomics" };
	JSValue global = JS_GetGlobalObject(c);
	int rc = 0;

	for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]) && rc == 0; i++) {
		JSAtom a = JS_NewAtom(c, gone[i]);
		if (a == JS_ATOM_NULL || JS_DeleteProperty(c, global, a, JS_PROP_THROW) < 0 ||
		    JS_HasProperty(c, global, a) != 0)
			rc = -1;
		JS_FreeAtom(c, a);
	}
	JS_FreeValue(c, global);
	return rc;
}

static int js_init(const char **version, cc_error *err)
{
	static const JSMallocFunctions mf = { js_cc_malloc, js_cc_free, js_cc_realloc,
					      js_cc_usable_size };
	rt = JS_NewRuntime2(&mf, NULL);
	if (!rt)
		return cc_fail(err, CC_ERR_MEMORY_LIMIT, "QuickJS: cannot create a runtime");
	/* 0 means no engine cap (the kernel's RLIMIT_DATA still holds). */
	if (cc_worker_limits.max_memory && cc_worker_limits.max_memory < SIZE_MAX - JS_SLACK_MAX) {
		js_cap = (size_t)cc_worker_limits.max_memory;
		JS_SetMemoryLimit(rt, js_cap);
	}
	JS_SetMaxStackSize(rt, JS_STACK_SIZE);
	JS_SetCanBlock(rt, 0); /* Atomics.wait would block past any deadline (and Atomics is gone:
				  js_remove_globals) */
	JS_SetModuleLoaderFunc(rt, js_no_module_name, js_no_module, NULL);

	/* JS_NewContext's list, spelled out so that adding one is a choice. */
	ctx = JS_NewContextRaw(rt);
	if (ctx) {
		JS_AddIntrinsicBaseObjects(ctx); /* Object ... Error, Math, BigInt */
		JS_AddIntrinsicDate(ctx);
		JS_AddIntrinsicEval(ctx); /* JS_Eval itself needs it */
		JS_AddIntrinsicStringNormalize(ctx);
		JS_AddIntrinsicRegExp(ctx); /* with the regexp compiler */
		JS_AddIntrinsicJSON(ctx);
		JS_AddIntrinsicProxy(ctx);
		JS_AddIntrinsicMapSet(ctx);
		JS_AddIntrinsicTypedArrays(ctx);
		JS_AddIntrinsicPromise(ctx);
		JS_AddIntrinsicWeakRef(ctx);
	}
	if (rnd_seed(err) < 0)
		return -1;
	if (!ctx || js_remove_globals(ctx) < 0 || cc_js_builtins_init(ctx) < 0 ||
	    cc_js_console_install(ctx) < 0 || cc_js_display_install(ctx) < 0 ||
	    rnd_install(ctx) < 0 || cc_js_web_install(ctx) < 0 ||
	    /* fs and require only where a file can be reached (README, "Files") */
	    (cc_confine_has_files() && cc_js_fs_install(ctx) < 0)) {
		char *why = NULL;
		if (ctx) {
			JSValue e = JS_GetException(ctx);
			why = js_own_text(e, "message");
			JS_FreeValue(ctx, e);
		}
		cc_fail(err, js_oom ? CC_ERR_MEMORY_LIMIT : CC_ERR_INTERNAL,
			"QuickJS: creating the context failed: %s",
			js_oom ? "out of memory"
			: why  ? why
			       : "no context");
		free(why);
		return -1;
	}
	if (cc_worker_web_polyfills && cc_js_web_polyfills_run(ctx, err) < 0)
		return -1;
	/* Only now: no eval (so no deadline) exists while init runs. */
	JS_SetInterruptHandler(rt, js_interrupt, NULL);
	*version = "QuickJS 2025-04-26";
	return 0;
}

/* ---- reporting ---- */

/* Finish a report text: lone surrogates fixed, valid UTF-8 even when cut
 * mid-character, " [truncated]" when cut. Takes b's buffer. */
static char *js_text_finish(struct cc_buf *b)
{
	bool cut = b->full;
	if (cut) {
		b->limit += 16;
		cc_buf_puts(b, " [truncated]");
	}
	if (!b->data)
		return strdup("");
	cc_utf8_fix_surrogates(b->data, b->len);
	if (!cc_utf8_valid(b->data, b->len)) {
		char *fixed = cc_utf8_repair(b->data, b->len, NULL);
		cc_buf_free(b);
		return fixed;
	}
	return b->data;
}

/* A JS string as heap text for a report; NULL when v is not a string. */
static char *js_text(JSValueConst v)
{
	struct cc_buf b = { .limit = JS_TEXT_MAX };
	size_t len;
	if (!JS_IsString(v))
		return NULL;
	const char *s = JS_ToCStringLen(ctx, &len, v);
	if (!s) {
		JS_FreeValue(ctx, JS_GetException(ctx));
		return NULL;
	}
	cc_buf_add(&b, s, len);
	JS_FreeCString(ctx, s);
	while (b.len && b.data[b.len - 1] == '\n') /* stacks end with one */
		b.data[--b.len] = 0;
	return js_text_finish(&b);
}

/* An own data property of err as text, without running guest code. */
static char *js_own_text(JSValueConst err, const char *prop)
{
	JSValue v = cc_js_own_data(ctx, err, prop);
	char *t = js_text(v);
	JS_FreeValue(ctx, v);
	return t;
}

/* error.stack, with runs of one repeated frame collapsed the way Python
 * does ("[Previous line repeated 996 more times]"): a stack overflow
 * otherwise reports thousands of identical lines. */
static char *js_stack_text(JSValueConst err)
{
	char *t = js_own_text(err, "stack"), *line = t, *prev = NULL, note[64];
	struct cc_buf b = { .limit = 2 * JS_TEXT_MAX };
	size_t prev_len = 0, repeats = 0;
	if (!t)
		return NULL;
	for (;;) {
		char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		bool same = prev && len == prev_len && !memcmp(line, prev, len);
		if (!same && repeats > 2) {
			snprintf(note, sizeof(note),
				 "    [Previous line repeated %zu more times]\n", repeats - 2);
			cc_buf_puts(&b, note);
		}
		repeats = same ? repeats + 1 : 0;
		if (repeats <= 2) {
			cc_buf_add(&b, line, len);
			cc_buf_puts(&b, nl ? "\n" : "");
		}
		prev = line;
		prev_len = len;
		if (!nl)
			break;
		line = nl + 1;
	}
	if (repeats > 2) {
		snprintf(note, sizeof(note), "\n    [Previous line repeated %zu more times]",
			 repeats - 2);
		cc_buf_puts(&b, note);
	}
	free(t);
	return b.data && !b.oom ? b.data : (free(b.data), strdup(""));
}

/* error.name as the prototype chain has it, own data properties only (so
 * a hostile getter cannot run, loop or lie differently twice). */
static char *js_error_name(JSValueConst err)
{
	JSValue o = JS_DupValue(ctx, err);
	char *name = NULL;
	for (int i = 0; i < 64 && JS_IsObject(o) && !name; i++) {
		JSValue next = cc_js_proto_of(ctx, o);
		name = js_own_text(o, "name");
		JS_FreeValue(ctx, o);
		o = next;
	}
	JS_FreeValue(ctx, o);
	if (name && !*name) {
		free(name);
		name = NULL;
	}
	return name;
}

static bool js_stop_seen(void)
{
	return js_stopped || cc_worker_should_stop();
}

/* The traceback: "Type: message" then the frames, as Node prints an
 * uncaught error (and as a Python traceback ends with that line), so it
 * reads on its own. */
static char *js_traceback(const char *type, const char *msg, const char *frames)
{
	char *tb = NULL;
	if (asprintf(&tb, "%s%s%s%s%s", type, *msg ? ": " : "", msg, frames ? "\n" : "",
		     frames ? frames : "") < 0)
		tb = NULL;
	return tb;
}

/* Report a thrown value (takes exc). In order:
 *  - the guest was stopped: the stop's kind (timeout or output_limit),
 *    type "TimeoutError" / "OutputLimitError", the interrupted frames;
 *  - memory ran out (js_oom) and exc is QuickJS's "out of memory" error
 *    (at the limit its message may not have been allocated: an Error with
 *    no message counts too; and null is thrown when not even the Error
 *    could be allocated): memory_limit, type "InternalError", message
 *    "out of memory";
 *  - an Error: syntax_error while compiling, else guest_error; type =
 *    error.name, message = error.message, traceback from error.stack;
 *  - any other value (throw 5): guest_error, type "Uncaught" (what Node
 *    prints before such a value), message = the value as console.log
 *    shows it, no traceback (QuickJS records frames on Errors only). */
static void js_fail(struct cc_outcome *o, JSValue exc, bool compiling)
{
	bool is_error = JS_IsError(ctx, exc);
	char *name = NULL, *msg = is_error ? js_own_text(exc, "message") : NULL;
	char *frames = is_error ? js_stack_text(exc) : NULL, *tb = NULL;
	cc_error_kind kind = compiling ? CC_ERR_SYNTAX : CC_ERR_GUEST;
	const char *type, *text;
	char stop_msg[128];
	if (js_stop_seen()) {
		/* Worded as the Python engine words them. */
		kind = cc_worker_stop_reason() == CC_ERR_OUTPUT_LIMIT ? CC_ERR_OUTPUT_LIMIT
								      : CC_ERR_TIMEOUT;
		type = kind == CC_ERR_TIMEOUT ? "TimeoutError" : "OutputLimitError";
		if (kind == CC_ERR_TIMEOUT)
			snprintf(stop_msg, sizeof(stop_msg),
				 "execution stopped: the time limit was reached");
		else if (cc_js_capped_fd)
			snprintf(stop_msg, sizeof(stop_msg),
				 "execution stopped: %s went over its limit of %" PRIu64 " bytes",
				 cc_js_capped_fd == 1 ? "stdout" : "stderr",
				 cc_js_capped_fd == 1 ? cc_worker_limits.max_stdout
						      : cc_worker_limits.max_stderr);
		else
			snprintf(stop_msg, sizeof(stop_msg),
				 "execution stopped: the output limit was reached");
		text = stop_msg;
	} else if (js_oom &&
		   (JS_IsNull(exc) || (is_error && (!msg || !strcmp(msg, "out of memory"))))) {
		kind = CC_ERR_MEMORY_LIMIT;
		type = "InternalError";
		text = "out of memory";
	} else if (is_error) {
		name = js_error_name(exc);
		type = name ? name : "Error";
		msg = cc_js_name_hint(type, msg);
		text = msg ? msg : "";
	} else {
		struct cc_buf b = { .limit = JS_TEXT_MAX };
		if (cc_js_inspect(ctx, &b, exc) < 0) {
			JS_FreeValue(ctx, JS_GetException(ctx));
			b.len = 0;
			cc_buf_puts(&b, "(a thrown value that cannot be printed)");
		}
		free(msg);
		msg = js_text_finish(&b);
		type = "Uncaught";
		text = msg ? msg : "";
	}
	if (is_error)
		tb = js_traceback(type, text, frames);
	cc_outcome_fail(o, kind, type, text, tb);
	free(name);
	free(msg);
	free(frames);
	free(tb);
	JS_FreeValue(ctx, exc);
}

/* Run the queued jobs (Promise callbacks, timers) until none is left.
 * Returns 0, or -1 with o failed: a job threw, or the eval was stopped
 * (a stop seen after the last job counts too: an interrupted job's
 * rejection may have been swallowed by a guest handler). */
static int js_run_jobs(struct cc_outcome *o)
{
	JSContext *jc;
	while (JS_IsJobPending(rt) && !js_stop_seen()) {
		if (JS_ExecutePendingJob(rt, &jc) < 0) {
			js_fail(o, JS_GetException(ctx), false);
			return -1;
		}
	}
	if (js_stop_seen()) {
		js_fail(o, JS_UNDEFINED, false);
		return -1;
	}
	return 0;
}

/* ---- the job queue ---- */

enum {
	SETTLE_STOPPED = -1,
	SETTLE_NEVER = -2,
	SETTLE_JOB_FAILED = -3,
	SETTLE_OOM = -4
};

/* Run jobs until promise p settles; returns its state or a SETTLE_ code
 * (SETTLE_JOB_FAILED leaves the exception pending). When no job is left,
 * the reply to a pending tools.<name> call is waited for and settles its
 * promise, which queues jobs again; only with no call pending can p never
 * settle. A queue that ran dry after an allocation was refused may have
 * lost a job (QuickJS drops one it has no memory to queue: an endless
 * chain of promises ends so when it fills the heap): that is the memory
 * limit, not a promise that could never settle; and past the deadline it
 * is the stop. */
static int js_settle(JSValueConst p)
{
	for (;;) {
		JSContext *jc;
		int st = JS_PromiseState(ctx, (JSValue)p);
		if (st != JS_PROMISE_PENDING)
			return st;
		if (js_stop_seen())
			return SETTLE_STOPPED;
		int r = JS_ExecutePendingJob(rt, &jc);
		if (r < 0)
			return SETTLE_JOB_FAILED;
		if (r > 0)
			continue;
		r = cc_js_tools_step(ctx);
		if (r == CC_JS_EXCEPTION)
			return SETTLE_JOB_FAILED;
		if (r < 0 || js_stop_seen())
			return SETTLE_STOPPED;
		if (r == 0)
			return js_oom ? SETTLE_OOM : SETTLE_NEVER;
	}
}

/* Await promise p (taken). On fulfilment *out gets the value (owned) and 0
 * is returned; otherwise o is failed and -1 returned. */
static int js_await(JSValue p, JSValue *out, struct cc_outcome *o)
{
	int st = js_settle(p);
	if (st == JS_PROMISE_FULFILLED)
		*out = JS_PromiseResult(ctx, p);
	else if (st == JS_PROMISE_REJECTED)
		js_fail(o, JS_PromiseResult(ctx, p), false);
	else if (st == SETTLE_JOB_FAILED)
		js_fail(o, JS_GetException(ctx), false);
	else if (st == SETTLE_STOPPED)
		js_fail(o, JS_UNDEFINED, false);
	else if (st == SETTLE_OOM)
		js_fail(o, JS_NULL, false); /* memory_limit: js_oom is set */
	else
		cc_outcome_fail(o, CC_ERR_GUEST, "Error",
				"the result is a Promise that can never settle: it is still "
				"pending, no job is left to run and no tool call is pending (this "
				"sandbox has no timers or I/O)",
				NULL);
	JS_FreeValue(ctx, p);
	return st == JS_PROMISE_FULFILLED ? 0 : -1;
}

/* What a stopped eval left queued is dropped without running
 * (deps/quickjs/patches/0002), once its result has gone out
 * (js_after_result; js_begin, should a request come first): without
 * this an endless microtask chain (function f() {
 * Promise.resolve().then(f) }) would outlive its timeout and eat every
 * later eval's deadline, since QuickJS polls interrupts on loops, not on
 * calls. Freeing a chain of promises that wait on one another (one more
 * each time a job returns a new promise: millions a few seconds in)
 * takes malloc a while, so it waits until the timeout is reported.
 * Promises that waited on a dropped job stay pending. Then the cycle
 * collector runs, so the next eval starts with the memory back. */
static void js_after_result(void)
{
	if (!js_drop_due)
		return;
	js_drop_due = false;
	JS_DropPendingJobs(rt);
	JS_RunGC(rt);
}

static void js_begin(bool is_eval)
{
	js_after_result();
	cc_js_tools_begin(is_eval);
	js_stopped = false;
	js_oom = false;
	cc_js_capped_fd = 0;
	/* The stack cap counts from here: the core may call us at another
	 * depth than it called init. */
	JS_UpdateStackTop(rt);
	/* When live data already fills the heap (an earlier eval ran out of
	 * memory and kept what it built in a global), not even `big = null`
	 * could compile. Such an eval gets JS_HEADROOM beyond what is live,
	 * but the heap never grows past cap + JS_SLACK_MAX, however often a
	 * guest fills it again. */
	if (js_cap != SIZE_MAX && js_heap) {
		size_t want = js_heap->malloc_size + JS_HEADROOM;
		if (want < js_cap)
			want = js_cap;
		if (want > js_cap + JS_SLACK_MAX)
			want = js_cap + JS_SLACK_MAX;
		JS_SetMemoryLimit(rt, want);
	}
}

/* After every eval: jobs an error left behind still run (as they would in
 * Node) until the queue is empty or the guest is stopped; promises of tool
 * calls still in flight are rejected (the core drops their late replies);
 * after a stop, what is still queued is dropped once the result is out
 * (js_after_result); after a refused allocation the cycle collector runs,
 * so the next eval starts with the memory back. */
static void js_end(void)
{
	JSContext *jc;
	while (!js_stop_seen() && JS_IsJobPending(rt))
		if (JS_ExecutePendingJob(rt, &jc) < 0)
			JS_FreeValue(ctx, JS_GetException(ctx));
	cc_js_tools_end(ctx);
	/* the rejections just made may have queued reactions: same rule */
	while (!js_stop_seen() && JS_IsJobPending(rt))
		if (JS_ExecutePendingJob(rt, &jc) < 0)
			JS_FreeValue(ctx, JS_GetException(ctx));
	if (js_stop_seen())
		js_drop_due = true;
	else if (js_oom)
		JS_RunGC(rt);
}

/* ---- eval ---- */

/* For a completion value that is a Promise or a thenable, the promise to
 * await (owned); undefined when there is none; JS_EXCEPTION. Reading
 * `then` may run a getter, exactly as `await v` would. */
static JSValue js_thenable(JSValueConst v)
{
	if (!JS_IsObject(v))
		return JS_UNDEFINED;
	if (JS_GetClassID(v) == cc_js.cls_promise)
		return JS_DupValue(ctx, v);
	JSValue then = JS_GetPropertyStr(ctx, v, "then");
	if (JS_IsException(then))
		return then;
	bool callable = JS_IsFunction(ctx, then);
	JS_FreeValue(ctx, then);
	if (!callable)
		return JS_UNDEFINED;
	return JS_Call(ctx, cc_js.promise_resolve, cc_js.promise, 1, &v);
}

/* Compile the script. One that does not parse is tried again with its
 * static imports of fs turned into require (js_import.c, which changes
 * nothing when there are none); when that fails too, its error is the one
 * reported: the lines are the same, and it points past the fs imports at
 * what is really wrong. */
static JSValue js_compile(const char *code, size_t len, bool async)
{
	const int flags =
		JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_COMPILE_ONLY | (async ? JS_EVAL_FLAG_ASYNC : 0);
	JSValue fn = JS_Eval(ctx, code, len, cc_worker_eval_file, flags);
	size_t n;
	char *re;
	if (!JS_IsException(fn) || js_oom || !(re = cc_js_rewrite_imports(code, len, &n)))
		return fn;
	JS_FreeValue(ctx, JS_GetException(ctx));
	fn = JS_Eval(ctx, re, n, cc_worker_eval_file, flags);
	free(re);
	return fn;
}

static void js_eval(const char *code, size_t len, struct cc_outcome *o)
{
	JSValue fn, p, done = JS_UNDEFINED, v = JS_UNDEFINED;
	int r;
	/* Top-level await needs the script compiled as an async function,
	 * whose promise and { value } wrapper cost a few microseconds of
	 * every eval: only source with "await" somewhere in it (a comment or
	 * a string counts too; a false positive only takes the longer way)
	 * pays that. Without it the two ways give the same outcome. */
	bool async = memmem(code, len, "await", 5) != NULL;
	js_begin(true);
	/* Compiled first, so a parse error is told apart from a runtime
	 * SyntaxError such as JSON.parse('{'). With FLAG_ASYNC the script may
	 * use top-level await; its top-level let/const/class/function still
	 * land in the global scope and persist across evals, as without. */
	fn = js_compile(code, len, async);
	if (JS_IsException(fn)) {
		js_fail(o, JS_GetException(ctx), true);
		cc_js_syntax_hint(o, code, len);
		goto out;
	}
	p = JS_EvalFunction(ctx, fn);
	if (JS_IsException(p)) {
		js_fail(o, JS_GetException(ctx), false);
		goto out;
	}
	if (!async) {
		v = p; /* the completion value itself */
	} else if (js_await(p, &done, o)) {
		goto out;
	} else {
		/* An async script resolves to { value: completion } (quickjs.c,
		 * js_parse_program). */
		v = JS_GetPropertyStr(ctx, done, "value");
	}
	/* A Promise completion arrives unawaited either way: await it here,
	 * as the contract asks. */
	p = JS_IsException(v) ? JS_EXCEPTION : js_thenable(v);
	if (JS_IsException(p)) {
		js_fail(o, JS_GetException(ctx), false);
		goto out;
	}
	if (!JS_IsUndefined(p)) {
		JS_FreeValue(ctx, v);
		v = JS_UNDEFINED;
		if (js_await(p, &v, o))
			goto out;
	}
	/* Jobs still queued run now, before the result is read: their
	 * output belongs to this eval, as it would in Node. */
	if (js_run_jobs(o))
		goto out;
	o->unconvertible = false;
	/* A completion value that is a function (a bundle's last statement,
	 * `(function f() {})`) is what the script left behind, not a result:
	 * it arrives as null, and the eval succeeds (README, "Values"). A
	 * function inside a returned value is still refused. */
	if (JS_IsFunction(ctx, v)) {
		JS_FreeValue(ctx, v);
		v = JS_NULL;
	}
	r = cc_js_pack(ctx, v, o);
	if (r == CC_JS_EXCEPTION)
		js_fail(o, JS_GetException(ctx), false);
	else if (!r)
		o->ok = true;
	else if (cc_worker_value_fallback && o->unconvertible)
		js_fallback(v, o);
out:
	JS_FreeValue(ctx, done);
	JS_FreeValue(ctx, v);
	js_end();
}

/* ---- libraries ---- */

/* A browser bundle, as a <script> would run it: a classic script in the
 * global scope (no top-level await, no module syntax), whose completion
 * value is dropped, so a bundle ending in a function value loads. The
 * jobs it queued (Promise callbacks, WEB_POLYFILLS' timers) run before
 * the next library, until the queue is empty or the deadline passes. */
static void js_load_library(const char *file, const char *code, size_t len, const cc_value *frame,
			    struct cc_outcome *o)
{
	js_begin(false);
	if (cc_value_map_get(frame, "global", NULL)) { /* an ES module graph */
		static const struct cc_js_lib_ops ops = { js_fail, js_run_jobs, js_no_module_name,
							  js_no_module };
		cc_js_load_module_library(ctx, rt, frame, &ops, o);
		js_end();
		return;
	}
	JSValue v = JS_Eval(ctx, code, len, file, JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_COMPILE_ONLY);
	if (JS_IsException(v)) {
		js_fail(o, JS_GetException(ctx), true);
		goto out;
	}
	v = JS_EvalFunction(ctx, v);
	if (JS_IsException(v)) {
		js_fail(o, JS_GetException(ctx), false);
		goto out;
	}
	JS_FreeValue(ctx, v);
	if (!js_run_jobs(o))
		o->ok = true;
out:
	js_end();
}

/* The value could not be converted and the eval asked for the fallback:
 * its console.log form (js_console.c, which runs no guest code), named by
 * its constructor's name, "function", "Proxy" or its typeof. On failure
 * (out of memory) the TypeError stays. */
static void js_fallback(JSValueConst v, struct cc_outcome *o)
{
	struct cc_buf b = { .limit = (size_t)cc_worker_limits.max_result };
	char type[128];
	const char *name = NULL;

	if (JS_IsFunction(ctx, v))
		snprintf(type, sizeof(type), "function");
	else if (JS_IsSymbol(v))
		snprintf(type, sizeof(type), "symbol");
	else if (JS_IsObject(v) && JS_GetClassID(v) == cc_js.cls_proxy)
		snprintf(type, sizeof(type), "Proxy");
	else if (JS_IsObject(v) && (name = cc_js_ctor_name(ctx, v)) && *name)
		snprintf(type, sizeof(type), "%.100s", name);
	else
		snprintf(type, sizeof(type), "object");
	JS_FreeCString(ctx, name);
	if (cc_js_format(ctx, &b, 1, &v) < 0 || (b.oom && !b.len)) {
		JS_FreeValue(ctx, JS_GetException(ctx));
		cc_buf_free(&b);
		return;
	}
	cc_outcome_fallback(o, type, b.data ? b.data : "", b.len);
	cc_buf_free(&b);
}

/* ---- set_global ---- */

/* An identifier as far as bytes go: ASCII letters, digits, _ and $, or
 * any non-ASCII byte (JS allows Unicode letters; all JS punctuation is
 * ASCII, so such a byte cannot smuggle in another statement). A reserved
 * word passes here and fails to compile below. */
static bool js_name_ok(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!((unsigned char)*s >= 0x80 || *s == '_' || *s == '$' ||
		      (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

/* Bind global `name` to jv (taken) with an assignment, `name = value`, in
 * a sloppy-mode function, not by defining a property on the global
 * object: a top-level `let name` or `var name` from an earlier eval is
 * updated (a global property would be shadowed by the let, and a var's
 * property cannot be redefined), an undeclared name becomes a global, a
 * `const` refuses with TypeError. Returns 0 (o->ok set), or -1 with o
 * failed. */
static int js_assign_global(const char *name, JSValue jv, struct cc_outcome *o)
{
	char *src = NULL;
	const char *param = strcmp(name, "v") ? "v" : "w";
	JSValue fn, r;
	int rc = -1;
	if (asprintf(&src, "(function (%s) { %s = %s; })", param, name, param) < 0) {
		src = NULL;
		fn = JS_ThrowOutOfMemory(ctx);
	} else {
		fn = JS_Eval(ctx, src, strlen(src), "<codecage:set_global>", JS_EVAL_TYPE_GLOBAL);
	}
	free(src);
	if (JS_IsException(fn)) {
		JSValue e = JS_GetException(ctx);
		if (js_oom) {
			js_fail(o, e, false);
		} else {
			char *m = JS_IsError(ctx, e) ? js_own_text(e, "message") : NULL;
			cc_outcome_fail(o, CC_ERR_INVALID_INPUT, "SyntaxError",
					m ? m : "the global's name cannot be assigned to", NULL);
			free(m);
			JS_FreeValue(ctx, e);
		}
		JS_FreeValue(ctx, jv);
		return -1;
	}
	r = JS_Call(ctx, fn, JS_UNDEFINED, 1, &jv);
	JS_FreeValue(ctx, jv);
	JS_FreeValue(ctx, fn);
	if (JS_IsException(r)) {
		js_fail(o, JS_GetException(ctx), false);
	} else {
		o->ok = true;
		rc = 0;
	}
	JS_FreeValue(ctx, r);
	return rc;
}

static void js_set_global(const char *name, const cc_value *val, struct cc_outcome *o)
{
	js_begin(false);
	if (!js_name_ok(name)) {
		cc_outcome_fail(o, CC_ERR_INVALID_INPUT, "TypeError",
				"the global's name is not an identifier", NULL);
	} else {
		JSValue jv = cc_js_from_value(ctx, val);
		if (JS_IsException(jv))
			js_fail(o, JS_GetException(ctx), false);
		else
			js_assign_global(name, jv, o);
	}
	js_end();
}

/* ---- bind_tool ---- */

/* The global function `name` and tools.<name> (js_tools.c); the global
 * `tools` on the first bind. Both globals are bound as set_global binds,
 * so a guest's `const` of either name refuses (guest_error). */
static void js_bind_tool(const char *name, struct cc_outcome *o)
{
	JSValue fn, ns;
	js_begin(false);
	if (!cc_tool_name_ok(name, strlen(name))) {
		cc_outcome_fail(o, CC_ERR_INVALID_INPUT, "TypeError",
				"the tool's name is not an identifier (or SERVER.TOOL)", NULL);
	} else if (cc_js_tools_bind(ctx, name, &fn, &ns) < 0) {
		js_fail(o, JS_GetException(ctx), false);
	} else if (!JS_IsUndefined(ns) && js_assign_global("tools", ns, o) < 0) {
		cc_js_tools_free(ctx); /* the next bind makes it again */
		JS_FreeValue(ctx, fn);
	} else if (!JS_IsUndefined(fn)) {
		js_assign_global(name, fn, o);
	} else {
		o->ok = true;
	}
	js_end();
}

const struct cc_engine cc_engine_quickjs = {
	.name = "javascript",
	/* QuickJS needs no file and no thread: an empty root, one thread. */
	.policy.seccomp_engine = CC_SC_JS,
	.policy.max_threads = 1,
	.policy.fs_policy = NULL,
	.init = js_init,
	.eval = js_eval,
	.set_global = js_set_global,
	.bind_tool = js_bind_tool,
	.load_library = js_load_library,
	.after_result = js_after_result,
	.after_fork_child = js_after_fork_child,
};

/* The worker core (main.c) runs whichever engine this executable links. */
const struct cc_engine *const cc_worker_engine = &cc_engine_quickjs;
/* The confinement (src/confine/confine.c) reads the same policy. */
const struct cc_engine_policy *const cc_worker_policy = &cc_engine_quickjs.policy;
