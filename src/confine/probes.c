/* Step 7 of DESIGN.md section 3: self-probes. After every layer is in and
 * before any guest code, the worker tries what an attacker would try
 * first. Each probe returns 1 when it got through (a breach) and 0 when
 * something stopped it; any breach refuses the start.
 *
 * The same probes run unconfined in tests (cc_probes_report, worker flag
 * --probe-unconfined), each in its own child, where every one must report
 * a breach: a probe that cannot see a breach proves nothing. */
#include "probes.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "grants.h"
#include "seccomp_policy.h"
#include "worker_exit.h"

struct probe {
	const char *name;
	int (*run)(pid_t ppid);
};

/* A host file every Linux system has; the minimal roots do not. */
static int read_host_file(pid_t ppid)
{
	(void)ppid;
	int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char c;
	ssize_t n = read(fd, &c, 1);
	close(fd);
	return n == 1;
}

/* The first component of a grant's guest path is name (the root holds
 * it: namespaces.c binds grants there). */
static bool grant_top(const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < cc_worker_n_grants; i++) {
		const char *g = cc_worker_grants[i].guest + 1;
		if (!strncmp(g, name, n) && (g[n] == '/' || g[n] == 0))
			return true;
	}
	return false;
}

/* Names our roots create (run: the engine cache folder, /run/codecage);
 * a listing of / with anything else is the
 * host's. (Landlock denies listing / outright; this also holds without.) */
static int list_root(pid_t ppid)
{
	(void)ppid;
	static const char *const ours[] = { ".", "..", "usr", "lib", "etc", "dev", "tmp", "run" };
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	int breach = 0;
	struct dirent *e;
	while (!breach && (e = readdir(d))) {
		breach = !grant_top(e->d_name);
		for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
			if (!strcmp(e->d_name, ours[i]))
				breach = 0;
	}
	closedir(d);
	return breach;
}

/* /var/tmp is world-writable on the host and absent from the roots. */
static int write_outside_scratch(pid_t ppid)
{
	char path[64];
	snprintf(path, sizeof(path), "/var/tmp/codecage-probe-%d-%d", (int)ppid, (int)getpid());
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	close(fd);
	unlink(path);
	return 1;
}

/* Unconfined, the shell replaces this process and exits 11, which the
 * reporting child reads as a breach. Confined, a successful exec ends the
 * worker before "ready" with CC_PROBE_EXEC_EXIT, which the supervisor
 * reports as this breach. cc_probes_run tries it last, and only when no
 * other probe got through, so those are reported first. */
_Static_assert(CC_PROBE_EXEC_EXIT == 11, "the shell below exits 11");
static int exec_shell(pid_t ppid)
{
	(void)ppid;
	char *argv[] = { "sh", "-c", "exit 11", NULL };
	char *envp[] = { NULL };
	execve("/bin/sh", argv, envp);
	return 0;
}

static int fork_process(pid_t ppid)
{
	(void)ppid;
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	if (p < 0)
		return 0;
	int st;
	waitpid(p, &st, 0);
	return 1;
}

/* Reaching a host TCP port: refused (nothing listens on 9) still means the
 * network was reachable. Confined: EPERM (seccomp), EACCES (Landlock) or
 * ENETUNREACH (no interfaces). */
static int connect_tcp(pid_t ppid)
{
	(void)ppid;
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return 0;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int r = connect(s, (struct sockaddr *)&a, sizeof(a));
	int e = errno;
	close(s);
	return r == 0 || e == ECONNREFUSED;
}

/* In a network namespace of the worker's own, the abstract unix names are
 * its own: a refused connection there reached nothing of the host's. */
static bool private_net;

/* Reaching the abstract unix namespace (where host daemons listen). */
static int connect_unix(pid_t ppid)
{
	(void)ppid;
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return 0;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	static const char name[] = "\0codecage-probe";
	memcpy(a.sun_path, name, sizeof(name) - 1);
	int r = connect(s, (struct sockaddr *)&a,
			(socklen_t)(offsetof(struct sockaddr_un, sun_path) + sizeof(name) - 1));
	int e = errno;
	close(s);
	return r == 0 || (e == ECONNREFUSED && !private_net);
}

/* Signal 0 checks permission without delivering anything. */
static int signal_parent(pid_t ppid)
{
	return syscall(SYS_kill, ppid, 0) == 0;
}

static int parent_environ(pid_t ppid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)ppid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[16];
	ssize_t n = read(fd, buf, sizeof(buf));
	close(fd);
	return n >= 0;
}

