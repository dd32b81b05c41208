/* JavaScript libraries: resolve each entry of cc_options.libraries, read
 * it in the host (the worker reads no host file for this), and send it to
 * the worker after "init" as a "lib" frame, which the worker evaluates
 * before "ready" (src/worker/main.c, load_libraries).
 *
 * An entry is a file (loaded as it is), a package directory, or a package
 * name looked up in cc_options.node_modules. A package resolves through
 * its package.json, in this order (README's Libraries section):
 *  1. "unpkg", then "jsdelivr": the files those CDNs serve to a <script>;
 *  2. a script that runs as a browser global (a UMD wrapper or an IIFE:
 *     cc_lib_looks_global): the "browser" string, the files "exports"
 *     gives for "." under the browser, import, default and require
 *     conditions, "main";
 *  3. such a script beside those entries: in each one's folder, dist/,
 *     build/ and umd/, named for its stem or the package's name with
 *     .bundle.min.js, .bundle.js, .umd.min.js, .umd.js, .min.js or .js
 *     (the UMD build most packages ship beside their module builds);
 *  4. its ES module entry ("exports" under browser, import, module or
 *     default, else "module"), with every module it imports (lib_graph.c),
 *     evaluated by the engine as modules, its namespace (or its default
 *     export, when that is all it exports) the global named for the
 *     package (cc_lib_global_name);
 *  5. its CommonJS entry ("exports" under require or default, else
 *     "main"), with every file it requires, as one script whose entry's
 *     module.exports becomes that global.
 * Every file must be UTF-8 text; a library's files together are at most
 * limits.max_source bytes. A package's files are opened beneath its
 * directory (node_modules, for one named by name: openat2
 * RESOLVE_BENEATH), so a symlink or ".." out of it is refused and a
 * package cannot make the host read, and the guest run, a host file. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <jansson.h>

#include "cleanup.h"
#include "deps.h"
#include "error.h"
#include "frame.h"
#include "lib_graph.h"
#include "lib_pkg.h"
#include "message.h"
#include "supervisor.h"
#include "utf8.h"

struct cc_lib {
	char *entry; /* as the caller gave it */
	char *path;  /* the host file read (the entry's, for a graph) */
	char *file;  /* the name stack traces show: "vega/build/vega.min.js" */
	char *code;  /* NUL-terminated: the script, or the entry module's */
	size_t len;
	char *global;		   /* an ES module graph's global, else NULL */
	struct cc_lib_graph graph; /* its modules, v[0] the entry (file, code) */
};

struct cc_libset {
	struct cc_lib *v;
	size_t n;
};

void cc_libset_free(struct cc_libset *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].entry);
		free(s->v[i].path);
		free(s->v[i].file);
		free(s->v[i].global);
		if (s->v[i].graph.n) /* its entry's code is the graph's */
			cc_lib_graph_free(&s->v[i].graph);
		else
			free(s->v[i].code);
	}
	free(s->v);
	free(s);
}

size_t cc_libset_count(const struct cc_libset *s)
{
	return s ? s->n : 0;
}

void cc_libset_digest(const struct cc_libset *s, void (*add)(void *u, const void *p, size_t n),
		      void *u)
{
	for (size_t i = 0; i < cc_libset_count(s); i++) {
		const struct cc_lib *l = &s->v[i];
		const char *file = l->file ? l->file : "";
		add(u, file, strlen(file) + 1);
		add(u, &l->len, sizeof(l->len));
		add(u, l->code, l->len);
		for (size_t k = 1; k < l->graph.n; k++) { /* the modules it imports */
			add(u, l->graph.v[k].file, strlen(l->graph.v[k].file) + 1);
			add(u, l->graph.v[k].code, l->graph.v[k].len + 1);
		}
	}
}

/* The package directory: dir itself, or, for a package looked up by name
 * (root = node_modules), name beneath root, so that a package directory
 * that is a symlink (pnpm's layout) may lead elsewhere in node_modules but
 * not out of it. -1 with errno (EXDEV: out of root). */
static int open_package_dir(const char *dir, const char *root, const char *name)
{
	if (!root)
		return open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int r = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (r < 0)
		return -1;
	int fd = cc_lib_open_beneath(r, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int e = errno;
	close(r);
	errno = e;
	return fd;
}

static char *join(const char *a, const char *b)
{
	char *p = NULL;
	return asprintf(&p, "%s/%s", a, b) < 0 ? NULL : p;
}

/* An npm package name: optional "@scope/", then lower-case letters,
 * digits, '-', '.', '_', '~', never starting with '.' or '_'. */
static bool package_name_ok(const char *s)
{
	const char *slash = NULL;
	if (*s == '@') {
		slash = strchr(s, '/');
		if (!slash || slash == s + 1)
			return false;
	}
	for (const char *p = *s == '@' ? s + 1 : s; *p; p++) {
		bool start = p == s || p == slash + 1 || (p == s + 1 && *s == '@');
		if (p == slash)
			continue;
		if (start && (*p == '.' || *p == '_'))
			return false;
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || strchr("-._~", *p)))
			return false;
	}
	return *s && (!slash || slash[1]);
}

/* A path inside a package: relative, no ".." component. */
static bool inside_package(const char *rel)
{
	if (rel[0] == '/')
		return false;
	for (const char *p = rel; *p; p = strchr(p, '/') ? strchr(p, '/') + 1 : p + strlen(p))
		if (!strncmp(p, "..", 2) && (p[2] == '/' || p[2] == 0))
			return false;
	return true;
}

/* The global an ES module or CommonJS package becomes: its name without
 * the scope, camelCased at '-', '.' and '_' ("chroma-js" is chromaJs,
 * "@dagrejs/dagre" dagre), '_' in front of a leading digit. Owned. */
static char *cc_lib_global_name(const char *name)
{
	size_t len = strlen(name);
	while (len && name[len - 1] == '/') /* a directory's prefix, "pkg/" */
		len--;
	const char *p = name + len;
	while (p > name && p[-1] != '/')
		p--;
	len -= (size_t)(p - name);
	char *out = malloc(len + 2);
	size_t n = 0;
	bool up = false;
	if (!out)
		return NULL;
	if (*p >= '0' && *p <= '9')
		out[n++] = '_';
	for (const char *e = p + len; p < e; p++) {
		if (*p == '-' || *p == '.' || *p == '_' || *p == '~') {
			up = n > 0;
			continue;
		}
		out[n++] = up && *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p;
		up = false;
	}
	if (!n)
		out[n++] = '_';
	out[n] = 0;
	return out;
}

/* rel (beneath the package pkg) as a file, or with ".js" after it ("dist/x"
 * means dist/x.js); owned, or NULL when neither is a file. */
static char *package_file(int pkg, const char *rel)
{
	char *r = rel && *rel && inside_package(rel) ? cc_lib_normpath(rel) : NULL;
	if (!r || cc_lib_is_file(pkg, r))
		return r;
	char *js = NULL;
	if (asprintf(&js, "%s.js", r) < 0)
		js = NULL;
	free(r);
	if (js && !cc_lib_is_file(pkg, js)) {
		free(js);
		js = NULL;
	}
	return js;
}

static bool has_file(int pkg, const char *rel)
{
	char *r = package_file(pkg, rel);
	free(r);
	return r != NULL;
}

/* Take rel as the library's script: 1 when it is a file of the package
 * and (unless any) a script that runs as a global, read into lib; 0 when
 * not; -1 when any and it cannot be read. */
