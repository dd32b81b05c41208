/* File grants (cc_options.mounts, and cc_options.python_path: each
 * package folder a read-only grant at /codecage/python-path/N), supervisor
 * side: checked and resolved
 * once, before any worker starts. Each grant's host path is resolved with
 * realpath and opened O_PATH here; the worker gets that descriptor (as fd
 * CC_GRANT_FD0 + i) and binds the tree only if what it mounts is that very
 * object (src/confine/grants.c), so a path swapped for a symlink after this
 * check cannot redirect the grant. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cleanup.h"
#include "error.h"
#include "frame.h"
#include "supervisor.h"

/* Guest paths a grant may not be, contain or sit under: what the engines,
 * the loader and the kernel interfaces live in, and scratch. The worker
 * checks its real policy again (fail closed). */
static const char *const reserved[] = {
	"/usr",	    "/lib",  "/lib32", "/lib64", "/libx32", "/bin", "/sbin",
	"/etc",	    "/proc", "/dev",   "/sys",	 "/tmp",    "/run", "/var/lib/python3",
	"/codecage"
};

/* a is b or beneath it */
static bool beneath(const char *a, const char *b)
{
	size_t n = strlen(b);
	return !strncmp(a, b, n) && (a[n] == 0 || a[n] == '/' || (n == 1 && b[0] == '/'));
}

/* Absolute, canonical (no empty, "." or ".." component, no trailing
 * slash), printable. */
static bool guest_path_ok(const char *g)
{
	size_t n = strlen(g);
	if (g[0] != '/' || n < 2 || n > CC_GRANT_PATH_MAX || g[n - 1] == '/')
		return false;
	for (const char *p = g; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == ':')
			return false;
		if (*p != '/')
			continue;
		const char *c = p + 1;
		size_t len = strcspn(c, "/");
		if (len == 0 || (len == 1 && c[0] == '.') ||
		    (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
	}
	return true;
}

/* The host path as messages name it: as the user gave it. */
static const char *label(const cc_mount *m)
{
	return m->name ? m->name : m->host ? m->host : "?";
}

static int check_guest(const cc_mount *m, size_t i, const cc_mount *all, cc_error *err)
{
	if (!m->guest || !guest_path_ok(m->guest))
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "mount %zu (%s): the guest path '%s' must be absolute and canonical "
			       "(no '.', '..', '//', ':' or trailing '/')",
			       i, label(m), m->guest ? m->guest : "(null)");
	for (size_t r = 0; r < sizeof(reserved) / sizeof(reserved[0]); r++)
		if (beneath(m->guest, reserved[r]) || beneath(reserved[r], m->guest))
			return cc_fail(
				err, CC_ERR_INVALID_INPUT,
				"mount %zu (%s:%s): the guest path overlaps %s, which the "
				"engine%s needs; choose another place, such as /data or /mnt",
				i, label(m), m->guest, reserved[r],
				!strcmp(reserved[r], "/tmp")	    ? "'s scratch"
				: !strcmp(reserved[r], "/codecage") ? " (python_path)"
								    : "");
	for (size_t j = 0; j < i; j++)
		if (beneath(m->guest, all[j].guest) || beneath(all[j].guest, m->guest))
			return cc_fail(
				err, CC_ERR_INVALID_INPUT,
				"mount %zu (%s:%s) and mount %zu (%s:%s): two grants on one "
				"guest path, or one inside the other; give each its own path",
				j, label(&all[j]), all[j].guest, i, label(m), m->guest);
	return 0;
}

/* What messages call grant i of o: "mount I (HOST:GUEST)", HOST as the
 * user gave it, or "python_path[J] 'DIR'" (heap; NULL when out of
 * memory). */
static char *subject(const cc_options *o, size_t i)
{
	if (i >= o->n_mounts)
		return cc_strprintf("python_path[%zu] '%s'", i - o->n_mounts,
				    o->python_path[i - o->n_mounts]);
	const cc_mount *m = &o->mounts[i];
	return cc_strprintf("mount %zu (%s:%s)", i, label(m), m->guest);
}

