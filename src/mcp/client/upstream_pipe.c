/* A stdio upstream's process and its input (upstream_pipe.h).
 *
 * Why a writer thread: an upstream that stops reading its stdin, or floods
 * us with requests whose answers it never reads, must never hold a thread
 * that answers the guest or enforces a deadline. Before, a write waited up
 * to 5 s in poll() with the upstream's lock held, so the eval's thread
 * stalled behind the reader's ping answers (a timeout_s: 3 call ran
 * 12-30 s), and a write cut by that timeout left half a message in the
 * pipe. Now every other thread only queues whole messages, and this one
 * writes them, whole, for as long as it takes.
 *
 * Why fork here, not posix_spawn: the parent-death signal can only be set
 * in the child, between fork and exec, and it fires when the *thread* that
 * forked exits. The writer thread lives exactly as long as the upstream
 * instance, so an upstream started from a short-lived call thread still
 * dies with the server (SIGKILL, a crash), not with that thread; before,
 * upstreams outlived a killed server. The child calls only async-signal-
 * safe functions before exec (the path is looked up before the fork). */
#include "upstream_pipe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct msg {
	struct msg *next;
	size_t len;
	char data[];
};

struct up_pipe {
	pthread_mutex_t lock; /* guards everything below but the descriptors */
	pthread_cond_t cond;  /* the start handshake; the queue has work */
	struct msg *head, **tail;
	size_t queued; /* bytes in the queue, the message being written too */
	bool stop;     /* up_pipe_free: the writer ends */
	bool broken;   /* a write failed: the upstream closed its stdin */
	bool reaped;   /* the pid is no longer ours to signal */
	int wake;      /* eventfd: wakes the writer's poll() to stop */
	int in_fd;     /* the upstream's stdin, our end (O_NONBLOCK) */
	int out_fd;    /* its stdout, our end */
	pid_t pid;
	pthread_t writer;

	/* the start: what the writer forks, and what it found */
	const char *path;
	char *const *argv;
	int child_in, child_out; /* the child's ends, 3 or above */
	bool started;
	int start_errno; /* fork's or exec's; 0 = running */
};

/* argv0 as execve wants it: itself when it has a '/', else the first
 * executable of that name in PATH. Owned; NULL with errno. */
static char *find_command(const char *argv0)
{
	if (strchr(argv0, '/'))
		return strdup(argv0);
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char *full = NULL;
		if (asprintf(&full, "%.*s/%s", (int)n, n ? p : ".", argv0) < 0)
			return NULL;
		if (access(full, X_OK) == 0)
			return full;
		free(full);
		p += n + (end != NULL);
	}
	errno = ENOENT;
	return NULL;
}

/* The child, between fork and exec: async-signal-safe calls only. Writes
 * errno to errfd and exits when it cannot exec. */
static void child(const struct up_pipe *p, pid_t parent, int errfd)
{
	/* Dispositions we ignore (SIGPIPE) would survive exec, and the
	 * writer's mask (everything blocked) would be inherited. */
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &dfl, NULL); /* SIGKILL, SIGSTOP: EINVAL, fine */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Dies with the writer thread; if the server died already, now. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 && getppid() == parent &&
	    dup2(p->child_in, 0) == 0 && dup2(p->child_out, 1) == 1)
		execve(p->path, p->argv, environ);
	int e = errno ? errno : EINVAL;
	ssize_t w = write(errfd, &e, sizeof(e));
	(void)w;
	_exit(127);
}

/* fork and exec, on the writer thread: the pid, or -1 with errno. */
static pid_t start_child(struct up_pipe *p)
{
	int errp[2];
	if (pipe2(errp, O_CLOEXEC) < 0)
		return -1;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0)
		child(p, parent, errp[1]);
	int e = errno;
	close(errp[1]);
	if (pid > 0) {
		/* EOF: exec worked (the pipe closed on exec); else its errno */
		ssize_t r;
		while ((r = read(errp[0], &e, sizeof(e))) < 0 && errno == EINTR)
			;
		if (r == (ssize_t)sizeof(e)) {
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
			pid = -1;
		}
	}
	close(errp[0]);
	errno = e;
	return pid;
}

/* Write all of m, waiting for room as long as it takes. false when the
 * upstream closed its stdin, or up_pipe_free asked us to stop. */
static bool write_all(struct up_pipe *p, const struct msg *m)
{
	size_t off = 0;
	while (off < m->len) {
		ssize_t w = write(p->in_fd, m->data + off, m->len - off);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (!(w < 0 && errno == EAGAIN))
			return false; /* EPIPE: no SIGPIPE, this thread blocks it */
		struct pollfd fds[2] = { { .fd = p->in_fd, .events = POLLOUT },
					 { .fd = p->wake, .events = POLLIN } };
		if (poll(fds, 2, -1) < 0 && errno != EINTR)
			return false;
		if (fds[1].revents)
			return false;
	}
	return true;
}

static void drop_queue(struct up_pipe *p)
{
	while (p->head) {
		struct msg *m = p->head;
		p->head = m->next;
		free(m);
	}
	p->tail = &p->head;
	p->queued = 0;
}

