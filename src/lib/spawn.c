/* Starting, killing and reaping the worker process. Raw OS side effects.
 *
 * posix_spawn (glibc uses clone(CLONE_VM|CLONE_VFORK)) is safe to call from
 * a multithreaded host such as a Python interpreter, unlike fork(). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "seccomp_policy.h"
#include "supervisor.h"
#include "worker_exit.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static const char *worker_name(cc_language lang)
{
	return lang == CC_LANG_PYTHON ? "codecage-worker-py" : "codecage-worker-js";
}

/* The worker executable: opts->worker_dir, else the directory this library
 * was loaded from (build tree, Python package), else the install libexecdir. */
static int find_worker(const cc_options *opts, char *path, size_t n, cc_error *err)
{
	const char *name = worker_name(opts->language);
	if (opts->worker_dir) {
		snprintf(path, n, "%s/%s", opts->worker_dir, name);
		if (access(path, X_OK) == 0)
			return 0;
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "worker %s is missing or not executable (%s); check worker_dir",
			       path, strerror(errno));
	}
	Dl_info info;
	if (dladdr((void *)cc_spawn_worker, &info) && info.dli_fname) {
		const char *slash = strrchr(info.dli_fname, '/');
		if (slash) {
			snprintf(path, n, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname,
				 name);
			if (access(path, X_OK) == 0)
				return 0;
		}
	}
	snprintf(path, n, "%s/%s", CC_LIBEXECDIR, name);
	if (access(path, X_OK) == 0)
		return 0;
	return cc_fail(err, CC_ERR_INTERNAL,
		       "cannot find the %s executable next to libcodecage or in %s; "
		       "reinstall codecage or set worker_dir",
		       name, CC_LIBEXECDIR);
}

/* The spawner thread.
 *
 * The worker's parent-death signal (PR_SET_PDEATHSIG, DESIGN.md section 3
 * step 1) fires when the *thread* that created it exits, not the process:
 * a runtime made in a short-lived host thread (a thread pool, asyncio's
 * to_thread) would die with that thread. So every worker is spawned by one
 * library thread that lives as long as the host process. It blocks all
 * signals and does nothing but posix_spawn. */
struct spawn_req {
	const char *path;
	const posix_spawn_file_actions_t *fa;
	const posix_spawnattr_t *attr;
	char **argv, **envp;
	pid_t pid; /* out */
	int rc;	   /* out: posix_spawn's result */
	bool done;
};

static pthread_mutex_t spawn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t spawn_cond = PTHREAD_COND_INITIALIZER;
static struct spawn_req *spawn_pending;
static pid_t spawner_owner; /* the process whose spawner thread runs; 0 = none */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void *spawner_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&spawn_lock);
	for (;;) {
		while (!spawn_pending)
			pthread_cond_wait(&spawn_cond, &spawn_lock);
		struct spawn_req *r = spawn_pending;
		spawn_pending = NULL;
		pthread_mutex_unlock(&spawn_lock);
		r->rc = posix_spawn(&r->pid, r->path, r->fa, r->attr, r->argv, r->envp);
		pthread_mutex_lock(&spawn_lock);
		r->done = true;
		pthread_cond_broadcast(&spawn_cond);
	}
	return NULL;
}

/* A host that forks gets a child without our thread, and perhaps with the
 * lock held: start over there. */
static void atfork_prepare(void)
{
	pthread_mutex_lock(&spawn_lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&spawn_lock);
}

static void atfork_child(void)
{
	pthread_mutex_init(&spawn_lock, NULL);
	pthread_cond_init(&spawn_cond, NULL);
	spawn_pending = NULL;
	spawner_owner = 0;
}

static void register_atfork(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* Returns posix_spawn's result, or an errno from starting the thread. */
static int spawn_in_thread(struct spawn_req *req)
{
	pthread_once(&atfork_once, register_atfork);
	pthread_mutex_lock(&spawn_lock);
	if (spawner_owner != getpid()) {
		pthread_attr_t ta;
		pthread_t t;
		sigset_t all, old;
		sigfillset(&all);
		pthread_attr_init(&ta);
		pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&ta, 64 * 1024);
		/* The thread inherits this mask: no host signal lands there. */
		pthread_sigmask(SIG_SETMASK, &all, &old);
		int rc = pthread_create(&t, &ta, spawner_main, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&ta);
		if (rc != 0) {
			pthread_mutex_unlock(&spawn_lock);
			return rc;
		}
		spawner_owner = getpid();
	}
	while (spawn_pending)
		pthread_cond_wait(&spawn_cond, &spawn_lock);
	spawn_pending = req;
	pthread_cond_broadcast(&spawn_cond);
	while (!req->done)
		pthread_cond_wait(&spawn_cond, &spawn_lock);
	pthread_mutex_unlock(&spawn_lock);
	return req->rc;
}

