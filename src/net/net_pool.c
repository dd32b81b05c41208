/* The broker's threads (net.c): a process-wide pool, so a request does not
 * pay for a new thread (a thread's start and end cost about 230 µs on the
 * development VM, where page faults are dear). A thread idle for
 * CC_NET_POOL_IDLE_S ends; one more starts whenever the queue holds more
 * jobs than there are idle threads, so concurrent requests still run
 * concurrently (their number is bounded per runtime by max_pending_calls).
 * After fork() the child starts with an empty pool: the parent's threads
 * are not there, and the jobs they would have run belong to the parent's
 * runtimes. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "net.h"

#define CC_NET_POOL_IDLE_S 10

struct task {
	struct task *next;
	void (*fn)(void *arg);
	void *arg;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct task *head, **tail;
	unsigned queued, idle;
} pool = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, &pool.head, 0, 0 };

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void child_reset(void)
{
	/* Only this thread exists in the child: the tasks are dropped (their
	 * memory with them: the child's copies of the parent's runtimes are
	 * not served). */
	pthread_mutex_init(&pool.lock, NULL);
	pthread_cond_init(&pool.cv, NULL);
	pool.head = NULL;
	pool.tail = &pool.head;
	pool.queued = pool.idle = 0;
}

static void atfork_init(void)
{
	pthread_atfork(NULL, NULL, child_reset);
}

static void *pool_thread(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&pool.lock);
	for (;;) {
		while (!pool.head) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += CC_NET_POOL_IDLE_S;
			pool.idle++;
			int rc = pthread_cond_timedwait(&pool.cv, &pool.lock, &ts);
			pool.idle--;
			if (rc == ETIMEDOUT && !pool.head) {
				pthread_mutex_unlock(&pool.lock);
				return NULL;
			}
		}
		struct task *t = pool.head;
		pool.head = t->next;
		if (!pool.head)
			pool.tail = &pool.head;
		pool.queued--;
		pthread_mutex_unlock(&pool.lock);
		t->fn(t->arg);
		free(t);
		pthread_mutex_lock(&pool.lock);
	}
}

int cc_net_pool_submit(void (*fn)(void *arg), void *arg)
{
	struct task *t = malloc(sizeof(*t));
	if (!t)
		return -1;
	*t = (struct task){ NULL, fn, arg };
	pthread_once(&atfork_once, atfork_init);
	pthread_mutex_lock(&pool.lock);
	bool spawn = pool.queued + 1 > pool.idle;
	if (spawn) {
		pthread_attr_t a;
		pthread_t tid;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		int rc = pthread_create(&tid, &a, pool_thread, NULL);
		pthread_attr_destroy(&a);
		if (rc != 0 && pool.idle == 0) {
			/* No thread will take it. */
			pthread_mutex_unlock(&pool.lock);
			free(t);
			return -1;
		}
	}
	*pool.tail = t;
	pool.tail = &t->next;
	pool.queued++;
	pthread_cond_signal(&pool.cv);
	pthread_mutex_unlock(&pool.lock);
	return 0;
}
