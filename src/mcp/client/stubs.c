/* What a model reads about the upstream tools (upstream.h): TypeScript
 * declarations for run_javascript and Python stubs for run_python, from
 * each tool's inputSchema, outputSchema and description, in the format of
 * the Python package's describe_tools (python/codecage/_describe.py). An
 * upstream's schema is not trusted: depth, property count and text are
 * capped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "upstream.h"

#define STUB_DEPTH 6
#define STUB_PROPS 40
#define STUB_DESC 600

static bool ident(const char *s)
{
	return s && cc_identifier_ok(s, strlen(s));
}

/* A JSON string literal of s (or a quoted key when not an identifier). */
static void key(struct cc_buf *b, const char *k)
{
	if (ident(k)) {
		cc_buf_puts(b, k);
		return;
	}
	json_t *s = json_string(k);
	char *t = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
	cc_buf_puts(b, t ? t : "\"?\"");
	free(t);
	json_decref(s);
}

static void ts_type(struct cc_buf *b, const json_t *s, int depth);
static void py_type(struct cc_buf *b, const json_t *s, int depth);

static void ts_props(struct cc_buf *b, const json_t *s, int depth, const char *sep)
{
	const json_t *req = json_object_get(s, "required");
	const char *k;
	json_t *v;
	size_t n = 0;
	json_object_foreach((json_t *)json_object_get(s, "properties"), k, v)
	{
		if (n++ == STUB_PROPS) {
			cc_buf_puts(b, "[more: string]: unknown");
			cc_buf_puts(b, sep);
			break;
		}
		bool r = false;
		size_t i;
		json_t *x;
		json_array_foreach(req, i, x) r |=
			json_is_string(x) && !strcmp(json_string_value(x), k);
		key(b, k);
		cc_buf_puts(b, r ? ": " : "?: ");
		ts_type(b, v, depth + 1);
		cc_buf_puts(b, sep);
	}
}

static void union_of(struct cc_buf *b, const json_t *list, int depth, bool ts)
{
	size_t i;
	json_t *x;
	json_array_foreach(list, i, x)
	{
		if (i)
			cc_buf_puts(b, " | ");
		if (i == 8) {
			cc_buf_puts(b, ts ? "unknown" : "Any");
			break;
		}
		(ts ? ts_type : py_type)(b, x, depth + 1);
	}
	if (!json_array_size(list))
		cc_buf_puts(b, ts ? "unknown" : "Any");
}