static int take_script(int pkg, const char *dir, const char *rel, bool any, uint64_t max,
		       const char *what, struct cc_lib *lib, cc_error *err)
{
	/* a field's path as it is, when it is no file ("dist/x" for dist/x.js
	 * is tried first): the read says why (missing, or out of the package) */
	char *r = package_file(pkg, rel), *code = NULL;
	size_t len = 0;
	cc_error e = { 0 };
	if (!r && any && rel && *rel && inside_package(rel))
		r = cc_lib_normpath(rel);
	if (!r)
		return 0;
	int rc = cc_lib_read(pkg, r, r, max, what, &code, &len, any ? err : &e);
	cc_error_clear(&e);
	if (rc < 0 || (!any && !cc_lib_looks_global(code))) {
		free(code);
		free(r);
		return any ? rc : 0;
	}
	lib->path = join(dir, r);
	lib->code = code;
	lib->len = len;
	free(r);
	return lib->path ? 1 : cc_fail(err, CC_ERR_INTERNAL, "out of memory");
}

/* A file's name less its extension and build suffixes: "pptxgen.cjs.js"
 * and "three.module.js" are pptxgen and three. */
static void stem(const char *rel, char *out, size_t n)
{
	static const char *const tails[] = { ".js",	".cjs",	   ".mjs",	 ".min", ".es",
					     ".esm",	".module", ".node",	 ".umd", ".browser",
					     ".common", ".bundle", ".production" };
	const char *b = strrchr(rel, '/');
	snprintf(out, n, "%s", b ? b + 1 : rel);
	for (bool cut = true; cut;) {
		cut = false;
		for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
			size_t l = strlen(out), t = strlen(tails[i]);
			if (l > t && !strcmp(out + l - t, tails[i])) {
				out[l - t] = 0;
				cut = true;
			}
		}
	}
}

/* Add s to the list (at most max, no repeats). */
static void add_unique(char list[][256], size_t *n, size_t max, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(list[i], s))
			return;
	if (*n < max)
		snprintf(list[(*n)++], 256, "%s", s);
}

/* Step 3: a global script beside the entries (the header comment). */
static int sibling_script(int pkg, const char *dir, const char *name, const char *const *entries,
			  size_t n, uint64_t max, const char *what, struct cc_lib *lib,
			  cc_error *err)
{
	static const char *const suffixes[] = { ".bundle.min.js", ".bundle.js", ".umd.min.js",
						".umd.js",	  ".min.js",	".js" };
	char dirs[8][256], stems[8][256], buf[256];
	size_t nd = 0, ns = 0;
	for (size_t i = 0; i < n; i++) {
		char *r = entries[i] && inside_package(entries[i]) ? cc_lib_normpath(entries[i])
								   : NULL;
		if (!r)
			continue;
		char *slash = strrchr(r, '/');
		stem(r, buf, sizeof(buf));
		add_unique(stems, &ns, 8, buf);
		if (slash)
			*slash = 0;
		add_unique(dirs, &nd, 8, slash ? r : "");
		free(r);
	}
	stem(name, buf, sizeof(buf));
	add_unique(stems, &ns, 8, buf);
	add_unique(dirs, &nd, 8, "dist");
	add_unique(dirs, &nd, 8, "build");
	add_unique(dirs, &nd, 8, "umd");
	add_unique(dirs, &nd, 8, "");
	for (size_t d = 0; d < nd; d++)
		for (size_t st = 0; st < ns; st++)
			for (size_t x = 0; x < sizeof(suffixes) / sizeof(suffixes[0]); x++) {
				char *rel = NULL;
				if (asprintf(&rel, "%s%s%s%s", dirs[d], *dirs[d] ? "/" : "",
					     stems[st], suffixes[x]) < 0)
					return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
				int rc = cc_lib_is_file(pkg, rel)
						 ? take_script(pkg, dir, rel, false, max, what, lib,
							       err)
						 : 0;
				free(rel);
				if (rc)
					return rc;
			}
	return 0;
}

/* Steps 4 and 5: the package's ES module or CommonJS graph from rel
 * (beneath the package). */
