/* Idmapped grants on a root host (cc_grants_idmap, supervisor.h).
 *
 * When the supervisor runs as root, the worker maps the guest to host
 * nobody (src/confine/namespaces.c: it must never hold host uid 0), so a
 * folder only its owner may use (a root-owned 0700 one, every
 * tempfile.mkdtemp) would be a PermissionError in the guest. Instead each
 * grant becomes a detached mount whose idmapping shows the owner of the
 * grant's root (uid and gid) as host nobody: the guest uses the tree as
 * its owner, and what it creates there belongs on disk to that owner
 * (mount_setattr(2), "Idmapped mounts").
 *
 * Who does it: idmapping needs CAP_SYS_ADMIN over the filesystem's
 * superblock (the host's user namespace), which only the supervisor has;
 * the worker is in a user namespace of its own before it mounts anything.
 * So the supervisor clones the tree from the descriptor it resolved
 * (open_tree(OPEN_TREE_CLONE): the very object, no path), sets the
 * idmapping and nosuid, nodev, noexec (mount_setattr), and hands the
 * worker that detached mount in the grant's place (fd CC_GRANT_FD0 + i);
 * the worker attaches it with move_mount before pivot_root and makes it
 * read-only as it does a bind (src/confine/grants.c). The mount API is on
 * the worker's seccomp kill-list afterwards.
 *
 * An idmapping is a user namespace; the supervisor makes one per owner
 * with a helper child that only waits (clone with CLONE_NEWUSER, sharing
 * memory, all signals blocked, on a small stack of its own), writes its
 * maps, keeps /proc/PID/ns/user open, and lets it go.
 *
 * Where the kernel, the filesystem or the supervisor's privileges give
 * no idmapping, a grant nobody may use anyway (its mode bits) is bound as
 * before; any other is refused at start, naming the cause and the fix. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "error.h"
#include "supervisor.h"

#define HELPER_STACK (64 * 1024)
#define USERNS_STEP "creating the idmapping's user namespace"

/* The helper: shares the supervisor's memory (no page tables copied out
 * of a large host process) and touches nothing of it but its own stack:
 * it closes its copy of the write end, then waits for the supervisor to
 * close its own. Raw system calls only (no libc wrapper, nor a
 * sanitizer's, may take a lock the supervisor's threads hold), and every
 * signal is blocked, so the read ends only with EOF. */
__attribute__((no_sanitize("address", "undefined"))) static int helper_main(void *arg)
{
	/* the two ends by value: the supervisor's variables change under it */
	uintptr_t ends = (uintptr_t)arg;
	char c;
	syscall(SYS_close, (int)(ends >> 32));
	syscall(SYS_read, (int)(ends & 0xffffffffu), &c, 1);
	return 0;
}

