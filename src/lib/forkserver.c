/* The fork server, supervisor side: one confined template worker per
 * cc_forkserver, asked over its channel for sessions (the request and
 * reply formats are in src/worker/forkserver.c).
 *
 * Trust: the template runs no guest code, but it is inside the sandbox,
 * so its replies are checked like any frame: exactly four bytes, a pid
 * with exactly one descriptor that is a pidfd, or a negative errno with
 * none. Each session is then an ordinary cc_runtime whose worker the
 * supervisor signals through that pidfd, and whose frames protocol.c
 * validates like any worker's. */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fcntl.h>

#include "deps.h"
#include "error.h"
#include "fdpass.h"
#include "net.h"
#include "supervisor.h"

struct cc_forkserver {
	cc_runtime *tmpl;	   /* the template, as a runtime that never evaluates */
	cc_options opts;	   /* what each session's cc_runtime gets */
	struct cc_net_policy *net; /* cc_options.net's, for each session; NULL: none */
	pthread_mutex_t lock;	   /* one request on the channel at a time */
	int refs;		   /* the owner's, plus one per live session (atomic) */
};

/* Python modules a template imports unless told otherwise: the standard
 * library agents reach for first, and numpy and pandas when installed. */
#define CC_PRELOAD_PYTHON "json,re,math,datetime,collections,itertools,functools,numpy?,pandas?"

CC_EXPORT int cc_forkserver_new(const cc_options *opts, const char *preload, cc_forkserver **out,
				cc_error *err)
{
	struct cc_libset *libs = NULL;
	struct cc_net_policy *net = NULL;
	*out = NULL;
	if (!opts)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "options are required");
	if (cc_net_from_options(opts, &net, err) < 0)
		return -1;
	int rc = -1;
	struct cc_deps_opts dop = { 0 };
	if (cc_options_check(opts, err) == 0 && cc_deps_apply(opts, &dop, err) == 0 &&
	    cc_libset_load(&dop.o, dop.d, &libs, err) == 0)
		rc = cc_forkserver_start(&dop.o, preload, libs, net, out, err);
	if (rc == 0) /* the template's, so every session's (spawn) */
		cc_forkserver_hold_deps(*out, dop.d);
	cc_deps_opts_done(&dop);
	cc_libset_free(libs);
	cc_net_policy_unref(net); /* the server holds its own reference */
	return rc;
}

/* The template raises its RLIMIT_NOFILE to hold two descriptors per
 * session (confine.c), which the host's hard limit must allow. */
static int check_nofile(const cc_options *opts, cc_error *err)
{
	unsigned max = cc_max_sessions(opts);
	rlim_t need = (rlim_t)opts->limits.max_open_files + 2 * (rlim_t)max + 16;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_max == RLIM_INFINITY ||
	    rl.rlim_max >= need)
		return 0;
	return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
		       "a fork server of max_sessions %u needs %llu descriptors in its template "
		       "(two per session plus max_open_files), over this process's hard "
		       "RLIMIT_NOFILE of %llu; lower max_sessions, or raise the hard limit",
		       max, (unsigned long long)need, (unsigned long long)rl.rlim_max);
}

