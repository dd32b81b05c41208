/* A package's module graph, read by the host (lib_graph.h). */
#include "lib_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "lib_pkg.h"
#include "lib_scan.h"
#include "utf8.h"

struct walk {
	int root;
	bool nm; /* root is node_modules: a package "x" is at "x" */
	const char *prefix, *what;
	bool esm;
	uint64_t max;
	struct cc_lib_graph *g;
	size_t cur; /* the file being scanned */
	cc_error *err;
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

/* The file rel names beneath root as Node finds it: itself, with an
 * extension, a directory's index or its package.json's main. Owned, or
 * NULL. */
static char *probe(struct walk *w, const char *rel, int depth)
{
	static const char *const ext[] = { "",		 ".js",	       ".mjs",
					   ".cjs",	 ".json",      "/index.js",
					   "/index.mjs", "/index.cjs", "/index.json" };
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		char *c = NULL;
		if (asprintf(&c, "%s%s", rel, ext[i]) < 0)
			return NULL;
		if (cc_lib_is_file(w->root, c))
			return c;
		free(c);
	}
	json_t *pkg = NULL;
	cc_error e = { 0 };
	char *r = NULL;
	if (depth == 0 && cc_lib_is_dir(w->root, rel) &&
	    cc_lib_package_json(w->root, rel, w->what, &pkg, &e) == 0 && pkg) {
		const char *main = json_string_value(json_object_get(pkg, "main"));
		char *j = main ? cc_lib_join(rel, main) : NULL;
		r = j ? probe(w, j, 1) : NULL;
		free(j);
	}
	json_decref(pkg);
	cc_error_clear(&e);
	return r;
}

/* The directory of package name, searched as Node does from dir up (each
 * node_modules on the way), then at the root when it is node_modules. */
static char *package_dir(struct walk *w, const char *dir, const char *name)
{
	char *d = strdup(dir);
	while (d) {
		char *nm = NULL, *c = NULL;
		if (asprintf(&nm, "node_modules/%s", name) >= 0)
			c = cc_lib_join(d, nm);
		free(nm);
		if (c && cc_lib_is_dir(w->root, c)) {
			free(d);
			return c;
		}
		free(c);
		if (!*d)
			break;
		char *slash = strrchr(d, '/');
		if (slash)
			*slash = 0;
		else
			*d = 0;
	}
	free(d);
	return w->nm && cc_lib_is_dir(w->root, name) ? strdup(name) : NULL;
}

/* A bare specifier: "pkg", "pkg/sub", "@scope/pkg/sub". */
static char *resolve_bare(struct walk *w, const char *dir, const char *spec)
{
	if (!strncmp(spec, "node:", 5))
		return NULL;
	const char *slash = strchr(spec, '/');
	if (spec[0] == '@' && slash)
		slash = strchr(slash + 1, '/');
	size_t n = slash ? (size_t)(slash - spec) : strlen(spec);
	char *name = strndup(spec, n), *pdir = name ? package_dir(w, dir, name) : NULL;
	free(name);
	if (!pdir)
		return NULL;
	json_t *pkg = NULL;
	cc_error e = { 0 };
	cc_lib_package_json(w->root, pdir, w->what, &pkg, &e);
	cc_error_clear(&e);
	const char *const *conds = w->esm ? cc_lib_conds_import : cc_lib_conds_require;
	char sub[512];
	snprintf(sub, sizeof(sub), "./%s", slash ? slash + 1 : "");
	const char *target = pkg ? cc_lib_exports(pkg, slash ? sub : ".", conds) : NULL;
	if (!target && slash)
		target = slash + 1;
	if (!target && pkg && w->esm)
		target = json_string_value(json_object_get(pkg, "module"));
	if (!target && pkg)
		target = json_string_value(json_object_get(pkg, "main"));
	char *rel = cc_lib_join(pdir, target ? target : "index.js");
	char *file = rel ? probe(w, rel, 0) : NULL;
	free(rel);
	free(pdir);
	json_decref(pkg);
	return file;
}

