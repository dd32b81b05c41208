/* Which language failed source text was written for (lang_guess.h). */
#include <string.h>

#include "lang_guess.h"

/* The next line of [*p, end) without leading blanks, as [*s, *e); false at
 * the end. */
static bool next_line(const char **p, const char *end, const char **s, const char **e)
{
	if (*p >= end)
		return false;
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));
	const char *b = *p, *t = nl ? nl : end;
	while (b < t && (*b == ' ' || *b == '\t'))
		b++;
	while (t > b && (t[-1] == ' ' || t[-1] == '\t' || t[-1] == '\r'))
		t--;
	*s = b;
	*e = t;
	*p = nl ? nl + 1 : end;
	return true;
}

static bool starts(const char *s, const char *e, const char *word)
{
	size_t n = strlen(word);
	return (size_t)(e - s) >= n && !memcmp(s, word, n);
}

static bool holds(const char *s, const char *e, const char *needle)
{
	size_t n = strlen(needle);
	for (const char *q = s; q + n <= e; q++)
		if (!memcmp(q, needle, n))
			return true;
	return false;
}

static bool py_line(const char *s, const char *e)
{
	static const char *const headers[] = { "if ",  "for ",	 "while ", "with ",
					       "try:", "else:",	 "except", "finally:",
					       "def ", "class ", "elif ",  "async def " };
	bool colon = e > s && e[-1] == ':';

	if (starts(s, e, "import ") && !holds(s, e, "'") && !holds(s, e, "\"") &&
	    !holds(s, e, "{") && !holds(s, e, "*"))
		return true;
	if (starts(s, e, "from ") && holds(s, e, " import "))
		return true;
	for (size_t i = 0; i < sizeof(headers) / sizeof(headers[0]); i++)
		if (starts(s, e, headers[i]) && colon)
			return true;
	return false;
}

static bool js_line(const char *s, const char *e)
{
	static const char *const heads[] = { "const ",	  "let ",      "var ",
					     "function ", "function(", "console." };

	for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
		if (starts(s, e, heads[i]))
			return true;
	return holds(s, e, "=>") || holds(s, e, "===") || holds(s, e, "!==");
}

static bool any_line(const char *src, size_t len, bool (*test)(const char *, const char *))
{
	const char *p = src, *end = src + len, *s, *e;

	while (src && next_line(&p, end, &s, &e))
		if (test(s, e))
			return true;
	return false;
}

bool cc_looks_like_python(const char *src, size_t len)
{
	return any_line(src, len, py_line);
}

bool cc_looks_like_javascript(const char *src, size_t len)
{
	return any_line(src, len, js_line);
}

static bool import_line(const char *s, const char *e)
{
	if (!starts(s, e, "import"))
		return false;
	s += 6;
	/* import() and import.meta are expressions; importx a name */
	bool gap = s < e && (*s == ' ' || *s == '\t');
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	if (s < e && (*s == '{' || *s == '*' || *s == '\'' || *s == '"'))
		return true;
	return gap && s < e &&
	       (*s == '_' || *s == '$' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'));
}

bool cc_has_static_import(const char *src, size_t len)
{
	return any_line(src, len, import_line);
}
