/* Step 3 of DESIGN.md section 3: namespaces and a minimal read-only root,
 * through raw system calls (no packaged library; the steps are the ones
 * bubblewrap takes, see its bubblewrap.c, and user_namespaces(7),
 * pid_namespaces(7), pivot_root(2)).
 *
 * The worker clones a child into new user, mount, pid, net, ipc, uts and
 * cgroup namespaces. The child is pid 1 of the new pid namespace and goes
 * on to run the engine. The parent, still in the host's namespaces, writes
 * the child's uid and gid maps (a root host maps the guest to nobody, so
 * the guest never holds host uid 0 and RLIMIT_NPROC binds; another host
 * user maps its own ids), then stays behind as a monitor that only waits,
 * so the supervisor's pidfd and exit status keep meaning "the worker".
 * When pid 1 dies the kernel kills everything else in the namespace, which
 * is what closes the escape of a guest child that left the process group. */
#include "namespaces.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "error.h"
#include "frame.h"
#include "grants.h"
#include "hygiene.h"
#include "monitor.h"
#include "worker_exit.h"

/* Where the new root is assembled before pivot_root: a directory every
 * Linux host has, covered by a tmpfs in our mount namespace only. */
#define CC_NEWROOT "/tmp"

#define NS_FLAGS                                                                                   \
	(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | \
	 CLONE_NEWCGROUP)

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	int e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* The parent writes the child's maps (user_namespaces(7): a process in
 * the parent namespace may map its own ids, or any ids when it holds
 * CAP_SETUID/CAP_SETGID there, as root does). */
static int map_ids(pid_t child, cc_error *err)
{
	char path[64], line[64];
	bool root = geteuid() == 0;
	uid_t uid = root ? CC_HOST_NOBODY : geteuid();
	gid_t gid = root ? CC_HOST_NOBODY : getegid();
	/* Without CAP_SETGID, setgroups must be denied before a gid_map; root
	 * keeps it, so the child can drop the host's supplementary groups. */
	snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)child);
	if (!root && write_file(path, "deny") < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "setgroups deny: %s", strerror(errno));
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)child);
	snprintf(line, sizeof(line), "%d %u 1", CC_NS_ID, (unsigned)uid);
	if (write_file(path, line) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "uid_map: %s", strerror(errno));
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)child);
	snprintf(line, sizeof(line), "%d %u 1", CC_NS_ID, (unsigned)gid);
	if (write_file(path, line) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "gid_map: %s", strerror(errno));
	return 0;
}

/* In the child, once mapped: become uid/gid 1000 of the namespace (host
 * nobody on a root host), without the host's supplementary groups. The
 * capabilities of the namespace go with the uid change; step 4 makes sure
 * of it. */
static int become_guest(cc_error *err)
{
	if (setgroups(0, NULL) < 0 && errno != EPERM) /* EPERM: setgroups denied */
		return cc_fail(err, CC_ERR_INTERNAL, "setgroups: %s", strerror(errno));
	if (setresgid(CC_NS_ID, CC_NS_ID, CC_NS_ID) < 0 ||
	    setresuid(CC_NS_ID, CC_NS_ID, CC_NS_ID) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "becoming uid %d: %s", CC_NS_ID,
			       strerror(errno));
	return 0;
}

/* ---- the minimal root ---- */

int cc_ns_mkparents(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		int r = mkdir(path, 0755);
		*p = '/';
		if (r < 0 && errno != EEXIST)
			return -1;
	}
	return 0;
}

/* Bind host path src at the same place under the new root, read-only.
 * Flags the host mount carries (nosuid, nodev, noexec) are locked in a
 * user namespace and must be kept; nodev is added except for devices. */
static int bind_ro(const char *src, bool device, cc_error *err)
{
	struct stat st;
	if (stat(src, &st) < 0)
		return errno == ENOENT
			       ? 0
			       : cc_fail(err, CC_ERR_INTERNAL, "%s: %s", src, strerror(errno));
	char dst[512];
	if (snprintf(dst, sizeof(dst), "%s%s", CC_NEWROOT, src) >= (int)sizeof(dst))
		return cc_fail(err, CC_ERR_INTERNAL, "path too long: %s", src);
	if (cc_ns_mkparents(dst) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "mkdir for %s: %s", dst, strerror(errno));
	if (S_ISDIR(st.st_mode) ? mkdir(dst, 0755) < 0 && errno != EEXIST
				: mknod(dst, S_IFREG | 0644, 0) < 0 && errno != EEXIST)
		return cc_fail(err, CC_ERR_INTERNAL, "mountpoint %s: %s", dst, strerror(errno));
	if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "bind %s: %s", src, strerror(errno));
	struct statvfs sv;
	unsigned long fl = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID;
	if (statvfs(dst, &sv) == 0) {
		if (sv.f_flag & ST_NODEV)
			fl |= MS_NODEV;
		if (sv.f_flag & ST_NOEXEC)
			fl |= MS_NOEXEC;
	}
	if (!device)
		fl |= MS_NODEV;
	if (mount(NULL, dst, NULL, fl, NULL) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "read-only %s: %s", dst, strerror(errno));
	return 0;
}

