/* cleanup.h: each attribute releases on scope exit, keeps errno, and a
 * stolen value is left alone. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/* Opens a pipe into p with autoclose; steals the write end when asked. */
static int scoped_pipe(int *seen, bool steal)
{
	cc_autoclose_pair int p[2] = { -1, -1 };
	cr_assert_eq(pipe(p), 0);
	seen[0] = p[0];
	seen[1] = p[1];
	errno = EDOM; /* the cleanups must not change it */
	return steal ? cc_steal_fd(&p[1]) : -1;
}

Test(cleanup, autoclose_closes_both_ends_and_keeps_errno)
{
	int seen[2];
	cr_assert_eq(scoped_pipe(seen, false), -1);
	cr_assert_eq(errno, EDOM);
	cr_assert_not(fd_open(seen[0]));
	cr_assert_not(fd_open(seen[1]));
}

Test(cleanup, a_stolen_fd_stays_open)
{
	int seen[2];
	int w = scoped_pipe(seen, true);
	cr_assert_eq(w, seen[1]);
	cr_assert(fd_open(w));
	cr_assert_not(fd_open(seen[0]));
	close(w);
}

Test(cleanup, closep_closes_early_once)
{
	cc_autoclose int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	cr_assert(fd >= 0);
	int was = fd;
	cc_closep(&fd);
	cr_assert_eq(fd, -1);
	cr_assert_not(fd_open(was));
}

static char *scoped_copy(bool steal)
{
	cc_autofree char *s = strdup("kept");
	cc_autofree char *t = strdup("dropped"); /* freed: ASan's leak check sees it if not */
	(void)t;
	return steal ? cc_steal_pointer(&s) : NULL;
}

Test(cleanup, autofree_frees_and_steal_pointer_moves_ownership)
{
	cr_assert_null(scoped_copy(false));
	char *s = scoped_copy(true);
	cr_assert_str_eq(s, "kept");
	free(s);
}

static pid_t scoped_child(bool steal)
{
	cc_autoreap pid_t pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	cr_assert(pid > 0);
	return steal ? cc_steal_pid(&pid) : pid;
}

Test(cleanup, autoreap_kills_and_reaps_the_child)
{
	pid_t pid = scoped_child(false);
	/* reaped already: no such child of ours any more */
	cr_assert_eq(waitpid(pid, NULL, WNOHANG), -1);
	cr_assert_eq(errno, ECHILD);
	pid = scoped_child(true);
	cr_assert_eq(waitpid(pid, NULL, WNOHANG), 0); /* stolen: still running */
	kill(pid, SIGKILL);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFSIGNALED(st));
}