static int package_graph(const cc_options *o, int pkg, const char *dir, const char *nm,
			 const char *name, const char *rel, bool esm, const char *what,
			 struct cc_lib *lib, cc_error *err)
{
	char *r = package_file(pkg, rel), *entry = NULL, *prefix = NULL;
	int root = -1, rc = -1;
	struct cc_lib_graph g;
	if (!r)
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	/* by name, the root is node_modules (its packages import each other);
	 * a directory is its own root, named by its base name */
	if (nm) {
		root = open(nm, O_PATH | O_DIRECTORY | O_CLOEXEC);
		entry = join(name, r);
		prefix = strdup("");
	} else {
		root = dup(pkg);
		entry = strdup(r);
		/* dir's last component: "pkg/" for /a/pkg and /a/pkg/ */
		size_t l = strlen(dir);
		while (l > 1 && dir[l - 1] == '/')
			l--;
		size_t b = l;
		while (b > 0 && dir[b - 1] != '/')
			b--;
		if (asprintf(&prefix, "%.*s/", (int)(l - b), dir + b) < 0)
			prefix = NULL;
	}
	if (root < 0 || !entry || !prefix) {
		rc = root < 0 ? cc_fail(err, CC_ERR_INVALID_INPUT, "%s: cannot open %s: %s", what,
					nm ? nm : dir, strerror(errno))
			      : cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	} else if (cc_lib_graph_collect(root, nm != NULL, prefix, entry, esm, o->limits.max_source,
					what, &g, err) == 0) {
		lib->global = cc_lib_global_name(name && *name ? name : prefix);
		lib->path = join(dir, r);
		lib->file = strdup(g.v[0].file);
		if (esm) {
			lib->graph = g;
			lib->code = g.v[0].code;
			lib->len = g.v[0].len;
			/* one frame, which the worker takes up to max_source and its
			 * envelope: the names and imports must fit beside the code */
			size_t meta = 0;
			for (size_t k = 0; k < g.n; k++) {
				meta += strlen(g.v[k].file) + 32;
				for (size_t j = 0; j < g.v[k].n; j++)
					meta += strlen(g.v[k].specs[j]) + strlen(g.v[k].keys[j]) +
						16;
			}
			if (g.bytes + meta > o->limits.max_source + CC_FRAME_ENVELOPE) {
				rc = cc_fail(
					err, CC_ERR_INVALID_INPUT,
					"%s: its %zu modules' names and imports take %zu bytes, "
					"more than the %u a library's frame has beside max_source "
					"for its code; raise max_source, or give a bundle",
					what, g.n, meta, (unsigned)CC_FRAME_ENVELOPE);
				goto out;
			}
		} else {
			lib->code =
				lib->global ? cc_lib_cjs_bundle(&g, lib->global, &lib->len) : NULL;
			cc_lib_graph_free(&g);
			if (lib->code && lib->len > o->limits.max_source) {
				free(lib->code);
				lib->code = NULL;
				rc = cc_fail(err, CC_ERR_INVALID_INPUT,
					     "%s: its CommonJS files make a script of %zu bytes, "
					     "over max_source (%llu); raise it, or give a bundle",
					     what, lib->len,
					     (unsigned long long)o->limits.max_source);
				goto out;
			}
		}
		rc = lib->global && lib->path && lib->file && lib->code
			     ? 0
			     : cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	}
out:
	if (root >= 0)
		close(root);
	free(r);
	free(entry);
	free(prefix);
	return rc;
}

/* The package in dir (by name, when nm is given: name beneath nm, the
 * node_modules it is looked up in) as the
 * header comment's steps resolve it, into lib. */
