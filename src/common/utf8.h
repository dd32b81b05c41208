/* UTF-8 checks and repair. Pure helpers. */
#ifndef CC_COMMON_UTF8_H
#define CC_COMMON_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* True when s[0..len) is well-formed UTF-8 (RFC 3629: no overlongs, no
 * surrogates U+D800..U+DFFF, nothing above U+10FFFF). NUL bytes allowed. */
bool cc_utf8_valid(const char *s, size_t len);

/* Returns a new NUL-terminated copy of s with every ill-formed sequence
 * replaced by U+FFFD (one per maximal invalid subpart, as WHATWG's decoder
 * does). *out_len gets the length. NULL when out of memory. */
char *cc_utf8_repair(const char *s, size_t len, size_t *out_len);

#include "codecage.h"

/* Check source code for eval: at most max bytes, no NUL, valid UTF-8.
 * Returns 0 or -1 with err = invalid_input and a message that says which
 * rule failed, where, and what to do. Used by the library and the CLI. */
int cc_check_source(const char *code, size_t len, uint64_t max, cc_error *err);

#endif
