/* npm packages as the library loader reads them (src/lib/lib_pkg.c):
 * files beneath a directory, package.json and its "exports" conditions.
 * Internal to libcodecage: libraries.c resolves an entry, lib_graph.c a
 * module graph. Every file is opened beneath a directory descriptor
 * (openat2 RESOLVE_BENEATH), so a symlink or ".." cannot lead out. */
#ifndef CC_LIB_PKG_H
#define CC_LIB_PKG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "codecage.h"

/* Largest package.json read, bytes. */
#define CC_PACKAGE_JSON_MAX (1u << 20)

/* openat2(dir, rel, flags) beneath dir: -1 with errno (EXDEV: out of it). */
int cc_lib_open_beneath(int dir, const char *rel, int flags);

/* Read a regular file of at most max bytes into a NUL-terminated buffer
 * (*out, owned; *len its bytes): path itself when dir < 0, else rel
 * beneath dir (path is then only the name messages give, after what).
 * Errors: invalid_input (missing, out of its directory, not a regular
 * file, over max: the message names max_source), internal. */
int cc_lib_read(int dir, const char *rel, const char *path, uint64_t max, const char *what,
		char **out, size_t *len, cc_error *err);

/* Is rel a regular file (a directory) beneath dir? */
bool cc_lib_is_file(int dir, const char *rel);
bool cc_lib_is_dir(int dir, const char *rel);

/* The package.json of the package directory pkg (beneath dir; "" or "."
 * for dir itself) as a JSON object (owned), or NULL with *out NULL when
 * there is none. Errors: invalid_input (not a JSON object, too big). */
int cc_lib_package_json(int dir, const char *pkg, const char *what, json_t **out, cc_error *err);

/* What package.json's "exports" gives for subpath ("." or "./x") under the
 * conditions conds (NULL-terminated, in order of preference; nested
 * condition objects are followed, "types" never taken): a string of pkg
 * (borrowed) or NULL. An array gives its first string. */
const char *cc_lib_exports(json_t *pkg, const char *subpath, const char *const *conds);

/* Each file "exports" gives for "." under each of conds in turn (the
 * first condition that names one, then the next ...: a candidate per
 * top-level condition, nested ones followed with all of conds), at most
 * max of them into out (borrowed from pkg). Returns how many. */
size_t cc_lib_exports_each(json_t *pkg, const char *const *conds, const char **out, size_t max);

/* Conditions for a script a <script> tag runs, for an ES module graph, for
 * a CommonJS graph. */
extern const char *const cc_lib_conds_script[], *const cc_lib_conds_import[],
							*const cc_lib_conds_require[];

/* "a/./b/../c" as "a/c" (owned); NULL when out of memory, when it climbs
 * above its start or is absolute. */
char *cc_lib_normpath(const char *path);

/* path joined to a relative rel, normalized (cc_lib_normpath). */
char *cc_lib_join(const char *path, const char *rel);

/* Does the text look like a script a <script> tag runs as a global: an
 * IIFE or UMD wrapper (after comments and a "use strict" it starts with
 * '(', '!' or ';'), an IIFE assigned to a global (`var NAME = (`, as
 * esbuild's iife format writes it), or a UMD header (AMD's define.amd
 * tested in its first 2 KiB)? */
bool cc_lib_looks_global(const char *code);

#endif
