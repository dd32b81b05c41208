/* cc-pingpong: the floor for any socket round trip on this machine: two
 * processes bouncing 8 bytes over a socketpair with blocking read/write,
 * no codecage at all. bench/run.py prints it next to the tool-call round
 * trip so the two can be compared. usage: cc-pingpong [N] */
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000;
	int sv[2];
	char b[64] = { 0 };
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[0]);
		while (read(sv[1], b, sizeof(b)) > 0)
			if (write(sv[1], b, 8) != 8)
				_exit(1);
		_exit(0);
	}
	close(sv[1]);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < n; i++)
		if (write(sv[0], b, 8) != 8 || read(sv[0], b, sizeof(b)) <= 0)
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	close(sv[0]);
	waitpid(pid, NULL, 0);
	printf("%.1f\n",
	       ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / n /
		       1000);
	return 0;
}