static int package_bundle(const cc_options *o, const char *what, const char *dir, const char *nm,
			  const char *name, struct cc_lib *lib, cc_error *err)
{
	uint64_t max = o->limits.max_source;
	json_t *root = NULL;
	int pkg = open_package_dir(dir, nm, name);
	if (pkg < 0)
		return errno == EXDEV
			       ? cc_fail(err, CC_ERR_INVALID_INPUT,
					 "%s: %s leads out of %s (a symlink); a package named "
					 "by name is read only from inside node_modules",
					 what, dir, nm)
			       : cc_fail(err, CC_ERR_INVALID_INPUT, "%s: cannot open %s: %s", what,
					 dir, strerror(errno));
	int rc = cc_lib_package_json(pkg, "", what, &root, err);
	if (rc == 0 && !root)
		rc = cc_fail(err, CC_ERR_INVALID_INPUT,
			     "%s: %s has no package.json; a package directory needs one", what,
			     dir);
	const char *main = json_string_value(json_object_get(root, "main"));
	const char *module = json_string_value(json_object_get(root, "module"));
	const char *browser = json_string_value(json_object_get(root, "browser"));
	const char *entries[12];
	size_t n = 0;
	/* 1: the CDNs' script fields, as they are */
	for (size_t i = 0; i < 2 && rc == 0; i++)
		rc = take_script(pkg, dir,
				 json_string_value(json_object_get(root, i ? "jsdelivr" : "unpkg")),
				 true, max, what, lib, err);
	/* 2: the entries that are themselves global scripts */
	if (rc == 0) {
		entries[n++] = browser;
		n += cc_lib_exports_each(root, cc_lib_conds_script, entries + n, 8);
		entries[n++] = main;
		entries[n++] = module;
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		if (entries[i] != module)
			rc = take_script(pkg, dir, entries[i], false, max, what, lib, err);
	/* 3: a global script beside them */
	if (rc == 0)
		rc = sibling_script(pkg, dir, name, entries, n, max, what, lib, err);
	/* 4: an ES module entry; 5: a CommonJS one */
	const char *imp[9], *req[9], *esm = NULL, *cjs = NULL;
	size_t ni = root ? cc_lib_exports_each(root, cc_lib_conds_import, imp, 8) : 0;
	size_t nr = root ? cc_lib_exports_each(root, cc_lib_conds_require, req, 8) : 0;
	imp[ni++] = module;
	req[nr++] = main;
	for (size_t i = 0; i < ni && !esm; i++)
		esm = has_file(pkg, imp[i]) ? imp[i] : NULL;
	for (size_t i = 0; i < nr && !cjs; i++)
		cjs = has_file(pkg, req[i]) ? req[i] : NULL;
	if (!cjs && cc_lib_is_file(pkg, "index.js"))
		cjs = "index.js";
	/* the global's name: the package's, as named or as its package.json
	 * says (for a directory; else its directory's name) */
	const char *pname = json_string_value(json_object_get(root, "name"));
	if (!nm)
		name = pname && package_name_ok(pname) ? pname : "";
	if (rc == 0 && (esm || cjs))
		rc = package_graph(o, pkg, dir, nm, name, esm ? esm : cjs, esm != NULL, what, lib,
				   err);
	else if (rc == 0)
		rc = cc_fail(err, CC_ERR_INVALID_INPUT,
			     "%s: the package in %s names no browser global bundle in package.json "
			     "(\"unpkg\", \"jsdelivr\", a UMD/IIFE build), nor an ES module or "
			     "CommonJS entry; give the bundle's file instead (often under dist/ or "
			     "build/)",
			     what, dir);
	else if (rc > 0)
		rc = 0;
	json_decref(root);
	close(pkg);
	return rc;
}

/* The guest-visible name of a library file: the package's directory name
 * and the path inside it, or the file's base name. */
static char *guest_file(const char *pkgdir, const char *path)
{
	if (!pkgdir) {
		const char *b = strrchr(path, '/');
		return strdup(b ? b + 1 : path);
	}
	size_t n = strlen(pkgdir);
	while (n > 1 && pkgdir[n - 1] == '/')
		n--;
	const char *base = pkgdir;
	for (size_t i = 0; i < n; i++)
		if (pkgdir[i] == '/')
			base = pkgdir + i + 1;
	const char *rel = path + strlen(pkgdir);
	while (*rel == '/')
		rel++;
	char *out = NULL;
	if (asprintf(&out, "%.*s/%s", (int)(pkgdir + n - base), base, rel) < 0)
		return NULL;
	return out;
}

/* Entry, resolved: a file, a package directory, or a package name looked
 * up in nm (o->node_modules; a dependency's, named only, in its installed
 * node_modules: then dep is true). */
static int resolve_one(const cc_options *o, const char *entry, const char *nm, bool dep,
		       struct cc_lib *lib, cc_error *err)
{
	char what[300];
	snprintf(what, sizeof(what), "%s '%.256s'", dep ? "dependency" : "library", entry);
	struct stat st;
	char *dir = NULL;
	bool by_name = false;
	lib->entry = strdup(entry);
	if (!lib->entry)
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	if (dep && !package_name_ok(entry)) {
		return cc_fail(err, CC_ERR_INVALID_INPUT, "%s: not a package name", what);
	} else if (dep) {
		goto by_name;
	} else if (stat(entry, &st) == 0 && S_ISDIR(st.st_mode)) {
		dir = strdup(entry);
	} else if (stat(entry, &st) == 0) {
		lib->path = strdup(entry);
	} else if (!package_name_ok(entry)) {
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "%s: no such file or directory, and not a package name", what);
	} else if (!nm) {
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "%s: no such file or directory; to look it up as a package, name "
			       "the node_modules directory (node_modules=DIR, --node-modules DIR)",
			       what);
	} else {
	by_name:
		by_name = true;
		dir = join(nm, entry);
		if (dir && (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))) {
			int rc = cc_fail(err, CC_ERR_INVALID_INPUT,
					 "%s: no package of that name in %s (npm install it there, "
					 "or give the bundle's file)",
					 what, nm);
			free(dir);
			return rc;
		}
	}
	if (dir && package_bundle(o, what, dir, by_name ? nm : NULL, entry, lib, err) < 0) {
		free(dir);
		return -1;
	}
	if (!lib->path) {
		free(dir);
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	}
	if (!lib->file)
		lib->file = guest_file(dir, lib->path);
	free(dir);
	if (!lib->file)
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	if (!lib->code && cc_lib_read(-1, NULL, lib->path, o->limits.max_source, what, &lib->code,
				      &lib->len, err) < 0)
		return -1;
	if (!cc_utf8_valid(lib->code, lib->len) || memchr(lib->code, 0, lib->len))
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "%s: %s is not UTF-8 text without NUL bytes (a script is)", what,
			       lib->path);
	return 0;
}

