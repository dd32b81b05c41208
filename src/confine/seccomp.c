/* Step 6 of DESIGN.md section 3: the seccomp-bpf allow-list, compiled
 * with libseccomp from the tables in src/common/seccomp_policy.c.
 *
 * Two filters when the worker has a monitor (namespaces applied):
 *   - the notify filter, installed first with a listener the monitor
 *     holds: kill-list calls go to the monitor (SECCOMP_RET_USER_NOTIF),
 *     which kills the worker and exits with a status naming the call.
 *     Nothing in the worker can intercept that: the decision is the
 *     monitor's, outside the guest's pid namespace and address space;
 *     everything else is allowed by this filter;
 *   - the main filter, below. Its kill-list action is SECCOMP_RET_TRACE,
 *     which the notify filter's USER_NOTIF outranks (the kernel takes the
 *     highest-precedence action of all filters), and which alone answers
 *     ENOSYS (no tracer can attach: ptrace is on the kill-list).
 * Without a monitor there is only the main filter, whose kill-list action
 * is then SECCOMP_RET_KILL_PROCESS (the report says SIGSYS, without the
 * call's name).
 *
 * The main filter's actions, in the order it decides them:
 *   - a foreign architecture or an x32 number: kill the process (libseccomp
 *     checks the audit arch, and on x86_64 sends numbers with the x32 bit
 *     to the bad-arch action);
 *   - the kill-list: as above;
 *   - clone3: ENOSYS, so glibc falls back to clone, whose flags are checked;
 *   - allow-list: allowed, some only when their argument check passes;
 *   - everything else: EPERM. */
#include "seccomp_filter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <termios.h>
#include <unistd.h>

#include <seccomp.h>

#include "error.h"
#include "seccomp_policy.h"

/* ---- argument checks for the CC_SC_ARGS rules ---- */

/* Flags a thread-creating clone must carry, and flags it must not: any
 * namespace, or a new process sharing nothing. A thread shares the
 * descriptor table too (glibc's always does): one of its own would give
 * every thread another RLIMIT_NOFILE of descriptors. */
#define CLONE_MUST (CLONE_THREAD | CLONE_VM | CLONE_SIGHAND | CLONE_FILES)
#define CLONE_CHECKED                                                                              \
	(CLONE_MUST | CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |   \
	 CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_PARENT | CLONE_VFORK)

/* The flags glibc's fork() passes to clone on x86_64 (sysdeps/unix/sysv/
 * linux/arch-fork.h): a new process, nothing shared, no namespace. */
#define CLONE_FORK (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD)
/* A fork server's session (src/confine/confine.c, cc_session_fork): a new
 * process in a user and a pid namespace of its own, nothing shared. */
#define CLONE_SESSION (SIGCHLD | CLONE_NEWUSER | CLONE_NEWPID)

/* The last fixed clock id (CLOCK_TAI, Linux's include/uapi/linux/time.h). */
#define CC_CLOCK_FIXED_MAX 11