int cc_forkserver_start(const cc_options *opts, const char *preload, const struct cc_libset *libs,
			struct cc_net_policy *net, cc_forkserver **out, cc_error *err)
{
	*out = NULL;
	if (!opts)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "options are required");
	if (cc_options_check(opts, err) < 0)
		return -1;
	if (!preload)
		preload = opts->language == CC_LANG_PYTHON ? CC_PRELOAD_PYTHON : "";
	if (strlen(preload) >= 1024)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "the preload list is over 1023 bytes; shorten it");
	if (check_nofile(opts, err) < 0)
		return -1;
	cc_forkserver *fs = calloc(1, sizeof(*fs));
	if (!fs)
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	if (cc_runtime_start(opts, preload, libs, &fs->tmpl, err) < 0) {
		cc_fail_wrap(err, "starting the fork server");
		free(fs);
		return -1;
	}
	fs->opts = *opts;
	fs->opts.worker_dir = NULL;
	fs->opts.libraries = NULL; /* loaded in the template: sessions have them */
	fs->opts.n_libraries = 0;
	fs->opts.node_modules = NULL;
	fs->opts.mounts = NULL; /* borrowed: the template has bound them */
	fs->opts.n_mounts = 0;
	fs->opts.net = NULL; /* borrowed: fs->net is its copy */
	fs->net = cc_net_policy_ref(net);
	fs->opts.python_path = NULL; /* grants too: the template has bound them */
	fs->opts.n_python_path = 0;
	pthread_mutex_init(&fs->lock, NULL);
	fs->refs = 1;
	*out = fs;
	return 0;
}

CC_EXPORT const cc_sandbox_report *cc_forkserver_sandbox(const cc_forkserver *fs)
{
	return fs ? cc_runtime_sandbox(fs->tmpl) : NULL;
}

CC_EXPORT const char *cc_forkserver_preload_skipped(const cc_forkserver *fs)
{
	return fs && fs->tmpl ? fs->tmpl->preload_skipped : NULL;
}

void cc_forkserver_unref(cc_forkserver *fs)
{
	if (__atomic_sub_fetch(&fs->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	cc_runtime_close(fs->tmpl);
	cc_net_policy_unref(fs->net);
	pthread_mutex_destroy(&fs->lock);
	free(fs);
}

CC_EXPORT void cc_forkserver_close(cc_forkserver *fs)
{
	if (fs)
		cc_forkserver_unref(fs);
}

/* Hand the template one end of a new channel and the write end of the
 * session's status pipe. */
static int send_request(struct cc_child *t, const int fds[2], int64_t deadline, cc_error *err)
{
	for (;;) {
		if (cc_fds_send(t->sock, "F", 1, fds, 2, MSG_DONTWAIT) == 1)
			return 0;
		if (errno != EAGAIN && errno != EINTR)
			return cc_fail(err, CC_ERR_WORKER_CRASHED,
				       "the fork server's template is gone (%s)", strerror(errno));
		if (cc_chan_wait(t, POLLOUT, deadline, err) < 0)
			return -1;
	}
}

/* A template's -errno reply as an error naming the quota that is full
 * (src/worker/forkserver.c says which errno means which). */
static int fork_refused(const cc_forkserver *fs, int e, cc_error *err)
{
	unsigned max = cc_max_sessions(&fs->opts);
	if (e == ENOSPC)
		return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
			       "the fork server could not fork a session: it holds %u live "
			       "sessions, its max_sessions; close one, start another fork server, "
			       "or raise max_sessions (up to %u)",
			       max, CC_FORK_MAX_SESSIONS_LIMIT);
	if (e == EAGAIN)
		return cc_fail(
			err, CC_ERR_SANDBOX_UNAVAILABLE,
			"the fork server could not fork a session: its sessions and their "
			"threads hold every process its user namespace allows (RLIMIT_NPROC, "
			"one total for all sessions of a fork server: one process per session "
			"up to max_sessions %u, plus %u threads between them); close "
			"sessions, or start another fork server (each has quotas of its own)",
			max, CC_FORK_SHARED_THREADS);
	const char *quota = NULL;
	if (e == EMFILE)
		quota = "its descriptors are used up (RLIMIT_NOFILE: a pidfd and a status pipe "
			"per live session)";
	if (!quota)
		return cc_fail(err, CC_ERR_INTERNAL, "the fork server could not fork a session: %s",
			       strerror(e));
	return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
		       "the fork server could not fork a session: %s; close sessions, or start "
		       "another fork server (each has quotas of its own)",
		       quota);
}

/* The host's own descriptors ran out making a session's socket or status
 * pipe: each live session holds three here. */
