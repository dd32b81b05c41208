/* Internals shared by upstream.c (start, requests, calls, cancellation)
 * and upstream_read.c (the reader and the answers): one upstream's state
 * and its pending requests. Not for other files: they use upstream.h. */
#ifndef CC_MCP_UPSTREAM_INT_H
#define CC_MCP_UPSTREAM_INT_H

#include <pthread.h>

#include "upstream.h"

/* Bytes queued for one upstream's stdin at most: a message that would go
 * over is refused at once (the upstream is not reading). Answers to the
 * upstream's own requests (ping) stop at the smaller cap: an upstream
 * that floods requests and never reads the answers gets no more. */
#define MCP_UPSTREAM_QUEUE_MAX (2 * MCP_UPSTREAM_MAX_MESSAGE)
#define MCP_UPSTREAM_ANSWERS_MAX (1u << 20)

/* A request waiting for its response: a guest's call, or a waiter of
 * request() (call == NULL).
 *
 * Who owns it: a waiter's entry belongs to request(); anyone else only
 * unlinks it and marks it done, under the lock. A call's entry belongs to
 * whoever unlinks it under the lock (the reader with the answer,
 * fail_all, on_cancel, a failed send or start): that one answers the call, then
 * frees the entry. The call's cancel hook (on_cancel) has the entry as
 * its data: an answer from another thread waits until a running hook
 * returned (cc_tool_call_on_cancel), so the entry is never freed under
 * it. Whoever holds only an id looks the entry up by id (ids never
 * repeat; an address may). */
struct up_pending {
	int64_t id;
	cc_tool_call *call;
	json_t *reply;	 /* waiter: the response (owned) once done */
	const char *why; /* waiter: done without a usable response (static) */
	bool done;
	bool dead; /* the upstream died before answering */
	/* a call not sent yet: it waits for the upstream to start again
	 * (restart_main). The instance that dies meanwhile does not fail
	 * it, nor may any answer it */
	bool parked;
	struct mcp_upstream *up;
	struct up_pending *next;
};

struct mcp_upstream {
	char *name;
	char **argv;   /* owned, NULL-terminated; NULL for HTTP */
	char *url;     /* streamable HTTP: the endpoint (owned), else NULL */
	char *session; /* HTTP: Mcp-Session-Id (owned; under lock) */
	int jobs;      /* call threads running (run_job; under lock; cond) */
	bool inited;
	uint64_t max_calls;

	pthread_mutex_t start_lock; /* one start at a time */
	pthread_mutex_t lock;	    /* guards everything below */
	pthread_cond_t cond;
	bool alive;
	struct up_pipe *pipe; /* stdio: the process and its input */
	pthread_t reader;
	bool have_reader;
	int64_t next_id;
	struct up_pending *pending;
	char *why_dead; /* owned */

	struct mcp_up_tool *tools;
	size_t n_tools;
	bool listed;
};

/* Queue msg (borrowed) for the upstream's stdin, bounded by cap bytes
 * queued in all. Returns 0, or -1: not running, over cap, its input
 * closed, out of memory. Never waits (upstream_pipe.c writes). */
int up_send_json(struct mcp_upstream *u, const json_t *msg, size_t cap);

/* Unlink the entry of id if still pending (caller holds u->lock), a
 * parked one only when parked_too (no answer of the upstream's reaches
 * a call it was never sent); NULL when there is none. The caller then
 * owns a call's entry (up_pending). */
struct up_pending *up_take_id(struct mcp_upstream *u, int64_t id, bool parked_too);

/* Answer a guest's call from a tools/call response (borrowed): its
 * structuredContent, else its text (JSON-parsed when it is JSON), as a
 * guest value; isError and error responses fail it. Takes call. */
void up_answer(struct mcp_upstream *u, cc_tool_call *call, const json_t *reply);

/* The reader thread of a stdio upstream (arg: u, with u->pipe set):
 * lines of at most MCP_UPSTREAM_MAX_MESSAGE bytes, each answered or
 * dropped; at EOF (or an oversized message) it reaps the process and
 * fails what is pending. */
void *up_reader_main(void *arg);

#endif
