/* The monitor: the worker's original process, left in the host's
 * namespaces when its child entered new ones (namespaces.c). It holds
 * the seccomp user-notification listener of the child's notify filter
 * (seccomp.c) and is what kills the worker for a kill-list call, exiting
 * with CC_SC_KILL_EXIT_BASE + the call's index so the supervisor can name
 * it. The guest cannot reach it: another pid namespace, another address
 * space, no ptrace. Otherwise it waits for its child and ends the way the
 * child ended, so the supervisor's pidfd and exit status describe the
 * worker.
 *
 * Conversation with the child over a socketpair (all before guest code):
 *   child -> monitor: one byte, with the listener fd as SCM_RIGHTS, or
 *                     without (no seccomp);
 *   the monitor answers kill-list calls with EPERM until...
 *   child -> monitor: 'a' (the self-probes are done: arm);
 *   monitor -> child: 'k'. From then on a kill-list call kills. */
#include "monitor.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <seccomp.h>

#include "error.h"
#include "hygiene.h"
#include "fdpass.h"
#include "seccomp_policy.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int cc_send_fd(int sock, int fd)
{
	char byte = fd >= 0 ? 'L' : '-';
	return cc_fd_send(sock, &byte, 1, fd, 0) == 1 ? 0 : -1;
}

int cc_recv_fd(int sock)
{
	char byte;
	int fd = -1, n = 0, truncated = 0;
	ssize_t r;
	do
		r = cc_fd_recv(sock, &byte, 1, &fd, 1, &n, &truncated, 0);
	while (r < 0 && errno == EINTR);
	if (r == 1 && n == 1)
		return fd;
	if (n == 1)
		close(fd);
	return -1;
}

/* ---- the monitor side ---- */

/* What the monitor may do once set up: wait, poll, talk to the child and
 * the listener, kill, end. Anything else, or a foreign architecture,
 * kills it. */
static void monitor_filter(void)
{
#define ALLOW_NR(nr)                                                                               \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),                                           \
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		ALLOW_NR(__NR_wait4),
		ALLOW_NR(__NR_poll),
		ALLOW_NR(__NR_read),
		ALLOW_NR(__NR_write),
		ALLOW_NR(__NR_ioctl),
		ALLOW_NR(__NR_kill),
		ALLOW_NR(__NR_exit_group),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
#undef ALLOW_NR
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static __attribute__((noreturn)) void relay(pid_t child, pid_t self)
{
	int st;
	while (syscall(SYS_wait4, child, &st, 0, NULL) < 0)
		if (errno != EINTR)
			syscall(SYS_exit_group, 70);
	if (WIFSIGNALED(st)) {
		/* End the same way, so the supervisor's report is the child's. */
		syscall(SYS_kill, self, WTERMSIG(st));
		syscall(SYS_exit_group, 128 + WTERMSIG(st));
	}
	/* Statuses that name a kill-list call are the monitor's to give. */
	int code = WEXITSTATUS(st);
	syscall(SYS_exit_group, code >= CC_SC_KILL_EXIT_BASE ? CC_SC_KILL_EXIT_BASE - 1 : code);
	__builtin_unreachable();
}

void cc_monitor_run(pid_t child, int sock)
{
	pid_t self = getpid();
	/* The guest's channel is the child's; the monitor holds nothing. */
	close(CC_CHANNEL_FD);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGXFSZ, SIG_DFL);
	int listener = cc_recv_fd(sock);
	int kill_nr[256 - CC_SC_KILL_EXIT_BASE];
	for (size_t i = 0; i < cc_sc_kill_len; i++)
		kill_nr[i] = seccomp_syscall_resolve_name(cc_sc_kill[i]);
	struct seccomp_notif_sizes sz = { 0 };
	void *notif = NULL;
	if (listener >= 0 && syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) == 0)
		notif = calloc(1, sz.seccomp_notif > sizeof(struct seccomp_notif)
					  ? sz.seccomp_notif
					  : sizeof(struct seccomp_notif));
	int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	/* It needs no privilege from here on: none kept. */
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	syscall(SYS_capset, &h, d);
	monitor_filter();
	if (pidfd < 0 || (listener >= 0 && !notif))
		relay(child, self); /* nothing to listen to, or no way to */

	bool armed = false;
	for (;;) {
		struct pollfd p[3] = { { pidfd, POLLIN, 0 },
				       { listener, POLLIN, 0 },
				       { sock, POLLIN, 0 } };
		if (poll(p, 3, -1) < 0)
			continue;
		if (p[0].revents)
			relay(child, self);
		if (p[1].revents & POLLIN) {
			size_t n = sz.seccomp_notif > sizeof(struct seccomp_notif)
					   ? sz.seccomp_notif
					   : sizeof(struct seccomp_notif);
			memset(notif, 0, n);
			if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, notif) < 0) {
				/* ENOENT: a signal interrupted the calling thread
				 * before we took the call (it got EINTR; the call
				 * did not run). Once armed, that still ends the
				 * worker, without the name. */
				if (armed && errno == ENOENT) {
					syscall(SYS_kill, child, SIGKILL);
					int st;
					syscall(SYS_wait4, child, &st, 0, NULL);
					syscall(SYS_kill, self, SIGSYS);
				}
				continue;
			}
			struct seccomp_notif *nt = notif;
			if (!armed) {
				/* a self-probe: the call is refused, the worker lives */
				struct seccomp_notif_resp r = { .id = nt->id, .error = -EPERM };
				ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &r);
				continue;
			}
			int code = 128 + SIGSYS;
			for (size_t i = 0; i < cc_sc_kill_len; i++)
				if (kill_nr[i] == nt->data.nr)
					code = CC_SC_KILL_EXIT_BASE + (int)i;
			syscall(SYS_kill, child, SIGKILL);
			int st;
			syscall(SYS_wait4, child, &st, 0, NULL);
			syscall(SYS_exit_group, code);
		} else if (p[1].revents) {
			listener = -1; /* the filter's users are gone */
		}
		if (p[2].revents) {
			char c = 0;
			if (read(sock, &c, 1) == 1 && c == 'a' && !armed) {
				armed = true;
				if (write(sock, "k", 1) != 1)
					relay(child, self);
			} else {
				sock = -1; /* closed, or spoke out of turn: stop listening */
			}
		}
	}
}

/* ---- the child side ---- */

static int to_monitor = -1;

void cc_monitor_attach(int sock)
{
	to_monitor = sock;
}

bool cc_monitor_present(void)
{
	return to_monitor >= 0;
}

int cc_monitor_give_listener(int fd, cc_error *err)
{
	if (cc_send_fd(to_monitor, fd) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "handing the seccomp listener over: %s",
			       strerror(errno));
	return 0;
}

int cc_monitor_arm(cc_error *err)
{
	char c = 0;
	if (write(to_monitor, "a", 1) != 1 || read(to_monitor, &c, 1) != 1 || c != 'k')
		return cc_fail(err, CC_ERR_INTERNAL, "the monitor did not arm");
	close(to_monitor);
	to_monitor = -1;
	return 0;
}
