/* src/engine/quickjs/: the QuickJS engine (engine_js.c, its struct
 * cc_engine) with its values, console, fs and require, tools, displays,
 * libraries and the native half of the web polyfills (js_*.c). It may
 * include src/worker/, src/confine/, src/polyfills/, src/common/, the
 * public headers and QuickJS's; nothing includes it.
 *
 * QuickJS values: to MessagePack (results) and from cc_value (set_global)
 * in js_value.c; to text for the console in js_console.c. Worker side
 * only, used by engine_js.c.
 *
 * Conversions never look functions up on guest-reachable objects: the few
 * built-ins they call (Map iteration, Date.prototype.getTime, BigInt, ...)
 * are captured by cc_js_builtins_init before the first guest instruction,
 * so a guest that replaces Map.prototype.entries cannot change what a Map
 * result looks like. Getters on plain objects do run (as JSON.stringify
 * runs them); that is guest code, under the same interrupt handler. */
#ifndef CC_WORKER_JS_VALUE_H
#define CC_WORKER_JS_VALUE_H

#include <stdbool.h>
#include <stddef.h>

/* quickjs.h is third-party: its inline helpers trip -Wextra. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wcast-function-type"
#include "quickjs.h"
#pragma GCC diagnostic pop
#include "worker.h"
#include "buf.h"
/* QuickJS writes a lone UTF-16 surrogate as ED A0..BF xx, which is not
 * UTF-8: text from it goes through cc_utf8_fix_surrogates. */
#include "utf8.h"

/* Built-ins and class ids captured at init. Owned by the engine for the
 * life of the process (the runtime is never freed). */
struct cc_js_builtins {
	JSValue object_proto; /* Object.prototype */
	JSValue map_entries;  /* Map.prototype.entries */
	JSValue map_next;     /* %MapIteratorPrototype%.next */
	JSValue map_size;     /* getter of Map.prototype.size */
	JSValue set_values;   /* Set.prototype.values */
	JSValue set_next;     /* %SetIteratorPrototype%.next */
	JSValue set_size;
	JSValue date_get_time; /* Date.prototype.getTime */
	JSValue date_to_iso;   /* Date.prototype.toISOString */
	JSValue regexp_to_string;
	JSValue bigint;		/* BigInt */
	JSValue bigint_too_big; /* x => |x| >= 10n ** CC_BIGINT_MAX_DIGITS */
	JSValue promise;	/* Promise */
	JSValue promise_resolve;
	JSValue error;	    /* Error (tool failures are made with it) */
	JSValue type_error; /* TypeError (a tool result that cannot cross) */
	JSClassID cls_object, cls_array, cls_error, cls_date, cls_map, cls_set, cls_proxy,
		cls_promise, cls_regexp, cls_array_buffer, cls_uint8_array;
	/* Every typed array class, for console output. */
	struct {
		JSClassID id;
		const char *name;
	} typed[11];
};

extern struct cc_js_builtins cc_js;

/* Capture the built-ins. Call once, right after the context gets its
 * intrinsics and before any guest code. Returns 0, or -1 with a JS
 * exception pending. */
int cc_js_builtins_init(JSContext *ctx);

/* Returned by cc_js_pack when a JS exception is pending in ctx (a getter
 * threw, the interrupt handler fired, memory ran out): the caller takes it
 * with JS_GetException and reports it like any other throw. */
#define CC_JS_EXCEPTION (-2)

/* Pack v (borrowed) as exactly one MessagePack item into o->value, with the
 * DESIGN.md section 5 mapping, the value caps and the max_result cap checked
 * as it goes. Returns 0; -1 when v cannot cross the boundary, with o failed:
 * guest_error "TypeError" naming where ("result.a[2]") and what (a
 * function, a cycle, a Map with a number key ...), output_limit (over
 * max_result or the node cap), memory_limit (malloc failed); or
 * CC_JS_EXCEPTION. On failure o->value is emptied. Frees every JSValue it
 * made on every path. */
int cc_js_pack(JSContext *ctx, JSValueConst v, struct cc_outcome *o);

/* The same for a tool call's arguments (args: an Array of them): the same
 * rules and caps, worded for arguments ("args[1].a: cannot pass a
 * function; ..."). */
int cc_js_pack_args(JSContext *ctx, JSValueConst args, struct cc_outcome *o);

/* A new JS value for v (borrowed; NULL = null): int -> number, or BigInt
 * beyond 2**53 (so it stays exact and comes back an int); float -> number
 * kept float-tagged (7.0 comes back 7.0); bigint -> BigInt; bytes ->
 * Uint8Array; map -> plain object; timestamp -> Date (floored to the ms).
 * Containers are built with define-property semantics, so no guest setter
 * runs and a "__proto__" key is an own property. Returns JS_EXCEPTION with
 * an exception pending. */
JSValue cc_js_from_value(JSContext *ctx, const cc_value *v);

