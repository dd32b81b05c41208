/* cc-floor: what this machine charges for the operations a session start
 * and a round trip are made of, so the benchmark's numbers can be read
 * against the floor they cannot go below. Nothing of codecage runs here.
 *   fork_us      fork() of this small process, until the child has run
 *                and the parent knows it (best of 50)
 *   fault_us     one first-touch page fault of anonymous memory
 *   cow_us       one copy-on-write fault in a forked child
 *   seccomp_us   installing a 128-instruction seccomp filter (the kernel
 *                JIT-compiles it)
 *   wake_us      a ping-pong over a socketpair when the peer slept 5 ms
 *                first (its CPU idle), minus nothing: the wake-up as seen
 *   hot_us       the same ping-pong back to back (median of 2000)
 * Prints "name value" lines. usage: cc-floor */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

#define PAGES 2000

static double best_fork(void)
{
	double best = 1e9;
	for (int i = 0; i < 50; i++) {
		int p[2];
		if (pipe(p) < 0)
			exit(1);
		double t = now();
		pid_t c = fork();
		if (c == 0)
			_exit(write(p[1], "x", 1) == 1 ? 0 : 1);
		char b;
		if (read(p[0], &b, 1) != 1)
			exit(1);
		double d = now() - t;
		waitpid(c, NULL, 0);
		close(p[0]);
		close(p[1]);
		if (d < best)
			best = d;
	}
	return best * 1e6;
}

static double touch(char *m)
{
	double t = now();
	for (size_t i = 0; i < PAGES; i++)
		m[i * 4096] = 1;
	return (now() - t) / PAGES * 1e6;
}

/* Run fn(arg) in a forked child and return the number it measured. */
static double in_child(double (*fn)(void *), void *arg)
{
	int p[2];
	if (pipe(p) < 0)
		exit(1);
	pid_t c = fork();
	if (c == 0) {
		double v = fn(arg);
		_exit(write(p[1], &v, sizeof(v)) == sizeof(v) ? 0 : 1);
	}
	double v = 0;
	if (c < 0 || read(p[0], &v, sizeof(v)) != sizeof(v))
		exit(1);
	waitpid(c, NULL, 0);
	close(p[0]);
	close(p[1]);
	return v;
}

static double touch_arg(void *m)
{
	return touch(m);
}

/* Every page was touched before the fork: each write is a COW fault. */
static double cow_fault(void)
{
	char *m = mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);
	if (m == MAP_FAILED)
		exit(1);
	touch(m);
	double us = in_child(touch_arg, m);
	munmap(m, PAGES * 4096);
	return us;
}

static double install(void *prog)
{
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	double t = now();
	syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog);
	return now() - t;
}

static double seccomp_install(void)
{
	struct sock_filter f[130];
	int n = 0;
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	for (int i = 0; i < 128; i++)
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1000 + i, 0, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { (unsigned short)n, f };
	double best = 1e9;
	for (int i = 0; i < 20; i++) {
		double d = in_child(install, &prog);
		if (d < best)
			best = d;
	}
	return best * 1e6;
}

/* Ping-pong medians: after a 5 ms sleep of the peer, and back to back. */
static void pingpong(double *wake, double *hot)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		exit(1);
	pid_t c = fork();
	if (c == 0) {
		char b;
		close(sv[0]);
		while (read(sv[1], &b, 1) == 1)
			if (write(sv[1], &b, 1) != 1)
				break;
		_exit(0);
	}
	enum {
		N = 2000,
		W = 100
	};
	static double a[N], w[W];
	char b = 'x';
	for (int i = 0; i < N + W; i++) {
		if (i >= N) {
			struct timespec ts = { 0, 5000000 };
			nanosleep(&ts, NULL);
		}
		double t = now();
		if (write(sv[0], &b, 1) != 1 || read(sv[0], &b, 1) != 1)
			exit(1);
		if (i < N)
			a[i] = now() - t;
		else
			w[i - N] = now() - t;
	}
	close(sv[0]);
	waitpid(c, NULL, 0);
	qsort(a, N, sizeof(a[0]), cmp_double);
	qsort(w, W, sizeof(w[0]), cmp_double);
	*hot = a[N / 2] * 1e6;
	*wake = w[W / 2] * 1e6;
}

int main(void)
{
	char *m = mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);
	if (m == MAP_FAILED)
		return 1;
	double wake, hot;
	pingpong(&wake, &hot);
	printf("fork_us %.1f\n", best_fork());
	printf("fault_us %.2f\n", touch(m));
	printf("cow_us %.2f\n", cow_fault());
	printf("seccomp_us %.1f\n", seccomp_install());
	printf("wake_us %.1f\n", wake);
	printf("hot_us %.1f\n", hot);
	return 0;
}