static void *writer_main(void *arg)
{
	struct up_pipe *p = arg;
	pid_t pid = start_child(p);
	int e = errno;
	pthread_mutex_lock(&p->lock);
	p->pid = pid;
	p->start_errno = pid > 0 ? 0 : e;
	p->started = true;
	pthread_cond_broadcast(&p->cond);
	while (pid > 0 && !p->stop) {
		if (!p->head) {
			pthread_cond_wait(&p->cond, &p->lock);
			continue;
		}
		struct msg *m = p->head; /* stays queued (and counted) while written */
		pthread_mutex_unlock(&p->lock);
		bool ok = write_all(p, m);
		pthread_mutex_lock(&p->lock);
		p->head = m->next;
		if (!p->head)
			p->tail = &p->head;
		p->queued -= m->len;
		free(m);
		if (!ok && !p->stop) {
			p->broken = true;
			drop_queue(p);
		}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL; /* the child, if still alive, gets its SIGKILL now */
}

static void free_fds(struct up_pipe *p)
{
	int fds[] = { p->in_fd, p->out_fd, p->wake, p->child_in, p->child_out };
	for (size_t i = 0; i < sizeof(fds) / sizeof(*fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* A descriptor 3 or above (so dup2 onto 0 or 1 always clears CLOEXEC). */
static int above_stdio(int fd)
{
	if (fd < 0 || fd > 2)
		return fd;
	int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return moved;
}

int up_pipe_start(char *const *argv, struct up_pipe **out, char **why)
{
	*out = NULL;
	*why = NULL;
	struct up_pipe *p = calloc(1, sizeof(*p));
	if (p)
		p->in_fd = p->out_fd = p->wake = p->child_in = p->child_out = -1;
	char *path = p ? find_command(argv[0]) : NULL;
	int in[2] = { -1, -1 }, o[2] = { -1, -1 };
	int e = p ? errno : ENOMEM;
	if (!p || !path)
		goto fail;
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(o, O_CLOEXEC) < 0 ||
	    (p->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		e = errno;
		for (int i = 0; i < 2; i++) {
			if (in[i] >= 0)
				close(in[i]);
			if (o[i] >= 0)
				close(o[i]);
		}
		goto fail;
	}
	p->child_in = above_stdio(in[0]);
	p->child_out = above_stdio(o[1]);
	p->in_fd = in[1];
	p->out_fd = o[0];
	if (p->child_in < 0 || p->child_out < 0 || fcntl(p->in_fd, F_SETFL, O_NONBLOCK) < 0) {
		e = errno;
		goto fail;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->tail = &p->head;
	p->path = path;
	p->argv = argv;
	/* Nothing is delivered to the writer, SIGPIPE included (a write to
	 * an upstream that exited must not end the server). */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&p->writer, NULL, writer_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		e = rc;
		goto fail;
	}
	pthread_mutex_lock(&p->lock);
	while (!p->started)
		pthread_cond_wait(&p->cond, &p->lock);
	e = p->start_errno;
	pthread_mutex_unlock(&p->lock);
	close(p->child_in);
	close(p->child_out);
	p->child_in = p->child_out = -1;
	if (e) {
		p->reaped = true; /* start_child reaped it */
		up_pipe_free(p);
		p = NULL;
		goto fail;
	}
	p->path = NULL;
	p->argv = NULL;
	free(path);
	*out = p;
	return 0;
fail:
	if (p) {
		free_fds(p);
		free(p);
	}
	free(path);
	if (asprintf(why, "cannot run '%s': %s", argv[0], strerror(e)) < 0)
		*why = NULL;
	return -1;
}

pid_t up_pipe_pid(const struct up_pipe *p)
{
	return p->pid;
}

int up_pipe_out_fd(const struct up_pipe *p)
{
	return p->out_fd;
}

int up_pipe_send(struct up_pipe *p, const char *text, size_t n, size_t cap)
{
	struct msg *m = malloc(sizeof(*m) + n);
	if (!m)
		return -1;
	memcpy(m->data, text, n);
	m->len = n;
	m->next = NULL;
	pthread_mutex_lock(&p->lock);
	bool ok = !p->broken && !p->stop && p->queued + n <= cap;
	if (ok) {
		*p->tail = m;
		p->tail = &m->next;
		p->queued += n;
		pthread_cond_broadcast(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
	if (!ok)
		free(m);
	return ok ? 0 : -1;
}

size_t up_pipe_queued(struct up_pipe *p)
{
	pthread_mutex_lock(&p->lock);
	size_t n = p->queued;
	pthread_mutex_unlock(&p->lock);
	return n;
}

void up_pipe_kill(struct up_pipe *p)
{
	pthread_mutex_lock(&p->lock);
	if (!p->reaped && p->pid > 0)
		kill(p->pid, SIGKILL);
	pthread_mutex_unlock(&p->lock);
}

int up_pipe_reap(struct up_pipe *p)
{
	up_pipe_kill(p);
	/* Wait without reaping first: until `reaped` is set the pid stays
	 * ours (a zombie), so up_pipe_kill never signals a reused one. */
	siginfo_t si;
	while (waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
		;
	pthread_mutex_lock(&p->lock);
	p->reaped = true;
	pthread_mutex_unlock(&p->lock);
	int st = 0;
	while (waitpid(p->pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

void up_pipe_free(struct up_pipe *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	uint64_t one = 1;
	ssize_t w = write(p->wake, &one, sizeof(one));
	(void)w;
	pthread_join(p->writer, NULL);
	drop_queue(p);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free_fds(p);
	free(p);
}
