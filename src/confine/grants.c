/* File grants, worker side (grants.h). The worker never resolves a host
 * path on its own: it binds the path the supervisor resolved and checks
 * that what got mounted is the object behind the supervisor's descriptor. */
#include "grants.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "error.h"
#include "namespaces.h"

struct cc_worker_grant cc_worker_grants[CC_MAX_MOUNTS];
size_t cc_worker_n_grants;
size_t cc_worker_grant_fds;

static bool str_into(const cc_value *v, char *dst, size_t cap)
{
	if (!v || v->type != CC_VALUE_STRING || v->u.str.len >= cap ||
	    memchr(v->u.str.ptr, 0, v->u.str.len))
		return false;
	memcpy(dst, v->u.str.ptr, v->u.str.len + 1);
	return true;
}

int cc_grants_parse(const cc_value *mounts, cc_error *err)
{
	size_t n = mounts ? mounts->u.array.len : 0;
	if ((mounts && mounts->type != CC_VALUE_ARRAY) || n != cc_worker_grant_fds ||
	    n > CC_MAX_MOUNTS)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
			       "init: mounts do not match the descriptors passed");
	for (size_t i = 0; i < n; i++) {
		const cc_value *m = mounts->u.array.items[i];
		struct cc_worker_grant *g = &cc_worker_grants[i];
		if (!m || m->type != CC_VALUE_ARRAY || m->u.array.len != 4 ||
		    !str_into(m->u.array.items[0], g->guest, sizeof(g->guest)) ||
		    !str_into(m->u.array.items[1], g->host, sizeof(g->host)) ||
		    !m->u.array.items[2] || m->u.array.items[2]->type != CC_VALUE_BOOL ||
		    !m->u.array.items[3] || m->u.array.items[3]->type != CC_VALUE_BOOL ||
		    g->guest[0] != '/')
			return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "init: malformed mount %zu",
				       i);
		g->writable = m->u.array.items[2]->u.b;
		g->attach = m->u.array.items[3]->u.b;
		g->fd = CC_GRANT_FD0 + (int)i;
	}
	cc_worker_n_grants = n;
	return 0;
}

/* a is b or beneath it */
static bool beneath(const char *a, const char *b)
{
	size_t n = strlen(b);
	return !strncmp(a, b, n) && (a[n] == 0 || a[n] == '/');
}

/* The supervisor's descriptor belongs to the host's mount namespace, and
 * a bind mount's source must be in ours: open the same path here, before
 * the new root covers anything, and keep it only if it is the same object
 * (device and inode) as the supervisor's. */
static int same_object(int a, int b)
{
	struct stat sa, sb;
	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

static int local_fd[CC_MAX_MOUNTS];

int cc_grants_open(cc_error *err)
{
	for (size_t i = 0; i < cc_worker_n_grants; i++) {
		const struct cc_worker_grant *g = &cc_worker_grants[i];
		local_fd[i] = -1;
		if (g->attach)
			continue;
		int fd = open(g->host, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && (errno == EACCES || errno == EPERM))
			return cc_fail(
				err, CC_ERR_INVALID_INPUT,
				"mount %s: the worker's user (its own uid, or nobody when the "
				"host runs as root) cannot reach the host path %s; make each "
				"directory on the way searchable (o+x) and the tree readable",
				g->guest, g->host);
		if (fd < 0 || !same_object(fd, g->fd)) {
			if (fd >= 0)
				close(fd);
			return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
				       "grant %s: the host path %s changed after it was resolved "
				       "(it is no longer the same file or directory); refusing to "
				       "start",
				       g->guest, g->host);
		}
		local_fd[i] = fd;
	}
	return 0;
}