int cc_ns_procfd = -1;

/* A procfs instance of our pid namespace, opened and detached at once;
 * subset=pid leaves out /proc/sys and the other system-wide files. */
static int open_procfs(cc_error *err)
{
	char dir[] = CC_NEWROOT "/.proc";
	if (mkdir(dir, 0700) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "procfs mount point: %s", strerror(errno));
	int r = mount("proc", dir, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "subset=pid");
	if (r < 0 && errno == EINVAL) /* before Linux 5.8 */
		r = mount("proc", dir, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	if (r < 0)
		return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
			       "a fork server's per-session scratch needs a procfs of its own to "
			       "map each session's ids: mount proc: %s",
			       strerror(errno));
	cc_ns_procfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int e = errno;
	if (umount2(dir, MNT_DETACH) < 0 || rmdir(dir) < 0 || cc_ns_procfd < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "procfs handle: %s",
			       strerror(cc_ns_procfd < 0 ? e : errno));
	return 0;
}

/* The engine's cache folder: an empty tmpfs, nosuid, nodev, noexec, whose
 * only inode is its root (nr_inodes=1), so nothing can be created in it
 * whatever Landlock says; its mode says writable, which is all
 * matplotlib asks of a config folder. */
static int mount_cache(const char *path, cc_error *err)
{
	char dst[256];
	snprintf(dst, sizeof(dst), "%s%s", CC_NEWROOT, path);
	if (cc_ns_mkparents(dst) < 0 || (mkdir(dst, 0700) < 0 && errno != EEXIST) ||
	    mount("cache", dst, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=0700,size=4k,nr_inodes=1") < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "cache %s: %s", path, strerror(errno));
	return 0;
}

static int build_root(const struct cc_fs_policy *pol, cc_error *err)
{
	/* Nothing we mount may propagate back to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "making mounts private: %s", strerror(errno));
	if (cc_grants_open(err) < 0)
		return -1;
	if (mount("codecage", CC_NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV,
		  "mode=0755,size=64k,nr_inodes=128") < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "tmpfs root: %s", strerror(errno));
	for (size_t i = 0; i < pol->n_read_only; i++)
		if (bind_ro(pol->read_only[i], false, err) < 0)
			return -1;
	if (pol->cache && mount_cache(pol->cache, err) < 0)
		return -1;
	for (size_t i = 0; i < pol->n_devices; i++)
		if (bind_ro(pol->devices[i], true, err) < 0)
			return -1;
	if (pol->n_read_only) {
		/* Merged /usr: ld.so.cache names /lib/... paths. */
		if (symlink("usr/lib", CC_NEWROOT "/lib") < 0 && errno != EEXIST)
			return cc_fail(err, CC_ERR_INTERNAL, "symlink /lib: %s", strerror(errno));
	}
	if (cc_grants_bind(CC_NEWROOT, pol->read_only, pol->n_read_only, pol->scratch, err) < 0)
		return -1;
	if (pol->session_scratch && open_procfs(err) < 0)
		return -1;
	if (pol->scratch) {
		char dst[256], opts[96];
		snprintf(dst, sizeof(dst), "%s%s", CC_NEWROOT, pol->scratch);
		/* A template's own is empty and read-only: each session covers
		 * it with a private one, so nothing written is ever shared. */
		snprintf(opts, sizeof(opts), "mode=1777,size=%llu,nr_inodes=%u",
			 pol->session_scratch ? 4096ull : (unsigned long long)pol->scratch_bytes,
			 pol->session_scratch ? 4 : CC_SCRATCH_INODES);
		unsigned long fl =
			MS_NOSUID | MS_NODEV | MS_NOEXEC | (pol->session_scratch ? MS_RDONLY : 0);
		if (mkdir(dst, 01777) < 0 || mount("scratch", dst, "tmpfs", fl, opts) < 0)
			return cc_fail(err, CC_ERR_INTERNAL, "scratch %s: %s", pol->scratch,
				       strerror(errno));
	}
	/* Swap roots; the old one is detached, so no path leads back to it. */
	if (chdir(CC_NEWROOT) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
	    umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "pivot_root: %s", strerror(errno));
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) <
	    0)
		return cc_fail(err, CC_ERR_INTERNAL, "read-only root: %s", strerror(errno));
	return 0;
}

