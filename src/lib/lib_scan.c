/* What a JavaScript file loads (lib_scan.h): a tokenizer that knows
 * comments, strings, template literals (with their ${} nesting) and
 * regular expression literals well enough to find the static module
 * specifiers and require() calls outside them. Pure: no I/O. */
#include "lib_scan.h"

#include <stdbool.h>
#include <string.h>

enum tok {
	T_END,
	T_IDENT,  /* a name or keyword */
	T_STRING, /* '...' or "..." */
	T_NUMBER,
	T_PUNCT,    /* one character: ( ) { } [ ] ; , . * and the rest */
	T_TEMPLATE, /* a whole template literal, or the part up to a ${ */
	T_REGEX,
};

struct lexer {
	const char *p, *end;
	enum tok prev;	     /* the last significant token, for '/' */
	char prev_c;	     /* its character, for T_PUNCT */
	const char *prev_id; /* its text, for T_IDENT */
	size_t prev_n;
	/* brace depths at which a template literal's ${ ... } ends */
	unsigned tmpl[64];
	unsigned ntmpl, depth;
};

struct token {
	enum tok t;
	const char *s; /* its text; a string's without the quotes */
	size_t n;
	char c; /* T_PUNCT */
};

static bool id_start(unsigned char c)
{
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c >= 0x80;
}

static bool id_char(unsigned char c)
{
	return id_start(c) || (c >= '0' && c <= '9');
}

static bool is_word(const struct token *k, const char *w)
{
	return k->t == T_IDENT && k->n == strlen(w) && !memcmp(k->s, w, k->n);
}

/* May a '/' here start a regular expression? After a value (a name that
 * is not a keyword, a number, a string, ')' or ']') it divides. */
