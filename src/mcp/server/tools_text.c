/* What a model sees: the two tools' definitions (descriptions, input and
 * output schemas) and a tools/call result rendered as one text block plus
 * structuredContent with the same fields. Values use the tagged JSON
 * mapping of the CLI's --json (src/frontend/json_out.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"
#include "json_out.h"
#include "inputs.h"
#include "server.h"
#include "upstream.h"

/* ---- tools/list ---- */

static const char python_desc[] =
	"Run Python 3.11 code (real CPython) in a confined sandbox and get back its result.\n"
	"- State persists across calls in this conversation, like a notebook: variables, "
	"functions and imports stay defined. Pass reset: true to start from a clean state.\n"
	"- Return a value by ending the code with an expression (as in the REPL): "
	"`x = 21\\nx * 2` returns 42. print() goes to stdout.\n"
	"- Available: the standard library, plus the host's read-only Debian packages "
	"(numpy may be there). No network, no subprocesses, no pip install.\n"
	"- Limits: %.0f s per call (timeout_s may lower it), %llu MiB of memory, %llu KiB each "
	"of stdout and stderr (more is cut, with a marker), %s of result value (images and "
	"tables included).\n"
	"- Charts and tables come back as images and HTML after the text: matplotlib figures "
	"left open (or passed to plt.show()), display(obj) (objects with _repr_png_, "
	"_repr_svg_ or _repr_html_, Pillow images), a last value that is a pandas DataFrame.\n"
	"- On failure the result says status: error with the kind (guest_error, syntax_error, "
	"timeout, memory_limit, output_limit, worker_crashed), the exception type and message "
	"and a traceback. After a timeout, memory error or crash the runtime may be replaced: "
	"the next result starts with a note, and earlier variables are gone.";

#define JS_DESC_HEAD                                                                               \
	"Run JavaScript (ES2023, the QuickJS engine) in a confined sandbox and get back its "      \
	"result.\n"                                                                                \
	"- State persists across calls in this conversation: globals, functions and top-level "    \
	"let/const/var stay defined. Pass reset: true to start from a clean state.\n"              \
	"- Return a value by ending the code with an expression: `const x = 21; x * 2` "           \
	"returns 42. Top-level await works and a final Promise is awaited. console.log goes "      \
	"to stdout, console.error to stderr.\n"
#define JS_DESC_TAIL                                                                               \
	"- Limits: %.0f s per call (timeout_s may lower it), %llu MiB of memory, %llu KiB each "   \
	"of stdout and stderr (more is cut, with a marker), %s of result value (displays "         \
	"included).\n"                                                                             \
	"- display(value, mimeType) shows a chart or table after the text: an SVG string "         \
	"(from Vega-Lite or D3) as 'image/svg+xml', HTML as 'text/html'.\n"                        \
	"- On failure the result says status: error with the kind (guest_error, syntax_error, "    \
	"timeout, memory_limit, output_limit, worker_crashed), the error name and message and "    \
	"a stack trace. After a timeout, memory error or crash the runtime may be replaced: "      \
	"the next result starts with a note, and earlier globals are gone."
#define JS_DESC_FS                                                                                 \
	"Node's synchronous file API as the global fs (also require('fs') and import fs from "     \
	"'fs'): readFileSync(path, 'utf8'), writeFileSync, appendFileSync, existsSync, "           \
	"readdirSync, statSync, mkdirSync({recursive}), rmSync, renameSync, unlinkSync, and "      \
	"fs.promises."

static const char js_desc[] = JS_DESC_HEAD "- ECMAScript plus " JS_DESC_FS
					   " No other modules or packages, no fetch, process or "
					   "setTimeout, no network.\n" JS_DESC_TAIL;

/* With --web-polyfills. */
static const char js_web_desc[] = JS_DESC_HEAD
	"- ECMAScript plus web basics: setTimeout/setInterval (a virtual clock: timers fire at "
	"once, in order), URL, URLSearchParams, TextEncoder, TextDecoder, Blob, File, "
	"FileReader, EventTarget, AbortController, crypto.getRandomValues/randomUUID, "
	"performance.now, structuredClone, atob/btoa; and " JS_DESC_FS " No window or "
	"document, no other modules or packages, no fetch or process, no network.\n" JS_DESC_TAIL;