/* The parent's side of the clone: write the child's maps once it says it
 * is ready, then become its monitor (never returns). ready, go and mon are
 * the parent's ends; on failure the child is killed and reaped. */
static int map_then_monitor(pid_t child_pid, int ready, int go, int mon, cc_error *err)
{
	cc_autoreap pid_t child = child_pid;
	char c;
	if (read(ready, &c, 1) != 1 || map_ids(child, err) < 0) {
		if (!err->message)
			cc_fail(err, CC_ERR_INTERNAL, "the namespace child died early");
		return -1;
	}
	if (write(go, "g", 1) != 1)
		return cc_fail(err, CC_ERR_INTERNAL, "namespace handshake: %s", strerror(errno));
	close(ready);	   /* cc_monitor_run never returns: no cleanup closes it again */
	cc_grants_close(); /* the monitor never needs them */
	/* go stays open for the monitor's life: its closing tells the child
	 * the monitor is gone. */
	cc_monitor_run(cc_steal_pid(&child), mon);
}

/* The child's side of the handshake: say it is ready on ready, wait for
 * the maps on go; exits CC_WORKER_EXIT_NO_MONITOR when the monitor is gone. */
static void wait_for_maps(int ready, int go)
{
	/* Die with the monitor. The handshake also fails if it is already
	 * gone (its end of go closes). A process that is not dumpable has a
	 * root-owned /proc/<pid>: an unprivileged parent could not write our
	 * maps. Dumpable only until they are written (no guest code exists
	 * yet). */
	char c;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || prctl(PR_SET_DUMPABLE, 1) < 0 ||
	    write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		_exit(CC_WORKER_EXIT_NO_MONITOR);
	prctl(PR_SET_DUMPABLE, 0);
}

int cc_ns_enter(const struct cc_fs_policy *pol, rlim_t nproc, cc_error *err)
{
	/* ready: the child tells the parent it may be mapped; go: the parent
	 * tells the child the maps are written (EOF means it failed or died);
	 * mon: the child and the monitor afterwards (monitor.c). Each side
	 * closes the other's ends; cleanup closes what is left on an error. */
	cc_autoclose_pair int ready[2] = { -1, -1 }, go[2] = { -1, -1 }, mon[2] = { -1, -1 };
	if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, mon) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "pipe: %s", strerror(errno));
	/* Like fork (no new stack): the child continues here. */
	pid_t child = (pid_t)syscall(SYS_clone, NS_FLAGS | SIGCHLD, NULL, NULL, NULL, NULL);
	if (child < 0)
		return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
			       "namespaces: clone(user, mount, pid, net, ipc, uts, cgroup): %s "
			       "(is kernel.unprivileged_userns_clone or "
			       "user.max_user_namespaces set to 0?)",
			       strerror(errno));
	if (child > 0) {
		cc_closep(&ready[1]);
		cc_closep(&go[0]);
		cc_closep(&mon[1]);
		/* on success go[1] stays open for the monitor's life */
		return map_then_monitor(child, ready[0], go[1], mon[0], err);
	}
	cc_closep(&ready[0]);
	cc_closep(&go[1]);
	cc_closep(&mon[0]);
	cc_monitor_attach(cc_steal_fd(&mon[1]));
	wait_for_maps(ready[1], go[0]);
	cc_closep(&ready[1]);

	/* Files the root assembly creates must belong to a mapped id (a root
	 * host's uid 0 is not mapped here): switch the filesystem ids now,
	 * which keeps CAP_SYS_ADMIN for the mounts. */
	setfsgid(CC_NS_ID);
	setfsuid(CC_NS_ID);
	if (build_root(pol, err) < 0)
		return -1;
	sethostname("codecage", 8); /* a hostname that says where the guest is */
	if (become_guest(err) < 0)
		return -1;
	/* A change of uid clears the parent-death signal and resets
	 * dumpable: set both again, then check the monitor did not die in
	 * between (its end of "go" would be closed). */
	struct pollfd p = { .fd = go[0], .events = POLLIN };
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || prctl(PR_SET_DUMPABLE, 0) < 0 ||
	    poll(&p, 1, 0) != 0)
		_exit(CC_WORKER_EXIT_NO_MONITOR);
	cc_closep(&go[0]);

	/* Processes and threads of the guest's uid in this user namespace (the
	 * count is per namespace, and the monitor is outside it). uid 0 is
	 * exempt from RLIMIT_NPROC, which is one more reason the guest's host
	 * uid is never 0. */
	struct rlimit rl = { nproc, nproc };
	if (setrlimit(RLIMIT_NPROC, &rl) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "setrlimit(NPROC): %s", strerror(errno));
	return 0;
}
