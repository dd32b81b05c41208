/* src/polyfills/: WEB_POLYFILLS, the browser basics a JavaScript runtime
 * gets with cc_options.web_polyfills (README "Web polyfills"). It owns the
 * pieces, one JavaScript file each (00-base.js ... 99-end.js, joined in
 * name order by scripts/embed-text.py into the generated
 * web_polyfills_js.c), and cc_web_polyfills (codecage.h), the call that
 * hands the joined text out: the JavaScript worker runs that text
 * (src/engine/quickjs/js_web.c) and the Python package's WEB_POLYFILLS is
 * the same text, read from libcodecage. It may include the public headers
 * (include/) and nothing else; the QuickJS engine includes it, and
 * polyfills.c is linked into libcodecage. */
#ifndef CC_POLYFILLS_H
#define CC_POLYFILLS_H

#include <stddef.h>

/* web_polyfills_js.c (generated): the pieces joined, NUL-terminated;
 * the length leaves the NUL out. */
extern const char cc_web_polyfills_js[];
extern const size_t cc_web_polyfills_js_len;

#endif