json_t *mcp_output_schema(void)
{
	json_t *schema = json_pack(
		"{s:s, s:{s:{s:s, s:[s, s]}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:[s, s], s:s}, "
		"s:{s:s, s:s}, s:{s:[s, s], s:s}, s:{s:[s, s], s:s}}, s:[s, s, s, s, s, s]}",
		"type", "object", "properties", "status", "type", "string", "enum", "ok", "error",
		"value", "description",
		"the value of the last expression; JSON, with NaN/Infinity, big integers, bytes "
		"and dates tagged as {\"$float\"}, {\"$bigint\"}, {\"$bytes\": base64}, "
		"{\"$date\": ISO 8601}",
		"stdout", "type", "string", "stderr", "type", "string", "error", "type", "object",
		"null", "description", "null, or {kind, type, message, traceback}", "duration_ms",
		"type", "number", "description", "wall-clock time of the run, milliseconds", "note",
		"type", "string", "null", "description",
		"set when the runtime was replaced or reset before this run", "value_type", "type",
		"string", "null", "description",
		"set when the last value has no JSON form (a DataFrame, a set, a function): its "
		"type; value is then its text (Python repr, JavaScript console form)",
		"required", "status", "value", "stdout", "stderr", "error", "duration_ms");
	json_t *files = json_pack(
		"{s:s, s:s, s:{s:s, s:{s:{s:s}, s:{s:s}}}}", "type", "array", "description",
		"files this call created or changed under /tmp and writable mounts (path, bytes); "
		"read one with resources/read codecage://LANGUAGE/PATH",
		"items", "type", "object", "properties", "path", "type", "string", "size", "type",
		"integer");
	json_object_set_new(json_object_get(schema, "properties"), "files", files);
	json_t *deps = json_pack(
		"{s:s, s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}}", "type", "object",
		"description",
		"the packages the runtime has beyond the sandbox's own (key: the lock's cache key; "
		"log: what installing them said, in the call that started the runtime)",
		"properties", "key", "type", "string", "packages", "type", "string", "cached",
		"type", "boolean", "log", "type", "string");
	json_object_set_new(json_object_get(schema, "properties"), "dependencies", deps);
	return schema;
}

static json_t *input_schema(double timeout_s, bool deps, bool python)
{
	char tdesc[160];
	snprintf(tdesc, sizeof(tdesc),
		 "deadline for this call in seconds (default and maximum %.0f)", timeout_s);
	json_t *in =
		json_pack("{s:s, s:{s:{s:s, s:s}, s:{s:s, s:f, s:s}, s:{s:s, s:s}}, s:[s], s:b}",
			  "type", "object", "properties", "code", "type", "string", "description",
			  "the program to run", "timeout_s", "type", "number", "exclusiveMinimum",
			  0.0, "description", tdesc, "reset", "type", "boolean", "description",
			  "discard all state (variables, imports) before running code; files in "
			  "/tmp are kept",
			  "required", "code", "additionalProperties", 0);
	json_t *files = json_pack(
		"{s:s, s:s, s:{s:[{s:s}, {s:s, s:{s:{s:s}}, s:[s], s:b}]}}", "type", "object",
		"description",
		"files to write before the code runs: {guest path: text} or {guest path: "
		"{\"$bytes\": base64}}; a relative path is under /tmp (at most 100 files)",
		"additionalProperties", "anyOf", "type", "string", "type", "object", "properties",
		"$bytes", "type", "string", "required", "$bytes", "additionalProperties", 0);
	json_object_set_new(json_object_get(in, "properties"), "files", files);
	json_t *inputs = json_pack(
		"{s:s, s:s, s:i}", "type", "object", "description",
		"values to bind as global variables before the code runs: {name: value}, names "
		"[A-Za-z_][A-Za-z0-9_]*, values JSON (NaN/Infinity, big integers, bytes and dates "
		"tagged as in the result value: {\"$float\"}, {\"$bigint\"}, {\"$bytes\": "
		"base64}, {\"$date\": ISO 8601}); each within the result value limit",
		"maxProperties", MCP_MAX_INPUTS);
	json_object_set_new(json_object_get(in, "properties"), "inputs", inputs);
	if (deps) /* --allow-dependencies */
		json_object_set_new(
			json_object_get(in, "properties"), "dependencies",
			json_pack("{s:s, s:s, s:{s:s}, s:i}", "type", "array", "description",
				  python ? "packages to install before the code runs, pip "
					   "requirements such as \"polars\" or \"pydantic>=2\" "
					   "(wheels only); a PEP 723 '# /// script' block in the "
					   "code works too"
					 : "npm packages to install and load (as browser globals) "
					   "before the code runs, such as \"vega-lite@5\"",
				  "items", "type", "string", "maxItems", CC_MAX_DEPENDENCIES));
	return in;
}

