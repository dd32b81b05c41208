/* A growing text buffer for rendering (the CLI's JSON, the JS console's
 * text). Pure helper; never aborts: when malloc fails, `oom` is set and
 * later appends are dropped. Zero-initialise (optionally with a limit);
 * free with cc_buf_free. data is NUL-terminated whenever it is non-NULL. */
#ifndef CC_COMMON_BUF_H
#define CC_COMMON_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct cc_buf {
	char *data;
	size_t len, alloc;
	size_t limit; /* bytes kept at most; 0 = no limit */
	bool full;    /* something was cut at limit (or lost to oom) */
	bool oom;     /* malloc failed; data holds what fit */
};

void cc_buf_add(struct cc_buf *b, const char *s, size_t n);
void cc_buf_puts(struct cc_buf *b, const char *s);
void cc_buf_printf(struct cc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cc_buf_free(struct cc_buf *b);

/* printf into a new heap string (the caller frees it); NULL when out of
 * memory. */
char *cc_strprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same with a va_list. */
char *cc_vstrprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif
