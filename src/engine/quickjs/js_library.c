/* A library that is an ES module graph (the host read it and resolved its
 * imports: src/lib/lib_graph.c): its modules are served to QuickJS's
 * module loader from the lib frame, and only while that library loads;
 * at every other time the loader refuses every module (engine_js.c).
 * Worker side; the frame is the supervisor's (trusted), and its modules
 * run under the same limits as any library. */
#include "js_library.h"

#include <stdlib.h>
#include <string.h>

#include "value.h"

/* The frame being loaded: its "modules" and the entry's "imports". */
static const cc_value *lib_frame;

static const cc_value *str_field(const cc_value *m, const char *key)
{
	const cc_value *v = cc_value_map_get(m, key, NULL);
	return cc_value_type_of(v) == CC_VALUE_STRING ? v : NULL;
}

static bool is_file(const cc_value *m, const char *file)
{
	const cc_value *f = str_field(m, "file");
	return f && !strcmp(f->u.str.ptr, file);
}

/* The module whose file is name: the frame (its entry) or one of its
 * "modules"; NULL when the host sent none of that name. */
static const cc_value *module_of(const char *name)
{
	if (!lib_frame)
		return NULL;
	if (is_file(lib_frame, name))
		return lib_frame;
	const cc_value *mods = cc_value_map_get(lib_frame, "modules", NULL);
	for (size_t i = 0; cc_value_type_of(mods) == CC_VALUE_ARRAY && i < mods->u.array.len; i++)
		if (is_file(mods->u.array.items[i], name))
			return mods->u.array.items[i];
	return NULL;
}

/* import 'spec' in base: the file the host resolved it to. */
static char *lib_normalize(JSContext *c, const char *base, const char *spec, void *opaque)
{
	(void)opaque;
	const cc_value *m = module_of(base);
	const cc_value *key = m ? str_field(cc_value_map_get(m, "imports", NULL), spec) : NULL;
	if (!key) {
		JS_ThrowReferenceError(c,
				       "'%s' (imported by %s) is not among the modules the host "
				       "read for this library",
				       spec, base);
		return NULL;
	}
	char *r = js_malloc(c, key->u.str.len + 1);
	if (r)
		memcpy(r, key->u.str.ptr, key->u.str.len + 1);
	return r;
}

static JSModuleDef *lib_load(JSContext *c, const char *name, void *opaque)
{
	(void)opaque;
	const cc_value *m = module_of(name);
	const cc_value *code = m ? str_field(m, "code") : NULL;
	if (!code) {
		JS_ThrowReferenceError(c, "module '%s' was not sent by the host", name);
		return NULL;
	}
	JSValue f = JS_Eval(c, code->u.str.ptr, code->u.str.len, name,
			    JS_EVAL_TYPE_MODULE | JS_EVAL_FLAG_COMPILE_ONLY);
	if (JS_IsException(f))
		return NULL;
	JSModuleDef *d = JS_VALUE_GET_PTR(f);
	JS_FreeValue(c, f); /* the context keeps the module */
	return d;
}

/* Compile and start the entry: the promise of the graph's evaluation,
 * *ns its namespace (both owned), or JS_EXCEPTION. */
static JSValue start(JSContext *c, JSRuntime *r, const cc_value *frame, JSValue *ns,
		     const struct cc_js_lib_ops *ops)
{
	const cc_value *file = str_field(frame, "file"), *code = str_field(frame, "code");
	JSValue p = JS_EXCEPTION;
	*ns = JS_UNDEFINED;
	if (!file || !code || !str_field(frame, "global"))
		return JS_ThrowTypeError(c, "malformed module library frame");
	lib_frame = frame;
	JS_SetModuleLoaderFunc(r, lib_normalize, lib_load, NULL);
	JSValue f = JS_Eval(c, code->u.str.ptr, code->u.str.len, file->u.str.ptr,
			    JS_EVAL_TYPE_MODULE | JS_EVAL_FLAG_COMPILE_ONLY);
	if (!JS_IsException(f)) {
		JSModuleDef *d = JS_VALUE_GET_PTR(f);
		/* resolves the imports (lib_normalize, lib_load), all of them
		 * now, then runs the graph: a promise, settled by the jobs */
		p = JS_EvalFunction(c, f);
		if (!JS_IsException(p))
			*ns = JS_GetModuleNamespace(c, d);
	}
	/* only this library's modules, only while it loads */
	JS_SetModuleLoaderFunc(r, ops->deny_name, ops->deny, NULL);
	lib_frame = NULL;
	return p;
}

/* globalThis[frame's "global"] = ns, or its default export when that is
 * all it exports (dayjs's shape). 0, or -1 with the exception set. */
static int install(JSContext *c, const cc_value *frame, JSValueConst ns)
{
	JSPropertyEnum *props = NULL;
	uint32_t n = 0;
	if (JS_GetOwnPropertyNames(c, &props, &n, ns, JS_GPN_STRING_MASK | JS_GPN_ENUM_ONLY) < 0)
		return -1;
	bool only_default = false;
	if (n == 1) {
		const char *k = JS_AtomToCString(c, props[0].atom);
		only_default = k && !strcmp(k, "default");
		JS_FreeCString(c, k);
	}
	for (uint32_t i = 0; i < n; i++)
		JS_FreeAtom(c, props[i].atom);
	js_free(c, props);
	JSValue v = only_default ? JS_GetPropertyStr(c, ns, "default") : JS_DupValue(c, ns);
	if (JS_IsException(v))
		return -1;
	JSValue g = JS_GetGlobalObject(c);
	int rc = JS_SetPropertyStr(c, g, str_field(frame, "global")->u.str.ptr, v);
	JS_FreeValue(c, g);
	return rc < 0 ? -1 : 0;
}

/* Is the exception (borrowed) a SyntaxError: the module did not compile? */
static bool syntax_error(JSContext *c, JSValueConst e)
{
	JSValue n = JS_IsError(c, e) ? JS_GetPropertyStr(c, e, "name") : JS_UNDEFINED;
	const char *s = JS_IsString(n) ? JS_ToCString(c, n) : NULL;
	bool yes = s && !strcmp(s, "SyntaxError");
	JS_FreeCString(c, s);
	JS_FreeValue(c, n);
	return yes;
}

void cc_js_load_module_library(JSContext *c, JSRuntime *r, const cc_value *frame,
			       const struct cc_js_lib_ops *ops, struct cc_outcome *o)
{
	JSValue ns, p = start(c, r, frame, &ns, ops);
	if (JS_IsException(p)) {
		JSValue e = JS_GetException(c);
		ops->fail(o, e, syntax_error(c, e));
		return;
	}
	if (ops->run_jobs(o) == 0) {
		JSPromiseStateEnum st = JS_PromiseState(c, p);
		if (st == JS_PROMISE_REJECTED)
			ops->fail(o, JS_PromiseResult(c, p), false);
		else if (st != JS_PROMISE_FULFILLED)
			cc_outcome_fail(o, CC_ERR_GUEST, "Error",
					"the library's top-level await never settled", NULL);
		else if (install(c, frame, ns) < 0)
			ops->fail(o, JS_GetException(c), false);
		else
			o->ok = true;
	}
	JS_FreeValue(c, ns);
	JS_FreeValue(c, p);
}
