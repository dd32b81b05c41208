/* The guest's `fs` module and `require` (js_fs.c, js_fs_boot.c) and the
 * rewrite that lets a script `import` it (js_import.c). Worker side only,
 * used by engine_js.c. */
#ifndef CC_WORKER_JS_FS_H
#define CC_WORKER_JS_FS_H

#include <stddef.h>

#include "js_value.h"

/* Define the globals `fs` (fs.promises too) and `require` ('fs',
 * 'node:fs', 'fs/promises', 'node:fs/promises'; anything else throws an
 * Error with code MODULE_NOT_FOUND). Call once at init, before any guest
 * code. Returns 0, or -1 with a JS exception pending. */
int cc_js_fs_install(JSContext *ctx);

/* The JavaScript half of fs (js_fs_boot.c): the source of a function
 * that takes the natives object and returns the fs object. */
extern const char cc_js_fs_boot[];

/* The script `code` (len bytes) with each top-level static import of fs
 * ("import fs from 'fs'", "import * as fs from 'node:fs'",
 * "import { readFileSync as r } from 'fs'", "import fs, { x } from 'fs'")
 * turned into the equivalent `var ... = require(...)`, on the same line,
 * so that positions in later errors stay true. Returns a malloc'd,
 * NUL-terminated copy (its length in *out_len), or NULL when no such
 * import was found or memory ran out. Meant for a script that failed to
 * compile: a valid script is never rewritten. */
char *cc_js_rewrite_imports(const char *code, size_t len, size_t *out_len);

#endif
