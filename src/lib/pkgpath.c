/* The python_path grants (cc_options.python_path), supervisor side: each
 * folder is checked and resolved here, once, and the worker is sent the
 * resolved paths in its init frame; it opens each without following a
 * symlink (src/worker/namespaces.c), so a folder swapped for a symlink
 * after this check fails the start instead of redirecting the grant. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "supervisor.h"

/* The longest resolved folder the init frame carries, bytes. */
#define CC_PYTHON_PATH_MAX_LEN 1000

void cc_python_path_free(struct cc_python_path *pp)
{
	for (size_t i = 0; i < pp->n; i++)
		free(pp->dirs[i]);
	pp->n = 0;
}

int cc_python_path_resolve(const cc_options *o, struct cc_python_path *pp, cc_error *err)
{
	pp->n = 0;
	if (o->n_python_path == 0)
		return 0;
	if (o->language != CC_LANG_PYTHON)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "python_path gives Python package folders; a JavaScript runtime "
			       "takes none (remove python_path)");
	if (!o->python_path || o->n_python_path > CC_MAX_PYTHON_PATH)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "python_path has %zu folders; give at most %d (or NULL/0 for none)",
			       o->n_python_path, CC_MAX_PYTHON_PATH);
	for (size_t i = 0; i < o->n_python_path; i++) {
		const char *d = o->python_path[i];
		char real[PATH_MAX];
		struct stat st;
		if (!d || d[0] != '/') {
			cc_python_path_free(pp);
			return cc_fail(err, CC_ERR_INVALID_INPUT,
				       "python_path[%zu] '%s' is not an absolute path; give each "
				       "package folder as an absolute path",
				       i, d ? d : "(null)");
		}
		if (!realpath(d, real) || stat(real, &st) < 0 || !S_ISDIR(st.st_mode) ||
		    access(real, R_OK | X_OK) < 0) {
			int e = errno;
			cc_python_path_free(pp);
			return cc_fail(
				err, CC_ERR_INVALID_INPUT,
				"python_path[%zu] '%s' is not a readable directory (%s); give "
				"folders of packages, such as a pip install --target DIR",
				i, d, e ? strerror(e) : "not a directory");
		}
		if (strlen(real) > CC_PYTHON_PATH_MAX_LEN || !strcmp(real, "/")) {
			cc_python_path_free(pp);
			return cc_fail(
				err, CC_ERR_INVALID_INPUT,
				"python_path[%zu] '%s' resolves to %s; give a package folder "
				"(not /) of at most %d bytes",
				i, d, strlen(real) > 60 ? "a path that is too long" : real,
				CC_PYTHON_PATH_MAX_LEN);
		}
		if (!(pp->dirs[pp->n] = strdup(real))) {
			cc_python_path_free(pp);
			return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
		}
		pp->n++;
	}
	return 0;
}

int cc_python_path_copy(const cc_options *from, cc_options *to, char ***owned, cc_error *err)
{
	*owned = NULL;
	to->python_path = NULL;
	to->n_python_path = 0;
	if (!from->n_python_path || !from->python_path)
		return 0;
	size_t n =
		from->n_python_path > CC_MAX_PYTHON_PATH ? CC_MAX_PYTHON_PATH : from->n_python_path;
	char **v = calloc(n + 1, sizeof(*v));
	if (!v)
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	for (size_t i = 0; i < n; i++)
		if (!(v[i] = strdup(from->python_path[i] ? from->python_path[i] : ""))) {
			cc_python_path_strv_free(v);
			return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
		}
	to->python_path = (const char *const *)v;
	to->n_python_path = n;
	*owned = v;
	return 0;
}

void cc_python_path_strv_free(char **v)
{
	if (!v)
		return;
	for (size_t i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}