int cc_libset_load(const cc_options *o, const cc_deps *deps, struct cc_libset **out, cc_error *err)
{
	*out = NULL;
	size_t nd = 0;
	const char *const *dep = cc_deps_load(deps, &nd);
	if (!nd && (!o->libraries || o->n_libraries == 0))
		return 0;
	if (o->n_libraries && o->language != CC_LANG_JAVASCRIPT)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "libraries are JavaScript bundles; a python runtime takes none "
			       "(give Python packages with python_path)");
	if (nd + o->n_libraries > CC_LIBRARIES_MAX)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "%zu libraries given (with dependencies' packages); at most %d load "
			       "into one runtime (bundle them into fewer files)",
			       nd + o->n_libraries, CC_LIBRARIES_MAX);
	struct cc_libset *s = calloc(1, sizeof(*s));
	if (s)
		s->v = calloc(nd + o->n_libraries, sizeof(*s->v));
	if (!s || !s->v) {
		free(s);
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	}
	/* the dependencies' packages first: the libraries may use them */
	for (size_t i = 0; i < nd + o->n_libraries; i++) {
		const char *e = i < nd ? dep[i] : o->libraries[i - nd];
		s->n = i + 1;
		if (!e || !*e) {
			cc_libset_free(s);
			return cc_fail(err, CC_ERR_INVALID_INPUT,
				       "library %zu is empty; give a file, directory or package "
				       "name",
				       i + 1 - nd);
		}
		if (resolve_one(o, e, i < nd ? cc_deps_node_modules(deps) : o->node_modules, i < nd,
				&s->v[i], err) < 0) {
			cc_libset_free(s);
			return -1;
		}
	}
	*out = s;
	return 0;
}