static int add_checked(scmp_filter_ctx ctx, const struct cc_sc_rule *ru, int nr)
{
	uint32_t A = SCMP_ACT_ALLOW;
	const char *name = ru->name;
	if (!strcmp(name, "clone") && ru->engines == CC_SC_FORK) {
		/* a session in its own user and pid namespaces (cc_session_fork),
		 * or fork() */
		int r = seccomp_rule_add(ctx, A, nr, 1, SCMP_A0(SCMP_CMP_EQ, CLONE_SESSION));
		return r ? r : seccomp_rule_add(ctx, A, nr, 1, SCMP_A0(SCMP_CMP_EQ, CLONE_FORK));
	}
	if (!strcmp(name, "clone") && ru->engines == CC_SC_FORK_SCRATCH)
		return seccomp_rule_add(ctx, A, nr, 1,
					SCMP_A0(SCMP_CMP_EQ, CLONE_SESSION | CLONE_NEWNS));
	if (!strcmp(name, "prctl"))
		return seccomp_rule_add(ctx, A, nr, 1, SCMP_A0(SCMP_CMP_EQ, PR_SET_DUMPABLE));
	if (!strcmp(name, "mount")) /* a new filesystem only: never bind, remount, move */
		return seccomp_rule_add(ctx, A, nr, 1,
					SCMP_A3(SCMP_CMP_EQ, MS_NOSUID | MS_NODEV | MS_NOEXEC));
	/* Calls that take a pid or a clock id (a negative id is a CPU clock
	 * built from a pid: ((~pid) << 3) | type): only the caller itself, and
	 * only the fixed clocks (REALTIME .. TAI; PROCESS_ and
	 * THREAD_CPUTIME_ID are its own). Compared on all 64 bits (unsigned),
	 * so a negative id, sign-extended or with garbage above it, is refused.
	 * pid namespaces already hide other processes; this holds without. */
	if (!strcmp(name, "sched_getaffinity"))
		return seccomp_rule_add(ctx, A, nr, 1, SCMP_A0(SCMP_CMP_EQ, 0));
	if (!strcmp(name, "clock_gettime") || !strcmp(name, "clock_nanosleep") ||
	    !strcmp(name, "timer_create"))
		return seccomp_rule_add(ctx, A, nr, 1, SCMP_A0(SCMP_CMP_LE, CC_CLOCK_FIXED_MAX));
	if (!strcmp(name, "seccomp")) /* install a filter; no listener, no TSYNC */
		return seccomp_rule_add(ctx, A, nr, 2,
					SCMP_A0(SCMP_CMP_EQ, SECCOMP_SET_MODE_FILTER),
					SCMP_A1(SCMP_CMP_EQ, 0));
	if (!strcmp(name, "clone"))
		return seccomp_rule_add(ctx, A, nr, 1,
					SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_CHECKED, CLONE_MUST));
	if (!strcmp(name, "ioctl")) {
		/* 64-bit compares: a command with garbage in the upper half
		 * (which the kernel would truncate) matches nothing: EPERM. */
		int r = seccomp_rule_add(ctx, A, nr, 1, SCMP_A1(SCMP_CMP_EQ, TCGETS));
		return r ? r : seccomp_rule_add(ctx, A, nr, 1, SCMP_A1(SCMP_CMP_EQ, FIONBIO));
	}
	if (!strcmp(name, "sendto")) /* send(): no destination address, no OOB */
		return seccomp_rule_add(ctx, A, nr, 2, SCMP_A3(SCMP_CMP_MASKED_EQ, MSG_OOB, 0),
					SCMP_A4(SCMP_CMP_EQ, 0));
	if (!strcmp(name, "recvfrom")) /* MSG_OOB: the primitive of CVE-2025-38236 */
		return seccomp_rule_add(ctx, A, nr, 1, SCMP_A3(SCMP_CMP_MASKED_EQ, MSG_OOB, 0));
	if (!strcmp(name, "socketpair")) /* AF_UNIX, SOCK_STREAM (+ NONBLOCK/CLOEXEC) */
		return seccomp_rule_add(ctx, A, nr, 2, SCMP_A0(SCMP_CMP_EQ, AF_UNIX),
					SCMP_A1(SCMP_CMP_MASKED_EQ,
						~(uint64_t)(SOCK_NONBLOCK | SOCK_CLOEXEC),
						SOCK_STREAM));
	if (!strcmp(name, "futex")) {
		/* The operations glibc's locks, condition variables and
		 * semaphores use, and only private ones: a shared futex on a
		 * file mapping (libpython's text) is keyed by the file, so any
		 * other sandbox mapping it could wake it, a covert channel.
		 * The clock flag may be set. Not the priority-inheritance
		 * operations, nor anything newer. */
		static const int ops[] = { FUTEX_WAIT,	      FUTEX_WAKE,    FUTEX_REQUEUE,
					   FUTEX_CMP_REQUEUE, FUTEX_WAKE_OP, FUTEX_WAIT_BITSET,
					   FUTEX_WAKE_BITSET };
		const uint64_t mask = ~(uint64_t)FUTEX_CLOCK_REALTIME;
		int r = 0;
		for (size_t i = 0; !r && i < sizeof(ops) / sizeof(ops[0]); i++)
			r = seccomp_rule_add(ctx, A, nr, 1,
					     SCMP_A1(SCMP_CMP_MASKED_EQ, mask,
						     (uint64_t)ops[i] | FUTEX_PRIVATE_FLAG));
		/* A shared wait answers EAGAIN ("the word changed, look
		 * again") instead of sleeping: pthread_join waits shared on
		 * the thread's tid (the kernel's exit wake-up is shared), and
		 * glibc's join loop re-reads the tid and retries, so a join
		 * spins rather than aborts, and nothing can wake anyone. */
		for (int w = 0; !r && w < 2; w++)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAGAIN), nr, 1,
					     SCMP_A1(SCMP_CMP_MASKED_EQ, mask,
						     w ? FUTEX_WAIT_BITSET : FUTEX_WAIT));
		return r;
	}
	if (!strcmp(name, "fcntl")) {
		static const int cmds[] = { F_GETFD,	     F_SETFD,	  F_GETFL,     F_SETFL,
					    F_DUPFD_CLOEXEC, F_GETLK,	  F_SETLK,     F_SETLKW,
					    F_OFD_GETLK,     F_OFD_SETLK, F_OFD_SETLKW };
		int r = 0;
		for (size_t i = 0; !r && i < sizeof(cmds) / sizeof(cmds[0]); i++)
			r = seccomp_rule_add(ctx, A, nr, 1,
					     SCMP_A1(SCMP_CMP_EQ, (uint64_t)cmds[i]));
		return r;
	}
	/* Never a set-user-ID or set-group-ID mode: in an idmapped grant the
	 * guest is the files' owner on disk (src/lib/idmap.c), root for a
	 * root-owned folder, so chmod 04755 would leave a set-user-ID-root
	 * program in the host's tree. The bits are compared masked, so
	 * garbage above mode_t's 32 bits changes nothing (the kernel reads
	 * 16). openat's mode counts only with O_CREAT or O_TMPFILE; glibc
	 * passes 0 otherwise. */
	if (!strcmp(name, "chmod") || !strcmp(name, "fchmod"))
		return seccomp_rule_add(ctx, A, nr, 1,
					SCMP_A1(SCMP_CMP_MASKED_EQ, S_ISUID | S_ISGID, 0));
	if (!strcmp(name, "openat"))
		return seccomp_rule_add(ctx, A, nr, 1,
					SCMP_A3(SCMP_CMP_MASKED_EQ, S_ISUID | S_ISGID, 0));
	if (!strcmp(name, "prlimit64"))
		return seccomp_rule_add(ctx, A, nr, 2, SCMP_A0(SCMP_CMP_EQ, 0),
					SCMP_A2(SCMP_CMP_EQ, 0));
	if (!strcmp(name, "rt_sigaction")) {
		/* Any signal but SIGSYS (31): 1..30, 32..63, 64. Compared on
		 * all 64 bits, so SIGSYS with upper-half garbage is refused. */
		_Static_assert(SIGSYS == 31, "the ranges below assume SIGSYS is 31");
		int r = seccomp_rule_add(ctx, A, nr, 1, SCMP_A0(SCMP_CMP_LT, 31));
		if (!r)
			r = seccomp_rule_add(ctx, A, nr, 1,
					     SCMP_A0(SCMP_CMP_MASKED_EQ, ~(uint64_t)0x1f, 0x20));
		return r ? r : seccomp_rule_add(ctx, A, nr, 1, SCMP_A0(SCMP_CMP_EQ, 64));
	}
	return -EINVAL; /* an ARGS rule without a check: refuse to build */
}

