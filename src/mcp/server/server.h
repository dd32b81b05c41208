/* src/mcp/server/: the MCP server (`codecage mcp`): JSON-RPC, sessions,
 * tools, transports, pools, metrics. It may include src/mcp/client/,
 * src/frontend/, src/common/ and the public headers; the CLI includes it
 * to start the server.
 *
 * The MCP server's core, shared by both transports: configuration,
 * sessions (one runtime per language each), the tools and the dispatch of
 * MCP methods. The transports (stdio.c, http.c) only move bytes and call
 * in here. Uses only the public API of libcodecage (codecage.h).
 *
 * Threads: every function here is thread-safe. A session's tools/calls run
 * one at a time (a per-session lock); different sessions never wait on one
 * another; notifications/cancelled and DELETE interrupt a running call
 * from another thread with cc_runtime_interrupt. */
#ifndef CC_MCP_SERVER_H
#define CC_MCP_SERVER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "codecage.h"
#include "deps_flags.h"
#include "jsonrpc.h"

/* Flags of `codecage mcp`; main.c fills the defaults named here. */
struct mcp_config {
	double timeout_s;	 /* default and largest per-call deadline, s; 30 */
	uint64_t memory_mib;	 /* engine heap per runtime, MiB; 0 = the library default */
	cc_sandbox_mode sandbox; /* require */
	unsigned max_sessions;	 /* HTTP sessions at once; 64 */
	double idle_timeout_s;	 /* a session idle this long is reaped, s; 600 */
	size_t max_request;	 /* bytes of one JSON-RPC message; 4 MiB */
	uint64_t max_output;	 /* captured stdout and stderr, each, bytes; 64 KiB */
	/* --max-result BYTES: a result value, encoded (also each input); 1 MiB */
	uint64_t max_result;
	uint32_t cpu_s;		    /* --cpu: RLIMIT_CPU per runtime, s; 0 = library default */
	uint32_t max_open_files;    /* --max-open-files; 0 = library default (64) */
	uint64_t max_file_size_mib; /* --max-file-size MIB; 0 = library default */
	const char *http;	    /* "HOST:PORT" for streamable HTTP; NULL = stdio */
	const char *libraries[64];  /* --library: loaded into every JavaScript runtime */
	size_t n_libraries;
	const char *node_modules; /* --node-modules */
	bool web_polyfills;	  /* run_javascript runtimes start with WEB_POLYFILLS; false */
	/* --scratch MIB: each runtime of a session gets a private tmpfs of
	 * this size on /tmp; 0 = none. Default 64. */
	uint64_t scratch_mib;
	/* --mount HOST:GUEST[:rw|:ro], repeatable: the grants every runtime
	 * gets (strings point into argv). */
	cc_mount mounts[CC_MAX_MOUNTS];
	size_t n_mounts;
	const char **allow_net; /* --allow-net entries (argv strings); NULL = none */
	size_t n_allow_net;
	const char *ca_file; /* --ca-file; NULL = the system store */
	/* --python-path DIR, repeatable: package folders every Python runtime
	 * imports from (cc_options.python_path; strings point into argv). */
	const char *python_path[CC_MAX_PYTHON_PATH];
	size_t n_python_path;
	/* --pool N: ready sessions kept per language, each pool from a fork
	 * server started on the language's first use; 0 = a fresh worker
	 * for every runtime. Default 2. */
	unsigned pool_size;
	/* --fork-max-sessions N: the most sessions each language's fork server
	 * (its pool's) holds at once, checked out ones included
	 * (cc_options.max_sessions); past it a new runtime is refused with a
	 * tool error naming the flag. 0 = the library's default (1024). */
	unsigned fork_max_sessions;
	/* --auth-token-file: the bearer token every HTTP request must carry
	 * (owned, read at start); NULL = no authentication (loopback only). */
	char *auth_token;
	/* --route-self/--route-peers (route.h): new session ids are chosen
	 * so that nginx's consistent hash on Mcp-Session-Id sends them here;
	 * owned by main.c; NULL = any id. */
	struct mcp_route *route;
	/* --upstream (code mode, upstream.h): started before serving, shared
	 * by every session, bound on every runtime as tools.NAME.TOOL. */
	struct mcp_upstream **upstreams;
	size_t n_upstreams;
	uint64_t max_tool_calls; /* --max-tool-calls: upstream calls per tools/call; 50 */
	/* --allow-dependencies and the --deps-* policy (frontend/deps_flags.h): the
	 * tools' dependencies argument and PEP 723 blocks */
	struct cc_deps_flags deps;
};

/* Sink for the messages one incoming message produces (notifications
 * first, then at most one response). emit borrows json (one JSON-RPC
 * message, no newline) and may be called from any thread. */
struct mcp_sink {
	void (*emit)(void *ctx, const char *json, size_t len);
	void *ctx;
};

struct mcp_server;
struct mcp_session;
struct mcp_call;

/* A server for cfg (borrowed; must outlive the server). Starts the reaper
 * thread. Returns NULL when out of memory or a thread cannot start. */
struct mcp_server *mcp_server_new(const struct mcp_config *cfg);

/* Closes every session (interrupting running calls), stops the reaper,
 * frees the server. Call only when no transport thread uses it any more. */
void mcp_server_free(struct mcp_server *srv);

const struct mcp_config *mcp_server_config(const struct mcp_server *srv);