static int bind_one(const char *newroot, size_t i, cc_error *err)
{
	const struct cc_worker_grant *g = &cc_worker_grants[i];
	struct stat want, got;
	if (fstat(g->fd, &want) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "mount %s: fstat: %s", g->guest,
			       strerror(errno));
	char dst[PATH_MAX];
	snprintf(dst, sizeof(dst), "%s%s", newroot, g->guest);
	bool dir = S_ISDIR(want.st_mode);
	if (cc_ns_mkparents(dst) < 0 ||
	    (dir ? mkdir(dst, 0755) : mknod(dst, S_IFREG | 0644, 0)) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "mount %s: making its mount point: %s",
			       g->guest, strerror(errno));
	int r, e;
	if (g->attach) { /* the supervisor's idmapped tree, as it is */
		r = move_mount(g->fd, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH);
		e = errno;
	} else {
		char src[64];
		snprintf(src, sizeof(src), "/proc/self/fd/%d", local_fd[i]);
		r = mount(src, dst, NULL, MS_BIND, NULL);
		e = errno;
		close(local_fd[i]);
		local_fd[i] = -1;
	}
	/* A bind in a user namespace may not uncover what another mount
	 * inside the tree hides (mount_namespaces(7), "locked" mounts). */
	if (r < 0 && e == EINVAL && !g->attach)
		return cc_fail(
			err, CC_ERR_INVALID_INPUT,
			"mount %s: the host path %s has other filesystems mounted inside "
			"it, which a bind in the worker's user namespace may not show; grant "
			"a folder with no mount point inside, or each filesystem on its own",
			g->guest, g->host);
	if (r < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "mount %s: %s %s: %s", g->guest,
			       g->attach ? "attaching the idmapped mount of" : "binding", g->host,
			       strerror(e));
	/* The path may have been swapped since the supervisor opened it: what
	 * is mounted must be the object behind its descriptor. */
	int fd = open(dst, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	bool same = fd >= 0 && fstat(fd, &got) == 0 && got.st_dev == want.st_dev &&
		    got.st_ino == want.st_ino;
	if (fd >= 0)
		close(fd);
	if (!same)
		return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
			       "grant %s: the host path %s changed after it was resolved (it is "
			       "no longer the same file or directory); refusing to start",
			       g->guest, g->host);
	/* Flags the host mount carries are locked in a user namespace and
	 * must be kept; nosuid, nodev and noexec are added. */
	unsigned long fl = MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV;
	if (g->writable || !beneath(g->guest, CC_PYTHON_PATH_GUEST))
		fl |= MS_NOEXEC;
	struct statvfs sv;
	if (!g->writable || (statvfs(dst, &sv) == 0 && (sv.f_flag & ST_RDONLY)))
		fl |= MS_RDONLY;
	if (mount(NULL, dst, NULL, fl, NULL) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "mount %s: making %s %s: %s", g->guest,
			       g->host, fl & MS_RDONLY ? "read-only" : "nosuid, nodev and noexec",
			       strerror(errno));
	return 0;
}

int cc_grants_bind(const char *newroot, const char *const *ro, size_t n_ro, const char *scratch,
		   cc_error *err)
{
	for (size_t i = 0; i < cc_worker_n_grants; i++) {
		const struct cc_worker_grant *g = &cc_worker_grants[i];
		for (size_t j = 0; j <= n_ro; j++) {
			const char *p = j < n_ro ? ro[j] : scratch;
			if (p && (beneath(g->guest, p) || beneath(p, g->guest)))
				return cc_fail(err, CC_ERR_INVALID_INPUT,
					       "mount %s: the guest path overlaps %s, which the "
					       "engine needs; choose another guest path",
					       g->guest, p);
		}
		if (bind_one(newroot, i, err) < 0)
			return -1;
	}
	return 0;
}

void cc_grants_close(void)
{
	for (size_t i = 0; i < cc_worker_n_grants; i++) {
		if (cc_worker_grants[i].fd >= 0)
			close(cc_worker_grants[i].fd);
		cc_worker_grants[i].fd = -1;
	}
}

size_t cc_grants_python_path(const char **out, size_t cap, bool bound)
{
	size_t n = 0;
	for (size_t i = 0; i < cc_worker_n_grants && n < cap; i++) {
		const struct cc_worker_grant *g = &cc_worker_grants[i];
		if (!g->writable && beneath(g->guest, CC_PYTHON_PATH_GUEST))
			out[n++] = bound ? g->guest : g->host;
	}
	return n;
}