/* Whether the model may ask for packages, and how (--allow-dependencies). */
static void deps_text(struct cc_buf *d, const struct mcp_config *cfg, bool python)
{
	if (!cfg->deps.allowed) {
		cc_buf_puts(d, "\n- No packages can be installed: use what is listed here.");
		return;
	}
	cc_buf_printf(d,
		      "\n- Packages: pass dependencies: [%s] to have the host install them "
		      "before the code runs (%s); they stay for later calls until a call names "
		      "others (the runtime then starts again, its variables gone). The result's "
		      "dependencies section has the install log.",
		      python ? "\"polars\", \"openpyxl\"" : "\"vega-lite@5\"",
		      python ? "wheels from the package index; a PEP 723 '# /// script' block "
			       "with a dependencies list in the code does the same"
			     : "npm packages, loaded as browser globals, no install scripts");
	const cc_deps_options *o = &cfg->deps.o;
	for (size_t i = 0; i < o->n_allow; i++)
		cc_buf_printf(d, "%s%s", i ? ", " : " Only these may be asked for: ", o->allow[i]);
	cc_buf_puts(d, o->n_allow ? "." : "");
}

/* Where the code may read and write, for the model: the scratch, each
 * grant, and how files go in and come out. */
static void files_text(struct cc_buf *d, const struct mcp_config *cfg)
{
	cc_buf_puts(d, "\n- Files: ");
	if (cfg->scratch_mib)
		cc_buf_printf(d,
			      "/tmp is a private writable folder of %llu MiB for this "
			      "conversation (separate for Python and JavaScript; reset: true "
			      "keeps its files, files over 1 MiB excepted; they are lost when "
			      "a timeout, memory error or crash ends the runtime, as the "
			      "result's note says). ",
			      (unsigned long long)cfg->scratch_mib);
	else
		cc_buf_puts(d, "there is no writable /tmp (the server runs with --scratch 0). ");
	for (size_t i = 0; i < cfg->n_mounts; i++)
		cc_buf_printf(d, "%s is the user's %s (%s). ", cfg->mounts[i].guest,
			      "shared folder or file",
			      cfg->mounts[i].writable ? "read-write" : "read-only");
	if (cfg->n_python_path)
		cc_buf_puts(d, "Python imports the user's packages from the read-only folders "
			       "/codecage/python-path/N. ");
	if (!cfg->scratch_mib && !cfg->n_mounts)
		cc_buf_puts(d, "Nothing else of the host's files is visible. ");
	else
		cc_buf_puts(d, "Nothing else is visible or writable. ");
	cc_buf_puts(d, "Pass files: {\"/tmp/in.csv\": \"text\"} (or {\"$bytes\": base64}) to write "
		       "inputs before the code runs; the result lists the files the call created "
		       "or changed, and the client can fetch each as the resource "
		       "codecage://LANGUAGE/PATH.");
}

/* With --allow-net, what the model may reach, appended to a description. */
static void net_line(char *desc, size_t cap, const char *name, const struct mcp_config *cfg)
{
	size_t n = strlen(desc);
	if (!cfg->n_allow_net || n >= cap)
		return;
	n += (size_t)snprintf(desc + n, cap - n,
			      "\n- Network, despite the above: only these hosts, through %s: ",
			      strcmp(name, "run_python") ? "fetch(url, {method, headers, body})"
							 : "urllib.request or requests");
	for (size_t i = 0; i < cfg->n_allow_net && n < cap; i++)
		n += (size_t)snprintf(desc + n, cap - n, "%s%s", i ? ", " : "", cfg->allow_net[i]);
}

