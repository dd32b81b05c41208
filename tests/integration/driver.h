/* Shared by the C test drivers (libdriver.c, tools_driver.c,
 * async_tools_driver.c): one line per
 * check, "ok ..." or "FAIL ...", and the host's own resource readings.
 * Each driver ends with printf("%d failed\n", failures). */
#ifndef CC_TESTS_DRIVER_H
#define CC_TESTS_DRIVER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codecage.h"

static int failures;

/* 1 when this driver runs under AddressSanitizer (build-asan): freed memory
 * waits in ASan's quarantine, so the resident set's growth measures no leak
 * there; LeakSanitizer checks for leaks at exit instead. */
#if defined(__SANITIZE_ADDRESS__)
#define DRIVER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DRIVER_ASAN 1
#endif
#endif
#ifndef DRIVER_ASAN
#define DRIVER_ASAN 0
#endif

/* cc_options_init, then the worker directory $CC_DRIVER_WORKER_DIR when it
 * is set (borrowed from the environment). The sanitized build's drivers
 * (build-asan, tests/integration/test_sanitized.py) link the ASan/UBSan
 * libcodecage but spawn the plain build's workers (tests/conftest.py's
 * ASAN_BUILD says why). */
static inline void driver_options_init(cc_options *o, cc_language lang)
{
	cc_options_init(o, lang);
	const char *dir = getenv("CC_DRIVER_WORKER_DIR");
	if (dir && *dir)
		o->worker_dir = dir;
}

/* cond is evaluated once (it may start or close things). */
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		int check_ok_ = !!(cond);                                                          \
		printf(check_ok_ ? "ok   " : "FAIL ");                                             \
		failures += !check_ok_;                                                            \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
	} while (0)

/* A runtime with options o; exits the driver with a FAIL line when it
 * cannot start. */
static inline cc_runtime *driver_start_opts(const cc_options *o)
{
	cc_runtime *rt = NULL;
	cc_error err = { 0 };
	if (cc_runtime_new(o, &rt, &err) < 0) {
		printf("FAIL runtime_new: %s: %s\n", cc_error_kind_name(err.kind), err.message);
		exit(1);
	}
	return rt;
}

/* A runtime in sandbox mode auto with a timeout_s deadline (and
 * max_result bytes of result cap unless 0), as driver_start_opts. */
static inline cc_runtime *driver_start(cc_language lang, double timeout_s, uint64_t max_result)
{
	cc_options o;
	driver_options_init(&o, lang);
	o.sandbox = CC_SANDBOX_AUTO;
	o.limits.timeout_s = timeout_s;
	if (max_result)
		o.limits.max_result = max_result;
	return driver_start_opts(&o);
}

/* An eval's string value (or "error: MESSAGE", or "(nothing)") in a
 * heap string the caller frees. */
static inline char *eval_text(cc_runtime *rt, const char *code)
{
	cc_result *r = cc_runtime_eval(rt, code, strlen(code), 0);
	const cc_value *v = r ? cc_result_value(r) : NULL;
	char *out = NULL;
	if (r && cc_result_ok(r) && cc_value_type_of(v) == CC_VALUE_STRING)
		out = strdup(v->u.str.ptr);
	else if (r && !cc_result_ok(r) &&
		 asprintf(&out, "error: %s", cc_result_error_message(r)) < 0)
		out = NULL;
	cc_result_free(r);
	return out ? out : strdup("(nothing)");
}

/* The host's resident set, KiB (/proc/self/status VmRSS); -1 if unknown. */
static inline long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			v = atol(line + 6);
	if (f)
		fclose(f);
	return v;
}

/* How many child processes the host has (a leaked worker shows here). */
static inline long children(void)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/self/task/%d/children", getpid());
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	long c = 0;
	for (char *p = strtok(buf, " \n"); p; p = strtok(NULL, " \n"))
		c++;
	return c;
}

#endif
