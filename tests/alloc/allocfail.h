/* Allocation-failure injection for the test drivers in tests/alloc/, as
 * SQLite's test_malloc.c does it: allocfail.c defines malloc, calloc,
 * realloc, reallocarray, free, strdup, strndup, posix_memalign and
 * aligned_alloc in the driver executable, so every allocation of the
 * driver, of libcodecage, of msgpack-c, jansson, libcurl and of libc's own
 * helpers (vasprintf, realpath) goes through them; they forward to the
 * next definition (libc's, or ASan's in build-asan) and, when armed, fail
 * exactly the Nth allocation (NULL, errno ENOMEM) on any thread. The
 * library itself is unchanged. */
#ifndef CC_TESTS_ALLOCFAIL_H
#define CC_TESTS_ALLOCFAIL_H

#include <stdbool.h>

/* Count allocations from now on and fail the nth (1-based; 0 only
 * counts). */
void allocfail_arm(long nth);
/* Stop counting and failing; returns how many allocations were counted. */
long allocfail_disarm(void);
/* Whether the armed failure happened since the last allocfail_arm. */
bool allocfail_fired(void);

#endif
