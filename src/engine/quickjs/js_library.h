/* ES module libraries in the JavaScript worker (js_library.c). */
#ifndef CC_WORKER_JS_LIBRARY_H
#define CC_WORKER_JS_LIBRARY_H

#include "js_value.h"

/* What the engine lends the loader: its failure report and job runner
 * (engine_js.c's js_fail, js_run_jobs) and the loader that refuses every
 * module, put back once the library has loaded. */
struct cc_js_lib_ops {
	void (*fail)(struct cc_outcome *o, JSValue exc, bool compiling);
	int (*run_jobs)(struct cc_outcome *o);
	JSModuleNormalizeFunc *deny_name;
	JSModuleLoaderFunc *deny;
};

/* Load the ES module library frame: compile its entry module ("file",
 * "code") with its imports served from frame's "imports" and "modules"
 * (each {file, code, imports}) and from nothing else, run it and the jobs
 * until its promise settles, then set globalThis[frame's "global"] to its
 * namespace, or to its default export when that is its only export. o is
 * ok, or failed as an eval fails (a SyntaxError as syntax_error). */
void cc_js_load_module_library(JSContext *c, JSRuntime *r, const cc_value *frame,
			       const struct cc_js_lib_ops *ops, struct cc_outcome *o);

#endif
