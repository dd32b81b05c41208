/* The library-wide fork servers behind cc_options.fork_server: one per
 * key (the options a template fixes), started on first use, shared by
 * every cc_runtime_new of this process that asks for one.
 *
 * A template fixes what its init frame and its start carry: language,
 * sandbox mode, the limits the worker applies (memory, output and result
 * caps, source size, CPU, descriptors, file size), scratch (each session
 * mounts its own of that size, with its whole Landlock domain, as a
 * spawned worker's), the web polyfills, the libraries (by their bytes, read anew by each
 * cc_runtime_new), the mounts and python_path (by the object each host
 * path names now, device and inode, so a new directory at an old path is
 * a new key; a template whose own grants are not those objects, a path
 * moved between the key and its start, is never kept) and the worker
 * directory; timeout_s too when there are
 * libraries (they load within it). The rest is the session's own:
 * timeout_s, grace_s, max_pending_calls and the network policy.
 *
 * Anything that goes wrong here (a key that cannot be made, a template
 * that will not start, a session it cannot fork) is a note, never an
 * error: the caller spawns a worker as without the option, and the note
 * says why in cc_sandbox_report.fork_server. A template that failed to
 * start is not tried again for its key until cc_forkserver_shared_close.
 *
 * Locks: `lock` guards the table and is held only to look up, insert or
 * evict, never while a worker starts; each entry's `start` is held while
 * its template starts, so two first users of one key start one template.
 * After fork() the child forgets the parent's servers (pthread_atfork):
 * it never writes to, signals or closes the parent's templates. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "net.h"
#include "supervisor.h"

/* The most templates kept at once; the least recently used goes first
 * (its live sessions keep it until they close). */
#define CC_SHARED_MAX 8

