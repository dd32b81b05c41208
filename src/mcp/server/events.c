/* The GET event stream's queue: a bounded list of SSE events, one reader
 * (the connection thread of the GET), any number of writers. A message
 * longer than the reader's buffer goes out over several reads. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "events.h"

struct event {
	char *text; /* "event: message\ndata: JSON\n\n" */
	size_t len, off;
	struct event *next;
};

struct mcp_events {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool open, closed;
	size_t n;
	struct event *head, *tail;
};

struct mcp_events *mcp_events_new(void)
{
	struct mcp_events *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	pthread_mutex_init(&e->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->wake, &ca);
	pthread_condattr_destroy(&ca);
	return e;
}

static void drop_all_locked(struct mcp_events *e)
{
	while (e->head) {
		struct event *v = e->head;
		e->head = v->next;
		free(v->text);
		free(v);
	}
	e->tail = NULL;
	e->n = 0;
}

void mcp_events_free(struct mcp_events *e)
{
	if (!e)
		return;
	drop_all_locked(e);
	pthread_cond_destroy(&e->wake);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

bool mcp_events_open(struct mcp_events *e)
{
	pthread_mutex_lock(&e->lock);
	bool ok = !e->open && !e->closed;
	if (ok)
		e->open = true;
	pthread_mutex_unlock(&e->lock);
	return ok;
}

void mcp_events_release(struct mcp_events *e)
{
	pthread_mutex_lock(&e->lock);
	e->open = false;
	drop_all_locked(e);
	pthread_mutex_unlock(&e->lock);
}

bool mcp_events_push(struct mcp_events *e, const char *json, size_t len)
{
	static const char pre[] = "event: message\ndata: ";
	struct event *v = calloc(1, sizeof(*v));
	char *text = malloc(sizeof(pre) - 1 + len + 2);
	if (!v || !text) {
		free(v);
		free(text);
		return false;
	}
	memcpy(text, pre, sizeof(pre) - 1);
	memcpy(text + sizeof(pre) - 1, json, len);
	memcpy(text + sizeof(pre) - 1 + len, "\n\n", 2);
	v->text = text;
	v->len = sizeof(pre) - 1 + len + 2;
	pthread_mutex_lock(&e->lock);
	bool taken = e->open && !e->closed;
	if (taken) {
		if (e->tail)
			e->tail->next = v;
		else
			e->head = v;
		e->tail = v;
		if (++e->n > MCP_EVENTS_MAX && e->head->off == 0) {
			struct event *old = e->head; /* a reader this slow loses the oldest */
			e->head = old->next;
			free(old->text);
			free(old);
			e->n--;
		}
		pthread_cond_signal(&e->wake);
	}
	pthread_mutex_unlock(&e->lock);
	if (!taken) {
		free(text);
		free(v);
	}
	return taken;
}

void mcp_events_close(struct mcp_events *e)
{
	pthread_mutex_lock(&e->lock);
	e->closed = true;
	pthread_cond_broadcast(&e->wake);
	pthread_mutex_unlock(&e->lock);
}

long mcp_events_read(struct mcp_events *e, char *buf, size_t max, double wait_s)
{
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)wait_s;
	until.tv_nsec += (long)((wait_s - (time_t)wait_s) * 1e9);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&e->lock);
	while (!e->closed && !e->head)
		if (pthread_cond_timedwait(&e->wake, &e->lock, &until))
			break;
	long n;
	if (e->closed) {
		n = -1;
	} else if (!e->head) {
		static const char ka[] = ": keep-alive\n\n";
		n = (long)(max < sizeof(ka) - 1 ? max : sizeof(ka) - 1);
		memcpy(buf, ka, (size_t)n);
	} else {
		struct event *v = e->head;
		size_t k = v->len - v->off < max ? v->len - v->off : max;
		memcpy(buf, v->text + v->off, k);
		v->off += k;
		if (v->off == v->len) {
			e->head = v->next;
			if (!e->head)
				e->tail = NULL;
			e->n--;
			free(v->text);
			free(v);
		}
		n = (long)k;
	}
	pthread_mutex_unlock(&e->lock);
	return n;
}
