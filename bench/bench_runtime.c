/* cc-bench: times the library's hot paths, for bench/run.py.
 *   cold: a new runtime plus its first "1+1" eval, then close
 *   warm: one "1+1" eval round trip on a live runtime
 *   tool: one synchronous host tool call (guest -> host -> guest), from a
 *         guest loop of 10,000 calls; the median of 9 such evals
 * Prints "cold_median_ms warm_median_us tool_median_us".
 * usage: cc-bench python|javascript COLD_N WARM_N [MODE]
 * WARM_N 0: the cold runs only (prints 0 for warm and tool)
 * MODE, default require:
 *   require|auto|off  a spawned worker in that sandbox mode
 *   fork              a session forked from a fork server (preload
 *                     json,re,math,datetime), fully confined
 *   fork-numpy        the same with numpy preloaded too
 *   pool              checkout of a ready session from a full pool of 2
 *                     (fork server, warmed up), plus its first eval
 *   fork-mem          prints only the private memory (KiB) of an idle
 *                     forked session with numpy preloaded, after one eval
 *   fork-files        as fork, each session with a 16 MiB scratch of its
 *                     own and one read-only grant (the current directory at
 *                     /data): issue 14's "within 1.5x of fork"
 * Environment (JavaScript, every mode): CC_BENCH_LIBRARIES, a comma-separated
 * list of libraries (cc_options.libraries: files, package directories or
 * names), with CC_BENCH_NODE_MODULES for names, loads them with the web
 * polyfills into every runtime, template and pool: issue 15's rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codecage.h"
#include "timing.h"

static cc_sandbox_mode bench_mode = CC_SANDBOX_REQUIRE;

/* CC_BENCH_LIBRARIES split at commas into o->libraries (web polyfills on);
 * nothing when it is unset or empty, or for Python. */
static void add_libraries(cc_options *o)
{
	static char *copy;
	static const char *names[64];
	static size_t n;
	const char *env = getenv("CC_BENCH_LIBRARIES");
	if (o->language != CC_LANG_JAVASCRIPT || !env || !*env)
		return;
	if (!copy) {
		copy = strdup(env);
		for (char *tok = strtok(copy, ","); tok && n < 64; tok = strtok(NULL, ","))
			names[n++] = tok;
	}
	o->libraries = names;
	o->n_libraries = n;
	o->node_modules = getenv("CC_BENCH_NODE_MODULES");
	o->web_polyfills = true;
}

static cc_runtime *start(cc_language lang)
{
	cc_options o;
	cc_options_init(&o, lang);
	o.sandbox = bench_mode;
	add_libraries(&o);
	cc_runtime *rt = NULL;
	cc_error err = { 0 };
	if (cc_runtime_new(&o, &rt, &err) < 0) {
		fprintf(stderr, "cc-bench: %s\n", err.message);
		exit(1);
	}
	return rt;
}

static void eval_2(cc_runtime *rt)
{
	cc_result *r = cc_runtime_eval(rt, "1+1", 3, 0);
	const cc_value *v = cc_result_value(r);
	if (!cc_result_ok(r) || cc_value_type_of(v) != CC_VALUE_INT || v->u.i != 2) {
		fprintf(stderr, "cc-bench: 1+1 failed: %s\n", cc_result_error_message(r));
		exit(1);
	}
	cc_result_free(r);
}

static int nop_tool(void *user, const cc_value *args, cc_value **result, cc_tool_error *err)
{
	(void)user;
	(void)args;
	(void)err;
	*result = NULL;
	return 0;
}

/* Median per-call time of a synchronous tool call, seconds. */
static double tool_call(cc_runtime *rt, cc_language lang)
{
	cc_error err = { 0 };
	if (cc_runtime_bind_tool(rt, "f", nop_tool, NULL, &err) < 0) {
		fprintf(stderr, "cc-bench: bind: %s\n", err.message);
		exit(1);
	}
	const char *code = lang == CC_LANG_PYTHON ? "for _ in range(10000): f()"
						  : "for (let i = 0; i < 10000; i++) f()";
	double per[9];
	for (int i = 0; i < 9; i++) {
		double t = now();
		cc_result *r = cc_runtime_eval(rt, code, strlen(code), 0);
		per[i] = (now() - t) / 10000;
		if (!cc_result_ok(r)) {
			fprintf(stderr, "cc-bench: tool loop: %s\n", cc_result_error_message(r));
			exit(1);
		}
		cc_result_free(r);
	}
	return median(per, 9);
}

/* Light and numpy preload lists for the fork-server modes. */
#define PRELOAD_LIGHT "json,re,math,datetime"
#define PRELOAD_NUMPY "json,re,math,datetime,numpy"

static cc_forkserver *fork_server(cc_language lang, const char *preload, bool files)
{
	cc_options o;
	cc_options_init(&o, lang);
	static cc_mount grant = { .host = ".", .guest = "/data" };
	add_libraries(&o);
	if (files) {
		o.scratch_bytes = 16u << 20;
		o.mounts = &grant;
		o.n_mounts = 1;
	}
	cc_forkserver *fs = NULL;
	cc_error err = { 0 };
	if (cc_forkserver_new(&o, preload, &fs, &err) < 0) {
		fprintf(stderr, "cc-bench: fork server: %s\n", err.message);
		exit(1);
	}
	return fs;
}

