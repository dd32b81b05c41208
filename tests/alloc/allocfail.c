/* The allocator interposer of allocfail.h. The real functions come from
 * dlsym(RTLD_NEXT); dlsym itself may allocate before they are known, so a
 * small static arena serves those first requests (never freed). */
#include "allocfail.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <limits.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The project builds with -fvisibility=hidden; these must be seen by the
 * shared libraries. */
#define INTERPOSE __attribute__((visibility("default")))

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);

static _Atomic long counted;
static _Atomic long fail_at = -1; /* -1: disarmed; 0: counting only */
static atomic_bool fired;

static _Alignas(16) unsigned char arena[64 * 1024];
static _Atomic size_t arena_used;

static bool in_arena(const void *p)
{
	return (const unsigned char *)p >= arena &&
	       (const unsigned char *)p < arena + sizeof(arena);
}

/* Bootstrap allocations: 16-byte aligned, each with its size in the 8
 * bytes before it. */
static void *arena_alloc(size_t n)
{
	size_t need = 16 + ((n + 15) & ~(size_t)15);
	size_t at = atomic_fetch_add(&arena_used, need);
	if (at + need > sizeof(arena))
		return NULL;
	*(size_t *)(arena + at + 8) = n;
	return arena + at + 16;
}

static bool resolving;

static void resolve(void)
{
	if (real_malloc || resolving)
		return;
	resolving = true;
	real_calloc = dlsym(RTLD_NEXT, "calloc");
	real_realloc = dlsym(RTLD_NEXT, "realloc");
	real_free = dlsym(RTLD_NEXT, "free");
	real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	real_malloc = dlsym(RTLD_NEXT, "malloc");
	resolving = false;
}

__attribute__((constructor)) static void allocfail_init(void)
{
	resolve();
}

/* Whether this allocation is the one to fail. */
static bool fail_now(void)
{
	long at = atomic_load(&fail_at);
	if (at < 0)
		return false;
	long n = atomic_fetch_add(&counted, 1) + 1;
	if (n != at)
		return false;
	atomic_store(&fired, true);
	if (getenv("ALLOCFAIL_BACKTRACE")) { /* where the failure lands */
		void *pcs[32];
		backtrace_symbols_fd(pcs, backtrace(pcs, 32), 2);
	}
	errno = ENOMEM;
	return true;
}

void allocfail_arm(long nth)
{
	atomic_store(&counted, 0);
	atomic_store(&fired, false);
	atomic_store(&fail_at, nth);
}

long allocfail_disarm(void)
{
	atomic_store(&fail_at, -1);
	return atomic_load(&counted);
}

bool allocfail_fired(void)
{
	return atomic_load(&fired);
}

INTERPOSE void *malloc(size_t n)
{
	resolve();
	if (!real_malloc)
		return arena_alloc(n);
	return fail_now() ? NULL : real_malloc(n);
}

INTERPOSE void *calloc(size_t a, size_t b)
{
	resolve();
	if (!real_calloc) {
		if (b && a > SIZE_MAX / b)
			return NULL;
		return arena_alloc(a * b); /* the arena is zeroed and never reused */
	}
	return fail_now() ? NULL : real_calloc(a, b);
}

INTERPOSE void *realloc(void *p, size_t n)
{
	resolve();
	if (in_arena(p) || !real_realloc) {
		void *q = malloc(n);
		if (q && p) {
			size_t old = ((size_t *)p)[-1];
			memcpy(q, p, old < n ? old : n);
		}
		return q;
	}
	return fail_now() ? NULL : real_realloc(p, n);
}

INTERPOSE void *reallocarray(void *p, size_t a, size_t b)
{
	if (b && a > SIZE_MAX / b) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, a * b);
}

INTERPOSE void free(void *p)
{
	if (!p || in_arena(p))
		return;
	resolve();
	real_free(p);
}

INTERPOSE char *strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);
	if (p)
		memcpy(p, s, n);
	return p;
}

INTERPOSE char *strndup(const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	char *p = malloc(n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = 0;
	}
	return p;
}

INTERPOSE int posix_memalign(void **out, size_t align, size_t n)
{
	resolve();
	if (fail_now())
		return ENOMEM;
	return real_posix_memalign(out, align, n);
}

/* realpath(path, NULL) allocates the result; ASan's interceptor would do
 * it with its own malloc, past the count. */
INTERPOSE char *realpath(const char *path, char *resolved)
{
	static char *(*real_realpath)(const char *, char *);
	if (!real_realpath)
		real_realpath = dlsym(RTLD_NEXT, "realpath");
	if (resolved)
		return real_realpath(path, resolved);
	char buf[PATH_MAX];
	return real_realpath(path, buf) ? strdup(buf) : NULL;
}

INTERPOSE void *aligned_alloc(size_t align, size_t n)
{
	void *p = NULL;
	return posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, n) ? NULL : p;
}