/* Whether a template (engine with CC_SC_FORK) has an allow rule for a
 * kill-list name: that call is then allowed with its argument check and
 * answers EPERM otherwise, instead of killing. Sessions stack the engine's
 * own filter, where it kills again. */
static bool fork_rule(unsigned engine, const char *name)
{
	if (!(engine & CC_SC_FORK))
		return false;
	for (size_t i = 0; i < cc_sc_allow_len; i++)
		if ((cc_sc_allow[i].engines == CC_SC_FORK ||
		     cc_sc_allow[i].engines == CC_SC_FORK_SCRATCH) &&
		    (cc_sc_allow[i].engines & engine) && !strcmp(cc_sc_allow[i].name, name))
			return true;
	return false;
}

static int build(unsigned engine, uint32_t deny_action, enum cc_kill_how kill, scmp_filter_ctx *out,
		 int *allowed, cc_error *err)
{
	if (engine == CC_SC_NOTIFY_ONLY)
		deny_action = SCMP_ACT_ALLOW;
	scmp_filter_ctx ctx = seccomp_init(deny_action);
	if (!ctx)
		return cc_fail(err, CC_ERR_INTERNAL, "seccomp_init failed");
	int r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	const char *what = "bad-arch action";
	/* A binary tree of system call numbers instead of a linear scan: a
	 * few comparisons per call rather than one per rule. */
	if (!r) {
		what = "binary-tree optimisation";
		r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	}
	*allowed = 0;
	for (size_t i = 0; !r && engine != CC_SC_NOTIFY_ONLY && i < cc_sc_allow_len; i++) {
		const struct cc_sc_rule *ru = &cc_sc_allow[i];
		if (!(ru->engines & engine))
			continue;
		what = ru->name;
		int nr = seccomp_syscall_resolve_name(ru->name);
		if (nr == __NR_SCMP_ERROR) {
			r = -ENOENT;
			break;
		}
		r = ru->how == CC_SC_ARGS ? add_checked(ctx, ru, nr)
					  : seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
		(*allowed)++;
	}
	for (size_t i = 0; !r && i < cc_sc_kill_len; i++) {
		what = cc_sc_kill[i];
		if (engine != CC_SC_NOTIFY_ONLY && fork_rule(engine, cc_sc_kill[i]))
			continue; /* the template's argument-checked rule instead */
		int nr = seccomp_syscall_resolve_name(cc_sc_kill[i]);
		uint32_t act = engine == CC_SC_NOTIFY_ONLY  ? SCMP_ACT_NOTIFY
			       : kill == CC_KILL_BY_MONITOR ? SCMP_ACT_TRACE((uint16_t)i)
							    : SCMP_ACT_KILL_PROCESS;
		r = nr == __NR_SCMP_ERROR ? -ENOENT : seccomp_rule_add(ctx, act, nr, 0);
	}
	if (!r && engine != CC_SC_NOTIFY_ONLY) {
		what = "clone3";
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	}
	if (r) {
		seccomp_release(ctx);
		return cc_fail(err, CC_ERR_INTERNAL, "seccomp policy: rule for %s: %s", what,
			       strerror(-r));
	}
	*out = ctx;
	return 0;
}