/* Console text goes into a struct cc_buf (buf.h: malloc, outside the JS
 * heap) with a limit: output past the cap would be dropped anyway, so a
 * huge string costs no more than the cap. */

/* Helpers shared with js_console.c. None of them runs guest code: they read
 * own data properties only and never touch a Proxy. */
JSValue cc_js_own_data(JSContext *ctx, JSValueConst obj, const char *prop);
JSValue cc_js_proto_of(JSContext *ctx, JSValueConst obj); /* undefined for a Proxy */
bool cc_js_same_object(JSValueConst a, JSValueConst b);
/* prototype.constructor.name; a JS C string (JS_FreeCString) or NULL. */
const char *cc_js_ctor_name(JSContext *ctx, JSValueConst obj);
bool cc_js_is_ident(const char *s); /* ASCII [A-Za-z_$][A-Za-z0-9_$]* */

/* ---- js_display.c ---- */

/* Define the global display(value, mimeType) (js_display.c says what it
 * takes). Returns 0, or -1 with a JS exception pending. */
int cc_js_display_install(JSContext *ctx);

/* ---- js_console.c ---- */

/* Define the global `console` (log, info, debug -> stdout; warn, error,
 * assert -> stderr). Each call writes one line through cc_worker_output;
 * once that reports the cap, the call throws an uncatchable error so the
 * guest stops (cc_worker_should_stop() is then true, reason output_limit).
 * Returns 0, or -1 with a JS exception pending. */
int cc_js_console_install(JSContext *ctx);

/* The web polyfills' native hook (js_web.c): Symbol.for('codecage.randomFill')
 * on the global object, a function that fills an ArrayBuffer (at most 65536
 * bytes) from getrandom at each call. Call once at init, before guest code.
 * Returns 0, or -1 with a JS exception pending. */
int cc_js_web_install(JSContext *ctx);

/* Run the WEB_POLYFILLS built into the worker (python/codecage/
 * web_polyfills/, the pieces joined at build time) in the global scope, at init,
 * before any guest code. Returns 0, or -1 with err (memory_limit, or
 * internal naming the polyfills' error). */
int cc_js_web_polyfills_run(JSContext *ctx, cc_error *err);

/* Which stream (1 or 2) went over its cap in this eval; 0 when none. The
 * engine resets it before each eval and names the stream when it reports
 * output_limit. */
extern int cc_js_capped_fd;

/* Console formatting, Node-like: the arguments joined by spaces, strings
 * raw, other values inspected, a leading format string with %s %d %i %f %j
 * %o %O %c %% honoured. Returns 0, or -1 with a JS exception pending. */
int cc_js_format(JSContext *ctx, struct cc_buf *b, int argc, JSValueConst *argv);

/* One value as console.log shows it (top level: strings raw). Returns 0, or
 * -1 with a JS exception pending. */
int cc_js_inspect(JSContext *ctx, struct cc_buf *b, JSValueConst v);

/* ---- js_tools.c ---- */

/* Host tools (worker.h, "host tool calls"): the global function `name(...)`
 * calls the tool and waits for its reply; `tools.name(...)` starts the call
 * and returns a Promise that the eval loop settles (cc_js_tools_step). A
 * failed call is an Error whose name and message are the host's.
 *
 * Defines tools.<name> (the `tools` object is made on the first bind) and
 * returns in *fn the global function to bind as `name` (owned; undefined
 * for a tool named "tools": the namespace keeps that global). *ns gets
 * the `tools` object (owned) when this call made it, else undefined: the
 * caller binds it as the global `tools`, or calls cc_js_tools_free when
 * that fails so the next bind tries again. A dotted name "SERVER.TOOL"
 * defines tools.SERVER.TOOL only (*fn stays undefined). Binding a name again is
 * harmless (calls go by name). Returns 0, or -1 with a JS exception
 * pending. */
int cc_js_tools_bind(JSContext *ctx, const char *name, JSValue *fn, JSValue *ns);

/* Around every eval, set_global and bind: calls can only be made while an
 * eval runs (is_eval). tools_end drops the promises of calls nobody
 * waited for (the worker core drops their replies). */
void cc_js_tools_begin(bool is_eval);
void cc_js_tools_end(JSContext *ctx);

/* Call when the job queue is empty and the eval still waits: wait for the
 * reply to any call of tools.<name> and settle its promise. Returns 1 (a
 * promise settled: run jobs again), 0 (no call is pending: nothing can
 * ever settle), -1 (the eval must stop: cc_worker_should_stop()), or
 * CC_JS_EXCEPTION (out of memory while settling; exception pending). */
int cc_js_tools_step(JSContext *ctx);

/* Forget the `tools` object (see cc_js_tools_bind); also for a harness
 * that frees the runtime. */
void cc_js_tools_free(JSContext *ctx);

/* In engine_js.c: record that memory ran out outside the JS heap, so the
 * "out of memory" error about to be thrown is reported as memory_limit. */
void cc_js_note_oom(void);

#endif