static int resolve_one(const cc_mount *m, struct cc_grant *g, cc_error *err)
{
	if (!m->host || !m->host[0])
		return cc_fail(err, CC_ERR_INVALID_INPUT, "the host path is empty");
	char real[PATH_MAX];
	if (!realpath(m->host, real))
		return cc_fail(err, CC_ERR_INVALID_INPUT, "the host path: %s", strerror(errno));
	if (cc_grant_check_host(real, -1, NULL, err) < 0)
		return -1;
	/* O_NOFOLLOW: realpath gave a path without symlinks; one appearing
	 * there since is a swap, refused. */
	cc_autoclose int fd = open(real, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "the host path %s: %s", real,
			       strerror(errno));
	if (cc_grant_check_host(real, fd, &st, err) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "the host path %s is neither a directory nor a regular file", real);
	/* What host names must be what was opened: realpath's path may lead
	 * elsewhere by now (a directory moved or mounted over on the way).
	 * Exact for the package's /proc/self/fd/N, the object itself. */
	struct stat hs;
	if (stat(m->host, &hs) < 0 || hs.st_dev != st.st_dev || hs.st_ino != st.st_ino)
		return cc_fail(
			err, CC_ERR_INVALID_INPUT,
			"the host path %s no longer leads to what it named (moved, swapped "
			"or mounted over while it was resolved); grant a path that stays put",
			real);
	/* Above the descriptors the spawn moves into place (spawn.c). */
	g->fd = fcntl(fd, F_DUPFD_CLOEXEC, CC_GRANT_FD0 + 2 * CC_MAX_MOUNTS);
	g->host = strdup(real);
	g->guest = strdup(m->guest);
	g->writable = m->writable;
	if (g->fd < 0 || !g->host || !g->guest)
		return cc_fail(err, CC_ERR_INTERNAL, "%s",
			       g->fd < 0 ? strerror(errno) : "out of memory");
	return 0;
}

/* python_path[i]: an absolute path of an existing directory, named in
 * the error as python_path (the grant it becomes is the engine's). */
static int check_python_path(const char *d, size_t i, cc_error *err)
{
	struct stat st;
	if (!d || d[0] != '/')
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "python_path[%zu] '%s' is not an absolute path; give each package "
			       "folder as an absolute path",
			       i, d ? d : "(null)");
	char real[PATH_MAX];
	int r = realpath(d, real) && stat(real, &st) == 0 ? 0 : -1;
	int e = errno;
	if (r < 0 || !S_ISDIR(st.st_mode))
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "python_path[%zu] '%s' is not a readable directory (%s); give "
			       "folders of packages, such as a pip install --target DIR",
			       i, d, r < 0 ? strerror(e) : "not a directory");
	return 0;
}

static int check_python_paths(const cc_options *o, cc_error *err)
{
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
	if (o->n_mounts + o->n_python_path > CC_MAX_MOUNTS)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "%zu mounts and %zu python_path folders; together at most %d are "
			       "allowed",
			       o->n_mounts, o->n_python_path, CC_MAX_MOUNTS);
	for (size_t i = 0; i < o->n_python_path; i++)
		if (check_python_path(o->python_path[i], i, err) < 0)
			return -1;
	return 0;
}