int cc_spawn_worker(const cc_options *opts, const struct cc_grants *gs, struct cc_child *c,
		    cc_error *err)
{
	char path[PATH_MAX];
	c->pid = -1;
	c->pidfd = -1;
	c->sock = -1;
	c->status_fd = -1;
	c->reaped = false;
	c->forked = false;
	if (find_worker(opts, path, sizeof(path), err) < 0)
		return -1;

	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "socketpair: %s", strerror(errno));
	/* Keep the child's end away from 0-3 so dup2 onto 3 always clears
	 * FD_CLOEXEC (dup2(3, 3) would not). */
	int child_end = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
	close(sv[1]);
	if (child_end < 0) {
		close(sv[0]);
		return cc_fail(err, CC_ERR_INTERNAL, "fcntl(F_DUPFD_CLOEXEC): %s", strerror(errno));
	}

	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, child_end, 3);
	/* Grants' descriptors (grants.c keeps them above this range). */
	size_t ng = gs ? gs->n : 0;
	for (size_t i = 0; i < ng; i++)
		posix_spawn_file_actions_adddup2(&fa, gs->g[i].fd, CC_GRANT_FD0 + (int)i);
	posix_spawn_file_actions_addclosefrom_np(&fa, CC_GRANT_FD0 + (int)ng);
	/* The host may block or ignore signals (Python ignores SIGPIPE); the
	 * worker starts from defaults. */
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

	char ppid_arg[32];
	snprintf(ppid_arg, sizeof(ppid_arg), "--ppid=%ld", (long)getpid());
	char grants_arg[32];
	snprintf(grants_arg, sizeof(grants_arg), "--grants=%zu", ng);
	char *argv[] = { path, ppid_arg, ng ? grants_arg : NULL, NULL };
	char *envp[] = { NULL };
	struct spawn_req req = { path, &fa, &attr, argv, envp, -1, 0, false };
	int rc = spawn_in_thread(&req);
	pid_t pid = req.pid;
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(child_end);
	if (rc != 0) {
		close(sv[0]);
		return cc_fail(err, CC_ERR_INTERNAL, "spawning %s: %s", path, strerror(rc));
	}
	c->pid = pid;
	c->sock = sv[0];
	c->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (c->pidfd < 0) {
		int e = errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		c->pid = -1;
		close(c->sock);
		c->sock = -1;
		return cc_fail(err, CC_ERR_INTERNAL,
			       "pidfd_open: %s (Linux 5.3 or later is needed)", strerror(e));
	}
	fcntl(c->sock, F_SETFL, fcntl(c->sock, F_GETFL) | O_NONBLOCK);
	return 0;
}

/* PIDFD_GET_INFO (Linux 6.13): from the kernel's include/uapi/linux/
 * pidfd.h, defined here because Debian 12's headers predate it. The first
 * 64 bytes are the structure's version 0, which every kernel with the
 * ioctl accepts. */
struct cc_pidfd_info {
	uint64_t mask, cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
};
#define CC_PIDFD_INFO_PID (1ull << 0)
#define CC_PIDFD_GET_INFO _IOWR(0xFF, 11, struct cc_pidfd_info)

/* How long a forked session's status may take once it has exited: the
 * template writes it as soon as it has reaped the session, so this bound
 * is reached only when the template is wedged, never as a race. */
#define CC_FORKED_STATUS_BOUND_MS 10000

pid_t cc_pidfd_pid(int pidfd)
{
	struct cc_pidfd_info info;
	memset(&info, 0, sizeof(info));
	info.mask = CC_PIDFD_INFO_PID;
	if (ioctl(pidfd, CC_PIDFD_GET_INFO, &info) < 0 || !(info.mask & CC_PIDFD_INFO_PID))
		return -1;
	return (pid_t)info.pid;
}

/* A forked session is the template's child, not ours: once its pidfd
 * says it exited, read the wait status its template sends down the
 * session's status pipe after the reap (src/worker/forkserver.c). The
 * read waits for the write, so there is no window to lose it in. */
static void reap_forked(struct cc_child *c, int timeout_ms)
{
	struct pollfd p = { c->pidfd, POLLIN, 0 };
	if (poll(&p, 1, timeout_ms) != 1)
		return; /* still running */
	c->reaped = true;
	c->wstatus_code = 0;
	c->no_status = "its template gave no exit status";
	if (c->status_fd < 0)
		return;
	int32_t st = 0;
	ssize_t n = -1;
	struct pollfd s = { c->status_fd, POLLIN, 0 };
	int r;
	while ((r = poll(&s, 1, CC_FORKED_STATUS_BOUND_MS)) < 0 && errno == EINTR)
		;
	if (r == 1)
		while ((n = read(c->status_fd, &st, sizeof(st))) < 0 && errno == EINTR)
			;
	close(c->status_fd);
	c->status_fd = -1;
	if (r == 0) {
		c->no_status = "its template did not report the exit status within 10 s";
		return;
	}
	if (n != (ssize_t)sizeof(st) || st < 0) {
		c->no_status = "its template ended before it reported the exit status";
		return;
	}
	if (WIFEXITED(st)) {
		c->wstatus_code = CLD_EXITED;
		c->wstatus = WEXITSTATUS(st);
	} else if (WIFSIGNALED(st)) {
		c->wstatus_code = WCOREDUMP(st) ? CLD_DUMPED : CLD_KILLED;
		c->wstatus = WTERMSIG(st);
	}
}

