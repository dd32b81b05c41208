/* run_python's account of the packages its guest can import (pools.c's
 * mcp_probe_python, about 2 s), taken when the server starts, on a thread
 * of its own, and kept on disk per interpreter and package set (probe.c). */
#ifndef CC_MCP_PROBE_H
#define CC_MCP_PROBE_H

#include "server.h"

struct mcp_probe;

/* Start the probe for srv (borrowed, outlives it): read from the cache
 * when the interpreter and the package set are those it was taken for,
 * else probed on a thread now. NULL when out of memory. */
struct mcp_probe *mcp_probe_start(struct mcp_server *srv);

/* The account (owned; NULL when the probe failed), waiting for the probe
 * to finish. */
char *mcp_probe_result(struct mcp_probe *p);

/* Wait for the probe's thread and free it (NULL is fine). */
void mcp_probe_free(struct mcp_probe *p);

#endif