static int write_map(pid_t pid, const char *file, unsigned id)
{
	char path[64], line[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	int n = snprintf(line, sizeof(line), "%u %u 1", id, CC_HOST_NOBODY);
	cc_autoclose int fd = open(path, O_WRONLY | O_CLOEXEC);
	return fd >= 0 && write(fd, line, (size_t)n) == n ? 0 : -1;
}

/* A user namespace whose only uid is uid and only gid gid, each shown as
 * host nobody: its descriptor, or -1 with errno. */
static int userns_for(uid_t uid, gid_t gid)
{
	cc_autoclose_pair int p[2] = { -1, -1 };
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	void *stack = mmap(NULL, HELPER_STACK, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	/* No host signal handler may run on the helper's stack: it starts
	 * with every signal blocked. Exit signal 0, so no SIGCHLD reaches
	 * the host and only __WCLONE reaps it. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	_Static_assert(sizeof(uintptr_t) == 8, "both ends fit in the helper's argument");
	void *ends = (void *)((uintptr_t)(unsigned)p[0] | (uintptr_t)(unsigned)p[1] << 32);
	pid_t pid =
		clone(helper_main, (char *)stack + HELPER_STACK, CLONE_VM | CLONE_NEWUSER, ends);
	int e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	int fd = -1;
	if (pid > 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
		if (write_map(pid, "uid_map", uid) == 0 && write_map(pid, "gid_map", gid) == 0)
			fd = open(path, O_RDONLY | O_CLOEXEC);
		e = errno;
		cc_closep(&p[1]); /* the helper's read returns: it exits */
		while (waitpid(pid, NULL, __WCLONE) < 0 && errno == EINTR)
			;
	}
	munmap(stack, HELPER_STACK);
	errno = e;
	return fd;
}

/* Why idmapping failed, in words, and what else would do. */
static void explain(const char *step, int e, const struct stat *st, char *why, size_t cap,
		    const char **other)
{
	char type[64];
	*other = "";
	if (!strcmp(step, USERNS_STEP)) {
		snprintf(why, cap, "%s: %s (user namespaces are off or limited on this host)", step,
			 strerror(e));
		*other = ", or allow the supervisor user namespaces";
	} else if (e == ENOSYS) {
		snprintf(why, cap,
			 "%s: %s: the kernel has no idmapped mounts (Linux 5.12 or later "
			 "has them)",
			 step, strerror(e));
		*other = ", or run on Linux 5.12 or later";
	} else if (e == EPERM || e == EACCES) {
		snprintf(why, cap,
			 "%s: %s: the supervisor lacks CAP_SYS_ADMIN over that "
			 "filesystem (a container without it, or root inside a user namespace)",
			 step, strerror(e));
		*other = ", or give the supervisor CAP_SYS_ADMIN";
	} else if (e == EINVAL && !strcmp(step, "mount_setattr(MOUNT_ATTR_IDMAP)")) {
		cc_fs_type_name(st, type, sizeof(type));
		snprintf(why, cap, "%s: %s: its filesystem (%s) does not support idmapped mounts",
			 step, strerror(e), type);
		*other = ", or grant a folder on a filesystem that supports idmapped mounts "
			 "(ext4, xfs, btrfs, tmpfs)";
	} else {
		snprintf(why, cap, "%s: %s", step, strerror(e));
	}
}

/* Whether host nobody (the guest's uid and gid on a root host, no other
 * groups) may use st as the grant asks, by its mode bits. */
static bool nobody_may(const struct stat *st, bool writable)
{
	unsigned need = (S_ISDIR(st->st_mode) ? 1 : 0) | 4 | (writable ? 2 : 0);
	unsigned m = st->st_mode;
	unsigned bits = st->st_uid == CC_HOST_NOBODY   ? (m >> 6) & 7
			: st->st_gid == CC_HOST_NOBODY ? (m >> 3) & 7
						       : m & 7;
	return (bits & need) == need;
}

/* The grant g, whose object is st, as a detached idmapped mount through
 * the user namespace us: 0, or -1 with the step that failed and errno. */
static int idmap_one(struct cc_grant *g, int us, const char **step)
{
	*step = "open_tree(OPEN_TREE_CLONE)";
	cc_autoclose int t =
		open_tree(g->fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (t < 0)
		return -1;
	*step = "mount_setattr(MOUNT_ATTR_IDMAP)";
	struct mount_attr a = { .attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID |
					    MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
				.userns_fd = (uint64_t)us };
	if (mount_setattr(t, "", AT_EMPTY_PATH, &a, sizeof(a)) < 0)
		return -1;
	*step = "fcntl(F_DUPFD_CLOEXEC)";
	int hi = fcntl(t, F_DUPFD_CLOEXEC, CC_GRANT_FD0 + 2 * CC_MAX_MOUNTS);
	if (hi < 0)
		return -1;
	close(g->fd);
	g->fd = hi;
	g->attach = true;
	return 0;
}

int cc_grants_idmap(struct cc_grants *gs, cc_error *err)
{
	if (geteuid() != 0)
		return 0;
	struct {
		uid_t uid;
		gid_t gid;
		int fd, e; /* fd -1: creating it failed with e */
	} ns[CC_MAX_MOUNTS];
	size_t n_ns = 0;
	int rc = 0;
	for (size_t i = 0; i < gs->n && rc == 0; i++) {
		struct cc_grant *g = &gs->g[i];
		struct stat st;
		if (fstat(g->fd, &st) < 0) {
			rc = cc_fail(err, CC_ERR_INTERNAL, "%s: fstat: %s", g->name,
				     strerror(errno));
			break;
		}
		size_t k = 0;
		while (k < n_ns && (ns[k].uid != st.st_uid || ns[k].gid != st.st_gid))
			k++;
		if (k == n_ns && k < CC_MAX_MOUNTS) {
			ns[k].uid = st.st_uid;
			ns[k].gid = st.st_gid;
			ns[k].fd = userns_for(st.st_uid, st.st_gid);
			ns[k].e = errno;
			n_ns++;
		}
		const char *step = USERNS_STEP;
		int e = ns[k].e;
		if (ns[k].fd >= 0) {
			if (idmap_one(g, ns[k].fd, &step) == 0)
				continue;
			e = errno;
		}
		if (nobody_may(&st, g->writable))
			continue; /* bound as before: nobody may use it as it is */
		char why[512];
		const char *other;
		explain(step, e, &st, why, sizeof(why), &other);
		bool dir = S_ISDIR(st.st_mode);
		rc = cc_fail(
			err, CC_ERR_INVALID_INPUT,
			"%s: the guest runs as host nobody (the supervisor runs as root) and may "
			"not %s %s (owner %u:%u, mode %04o), and an idmapped mount, which would "
			"let it act as the owner, failed: %s; chmod o+%s %s%s",
			g->name, g->writable ? "write" : "read", g->host, (unsigned)st.st_uid,
			(unsigned)st.st_gid, (unsigned)(st.st_mode & 07777), why,
			g->writable ? (dir ? "rwx" : "rw") : (dir ? "rx" : "r"), g->host, other);
	}
	for (size_t k = 0; k < n_ns; k++)
		if (ns[k].fd >= 0)
			close(ns[k].fd);
	return rc;
}
