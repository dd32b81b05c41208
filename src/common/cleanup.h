/* Cleanup attributes, as bubblewrap's utils.h and crun's cleanup_* do: a
 * variable declared with one is released when it goes out of scope, on
 * every return path, so error paths need no hand-written ladder.
 *
 *   cc_autofree char *s = NULL;          free(s)
 *   cc_autoclose int fd = -1;            close(fd) when fd >= 0
 *   cc_autoclose_pair int p[2] = { -1, -1 };   both ends (pipe2, socketpair)
 *   cc_autoreap pid_t pid = -1;          SIGKILL and waitpid when pid > 0
 *
 * Initialise every such variable (NULL, -1): the cleanup runs on a return
 * before the first assignment too. When ownership moves on (returned,
 * stored, handed to a function that keeps it), take it out with
 * cc_steal_pointer / cc_steal_fd / cc_steal_pid, which leave NULL or -1
 * behind. cc_closep also closes early (it leaves -1). The cleanups keep
 * errno, so a caller may still report it. Header only; GCC and clang. */
#ifndef CC_COMMON_CLEANUP_H
#define CC_COMMON_CLEANUP_H

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static inline void cc_freep(void *pp)
{
	free(*(void **)pp);
}

/* Close *fd when it is open and mark it closed (-1). */
static inline void cc_closep(int *fd)
{
	if (*fd >= 0) {
		int e = errno;
		close(*fd);
		errno = e;
		*fd = -1;
	}
}

static inline void cc_close_pairp(int (*p)[2])
{
	cc_closep(&(*p)[0]);
	cc_closep(&(*p)[1]);
}

/* Kill the child *pid (SIGKILL) and reap it: a child we gave up on never
 * outlives the error path nor stays a zombie. */
static inline void cc_reapp(pid_t *pid)
{
	if (*pid > 0) {
		int e = errno;
		kill(*pid, SIGKILL);
		while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
			;
		errno = e;
		*pid = -1;
	}
}

#define cc_autofree __attribute__((cleanup(cc_freep)))
#define cc_autoclose __attribute__((cleanup(cc_closep)))
#define cc_autoclose_pair __attribute__((cleanup(cc_close_pairp)))
#define cc_autoreap __attribute__((cleanup(cc_reapp)))

/* The value of *pp, which is left NULL: ownership moves to the caller. */
static inline void *cc_steal_pointer(void *pp)
{
	void **p = pp, *v = *p;
	*p = NULL;
	return v;
}

/* The descriptor *fd, which is left -1. */
static inline int cc_steal_fd(int *fd)
{
	int v = *fd;
	*fd = -1;
	return v;
}

/* The process *pid, which is left -1 (no longer killed at scope end). */
static inline pid_t cc_steal_pid(pid_t *pid)
{
	pid_t v = *pid;
	*pid = -1;
	return v;
}

#endif
