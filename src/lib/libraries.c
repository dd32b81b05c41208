/* JavaScript libraries: resolve each entry of cc_options.libraries to one
 * file, read it in the host (the worker reads no host file for this), and
 * send it to the worker after "init" as a "lib" frame, which the worker
 * evaluates before "ready" (src/worker/main.c, load_libraries).
 *
 * An entry is a file (loaded as it is), a package directory, or a package
 * name looked up in cc_options.node_modules. A package resolves to its
 * browser global bundle through package.json: "unpkg", then "jsdelivr"
 * (the files those CDNs serve to a <script> tag), then "browser" when it
 * is a string naming a UMD or IIFE script (a CommonJS or ES module file
 * cannot run as a classic script); otherwise the error asks for the file.
 * Every file must be UTF-8 text of at most limits.max_source bytes. A
 * package's files are opened beneath its directory (openat2
 * RESOLVE_BENEATH): a symlink or ".." out of the package is refused, so a
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
#include "fdpass.h"
#include "message.h"
#include "supervisor.h"
#include "utf8.h"

/* Largest package.json read, bytes. */
#define CC_PACKAGE_JSON_MAX (1u << 20)

struct cc_lib {
	char *entry; /* as the caller gave it */
	char *path;  /* the host file read */
	char *file;  /* the name stack traces show: "vega/build/vega.min.js" */
	char *code;  /* NUL-terminated */
	size_t len;
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
		const char *file = s->v[i].file ? s->v[i].file : "";
		add(u, file, strlen(file) + 1);
		add(u, &s->v[i].len, sizeof(s->v[i].len));
		add(u, s->v[i].code, s->v[i].len);
	}
}

/* Open rel for reading beneath the package directory pkg: a symlink (or
 * "..") that leads out of the package fails with EXDEV, one that stays
 * inside is followed. */
static int open_beneath(int dir, const char *rel, int flags)
{
	struct open_how how = { .flags = (uint64_t)flags,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS };
	return (int)syscall(SYS_openat2, dir, rel, &how, sizeof(how));
}

static int open_in_package(int pkg, const char *rel)
{
	return open_beneath(pkg, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
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
	int fd = open_beneath(r, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int e = errno;
	close(r);
	errno = e;
	return fd;
}

/* Read a regular file of at most max bytes into a NUL-terminated buffer:
 * path itself when pkg < 0, else rel beneath the package directory pkg
 * (path is then only the name messages give). */
static int read_file(int pkg, const char *rel, const char *path, uint64_t max, const char *what,
		     char **out, size_t *len, cc_error *err)
{
	*out = NULL;
	cc_autoclose int fd = pkg < 0 ? open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
				      : open_in_package(pkg, rel);
	if (fd < 0 && pkg >= 0 && errno == EXDEV)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "%s: %s leads out of its package (a symlink or '..'); a package "
			       "is read only from its own directory",
			       what, path);
	if (fd < 0)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "%s: cannot open %s: %s", what, path,
			       strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return cc_fail(err, CC_ERR_INVALID_INPUT, "%s: %s is not a regular file", what,
			       path);
	if ((uint64_t)st.st_size > max)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "%s: %s is %lld bytes, over the cap of %llu bytes (max_source; "
			       "raise it, e.g. --max-source)",
			       what, path, (long long)st.st_size, (unsigned long long)max);
	cc_autofree char *buf = malloc((size_t)st.st_size + 1);
	size_t got = buf ? cc_fd_read_full(fd, buf, (size_t)st.st_size) : 0;
	if (!buf)
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	if (got != (size_t)st.st_size)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "%s: reading %s failed (it changed?)",
			       what, path);
	buf[got] = 0;
	*out = cc_steal_pointer(&buf);
	*len = got;
	return 0;
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

/* Does the text look like a script a <script> tag runs as a global: a UMD
 * wrapper (it tests for AMD's define) or an IIFE (after comments and a
 * "use strict", it starts with '(', '!' or ';')? */
static bool looks_global(const char *code)
{
	if (strstr(code, "define.amd"))
		return true;
	const char *p = code;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (!strncmp(p, "//", 2)) {
			p = strchr(p, '\n') ? strchr(p, '\n') : p + strlen(p);
		} else if (p[0] == '/' && p[1] == '*') {
			const char *e = p + 2;
			while (*e && !(e[0] == '*' && e[1] == '/'))
				e++;
			p = *e ? e + 2 : e;
		} else if (!strncmp(p, "\"use strict\";", 13) || !strncmp(p, "'use strict';", 13)) {
			p += 13;
		} else {
			break;
		}
	}
	return *p == '(' || *p == '!' || *p == ';';
}

