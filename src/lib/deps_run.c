/* The dependency helper's process (src/lib/deps_helper.py, installed as
 * codecage-deps beside the workers): found like a worker, started with
 * the guest's interpreter in a session of its own, given one JSON request
 * on stdin, read for one JSON answer on stdout, and killed (its whole
 * process group: pip and npm with it) at the deadline. A host program with
 * the host's authority and environment: it is what reaches the package
 * index, never a worker. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "cleanup.h"
#include "deps.h"
#include "error.h"

extern char **environ;

/* Largest answer read from the helper, bytes (its logs are in it). */
#define CC_DEPS_ANSWER_MAX (8u << 20)

/* dir (dlen bytes) + "/" + CC_DEPS_HELPER into path (PATH_MAX bytes), if
 * it fits and names a readable file. */
static bool helper_at(char *path, const char *dir, size_t dlen)
{
	size_t hl = strlen(CC_DEPS_HELPER);
	if (dlen + 1 + hl + 1 > PATH_MAX)
		return false;
	memcpy(path, dir, dlen);
	path[dlen] = '/';
	memcpy(path + dlen + 1, CC_DEPS_HELPER, hl + 1);
	return access(path, R_OK) == 0;
}

/* codecage-deps: next to libcodecage (build tree, Python package), else
 * the install libexecdir. path holds PATH_MAX bytes. */
static int find_helper(char *path, cc_error *err)
{
	Dl_info info;
	const char *slash = NULL;
	if (dladdr((void *)find_helper, &info) && info.dli_fname)
		slash = strrchr(info.dli_fname, '/');
	if (slash && helper_at(path, info.dli_fname, (size_t)(slash - info.dli_fname)))
		return 0;
	if (helper_at(path, CC_LIBEXECDIR, strlen(CC_LIBEXECDIR)))
		return 0;
	return cc_fail(err, CC_ERR_INTERNAL,
		       "cannot find %s (which installs dependencies) next to libcodecage or in "
		       "%s; reinstall codecage",
		       CC_DEPS_HELPER, CC_LIBEXECDIR);
}

/* Kill the helper's process group and reap it. */
static void stop(pid_t pid)
{
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int cc_deps_run(const char *request, double timeout_s, json_t **answer, cc_error *err)
{
	*answer = NULL;
	char helper[PATH_MAX];
	if (find_helper(helper, err) < 0)
		return -1;
	if (access(CC_PY_HOST_PYTHON, X_OK) < 0)
		return cc_fail(
			err, CC_ERR_INVALID_INPUT,
			"dependencies are resolved by the guest's interpreter %s, which this "
			"host lacks: install Debian's python3 and python3-pip",
			CC_PY_HOST_PYTHON);
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, errp[2] = { -1, -1 };
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		int e = errno;
		for (int i = 0; i < 2; i++) {
			if (in[i] >= 0)
				close(in[i]);
			if (out[i] >= 0)
				close(out[i]);
		}
		return cc_fail(err, CC_ERR_INTERNAL, "pipe: %s", strerror(e));
	}
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3); /* none of the host's descriptors */
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	/* its own session: the deadline kills pip and npm with it */
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
						POSIX_SPAWN_SETSID);
	char *argv[] = { (char *)CC_PY_HOST_PYTHON, "-I", "-S", helper, NULL };
	pid_t pid = -1;
	int rc = posix_spawn(&pid, CC_PY_HOST_PYTHON, &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(in[0]);
	close(out[1]);
	close(errp[1]);
	if (rc != 0) {
		close(in[1]);
		close(out[0]);
		close(errp[0]);
		return cc_fail(err, CC_ERR_INTERNAL, "starting %s: %s", helper, strerror(rc));
	}
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	int64_t deadline = cc_now_ns() + cc_secs_to_ns(timeout_s);
	size_t off = 0, len = strlen(request);
	struct cc_buf ob = { 0 }, eb = { 0 };
	struct pollfd p[3] = { { out[0], POLLIN, 0 },
			       { errp[0], POLLIN, 0 },
			       { in[1], POLLOUT, 0 } };
	bool timed_out = false;
	while (p[0].fd >= 0 || p[1].fd >= 0) {
		int64_t left = deadline - cc_now_ns();
		if (left <= 0) {
			timed_out = true;
			break;
		}
		int n = poll(p, 3, (int)(left / 1000000) + 1);
		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; n > 0 && i < 2; i++) {
			if (!p[i].revents)
				continue;
			char buf[65536];
			ssize_t r = read(p[i].fd, buf, sizeof(buf));
			if (r > 0 && (i ? eb.len : ob.len) < CC_DEPS_ANSWER_MAX) {
				cc_buf_add(i ? &eb : &ob, buf, (size_t)r);
			} else if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) {
				close(p[i].fd);
				p[i].fd = -1;
			}
		}
		if (n > 0 && p[2].revents) {
			ssize_t w = write(in[1], request + off, len - off);
			if (w > 0)
				off += (size_t)w;
			if ((w < 0 && errno != EAGAIN && errno != EINTR) || off == len) {
				close(in[1]);
				in[1] = -1;
				p[2].fd = -1;
			}
		}
	}
	for (int i = 0; i < 3; i++)
		if (p[i].fd >= 0)
			close(p[i].fd);
	if (in[1] >= 0 && p[2].fd < 0 && off < len)
		close(in[1]);
	int status = 0;
	if (timed_out) {
		stop(pid);
	} else {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		kill(-pid, SIGKILL); /* anything it left behind */
	}
	if (timed_out)
		rc = cc_fail(err, CC_ERR_INVALID_INPUT,
			     "installing the dependencies took longer than %.0f s and was stopped "
			     "(raise the dependency timeout, --deps-timeout SECONDS)",
			     timeout_s);
	else if (ob.oom || eb.oom)
		rc = cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	else if (!(*answer = json_loads(ob.data ? ob.data : "", 0, NULL)) ||
		 !json_is_object(*answer))
		rc = cc_fail(err, CC_ERR_INTERNAL, "%s gave no answer (status %d): %.2000s",
			     CC_DEPS_HELPER, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			     eb.data ? eb.data : "");
	if (rc < 0) {
		json_decref(*answer);
		*answer = NULL;
	}
	free(ob.data);
	free(eb.data);
	return rc < 0 ? -1 : 0;
}