/* The server's runtime pools (pools.h) and counters (metrics.h), borrowed
 * for the server's life; and how many sessions are open now. */
struct mcp_pools *mcp_server_pools(struct mcp_server *srv);
struct mcp_metrics *mcp_server_metrics(struct mcp_server *srv);
unsigned mcp_server_session_count(struct mcp_server *srv);

/* A new session, registered under a fresh random id, with one reference
 * for the caller. limited: count it against max_sessions (HTTP). Returns
 * NULL when max_sessions are open (or out of memory). */
struct mcp_session *mcp_session_new(struct mcp_server *srv, bool limited);

/* The session with that id, with a new reference, or NULL (never issued,
 * closed or reaped). Marks it used now. */
struct mcp_session *mcp_session_find(struct mcp_server *srv, const char *id);

/* Drop a reference; the last one frees the session and closes its
 * runtimes. NULL is fine. */
void mcp_session_unref(struct mcp_session *s);

/* End a session now (HTTP DELETE, a failed initialize): unregister it so
 * it cannot be found again and interrupt its running call. The caller's
 * reference stays valid until mcp_session_unref. */
void mcp_session_close(struct mcp_server *srv, struct mcp_session *s);

/* The session's id: 32 hex digits (borrowed, lives as long as s). */
const char *mcp_session_id(const struct mcp_session *s);

/* The session's GET event stream (events.h), borrowed for s's life. */
struct mcp_events *mcp_session_events(struct mcp_session *s);

/* Has the session answered initialize? */
bool mcp_session_initialized(struct mcp_session *s);

/* Interrupt every running call of every session (stdin closed, shutdown). */
void mcp_server_interrupt_all(struct mcp_server *srv);

/* Handle one parsed message for session s (takes ownership of *m, clears
 * it). Responses and notifications go to sink. A tools/call runs here, on
 * the calling thread, for up to its deadline; everything else is quick.
 * Responses from the client are ignored. */
void mcp_handle(struct mcp_server *srv, struct mcp_session *s, struct jsonrpc_msg *m,
		const struct mcp_sink *sink);

/* Split form of mcp_handle for a tools/call that runs on another thread
 * (stdio): mcp_call_begin registers the call at once, so that a
 * notifications/cancelled read before the call starts still finds it; it
 * takes ownership of *m. Returns NULL when m is not a tools/call request,
 * leaving m alone. mcp_call_run runs it (on any thread), sends the
 * response to sink unless the call was cancelled, and frees the call. */
struct mcp_call *mcp_call_begin(struct mcp_session *s, struct jsonrpc_msg *m);
/* The methods that run in the session's turn through mcp_call_begin and
 * mcp_call_run: tools/call, resources/list, resources/read (the file API
 * they use works between evals only). */
bool mcp_queued_method(const char *method);
void mcp_call_run(struct mcp_server *srv, struct mcp_call *c, const struct mcp_sink *sink);

/* ---- displays.c: a result's displays as content blocks ---- */

/* Append ",{block}" for each display of r (NULL: none) to o, the content
 * array being written: image blocks (PNG, SVG), embedded text resources
 * (HTML, JSON), text blocks (plain text). */
void mcp_display_blocks(struct cc_buf *o, const cc_result *r);

/* ---- tools_text.c: what a model reads ---- */

/* The MCP tools/call result object (JSON text, owned) for one eval:
 * content (one text block a model reads well), structuredContent {status,
 * value, stdout, stderr, error, duration_ms, note} and isError. r may be
 * NULL when no eval ran (err says why; a CC_ERR_INTERNAL message is
 * replaced by a generic one: it may hold host paths). note (may be NULL)
 * goes first in the text and in structuredContent.note. Returns NULL when
 * out of memory. files (may be NULL) lists what the call created or
 * changed: structuredContent.files and a "files:" section. */
struct mcp_files_out {
	const char *json; /* JSON array of {path, size}, or NULL (no listing) */
	const char *text; /* "  PATH (N bytes)" lines, or NULL */
	/* the runtime's dependencies (mcp_deps_result), or NULL: none */
	const char *deps_json, *deps_text;
};
char *mcp_render_result(const cc_result *r, const cc_error *err, const char *note,
			const struct mcp_files_out *files, size_t *len);

/* The tools/list result ({"tools": [...]}, owned) for cfg's limits; with
 * upstreams, the run tools' descriptions carry their stubs, or (over
 * MCP_UPSTREAM_LIST_MAX tools) a search_tools tool is listed too. py_env
 * (may be NULL): what mcp_probe_python found, added to run_python's
 * description. */
json_t *mcp_tools_list(const struct mcp_config *cfg, const char *py_env);

/* search_tools' result for arguments args (owned JSON text of a
 * tools/call result), or NULL with *bad (static) for bad arguments. */
char *mcp_search_tools(const struct mcp_config *cfg, const json_t *args, const char **bad);

/* The outputSchema shared by both tools (owned). */
json_t *mcp_output_schema(void);

/* CLI entry point of `codecage mcp` (main.c): parses argv (argv[1] is
 * "mcp"), serves until stdin closes (stdio) or SIGINT/SIGTERM (HTTP).
 * Returns the process exit status: 0, or 2 for usage errors, 1 when the
 * HTTP server cannot start. */
int cc_mcp_main(int argc, char **argv);

/* Transports: serve until done; return an exit status. */
int mcp_serve_stdio(struct mcp_server *srv);
int mcp_serve_http(struct mcp_server *srv);

#endif
