/* The module specifiers a JavaScript file names (src/lib/lib_scan.c), for
 * the library loader's module graphs (libraries.c, lib_graph.c). Pure. */
#ifndef CC_LIB_SCAN_H
#define CC_LIB_SCAN_H

#include <stddef.h>

enum cc_js_dep {
	CC_JS_IMPORT,  /* import ... from 'x', import 'x', export ... from 'x' */
	CC_JS_REQUIRE, /* require('x'), not a property's require */
};

/* Called with each specifier's text as written (no quotes; borrowed from
 * the code); a return < 0 stops the scan. */
typedef int (*cc_js_found_fn)(void *user, enum cc_js_dep kind, const char *spec, size_t len);

/* Calls found for every static import or re-export specifier and every
 * require('...') call with one string argument in code[0..len), in order,
 * outside comments, strings, template literals and regular expressions
 * (import('x') and import.meta are not static imports). The scan is of
 * tokens, not a parse: a require or import that only looks like one in an
 * odd place may be reported, never one inside a literal. Returns 0, or -1
 * when found stopped it. */
int cc_js_scan(const char *code, size_t len, cc_js_found_fn found, void *user);

#endif