static void reap(struct cc_child *c, int options)
{
	if (c->forked) {
		reap_forked(c, options & WNOHANG ? 0 : 2000);
		return;
	}
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	for (;;) {
		int rc = waitid(P_PIDFD, (id_t)c->pidfd, &si, WEXITED | options);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0) {
			/* ECHILD: the host reaps children itself (SIGCHLD
			 * ignored); nothing is left to collect. */
			c->reaped = errno == ECHILD;
			c->wstatus_code = 0;
			return;
		}
		break;
	}
	if (si.si_pid == 0)
		return; /* WNOHANG and still running */
	c->reaped = true;
	c->wstatus_code = si.si_code;
	c->wstatus = si.si_status;
}

bool cc_child_try_reap(struct cc_child *c)
{
	if (c->pid < 0 || c->reaped)
		return c->reaped;
	reap(c, WNOHANG);
	return c->reaped;
}

void cc_child_signal_kill(struct cc_child *c)
{
	if (c->pidfd >= 0 && !c->reaped)
		syscall(SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
}

/* The worker's namespace child outlives the monitor we just reaped by a
 * moment and is handed to the nearest subreaper. When that is this process
 * (a host that is pid 1 in a container, or set PR_SET_CHILD_SUBREAPER),
 * reap it here: it is in the worker's process group, already SIGKILLed.
 * Otherwise init reaps it and there is nothing to wait for. */
static void reap_orphans(pid_t pgid)
{
	int sub = 0;
	if (getpid() != 1 && (prctl(PR_GET_CHILD_SUBREAPER, &sub) < 0 || !sub))
		return;
	while (waitpid(-pgid, NULL, __WALL) > 0)
		;
}

void cc_child_kill(struct cc_child *c)
{
	if (c->sock >= 0) {
		close(c->sock);
		c->sock = -1;
	}
	if (c->pid > 0 && !c->reaped) {
		syscall(SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
		if (c->forked) {
			/* No process group of its own and no children (it
			 * cannot fork); its template reaps it. Wait for the
			 * exit itself, not for the status (nobody asks now). */
			struct pollfd p = { c->pidfd, POLLIN, 0 };
			poll(&p, 1, 2000);
			c->reaped = true;
			goto close_pidfd;
		}
		/* The worker leads its own session and process group (setsid in
		 * cc_hygiene); kill what the guest started in it too. Safe before
		 * the reap: until then the worker's pid, and so this group id,
		 * cannot be reused. A guest child that left the group with its own
		 * setsid() is out of reach here: the pid namespace (confinement
		 * issue) and seccomp's fork ban close that. */
		kill(-c->pid, SIGKILL);
		reap(c, 0);
		reap_orphans(c->pid);
	}
close_pidfd:
	if (c->pidfd >= 0) {
		close(c->pidfd);
		c->pidfd = -1;
	}
	if (c->status_fd >= 0) {
		close(c->status_fd);
		c->status_fd = -1;
	}
	c->pid = -1;
}

char *cc_child_describe(const struct cc_child *c)
{
	char *out = NULL;
	int r;
	if (!c->reaped) {
		r = asprintf(&out, "closed its channel");
	} else if (c->wstatus_code == 0 && c->forked) {
		r = asprintf(&out, "ended (%s)", c->no_status ? c->no_status : "status unknown");
	} else if (c->wstatus_code == 0) {
		r = asprintf(&out, "ended; its exit status was collected elsewhere (does the host "
				   "ignore SIGCHLD?)");
	} else if (c->wstatus_code == CLD_EXITED && !c->forked && cc_sc_kill_name(c->wstatus)) {
		/* Only a monitor reports kill-list calls by exit status (a
		 * forked session's filter kills outright: SIGSYS, below). */
		r = asprintf(&out, "was killed by seccomp for calling %s, which no guest may call",
			     cc_sc_kill_name(c->wstatus));
	} else if (c->wstatus_code == CLD_EXITED && cc_worker_exit_meaning(c->wstatus)) {
		/* The worker's word only: guest code can exit with any status. */
		r = asprintf(&out, "exited with status %d (%s, or the guest's own exit)",
			     c->wstatus, cc_worker_exit_meaning(c->wstatus));
	} else if (c->wstatus_code == CLD_EXITED) {
		r = asprintf(&out, "exited with status %d", c->wstatus);
	} else if (c->wstatus_code == CLD_KILLED || c->wstatus_code == CLD_DUMPED) {
		const char *what = sigabbrev_np(c->wstatus);
		r = asprintf(&out, "was killed by SIG%s%s", what ? what : "?",
			     c->wstatus == SIGXCPU   ? " (its CPU-time limit)"
			     : c->wstatus == SIGSYS  ? " (seccomp)"
			     : c->wstatus == SIGKILL ? " (out of memory or killed from outside)"
						     : "");
	} else {
		r = asprintf(&out, "ended (code %d, status %d)", c->wstatus_code, c->wstatus);
	}
	return r < 0 ? NULL : out;
}