struct shared {
	char *key;
	size_t key_len;
	pthread_mutex_t start; /* held while the template starts */
	cc_forkserver *fs;     /* NULL: not started yet, or failed */
	char *failed;	       /* why the template did not start (heap) */
	uint64_t used;	       /* the table's clock at the last lookup */
	int refs;	       /* the table's, plus one per lookup in flight; under lock */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct shared *table[CC_SHARED_MAX];
static uint64_t clock_now;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* ---- the key ---- */

struct key {
	char *p;
	size_t n, cap;
	bool bad; /* out of memory */
	/* the objects keyed, as cc_grants_ids words: the template started
	 * for this key must have bound exactly these */
	uint64_t ids[2 * CC_MAX_MOUNTS];
	size_t n_ids;
};

static void key_add(void *u, const void *p, size_t n)
{
	struct key *k = u;
	if (k->bad || !n)
		return;
	if (k->n + n > k->cap) {
		size_t cap = (k->cap ? k->cap * 2 : 256) + n;
		char *q = realloc(k->p, cap);
		if (!q) {
			k->bad = true;
			return;
		}
		k->p = q;
		k->cap = cap;
	}
	memcpy(k->p + k->n, p, n);
	k->n += n;
}

static void key_str(struct key *k, const char *s)
{
	key_add(k, s ? "s" : "-", 1);
	if (s)
		key_add(k, s, strlen(s) + 1);
}

/* The object host names now: device and inode. */
static int key_object(struct key *k, const char *host, char **why)
{
	struct stat st;
	if (!host || stat(host, &st) < 0 || k->n_ids + 2 > 2 * CC_MAX_MOUNTS) {
		/* the spawned runtime reports the path (or the count) properly */
		*why = strdup("a mount or python_path entry could not be looked up");
		return -1;
	}
	key_add(k, &st.st_dev, sizeof(st.st_dev));
	key_add(k, &st.st_ino, sizeof(st.st_ino));
	k->ids[k->n_ids++] = (uint64_t)st.st_dev;
	k->ids[k->n_ids++] = (uint64_t)st.st_ino;
	return 0;
}

static int make_key(const cc_options *o, const struct cc_libset *libs, struct key *k, char **why)
{
	const cc_limits *l = &o->limits;
	uint64_t v[] = { o->language,	    o->sandbox,	      l->max_memory,	l->max_stdout,
			 l->max_stderr,	    l->max_result,    l->max_source,	l->cpu_s,
			 l->max_open_files, l->max_file_size, o->scratch_bytes, o->web_polyfills,
			 o->n_mounts,	    o->n_python_path, o->n_libraries };
	key_add(k, v, sizeof(v));
	if (o->n_libraries)
		key_add(k, &l->timeout_s, sizeof(l->timeout_s));
	key_str(k, o->worker_dir);
	for (size_t i = 0; i < o->n_mounts; i++) {
		if (key_object(k, o->mounts[i].host, why) < 0)
			return -1;
		key_str(k, o->mounts[i].guest);
		key_add(k, o->mounts[i].writable ? "w" : "r", 1);
	}
	for (size_t i = 0; i < o->n_python_path; i++)
		if (key_object(k, o->python_path[i], why) < 0)
			return -1;
	cc_libset_digest(libs, key_add, k);
	if (k->bad) {
		*why = strdup("out of memory");
		return -1;
	}
	return 0;
}

/* ---- the table ---- */

static void entry_unref(struct shared *e)
{
	if (--e->refs > 0) /* under lock */
		return;
	cc_forkserver_close(e->fs);
	pthread_mutex_destroy(&e->start);
	free(e->failed);
	free(e->key);
	free(e);
}

/* In the child of a fork(): the parent's templates are not ours. */
static void forget_all(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	lock = fresh;
	for (size_t i = 0; i < CC_SHARED_MAX; i++) {
		if (table[i] && table[i]->fs)
			cc_forkserver_forget(table[i]->fs);
		table[i] = NULL; /* leaked: another thread of the parent may have held it */
	}
}

static void before_fork(void)
{
	pthread_mutex_lock(&lock);
}

static void after_fork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

static void register_atfork(void)
{
	pthread_atfork(before_fork, after_fork_parent, forget_all);
}

/* The entry for key k (taking k->p), made if new; with a reference for the
 * caller. NULL when out of memory. */
static struct shared *lookup(struct key *k)
{
	pthread_mutex_lock(&lock);
	struct shared *e = NULL;
	size_t slot = 0;
	for (size_t i = 0; i < CC_SHARED_MAX; i++) {
		struct shared *t = table[i];
		if (t && t->key_len == k->n && !memcmp(t->key, k->p, k->n)) {
			e = t;
			break;
		}
		if (!t || (table[slot] && t->used < table[slot]->used))
			slot = i; /* an empty slot, else the least recently used */
	}
	if (!e && (e = calloc(1, sizeof(*e)))) {
		e->key = k->p;
		e->key_len = k->n;
		k->p = NULL;
		pthread_mutex_init(&e->start, NULL);
		e->refs = 1;
		if (table[slot])
			entry_unref(table[slot]);
		table[slot] = e;
	}
	if (e) {
		e->refs++;
		e->used = ++clock_now;
	}
	pthread_mutex_unlock(&lock);
	return e;
}

static void release(struct shared *e)
{
	pthread_mutex_lock(&lock);
	entry_unref(e);
	pthread_mutex_unlock(&lock);
}

/* Test hook: a template that fails to start, to see the fallback. */
static bool forced_failure(void)
{
	const char *v = getenv("CODECAGE_TEST_FORK_SERVER_BROKEN");
	return v && *v && strcmp(v, "0") != 0;
}

/* Test hook: a pause between the key and the template's start, to move
 * a path in between (tests/security/test_redteam_r6.py). */
static void test_pause(void)
{
	const char *v = getenv("CODECAGE_TEST_SHARED_START_PAUSE_MS");
	long ms = v ? strtol(v, NULL, 10) : 0;
	if (ms > 0 && ms <= 10000) {
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
}

/* A template just started for key k whose grants are not the objects k
 * names (a path was moved between the key and the start): it never
 * serves k, nor is it kept. 0 when they are k's. */
static int check_grants(struct shared *e, const struct key *k, char **why)
{
	if (cc_forkserver_grants_are(e->fs, k->ids, k->n_ids))
		return 0;
	cc_forkserver_close(e->fs);
	e->fs = NULL;
	*why = strdup("a mount or python_path entry named another object when the template "
		      "started than when its key was made (it was moved meanwhile)");
	return -1;
}

/* The entry's server, started (or started again, if its template died)
 * under e->start. NULL with *why when it cannot be had. */
static cc_forkserver *entry_server(struct shared *e, const struct key *k, const cc_options *o,
				   const struct cc_libset *libs, char **why)
{
	pthread_mutex_lock(&e->start);
	if (e->fs && !cc_forkserver_alive(e->fs)) {
		cc_forkserver_close(e->fs); /* its live sessions keep it */
		e->fs = NULL;
	}
	if (!e->fs && !e->failed) {
		cc_error err = { 0 };
		if (forced_failure()) {
			cc_fail(&err, CC_ERR_INTERNAL, "CODECAGE_TEST_FORK_SERVER_BROKEN is set");
		} else {
			/* cc_runtime_new ignores max_sessions: one caller's
			 * never sizes the template its key's others share */
			cc_options so = *o;
			so.max_sessions = 0;
			test_pause();
			cc_forkserver_start(&so, "", libs, NULL, &e->fs, &err);
		}
		if (!e->fs &&
		    asprintf(&e->failed, "the template did not start (%s: %s)",
			     cc_error_kind_name(err.kind), err.message ? err.message : "?") < 0)
			e->failed = NULL;
		cc_error_clear(&err);
		if (e->fs && check_grants(e, k, why) < 0) {
			pthread_mutex_unlock(&e->start);
			return NULL;
		}
	}
	cc_forkserver *fs = e->fs;
	if (!fs)
		*why = strdup(e->failed ? e->failed : "the template did not start");
	pthread_mutex_unlock(&e->start);
	return fs;
}

int cc_shared_session(const cc_options *opts, const struct cc_libset *libs,
		      struct cc_net_policy *net, cc_runtime **out, char **why)
{
	*out = NULL;
	*why = NULL;
	pthread_once(&atfork_once, register_atfork);
	struct key k = { 0 };
	struct shared *e = NULL;
	cc_forkserver *fs = NULL;
	if (make_key(opts, libs, &k, why) < 0 || !(e = lookup(&k)) ||
	    !(fs = entry_server(e, &k, opts, libs, why))) {
		if (!*why)
			*why = strdup("out of memory");
		free(k.p);
		if (e)
			release(e);
		cc_net_policy_unref(net);
		return 1;
	}
	free(k.p);
	/* The entry's reference keeps fs while the session forks; the session
	 * then holds its own. */
	cc_error err = { 0 };
	int rc = cc_forkserver_spawn_as(fs, opts, net, out, &err);
	release(e);
	if (rc < 0) {
		if (asprintf(why, "the shared fork server could not fork a session (%s: %s)",
			     cc_error_kind_name(err.kind), err.message ? err.message : "?") < 0)
			*why = NULL;
		cc_error_clear(&err);
		return 1;
	}
	return 0;
}

CC_EXPORT void cc_forkserver_shared_close(void)
{
	pthread_once(&atfork_once, register_atfork);
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < CC_SHARED_MAX; i++) {
		if (table[i])
			entry_unref(table[i]);
		table[i] = NULL;
	}
	pthread_mutex_unlock(&lock);
}

CC_EXPORT size_t cc_forkserver_shared_pids(int *pids, size_t max)
{
	size_t n = 0;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < CC_SHARED_MAX; i++) {
		/* e->fs is set under e->start: read it only when no start runs */
		struct shared *e = table[i];
		if (!e || pthread_mutex_trylock(&e->start) != 0)
			continue;
		int pid = e->fs ? cc_forkserver_pid(e->fs) : -1;
		pthread_mutex_unlock(&e->start);
		if (pid > 0) {
			if (n < max && pids)
				pids[n] = pid;
			n++;
		}
	}
	pthread_mutex_unlock(&lock);
	return n;
}