int cc_seccomp_compile(unsigned engine, int deny_errno, enum cc_kill_how kill, struct cc_bpf *bpf,
		       cc_error *err)
{
	scmp_filter_ctx ctx = NULL;
	memset(bpf, 0, sizeof(*bpf));
	if (build(engine, SCMP_ACT_ERRNO(deny_errno), kill, &ctx, &bpf->allowed, err) < 0)
		return -1;
	/* libseccomp 2.5 exports only to a file descriptor: a pipe, sized
	 * generously (the filters here are a few KiB). */
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		seccomp_release(ctx);
		return cc_fail(err, CC_ERR_INTERNAL, "seccomp export: pipe: %s", strerror(errno));
	}
	fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
	int r = seccomp_export_bpf(ctx, p[1]);
	seccomp_release(ctx);
	close(p[1]);
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	while (!r && buf) {
		ssize_t k = read(p[0], buf + n, cap - n);
		if (k <= 0)
			break;
		n += (size_t)k;
		if (n == cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	close(p[0]);
	if (r || !buf || n == 0 || n % sizeof(struct sock_filter)) {
		free(buf);
		return cc_fail(err, CC_ERR_INTERNAL, "seccomp export failed");
	}
	bpf->prog.len = (unsigned short)(n / sizeof(struct sock_filter));
	bpf->prog.filter = (struct sock_filter *)buf;
	return 0;
}

void cc_bpf_free(struct cc_bpf *bpf)
{
	free(bpf->prog.filter);
	bpf->prog.filter = NULL;
}

int cc_seccomp_available(cc_error *err)
{
	/* A NULL program: EFAULT from a kernel with filters; ENOSYS without
	 * CONFIG_SECCOMP, EINVAL without CONFIG_SECCOMP_FILTER. */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, NULL) < 0 && errno == EFAULT)
		return 0;
	return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
		       "seccomp filters are not available (%s); a kernel built with "
		       "CONFIG_SECCOMP_FILTER has them",
		       strerror(errno));
}

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

int cc_seccomp_install(const struct cc_bpf *bpf, bool listener, cc_error *err)
{
	/* With a listener: once the monitor has received a notification, a
	 * signal can no longer interrupt the call (Linux 5.19+; older kernels
	 * refuse the flag and get the plain listener). */
	unsigned long flags =
		listener ? SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
			 : 0;
	long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &bpf->prog);
	if (r < 0 && listener && errno == EINVAL)
		r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			    &bpf->prog);
	if (r < 0)
		return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE, "seccomp: %s", strerror(errno));
	return listener ? (int)r : 0;
}
