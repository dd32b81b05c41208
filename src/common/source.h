/* The checks every eval's source passes (source.c). */
#ifndef CC_COMMON_SOURCE_H
#define CC_COMMON_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "codecage.h"

/* Check source code for eval: at most max bytes, no NUL, valid UTF-8.
 * Returns 0 or -1 with err = invalid_input and a message that says which
 * rule failed, where, and what to do. Used by the library and the CLI. */
int cc_check_source(const char *code, size_t len, uint64_t max, cc_error *err);

#endif