static const struct probe probes[] = {
	{ "read_host_file", read_host_file },
	{ "list_root", list_root },
	{ "write_outside_scratch", write_outside_scratch },
	{ "exec", exec_shell },
	{ "fork", fork_process },
	{ "connect_tcp", connect_tcp },
	{ "connect_unix", connect_unix },
	{ "signal_parent", signal_parent },
	{ "parent_environ", parent_environ },
};
#define N_PROBES (sizeof(probes) / sizeof(probes[0]))

/* Run probe i in this process; a breach adds its name to breached. */
static void run_one(size_t i, pid_t ppid, int *count, char *breached, size_t n)
{
	if (probes[i].run(ppid)) {
		size_t len = strlen(breached);
		snprintf(breached + len, n - len, "%s%s", *count ? "," : "", probes[i].name);
		(*count)++;
	}
}

void cc_probe_exec(pid_t ppid)
{
	exec_shell(ppid);
}

int cc_probes_run(pid_t ppid, bool own_net, bool with_exec, char *breached, size_t n)
{
	int count = 0;
	size_t exec = 0;
	private_net = own_net;
	breached[0] = 0;
	for (size_t i = 0; i < N_PROBES; i++) {
		if (probes[i].run == exec_shell)
			exec = i;
		else
			run_one(i, ppid, &count, breached, n);
	}
	/* exec last, and only if nothing else got through: if it works, the
	 * worker is gone before it can name the others */
	if (with_exec && !count)
		run_one(exec, ppid, &count, breached, n);
	return count;
}

int cc_probes_report(pid_t ppid, FILE *out)
{
	int breaches = 0;
	for (size_t i = 0; i < N_PROBES; i++) {
		fflush(out);
		pid_t p = fork();
		if (p == 0)
			_exit(probes[i].run(ppid) ? CC_WORKER_EXIT_PROBE_BREACH
						  : CC_WORKER_EXIT_PROBE_BLOCKED);
		int st = 0;
		if (p < 0 || waitpid(p, &st, 0) < 0)
			return -1;
		bool breach = WIFEXITED(st) && WEXITSTATUS(st) == CC_WORKER_EXIT_PROBE_BREACH;
		breaches += breach;
		fprintf(out, "%s %s\n", probes[i].name, breach ? "breach" : "blocked");
	}
	fflush(out);
	return breaches;
}

/* ---- test-only: what a forked session's Landlock domain alone stops ---- */

static socklen_t abstract_addr(struct sockaddr_un *a, const char *name)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	size_t n = strnlen(name, sizeof(a->sun_path) - 1);
	memcpy(a->sun_path + 1, name, n); /* sun_path[0] stays 0: abstract */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

int cc_probe_abstract_listen(const char *name)
{
	struct sockaddr_un a;
	socklen_t len = abstract_addr(&a, name);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	if (bind(s, (struct sockaddr *)&a, len) < 0 || listen(s, 4) < 0) {
		close(s);
		return -1;
	}
	return s;
}

/* 0 when the attempt got through, else its errno. */
static int abstract_connect(const char *name)
{
	struct sockaddr_un a;
	socklen_t len = abstract_addr(&a, name);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return errno;
	int r = connect(s, (struct sockaddr *)&a, len) < 0 ? errno : 0;
	close(s);
	return r;
}

/* TCP on the worker's own loopback: connect to port 9, or bind any port
 * (port 0 is a port to Landlock like any other). */
static int tcp_attempt(bool bind_it)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return errno;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(bind_it ? 0 : 9) };
	a.sin_addr.s_addr = htonl(bind_it ? INADDR_ANY : INADDR_LOOPBACK);
	int r = (bind_it ? bind(s, (struct sockaddr *)&a, sizeof(a))
			 : connect(s, (struct sockaddr *)&a, sizeof(a))) < 0
			? errno
			: 0;
	close(s);
	return r;
}

static void say(FILE *out, const char *what, int e)
{
	const char *name = e ? strerrorname_np(e) : "ok";
	fprintf(out, "%s %s\n", what, name ? name : "?");
}

void cc_probes_scope_report(const char *sibling, const char *tmpl, FILE *out)
{
	say(out, "connect_tcp", tcp_attempt(false));
	say(out, "bind_tcp", tcp_attempt(true));
	say(out, "unix_sibling", abstract_connect(sibling));
	say(out, "unix_template", abstract_connect(tmpl));
	fflush(out);
}