/* Code mode: the upstream tools' stubs, or how to find them. */
static void upstream_text(struct cc_buf *d, const struct mcp_config *cfg, int lang)
{
	if (!cfg->n_upstreams)
		return;
	size_t n = mcp_upstreams_tool_count(cfg->upstreams, cfg->n_upstreams);
	char line[256];
	snprintf(line, sizeof(line),
		 "\n- Code mode: %zu tools of other MCP servers are functions here; one run may "
		 "make up to %llu calls of them (concurrently with %s).\n",
		 n, (unsigned long long)cfg->max_tool_calls,
		 lang ? "Promise.all" : "asyncio.gather over atools");
	cc_buf_puts(d, line);
	if (n > MCP_UPSTREAM_LIST_MAX) {
		cc_buf_puts(d, "  They are too many to list: call the search_tools tool with a "
			       "word to get their declarations.\n");
		return;
	}
	mcp_stubs(d, cfg->upstreams, cfg->n_upstreams, lang, NULL);
}

static json_t *tool(const char *name, const char *title, const char *fmt,
		    const struct mcp_config *cfg, cc_language lang)
{
	char desc[4096];
	cc_options dflt; /* without --memory: the library's default for LANG */
	cc_options_init(&dflt, lang);
	unsigned long long mib = cfg->memory_mib ? cfg->memory_mib : dflt.limits.max_memory >> 20;
	char result[32];
	if (cfg->max_result >= (1u << 20) && !(cfg->max_result & ((1u << 20) - 1)))
		snprintf(result, sizeof(result), "%llu MiB",
			 (unsigned long long)(cfg->max_result >> 20));
	else
		snprintf(result, sizeof(result), "%llu KiB",
			 (unsigned long long)(cfg->max_result >> 10));
	int n = snprintf(desc, sizeof(desc), fmt, cfg->timeout_s, mib,
			 (unsigned long long)(cfg->max_output >> 10), result);
	/* --library: say which browser bundles are already loaded (as the
	 * server was told them: file names or package names). */
	if (!strcmp(name, "run_javascript") && cfg->n_libraries && n > 0 &&
	    (size_t)n < sizeof(desc)) {
		n += snprintf(desc + n, sizeof(desc) - (size_t)n,
			      "\n- Loaded before your code, as browser globals:");
		for (size_t i = 0; i < cfg->n_libraries && n > 0 && (size_t)n < sizeof(desc); i++)
			n += snprintf(desc + n, sizeof(desc) - (size_t)n, "%s %s", i ? "," : "",
				      cfg->libraries[i]);
	}
	net_line(desc, sizeof(desc), name, cfg);
	struct cc_buf d = { 0 };
	cc_buf_puts(&d, desc);
	deps_text(&d, cfg, lang == CC_LANG_PYTHON);
	files_text(&d, cfg);
	upstream_text(&d, cfg, !strcmp(name, "run_javascript"));
	json_t *t =
		json_pack("{s:s, s:s, s:s%, s:o, s:o, s:{s:b, s:b, s:b}}", "name", name, "title",
			  title, "description", d.data ? d.data : "", d.len, "inputSchema",
			  input_schema(cfg->timeout_s, cfg->deps.allowed, lang == CC_LANG_PYTHON),
			  "outputSchema", mcp_output_schema(), "annotations", "readOnlyHint", 0,
			  "destructiveHint", 0, "openWorldHint", cfg->n_allow_net > 0);
	cc_buf_free(&d);
	return t;
}

static json_t *search_tool(void)
{
	return json_pack(
		"{s:s, s:s, s:s, s:{s:s, s:{s:{s:s, s:s}, s:{s:s, s:[s, s], s:s}}, s:[s], "
		"s:b}, s:{s:b}}",
		"name", "search_tools", "title", "Search code-mode tools", "description",
		"Find the tools of other MCP servers that run_python and run_javascript can call "
		"(tools.SERVER.TOOL): returns the declarations of those whose name or description "
		"contains the query, as Python stubs or TypeScript declarations.",
		"inputSchema", "type", "object", "properties", "query", "type", "string",
		"description", "a word to look for (case-insensitive); empty = all", "language",
		"type", "string", "enum", "python", "javascript", "description",
		"the declarations' language; python by default", "required", "query",
		"additionalProperties", 0, "annotations", "readOnlyHint", 1);
}

