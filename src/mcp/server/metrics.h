/* Counters of what the server does, for GET /metrics (metrics.c). */
#ifndef CC_MCP_METRICS_H
#define CC_MCP_METRICS_H

#include <stdbool.h>

#include "server.h"

/* Outcome kinds of a tools/call beyond the library's error kinds (which
 * come first, CC_OK = "ok"): bad arguments (-32602) and a call cancelled
 * or aborted before it answered. */
enum {
	MCP_OUTCOME_INVALID_PARAMS = CC_ERR_KIND_COUNT,
	MCP_OUTCOME_CANCELLED,
	MCP_OUTCOMES
};

struct mcp_metrics;

/* Zeroed counters; NULL when out of memory. Free with free(). */
struct mcp_metrics *mcp_metrics_new(void);

/* A runtime of lang (MCP_LANG_*) started: from the pool or not; replaced:
 * it took the place of one that ended (reset, crash, kill, reaping).
 * Thread-safe; m may be NULL. */
void mcp_metrics_runtime(struct mcp_metrics *m, int lang, bool pooled, bool replaced);

/* A tools/call ended after seconds: lang (MCP_LANG_*, or -1 for an
 * unknown tool) and outcome (a cc_error_kind or MCP_OUTCOME_*).
 * Thread-safe; m may be NULL. */
void mcp_metrics_call(struct mcp_metrics *m, int lang, int outcome, double seconds);

/* The Prometheus text exposition (version 0.0.4) of srv's counters,
 * sessions and pools (owned, NUL-terminated); NULL when out of memory. */
char *mcp_metrics_render(struct mcp_server *srv);

#endif
