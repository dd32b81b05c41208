/* UTF-8 validation and U+FFFD repair (Unicode 15, table 3-7). Pure: no
 * other file of the tree is needed (the Python extension compiles it too). */
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

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

size_t cc_utf8_valid_prefix(const char *str, size_t len)
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
			break;
		i += l;
	}
	return i;
}

bool cc_utf8_valid(const char *str, size_t len)
{
	return cc_utf8_valid_prefix(str, len) == len;
}

size_t cc_utf8_fix_surrogates(char *str, size_t len)
{
	unsigned char *s = (unsigned char *)str, *end = s + len;
	size_t fixed = 0;

	/* ED is never a continuation byte, so every ED found starts a
	 * sequence; A0..BF after it is exactly U+D800..U+DFFF. */
	while (s < end && (s = memchr(s, 0xED, (size_t)(end - s)))) {
		if (end - s >= 3 && s[1] >= 0xA0 && s[1] <= 0xBF && (s[2] & 0xC0) == 0x80) {
			memcpy(s, "\xEF\xBF\xBD", 3);
			fixed++;
			s += 3;
		} else {
			s++;
		}
	}
	return fixed;
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
