/* The stdio transport: newline-delimited JSON-RPC on stdin/stdout, one
 * session for the life of the process. The reader thread keeps reading
 * while tools/calls run on their own threads, so notifications/cancelled
 * and ping are answered during a long call. Only JSON-RPC reaches stdout:
 * the real stdout is moved to a private descriptor and fd 1 is pointed at
 * stderr, so a stray write anywhere in the process lands in the log. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server.h"

/* tools/calls read but not finished (each holds a thread while it waits
 * its turn); more are refused rather than queued without bound. */
#define MCP_STDIO_MAX_QUEUED 64

struct out {
	int fd;
	pthread_mutex_t lock;
	bool broken; /* the client stopped reading */
};

static void emit_line(void *ctx, const char *json, size_t len)
{
	struct out *o = ctx;
	pthread_mutex_lock(&o->lock);
	/* One message, one line: jansson and our writer never emit a raw
	 * newline inside a message. */
	for (int part = 0; part < 2 && !o->broken; part++) {
		const char *p = part ? "\n" : json;
		size_t n = part ? 1 : len;
		while (n) {
			ssize_t w = write(o->fd, p, n);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				o->broken = true;
				break;
			}
			p += w;
			n -= (size_t)w;
		}
	}
	pthread_mutex_unlock(&o->lock);
}

struct workers {
	pthread_mutex_t lock;
	pthread_cond_t done;
	int running;
};

struct job {
	struct mcp_server *srv;
	struct mcp_call *call;
	const struct mcp_sink *sink;
	struct workers *w;
};

static void *job_main(void *arg)
{
	struct job *j = arg;
	mcp_call_run(j->srv, j->call, j->sink);
	struct workers *w = j->w;
	free(j);
	pthread_mutex_lock(&w->lock);
	w->running--;
	pthread_cond_broadcast(&w->done);
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

static void handle_line(struct mcp_server *srv, struct mcp_session *s, const char *line, size_t len,
			const struct mcp_sink *sink, struct workers *w)
{
	if (blank(line, len))
		return;
	struct jsonrpc_msg m;
	char *error = NULL;
	if (jsonrpc_parse(line, len, &m, &error) < 0) {
		if (error)
			sink->emit(sink->ctx, error, strlen(error));
		free(error);
		return;
	}
	bool call = m.kind == JSONRPC_REQUEST && mcp_queued_method(m.method) &&
		    mcp_session_initialized(s);
	pthread_mutex_lock(&w->lock);
	bool full = w->running >= MCP_STDIO_MAX_QUEUED;
	pthread_mutex_unlock(&w->lock);
	if (call && full) {
		char *e = jsonrpc_error(m.id, JSONRPC_SERVER_BUSY,
					"Server busy: %d tools/calls are already queued; wait for "
					"their results",
					MCP_STDIO_MAX_QUEUED);
		if (e)
			sink->emit(sink->ctx, e, strlen(e));
		free(e);
		jsonrpc_msg_clear(&m);
		return;
	}
	struct job *j = call ? malloc(sizeof(*j)) : NULL;
	struct mcp_call *c = j ? mcp_call_begin(s, &m) : NULL;
	if (!c) {
		free(j);
		mcp_handle(srv, s, &m, sink); /* also a tools/call when out of memory */
		return;
	}
	*j = (struct job){ .srv = srv, .call = c, .sink = sink, .w = w };
	pthread_mutex_lock(&w->lock);
	w->running++;
	pthread_mutex_unlock(&w->lock);
	pthread_t t;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, job_main, j)) {
		job_main(j); /* no thread: run it here */
	}
	pthread_attr_destroy(&attr);
}

int mcp_serve_stdio(struct mcp_server *srv)
{
	const struct mcp_config *cfg = mcp_server_config(srv);
	/* O_CLOEXEC: an upstream started later must not hold the client's
	 * pipe (nor write to it) */
	struct out o = { .fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3) };
	if (o.fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		fprintf(stderr, "codecage mcp: cannot set up stdout: %s\n", strerror(errno));
		return 1;
	}
	pthread_mutex_init(&o.lock, NULL);
	struct mcp_sink sink = { .emit = emit_line, .ctx = &o };
	struct workers w = { .running = 0 };
	pthread_mutex_init(&w.lock, NULL);
	pthread_cond_init(&w.done, NULL);
	struct mcp_session *s = mcp_session_new(srv, false);
	if (!s) {
		fprintf(stderr, "codecage mcp: out of memory\n");
		return 1;
	}

	/* A bounded line reader: a line longer than max_request is dropped
	 * (answered with an error) without ever being held whole. */
	size_t cap = cfg->max_request + 1, len = 0;
	char *line = malloc(cap);
	char chunk[65536];
	bool discarding = false;
	for (;;) {
		ssize_t n = read(STDIN_FILENO, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || !line)
			break;
		const char *p = chunk, *end = chunk + n;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t take = (size_t)((nl ? nl : end) - p);
			if (!discarding && len + take > cfg->max_request) {
				discarding = true;
				len = 0;
			}
			if (!discarding) {
				memcpy(line + len, p, take);
				len += take;
			}
			p += take;
			if (!nl)
				break;
			p++;
			if (discarding) {
				char *e = jsonrpc_error(NULL, JSONRPC_INVALID_REQUEST,
							"Invalid Request: message over %zu bytes "
							"(codecage mcp --max-request)",
							cfg->max_request);
				if (e)
					emit_line(&o, e, strlen(e));
				free(e);
				discarding = false;
			} else {
				handle_line(srv, s, line, len, &sink, &w);
			}
			len = 0;
		}
	}
	/* A last message without its newline still counts. */
	if (line && len && !discarding)
		handle_line(srv, s, line, len, &sink, &w);
	free(line);

	/* stdin closed: the client has said all it will. Calls still running
	 * finish (each within its deadline) and answer, then we exit. */
	pthread_mutex_lock(&w.lock);
	while (w.running)
		pthread_cond_wait(&w.done, &w.lock);
	pthread_mutex_unlock(&w.lock);
	mcp_session_unref(s);
	pthread_cond_destroy(&w.done);
	pthread_mutex_destroy(&w.lock);
	pthread_mutex_destroy(&o.lock);
	close(o.fd);
	return 0;
}
