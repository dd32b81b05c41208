/* Host tools in QuickJS (worker.h, "host tool calls"): the synchronous
 * global function per tool, the Promise-returning tools.<name>, and the
 * table of calls whose promises wait for a reply. Worker side; see
 * js_value.h for the contract of each entry point.
 *
 * A call never runs host code here: it sends a "call" frame through the
 * worker core and waits (on the channel, bounded by the eval's deadline)
 * for the supervisor's "reply". What the guest sees of a failure is an
 * Error built from the reply's name and message; what it sees of a stop
 * (deadline, output cap) is QuickJS's own uncatchable interrupt. */
#include <stdlib.h>
#include <string.h>

#include "js_value.h"

/* A call started by tools.<name> whose promise is still pending. The
 * resolving functions are strong references, dropped when the reply
 * settles the promise or when the eval ends. */
struct waiting {
	uint64_t id;
	JSValue resolve, reject;
};

static struct {
	struct waiting *v;
	size_t n, cap;
} waiting;

static JSValue tools_ns; /* the `tools` object, when have_ns */
static bool have_ns;
static bool in_eval; /* calls can be made (cc_js_tools_begin) */

void cc_js_tools_begin(bool is_eval)
{
	in_eval = is_eval;
}

static JSValue tool_error(JSContext *ctx, const struct cc_call_reply *r);

void cc_js_tools_end(JSContext *ctx)
{
	/* A call still in flight when its eval ends never gets its answer
	 * (the core drops late replies): reject its promise now, so a later
	 * eval awaiting it gets an error at once instead of waiting for its
	 * deadline (red team, round 2). */
	struct cc_call_reply gone = {
		.err_name = "ToolError",
		.err_message = "the eval that made this tool call ended before the host answered; "
			       "await tool calls within the eval that makes them",
	};
	for (size_t i = 0; i < waiting.n; i++) {
		JSValue e = tool_error(ctx, &gone);
		if (!JS_IsException(e)) {
			JS_FreeValue(ctx, JS_Call(ctx, waiting.v[i].reject, JS_UNDEFINED, 1, &e));
			JS_FreeValue(ctx, e);
		}
		JS_FreeValue(ctx, JS_GetException(ctx));
		JS_FreeValue(ctx, waiting.v[i].resolve);
		JS_FreeValue(ctx, waiting.v[i].reject);
	}
	waiting.n = 0;
	in_eval = false;
}

void cc_js_tools_free(JSContext *ctx)
{
	if (have_ns)
		JS_FreeValue(ctx, tools_ns);
	have_ns = false;
	free(waiting.v);
	memset(&waiting, 0, sizeof(waiting));
}

/* ---- errors ---- */

/* The eval must stop (deadline passed, output over its cap): throw what
 * QuickJS throws when its interrupt handler says stop, an uncatchable
 * InternalError("interrupted") with the guest frames. should_stop stays
 * true for the rest of the eval, so the engine reports the stop's kind
 * even if an async function turns this into a rejection. */
static JSValue throw_stop(JSContext *ctx)
{
	JS_ThrowInternalError(ctx, "interrupted");
	JSValue e = JS_GetException(ctx);
	JS_SetUncatchableError(ctx, e, 1);
	return JS_Throw(ctx, e);
}

/* cc_worker_call_start returned 0 or cc_worker_call_wait -1. */
static JSValue throw_call_failed(JSContext *ctx)
{
	if (cc_worker_should_stop())
		return throw_stop(ctx);
	/* The core could not grow its table of calls. */
	cc_js_note_oom();
	return JS_ThrowOutOfMemory(ctx);
}

/* Throw a TypeError or RangeError with message msg (any length: QuickJS's
 * own throw helpers cut at 255 bytes). */