static int host_fds_refused(const char *what, int e, cc_error *err)
{
	if (e != EMFILE && e != ENFILE)
		return cc_fail(err, CC_ERR_INTERNAL, "%s: %s", what, strerror(e));
	struct rlimit rl = { 0, 0 };
	getrlimit(RLIMIT_NOFILE, &rl);
	return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
		       "the fork server could not make a session: this process is out of "
		       "descriptors (%s: %s; RLIMIT_NOFILE %llu, and each live session holds "
		       "three: its socket, pidfd and status pipe); close sessions, or raise the "
		       "process's RLIMIT_NOFILE (ulimit -n, resource.setrlimit)",
		       what, strerror(e), (unsigned long long)rl.rlim_cur);
}

/* The template's answer: the session's pid and pidfd. */
static int recv_reply(const cc_forkserver *fs, struct cc_child *t, int *pidfd, int64_t deadline,
		      cc_error *err)
{
	*pidfd = -1;
	/* Nothing may follow the template's "ready" but replies like this */
	if (t->ra_off < t->ra_len)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
			       "the fork server's template sent bytes after its ready message");
	for (;;) {
		int32_t pid = 0;
		int fds[4], nfd = 0, truncated = 0;
		ssize_t n = cc_fd_recv(t->sock, &pid, sizeof(pid), fds, 4, &nfd, &truncated,
				       MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (cc_chan_wait(t, POLLIN, deadline, err) < 0)
				return -1;
			continue;
		}
		if (n <= 0)
			return cc_fail(err, CC_ERR_WORKER_CRASHED,
				       "the fork server's template closed its channel");
		bool ok =
			n == (ssize_t)sizeof(pid) && !truncated && (pid > 0 ? nfd == 1 : nfd == 0);
		/* Not a pidfd? ENOTTY: a kernel before 6.13 cannot say; ESRCH: a
		 * pidfd whose session has ended and been reaped already (one that
		 * failed its start), which only a pidfd answers. */
		if (ok && pid > 0 && cc_pidfd_pid(fds[0]) < 0 && errno != ENOTTY && errno != ESRCH)
			ok = false;
		if (!ok) {
			for (int i = 0; i < nfd; i++)
				close(fds[i]);
			return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
				       "the fork server's template sent a malformed reply");
		}
		if (pid < 0)
			return fork_refused(fs, (int)-pid, err);
		*pidfd = fds[0];
		return (int)pid;
	}
}

void cc_forkserver_hold_deps(cc_forkserver *fs, cc_deps *d)
{
	cc_deps_free(fs->tmpl->deps);
	fs->tmpl->deps = cc_deps_ref(d);
}

bool cc_forkserver_alive(cc_forkserver *fs)
{
	pthread_mutex_lock(&fs->lock);
	bool alive = fs->tmpl->alive && !cc_child_try_reap(&fs->tmpl->child);
	pthread_mutex_unlock(&fs->lock);
	return alive;
}

bool cc_forkserver_grants_are(const cc_forkserver *fs, const uint64_t *ids, size_t n)
{
	return fs->tmpl->n_grant_ids == n && !memcmp(fs->tmpl->grant_ids, ids, n * sizeof(*ids));
}

static int spawn(cc_forkserver *fs, const cc_options *o, struct cc_net_policy *net,
		 cc_runtime **out, cc_error *err);

CC_EXPORT int cc_forkserver_spawn(cc_forkserver *fs, cc_runtime **out, cc_error *err)
{
	cc_error local = { 0 };
	*out = NULL;
	if (!fs)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "no fork server given");
	/* The new session's reference, taken first: a close of the server
	 * meanwhile cannot free it under this call. */
	__atomic_add_fetch(&fs->refs, 1, __ATOMIC_ACQ_REL);
	int rc = spawn(fs, &fs->opts, cc_net_policy_ref(fs->net), out, err ? err : &local);
	cc_error_clear(&local);
	return rc;
}

