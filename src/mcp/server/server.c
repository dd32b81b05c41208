/* The MCP server core: the session table, the idle reaper, and the
 * dispatch of MCP methods (initialize, ping, tools/list, tools/call,
 * resources/list, resources/read, logging/setLevel,
 * notifications/cancelled). A tools/call and the resources methods run in
 * the session's turn in session.c (files.c for the files). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "events.h"
#include "metrics.h"
#include "pools.h"
#include "probe.h"
#include "route.h"
#include "session.h"

struct mcp_server {
	const struct mcp_config *cfg;
	/* The tools/list result: the generic one at start, replaced on the
	 * first tools/list by one with what a Python runtime reports of
	 * itself (probe.c, started with the server), once. Under tools_lock. */
	json_t *tools;
	bool tools_probed;
	pthread_mutex_t tools_lock;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stopping;
	unsigned limited_count;
	struct mcp_session *sessions;
	pthread_t reaper;
	struct mcp_pools *pools;     /* pools.c: where runtimes come from */
	struct mcp_probe *probe;     /* probe.c: run_python's account of its packages */
	struct mcp_metrics *metrics; /* metrics.c: GET /metrics */
};

static const char *const level_names[] = { "debug", "info",	"notice", "warning",
					   "error", "critical", "alert",  "emergency" };

double mcp_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double since(const struct timespec *t)
{
	return mcp_now() - ((double)t->tv_sec + t->tv_nsec / 1e9);
}

const struct mcp_config *mcp_server_config(const struct mcp_server *srv)
{
	return srv->cfg;
}

struct mcp_pools *mcp_server_pools(struct mcp_server *srv)
{
	return srv->pools;
}

struct mcp_metrics *mcp_server_metrics(struct mcp_server *srv)
{
	return srv->metrics;
}

unsigned mcp_server_session_count(struct mcp_server *srv)
{
	unsigned n = 0;
	pthread_mutex_lock(&srv->lock);
	for (struct mcp_session *s = srv->sessions; s; s = s->next)
		n++;
	pthread_mutex_unlock(&srv->lock);
	return n;
}

/* ---- the session table ---- */

static void unlink_locked(struct mcp_server *srv, struct mcp_session *s)
{
	for (struct mcp_session **p = &srv->sessions; *p; p = &(*p)->next) {
		if (*p == s) {
			*p = s->next;
			s->registered = false;
			if (s->limited)
				srv->limited_count--;
			return;
		}
	}
}

struct mcp_session *mcp_session_new(struct mcp_server *srv, bool limited)
{
	struct mcp_session *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	/* Behind a router, an id that it sends here (a few tries each). */
	int tries = 0;
	do {
		unsigned char rnd[16];
		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd) || ++tries > 100000) {
			mcp_events_free(s->events);
			free(s);
			return NULL;
		}
		for (int i = 0; i < 16; i++)
			snprintf(s->id + 2 * i, 3, "%02x", rnd[i]);
	} while (!mcp_route_mine(srv->cfg->route, s->id, 32));
	s->events = mcp_events_new();
	if (!s->events) {
		free(s);
		return NULL;
	}
	s->srv = srv;
	s->limited = limited;
	s->refs = 2; /* the table's and the caller's */
	s->log_level = MCP_WARNING;
	s->version = mcp_latest_version;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->turn, NULL);
	clock_gettime(CLOCK_MONOTONIC, &s->last_used);
	pthread_mutex_lock(&srv->lock);
	if (limited && srv->limited_count >= srv->cfg->max_sessions) {
		pthread_mutex_unlock(&srv->lock);
		pthread_cond_destroy(&s->turn);
		pthread_mutex_destroy(&s->lock);
		mcp_events_free(s->events);
		free(s);
		return NULL;
	}
	if (limited)
		srv->limited_count++;
	s->registered = true;
	s->next = srv->sessions;
	srv->sessions = s;
	pthread_mutex_unlock(&srv->lock);
	return s;
}

struct mcp_session *mcp_session_find(struct mcp_server *srv, const char *id)
{
	pthread_mutex_lock(&srv->lock);
	struct mcp_session *s = srv->sessions;
	while (s && strcmp(s->id, id))
		s = s->next;
	if (s)
		s->refs++;
	pthread_mutex_unlock(&srv->lock);
	if (s) {
		pthread_mutex_lock(&s->lock);
		clock_gettime(CLOCK_MONOTONIC, &s->last_used);
		pthread_mutex_unlock(&s->lock);
	}
	return s;
}