static char *resolve(struct walk *w, const char *from, const char *spec)
{
	const char *slash = strrchr(from, '/');
	char *dir = slash ? strndup(from, (size_t)(slash - from)) : strdup("");
	char *file = NULL;
	if (!dir || spec[0] == '/' || !*spec) {
		/* an absolute specifier names a host path: never */
	} else if (!strcmp(spec, ".") || !strcmp(spec, "..") || !strncmp(spec, "./", 2) ||
		   !strncmp(spec, "../", 3)) {
		char *rel = cc_lib_join(dir, spec);
		file = rel ? probe(w, rel, 0) : NULL;
		free(rel);
	} else {
		file = resolve_bare(w, dir, spec);
	}
	free(dir);
	return file;
}

/* The index of file rel (owned: taken) in the graph, read and appended if
 * it is new; -1 with w->err. */
static long add(struct walk *w, char *rel)
{
	struct cc_lib_graph *g = w->g;
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->v[i].rel, rel)) {
			free(rel);
			return (long)i;
		}
	if (g->n == CC_LIB_MODULES_MAX) {
		free(rel);
		return cc_fail(
			w->err, CC_ERR_INVALID_INPUT,
			"%s: its files load more than %d others; give a bundle of it instead",
			w->what, CC_LIB_MODULES_MAX);
	}
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 16;
		struct cc_lib_module *v = realloc(g->v, cap * sizeof(*v));
		if (!v) {
			free(rel);
			return cc_fail(w->err, CC_ERR_INTERNAL, "out of memory");
		}
		g->v = v;
		g->cap = cap;
	}
	struct cc_lib_module *m = &g->v[g->n];
	memset(m, 0, sizeof(*m));
	m->rel = rel;
	if (asprintf(&m->file, "%s%s", w->prefix, rel) < 0) {
		m->file = NULL;
		free(rel);
		return cc_fail(w->err, CC_ERR_INTERNAL, "out of memory");
	}
	g->n++;
	if (cc_lib_read(w->root, rel, m->file, w->max, w->what, &m->code, &m->len, w->err) < 0)
		return -1;
	/* every file counts against one max_source: the library is one frame */
	g->bytes += m->len;
	if (g->bytes > w->max)
		return cc_fail(w->err, CC_ERR_INVALID_INPUT,
			       "%s: its %zu files take more than max_source (%llu bytes) in all; "
			       "raise it, or give a bundle of the package",
			       w->what, g->n, (unsigned long long)w->max);
	if (!cc_utf8_valid(m->code, m->len) || memchr(m->code, 0, m->len))
		return cc_fail(w->err, CC_ERR_INVALID_INPUT,
			       "%s: %s is not UTF-8 text without NUL bytes (a script is)", w->what,
			       m->file);
	return (long)(g->n - 1);
}

static int found(void *u, enum cc_js_dep kind, const char *s, size_t n)
{
	struct walk *w = u;
	if ((kind == CC_JS_IMPORT) != w->esm || n >= 512)
		return 0;
	char spec[512];
	memcpy(spec, s, n);
	spec[n] = 0;
	struct cc_lib_module *m = &w->g->v[w->cur];
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->specs[i], spec))
			return 0;
	char *rel = resolve(w, m->rel, spec);
	if (!rel && w->esm)
		return cc_fail(w->err, CC_ERR_INVALID_INPUT,
			       "%s: %s imports '%s', which is neither a file of the package nor a "
			       "package in node_modules",
			       w->what, m->file, spec);
	if (!rel)
		return 0; /* a require() that fails if it runs */
	long k = add(w, rel);
	if (k < 0)
		return -1;
	m = &w->g->v[w->cur]; /* add may have moved it */
	char **specs = realloc(m->specs, (m->n + 1) * sizeof(*specs));
	if (specs)
		m->specs = specs;
	char **keys = realloc(m->keys, (m->n + 1) * sizeof(*keys));
	if (keys)
		m->keys = keys;
	char *sc = strdup(spec), *kc = strdup(w->g->v[k].file);
	if (!specs || !keys || !sc || !kc) {
		free(sc);
		free(kc);
		return cc_fail(w->err, CC_ERR_INTERNAL, "out of memory");
	}
	m->specs[m->n] = sc;
	m->keys[m->n++] = kc;
	return 0;
}

