/* src/common/: pure helpers both sides share (errors, UTF-8, values and
 * their codec, frames, the seccomp policy's data, descriptor passing). It
 * may include the public headers only; every folder may include it.
 *
 * Internal error helpers over the public cc_error (include/codecage.h).
 * Pure helpers: no I/O. */
#ifndef CC_COMMON_ERROR_H
#define CC_COMMON_ERROR_H

#include "codecage.h"

/* Set err (may be NULL) to kind plus a printf-formatted message; replaces a
 * previous message. Always returns -1 so callers can `return cc_fail(...)`. */
int cc_fail(cc_error *err, cc_error_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefix the existing message with context: "starting worker: " + old.
 * Returns -1. */
int cc_fail_wrap(cc_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
