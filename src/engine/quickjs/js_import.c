/* `import fs from 'fs'` in a script. Evals are scripts (their completion
 * value is the result and their top-level declarations persist), where a
 * static import is a SyntaxError; so a script that failed to compile has
 * each top-level static import of the fs module rewritten into the
 * `require` it means, on the same line, and is compiled again. Only the
 * specifiers fs, node:fs, fs/promises and node:fs/promises are touched;
 * any other import keeps its SyntaxError. The guest gains nothing here
 * that `require('fs')` does not already give. Worker side only. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "js_fs.h"

static bool id_char(char c)
{
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || (unsigned char)c >= 0x80;
}

/* Blanks on the same line (newlines end an import we rewrite). */
static const char *skip_blank(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static const char *word(const char *p, const char *end, const char *w)
{
	size_t n = strlen(w);
	p = skip_blank(p, end);
	if ((size_t)(end - p) < n || memcmp(p, w, n) || (p + n < end && id_char(p[n])))
		return NULL;
	return p + n;
}

/* An identifier: its start in *s, length in *n. */
static const char *ident(const char *p, const char *end, const char **s, size_t *n)
{
	p = skip_blank(p, end);
	*s = p;
	if (p >= end || !id_char(*p) || (*p >= '0' && *p <= '9'))
		return NULL;
	while (p < end && id_char(*p))
		p++;
	*n = (size_t)(p - *s);
	return p;
}

/* A quoted fs specifier: its text (with quotes) in *s, *n. */
static const char *spec(const char *p, const char *end, const char **s, size_t *n)
{
	static const char *const ok[] = { "fs", "node:fs", "fs/promises", "node:fs/promises" };
	p = skip_blank(p, end);
	if (p >= end || (*p != '\'' && *p != '"'))
		return NULL;
	const char *q = memchr(p + 1, *p, (size_t)(end - p - 1));
	if (!q)
		return NULL;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if ((size_t)(q - p - 1) == strlen(ok[i]) && !memcmp(p + 1, ok[i], strlen(ok[i]))) {
			*s = p;
			*n = (size_t)(q - p + 1);
			return q + 1;
		}
	return NULL;
}

/* `{ a, b as c }` as the destructuring `{ a, b: c }`, into b. */
static const char *names(const char *p, const char *end, struct cc_buf *b)
{
	p = skip_blank(p, end);
	if (p >= end || *p != '{')
		return NULL;
	cc_buf_puts(b, "{ ");
	for (p++;;) {
		const char *s, *a;
		size_t n, an;
		p = skip_blank(p, end);
		if (p < end && *p == '}')
			break;
		if (!(p = ident(p, end, &s, &n)))
			return NULL;
		cc_buf_add(b, s, n);
		const char *as = word(p, end, "as");
		if (as) {
			if (!(p = ident(as, end, &a, &an)))
				return NULL;
			cc_buf_puts(b, ": ");
			cc_buf_add(b, a, an);
		}
		p = skip_blank(p, end);
		if (p < end && *p == ',') {
			cc_buf_puts(b, ", ");
			p++;
		} else if (p >= end || *p != '}') {
			return NULL;
		}
	}
	cc_buf_puts(b, " }");
	return p + 1;
}

/* One import statement starting at p (just after "import"): its
 * replacement into b, the end of the statement returned; NULL when it is
 * not an fs import this understands. */
static const char *one(const char *p, const char *end, struct cc_buf *b)
{
	const char *def = NULL, *q, *sp;
	size_t defn = 0, spn;
	struct cc_buf bind = { .limit = 4096 };
	q = skip_blank(p, end);
	if (q < end && *q == '*') {
		if (!(q = word(q + 1, end, "as")) || !(q = ident(q, end, &def, &defn)))
			return NULL;
	} else if (q < end && *q == '{') {
		q = names(q, end, &bind);
	} else if ((q = ident(q, end, &def, &defn))) {
		const char *c = skip_blank(q, end);
		if (c < end && *c == ',')
			q = names(c + 1, end, &bind);
	}
	if (!q || !(q = word(q, end, "from")) || !(q = spec(q, end, &sp, &spn)) || bind.oom) {
		cc_buf_free(&bind);
		return NULL;
	}
	cc_buf_puts(b, "var ");
	if (def) {
		cc_buf_add(b, def, defn);
		cc_buf_puts(b, " = require(");
		cc_buf_add(b, sp, spn);
		cc_buf_puts(b, ")");
	}
	if (bind.len) {
		cc_buf_puts(b, def ? ", " : "");
		cc_buf_add(b, bind.data, bind.len);
		cc_buf_puts(b, " = require(");
		cc_buf_add(b, sp, spn);
		cc_buf_puts(b, ")");
	}
	/* ";" always: the next line may start with "[" or "(" */
	cc_buf_puts(b, ";");
	cc_buf_free(&bind);
	return q;
}

char *cc_js_rewrite_imports(const char *code, size_t len, size_t *out_len)
{
	struct cc_buf b = { .limit = 2 * len + 4096 };
	const char *p = code, *end = code + len, *done = code;
	bool any = false;
	while (p < end) {
		/* p is at the start of a line */
		const char *q = skip_blank(p, end), *after = word(q, end, "import"), *stop = NULL;
		struct cc_buf r = { .limit = 4096 };
		if (after && (stop = one(after, end, &r)) && !r.oom) {
			cc_buf_add(&b, done, (size_t)(q - done));
			cc_buf_add(&b, r.data, r.len);
			done = p = stop;
			any = true;
		}
		cc_buf_free(&r);
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
	cc_buf_add(&b, done, (size_t)(end - done));
	if (!any || b.oom || b.full || !b.data) {
		cc_buf_free(&b);
		return NULL;
	}
	*out_len = b.len;
	return b.data;
}