static cc_runtime *fork_one(cc_forkserver *fs)
{
	cc_runtime *rt = NULL;
	cc_error err = { 0 };
	if (cc_forkserver_spawn(fs, &rt, &err) < 0) {
		fprintf(stderr, "cc-bench: fork: %s\n", err.message);
		exit(1);
	}
	return rt;
}

/* Private memory of a process, KiB (smaps_rollup: Private_Clean +
 * Private_Dirty): what one more session costs beyond what it shares. */
static long private_kib(int pid)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pid);
	FILE *f = fopen(path, "r");
	long total = 0, v;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Private_Clean: %ld", &v) == 1 ||
		    sscanf(line, "Private_Dirty: %ld", &v) == 1)
			total += v;
	fclose(f);
	return total;
}

/* On one live runtime (forked from fs, else spawned): the median of warm_n
 * "1+1" round trips into *warm_us and a tool call's into *tool_us, µs;
 * warm holds warm_n doubles of scratch. */
static void warm_and_tool(cc_forkserver *fs, cc_language lang, double *warm, int warm_n,
			  double *warm_us, double *tool_us)
{
	cc_runtime *rt = fs ? fork_one(fs) : start(lang);
	for (int i = 0; i < 100; i++)
		eval_2(rt);
	for (int i = 0; i < warm_n; i++) {
		double t = now();
		eval_2(rt);
		warm[i] = now() - t;
	}
	*warm_us = median(warm, warm_n) * 1e6;
	*tool_us = tool_call(rt, lang) * 1e6;
	cc_runtime_close(rt);
}

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: cc-bench python|javascript COLD_N WARM_N "
				"[require|auto|off|fork|fork-numpy|pool|fork-mem|fork-files]\n"
				"environment: CC_BENCH_LIBRARIES=A,B CC_BENCH_NODE_MODULES=DIR "
				"(JavaScript)\n");
		return 2;
	}
	cc_language lang = strcmp(argv[1], "python") ? CC_LANG_JAVASCRIPT : CC_LANG_PYTHON;
	int cold_n = atoi(argv[2]), warm_n = atoi(argv[3]);
	const char *mode = argc > 4 ? argv[4] : "require";
	static const char *const modes[] = { "require",	   "auto", "off",      "fork",
					     "fork-numpy", "pool", "fork-mem", "fork-files" };
	bool known = false;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		known |= !strcmp(mode, modes[i]);
	if (!known) {
		fprintf(stderr, "cc-bench: unknown mode %s\n", mode);
		return 2;
	}
	if (!strcmp(mode, "off"))
		bench_mode = CC_SANDBOX_OFF;
	else if (!strcmp(mode, "auto"))
		bench_mode = CC_SANDBOX_AUTO;
	bool numpy = !strcmp(mode, "fork-numpy") || !strcmp(mode, "fork-mem");
	bool forked = !strncmp(mode, "fork", 4), pooled = !strcmp(mode, "pool");
	const char *preload = numpy ? PRELOAD_NUMPY : PRELOAD_LIGHT;
	cc_forkserver *fs = forked ? fork_server(lang, preload, !strcmp(mode, "fork-files")) : NULL;
	if (!strcmp(mode, "fork-mem")) {
		/* an idle session after its first eval */
		cc_runtime *rt = fork_one(fs);
		eval_2(rt);
		printf("%ld\n", private_kib(cc_runtime_pid(rt)));
		cc_runtime_close(rt);
		cc_forkserver_close(fs);
		return 0;
	}
	cc_pool *pool = NULL;
	if (pooled) {
		cc_options o;
		cc_options_init(&o, lang);
		add_libraries(&o);
		cc_error err = { 0 };
		if (cc_pool_new(&o, 2, true, PRELOAD_LIGHT, &pool, &err) < 0) {
			fprintf(stderr, "cc-bench: pool: %s\n", err.message);
			return 1;
		}
	}
	double *cold = calloc((size_t)cold_n, sizeof(double));
	double *warm = calloc((size_t)warm_n, sizeof(double));
	for (int i = 0; i < cold_n; i++) {
		cc_runtime *rt = NULL;
		/* a pool is measured full: checkout, not its refill rate */
		while (pool && cc_pool_ready(pool) < 2)
			usleep(1000);
		double t = now();
		if (pool) {
			cc_error err = { 0 };
			if (cc_pool_checkout(pool, 30, &rt, &err) < 0) {
				fprintf(stderr, "cc-bench: checkout: %s\n", err.message);
				return 1;
			}
		} else {
			rt = fs ? fork_one(fs) : start(lang);
		}
		eval_2(rt);
		cold[i] = now() - t;
		cc_runtime_close(rt);
	}
	double warm_us = 0, tool_us = 0;
	if (warm_n > 0)
		warm_and_tool(fs, lang, warm, warm_n, &warm_us, &tool_us);
	cc_pool_close(pool);
	cc_forkserver_close(fs);
	printf("%.3f %.1f %.1f\n", median(cold, cold_n) * 1e3, warm_us, tool_us);
	free(cold);
	free(warm);
	return 0;
}