void mcp_session_ref(struct mcp_session *s)
{
	pthread_mutex_lock(&s->srv->lock);
	s->refs++;
	pthread_mutex_unlock(&s->srv->lock);
}

static void session_free(struct mcp_session *s)
{
	for (int i = 0; i < MCP_LANGS; i++) {
		cc_runtime_close(s->rt[i]);
		free(s->ended[i]);
		free(s->deps_set[i]);
	}
	mcp_events_free(s->events);
	pthread_cond_destroy(&s->turn);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void mcp_session_unref(struct mcp_session *s)
{
	if (!s)
		return;
	struct mcp_server *srv = s->srv;
	pthread_mutex_lock(&srv->lock);
	bool last = --s->refs == 0;
	pthread_mutex_unlock(&srv->lock);
	if (last)
		session_free(s);
}

void mcp_session_close(struct mcp_server *srv, struct mcp_session *s)
{
	pthread_mutex_lock(&srv->lock);
	bool was = s->registered;
	if (was)
		unlink_locked(srv, s);
	pthread_mutex_unlock(&srv->lock);
	pthread_mutex_lock(&s->lock);
	s->closed = true;
	mcp_session_interrupt_locked(s);
	pthread_mutex_unlock(&s->lock);
	mcp_events_close(s->events);
	if (was)
		mcp_session_unref(s); /* the table's reference */
}

struct mcp_events *mcp_session_events(struct mcp_session *s)
{
	return s->events;
}

const char *mcp_session_id(const struct mcp_session *s)
{
	return s->id;
}

bool mcp_session_initialized(struct mcp_session *s)
{
	pthread_mutex_lock(&s->lock);
	bool v = s->initialized;
	pthread_mutex_unlock(&s->lock);
	return v;
}

void mcp_server_interrupt_all(struct mcp_server *srv)
{
	pthread_mutex_lock(&srv->lock);
	for (struct mcp_session *s = srv->sessions; s; s = s->next) {
		pthread_mutex_lock(&s->lock);
		mcp_session_interrupt_locked(s);
		pthread_mutex_unlock(&s->lock);
		mcp_events_close(s->events); /* a GET stream ends too */
	}
	pthread_mutex_unlock(&srv->lock);
}

/* ---- the reaper ----
 * HTTP sessions idle for idle_timeout_s with no call in flight are closed
 * (their id then answers 404, and the client starts a new session). The
 * stdio session is the process itself: only its runtimes are closed, and
 * the next call says so. */
static void reap(struct mcp_server *srv)
{
	double idle = srv->cfg->idle_timeout_s;
	struct mcp_session *dead = NULL;
	pthread_mutex_lock(&srv->lock);
	for (struct mcp_session **p = &srv->sessions; *p;) {
		struct mcp_session *s = *p;
		pthread_mutex_lock(&s->lock);
		bool stale = s->busy == 0 && since(&s->last_used) >= idle;
		if (stale && !s->limited) {
			char why[96];
			snprintf(why, sizeof(why), "closed after %.0f s idle", idle);
			mcp_session_close_runtimes_locked(s, why);
			stale = false;
		}
		if (stale)
			s->closed = true;
		pthread_mutex_unlock(&s->lock);
		if (stale) {
			*p = s->next;
			s->registered = false;
			srv->limited_count--;
			s->next = dead;
			dead = s;
		} else {
			p = &s->next;
		}
	}
	pthread_mutex_unlock(&srv->lock);
	while (dead) {
		struct mcp_session *s = dead;
		dead = s->next;
		fprintf(stderr, "codecage mcp: session %.8s... reaped after %.0f s idle\n", s->id,
			idle);
		mcp_events_close(s->events);
		mcp_session_unref(s);
	}
}

static void *reaper_main(void *arg)
{
	struct mcp_server *srv = arg;
	/* Check ten times per idle period, at most once a second. */
	double step = srv->cfg->idle_timeout_s / 10;
	if (step > 1)
		step = 1;
	if (step < 0.05)
		step = 0.05;
	pthread_mutex_lock(&srv->lock);
	while (!srv->stopping) {
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += (time_t)step;
		until.tv_nsec += (long)((step - (time_t)step) * 1e9);
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&srv->wake, &srv->lock, &until);
		if (srv->stopping)
			break;
		pthread_mutex_unlock(&srv->lock);
		reap(srv);
		pthread_mutex_lock(&srv->lock);
	}
	pthread_mutex_unlock(&srv->lock);
	return NULL;
}

