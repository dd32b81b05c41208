/* Internals shared by server.c (the session table, dispatch) and
 * session.c (a session's runtimes, calls and cancellation). */
#ifndef CC_MCP_SESSION_H
#define CC_MCP_SESSION_H

#include <pthread.h>
#include <time.h>

#include "server.h"

enum {
	MCP_LANG_PY = 0,
	MCP_LANG_JS = 1,
	MCP_LANGS = 2
};

/* The public language of an MCP_LANG_* index (names: cc_language_name). */
static inline cc_language mcp_lang_cc(int lang)
{
	return lang == MCP_LANG_PY ? CC_LANG_PYTHON : CC_LANG_JAVASCRIPT;
}

/* Logging levels of MCP (RFC 5424 order, 0 = debug). */
enum mcp_level {
	MCP_DEBUG,
	MCP_INFO,
	MCP_NOTICE,
	MCP_WARNING,
	MCP_ERROR,
	MCP_CRITICAL,
	MCP_ALERT,
	MCP_EMERGENCY
};

/* A tools/call between mcp_call_begin and the end of mcp_call_run. */
struct mcp_call {
	struct mcp_session *s; /* a reference */
	json_t *id;	       /* owned copy of the request id */
	struct jsonrpc_msg msg;
	int lang;
	unsigned long ticket;
	bool cancelled; /* under s->lock: the client cancelled it (no response) */
	bool aborted;	/* under s->lock: its session ended (an error response) */
	bool running;	/* under s->lock: an eval is in flight on s->rt[lang] */
	struct mcp_call *next;
};

struct mcp_session {
	struct mcp_server *srv;
	char id[33];
	bool limited;

	/* Under the server's lock: */
	int refs;
	bool registered;
	struct mcp_session *next;

	/* Guards everything below; held only briefly (never across an eval). */
	pthread_mutex_t lock;
	/* tools/calls of a session run one at a time, in the order they were
	 * read (a later call may depend on an earlier one's state): each takes
	 * a ticket in mcp_call_begin and runs when `serving` reaches it. */
	unsigned long next_ticket, serving;
	pthread_cond_t turn;
	bool initialized;
	bool closed;
	const char *version;
	enum mcp_level log_level;
	bool level_set;		   /* the client sent logging/setLevel */
	struct timespec last_used; /* CLOCK_MONOTONIC */
	int busy;		   /* calls registered and not finished */
	struct mcp_call *calls;
	cc_runtime *rt[MCP_LANGS];
	/* Why the previous runtime ended (owned; NULL = nothing to report):
	 * the next call says so in its result. */
	char *ended[MCP_LANGS];
	/* The dependencies the runtime was started with (mcp_deps.h's set,
	 * owned; NULL: none): later runtimes of the session keep them until a
	 * call names others. */
	char *deps_set[MCP_LANGS];
	/* The GET event stream's queue (events.h; own lock), owned. */
	struct mcp_events *events;
};

/* Take another reference to s. */
void mcp_session_ref(struct mcp_session *s);

/* Interrupt every running call of s. Caller holds s->lock. */
void mcp_session_interrupt_locked(struct mcp_session *s);

/* Close the runtimes of an idle session (stdio reaping); the next call
 * notes why. Caller holds s->lock and s->busy == 0. */
void mcp_session_close_runtimes_locked(struct mcp_session *s, const char *why);

/* Handle notifications/cancelled params for s. */
void mcp_session_cancel(struct mcp_session *s, const json_t *params);

/* Log to the client through sink when level passes the session's level. */
void mcp_log(struct mcp_session *s, const struct mcp_sink *sink, enum mcp_level level,
	     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

double mcp_now(void);

#endif
