/* The Python engine's heap accounting (py_mem.h): a counting allocator
 * under the RAW domain and pymalloc's arenas that refuses allocations past
 * cc_worker_limits.max_memory, so the guest sees MemoryError instead of
 * the kernel's rlimit. Inside the worker only: the kernel's rlimits are
 * the limit that counts. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <limits.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "py_mem.h"
#include "worker.h"

/* Extra heap, bytes, allowed while the engine itself reports an outcome
 * (formats a traceback, converts a result): reporting a MemoryError must
 * not fail for want of the memory the guest just used up. */
#define GLUE_HEADROOM ((int64_t)16 << 20)

/* ---- memory accounting ----
 *
 * pymalloc serves objects up to 512 bytes from 1 MiB arenas and passes
 * anything larger to PyMem_RawMalloc, so counting the RAW domain plus the
 * arenas covers the whole Python heap. RAW calls may come from any thread
 * without the GIL, hence the atomics. The functions call libc directly
 * (not the previous RAW allocator) so that malloc_usable_size is valid for
 * every pointer they see. The count is signed: blocks allocated before
 * the hook (during pre-initialisation) may be freed through it. */
static atomic_llong mem_used;
static atomic_llong mem_cap; /* 0: no cap */
static atomic_bool mem_glue; /* GLUE_HEADROOM applies */
/* The cap (or libc) refused an allocation since the eval began: only then
 * is a MemoryError the memory limit. CPython raises MemoryError for other
 * reasons too (its parser's stack, on code nested too deeply), and a guest
 * may raise one itself. */
static atomic_bool mem_refused;
static PyObjectArenaAllocator arena_base;

static bool mem_admit(size_t n)
{
	long long cap = atomic_load_explicit(&mem_cap, memory_order_relaxed);

	if (!cap)
		return true;
	if (atomic_load_explicit(&mem_glue, memory_order_relaxed))
		cap += GLUE_HEADROOM;
	if (n <= (size_t)cap &&
	    atomic_load_explicit(&mem_used, memory_order_relaxed) <= cap - (long long)n)
		return true;
	atomic_store_explicit(&mem_refused, true, memory_order_relaxed);
	return false;
}

/* p from libc or the arena allocator: a NULL is a refusal too (RLIMIT_DATA,
 * RLIMIT_AS). */
static void *mem_got(void *p)
{
	if (!p)
		atomic_store_explicit(&mem_refused, true, memory_order_relaxed);
	return p;
}

static void mem_count(long long delta)
{
	atomic_fetch_add_explicit(&mem_used, delta, memory_order_relaxed);
}

/* Zero-byte requests get a real block, as PyMem_RawMalloc promises. */
static void *raw_malloc(void *ctx, size_t n)
{
	(void)ctx;
	if (!n)
		n = 1;
	if (!mem_admit(n))
		return NULL;
	void *p = mem_got(malloc(n));
	if (p)
		mem_count((long long)malloc_usable_size(p));
	return p;
}

static void *raw_calloc(void *ctx, size_t nelem, size_t elsize)
{
	(void)ctx;
	if (!nelem || !elsize)
		nelem = elsize = 1;
	if (nelem > SIZE_MAX / elsize || !mem_admit(nelem * elsize))
		return NULL;
	void *p = mem_got(calloc(nelem, elsize));
	if (p)
		mem_count((long long)malloc_usable_size(p));
	return p;
}

static void *raw_realloc(void *ctx, void *ptr, size_t n)
{
	size_t old = ptr ? malloc_usable_size(ptr) : 0;

	(void)ctx;
	if (!n)
		n = 1;
	if (n > old && !mem_admit(n - old))
		return NULL;
	void *p = mem_got(realloc(ptr, n));
	if (p)
		mem_count((long long)malloc_usable_size(p) - (long long)old);
	return p;
}

static void raw_free(void *ctx, void *ptr)
{
	(void)ctx;
	if (ptr)
		mem_count(-(long long)malloc_usable_size(ptr));
	free(ptr);
}

static void *arena_alloc(void *ctx, size_t n)
{
	(void)ctx;
	if (!mem_admit(n))
		return NULL;
	void *p = mem_got(arena_base.alloc(arena_base.ctx, n));
	if (p)
		mem_count((long long)n);
	return p;
}

static void arena_free(void *ctx, void *ptr, size_t n)
{
	(void)ctx;
	arena_base.free(arena_base.ctx, ptr, n);
	if (ptr)
		mem_count(-(long long)n);
}

void cc_py_mem_set_cap(void)
{
	uint64_t cap = cc_worker_limits.max_memory;
	atomic_store(&mem_cap, cap > (uint64_t)LLONG_MAX / 2 ? LLONG_MAX / 2 : (long long)cap);
}

/* After Py_PreInitialize (which could otherwise replace them) and before
 * any other Python allocation. */
void cc_py_mem_install(void)
{
	PyMemAllocatorEx raw = { NULL, raw_malloc, raw_calloc, raw_realloc, raw_free };
	PyObjectArenaAllocator arena = { NULL, arena_alloc, arena_free };

	cc_py_mem_set_cap();
	PyMem_SetAllocator(PYMEM_DOMAIN_RAW, &raw);
	PyObject_GetArenaAllocator(&arena_base);
	PyObject_SetArenaAllocator(&arena);
}

void cc_py_mem_eval_begin(void)
{
	cc_py_mem_set_cap();
	atomic_store(&mem_glue, false);
	atomic_store(&mem_refused, false);
}

void cc_py_mem_glue(bool on)
{
	atomic_store(&mem_glue, on);
}

bool cc_py_mem_refused(void)
{
	return atomic_load(&mem_refused);
}