/* The bundle a package names in package.json, read beneath the package
 * directory (nothing a symlink in the package points at outside it is
 * read): *path (owned, for messages and the guest's file name), *code
 * and *len (owned, at most max bytes). */
static int package_bundle(const char *what, const char *dir, const char *nm, const char *name,
			  uint64_t max, char **path, char **code, size_t *len, cc_error *err)
{
	char *pj = join(dir, "package.json"), *text = NULL;
	*path = NULL;
	*code = NULL;
	int pkg = open_package_dir(dir, nm, name);
	if (!pj || pkg < 0) {
		int rc = !pj ? cc_fail(err, CC_ERR_INTERNAL, "out of memory")
			 : errno == EXDEV
				 ? cc_fail(err, CC_ERR_INVALID_INPUT,
					   "%s: %s leads out of %s (a symlink); a package named "
					   "by name is read only from inside node_modules",
					   what, dir, nm)
				 : cc_fail(err, CC_ERR_INVALID_INPUT, "%s: cannot open %s: %s",
					   what, dir, strerror(errno));
		free(pj);
		if (pkg >= 0)
			close(pkg);
		return rc;
	}
	int rc = read_file(pkg, "package.json", pj, CC_PACKAGE_JSON_MAX, what, &text, len, err);
	if (rc < 0) {
		free(pj);
		close(pkg);
		return cc_fail_wrap(err, "a package directory needs a package.json");
	}
	json_error_t je;
	json_t *root = json_loadb(text, *len, 0, &je);
	free(text);
	if (!json_is_object(root)) {
		json_decref(root);
		rc = cc_fail(err, CC_ERR_INVALID_INPUT, "%s: %s is not a JSON object (%s)", what,
			     pj, je.text);
		free(pj);
		close(pkg);
		return rc;
	}
	static const char *const fields[] = { "unpkg", "jsdelivr", "browser" };
	rc = 0;
	for (size_t i = 0; i < 3 && !*path && rc == 0; i++) {
		const char *rel = json_string_value(json_object_get(root, fields[i]));
		if (!rel || !*rel || !inside_package(rel))
			continue;
		char *r = strdup(rel), *cand = join(dir, rel);
		struct stat st;
		if (r && cand && fstatat(pkg, r, &st, 0) < 0) { /* "dist/x" means dist/x.js */
			char *js = NULL, *rjs = NULL;
			if (asprintf(&js, "%s.js", cand) < 0)
				js = NULL;
			if (asprintf(&rjs, "%s.js", r) < 0)
				rjs = NULL;
			free(cand);
			free(r);
			cand = js;
			r = rjs;
		}
		if (!cand || !r) {
			free(cand);
			free(r);
			rc = cc_fail(err, CC_ERR_INTERNAL, "out of memory");
			break;
		}
		cc_error e2 = { 0 };
		if (i < 2) {
			rc = read_file(pkg, r, cand, max, what, code, len, err);
			*path = cand;
		} else if (read_file(pkg, r, cand, max, what, code, len, &e2) == 0 &&
			   looks_global(*code)) {
			*path = cand;
		} else {
			free(*code);
			*code = NULL;
			free(cand);
		}
		free(r);
		cc_error_clear(&e2);
	}
	json_decref(root);
	close(pkg);
	if (rc == 0 && !*path)
		rc = cc_fail(err, CC_ERR_INVALID_INPUT,
			     "%s: the package in %s names no browser global bundle in package.json "
			     "(\"unpkg\", \"jsdelivr\", or a \"browser\" string naming a UMD/IIFE "
			     "script of at most max_source bytes); give the bundle's file instead "
			     "(often under dist/ or build/)",
			     what, dir);
	free(pj);
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
	if (dir && package_bundle(what, dir, by_name ? nm : NULL, entry, o->limits.max_source,
				  &lib->path, &lib->code, &lib->len, err) < 0) {
		free(dir);
		return -1;
	}
	if (!lib->path) {
		free(dir);
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	}
	lib->file = guest_file(dir, lib->path);
	free(dir);
	if (!lib->file)
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	if (!lib->code && read_file(-1, NULL, lib->path, o->limits.max_source, what, &lib->code,
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

int cc_libset_send(struct cc_child *c, const struct cc_libset *s, int64_t deadline, cc_error *err)
{
	for (size_t i = 0; i < cc_libset_count(s); i++) {
		struct cc_msgbuf m;
		cc_msgbuf_begin(&m, 3, "lib");
		cc_pack_cstr(&m.pk, "file");
		cc_pack_cstr(&m.pk, s->v[i].file);
		cc_pack_cstr(&m.pk, "code");
		msgpack_pack_str(&m.pk, s->v[i].len);
		msgpack_pack_str_body(&m.pk, s->v[i].code, s->v[i].len);
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
