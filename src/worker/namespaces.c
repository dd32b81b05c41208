/* Step 3 of DESIGN.md section 3: namespaces and a minimal read-only root,
 * through raw system calls (no packaged library; the steps are the ones
 * bubblewrap takes, see its bubblewrap.c, and user_namespaces(7),
 * pid_namespaces(7), pivot_root(2)).
 *
 * The worker unshares user, mount, pid, net, ipc, uts and cgroup
 * namespaces at once, maps its own uid and gid, and forks: the child is
 * pid 1 of the new pid namespace and goes on to run the engine; the
 * parent stays behind as a monitor that only waits, so the supervisor's
 * pidfd and exit status keep meaning "the worker". When pid 1 dies the
 * kernel kills everything else in the namespace, which is what closes the
 * escape of a guest child that left the process group. */
#include "namespaces.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "hygiene.h"

/* Inside the namespace the guest is an ordinary user (not 0): library
 * code that changes behaviour for root never sees root. */
#define CC_NS_ID 1000

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

static int map_ids(uid_t uid, gid_t gid, cc_error *err)
{
	char line[64];
	/* setgroups must be denied before an unprivileged gid_map. */
	if (write_file("/proc/self/setgroups", "deny") < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "setgroups deny: %s", strerror(errno));
	snprintf(line, sizeof(line), "%d %u 1", CC_NS_ID, (unsigned)uid);
	if (write_file("/proc/self/uid_map", line) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "uid_map: %s", strerror(errno));
	snprintf(line, sizeof(line), "%d %u 1", CC_NS_ID, (unsigned)gid);
	if (write_file("/proc/self/gid_map", line) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "gid_map: %s", strerror(errno));
	return 0;
}

/* ---- the monitor: the original worker process after the fork ---- */

/* A hand-written filter for the monitor: it needs wait4, kill (itself,
 * to end the way its child ended) and exit_group. Anything else, or a
 * foreign architecture, kills it. */
static void monitor_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_wait4, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_kill, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static __attribute__((noreturn)) void monitor(pid_t child)
{
	pid_t self = getpid();
	/* The guest's channel is the child's; the monitor holds nothing. */
	close(CC_CHANNEL_FD);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGXFSZ, SIG_DFL);
	monitor_filter();
	int st;
	while (syscall(SYS_wait4, child, &st, 0, NULL) < 0)
		if (errno != EINTR)
			syscall(SYS_exit_group, 70);
	if (WIFSIGNALED(st)) {
		/* End the same way, so the supervisor's report is the child's. */
		syscall(SYS_kill, self, WTERMSIG(st));
		syscall(SYS_exit_group, 128 + WTERMSIG(st));
	}
	syscall(SYS_exit_group, WEXITSTATUS(st));
	__builtin_unreachable();
}

/* ---- the minimal root ---- */

static int mkdirs(char *path)
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
	if (mkdirs(dst) < 0)
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

static int build_root(const struct cc_fs_policy *pol, cc_error *err)
{
	/* Nothing we mount may propagate back to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "making mounts private: %s", strerror(errno));
	if (mount("codecage", CC_NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV,
		  "mode=0755,size=64k,nr_inodes=128") < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "tmpfs root: %s", strerror(errno));
	for (size_t i = 0; i < pol->n_read_only; i++)
		if (bind_ro(pol->read_only[i], false, err) < 0)
			return -1;
	for (size_t i = 0; i < pol->n_devices; i++)
		if (bind_ro(pol->devices[i], true, err) < 0)
			return -1;
	if (pol->n_read_only) {
		/* Merged /usr: ld.so.cache names /lib/... paths. */
		if (symlink("usr/lib", CC_NEWROOT "/lib") < 0 && errno != EEXIST)
			return cc_fail(err, CC_ERR_INTERNAL, "symlink /lib: %s", strerror(errno));
	}
	if (pol->scratch) {
		char dst[256], opts[96];
		snprintf(dst, sizeof(dst), "%s%s", CC_NEWROOT, pol->scratch);
		snprintf(opts, sizeof(opts), "mode=1777,size=%llu,nr_inodes=1024",
			 (unsigned long long)pol->scratch_bytes);
		if (mkdir(dst, 01777) < 0 ||
		    mount("scratch", dst, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0)
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

int cc_ns_enter(const struct cc_fs_policy *pol, rlim_t nproc, cc_error *err)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (unshare(NS_FLAGS) < 0)
		return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
			       "namespaces: unshare(user, mount, pid, net, ipc, uts, cgroup): %s "
			       "(is kernel.unprivileged_userns_clone or "
			       "user.max_user_namespaces set to 0?)",
			       strerror(errno));
	if (map_ids(uid, gid, err) < 0)
		return -1;

	/* A pipe the monitor never writes: its end closing tells the child
	 * its parent died before PR_SET_PDEATHSIG took hold. */
	int alive[2];
	if (pipe2(alive, O_CLOEXEC) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "pipe: %s", strerror(errno));
	pid_t child = fork();
	if (child < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "fork into the pid namespace: %s",
			       strerror(errno));
	if (child > 0) {
		close(alive[0]);
		monitor(child);
	}
	close(alive[1]);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(70);
	struct pollfd p = { .fd = alive[0], .events = POLLIN };
	if (poll(&p, 1, 0) != 0)
		_exit(70); /* the monitor is gone: so is the supervisor's hold on us */
	close(alive[0]);

	if (build_root(pol, err) < 0)
		return -1;
	/* A hostname that says where the guest is. */
	sethostname("codecage", 8);

	/* Processes and threads of this user in this namespace: the worker's
	 * threads plus the monitor. Set after the fork (the count is per user
	 * namespace, and the monitor and child are in it). Without
	 * CAP_SYS_RESOURCE in the initial namespace this binds even when the
	 * host runs as root. */
	struct rlimit rl = { nproc, nproc };
	if (setrlimit(RLIMIT_NPROC, &rl) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "setrlimit(NPROC): %s", strerror(errno));
	return 0;
}
