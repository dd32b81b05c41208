/* UTF-8 checks and repair. Pure helpers. */
#ifndef CC_COMMON_UTF8_H
#define CC_COMMON_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* True when s[0..len) is well-formed UTF-8 (RFC 3629: no overlongs, no
 * surrogates U+D800..U+DFFF, nothing above U+10FFFF). NUL bytes allowed. */
bool cc_utf8_valid(const char *s, size_t len);

/* Length in bytes of the longest well-formed prefix of s[0..len): len when
 * all of it is, else the offset of the first ill-formed sequence. */
size_t cc_utf8_valid_prefix(const char *s, size_t len);

/* Replaces, in place, each UTF-8-encoded UTF-16 surrogate (the 3-byte
 * sequence ED A0..BF 80..BF, U+D800..U+DFFF) with U+FFFD, also 3 bytes: one
 * U+FFFD per surrogate, where cc_utf8_repair would make three. These are
 * what Python's "surrogatepass" codec and QuickJS's JS_ToCStringLen write
 * for a lone surrogate. A high then a low surrogate written this way
 * (CESU-8) are two U+FFFD: both engines write a real pair as one 4-byte
 * sequence, so such a pair was two separate code points (a Python str can
 * hold them). A sequence cut short by the end of s, and every other byte,
 * is left alone: a caller that needs well-formed UTF-8 still checks with
 * cc_utf8_valid. Returns how many were replaced. */
size_t cc_utf8_fix_surrogates(char *s, size_t len);

/* Returns a new NUL-terminated copy of s with every ill-formed sequence
 * replaced by U+FFFD (one per maximal invalid subpart, as WHATWG's decoder
 * does). *out_len gets the length. NULL when out of memory. */
char *cc_utf8_repair(const char *s, size_t len, size_t *out_len);

#endif