struct mcp_server *mcp_server_new(const struct mcp_config *cfg)
{
	struct mcp_server *srv = calloc(1, sizeof(*srv));
	if (!srv)
		return NULL;
	srv->cfg = cfg;
	srv->tools = mcp_tools_list(cfg, NULL);
	pthread_mutex_init(&srv->tools_lock, NULL);
	srv->pools = mcp_pools_new(cfg);
	srv->metrics = mcp_metrics_new();
	/* run_python's package probe runs now, not on the first tools/list */
	srv->probe = srv->pools ? mcp_probe_start(srv) : NULL;
	pthread_mutex_init(&srv->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&srv->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (!srv->tools || !srv->pools || !srv->metrics || !srv->probe ||
	    pthread_create(&srv->reaper, NULL, reaper_main, srv)) {
		json_decref(srv->tools);
		pthread_mutex_destroy(&srv->tools_lock);
		mcp_probe_free(srv->probe);
		mcp_pools_free(srv->pools);
		free(srv->metrics);
		pthread_cond_destroy(&srv->wake);
		pthread_mutex_destroy(&srv->lock);
		free(srv);
		return NULL;
	}
	return srv;
}

void mcp_server_free(struct mcp_server *srv)
{
	if (!srv)
		return;
	pthread_mutex_lock(&srv->lock);
	srv->stopping = true;
	pthread_cond_signal(&srv->wake);
	pthread_mutex_unlock(&srv->lock);
	pthread_join(srv->reaper, NULL);
	for (;;) {
		pthread_mutex_lock(&srv->lock);
		struct mcp_session *s = srv->sessions;
		if (s)
			s->refs++;
		pthread_mutex_unlock(&srv->lock);
		if (!s)
			break;
		mcp_session_close(srv, s);
		mcp_session_unref(s);
	}
	json_decref(srv->tools);
	pthread_mutex_destroy(&srv->tools_lock);
	mcp_probe_free(srv->probe);
	mcp_pools_free(srv->pools);
	free(srv->metrics);
	pthread_cond_destroy(&srv->wake);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
}

/* ---- dispatch ---- */

static void send_text(const struct mcp_sink *sink, char *text)
{
	if (text)
		sink->emit(sink->ctx, text, strlen(text));
	free(text);
}

static void send_error(const struct mcp_sink *sink, const json_t *id, int code, const char *msg)
{
	send_text(sink, jsonrpc_error(id, code, "%s", msg));
}

/* The tools/list result (a copy, owned), with the probe's account once it
 * is in (the first tools/list waits for it). */
static json_t *tools_now(struct mcp_server *srv)
{
	pthread_mutex_lock(&srv->tools_lock);
	if (!srv->tools_probed) {
		srv->tools_probed = true;
		char *env = mcp_probe_result(srv->probe);
		json_t *t = env ? mcp_tools_list(srv->cfg, env) : NULL;
		free(env);
		if (t) {
			json_decref(srv->tools);
			srv->tools = t;
		}
	}
	json_t *copy = json_deep_copy(srv->tools);
	pthread_mutex_unlock(&srv->tools_lock);
	return copy;
}

static const char instructions[] =
	"codecage runs Python (CPython 3.11) and JavaScript (QuickJS) code in a confined "
	"sandbox. Use run_python or run_javascript; each keeps its state (variables, imports) "
	"across calls in this session, like a notebook, until reset: true. Files the code "
	"writes under /tmp (and writable mounts) are listed in each result and readable as "
	"resources (codecage://python/PATH, codecage://javascript/PATH).";

static void do_initialize(struct mcp_session *s, struct jsonrpc_msg *m, const struct mcp_sink *sink)
{
	json_t *pv = json_object_get(m->params, "protocolVersion");
	if (!json_is_object(m->params) || !json_is_string(pv)) {
		send_error(sink, m->id, JSONRPC_INVALID_PARAMS,
			   "Invalid params: initialize needs params.protocolVersion (a string)");
		return;
	}
	pthread_mutex_lock(&s->lock);
	if (s->initialized) {
		pthread_mutex_unlock(&s->lock);
		send_error(sink, m->id, JSONRPC_INVALID_REQUEST,
			   "Invalid Request: this session is already initialized");
		return;
	}
	/* Answer with the client's revision when we speak it, else our
	 * latest (the client then decides whether to go on). */
	const char *version = mcp_version_find(json_string_value(pv));
	s->version = version ? version : mcp_latest_version;
	s->initialized = true;
	version = s->version;
	pthread_mutex_unlock(&s->lock);
	json_t *res = json_pack("{s:s, s:{s:{s:b}, s:{}, s:{s:b, s:b}}, s:{s:s, s:s, s:s}, s:s}",
				"protocolVersion", version, "capabilities", "tools", "listChanged",
				0, "logging", "resources", "subscribe", 0, "listChanged", 0,
				"serverInfo", "name", "codecage", "title", "codecage sandbox",
				"version", cc_version(), "instructions", instructions);
	send_text(sink, jsonrpc_result(m->id, res));
}

static void do_set_level(struct mcp_session *s, struct jsonrpc_msg *m, const struct mcp_sink *sink)
{
	const char *level = json_string_value(json_object_get(m->params, "level"));
	for (int i = 0; level && i <= MCP_EMERGENCY; i++) {
		if (!strcmp(level, level_names[i])) {
			pthread_mutex_lock(&s->lock);
			s->log_level = (enum mcp_level)i;
			s->level_set = true;
			pthread_mutex_unlock(&s->lock);
			send_text(sink, jsonrpc_result(m->id, json_object()));
			return;
		}
	}
	send_error(sink, m->id, JSONRPC_INVALID_PARAMS,
		   "Invalid params: level must be one of debug, info, notice, warning, error, "
		   "critical, alert, emergency");
}

void mcp_log(struct mcp_session *s, const struct mcp_sink *sink, enum mcp_level level,
	     const char *fmt, ...)
{
	pthread_mutex_lock(&s->lock);
	bool on = level >= s->log_level;
	pthread_mutex_unlock(&s->lock);
	if (!on || !sink)
		return;
	va_list ap;
	va_start(ap, fmt);
	json_t *data = jsonrpc_vstring(fmt, ap);
	va_end(ap);
	if (!data)
		return;
	send_text(sink,
		  jsonrpc_notification("notifications/message",
				       json_pack("{s:s, s:s, s:o}", "level", level_names[level],
						 "logger", "codecage", "data", data)));
}

void mcp_handle(struct mcp_server *srv, struct mcp_session *s, struct jsonrpc_msg *m,
		const struct mcp_sink *sink)
{
	if (m->kind == JSONRPC_RESPONSE) {
		/* We never send requests, so nothing waits for an answer. */
		jsonrpc_msg_clear(m);
		return;
	}
	if (m->kind == JSONRPC_NOTIFICATION) {
		if (!strcmp(m->method, "notifications/cancelled"))
			mcp_session_cancel(s, m->params);
		/* notifications/initialized and unknown notifications: nothing
		 * to do (JSON-RPC: a notification never gets an answer). */
		jsonrpc_msg_clear(m);
		return;
	}
	const char *method = m->method;
	if (!strcmp(method, "initialize")) {
		do_initialize(s, m, sink);
	} else if (!strcmp(method, "ping")) {
		send_text(sink, jsonrpc_result(m->id, json_object()));
	} else if (!mcp_session_initialized(s)) {
		send_error(sink, m->id, JSONRPC_INVALID_REQUEST,
			   "Invalid Request: the session is not initialized; send initialize "
			   "first");
	} else if (!strcmp(method, "tools/list")) {
		send_text(sink, jsonrpc_result(m->id, tools_now(srv)));
	} else if (!strcmp(method, "logging/setLevel")) {
		do_set_level(s, m, sink);
	} else if (mcp_queued_method(method)) {
		struct mcp_call *c = mcp_call_begin(s, m);
		if (c) {
			mcp_call_run(srv, c, sink);
			return;
		}
	} else {
		char msg[160];
		snprintf(msg, sizeof(msg), "Method not found: %.100s", method);
		send_error(sink, m->id, JSONRPC_METHOD_NOT_FOUND, msg);
	}
	jsonrpc_msg_clear(m);
}
