/* npm packages as the library loader reads them (lib_pkg.h). */
#include "lib_pkg.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "error.h"
#include "fdpass.h"

const char *const cc_lib_conds_script[] = { "browser", "import", "default", "require", NULL };
const char *const cc_lib_conds_import[] = { "browser", "import", "module", "default", NULL };
const char *const cc_lib_conds_require[] = { "require", "default", NULL };

int cc_lib_open_beneath(int dir, const char *rel, int flags)
{
	struct open_how how = { .flags = (uint64_t)flags,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS };
	return (int)syscall(SYS_openat2, dir, rel, &how, sizeof(how));
}

int cc_lib_read(int dir, const char *rel, const char *path, uint64_t max, const char *what,
		char **out, size_t *len, cc_error *err)
{
	*out = NULL;
	const int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	cc_autoclose int fd = dir < 0 ? open(path, flags) : cc_lib_open_beneath(dir, rel, flags);
	if (fd < 0 && dir >= 0 && errno == EXDEV)
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

static bool stat_beneath(int dir, const char *rel, mode_t type)
{
	cc_autoclose int fd = cc_lib_open_beneath(dir, rel, O_PATH | O_CLOEXEC);
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == type;
}

bool cc_lib_is_file(int dir, const char *rel)
{
	return *rel && stat_beneath(dir, rel, S_IFREG);
}

bool cc_lib_is_dir(int dir, const char *rel)
{
	return stat_beneath(dir, *rel ? rel : ".", S_IFDIR);
}

int cc_lib_package_json(int dir, const char *pkg, const char *what, json_t **out, cc_error *err)
{
	*out = NULL;
	char *rel = NULL;
	if (asprintf(&rel, "%s%spackage.json", *pkg && strcmp(pkg, ".") ? pkg : "",
		     *pkg && strcmp(pkg, ".") ? "/" : "") < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	/* none: fine; any other failure (a symlink out of the package) the
	 * read reports */
	int fd = cc_lib_open_beneath(dir, rel, O_PATH | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		free(rel);
		return 0;
	}
	if (fd >= 0)
		close(fd);
	char *text = NULL;
	size_t len = 0;
	int rc = cc_lib_read(dir, rel, rel, CC_PACKAGE_JSON_MAX, what, &text, &len, err);
	if (rc == 0) {
		json_error_t je;
		*out = json_loadb(text, len, 0, &je);
		if (!json_is_object(*out)) {
			json_decref(*out);
			*out = NULL;
			rc = cc_fail(err, CC_ERR_INVALID_INPUT, "%s: %s is not a JSON object (%s)",
				     what, rel, je.text);
		}
	}
	free(text);
	free(rel);
	return rc;
}

/* A conditions value: a string, an array (its first string), or an
 * object whose keys are conditions (depth-bounded). */
static const char *pick(json_t *v, const char *const *conds, int depth)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_array(v)) {
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x)
		{
			const char *s = depth < 8 ? pick(x, conds, depth + 1) : NULL;
			if (s)
				return s;
		}
		return NULL;
	}
	if (!json_is_object(v) || depth >= 8)
		return NULL;
	for (size_t i = 0; conds[i]; i++) {
		const char *s = pick(json_object_get(v, conds[i]), conds, depth + 1);
		if (s)
			return s;
	}
	return NULL;
}

const char *cc_lib_exports(json_t *pkg, const char *subpath, const char *const *conds)
{
	json_t *ex = json_object_get(pkg, "exports");
	if (!ex)
		return NULL;
	/* a map of subpaths has keys starting with '.'; else it is "."'s */
	const char *k;
	json_t *v;
	bool subpaths = false;
	if (json_is_object(ex))
		json_object_foreach(ex, k, v)
		{
			subpaths = k[0] == '.';
			break;
		}
	if (!subpaths)
		return strcmp(subpath, ".") ? NULL : pick(ex, conds, 0);
	return pick(json_object_get(ex, subpath), conds, 0);
}

size_t cc_lib_exports_each(json_t *pkg, const char *const *conds, const char **out, size_t max)
{
	json_t *ex = json_object_get(pkg, "exports");
	size_t n = 0;
	if (json_is_object(ex) && json_object_get(ex, "."))
		ex = json_object_get(ex, ".");
	if (json_is_string(ex) || json_is_array(ex)) {
		const char *s = pick(ex, conds, 0);
		if (s && max)
			out[n++] = s;
		return n;
	}
	for (size_t i = 0; json_is_object(ex) && conds[i] && n < max; i++) {
		const char *s = pick(json_object_get(ex, conds[i]), conds, 0);
		bool seen = false;
		for (size_t k = 0; s && k < n; k++)
			seen |= !strcmp(out[k], s);
		if (s && !seen)
			out[n++] = s;
	}
	return n;
}

char *cc_lib_normpath(const char *path)
{
	if (path[0] == '/')
		return NULL;
	size_t n = strlen(path);
	char *out = malloc(n + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (const char *p = path; *p;) {
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == 0 || (len == 1 && p[0] == '.')) {
			/* nothing */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (o == 0) {
				free(out);
				return NULL;
			}
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
		} else {
			if (o)
				out[o++] = '/';
			memcpy(out + o, p, len);
			o += len;
		}
		p += len + (e ? 1 : 0);
	}
	out[o] = 0;
	return out;
}

char *cc_lib_join(const char *path, const char *rel)
{
	char *j = NULL;
	if (asprintf(&j, "%s%s%s", path, *path ? "/" : "", rel) < 0)
		return NULL;
	char *n = cc_lib_normpath(j);
	free(j);
	return n;
}

static const char *skip_blank(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

bool cc_lib_looks_global(const char *code)
{
	const char *p = code;
	for (;;) {
		p = skip_blank(p);
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
	if (*p == '(' || *p == '!' || *p == ';')
		return true;
	/* a UMD header that starts otherwise, near the top (anywhere is too
	 * far: a CommonJS build may bundle a UMD library inside) */
	size_t n = strnlen(p, 2048);
	for (const char *q = p; q + 10 <= p + n; q++)
		if (!memcmp(q, "define.amd", 10))
			return true;
	/* esbuild's iife: var NAME = (() => { ... })(); */
	if (strncmp(p, "var ", 4))
		return false;
	p = skip_blank(p + 4);
	const char *id = p;
	while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
	       *p == '_' || *p == '$')
		p++;
	if (p == id)
		return false;
	p = skip_blank(p);
	if (*p != '=')
		return false;
	return *skip_blank(p + 1) == '(';
}
