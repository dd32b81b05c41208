/* A package's ES module or CommonJS graph, read by the host (lib_graph.c):
 * the entry and every file it loads, found by the specifiers lib_scan.c
 * sees and resolved as Node resolves them (relative files, packages in
 * node_modules through their package.json), every file beneath one
 * directory. Internal to libcodecage (libraries.c). */
#ifndef CC_LIB_GRAPH_H
#define CC_LIB_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codecage.h"

/* At most this many files in one library's graph. */
#define CC_LIB_MODULES_MAX 1024

struct cc_lib_module {
	char *rel;  /* its path beneath the root */
	char *file; /* its name: prefix + rel (the key the others use) */
	char *code; /* NUL-terminated UTF-8 */
	size_t len;
	char **specs, **keys; /* n specifiers as written and the files they name */
	size_t n;
};

struct cc_lib_graph {
	struct cc_lib_module *v; /* v[0] is the entry */
	size_t n, cap;
	size_t bytes; /* of all the code */
};

/* Collect the graph from entry (a file beneath root, a directory
 * descriptor: node_modules itself when root_is_node_modules, else the
 * package's directory), resolving imports (esm) or require() calls. Each
 * file's name is prefix + its path. An ES module import that resolves to
 * nothing is an error; an unresolved require() is left to fail when it
 * runs (a Node built-in, an optional dependency). At most
 * CC_LIB_MODULES_MAX files of max bytes in all. Errors: invalid_input
 * (what names the library), internal. On failure g holds nothing. */
int cc_lib_graph_collect(int root, bool root_is_node_modules, const char *prefix, const char *entry,
			 bool esm, uint64_t max, const char *what, struct cc_lib_graph *g,
			 cc_error *err);

void cc_lib_graph_free(struct cc_lib_graph *g);

/* A CommonJS graph as one classic script (owned, *len bytes) that defines
 * each file as a module function, runs the entry and sets
 * globalThis[global] to its module.exports; each module sees `require`,
 * `module`, `exports`, `__filename`, `__dirname`, and `global` and
 * `process` ({env: {NODE_ENV: "production"}}) unless the guest has them.
 * NULL when out of memory. */
char *cc_lib_cjs_bundle(const struct cc_lib_graph *g, const char *global, size_t *len);

#endif
