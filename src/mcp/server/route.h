/* Session ids that route to this replica (route.c): with --route-self
 * ADDR and --route-peers ADDR,..., the server picks each new session's id
 * so that nginx's `hash $http_mcp_session_id consistent` over those
 * upstream servers (written exactly as in nginx's upstream block, weight
 * 1 each) sends it here. */
#ifndef CC_MCP_ROUTE_H
#define CC_MCP_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

struct mcp_route;

/* The ring of nginx's consistent hash over peers (a comma-separated list
 * of "host:port", borrowed) with self one of them. Returns NULL after
 * writing why to why[0..cap) (self not among the peers, too many peers,
 * out of memory). */
struct mcp_route *mcp_route_new(const char *peers, const char *self, char *why, size_t cap);

void mcp_route_free(struct mcp_route *r);

/* Does nginx send a request with Mcp-Session-Id: id here (while every
 * peer is up)? r NULL: always true. */
bool mcp_route_mine(const struct mcp_route *r, const char *id, size_t len);

#endif