static bool same_object(int a, int b)
{
	struct stat sa, sb;
	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* A package folder no writable grant of the same runtime reaches: a
 * session could write a module into it that a later session (of a fork
 * server, a pool, the same options) imports. Compared by resolved path
 * (one inside the other) and by object (the same directory). */
static int check_packages(const cc_options *o, const struct cc_grants *gs, cc_error *err)
{
	for (size_t p = o->n_mounts; p < gs->n; p++)
		for (size_t w = 0; w < o->n_mounts; w++) {
			const struct cc_grant *pg = &gs->g[p], *wg = &gs->g[w];
			if (!wg->writable)
				continue;
			const char *rel = same_object(pg->fd, wg->fd)	? "is"
					  : beneath(pg->host, wg->host) ? "inside"
					  : beneath(wg->host, pg->host) ? "contains"
									: NULL;
			if (!rel)
				continue;
			const cc_mount *m = &o->mounts[w];
			return cc_fail(
				err, CC_ERR_INVALID_INPUT,
				"python_path[%zu] '%s' %s mount %zu (%s:%s), which is "
				"writable: a session could write a module there that a later "
				"one imports; give python_path a folder no writable mount "
				"reaches, or make mount %zu read-only",
				p - o->n_mounts, o->python_path[p - o->n_mounts], rel, w, label(m),
				m->guest, w);
		}
	return 0;
}

int cc_grants_resolve(const cc_options *o, struct cc_grants *gs, cc_error *err)
{
	memset(gs, 0, sizeof(*gs));
	if (o->n_mounts && !o->mounts)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "n_mounts is %zu but mounts is NULL",
			       o->n_mounts);
	if (o->n_mounts > CC_MAX_MOUNTS)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "%zu mounts; at most %d are allowed",
			       o->n_mounts, CC_MAX_MOUNTS);
	if (check_python_paths(o, err) < 0)
		return -1;
	for (size_t i = 0; i < o->n_mounts; i++)
		if (check_guest(&o->mounts[i], i, o->mounts, err) < 0)
			return -1;
	size_t total = o->n_mounts + o->n_python_path;
	if (total == 0)
		return 0;
	gs->g = calloc(total, sizeof(*gs->g));
	if (!gs->g)
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	for (size_t i = 0; i < total; i++) {
		char guest[64];
		cc_mount pm = { 0 };
		const cc_mount *m = &pm;
		if (i < o->n_mounts) {
			m = &o->mounts[i];
		} else { /* read-only, where the worker's sys.path looks */
			snprintf(guest, sizeof(guest), CC_PYTHON_PATH_GUEST "/%zu",
				 i - o->n_mounts);
			pm = (cc_mount){ .host = o->python_path[i - o->n_mounts], .guest = guest };
		}
		struct cc_grant *g = &gs->g[i];
		g->fd = -1;
		gs->n++;
		g->name = subject(o, i);
		if (!g->name) {
			cc_fail(err, CC_ERR_INTERNAL, "out of memory");
			goto fail;
		}
		if (resolve_one(m, g, err) < 0) {
			cc_fail_wrap(err, "%s", g->name);
			goto fail;
		}
	}
	/* On a root host the guest is host nobody: idmapped mounts let it use
	 * each tree as its owner (idmap.c). Mode off binds nothing. */
	if (check_packages(o, gs, err) < 0 ||
	    (o->sandbox != CC_SANDBOX_OFF && cc_grants_idmap(gs, err) < 0))
		goto fail;
	return 0;
fail:
	cc_grants_free(gs);
	return -1;
}

size_t cc_grants_ids(const struct cc_grants *gs, uint64_t *ids)
{
	size_t n = 0;
	for (size_t i = 0; i < gs->n && i < CC_MAX_MOUNTS; i++) {
		struct stat st;
		bool ok = gs->g[i].fd >= 0 && fstat(gs->g[i].fd, &st) == 0;
		ids[n++] = ok ? (uint64_t)st.st_dev : 0;
		ids[n++] = ok ? (uint64_t)st.st_ino : 0;
	}
	return n;
}

void cc_grants_free(struct cc_grants *gs)
{
	for (size_t i = 0; i < gs->n; i++) {
		free(gs->g[i].host);
		free(gs->g[i].guest);
		free(gs->g[i].name);
		if (gs->g[i].fd >= 0)
			close(gs->g[i].fd);
	}
	free(gs->g);
	memset(gs, 0, sizeof(*gs));
}

cc_mount *cc_mounts_copy(const cc_mount *m, size_t n)
{
	if (!n)
		return NULL;
	cc_mount *c = calloc(n, sizeof(*c));
	for (size_t i = 0; c && i < n; i++) {
		c[i].host = m[i].host ? strdup(m[i].host) : NULL;
		c[i].guest = m[i].guest ? strdup(m[i].guest) : NULL;
		c[i].writable = m[i].writable;
		c[i].name = m[i].name ? strdup(m[i].name) : NULL;
		if ((m[i].host && !c[i].host) || (m[i].guest && !c[i].guest) ||
		    (m[i].name && !c[i].name)) {
			cc_mounts_free(c, i + 1);
			return NULL;
		}
	}
	return c;
}

void cc_mounts_free(cc_mount *m, size_t n)
{
	for (size_t i = 0; m && i < n; i++) {
		free((char *)m[i].host);
		free((char *)m[i].guest);
		free((char *)m[i].name);
	}
	free(m);
}

char **cc_strv_copy(const char *const *v, size_t n)
{
	if (!n)
		return NULL;
	char **c = calloc(n + 1, sizeof(*c));
	for (size_t i = 0; c && i < n; i++)
		if (!v[i] || !(c[i] = strdup(v[i]))) {
			cc_strv_free(c);
			return NULL;
		}
	return c;
}

void cc_strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}