static bool regex_allowed(const struct lexer *x)
{
	static const char *const kw[] = { "return", "typeof", "instanceof", "in",    "of",
					  "new",    "delete", "void",	    "throw", "case",
					  "do",	    "else",   "yield",	    "await" };
	switch (x->prev) {
	case T_IDENT:
		for (size_t i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
			if (x->prev_n == strlen(kw[i]) && !memcmp(x->prev_id, kw[i], x->prev_n))
				return true;
		return false;
	case T_NUMBER:
	case T_STRING:
	case T_TEMPLATE:
	case T_REGEX:
		return false;
	case T_PUNCT:
		return x->prev_c != ')' && x->prev_c != ']';
	default:
		return true;
	}
}

/* A quoted string from x->p (at its quote). An unterminated one ends at
 * its line's end. */
static void quoted(struct lexer *x, struct token *k)
{
	char q = *x->p++;
	k->t = T_STRING;
	k->s = x->p;
	while (x->p < x->end && *x->p != q && *x->p != '\n') {
		if (*x->p == '\\' && x->p + 1 < x->end)
			x->p++;
		x->p++;
	}
	k->n = (size_t)(x->p - k->s);
	if (x->p < x->end && *x->p == q)
		x->p++;
}

/* Template text from x->p (after ` or a substitution's }) to its closing
 * ` or to a ${, which opens a substitution. */
static void template_text(struct lexer *x, struct token *k)
{
	k->t = T_TEMPLATE;
	k->s = x->p;
	while (x->p < x->end && *x->p != '`') {
		if (*x->p == '\\' && x->p + 1 < x->end) {
			x->p += 2;
			continue;
		}
		if (x->p[0] == '$' && x->p + 1 < x->end && x->p[1] == '{') {
			if (x->ntmpl < sizeof(x->tmpl) / sizeof(x->tmpl[0]))
				x->tmpl[x->ntmpl++] = x->depth;
			x->depth++;
			x->p += 2;
			k->n = (size_t)(x->p - k->s);
			return;
		}
		x->p++;
	}
	k->n = (size_t)(x->p - k->s);
	if (x->p < x->end)
		x->p++;
}

/* A regular expression literal from x->p (at its '/'): up to the '/' that
 * is not escaped or inside a class, then its flags. One that meets the
 * end of its line was a division after all: just the '/'. */
static bool regex(struct lexer *x, struct token *k)
{
	const char *p = x->p + 1;
	bool cls = false;
	for (; p < x->end && *p != '\n'; p++) {
		if (*p == '\\' && p + 1 < x->end) {
			p++;
		} else if (*p == '[') {
			cls = true;
		} else if (*p == ']') {
			cls = false;
		} else if (*p == '/' && !cls) {
			p++;
			while (p < x->end && id_char((unsigned char)*p))
				p++;
			k->t = T_REGEX;
			k->s = x->p;
			k->n = (size_t)(p - x->p);
			x->p = p;
			return true;
		}
	}
	return false;
}

static void next(struct lexer *x, struct token *k)
{
	for (;;) {
		while (x->p < x->end && (*x->p == ' ' || *x->p == '\t' || *x->p == '\n' ||
					 *x->p == '\r' || *x->p == '\f' || *x->p == '\v'))
			x->p++;
		if (x->end - x->p >= 2 && x->p[0] == '/' && x->p[1] == '/') {
			const char *nl = memchr(x->p, '\n', (size_t)(x->end - x->p));
			x->p = nl ? nl : x->end;
		} else if (x->end - x->p >= 2 && x->p[0] == '/' && x->p[1] == '*') {
			const char *e = x->p + 2;
			while (e + 1 < x->end && !(e[0] == '*' && e[1] == '/'))
				e++;
			x->p = e + 1 < x->end ? e + 2 : x->end;
		} else {
			break;
		}
	}
	k->t = T_END;
	k->s = x->p;
	k->n = 0;
	if (x->p >= x->end)
		return;
	unsigned char c = (unsigned char)*x->p;
	if (c == '\'' || c == '"') {
		quoted(x, k);
	} else if (c == '`') {
		x->p++;
		template_text(x, k);
	} else if (id_start(c)) {
		k->t = T_IDENT;
		while (x->p < x->end && id_char((unsigned char)*x->p))
			x->p++;
		k->n = (size_t)(x->p - k->s);
	} else if (c >= '0' && c <= '9') {
		k->t = T_NUMBER;
		while (x->p < x->end && (id_char((unsigned char)*x->p) || *x->p == '.'))
			x->p++;
		k->n = (size_t)(x->p - k->s);
	} else if (c == '/' && regex_allowed(x) && regex(x, k)) {
		/* k is the literal */
	} else if (c == '}' && x->ntmpl && x->tmpl[x->ntmpl - 1] == x->depth - 1) {
		/* a substitution ends: the template goes on */
		x->ntmpl--;
		x->depth--;
		x->p++;
		template_text(x, k);
	} else {
		k->t = T_PUNCT;
		k->c = (char)c;
		k->n = 1;
		x->p++;
		if (c == '{')
			x->depth++;
		else if (c == '}' && x->depth)
			x->depth--;
	}
	x->prev = k->t;
	x->prev_c = k->c;
	x->prev_id = k->s;
	x->prev_n = k->n;
}

/* After `import` (not `import(` or `import.`): the clause up to `from`
 * and its string, or a bare string. true with the specifier in *spec. */
static bool import_clause(struct lexer *x, struct token *spec)
{
	struct token k;
	next(x, &k);
	if (k.t == T_STRING) {
		*spec = k;
		return true;
	}
	for (int n = 0; n < 4096 && k.t != T_END; n++, next(x, &k)) {
		if (is_word(&k, "from")) {
			next(x, spec);
			return spec->t == T_STRING;
		}
		bool ok = k.t == T_IDENT || (k.t == T_PUNCT && strchr("*{},", k.c));
		if (!ok)
			return false;
	}
	return false;
}

/* After `export`: `* [as x] from '...'` or `{ ... } from '...'`. */
static bool export_from(struct lexer *x, struct token *spec)
{
	struct token k;
	next(x, &k);
	if (k.t != T_PUNCT || (k.c != '*' && k.c != '{'))
		return false;
	for (int n = 0; n < 4096; n++) {
		next(x, &k);
		if (is_word(&k, "from")) {
			next(x, spec);
			return spec->t == T_STRING;
		}
		if (!(k.t == T_IDENT || (k.t == T_PUNCT && strchr("*{},", k.c))))
			return false;
	}
	return false;
}

int cc_js_scan(const char *code, size_t len, cc_js_found_fn found, void *user)
{
	struct lexer x = { .p = code, .end = code + len, .prev = T_END };
	struct token k, spec;
	bool after_dot = false;
	for (next(&x, &k); k.t != T_END; next(&x, &k)) {
		bool dot = k.t == T_PUNCT && k.c == '.';
		if (!after_dot && is_word(&k, "import")) {
			struct lexer save = x;
			struct token n;
			next(&x, &n);
			bool dynamic = n.t == T_PUNCT && (n.c == '(' || n.c == '.');
			x = save;
			if (!dynamic && import_clause(&x, &spec) &&
			    found(user, CC_JS_IMPORT, spec.s, spec.n) < 0)
				return -1;
		} else if (!after_dot && is_word(&k, "export")) {
			struct lexer save = x;
			if (export_from(&x, &spec)) {
				if (found(user, CC_JS_IMPORT, spec.s, spec.n) < 0)
					return -1;
			} else {
				x = save;
			}
		} else if (!after_dot && is_word(&k, "require")) {
			struct lexer save = x;
			struct token a, b;
			next(&x, &a);
			if (a.t == T_PUNCT && a.c == '(') {
				next(&x, &spec);
				next(&x, &b);
				if (spec.t == T_STRING && b.t == T_PUNCT && b.c == ')') {
					if (found(user, CC_JS_REQUIRE, spec.s, spec.n) < 0)
						return -1;
					after_dot = false;
					continue;
				}
			}
			x = save;
		}
		after_dot = dot;
	}
	return 0;
}
