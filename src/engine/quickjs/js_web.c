/* The native half of the web polyfills (src/polyfills/):
 * random bytes for crypto.getRandomValues / crypto.randomUUID, and running
 * the polyfills' text, built into the worker (web_polyfills_js.c, made by
 * scripts/embed-text.py), when the init frame asks. Worker side; see
 * js_value.h.
 *
 * The bytes come from getrandom(2), the host kernel's generator, at every
 * call: nothing is seeded once, so every session, forked or spawned, draws
 * its own bytes and a forked session never replays its template's. The
 * function sits on the global object under Symbol.for('codecage.randomFill')
 * (not enumerable, so the global names stay as they were); it fills an
 * ArrayBuffer and grants nothing Math.random does not. */
#include <errno.h>
#include <sys/random.h>

#include "error.h"
#include "js_value.h"
#include "polyfills.h"

/* The WebCrypto quota: getRandomValues takes at most 65536 bytes a call. */
#define RANDOM_FILL_MAX 65536

static JSValue js_random_fill(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv)
{
	size_t len = 0;
	uint8_t *p;
	(void)this_val;
	if (argc < 1 || !JS_IsObject(argv[0]))
		return JS_ThrowTypeError(c, "randomFill needs an ArrayBuffer");
	p = JS_GetArrayBuffer(c, &len, argv[0]);
	if (!p && JS_HasException(c)) /* not an ArrayBuffer, or detached */
		return JS_EXCEPTION;
	if (!p || !len)
		return JS_UNDEFINED;
	if (len > RANDOM_FILL_MAX)
		return JS_ThrowRangeError(c, "randomFill: at most %d bytes a call",
					  RANDOM_FILL_MAX);
	while (len) {
		ssize_t n = getrandom(p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return JS_ThrowInternalError(c, "getrandom failed: errno %d", errno);
		p += n;
		len -= (size_t)n;
	}
	return JS_UNDEFINED;
}

int cc_js_web_install(JSContext *ctx)
{
	JSValue global = JS_GetGlobalObject(ctx);
	JSValue symbol = JS_GetPropertyStr(ctx, global, "Symbol");
	JSValue sym_for = JS_GetPropertyStr(ctx, symbol, "for");
	JSValue name = JS_NewString(ctx, "codecage.randomFill");
	JSValue key = JS_Call(ctx, sym_for, symbol, 1, (JSValueConst *)&name);
	JSValue fn = JS_NewCFunction(ctx, js_random_fill, "randomFill", 1);
	int r = -1;
	if (!JS_IsException(key) && !JS_IsException(fn)) {
		JSAtom atom = JS_ValueToAtom(ctx, key);
		if (atom != JS_ATOM_NULL) {
			r = JS_DefinePropertyValue(ctx, global, atom, JS_DupValue(ctx, fn),
						   JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
			JS_FreeAtom(ctx, atom);
		}
	}
	JS_FreeValue(ctx, fn);
	JS_FreeValue(ctx, key);
	JS_FreeValue(ctx, name);
	JS_FreeValue(ctx, sym_for);
	JS_FreeValue(ctx, symbol);
	JS_FreeValue(ctx, global);
	return r < 0 ? -1 : 0;
}

int cc_js_web_polyfills_run(JSContext *ctx, cc_error *err)
{
	JSValue v = JS_Eval(ctx, cc_web_polyfills_js, cc_web_polyfills_js_len, "<codecage:web>",
			    JS_EVAL_TYPE_GLOBAL);
	if (!JS_IsException(v)) {
		JS_FreeValue(ctx, v);
		return 0;
	}
	JSValue e = JS_GetException(ctx);
	const char *why = JS_ToCString(ctx, e);
	cc_fail(err, why ? CC_ERR_INTERNAL : CC_ERR_MEMORY_LIMIT,
		"running the built-in web polyfills failed: %s", why ? why : "out of memory");
	JS_FreeCString(ctx, why);
	JS_FreeValue(ctx, e);
	return -1;
}
