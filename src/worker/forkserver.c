/* The fork server, worker side: a template confines itself once, starts
 * its engine (imports preloaded), then forks a session per request.
 *
 * The control channel is fd 3, the same socket a plain worker's frames
 * use. Requests and replies are fixed-size, not frames:
 *   supervisor -> template: one byte 'F' carrying two descriptors
 *     (SCM_RIGHTS): the new session's end of its own channel, and the
 *     write end of the session's status pipe;
 *   template -> supervisor: a 4-byte native-endian int32, the session's
 *     pid in the template's pid namespace (> 0) carrying its pidfd, or
 *     -errno (no descriptor) when fork or pidfd_open failed.
 * When the template has reaped a session it writes the session's wait
 * status (a native-endian int32, as waitpid's) into that session's status
 * pipe and closes it: the supervisor reads the status there, after the
 * reap by construction, where a pidfd's exit record could be asked for
 * before it (no timing window). The session never holds the pipe.
 * End of file on the channel ends the template, and with it (pid 1 of the
 * pid namespace) every session it forked.
 *
 * A session (cc_session_fork: pid 1 of a pid namespace of its own, the
 * template's child): the request's socket becomes its fd 3, it adds its own
 * layers (cc_confine_session: a nested Landlock domain, the engine's
 * seccomp filter stacked on the template's), lets the engine renew what
 * fork() shares (after_fork_child), and from there is an ordinary worker:
 * it sends "ready" and serves frames (main.c). */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "confine.h"
#include "error.h"
#include "fdpass.h"
#include "forkserver.h"
#include "hygiene.h"
#include "seccomp_filter.h"
#include "worker_internal.h"
#include "worker_exit.h"

static struct cc_bpf session_filter;
static struct cc_confine_report template_report;

unsigned cc_worker_max_sessions = CC_FORK_MAX_SESSIONS_DEFAULT;

/* Live sessions, by pidfd: polled beside the channel (polled[0]) so an
 * ended one is reaped at once (its wait status then goes down its status
 * pipe) and stops counting against RLIMIT_NPROC. 1 + max_sessions
 * entries each, allocated once by cc_template_start. */
static struct pollfd *polled;
static pid_t *polled_pid;
static int *polled_status;
static size_t n_polled = 1;

int cc_template_start(cc_sandbox_mode mode, const char *preload, struct cc_confine_report *rep,
		      const char **version, cc_error *err)
{
	size_t n = (size_t)cc_worker_max_sessions + 1;
	polled = calloc(n, sizeof(*polled));
	polled_pid = calloc(n, sizeof(*polled_pid));
	polled_status = calloc(n, sizeof(*polled_status));
	if (!polled || !polled_pid || !polled_status)
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory for %u sessions' bookkeeping",
			       cc_worker_max_sessions);
	if (cc_confine_template(mode, &cc_worker_limits, rep, &session_filter, err) < 0)
		return -1;
	if (cc_worker_engine->init(version, err) < 0)
		return -1;
	if (cc_worker_engine->preload && cc_worker_engine->preload(preload ? preload : "", err) < 0)
		return -1;
	/* The probe session is forked from the finished template, so it is
	 * what every later session will be. */
	if (mode != CC_SANDBOX_OFF && cc_confine_probe_session(rep, &session_filter, err) < 0)
		return -1;
	template_report = *rep;
	return 0;
}

/* One request: 1 with its two descriptors in fds (-1 each when the
 * kernel dropped them: EMFILE), 0 at end of file; anything else the
 * supervisor never sends ends the template. */
static int recv_request(int fds[2])
{
	char byte = 0;
	int n = 0, truncated = 0;
	ssize_t r;
	fds[0] = fds[1] = -1;
	do
		r = cc_fd_recv(CC_CHANNEL_FD, &byte, 1, fds, 2, &n, &truncated, 0);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return 0;
	if (r == 1 && byte == 'F' && (n == 2 || truncated)) {
		if (n < 2) { /* EMFILE: answered as such */
			if (n == 1)
				close(fds[0]);
			fds[0] = fds[1] = -1;
		}
		return 1;
	}
	_exit(CC_WORKER_EXIT_BAD_FRAME);
}

static void send_reply(int32_t pid, int pidfd)
{
	if (cc_fd_send(CC_CHANNEL_FD, &pid, sizeof(pid), pidfd, 0) != (ssize_t)sizeof(pid))
		_exit(CC_WORKER_EXIT_CLOSED); /* the supervisor is gone */
}

/* In the child: become the session. */
static int session_begin(int fd, cc_error *err)
{
	if (dup2(fd, CC_CHANNEL_FD) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "dup2 of the session channel: %s",
			       strerror(errno));
	close(fd);
	if (cc_confine_session(&template_report, &session_filter, err) < 0)
		return -1;
	cc_worker_n_preload_skipped = 0; /* the template's "ready" said it */
	cc_bpf_free(&session_filter);
	if (cc_worker_engine->after_fork_child && cc_worker_engine->after_fork_child(err) < 0)
		return -1;
	return 0;
}

static void reap_ended(void)
{
	for (size_t i = 1; i < n_polled;) {
		if (!polled[i].revents) {
			i++;
			continue;
		}
		int st = 0;
		pid_t r;
		do
			r = waitpid(polled_pid[i], &st, 0);
		while (r < 0 && errno == EINTR);
		int32_t v = r == polled_pid[i] ? st : -1;
		/* 4 bytes into an empty pipe that only we write: never blocks;
		 * a supervisor that closed its end gets nothing (EPIPE;
		 * SIGPIPE is ignored, hygiene.c). */
		ssize_t w = write(polled_status[i], &v, sizeof(v));
		(void)w;
		close(polled_status[i]);
		close(polled[i].fd);
		n_polled--;
		polled[i] = polled[n_polled];
		polled_pid[i] = polled_pid[n_polled];
		polled_status[i] = polled_status[n_polled];
	}
}

/* In a new session: nothing of the template's bookkeeping stays open. */
static void close_inherited(int status_fd)
{
	close(status_fd);
	for (size_t i = 1; i < n_polled; i++) {
		close(polled[i].fd);
		close(polled_status[i]);
	}
}

int cc_template_serve(cc_error *err)
{
	/* The supervisor sends nothing between init and our "ready": read-
	 * ahead holding bytes here would be a request read the wrong way. */
	if (cc_worker_input_buffered())
		_exit(CC_WORKER_EXIT_BAD_FRAME);
	polled[0] = (struct pollfd){ CC_CHANNEL_FD, POLLIN, 0 };
	for (;;) {
		for (size_t i = 0; i < n_polled; i++)
			polled[i].revents = 0;
		int r = poll(polled, n_polled, -1);
		if (r < 0 && errno != EINTR)
			_exit(CC_WORKER_EXIT_BAD_FRAME);
		if (r <= 0)
			continue;
		reap_ended();
		if (!polled[0].revents)
			continue;
		int fds[2];
		if (recv_request(fds) == 0)
			_exit(CC_WORKER_EXIT_CLOSED);
		if (fds[0] < 0) {
			send_reply(-EMFILE, -1);
			continue;
		}
		if (cc_worker_engine->before_fork)
			cc_worker_engine->before_fork();
		/* -ENOSPC: max_sessions live; -EAGAIN from fork:
		 * RLIMIT_NPROC of the template's user namespace */
		pid_t pid = n_polled <= cc_worker_max_sessions ? cc_session_fork(&template_report)
							       : -ENOSPC;
		if (pid == 0) {
			close_inherited(fds[1]);
			return session_begin(fds[0], err);
		}
		if (cc_worker_engine->after_fork_parent)
			cc_worker_engine->after_fork_parent();
		close(fds[0]);
		int e = pid < 0 ? -pid : 0;
		int pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
		if (pid > 0 && pidfd < 0)
			e = errno; /* the session waits for a supervisor that gave up: its
				      channel's other end closes and it exits; reaped below */
		send_reply(pidfd >= 0 ? (int32_t)pid : -(int32_t)e, pidfd);
		if (pidfd >= 0) {
			polled[n_polled] = (struct pollfd){ pidfd, POLLIN, 0 };
			polled_status[n_polled] = fds[1];
			polled_pid[n_polled++] = pid;
		} else {
			close(fds[1]);
		}
	}
}
