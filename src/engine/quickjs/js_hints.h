/* What JavaScript's errors add for a model to act on (js_hints.c): the
 * setting that provides a missing global, why an import failed, that the
 * code looks like Python. Worker side; pure text work on the outcome. */
#ifndef CC_WORKER_JS_HINTS_H
#define CC_WORKER_JS_HINTS_H

#include <stddef.h>

#include "worker.h"

/* msg (heap, taken; may be NULL) of an error of type type, with what is
 * missing said when it is a ReferenceError for fetch (no network policy:
 * allow_net) or for fs or require (no scratch and no mount). Returns the
 * new heap text, or msg unchanged (also when out of memory). */
char *cc_js_name_hint(const char *type, char *msg);

/* A syntax_error outcome o (anything else is left alone) for code[0..len)
 * says what the parser could not: that an import declaration is refused
 * (there are no modules), that the code looks like Python. */
void cc_js_syntax_hint(struct cc_outcome *o, const char *code, size_t len);

/* import()'s TypeError (static text): modules are not available, and
 * whether fs is in this session. */
const char *cc_js_no_modules_text(void);

#endif
