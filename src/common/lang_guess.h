/* Guessing, from source text that failed to parse, whether it was written
 * for the other language, so a syntax error can say so. Pure helpers, no
 * I/O; heuristics on line starts, used only to add a hint to a message. */
#ifndef CC_COMMON_LANG_GUESS_H
#define CC_COMMON_LANG_GUESS_H

#include <stdbool.h>
#include <stddef.h>

/* A line that reads as Python and not as JavaScript: `import math` (no
 * quotes), `from x import y`, `def f(...):`, `class C:`, `elif ...:`, a
 * block header ending in ':' (if/for/while/with/try/else/except/finally).
 * Borrows src (len bytes, any content). */
bool cc_looks_like_python(const char *src, size_t len);

/* A line that reads as JavaScript and not as Python: starting with
 * const/let/var/function/console., or holding "=>", "===" or "!==". */
bool cc_looks_like_javascript(const char *src, size_t len);

/* A JavaScript import declaration (`import x from 'm'`, `import {a} from`,
 * `import * as`, `import 'm'`) at a line's start, as opposed to import()
 * or import.meta. */
bool cc_has_static_import(const char *src, size_t len);

/* The hint a syntax error gets for each case (static text). */
#define CC_HINT_LOOKS_PYTHON                                                                       \
	" (this runtime runs JavaScript and the code looks like Python: run it in a Python "       \
	"runtime)"
#define CC_HINT_LOOKS_JAVASCRIPT                                                                   \
	" (this runtime runs Python and the code looks like JavaScript: run it in a "              \
	"JavaScript runtime)"
#define CC_HINT_STATIC_IMPORT                                                                      \
	"import declarations are not available but for fs (import fs from 'fs'): modules are "     \
	"not available in the sandbox (dynamic import() is refused too): use the built-in "        \
	"globals, the global fs, or a host tool for what the host has"

#endif
