/* Making guest text inert on a terminal: see term.h. */
#include "term.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>

void cc_term_init(struct cc_term *t, FILE *f, bool raw)
{
	t->f = f;
	t->escape = !raw && isatty(fileno(f));
}

/* Length of the well-formed UTF-8 sequence at s (n bytes left) and its
 * code point, or 0 when ill-formed (RFC 3629: no overlongs, surrogates or
 * values above U+10FFFF). */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char b = s[0];
	size_t len = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 ? 2 : 0;
	if (b >= 0xf5 || !len || len > n)
		return 0;
	uint32_t c = b & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (len == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	*cp = c;
	return len;
}

static bool invisible_format(uint32_t c)
{
	return (c >= 0x80 && c <= 0x9f) || c == 0x061c || c == 0x200e || c == 0x200f ||
	       (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

/* Write s[0..n) escaped; newline and tab pass when keep_lines. */
static void put_escaped(FILE *f, const char *s, size_t n, bool keep_lines)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		unsigned char b = u[i];
		if ((b == '\n' || b == '\t') && keep_lines) {
			fputc(b, f);
			i++;
		} else if (b < 0x20 || b == 0x7f) {
			fputc('^', f);
			fputc(b == 0x7f ? '?' : b + 0x40, f);
			i++;
		} else if (b < 0x80) {
			fputc(b, f);
			i++;
		} else {
			uint32_t c = 0;
			size_t len = utf8_next(u + i, n - i, &c);
			if (!len) {
				fprintf(f, "<%02X>", b);
				i++;
			} else if (invisible_format(c)) {
				fprintf(f, "<U+%04X>", (unsigned)c);
				i += len;
			} else {
				fwrite(u + i, 1, len, f);
				i += len;
			}
		}
	}
}

/* Whether the line at s (up to n bytes) would read as codecage's own. */
static bool looks_like_ours(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return n - i >= 8 && !strncmp(s + i, "codecage", 8);
}

void cc_term_guest(const struct cc_term *t, const char *s, size_t n)
{
	if (!t->escape) {
		fwrite(s, 1, n, t->f);
		return;
	}
	while (n) {
		const char *nl = memchr(s, '\n', n);
		size_t len = nl ? (size_t)(nl - s) + 1 : n;
		if (looks_like_ours(s, len))
			fputs(CC_TERM_GUEST_MARK, t->f);
		put_escaped(t->f, s, len, true);
		if (!nl)
			fputc('\n', t->f);
		s += len;
		n -= len;
	}
}

void cc_term_inline(const struct cc_term *t, const char *s)
{
	if (!t->escape)
		fputs(s, t->f);
	else
		put_escaped(t->f, s, strlen(s), false);
}