int cc_forkserver_spawn_as(cc_forkserver *fs, const cc_options *o, struct cc_net_policy *net,
			   cc_runtime **out, cc_error *err)
{
	*out = NULL;
	__atomic_add_fetch(&fs->refs, 1, __ATOMIC_ACQ_REL);
	return spawn(fs, o, net, out, err);
}

int cc_forkserver_pid(cc_forkserver *fs)
{
	return fs->tmpl->alive ? (int)fs->tmpl->child.pid : -1;
}

void cc_forkserver_forget(cc_forkserver *fs)
{
	struct cc_child *c = &fs->tmpl->child;
	int fds[] = { c->sock, c->pidfd, c->status_fd };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	c->sock = c->pidfd = c->status_fd = -1;
	c->pid = -1; /* never signalled (nor its group) nor waited for here */
	c->reaped = true;
	fs->tmpl->alive = false;
}

/* The session owns one reference of fs from the start: its close, or the
 * failure path's, drops it; and the reference to net (may be NULL) that
 * it is given. o: the session's options (fs->opts, or a caller's with the
 * same template-fixed fields, cc_forkserver_spawn_as). */
static int spawn(cc_forkserver *fs, const cc_options *o, struct cc_net_policy *net,
		 cc_runtime **out, cc_error *err)
{
	cc_runtime *rt = cc_runtime_alloc(o, err);
	if (!rt) {
		cc_net_policy_unref(net);
		cc_forkserver_unref(fs);
		return -1;
	}
	rt->forkserver = fs;
	rt->deps = cc_deps_ref(fs->tmpl->deps);
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		int e = errno;
		cc_net_policy_unref(net);
		cc_runtime_close(rt);
		return host_fds_refused("socketpair", e, err);
	}
	/* The template writes the session's wait status here once it has
	 * reaped it (spawn.c's reap_forked reads it). */
	int st[2];
	if (pipe2(st, O_CLOEXEC) < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		cc_net_policy_unref(net);
		cc_runtime_close(rt);
		return host_fds_refused("pipe2", e, err);
	}
	int64_t deadline = cc_now_ns() + (int64_t)(CC_STARTUP_TIMEOUT_S * 1e9);
	cc_runtime *t = fs->tmpl;
	int pidfd = -1, pid = -1;
	pthread_mutex_lock(&fs->lock);
	if (!t->alive)
		cc_fail(err, CC_ERR_WORKER_CRASHED, "the fork server's template is gone: %s",
			t->death ? t->death : "it ended");
	else if (send_request(&t->child, (int[2]){ sv[1], st[1] }, deadline, err) == 0)
		pid = recv_reply(fs, &t->child, &pidfd, deadline, err);
	/* A template that broke the protocol or died serves no one again. */
	if (pid < 0 && (err->kind == CC_ERR_PROTOCOL_VIOLATION ||
			err->kind == CC_ERR_WORKER_CRASHED || err->kind == CC_ERR_TIMEOUT)) {
		t->alive = false;
		cc_child_kill(&t->child);
	}
	pthread_mutex_unlock(&fs->lock);
	close(sv[1]);
	close(st[1]);
	if (pid < 0) {
		close(sv[0]);
		close(st[0]);
		cc_net_policy_unref(net);
		cc_runtime_close(rt);
		return cc_fail_wrap(err, "forking a session");
	}
	pid_t host_pid = cc_pidfd_pid(pidfd);
	rt->child.pid = host_pid > 0 ? host_pid : pid;
	rt->child.pidfd = pidfd;
	rt->child.sock = sv[0];
	rt->child.status_fd = st[0];
	rt->child.forked = true;
	fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
	rt->alive = true;
	if (cc_runtime_await_ready(rt, deadline, err) < 0) {
		cc_net_policy_unref(net);
		cc_runtime_close(rt);
		return -1;
	}
	if (cc_net_install(rt, net, err) < 0) {
		cc_runtime_close(rt);
		return -1;
	}
	*out = rt;
	return 0;
}
