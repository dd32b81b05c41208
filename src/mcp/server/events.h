/* A session's server-to-client event stream (events.c): the GET /mcp
 * text/event-stream of the 2025-06-18 streamable HTTP transport. While
 * one is open, the notifications of calls that answered as plain JSON (and
 * any other notification not tied to a request) go there instead of being
 * dropped. */
#ifndef CC_MCP_EVENTS_H
#define CC_MCP_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

/* Messages queued for a slow reader; older ones are dropped past this. */
#define MCP_EVENTS_MAX 256

struct mcp_events;

/* An empty queue with no stream open; NULL when out of memory. */
struct mcp_events *mcp_events_new(void);
void mcp_events_free(struct mcp_events *e);

/* Claim the stream: false when one is open already (one per session). */
bool mcp_events_open(struct mcp_events *e);
/* The stream ended (its reader is gone): queued messages are dropped. */
void mcp_events_release(struct mcp_events *e);

/* Queue one JSON-RPC message (copied) when a stream is open; returns
 * whether it was taken. Thread-safe. */
bool mcp_events_push(struct mcp_events *e, const char *json, size_t len);

/* End the stream for good (the session closed, server shutdown): a
 * waiting reader wakes and ends. */
void mcp_events_close(struct mcp_events *e);

/* For the stream's reader: up to max bytes of SSE text into buf, waiting
 * up to wait_s for a message (a ": keep-alive" comment when none came).
 * Returns the bytes written, or -1 when the stream is closed. */
long mcp_events_read(struct mcp_events *e, char *buf, size_t max, double wait_s);

#endif
