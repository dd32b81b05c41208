/* src/mcp/client/: code mode's MCP client (upstream*.c, stubs.c). It may
 * include src/common/ and the public headers; the MCP server includes it.
 *
 * Code mode: other MCP servers ("upstreams") whose tools become functions
 * in the guest, tools.SERVER.TOOL. codecage is their MCP client
 * (upstream.c: the process, framing, requests; upstream_http.c:
 * streamable HTTP; upstream_bind.c: binding
 * their tools on a runtime and the per-call budget; stubs.c: what a model
 * reads about them). An upstream is started once, when the server starts,
 * and shared by every session; its process, environment and
 * configuration stay in the host: the guest only names a tool and gets
 * its result through the supervisor's call frames.
 *
 * Threads: every function here is thread-safe. */
#ifndef CC_MCP_UPSTREAM_H
#define CC_MCP_UPSTREAM_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "codecage.h"
#include "message.h"

/* How long starting an upstream may take (initialize, tools/list), s. */
#define MCP_UPSTREAM_START_S 15.0
/* The largest message an upstream may send, bytes; a longer one is a
 * protocol violation: the upstream is stopped (and restarted on the next
 * call). */
#define MCP_UPSTREAM_MAX_MESSAGE (8u << 20)
/* How an answer too deep for the JSON parser (jansson) is described: it
 * cannot be parsed, so the request it answers is told this instead of
 * waiting for its deadline. */
#define MCP_UP_STR_(x) #x
#define MCP_UP_STR(x) MCP_UP_STR_(x)
#define MCP_UPSTREAM_TOO_DEEP                                                                      \
	"was nested deeper than " MCP_UP_STR(JSON_PARSER_MAX_DEPTH) " levels, more than the JSON " \
								    "parser takes"

/* With more upstream tools than this in all, the run tools' descriptions
 * list none and a search_tools tool finds them instead. */
#define MCP_UPSTREAM_LIST_MAX 24

struct mcp_upstream;

/* One upstream tool as the guest sees it. */
struct mcp_up_tool {
	struct mcp_upstream *up;
	char *guest; /* "SERVER.TOOL" (TOOL made an identifier), owned */
	char *name;  /* the upstream's own name, owned */
	json_t *def; /* its tools/list entry (owned reference) */
};

/* Parse one --upstream value, NAME=COMMAND ARG... (split as a shell splits
 * words: quotes and backslashes, no expansion) or NAME=http(s)://...
 * (streamable HTTP, upstream_http.c). NAME is an identifier. Returns a new
 * upstream (not started), or NULL with *why set (static text). */
struct mcp_upstream *mcp_upstream_parse(const char *spec, const char **why);

/* Limit the upstream's calls within one tools/call (UINT64_MAX = only
 * the shared budget). */
void mcp_upstream_set_max_calls(struct mcp_upstream *u, uint64_t max_calls);

const char *mcp_upstream_name(const struct mcp_upstream *u);
uint64_t mcp_upstream_max_calls(const struct mcp_upstream *u);

/* Start it: spawn, initialize, tools/list (each answer waited for up to
 * MCP_UPSTREAM_START_S, on the calling thread: never an eval's). Returns
 * 0, or -1 with *why an owned message naming the upstream ("upstream X:
 * it exited (status 1) during initialize"). Safe to call again (a
 * restart) once it died. */
int mcp_upstream_start(struct mcp_upstream *u, char **why);

/* Its tools (borrowed; fixed at the first start: tools/list_changed is
 * not followed). */
const struct mcp_up_tool *mcp_upstream_tools(const struct mcp_upstream *u, size_t *n);

/* Stop the process, fail pending calls, free. NULL is fine. */
void mcp_upstream_free(struct mcp_upstream *u);

/* Send tools/call for tool t with input (a JSON object, borrowed) and
 * answer call when the upstream replies (cc_tool_call_return with its
 * structuredContent, else its text, JSON-parsed when it is JSON; an
 * isError result fails it as "UpstreamToolError" with the text). Returns
 * at once, never waiting for the upstream: the request is queued (stdio),
 * or made by a thread of its own (HTTP, and any call to an upstream that
 * is not running, which that thread starts again first). When the start
 * fails, the upstream is not reading (16 MiB wait for it already), or it
 * dies before it answers, the call fails as "UpstreamError". When the eval
 * ends first (deadline, interrupt) the request is cancelled upstream
 * (notifications/cancelled). Takes call. */
void mcp_upstream_call(const struct mcp_up_tool *t, json_t *input, cc_tool_call *call);

/* ---- upstream_bind.c ---- */

/* A tools/call's own counters, one per upstream (the per-upstream limit;
 * the total is a cc_budget set on the runtime). */
struct mcp_up_counts {
	uint64_t *made; /* [n_upstreams], owned */
	size_t n;
};

/* Bind every tool of ups[0..n) on rt as "SERVER.TOOL" (async, keyword
 * arguments), unredacted (the guest sees their error texts). Errors: as
 * cc_runtime_bind_tool_async_kw. */
int mcp_upstreams_bind(struct mcp_upstream *const *ups, size_t n, cc_runtime *rt, cc_error *err);

/* Around one eval on the calling thread: counts (borrowed, zeroed here) is
 * what this thread's upstream calls count against until _end. */
void mcp_upstreams_begin_for(struct mcp_up_counts *counts, struct mcp_upstream *const *ups,
			     size_t n);
void mcp_upstreams_end(void);

/* One tools/call's code mode, around everything it runs on rt on this
 * thread (the evals that make its files' folders too): a fresh budget of
 * max_calls upstream calls set on rt and zeroed per-upstream counters.
 * NULL when there are no upstreams (or out of memory: then the budget in
 * force stays, the exhausted one of mcp_code_idle). mcp_code_end (NULL is
 * fine) sets an exhausted budget again and frees run. */
struct mcp_code_run;
struct mcp_code_run *mcp_code_begin(struct mcp_upstream *const *ups, size_t n, uint64_t max_calls,
				    cc_runtime *rt);
void mcp_code_end(struct mcp_code_run *run, cc_runtime *rt);

/* Between tools/calls: an exhausted budget on rt (when there are
 * upstreams), so no guest code run outside a call reaches one. Set on a
 * runtime as it starts; mcp_code_end sets it again. Out of memory: the
 * budget in force stays. */
void mcp_code_idle(cc_runtime *rt, size_t n_upstreams);

/* ---- stubs.c ---- */

/* TypeScript declarations (lang 1, run_javascript) or Python stubs (lang
 * 0) of the tools of ups[0..n) whose guest name or description contains
 * query (case-insensitive; NULL = all), appended to b. Returns how many
 * tools matched. Schemas nested deeper than 6 levels render as unknown /
 * Any; a description is cut to 600 bytes. */
size_t mcp_stubs(struct cc_buf *b, struct mcp_upstream *const *ups, size_t n, int lang,
		 const char *query);

/* Tools of all upstreams together. */
size_t mcp_upstreams_tool_count(struct mcp_upstream *const *ups, size_t n);

#endif