json_t *mcp_tools_list(const struct mcp_config *cfg, const char *py_env)
{
	json_t *list = json_pack("{s:[o, o]}", "tools",
				 tool("run_python", "Run Python", python_desc, cfg, CC_LANG_PYTHON),
				 tool("run_javascript", "Run JavaScript",
				      cfg->web_polyfills ? js_web_desc : js_desc, cfg,
				      CC_LANG_JAVASCRIPT));
	json_t *py = json_array_get(json_object_get(list, "tools"), 0);
	const char *d = json_string_value(json_object_get(py, "description"));
	char *text = NULL;
	if (py_env && d && asprintf(&text, "%s\n- Found in this sandbox: %s.", d, py_env) > 0)
		json_object_set_new(py, "description", json_string(text));
	free(text);
	if (list && cfg->n_upstreams &&
	    mcp_upstreams_tool_count(cfg->upstreams, cfg->n_upstreams) > MCP_UPSTREAM_LIST_MAX)
		json_array_append_new(json_object_get(list, "tools"), search_tool());
	return list;
}

char *mcp_search_tools(const struct mcp_config *cfg, const json_t *args, const char **bad)
{
	const char *q = json_string_value(json_object_get(args, "query"));
	const char *lang = json_string_value(json_object_get(args, "language"));
	cc_language l = CC_LANG_PYTHON;
	if (!json_is_object(args) || !q || json_object_size(args) > 2 ||
	    (json_object_size(args) == 2 && !json_object_get(args, "language")) ||
	    (lang && cc_language_parse(lang, &l) < 0)) {
		*bad = "search_tools takes {query: string, language?: \"python\" | \"javascript\"}";
		return NULL;
	}
	struct cc_buf b = { 0 };
	size_t hits = mcp_stubs(&b, cfg->upstreams, cfg->n_upstreams, l == CC_LANG_JAVASCRIPT, q);
	cc_buf_puts(&b, hits ? "" : "(no tool matches; try a shorter word, or an empty query)\n");
	json_t *r = json_pack("{s:[{s:s, s:s%}], s:b}", "content", "type", "text", "text",
			      b.data ? b.data : "", b.len, "isError", 0);
	cc_buf_free(&b);
	char *text = r ? json_dumps(r, JSON_COMPACT) : NULL;
	json_decref(r);
	return text;
}

/* ---- tools/call results ---- */

static void text_section(struct cc_buf *t, const char *name, const char *s, size_t n)
{
	if (!n)
		return;
	cc_buf_printf(t, "%s:\n", name);
	cc_buf_add(t, s, n);
	if (s[n - 1] != '\n')
		cc_buf_puts(t, "\n");
}

static void json_field(struct cc_buf *b, const char *key, const char *s, size_t n)
{
	cc_buf_printf(b, ",\"%s\":", key);
	cc_json_string(b, s, n);
}