int cc_lib_graph_collect(int root, bool root_is_node_modules, const char *prefix, const char *entry,
			 bool esm, uint64_t max, const char *what, struct cc_lib_graph *g,
			 cc_error *err)
{
	struct walk w = { root, root_is_node_modules, prefix, what, esm, max, g, 0, err };
	memset(g, 0, sizeof(*g));
	char *e = strdup(entry);
	if (!e)
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	int rc = add(&w, e) < 0 ? -1 : 0;
	for (w.cur = 0; rc == 0 && w.cur < g->n; w.cur++) {
		if (!esm && ends_with(g->v[w.cur].rel, ".json"))
			continue;
		if (cc_js_scan(g->v[w.cur].code, g->v[w.cur].len, found, &w) < 0)
			rc = -1;
	}
	if (rc < 0)
		cc_lib_graph_free(g);
	return rc;
}

void cc_lib_graph_free(struct cc_lib_graph *g)
{
	for (size_t i = 0; i < g->n; i++) {
		struct cc_lib_module *m = &g->v[i];
		for (size_t k = 0; k < m->n; k++) {
			free(m->specs[k]);
			free(m->keys[k]);
		}
		free(m->specs);
		free(m->keys);
		free(m->rel);
		free(m->file);
		free(m->code);
	}
	free(g->v);
	memset(g, 0, sizeof(*g));
}

/* s as a JavaScript string literal. */
static void js_string(struct cc_buf *b, const char *s)
{
	cc_buf_puts(b, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			cc_buf_printf(b, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			cc_buf_printf(b, "\\u%04x", c);
		else
			cc_buf_add(b, (const char *)&c, 1);
	}
	cc_buf_puts(b, "\"");
}

char *cc_lib_cjs_bundle(const struct cc_lib_graph *g, const char *global, size_t *len)
{
	struct cc_buf b = { 0 };
	cc_buf_puts(&b, "(function (G) {\n"
			"var P = typeof G.process === \"object\" && G.process ? G.process : "
			"{ env: { NODE_ENV: \"production\" } };\n"
			"var D = Object.create(null), C = Object.create(null);\n");
	for (size_t i = 0; i < g->n; i++) {
		const struct cc_lib_module *m = &g->v[i];
		cc_buf_puts(&b, "D[");
		js_string(&b, m->file);
		cc_buf_puts(&b, "] = [function (exports, require, module, __filename, __dirname, "
				"global, process) {\n");
		if (ends_with(m->rel, ".json"))
			cc_buf_puts(&b, "module.exports = ");
		cc_buf_add(&b, m->code, m->len);
		cc_buf_puts(&b, ends_with(m->rel, ".json") ? ";\n}, [" : "\n}, [");
		for (size_t k = 0; k < m->n; k++) { /* pairs: no "__proto__" key surprises */
			cc_buf_puts(&b, k ? ", [" : "[");
			js_string(&b, m->specs[k]);
			cc_buf_puts(&b, ", ");
			js_string(&b, m->keys[k]);
			cc_buf_puts(&b, "]");
		}
		cc_buf_puts(&b, "]];\n");
	}
	cc_buf_puts(&b, "function L(k) {\n"
			"  if (C[k]) return C[k].exports;\n"
			"  var d = D[k], m = C[k] = { exports: {}, id: k, loaded: false };\n"
			"  var i = k.lastIndexOf(\"/\");\n"
			"  d[0].call(m.exports, m.exports, function require(s) {\n"
			"    for (var j = 0; j < d[1].length; j++)\n"
			"      if (d[1][j][0] === s) return L(d[1][j][1]);\n"
			"    throw new Error(\"Cannot find module '\" + s + \"' from \" + k + "
			"\" (the host found no such file or package)\");\n"
			"  }, m, k, i < 0 ? \"\" : k.slice(0, i), G, P);\n"
			"  m.loaded = true;\n"
			"  return m.exports;\n"
			"}\n"
			"G[");
	js_string(&b, global);
	cc_buf_puts(&b, "] = L(");
	js_string(&b, g->v[0].file);
	cc_buf_puts(&b, ");\n})(globalThis);\n");
	if (b.oom) {
		cc_buf_free(&b);
		return NULL;
	}
	*len = b.len;
	return b.data;
}
