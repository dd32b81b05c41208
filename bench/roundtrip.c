/* cc-roundtrip: the warm round trips of issue 19 on a shared machine.
 * Where cc-bench prints one median, this prints the spread, so a run on
 * a loaded machine can still be read: the 10th percentile and the median
 * of R passes of N "1+1" evals each (a pass's median, then the best and
 * the median of those), and the same for a synchronous tool call (a guest
 * loop of 2,000 calls per pass, divided by 2,000). All µs, on one spawned
 * runtime (sandbox require) warmed up with 100 evals first.
 * Prints "eval_best eval_median tool_best tool_median", then a line with
 * the CPU time per eval and per call of the worker (its process tree, from
 * /proc, 10 ms ticks) and of this process over all the passes: with the
 * spin before a sleep (CC_SPIN_NS, src/common/frame.h) set to 0 that is
 * the work of a round trip, which a loaded machine does not change much.
 * usage: cc-roundtrip python|javascript [N] [R] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "codecage.h"
#include "timing.h"

static void check(cc_result *r, const char *what)
{
	if (!cc_result_ok(r)) {
		fprintf(stderr, "cc-roundtrip: %s: %s\n", what, cc_result_error_message(r));
		exit(1);
	}
	cc_result_free(r);
}

/* CPU seconds of pid and its descendants (/proc: user + system). */
static double tree_cpu(int pid)
{
	char path[96], buf[2048];
	double t = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	unsigned long ut = 0, st = 0;
	if (p &&
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
		t = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, pid);
	f = fopen(path, "r");
	int child;
	while (f && fscanf(f, "%d", &child) == 1)
		t += tree_cpu(child);
	if (f)
		fclose(f);
	return t;
}

static double self_cpu(void)
{
	struct rusage r;
	getrusage(RUSAGE_SELF, &r);
	return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
	       (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

static int nop_tool(void *user, const cc_value *args, cc_value **result, cc_tool_error *err)
{
	(void)user;
	(void)args;
	(void)err;
	*result = NULL;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: cc-roundtrip python|javascript [N] [R]\n");
		return 2;
	}
	cc_language lang = strcmp(argv[1], "python") ? CC_LANG_JAVASCRIPT : CC_LANG_PYTHON;
	int n = argc > 2 ? atoi(argv[2]) : 1000, rounds = argc > 3 ? atoi(argv[3]) : 9;
	if (n < 1 || rounds < 1)
		return 2;
	cc_options o;
	cc_options_init(&o, lang);
	cc_runtime *rt = NULL;
	cc_error err = { 0 };
	if (cc_runtime_new(&o, &rt, &err) < 0 ||
	    cc_runtime_bind_tool(rt, "f", nop_tool, NULL, &err) < 0) {
		fprintf(stderr, "cc-roundtrip: %s\n", err.message);
		return 1;
	}
	for (int i = 0; i < 100; i++)
		check(cc_runtime_eval(rt, "1+1", 3, 0), "1+1");
	double *one = calloc((size_t)n, sizeof(double)),
	       *ev = calloc((size_t)rounds, sizeof(double));
	double *tool = calloc((size_t)rounds, sizeof(double));
	const char *loop = lang == CC_LANG_PYTHON ? "for _ in range(2000): f()"
						  : "for (let i = 0; i < 2000; i++) f()";
	int pid = cc_runtime_pid(rt);
	double cpu[4] = { 0 }; /* eval: worker, host; tool: worker, host */
	for (int r = 0; r < rounds; r++) {
		double w = tree_cpu(pid), h = self_cpu();
		for (int i = 0; i < n; i++) {
			double t = now();
			check(cc_runtime_eval(rt, "1+1", 3, 0), "1+1");
			one[i] = now() - t;
		}
		ev[r] = median(one, n) * 1e6;
		double w2 = tree_cpu(pid), h2 = self_cpu();
		cpu[0] += w2 - w;
		cpu[1] += h2 - h;
		double t = now();
		check(cc_runtime_eval(rt, loop, strlen(loop), 0), "tool loop");
		tool[r] = (now() - t) / 2000 * 1e6;
		cpu[2] += tree_cpu(pid) - w2;
		cpu[3] += self_cpu() - h2;
	}
	qsort(ev, (size_t)rounds, sizeof(double), cmp_double);
	qsort(tool, (size_t)rounds, sizeof(double), cmp_double);
	printf("%.1f %.1f %.1f %.1f\n", ev[0], median(ev, rounds), tool[0], median(tool, rounds));
	printf("cpu: eval worker %.1f host %.1f, tool worker %.1f host %.1f\n",
	       cpu[0] / rounds / n * 1e6, cpu[1] / rounds / n * 1e6, cpu[2] / rounds / 2000 * 1e6,
	       cpu[3] / rounds / 2000 * 1e6);
	cc_runtime_close(rt);
	free(one);
	free(ev);
	free(tool);
	return 0;
}
