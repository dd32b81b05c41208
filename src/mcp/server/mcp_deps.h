/* A call's dependencies (deps.c): which packages its runtime must have. */
#ifndef CC_MCP_DEPS_H
#define CC_MCP_DEPS_H

#include "session.h"

/* Check arguments.dependencies (a list of at most CC_MAX_DEPENDENCIES
 * non-empty strings): NULL when fine, else the reason (static). */
const char *mcp_deps_check_arg(const json_t *v);

struct mcp_call_deps {
	const char **specs; /* arguments.dependencies, then the PEP 723 block's; borrowed */
	size_t n;
	char **block; /* the block's (owned) */
	char *set;    /* the sorted, distinct specs, each ending in '\n' (owned); NULL: none */
};

/* The dependencies of a call of lang (MCP_LANG_*): arg (its
 * arguments.dependencies, checked, or NULL) and, for Python, the code's
 * PEP 723 block. Errors: invalid_input (the server was not started with
 * --allow-dependencies and the call asks for packages: the message says
 * so; a bad block), internal. */
int mcp_deps_of_call(const struct mcp_config *cfg, int lang, const json_t *arg, const char *code,
		     size_t len, struct mcp_call_deps *d, cc_error *err);
void mcp_call_deps_free(struct mcp_call_deps *d);

/* A set (mcp_call_deps.set) as specs: *specs a heap array whose first
 * entry owns the text (free((void *)(*specs)[0]) when *n, then
 * free(*specs)); NULL/0 for a NULL set. -1 when out of memory. */
int mcp_deps_split(const char *set, const char ***specs, size_t *n);

/* The result's account of rt's dependencies: *json an object {key,
 * packages, cached, log} and *text the "dependencies:" section (both
 * owned; NULL when rt has none). started: this call started the runtime
 * (the log is the install's); otherwise only what it holds. */
void mcp_deps_result(const cc_runtime *rt, bool started, char **json, char **text);

#endif
