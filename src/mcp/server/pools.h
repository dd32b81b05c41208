/* Where a session's runtimes come from (pools.c): a pool of ready
 * sessions per language from a fork server, or cc_runtime_new. */
#ifndef CC_MCP_POOLS_H
#define CC_MCP_POOLS_H

#include <stdbool.h>

#include "server.h"

struct mcp_pools;

/* The options of every runtime of lang (MCP_LANG_*) for cfg: limits,
 * sandbox, files, libraries. Borrows cfg's strings into *o. */
void mcp_runtime_options(const struct mcp_config *cfg, int lang, cc_options *o);

/* With cfg->pool_size, a thread starts both pools now (serving need not
 * wait; a first call waits for its pool's start); a pool that failed is
 * tried again on a later use. cfg is borrowed. NULL when out of memory. */
struct mcp_pools *mcp_pools_new(const struct mcp_config *cfg);

/* Close the pools (their ready sessions); checked-out runtimes live on. */
void mcp_pools_free(struct mcp_pools *p);

/* Ready sessions in lang's pool now; *started: has the pool started. */
unsigned mcp_pools_ready(struct mcp_pools *p, int lang, bool *started);

/* A live runtime for lang (owned by the caller, close with
 * cc_runtime_close) with the network policy and redaction applied: a
 * checkout from the pool (*pooled true), or, without a ready pool within a
 * few seconds, a fresh worker. With n_deps dependencies (borrowed specs),
 * one that has them installed (cc_options.dependencies; forked from the
 * library's shared template for their lock). Thread-safe. Errors: those
 * of cc_runtime_new and cc_runtime_set_net. */
int mcp_runtime_start(struct mcp_server *srv, int lang, const char *const *deps, size_t n_deps,
		      cc_runtime **out, bool *pooled, cc_error *err);

/* A Python runtime's own account of itself for run_python's description
 * ("Python 3.11.2; importable beyond the standard library: numpy 1.24.2,
 * ..."; owned), from a runtime started as any other and closed; NULL when
 * none can start or the probe fails. Takes a checkout (or a start). */
char *mcp_probe_python(struct mcp_server *srv);
/* The probe's Python code (static): what probe.c's cache is keyed on. */
const char *mcp_probe_code(void);

#endif
