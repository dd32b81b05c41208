/* Growing text buffer; see buf.h. */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cc_buf_add(struct cc_buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->limit && n > b->limit - b->len) {
		n = b->limit - b->len;
		b->full = true;
	}
	if (!n)
		return;
	if (b->len + n + 1 > b->alloc) {
		size_t want = b->alloc ? b->alloc * 2 : 256;
		if (want < b->len + n + 1)
			want = b->len + n + 1;
		if (b->limit && want > b->limit + 1)
			want = b->limit + 1;
		char *p = realloc(b->data, want);
		if (!p) {
			b->oom = b->full = true;
			return;
		}
		b->data = p;
		b->alloc = want;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = 0;
}

void cc_buf_puts(struct cc_buf *b, const char *s)
{
	cc_buf_add(b, s, strlen(s));
}

void cc_buf_printf(struct cc_buf *b, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = b->full = true;
		return;
	}
	cc_buf_add(b, s, (size_t)n);
	free(s);
}

void cc_buf_free(struct cc_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->alloc = 0;
}

char *cc_vstrprintf(const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	return s;
}

char *cc_strprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = cc_vstrprintf(fmt, ap);
	va_end(ap);
	return s;
}