static JSValue throw_text(JSContext *ctx, bool range, const char *msg)
{
	if (range)
		JS_ThrowRangeError(ctx, "-");
	else
		JS_ThrowTypeError(ctx, "-");
	JSValue e = JS_GetException(ctx);
	JSValue m = JS_NewString(ctx, msg);
	if (JS_IsException(m)) {
		JS_FreeValue(ctx, e);
		return JS_EXCEPTION;
	}
	JS_DefinePropertyValueStr(ctx, e, "message", m, JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
	return JS_Throw(ctx, e);
}

/* A failed call as a real Error: new Error(message) with the Error
 * captured at init (so instanceof Error holds and a guest's replacement
 * of globalThis.Error changes nothing), plus an own `name`, the host's:
 * "PermissionError", "ToolBudgetError", "ToolNotFoundError" ... A
 * "ToolResultError" (the tool's value cannot cross) is made with
 * TypeError, so `instanceof TypeError` holds, as Python's class derives
 * from TypeError. Its stack holds the guest frames of the call when there
 * are any (a synchronous call). Returns the Error, or JS_EXCEPTION. */
static JSValue tool_error(JSContext *ctx, const struct cc_call_reply *r)
{
	JSValue msg = JS_NewString(ctx, r->err_message ? r->err_message : "");
	if (JS_IsException(msg))
		return msg;
	bool type = r->err_name && !strcmp(r->err_name, "ToolResultError");
	JSValue e = JS_CallConstructor(ctx, type ? cc_js.type_error : cc_js.error, 1, &msg);
	JS_FreeValue(ctx, msg);
	if (JS_IsException(e))
		return e;
	JSValue name = JS_NewString(ctx, r->err_name && *r->err_name ? r->err_name : "Error");
	if (JS_IsException(name) ||
	    JS_DefinePropertyValueStr(ctx, e, "name", name,
				      JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) < 0) {
		JS_FreeValue(ctx, e);
		return JS_EXCEPTION;
	}
	return e;
}

/* What a reply settles to: the value converted (*failed false), or the
 * Error to throw or reject with (*failed true). A value JavaScript cannot
 * hold (a timestamp past what a Date can) fails the call with the
 * conversion's error. Never leaves an exception pending. */
static JSValue reply_to_js(JSContext *ctx, const struct cc_call_reply *r, bool *failed)
{
	JSValue v = r->ok ? cc_js_from_value(ctx, r->value) : tool_error(ctx, r);
	*failed = !r->ok;
	if (JS_IsException(v)) {
		*failed = true;
		v = JS_GetException(ctx);
	}
	return v;
}

/* ---- calls ---- */

/* Pack argv as one MessagePack array into *out (initialised here; the
 * caller destroys it on success). A value that cannot cross is a
 * TypeError, arguments over the caps a RangeError, both thrown before any
 * call is made. Returns 0, or -1 with an exception pending. */
static int pack_args(JSContext *ctx, int argc, JSValueConst *argv, msgpack_sbuffer *out)
{
	struct cc_outcome o;
	int r = 0;
	memset(&o, 0, sizeof(o));
	msgpack_sbuffer_init(&o.value);
	JSValue arr = JS_NewArray(ctx);
	if (JS_IsException(arr))
		return -1;
	for (int i = 0; i < argc && !r; i++)
		if (JS_DefinePropertyValueUint32(ctx, arr, (uint32_t)i, JS_DupValue(ctx, argv[i]),
						 JS_PROP_C_W_E | JS_PROP_THROW) < 0)
			r = CC_JS_EXCEPTION;
	if (!r)
		r = cc_js_pack_args(ctx, arr, &o);
	JS_FreeValue(ctx, arr);
	if (!r) {
		*out = o.value;
		return 0;
	}
	if (r != CC_JS_EXCEPTION) {
		const char *m = o.message ? o.message : "the arguments cannot be converted";
		if (o.kind == CC_ERR_MEMORY_LIMIT) {
			cc_js_note_oom();
			JS_ThrowOutOfMemory(ctx);
		} else {
			throw_text(ctx, o.kind == CC_ERR_OUTPUT_LIMIT, m);
		}
	}
	free(o.type);
	free(o.message);
	free(o.traceback);
	msgpack_sbuffer_destroy(&o.value);
	return -1;
}

/* Room for one more entry in `waiting`. Returns 0, or -1 with an
 * exception pending. */
static int reserve_waiting(JSContext *ctx)
{
	if (waiting.n < waiting.cap)
		return 0;
	size_t cap = waiting.cap ? waiting.cap * 2 : 8;
	struct waiting *w = realloc(waiting.v, cap * sizeof(*w));
	if (!w) {
		cc_js_note_oom();
		JS_ThrowOutOfMemory(ctx);
		return -1;
	}
	waiting.v = w;
	waiting.cap = cap;
	return 0;
}

/* Start a call of the tool named by data[0] with argv. Packing the
 * arguments runs guest getters, which may make calls of their own (and
 * grow `waiting`); for tools.<name> (async) room in `waiting` is made only
 * after that, so that once the call is started nothing can fail. Returns
 * the call's id, or 0 with an exception pending. */
static uint64_t start_call(JSContext *ctx, JSValueConst *data, int argc, JSValueConst *argv,
			   bool async)
{
	msgpack_sbuffer args;
	uint64_t id = 0;
	if (!in_eval) {
		/* A setter the guest left on the global, run by set_global. */
		JS_ThrowTypeError(ctx, "host tools can only be called while an eval runs");
		return 0;
	}
	if (pack_args(ctx, argc, argv, &args) < 0)
		return 0;
	const char *name = JS_ToCString(ctx, data[0]);
	if (name && (!async || reserve_waiting(ctx) == 0)) {
		id = cc_worker_call_start(name, args.data, args.size, NULL, 0);
		if (!id)
			throw_call_failed(ctx);
	}
	JS_FreeCString(ctx, name);
	msgpack_sbuffer_destroy(&args);
	return id;
}

/* The global `name(...args)`: call and wait. */
static JSValue tool_sync(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv,
			 int magic, JSValue *data)
{
	struct cc_call_reply r;
	bool failed;
	(void)this_val;
	(void)magic;
	uint64_t id = start_call(ctx, data, argc, argv, false);
	if (!id)
		return JS_EXCEPTION;
	if (cc_worker_call_wait(id, &r) < 0)
		return throw_call_failed(ctx);
	JSValue v = reply_to_js(ctx, &r, &failed);
	cc_call_reply_free(&r);
	return failed ? JS_Throw(ctx, v) : v;
}

/* tools.name(...args): start the call now, so that several calls are in
 * flight together (Promise.all), and return a promise for its reply.
 * Like an async function, an error before the call (arguments that
 * cannot cross, memory) rejects the promise; a stop throws (the eval ends
 * either way), as does a call outside an eval. */
static JSValue tool_async(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv,
			  int magic, JSValue *data)
{
	JSValue fns[2];
	(void)this_val;
	(void)magic;
	JSValue p = JS_NewPromiseCapability(ctx, fns);
	if (JS_IsException(p))
		return p;
	uint64_t id = start_call(ctx, data, argc, argv, true);
	if (id) {
		waiting.v[waiting.n++] = (struct waiting){ id, fns[0], fns[1] };
		return p;
	}
	if (in_eval && !cc_worker_should_stop()) {
		JSValue e = JS_GetException(ctx);
		JSValue r = JS_Call(ctx, fns[1], JS_UNDEFINED, 1, &e);
		JS_FreeValue(ctx, e);
		if (JS_IsException(r)) {
			JS_FreeValue(ctx, p);
			p = JS_EXCEPTION;
		}
		JS_FreeValue(ctx, r);
	} else {
		JS_FreeValue(ctx, p);
		p = JS_EXCEPTION;
	}
	JS_FreeValue(ctx, fns[0]);
	JS_FreeValue(ctx, fns[1]);
	return p;
}

int cc_js_tools_step(JSContext *ctx)
{
	struct cc_call_reply r;
	bool failed;
	if (cc_worker_calls_pending() == 0)
		return 0;
	uint64_t id = cc_worker_call_wait_any();
	if (!id)
		return cc_worker_should_stop() ? -1 : 0;
	if (cc_worker_call_wait(id, &r) < 0)
		return -1;
	size_t i = 0;
	while (i < waiting.n && waiting.v[i].id != id)
		i++;
	if (i == waiting.n) { /* not ours (cannot happen): drop it */
		cc_call_reply_free(&r);
		return 1;
	}
	struct waiting w = waiting.v[i];
	waiting.v[i] = waiting.v[--waiting.n];
	JSValue v = reply_to_js(ctx, &r, &failed);
	cc_call_reply_free(&r);
	JSValue res = JS_Call(ctx, failed ? w.reject : w.resolve, JS_UNDEFINED, 1, &v);
	JS_FreeValue(ctx, v);
	JS_FreeValue(ctx, w.resolve);
	JS_FreeValue(ctx, w.reject);
	if (JS_IsException(res))
		return CC_JS_EXCEPTION;
	JS_FreeValue(ctx, res);
	return 1;
}

/* ---- binding ---- */

/* A function named `name` that calls fn with data[0] = the tool's name. */
static JSValue new_tool_fn(JSContext *ctx, JSCFunctionData *fn, const char *name)
{
	JSValue s = JS_NewString(ctx, name);
	if (JS_IsException(s))
		return s;
	JSValue f = JS_NewCFunctionData(ctx, fn, 0, 0, 1, &s);
	if (!JS_IsException(f) &&
	    JS_DefinePropertyValueStr(ctx, f, "name", JS_DupValue(ctx, s),
				      JS_PROP_CONFIGURABLE | JS_PROP_THROW) < 0) {
		JS_FreeValue(ctx, f);
		f = JS_EXCEPTION;
	}
	JS_FreeValue(ctx, s);
	return f;
}

/* tools.SERVER.TOOL for name "SERVER.TOOL" (dot points at its '.'):
 * tools.SERVER is a plain object made on its first tool; a SERVER that is
 * already a tool of its own is a TypeError (names must not clash). */
static int bind_dotted(JSContext *ctx, const char *name, const char *dot)
{
	JSAtom a = JS_NewAtomLen(ctx, name, (size_t)(dot - name));
	if (a == JS_ATOM_NULL)
		return -1;
	JSValue sub = JS_GetProperty(ctx, tools_ns, a);
	int rc = -1;
	if (JS_IsUndefined(sub)) {
		sub = JS_NewObject(ctx);
		if (JS_IsException(sub) ||
		    JS_DefinePropertyValue(ctx, tools_ns, a, JS_DupValue(ctx, sub),
					   JS_PROP_C_W_E | JS_PROP_THROW) < 0)
			goto out;
	} else if (JS_IsException(sub)) {
		goto out;
	} else if (!JS_IsObject(sub) || JS_IsFunction(ctx, sub)) {
		JS_ThrowTypeError(ctx, "tools.%.*s is a tool, not a namespace", (int)(dot - name),
				  name);
		goto out;
	}
	JSValue af = new_tool_fn(ctx, tool_async, name);
	if (!JS_IsException(af) &&
	    JS_DefinePropertyValueStr(ctx, sub, dot + 1, af, JS_PROP_C_W_E | JS_PROP_THROW) >= 0)
		rc = 0;
out:
	JS_FreeValue(ctx, sub);
	JS_FreeAtom(ctx, a);
	return rc;
}

int cc_js_tools_bind(JSContext *ctx, const char *name, JSValue *fn, JSValue *ns)
{
	*fn = *ns = JS_UNDEFINED;
	if (!have_ns) {
		JSValue o = JS_NewObject(ctx);
		if (JS_IsException(o))
			return -1;
		tools_ns = o;
		have_ns = true;
		*ns = JS_DupValue(ctx, o);
	}
	const char *dot = strchr(name, '.');
	if (dot) {
		if (bind_dotted(ctx, name, dot) < 0)
			goto fail;
		return 0; /* SERVER.TOOL has no global function */
	}
	JSValue af = new_tool_fn(ctx, tool_async, name);
	if (JS_IsException(af) ||
	    JS_DefinePropertyValueStr(ctx, tools_ns, name, af, JS_PROP_C_W_E | JS_PROP_THROW) < 0)
		goto fail;
	/* A tool named "tools" is tools.tools only: the global is the
	 * namespace. */
	if (strcmp(name, "tools")) {
		*fn = new_tool_fn(ctx, tool_sync, name);
		if (JS_IsException(*fn))
			goto fail;
	}
	return 0;
fail:
	*fn = JS_UNDEFINED;
	if (!JS_IsUndefined(*ns)) {
		JS_FreeValue(ctx, *ns);
		*ns = JS_UNDEFINED;
		cc_js_tools_free(ctx); /* the next bind makes it again */
	}
	return -1;
}
