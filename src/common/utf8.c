/* UTF-8 validation and U+FFFD repair (Unicode 15, table 3-7). */
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

/* Length of the well-formed sequence at s (1..4), or 0 if ill-formed.
 * *bad gets the length of the maximal invalid subpart to skip. */
static size_t seq_len(const unsigned char *s, size_t n, size_t *bad)
{
	unsigned c = s[0];
	*bad = 1;
	if (c < 0x80)
		return 1;
	size_t need;
	unsigned lo = 0x80, hi = 0xBF;
	if (c >= 0xC2 && c <= 0xDF)
		need = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		need = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F; /* excludes surrogates */
	} else if (c >= 0xF0 && c <= 0xF4) {
		need = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else
		return 0;
	for (size_t i = 1; i < need; i++) {
		if (i >= n)
			return 0;
		unsigned b = s[i];
		if (b < lo || b > hi)
			return 0;
		lo = 0x80;
		hi = 0xBF;
		*bad = i + 1;
	}
	return need;
}

bool cc_utf8_valid(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, bad;
	while (i < len) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		size_t l = seq_len(s + i, len - i, &bad);
		if (!l)
			return false;
		i += l;
	}
	return true;
}

char *cc_utf8_repair(const char *str, size_t len, size_t *out_len)
{
	const unsigned char *s = (const unsigned char *)str;
	/* Worst case: every byte becomes 3 bytes of U+FFFD. */
	if (len > (((size_t)-1) - 1) / 3)
		return NULL;
	char *out = malloc(len * 3 + 1);
	if (!out)
		return NULL;
	size_t i = 0, o = 0, bad;
	while (i < len) {
		size_t l = seq_len(s + i, len - i, &bad);
		if (l) {
			memcpy(out + o, s + i, l);
			o += l;
			i += l;
		} else {
			memcpy(out + o, "\xEF\xBF\xBD", 3);
			o += 3;
			i += bad;
		}
	}
	out[o] = 0;
	if (out_len)
		*out_len = o;
	return out;
}

int cc_check_source(const char *code, size_t len, uint64_t max, cc_error *err)
{
	if (len > max)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "the code is over the %llu-byte source cap; send less code or raise "
			       "the cap (limits.max_source)",
			       (unsigned long long)max);
	const char *nul = memchr(code, 0, len);
	if (nul)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "the code contains a NUL byte at offset %zu; remove it",
			       (size_t)(nul - code));
	if (!cc_utf8_valid(code, len)) {
		size_t off = 0, bad;
		const unsigned char *s = (const unsigned char *)code;
		while (off < len) {
			size_t l = seq_len(s + off, len - off, &bad);
			if (!l)
				break;
			off += l;
		}
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "the code is not valid UTF-8 (first bad byte at offset %zu); "
			       "re-encode it as UTF-8",
			       off);
	}
	return 0;
}