/* An ES module's "imports": its specifiers and the modules they name. */
static void pack_imports(msgpack_packer *pk, const struct cc_lib_module *m)
{
	cc_pack_cstr(pk, "imports");
	msgpack_pack_map(pk, m->n);
	for (size_t k = 0; k < m->n; k++) {
		cc_pack_cstr(pk, m->specs[k]);
		cc_pack_cstr(pk, m->keys[k]);
	}
}

int cc_libset_send(struct cc_child *c, const struct cc_libset *s, int64_t deadline, cc_error *err)
{
	for (size_t i = 0; i < cc_libset_count(s); i++) {
		const struct cc_lib *l = &s->v[i];
		const struct cc_lib_graph *g = &l->graph;
		struct cc_msgbuf m;
		/* a script: {t, file, code}; an ES module graph adds the global
		 * its entry becomes, the entry's imports and its modules */
		cc_msgbuf_begin(&m, l->global && g->n ? 6 : 3, "lib");
		cc_pack_kv_str(&m.pk, "file", l->file);
		cc_pack_kv_strn(&m.pk, "code", l->code, l->len);
		if (l->global && g->n) {
			cc_pack_kv_str(&m.pk, "global", l->global);
			pack_imports(&m.pk, &g->v[0]);
			cc_pack_cstr(&m.pk, "modules");
			msgpack_pack_array(&m.pk, g->n - 1);
			for (size_t k = 1; k < g->n; k++) {
				msgpack_pack_map(&m.pk, 3);
				cc_pack_kv_str(&m.pk, "file", g->v[k].file);
				cc_pack_kv_strn(&m.pk, "code", g->v[k].code, g->v[k].len);
				pack_imports(&m.pk, &g->v[k]);
			}
		}
		int rc = cc_msgbuf_check(&m, "lib", err);
		if (rc == 0)
			rc = cc_chan_send(c, m.sb.data, m.sb.size, deadline, err);
		cc_msgbuf_free(&m);
		if (rc < 0)
			return -1;
	}
	return 0;
}

void cc_libset_explain(const struct cc_libset *s, bool polyfills, cc_error *err)
{
	unsigned long n = 0;
	int used = 0;
	if (err->kind != CC_ERR_INVALID_INPUT || !err->message ||
	    sscanf(err->message, "library %lu: %n", &n, &used) != 1 || !used || n < 1 ||
	    n > cc_libset_count(s))
		return;
	/* The kind the worker's engine gave, only from those a load can end
	 * with (a worker that claims another keeps invalid_input). */
	const char *rest = err->message + used, *colon = strstr(rest, ": ");
	int kind = colon ? cc_error_kind_from_name(rest, (size_t)(colon - rest)) : -1;
	if (kind == CC_ERR_GUEST || kind == CC_ERR_SYNTAX || kind == CC_ERR_TIMEOUT ||
	    kind == CC_ERR_MEMORY_LIMIT)
		rest = colon + 2;
	else
		kind = CC_ERR_INVALID_INPUT;
	const struct cc_lib *l = &s->v[n - 1];
	char *msg = NULL;
	/* A bundle written for browsers often needs one of their APIs. */
	const char *hint = !polyfills && strstr(rest, "' is not defined")
				   ? "; the library may need a browser API: the web polyfills add "
				     "the common ones (--web-polyfills, "
				     "RuntimeConfig(web_polyfills=True), cc_options.web_polyfills)"
				   : "";
	/* the hint ends the error's first line, before the traceback */
	int line = (int)strcspn(rest, "\n");
	if (asprintf(&msg, "loading library '%s' (%s): %.*s%s%s", l->entry, l->path, line, rest,
		     hint, rest + line) < 0)
		return;
	free(err->message);
	err->message = msg;
	err->kind = (cc_error_kind)kind;
}