char *mcp_render_result(const cc_result *r, const cc_error *err, const char *note,
			const struct mcp_files_out *files, size_t *len)
{
	struct cc_buf t = { 0 }; /* the text block */
	struct cc_buf s = { 0 }; /* structuredContent */
	cc_error_kind kind = r ? cc_result_error_kind(r) : err->kind;
	size_t nout = 0, nerr = 0;
	const char *out = r ? cc_result_stdout(r, &nout) : "";
	const char *errs = r ? cc_result_stderr(r, &nerr) : "";
	const char *type = r ? cc_result_error_type(r) : "";
	const char *msg = r ? cc_result_error_message(r) : (err->message ? err->message : "");
	const char *tb = r ? cc_result_error_traceback(r) : "";
	/* The library names cc_limits fields; a client sets timeout_s, the
	 * server's operator --timeout and --memory. */
	static const struct cc_hints hints = {
		"raise timeout_s (up to the server's --timeout)",
		"raise the server's --memory MIB",
		"split the work over several calls (the server's 1 MiB cap is fixed)",
	};
	char *own = cc_hint_rewrite(msg, &hints);
	if (own)
		msg = own;
	if (kind == CC_ERR_TOOL_BUDGET && strstr(msg, "total tool call budget")) {
		/* code mode: the one budget of a tools/call is the server's flag */
		char *b = NULL;
		if (asprintf(&b, "%s (a run may make the server's --max-tool-calls upstream calls)",
			     msg) >= 0) {
			free(own);
			msg = own = b;
		}
	}
	if (kind == CC_ERR_INTERNAL) {
		/* Host errors (a failed spawn, say) may name host paths: the
		 * client gets the kind, the server's log the details. */
		fprintf(stderr, "codecage mcp: internal error: %s\n", msg);
		msg = "internal error in codecage (the details are in the server's log)";
	}

	if (note)
		cc_buf_printf(&t, "note: %s\n", note);
	cc_buf_puts(&s, "{\"status\":");
	const char *vtype = kind == CC_OK ? cc_result_value_type(r) : NULL;
	if (vtype) {
		/* A value with no JSON form: its text, as the model would read
		 * it in a notebook, after a line naming the type. */
		const cc_value *v = cc_result_value(r);
		cc_buf_printf(&t,
			      "status: ok\nvalue (type %.256s, shown as its text; it has no JSON "
			      "form):\n",
			      vtype);
		cc_buf_add(&t, v->u.str.ptr, v->u.str.len);
		if (!v->u.str.len || v->u.str.ptr[v->u.str.len - 1] != '\n')
			cc_buf_puts(&t, "\n");
	}
	if (kind == CC_OK) {
		struct cc_buf v = { 0 };
		cc_json_value(&v, cc_result_value(r));
		if (!vtype) {
			cc_buf_puts(&t, "status: ok\nvalue: ");
			cc_buf_add(&t, v.data ? v.data : "null", v.data ? v.len : 4);
			cc_buf_puts(&t, "\n");
		}
		cc_buf_puts(&s, "\"ok\",\"value\":");
		cc_buf_add(&s, v.data ? v.data : "null", v.data ? v.len : 4);
		if (v.oom)
			s.oom = true;
		cc_buf_free(&v);
	} else {
		cc_buf_printf(&t, "status: error (%s)\nerror: %s%s%s\n", cc_error_kind_name(kind),
			      type, *type ? ": " : "", msg);
		text_section(&t, "traceback", tb, strlen(tb));
		cc_buf_puts(&s, "\"error\",\"value\":null");
	}
	text_section(&t, "stdout", out, nout);
	text_section(&t, "stderr", errs, nerr);
	json_field(&s, "stdout", out, nout);
	json_field(&s, "stderr", errs, nerr);
	if (kind == CC_OK) {
		cc_buf_puts(&s, ",\"error\":null");
	} else {
		cc_buf_printf(&s, ",\"error\":{\"kind\":\"%s\"", cc_error_kind_name(kind));
		json_field(&s, "type", type, strlen(type));
		json_field(&s, "message", msg, strlen(msg));
		json_field(&s, "traceback", tb, strlen(tb));
		cc_buf_puts(&s, "}");
	}
	if (files && files->text && *files->text)
		cc_buf_printf(&t, "files created or changed:\n%s", files->text);
	cc_buf_printf(&s, ",\"files\":%s", files && files->json ? files->json : "[]");
	if (files && files->deps_text)
		cc_buf_printf(&t, "dependencies: %s", files->deps_text);
	if (files && files->deps_json)
		cc_buf_printf(&s, ",\"dependencies\":%s", files->deps_json);
	cc_buf_puts(&s, ",\"value_type\":");
	if (vtype)
		cc_json_string(&s, vtype, strlen(vtype));
	else
		cc_buf_puts(&s, "null");
	cc_buf_printf(&s,
		      ",\"duration_ms\":%.3f,\"note\":", r ? cc_result_duration(r) * 1000 : 0.0);
	if (note)
		cc_json_string(&s, note, strlen(note));
	else
		cc_buf_puts(&s, "null");
	cc_buf_puts(&s, "}");

	struct cc_buf o = { 0 };
	cc_buf_puts(&o, "{\"content\":[{\"type\":\"text\",\"text\":");
	cc_json_string(&o, t.data ? t.data : "", t.len);
	cc_buf_puts(&o, "}");
	mcp_display_blocks(&o, r);
	cc_buf_puts(&o, "],\"structuredContent\":");
	cc_buf_add(&o, s.data ? s.data : "{}", s.data ? s.len : 2);
	cc_buf_printf(&o, ",\"isError\":%s}", kind == CC_OK ? "false" : "true");
	bool oom = t.oom || s.oom || o.oom;
	cc_buf_free(&t);
	cc_buf_free(&s);
	free(own);
	if (oom) {
		cc_buf_free(&o);
		return NULL;
	}
	*len = o.len;
	return o.data;
}