static void ts_type(struct cc_buf *b, const json_t *s, int depth)
{
	const char *t = json_string_value(json_object_get(s, "type"));
	if (!json_is_object(s) || depth > STUB_DEPTH) {
		cc_buf_puts(b, "unknown");
	} else if (json_is_array(json_object_get(s, "enum"))) {
		size_t i;
		json_t *x;
		json_array_foreach(json_object_get(s, "enum"), i, x)
		{
			char *lit = i < 16 ? json_dumps(x, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
			cc_buf_puts(b, i ? " | " : "");
			cc_buf_puts(b, lit && strlen(lit) < 80 ? lit : "unknown");
			free(lit);
			if (i >= 16)
				break;
		}
	} else if (json_is_array(json_object_get(s, "anyOf"))) {
		union_of(b, json_object_get(s, "anyOf"), depth, true);
	} else if (json_is_array(json_object_get(s, "oneOf"))) {
		union_of(b, json_object_get(s, "oneOf"), depth, true);
	} else if (!t) {
		cc_buf_puts(b, "unknown");
	} else if (!strcmp(t, "string")) {
		cc_buf_puts(b, "string");
	} else if (!strcmp(t, "integer") || !strcmp(t, "number")) {
		cc_buf_puts(b, "number");
	} else if (!strcmp(t, "boolean") || !strcmp(t, "null")) {
		cc_buf_puts(b, t);
	} else if (!strcmp(t, "array")) {
		cc_buf_puts(b, "(");
		ts_type(b, json_object_get(s, "items"), depth + 1);
		cc_buf_puts(b, ")[]");
	} else if (!strcmp(t, "object") && json_object_size(json_object_get(s, "properties"))) {
		cc_buf_puts(b, "{ ");
		ts_props(b, s, depth, "; ");
		cc_buf_puts(b, "}");
	} else if (!strcmp(t, "object")) {
		cc_buf_puts(b, "Record<string, unknown>");
	} else {
		cc_buf_puts(b, "unknown");
	}
}

static void py_type(struct cc_buf *b, const json_t *s, int depth)
{
	const char *t = json_string_value(json_object_get(s, "type"));
	if (!json_is_object(s) || depth > STUB_DEPTH) {
		cc_buf_puts(b, "Any");
	} else if (json_is_array(json_object_get(s, "anyOf"))) {
		union_of(b, json_object_get(s, "anyOf"), depth, false);
	} else if (json_is_array(json_object_get(s, "oneOf"))) {
		union_of(b, json_object_get(s, "oneOf"), depth, false);
	} else if (!t) {
		cc_buf_puts(b, "Any");
	} else if (!strcmp(t, "string")) {
		cc_buf_puts(b, "str");
	} else if (!strcmp(t, "integer")) {
		cc_buf_puts(b, "int");
	} else if (!strcmp(t, "number")) {
		cc_buf_puts(b, "float");
	} else if (!strcmp(t, "boolean")) {
		cc_buf_puts(b, "bool");
	} else if (!strcmp(t, "null")) {
		cc_buf_puts(b, "None");
	} else if (!strcmp(t, "array")) {
		cc_buf_puts(b, "list[");
		py_type(b, json_object_get(s, "items"), depth + 1);
		cc_buf_puts(b, "]");
	} else if (!strcmp(t, "object")) {
		cc_buf_puts(b, "dict[str, Any]");
	} else {
		cc_buf_puts(b, "Any");
	}
}

/* The description cut to STUB_DESC bytes on one line per source line,
 * each prefixed, its comment or docstring terminators defused: a TS block
 * comment's, and for a Python docstring (py) a triple quote, a backslash
 * (doubled: it would escape the closing quotes) and a final quote (a space
 * after it: it would run into them). */
static void doc(struct cc_buf *b, const char *text, bool py, const char *first, const char *prefix,
		const char *last)
{
	if (!text || !*text)
		return;
	size_t n = strlen(text);
	if (n > STUB_DESC) /* cut at a character's start: the text stays UTF-8 */
		for (n = STUB_DESC; n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80; n--)
			;
	cc_buf_puts(b, first);
	for (size_t i = 0; i < n; i++) {
		char c = text[i];
		if (c == '\n') {
			cc_buf_puts(b, "\n");
			cc_buf_puts(b, prefix);
		} else if (c == '*' && i + 1 < n && text[i + 1] == '/') {
			cc_buf_puts(b, "* ");
		} else if (c == '"' && i + 2 < n && text[i + 1] == '"' && text[i + 2] == '"') {
			cc_buf_puts(b, "'''");
			i += 2;
		} else if (c == '\\' && py) {
			cc_buf_puts(b, "\\\\");
		} else if ((unsigned char)c >= 0x20 || c == '\t' || (unsigned char)c >= 0x80) {
			cc_buf_add(b, &c, 1);
		}
	}
	if (py && b->len && b->data[b->len - 1] == '"')
		cc_buf_puts(b, " ");
	cc_buf_puts(b, last);
}

static bool matches(const struct mcp_up_tool *t, const char *query)
{
	if (!query || !*query)
		return true;
	const char *d = json_string_value(json_object_get(t->def, "description"));
	return strcasestr(t->guest, query) || (d && strcasestr(d, query));
}

static void ts_tool(struct cc_buf *b, const struct mcp_up_tool *t)
{
	const char *d = json_string_value(json_object_get(t->def, "description"));
	const json_t *in = json_object_get(t->def, "inputSchema");
	const json_t *out = json_object_get(t->def, "outputSchema");
	doc(b, d, false, "    /** ", "     * ", " */\n");
	cc_buf_puts(b, "    ");
	cc_buf_puts(b, strchr(t->guest, '.') + 1);
	cc_buf_puts(b, "(input");
	cc_buf_puts(b, json_array_size(json_object_get(in, "required")) ? ": " : "?: ");
	if (json_object_size(json_object_get(in, "properties"))) {
		cc_buf_puts(b, "{ ");
		ts_props(b, in, 1, "; ");
		cc_buf_puts(b, "}");
	} else {
		cc_buf_puts(b, "Record<string, unknown>");
	}
	cc_buf_puts(b, "): Promise<");
	if (out)
		ts_type(b, out, 1);
	else
		cc_buf_puts(b, "unknown");
	cc_buf_puts(b, ">;\n");
}

static void py_tool(struct cc_buf *b, const struct mcp_up_tool *t)
{
	const char *d = json_string_value(json_object_get(t->def, "description"));
	const json_t *in = json_object_get(t->def, "inputSchema");
	const json_t *out = json_object_get(t->def, "outputSchema");
	const json_t *req = json_object_get(in, "required");
	cc_buf_puts(b, "    def ");
	cc_buf_puts(b, strchr(t->guest, '.') + 1);
	cc_buf_puts(b, "(");
	const char *k;
	json_t *v;
	size_t n = 0;
	for (int pass = 0; pass < 2; pass++) {
		json_object_foreach((json_t *)json_object_get(in, "properties"), k, v)
		{
			bool r = false;
			size_t i;
			json_t *x;
			json_array_foreach(req, i, x) r |=
				json_is_string(x) && !strcmp(json_string_value(x), k);
			if (r != (pass == 0) || !ident(k) || n >= STUB_PROPS)
				continue;
			cc_buf_puts(b, n++ ? ", " : "*, ");
			cc_buf_puts(b, k);
			cc_buf_puts(b, ": ");
			py_type(b, v, 1);
			if (pass)
				cc_buf_puts(b, " = None");
		}
	}
	cc_buf_puts(b, ") -> ");
	if (out)
		py_type(b, out, 1);
	else
		cc_buf_puts(b, "Any");
	cc_buf_puts(b, ":\n");
	doc(b, d, true, "        \"\"\"", "        ", "\"\"\"\n");
	cc_buf_puts(b, "        ...\n");
}

size_t mcp_stubs(struct cc_buf *b, struct mcp_upstream *const *ups, size_t n, int lang,
		 const char *query)
{
	size_t hits = 0;
	if (lang)
		cc_buf_puts(b,
			    "// Upstream MCP tools: `await tools.SERVER.TOOL({...})` returns the "
			    "tool's structured result (or its text, parsed when it is JSON);\n"
			    "// a failing tool throws an UpstreamToolError, over budget a "
			    "ToolBudgetError.\ndeclare const tools: {\n");
	else
		cc_buf_puts(b,
			    "# Upstream MCP tools: tools.SERVER.TOOL(key=value, ...) returns the "
			    "tool's structured result\n# (or its text, parsed when it is JSON); "
			    "`await atools.SERVER.TOOL(...)` for asyncio.gather.\n# A failing "
			    "tool raises UpstreamToolError, over budget ToolBudgetError.\n"
			    "from typing import Any\n");
	for (size_t i = 0; i < n; i++) {
		size_t k = 0, shown = 0;
		const struct mcp_up_tool *tools = mcp_upstream_tools(ups[i], &k);
		for (size_t j = 0; j < k; j++) {
			if (!matches(&tools[j], query))
				continue;
			if (!shown++) {
				cc_buf_puts(b, lang ? "  " : "class ");
				cc_buf_puts(b, mcp_upstream_name(ups[i]));
				cc_buf_puts(b, lang ? ": {\n" : ":  # tools.");
				if (!lang) {
					cc_buf_puts(b, mcp_upstream_name(ups[i]));
					cc_buf_puts(b, "\n");
				}
			}
			(lang ? ts_tool : py_tool)(b, &tools[j]);
			hits++;
		}
		if (shown && lang)
			cc_buf_puts(b, "  };\n");
	}
	if (lang)
		cc_buf_puts(b, "};\n");
	return hits;
}
