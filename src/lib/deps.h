/* Dependencies (cc_options.dependencies), supervisor side: deps.c keeps
 * the installed locks, applies them to a runtime's options and checks a
 * PEP 723 block at eval; deps_run.c runs the helper that resolves and
 * installs (src/lib/deps_helper.py, codecage-deps). */
#ifndef CC_LIB_DEPS_H
#define CC_LIB_DEPS_H

#include <jansson.h>

#include "supervisor.h"

/* The helper's file name, beside the workers. */
#define CC_DEPS_HELPER "codecage-deps"

/* Run the helper with request (JSON text, borrowed) for at most
 * timeout_s seconds (then its process group is killed); *answer is its
 * JSON object (owned). Errors: invalid_input (past the timeout; no guest
 * interpreter on the host), internal (no helper, no answer). */
int cc_deps_run(const char *request, double timeout_s, json_t **answer, cc_error *err);

/* A runtime's options with their dependencies applied: o is the caller's
 * with dependencies cleared and, for Python, the installed folder added
 * to python_path (pp holds the array); d the lock (a reference, NULL when
 * none was asked for). */
struct cc_deps_opts {
	cc_options o;
	const char *pp[CC_MAX_PYTHON_PATH];
	cc_deps *d;
};

/* Resolve in->dependencies (cc_deps_resolve) into *out. Borrows in; out
 * borrows in's strings. Errors: those of cc_deps_resolve; invalid_input
 * when python_path has no room left for the folder. */
int cc_deps_apply(const cc_options *in, struct cc_deps_opts *out, cc_error *err);
/* Drop out's reference. */
void cc_deps_opts_done(struct cc_deps_opts *out);

/* The policy's ranges (cc_options_check's part for cc_options.deps).
 * Errors: invalid_input naming the field. */
int cc_deps_options_check(const cc_deps_options *p, cc_error *err);

/* Another reference to d (NULL gives NULL). */
cc_deps *cc_deps_ref(cc_deps *d);

/* JavaScript: the installed node_modules, and the packages to load from
 * it in order (the requested ones, each after its peerDependencies). */
const char *cc_deps_node_modules(const cc_deps *d);
const char *const *cc_deps_load(const cc_deps *d, size_t *n);

/* cc_runtime_eval's check of Python code with a PEP 723 block: every
 * package it names must be one rt was started with. 0, or -1 with err
 * (invalid_input naming the package and the options that add it). */
int cc_deps_check_script(const cc_runtime *rt, const char *code, size_t len, cc_error *err);

#endif
