/* cc-libdriver: drives the public C API for the integration tests
 * (tests/integration/test_library.py). Each scenario prints one line per
 * check, "ok ..." or "FAIL ...", and exits 0 only when every check passed.
 *
 * usage: cc-libdriver roundtrip LANG | state LANG | many LANG N | dead LANG
 *        | files DIR | grants DIR | shared LANG
 *        | afterstop LANG | deadlines LANG | thread LANG | badopts | fake WORKER_DIR TIMEOUT */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codecage.h"
#include "driver.h"

static cc_language lang_of(const char *s)
{
	return !strcmp(s, "python") ? CC_LANG_PYTHON : CC_LANG_JAVASCRIPT;
}

static cc_runtime *start(cc_language lang)
{
	return driver_start(lang, 10, 0);
}

static cc_value *nested(unsigned depth)
{
	cc_value *v = cc_value_new_string("bottom", 6);
	for (unsigned i = 0; i < depth; i++) {
		cc_value *a = cc_value_new_array();
		cc_value_array_push(a, v);
		v = a;
	}
	return v;
}

/* Every value type of DESIGN.md section 5, host -> guest -> host. */
static void roundtrip(cc_language lang)
{
	cc_runtime *rt = start(lang);
	struct {
		const char *name;
		cc_value *v;
	} cases[] = {
		{ "null", NULL },
		{ "true", cc_value_new_bool(true) },
		{ "int", cc_value_new_int(-42) },
		{ "int64 max", cc_value_new_int(INT64_MAX) },
		{ "float", cc_value_new_float(0.1) },
		{ "negative zero", cc_value_new_float(-0.0) },
		{ "NaN", cc_value_new_float(NAN) },
		{ "Infinity", cc_value_new_float(-INFINITY) },
		{ "bigint", cc_value_new_bigint("-123456789012345678901234567890", 31) },
		/* 15 bytes: the length once said 17, reading past the literal
		 * (the ASan build of this driver caught it) */
		{ "string", cc_value_new_string("h\xc3\xa9llo \xf0\x9f\x98\x80 \xe4\xb8\xad", 15) },
		{ "bytes", cc_value_new_bytes("\x00\x01\xfe\xff", 4) },
		{ "timestamp", cc_value_new_timestamp(1700000000, 123000000) },
		{ "pre-epoch timestamp", cc_value_new_timestamp(-86400, 500000000) },
		{ "nested at the cap", nested(CC_VALUE_MAX_DEPTH) },
	};
	cc_value *m = cc_value_new_map();
	cc_value_map_set(m, "a", 1, cc_value_new_int(1));
	cc_value *arr = cc_value_new_array();
	cc_value_array_push(arr, cc_value_new_string("x", 1));
	cc_value_array_push(arr, NULL);
	cc_value_map_set(m, "list", 4, arr);
	cc_value_map_set(m, "__proto__", 9, cc_value_new_bool(false));

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]) + 1; i++) {
		const char *name = i < sizeof(cases) / sizeof(cases[0]) ? cases[i].name : "map";
		cc_value *v = i < sizeof(cases) / sizeof(cases[0]) ? cases[i].v : m;
		cc_error err = { 0 };
		int rc = cc_runtime_set_global(rt, "v", v, &err);
		CHECK(rc == 0, "%s: set_global (%s)", name, err.message ? err.message : "");
		cc_error_clear(&err);
		cc_result *r = cc_runtime_eval(rt, "v", 1, 0);
		CHECK(cc_result_ok(r) && cc_value_equal(v, cc_result_value(r)),
		      "%s: comes back equal (%s %s)", name, cc_result_error_type(r),
		      cc_result_error_message(r));
		cc_result_free(r);
		cc_value_free(v);
	}
	/* Issue 27: dates, durations, fixed offsets, zoned timestamps and
	 * paths. A Python guest keeps each as itself; a JavaScript one makes
	 * each its nearest equivalent (README's Values table). */
	struct {
		const char *name;
		cc_value *v, *js;
	} ext[] = {
		{ "date", cc_value_new_date(19782), cc_value_new_timestamp(19782LL * 86400, 0) },
		{ "duration", cc_value_new_duration(-2, 500000000), cc_value_new_float(-1500.0) },
		{ "timezone", cc_value_new_timezone(-18000000000LL, "EST", 3),
		  cc_value_new_string("-05:00", 6) },
		{ "zoned timestamp",
		  cc_value_new_zoned_timestamp(1700000000, 123000000, 19800000000LL, NULL, 0),
		  cc_value_new_timestamp(1700000000, 123000000) },
		{ "path", cc_value_new_path("/tmp/\xc3\xa9", 7),
		  cc_value_new_string("/tmp/\xc3\xa9", 7) },
	};
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		cc_error err = { 0 };
		const cc_value *want = lang == CC_LANG_PYTHON ? ext[i].v : ext[i].js;
		int rc = cc_runtime_set_global(rt, "v", ext[i].v, &err);
		CHECK(rc == 0, "%s: set_global (%s)", ext[i].name, err.message ? err.message : "");
		cc_error_clear(&err);
		cc_result *r = cc_runtime_eval(rt, "v", 1, 0);
		CHECK(cc_result_ok(r) && cc_value_equal(want, cc_result_value(r)),
		      "%s: comes back as %s (%s %s)", ext[i].name,
		      lang == CC_LANG_PYTHON ? "itself" : "its nearest equivalent",
		      cc_result_error_type(r), cc_result_error_message(r));
		cc_result_free(r);
		cc_value_free(ext[i].v);
		cc_value_free(ext[i].js);
	}
	/* past the depth cap: refused on the host side with invalid_input */
	cc_value *deep = nested(CC_VALUE_MAX_DEPTH + 1);
	cc_error err = { 0 };
	int rc = cc_runtime_set_global(rt, "v", deep, &err);
	CHECK(rc < 0 && err.kind == CC_ERR_INVALID_INPUT, "past the depth cap: invalid_input (%s)",
	      err.message ? err.message : "accepted");
	cc_error_clear(&err);
	cc_value_free(deep);
	/* a timestamp no engine can hold: guest_error, runtime kept */
	cc_value *far = cc_value_new_timestamp(INT64_MAX / 2, 0);
	rc = cc_runtime_set_global(rt, "v", far, &err);
	CHECK(rc < 0 && err.kind == CC_ERR_GUEST && cc_runtime_alive(rt),
	      "far timestamp: guest_error, runtime alive (%s)",
	      err.message ? err.message : "accepted");
	cc_error_clear(&err);
	cc_value_free(far);
	/* a hand-built duplicate key: invalid_input before anything is sent */
	cc_value *dup = cc_value_new_map();
	cc_value_map_set(dup, "a", 1, NULL);
	cc_value_map_set(dup, "b", 1, NULL);
	dup->u.map.keys[1][0] = 'a';
	rc = cc_runtime_set_global(rt, "v", dup, &err);
	CHECK(rc < 0 && err.kind == CC_ERR_INVALID_INPUT && cc_runtime_alive(rt),
	      "duplicate keys: invalid_input, runtime alive");
	cc_error_clear(&err);
	cc_value_free(dup);
	rc = cc_runtime_set_global(rt, "not an identifier", NULL, &err);
	CHECK(rc < 0 && err.kind == CC_ERR_INVALID_INPUT, "bad global name: invalid_input");
	cc_error_clear(&err);
	CHECK(cc_runtime_alive(rt), "runtime still alive");
	cc_runtime_close(rt);
}

static void state(cc_language lang)
{
	cc_runtime *rt = start(lang);
	const char *set = lang == CC_LANG_PYTHON ? "counter = 41" : "var counter = 41";
	cc_result *r = cc_runtime_eval(rt, set, strlen(set), 0);
	CHECK(cc_result_ok(r), "define a global");
	cc_result_free(r);
	r = cc_runtime_eval(rt, "counter + 1", 11, 0);
	const cc_value *v = cc_result_value(r);
	CHECK(cc_result_ok(r) && cc_value_type_of(v) == CC_VALUE_INT && v->u.i == 42,
	      "the global persists into the next eval");
	cc_result_free(r);
	cc_runtime_close(rt);
}

static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	int n = 0;
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* N runtimes in a row: no fd, process or memory growth. */
static void many(cc_language lang, int n)
{
	/* warm up allocator and lazy libc state first */
	for (int i = 0; i < 5; i++)
		cc_runtime_close(start(lang));
	int fds0 = count_dir("/proc/self/fd");
	long rss0 = rss_kib();
	int bad = 0;
	for (int i = 0; i < n; i++) {
		cc_runtime *rt = start(lang);
		cc_result *r = cc_runtime_eval(rt, "1 + 1", 5, 0);
		const cc_value *v = cc_result_value(r);
		if (!cc_result_ok(r) || cc_value_type_of(v) != CC_VALUE_INT || v->u.i != 2)
			bad++;
		cc_result_free(r);
		cc_runtime_close(rt);
	}
	int fds1 = count_dir("/proc/self/fd");
	long rss1 = rss_kib();
	CHECK(bad == 0, "%d runtimes each returned 2 (%d did not)", n, bad);
	CHECK(fds1 == fds0, "open fds before %d, after %d", fds0, fds1);
	CHECK(children() == 0, "no child process left (%ld)", children());
	if (DRIVER_ASAN)
		printf("skip RSS growth under ASan (LeakSanitizer checks at exit)\n");
	else
		CHECK(rss1 - rss0 < 4096, "RSS grew by %ld KiB (limit 4096)", rss1 - rss0);
}

/* Children of every thread of this process (orphans are handed to any
 * thread of a subreaper). */
static long all_children(void)
{
	DIR *d = opendir("/proc/self/task");
	long n = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[300], buf[4096];
		snprintf(path, sizeof(path), "/proc/self/task/%s/children", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t k = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[k] = 0;
		for (char *p = strtok(buf, " \n"); p; p = strtok(NULL, " \n"))
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

/* A host that is a subreaper (pid 1 of a container, or by prctl) gets the
 * workers' namespace children when their monitors die: closed runtimes
 * must not leave them behind as zombies (regression: they did). */
static void subreaper(cc_language lang, int n)
{
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	for (int i = 0; i < n; i++) {
		cc_runtime *rt = start(lang);
		cc_result *r = cc_runtime_eval(rt, "1", 1, 0);
		cc_result_free(r);
		cc_runtime_close(rt);
	}
	cc_runtime *rt = start(lang); /* and one ended by its deadline */
	cc_result *r =
		cc_runtime_eval(rt, lang == CC_LANG_PYTHON ? "while True: pass" : "while (true) {}",
				lang == CC_LANG_PYTHON ? 16 : 15, 0.2);
	cc_result_free(r);
	cc_runtime_close(rt);
	CHECK(all_children() == 0, "no zombie or live child after %d runtimes (%ld)", n + 1,
	      all_children());
}

/* A dead runtime answers worker_crashed at once; a new one works. */
static void dead(cc_language lang)
{
	cc_runtime *rt = start(lang);
	const char *crash =
		lang == CC_LANG_PYTHON ? "import ctypes; ctypes.string_at(0)" : "while (true) {}";
	double t = lang == CC_LANG_PYTHON ? 5 : 0.2;
	cc_result *r = cc_runtime_eval(rt, crash, strlen(crash), t);
	cc_error_kind k = cc_result_error_kind(r);
	CHECK(k == (lang == CC_LANG_PYTHON ? CC_ERR_WORKER_CRASHED : CC_ERR_TIMEOUT),
	      "first failure: %s (%s)", cc_error_kind_name(k), cc_result_error_message(r));
	cc_result_free(r);
	if (lang == CC_LANG_PYTHON) {
		CHECK(!cc_runtime_alive(rt), "runtime reports dead");
		r = cc_runtime_eval(rt, "1", 1, 0);
		CHECK(cc_result_error_kind(r) == CC_ERR_WORKER_CRASHED,
		      "eval on a dead runtime: worker_crashed");
		cc_result_free(r);
	}
	cc_runtime_close(rt);
	rt = start(lang);
	r = cc_runtime_eval(rt, "1 + 1", 5, 0);
	CHECK(cc_result_ok(r), "a new runtime works at once");
	cc_result_free(r);
	cc_runtime_close(rt);
	CHECK(children() == 0, "no child process left");
}

/* A soft stop (deadline, memory cap, output cap) leaves the runtime usable
 * with its state. */
static void afterstop(cc_language lang)
{
	cc_options o;
	driver_options_init(&o, lang);
	o.sandbox = CC_SANDBOX_AUTO;
	o.limits.max_memory = 64ull << 20;
	o.limits.max_stdout = 1000;
	cc_runtime *rt = NULL;
	cc_error err = { 0 };
	if (cc_runtime_new(&o, &rt, &err) < 0) {
		printf("FAIL runtime_new: %s\n", err.message);
		failures++;
		return;
	}
	bool py = lang == CC_LANG_PYTHON;
	struct {
		const char *code;
		cc_error_kind kind;
	} steps[] = {
		{ py ? "keep = [1, 2, 3]" : "var keep = [1, 2, 3]", CC_OK },
		{ py ? "while True: pass" : "while (true) {}", CC_ERR_TIMEOUT },
		{ py ? "x = ['y' * 1000 for _ in range(10**7)]"
		     : "const a = []; for (;;) a.push('y'.repeat(1000) + a.length)",
		  CC_ERR_MEMORY_LIMIT },
		{ py ? "while True: print('z')" : "for (;;) console.log('z')",
		  CC_ERR_OUTPUT_LIMIT },
		/* Regression: tasks left pending by a stop raised the stale stop
		 * in the next eval (Python). */
		{ py ? "import asyncio\nasync def spam():\n    while True:\n        print('x')\n"
		       "        await asyncio.sleep(0)\nawait asyncio.gather(spam(), spam())"
		     : "async function spam() { for (;;) { console.log('x'); await null } } "
		       "await Promise.all([spam(), spam()])",
		  CC_ERR_OUTPUT_LIMIT },
		{ py ? "import asyncio\nawait asyncio.sleep(0)\n2 + 2" : "await null; 2 + 2",
		  CC_OK },
		{ py ? "1/0" : "null.x", CC_ERR_GUEST },
		{ py ? "len(keep)" : "keep.length", CC_OK },
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		/* Only the timeout step waits for its deadline; the others end
		 * on their own, and filling 64 MiB can take over a second on a
		 * loaded machine (page faults are slow in some VMs). */
		double t = steps[i].kind == CC_ERR_TIMEOUT ? 0.5 : 20;
		cc_result *r = cc_runtime_eval(rt, steps[i].code, strlen(steps[i].code), t);
		CHECK(cc_result_error_kind(r) == steps[i].kind, "%s -> %s (got %s: %s)",
		      steps[i].code, cc_error_kind_name(steps[i].kind),
		      cc_error_kind_name(cc_result_error_kind(r)), cc_result_error_message(r));
		CHECK(cc_runtime_alive(rt), "alive after step %zu", i);
		if (i + 1 == sizeof(steps) / sizeof(steps[0])) {
			const cc_value *v = cc_result_value(r);
			CHECK(cc_value_type_of(v) == CC_VALUE_INT && v->u.i == 3,
			      "state survived every stop");
		}
		cc_result_free(r);
	}
	cc_runtime_close(rt);
}

/* Every eval's own deadline bounds it, whatever the evals before it
 * asked for: the Python worker leaves its stop timer armed between evals
 * and re-arms it only when the new deadline comes sooner (engine_py.c,
 * guest_enter). A short timeout after a long one must still stop the
 * loop in time (soft stop: the runtime lives on), and a long one after
 * many short ones must not be stopped by their stale ticks. */
static void deadlines(cc_language lang)
{
	cc_runtime *rt = start(lang);
	bool py = lang == CC_LANG_PYTHON;
	const char *spin = py ? "while True: pass" : "while (true) {}";
	const char *wait =
		py ? "import time\nt = time.monotonic()\nwhile time.monotonic() - t < 0.3: pass\n7"
		   : "{ const t = Date.now(); while (Date.now() - t < 300) {} } 7";
	for (int round = 0; round < 2; round++) {
		cc_result *r = cc_runtime_eval(rt, "1+1", 3, 30);
		CHECK(cc_result_ok(r), "round %d: 1+1 with a 30 s timeout", round);
		cc_result_free(r);
		r = cc_runtime_eval(rt, spin, strlen(spin), 0.3);
		CHECK(cc_result_error_kind(r) == CC_ERR_TIMEOUT && cc_runtime_alive(rt),
		      "round %d: a 0.3 s loop after a 30 s eval is stopped softly (got %s: %s)",
		      round, cc_error_kind_name(cc_result_error_kind(r)),
		      cc_result_error_message(r));
		cc_result_free(r);
		for (int i = 0; i < 200; i++)
			cc_result_free(cc_runtime_eval(rt, "1+1", 3, 0.05));
		r = cc_runtime_eval(rt, wait, strlen(wait), 10);
		const cc_value *v = cc_result_value(r);
		CHECK(cc_result_ok(r) && cc_value_type_of(v) == CC_VALUE_INT && v->u.i == 7,
		      "round %d: 0.3 s of work after 200 evals of 0.05 s runs to its end (%s)",
		      round, cc_result_error_message(r));
		cc_result_free(r);
	}
	cc_runtime_close(rt);
}

/* One runtime against a fake worker in dir: prints what happened as
 * "new=<kind> eval=<kind> alive=<0|1> stdout=<text>". */
static int fake_host_calls;
static int fake_tool(void *user, const cc_value *args, cc_value **result, cc_tool_error *err)
{
	(void)user;
	(void)args;
	(void)err;
	fake_host_calls++;
	*result = NULL;
	return 0;
}

/* A field of /proc/self/status in KiB ("VmRSS:"), or -1. */
static long status_kib(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, strlen(field)))
			v = strtol(line + strlen(field), NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* Modes named bind-* bind a tool "x" first (printing bind=<kind>); modes
 * with "twice" in the name run a second eval (eval2=<kind>). */
static void fake(const char *dir, double timeout_s, size_t code_len)
{
	cc_options o;
	driver_options_init(&o, CC_LANG_JAVASCRIPT);
	o.sandbox = CC_SANDBOX_REQUIRE;
	o.worker_dir = dir;
	o.limits.grace_s = 0.2;
	cc_runtime *rt = NULL;
	cc_error err = { 0 };
	if (cc_runtime_new(&o, &rt, &err) < 0) {
		printf("new=%s message=%s\n", cc_error_kind_name(err.kind), err.message);
		cc_error_clear(&err);
		return;
	}
	const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
	if (!strncmp(base, "bind-", 5)) {
		int rc = cc_runtime_bind_tool(rt, "x", fake_tool, NULL, &err);
		printf("bind=%s ", rc < 0 ? cc_error_kind_name(err.kind) : "ok");
		cc_error_clear(&err);
	}
	char *code = malloc(code_len + 1);
	memset(code, ' ', code_len);
	code[code_len - 1] = '1';
	long rss0 = status_kib("VmRSS:"), vm0 = status_kib("VmSize:");
	cc_result *r = cc_runtime_eval(rt, code, code_len, timeout_s);
	free(code);
	/* The host's memory for the eval's frames: peak resident and peak
	 * virtual size over the eval, minus where they were before. */
	printf("rss_growth_kib=%ld vm_growth_kib=%ld\n", status_kib("VmHWM:") - rss0,
	       status_kib("VmPeak:") - vm0);
	printf("new=ok eval=%s alive=%d message=%s stdout=%s\n",
	       cc_error_kind_name(cc_result_error_kind(r)), cc_runtime_alive(rt),
	       cc_result_error_message(r), cc_result_stdout(r, NULL));
	size_t png = 0;
	const char *html = cc_result_display_data(r, 1, "text/html", NULL);
	cc_result_display_data(r, 0, "image/png", &png);
	printf("displays=%zu png=%zu html=%s none=%d\n", cc_result_display_count(r), png,
	       html ? html : "",
	       !cc_result_display(r, 2) && !cc_result_display_data(r, 0, "x", NULL));
	cc_result_free(r);
	if (strstr(base, "twice")) {
		r = cc_runtime_eval(rt, "1", 1, timeout_s);
		printf("eval2=%s message=%s\n", cc_error_kind_name(cc_result_error_kind(r)),
		       cc_result_error_message(r));
		cc_result_free(r);
	}
	printf("hostcalls=%d\n", fake_host_calls);
	cc_runtime_close(rt);
	printf("children=%ld\n", children());
}

static void *start_in_thread(void *lang)
{
	return start(*(cc_language *)lang);
}

/* Regression: PR_SET_PDEATHSIG is per thread, so a runtime created in a
 * thread that then exited lost its worker. */
static void thread(cc_language lang)
{
	pthread_t t;
	void *rt = NULL;
	pthread_create(&t, NULL, start_in_thread, &lang);
	pthread_join(t, &rt);
	usleep(200000); /* time for a parent-death signal to land */
	cc_result *r = cc_runtime_eval(rt, "1 + 1", 5, 0);
	CHECK(cc_result_ok(r), "runtime made in an exited thread still works (%s %s)",
	      cc_error_kind_name(cc_result_error_kind(r)), cc_result_error_message(r));
	cc_result_free(r);
	cc_runtime_close(rt);
	CHECK(children() == 0, "no child process left");
}

/* Streaming through the C API (issue 16): the line handler sees the
 * guest's first line while the eval runs, which is shown by stopping the
 * eval from the handler (cc_runtime_interrupt) while the guest still has
 * 120 s to wait; the text handler sees the same bytes in batches. */
struct seen {
	cc_runtime *rt;
	char lines[64], text[64];
	int nlines;
};

static void on_line(void *user, int fd, const char *line, size_t len)
{
	struct seen *s = user;
	if (fd == 1 && s->nlines++ == 0)
		snprintf(s->lines, sizeof(s->lines), "%.*s", (int)len, line);
	if (len == 5 && !memcmp(line, "first", 5))
		cc_runtime_interrupt(s->rt);
}

static void on_text(void *user, int fd, const char *text, size_t len)
{
	struct seen *s = user;
	size_t n = strlen(s->text);
	if (fd == 1 && n + len < sizeof(s->text))
		memcpy(s->text + n, text, len + 1);
}

static void stream(cc_language lang)
{
	struct seen s = { .rt = driver_start(lang, 120, 0) };
	const char *code = lang == CC_LANG_PYTHON ? "import time\nprint('first')\ntime.sleep(120)"
						  : "console.log('first'); for (;;) {}";
	cc_runtime_set_output_handler(s.rt, on_line, &s);
	cc_runtime_set_output_text_handler(s.rt, on_text, &s);
	cc_result *r = cc_runtime_eval(s.rt, code, strlen(code), 0);
	CHECK(cc_result_error_kind(r) == CC_ERR_WORKER_CRASHED && !strcmp(s.lines, "first"),
	      "the handler saw 'first' while the eval ran and stopped it (%s, '%s')",
	      cc_error_kind_name(cc_result_error_kind(r)), s.lines);
	CHECK(!strcmp(s.text, "first\n"), "the text handler got 'first\\n' ('%s')", s.text);
	cc_result_free(r);
	cc_runtime_close(s.rt);

	/* values that cannot cross: strict by default, the text on request */
	cc_runtime *rt = driver_start(lang, 10, 0);
	code = lang == CC_LANG_PYTHON ? "{1, 2}" : "new Set([1, 2])";
	r = cc_runtime_eval(rt, code, strlen(code), 0);
	CHECK(cc_result_error_kind(r) == CC_ERR_GUEST && !cc_result_value_type(r),
	      "strict by default: guest_error (%s)", cc_error_kind_name(cc_result_error_kind(r)));
	cc_result_free(r);
	cc_runtime_set_value_fallback(rt, true);
	r = cc_runtime_eval(rt, code, strlen(code), 0);
	const cc_value *v = cc_result_value(r);
	const char *want = lang == CC_LANG_PYTHON ? "{1, 2}" : "Set(2) { 1, 2 }";
	const char *type = cc_result_value_type(r);
	CHECK(cc_result_ok(r) && cc_value_type_of(v) == CC_VALUE_STRING &&
		      v->u.str.len == strlen(want) && !memcmp(v->u.str.ptr, want, strlen(want)) &&
		      type && !strcmp(type, lang == CC_LANG_PYTHON ? "set" : "Set"),
	      "with the fallback: its text, its type named (%s)", type ? type : "none");
	cc_result_free(r);
	cc_runtime_close(rt);
	CHECK(children() == 0, "no child process left");
}

static void badopts(void)
{
	cc_options o;
	cc_runtime *rt = NULL;
	cc_error err = { 0 };
	driver_options_init(&o, CC_LANG_PYTHON);
	o.limits.timeout_s = -1;
	CHECK(cc_runtime_new(&o, &rt, &err) < 0 && err.kind == CC_ERR_INVALID_INPUT,
	      "negative timeout: invalid_input");
	driver_options_init(&o, (cc_language)9);
	CHECK(cc_runtime_new(&o, &rt, &err) < 0 && err.kind == CC_ERR_INVALID_INPUT,
	      "unknown language: invalid_input");
	driver_options_init(&o, CC_LANG_JAVASCRIPT);
	o.worker_dir = "/nonexistent";
	CHECK(cc_runtime_new(&o, &rt, &err) < 0 && err.kind == CC_ERR_INVALID_INPUT &&
		      strstr(err.message, "worker_dir"),
	      "missing worker: invalid_input naming worker_dir");
	driver_options_init(&o, CC_LANG_JAVASCRIPT);
	CHECK(cc_runtime_new(&o, &rt, &err) == 0, "require starts on this kernel (%s)",
	      err.message ? err.message : "");
	const cc_sandbox_report *sb = rt ? cc_runtime_sandbox(rt) : NULL;
	CHECK(sb && sb->mode == CC_SANDBOX_REQUIRE && !*sb->missing &&
		      strstr(sb->applied, "seccomp") && strstr(sb->applied, "landlock") &&
		      strstr(sb->applied, "namespaces") && sb->landlock_abi > 0 &&
		      sb->seccomp_allowed > 0,
	      "require reports every layer applied");
	cc_runtime_close(rt);
	rt = NULL;
	CHECK(cc_runtime_new(NULL, &rt, &err) < 0 && err.kind == CC_ERR_INVALID_INPUT,
	      "NULL options: invalid_input");
	cc_error_clear(&err);
	cc_result *r = cc_runtime_eval(NULL, "1", 1, 0);
	CHECK(cc_result_error_kind(r) == CC_ERR_WORKER_CRASHED, "eval on NULL runtime");
	cc_result_free(r);
	cc_runtime_close(NULL);
}

/* Grants, scratch and the host's file calls from C, spawned and forked
 * (issue 14): dir is a host directory the worker's user can read and
 * write; it holds in.txt ("in"). */
static void files_in(cc_runtime *rt, const char *dir, const char *how)
{
	cc_error err = { 0 };
	CHECK(cc_runtime_write_file(rt, "/tmp/a.txt", "abc", 3, &err) == 0,
	      "%s: write scratch (%s)", how, err.message ? err.message : "");
	void *data = NULL;
	size_t len = 0;
	CHECK(cc_runtime_read_file(rt, "/tmp/a.txt", 0, &data, &len, &err) == 0 && len == 3 &&
		      !memcmp(data, "abc", 3) && ((char *)data)[3] == 0,
	      "%s: read it back, NUL after", how);
	free(data);
	CHECK(cc_runtime_read_file(rt, "/in/in.txt", 0, &data, &len, &err) == 0 && len == 2,
	      "%s: read the read-only grant", how);
	free(data);
	CHECK(cc_runtime_write_file(rt, "/in/x", "x", 1, &err) < 0 &&
		      err.kind == CC_ERR_INVALID_INPUT && strstr(err.message, "writable"),
	      "%s: the read-only grant refuses a write, naming what is writable", how);
	cc_error_clear(&err);
	CHECK(cc_runtime_write_file(rt, "/out/o.txt", "out", 3, &err) == 0,
	      "%s: write the writable grant", how);
	char host[4096];
	snprintf(host, sizeof(host), "%s/out/o.txt", dir);
	struct stat st;
	CHECK(stat(host, &st) == 0 && st.st_size == 3, "%s: the host sees it", how);
	unlink(host);
	cc_value *ls = NULL;
	CHECK(cc_runtime_list_files(rt, "/tmp", &ls, &err) == 0 && ls->u.array.len == 1,
	      "%s: list scratch", how);
	cc_value_free(ls);
	CHECK(cc_runtime_read_file(rt, "/etc/passwd", 0, &data, &len, &err) < 0 &&
		      err.kind == CC_ERR_INVALID_INPUT,
	      "%s: a path outside is refused", how);
	cc_error_clear(&err);
}

static void files(const char *dir)
{
	char in[4096], out[4096];
	snprintf(in, sizeof(in), "%s/in", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	cc_mount m[2] = { { .host = in, .guest = "/in" },
			  { .host = out, .guest = "/out", .writable = true } };
	cc_options o;
	cc_error err = { 0 };
	for (int lang = CC_LANG_JAVASCRIPT; lang <= CC_LANG_PYTHON; lang++) {
		driver_options_init(&o, (cc_language)lang);
		o.mounts = m;
		o.n_mounts = 2;
		o.scratch_bytes = 1 << 20;
		cc_runtime *rt = NULL;
		CHECK(cc_runtime_new(&o, &rt, &err) == 0, "spawned with grants (%s)",
		      err.message ? err.message : "");
		if (rt)
			files_in(rt, dir, lang == CC_LANG_PYTHON ? "python spawned" : "js spawned");
		cc_runtime_close(rt);
		cc_forkserver *fs = NULL;
		CHECK(cc_forkserver_new(&o, "", &fs, &err) == 0, "fork server with grants (%s)",
		      err.message ? err.message : "");
		rt = NULL;
		if (fs && cc_forkserver_spawn(fs, &rt, &err) == 0)
			files_in(rt, dir, lang == CC_LANG_PYTHON ? "python forked" : "js forked");
		cc_runtime_close(rt);
		cc_forkserver_close(fs);
	}
	driver_options_init(&o, CC_LANG_PYTHON);
	m[0].guest = "/proc";
	o.mounts = m;
	o.n_mounts = 1;
	o.worker_dir = "/nonexistent";
	cc_runtime *rt = NULL;
	CHECK(cc_runtime_new(&o, &rt, &err) < 0 && err.kind == CC_ERR_INVALID_INPUT &&
		      strstr(err.message, "mount 0"),
	      "a bad grant is refused naming it, before the worker is looked for");
	cc_error_clear(&err);
}

/* Issue 27, C: what a grant may be. dir holds "d" (a folder), "owned"
 * (root's, mode 0700, with a 0600 "in.txt"). */
static bool refused(const cc_mount *m, size_t n, const char *pp, const char *want,
		    const char *unwanted)
{
	cc_options o;
	cc_error err = { 0 };
	cc_runtime *rt = NULL;
	driver_options_init(&o, CC_LANG_PYTHON);
	o.mounts = m;
	o.n_mounts = n;
	const char *ppv[] = { pp };
	o.python_path = pp ? ppv : NULL;
	o.n_python_path = pp ? 1 : 0;
	bool ok = cc_runtime_new(&o, &rt, &err) < 0 && err.kind == CC_ERR_INVALID_INPUT &&
		  strstr(err.message, want) && (!unwanted || !strstr(err.message, unwanted));
	if (!ok)
		printf("     (%s)\n", err.message ? err.message : "started");
	cc_error_clear(&err);
	cc_runtime_close(rt);
	return ok;
}

static void grants(const char *dir)
{
	char d[4096], owned[4096], sub[4096], via[64], want[8300];
	snprintf(d, sizeof(d), "%s/d", dir);
	snprintf(owned, sizeof(owned), "%s/owned", dir);
	snprintf(sub, sizeof(sub), "%s/d/sub", dir);
	cc_mount m = { .host = "/proc", .guest = "/x" };
	CHECK(refused(&m, 1, NULL, "mount 0 (/proc:/x): the host path /proc is /proc", NULL),
	      "/proc is never granted");
	m.host = "/";
	CHECK(refused(&m, 1, NULL, "the host path / is the host's root directory", NULL),
	      "/ is refused as the root");
	m.host = "/dev/shm";
	CHECK(refused(&m, 1, NULL, "never granted", NULL), "/dev/shm is never granted");
	/* name: what messages call the host path (the package's
	 * /proc/self/fd/N) */
	int fd = open(d, O_PATH | O_CLOEXEC);
	snprintf(via, sizeof(via), "/proc/self/fd/%d", fd);
	m = (cc_mount){ .host = via, .guest = "/usr", .name = d };
	snprintf(want, sizeof(want), "mount 0 (%s:/usr)", d);
	CHECK(refused(&m, 1, NULL, want, "/proc/self/fd"), "messages name the user's path");
	close(fd);
	/* a package folder a writable mount reaches */
	m = (cc_mount){ .host = d, .guest = "/w", .writable = true };
	snprintf(want, sizeof(want),
		 "python_path[0] '%s' inside mount 0 (%s:/w), which is writable", sub, d);
	CHECK(refused(&m, 1, sub, want, NULL), "python_path inside a writable mount is refused");
	/* a root-owned 0700 folder, read and written as its owner */
	cc_mount g[2] = { { .host = owned, .guest = "/in" },
			  { .host = owned, .guest = "/out", .writable = true } };
	cc_options o;
	cc_error err = { 0 };
	driver_options_init(&o, CC_LANG_PYTHON);
	o.mounts = g;
	o.n_mounts = 2;
	cc_runtime *rt = NULL;
	CHECK(cc_runtime_new(&o, &rt, &err) == 0, "a 0700 folder of root's is granted (%s)",
	      err.message ? err.message : "");
	char *t =
		rt ? eval_text(rt, "str(open('/out/w.txt', 'w').write(open('/in/in.txt').read()))")
		   : NULL;
	CHECK(t && !strcmp(t, "7"), "the guest reads and writes it: %s", t ? t : "");
	free(t);
	cc_runtime_close(rt);
	char w[4200];
	snprintf(w, sizeof(w), "%s/w.txt", owned);
	struct stat st;
	CHECK(stat(w, &st) == 0 && st.st_uid == 0 && st.st_gid == 0,
	      "what it wrote is the folder owner's on disk");
}

/* cc_options.fork_server: runtimes from a library-wide fork server per
 * template-fixed options, started on first use; a spawned worker, noted,
 * when its template cannot start. */
static cc_runtime *shared_rt_max(cc_language lang, double timeout_s, uint64_t max_memory,
				 uint32_t max_sessions)
{
	cc_options o;
	cc_options_init(&o, lang);
	o.max_sessions = max_sessions;
	o.sandbox = CC_SANDBOX_AUTO;
	o.limits.timeout_s = timeout_s;
	if (max_memory)
		o.limits.max_memory = max_memory;
	o.fork_server = true;
	return driver_start_opts(&o);
}

static cc_runtime *shared_rt(cc_language lang, double timeout_s, uint64_t max_memory)
{
	return shared_rt_max(lang, timeout_s, max_memory, 0);
}

static bool evals(cc_runtime *rt)
{
	cc_result *r = cc_runtime_eval(rt, "6 * 7", 5, 0);
	const cc_value *v = r ? cc_result_value(r) : NULL;
	bool ok = r && cc_result_ok(r) && cc_value_type_of(v) == CC_VALUE_INT && v->u.i == 42;
	cc_result_free(r);
	return ok;
}

static void shared(cc_language lang)
{
	const char *note = NULL;
	CHECK(cc_forkserver_shared_pids(NULL, 0) == 0, "no shared server before first use");
	cc_runtime *a = shared_rt(lang, 10, 0), *b = shared_rt(lang, 2, 0);
	note = cc_runtime_sandbox(a)->fork_server;
	CHECK(note && !strcmp(note, "shared"), "forked from the shared server (%s)", note);
	CHECK(cc_forkserver_shared_pids(NULL, 0) == 1,
	      "one server for two runtimes whose timeouts differ (per session)");
	CHECK(evals(a) && evals(b), "both evaluate");
	cc_runtime *c = shared_rt(lang, 10, 64u << 20);
	int pids[4];
	CHECK(cc_forkserver_shared_pids(pids, 4) == 2 && pids[0] > 0 && pids[1] > 0,
	      "another max_memory is another template");
	cc_runtime *d = driver_start(lang, 10, 0);
	CHECK(cc_runtime_sandbox(d)->fork_server == NULL, "without the option: spawned, no note");
	cc_forkserver_shared_close();
	CHECK(cc_forkserver_shared_pids(NULL, 0) == 0, "closed");
	CHECK(evals(a) && evals(c), "sessions outlive the close");
	setenv("CODECAGE_TEST_FORK_SERVER_BROKEN", "1", 1);
	cc_runtime *e = shared_rt(lang, 10, 0);
	note = cc_runtime_sandbox(e)->fork_server;
	CHECK(note && !strncmp(note, "spawned: the template did not start", 35) && evals(e),
	      "a template that fails: a spawned worker, noted (%s)", note);
	CHECK(cc_forkserver_shared_pids(NULL, 0) == 0, "no template runs");
	unsetenv("CODECAGE_TEST_FORK_SERVER_BROKEN");
	cc_runtime *f = shared_rt(lang, 10, 0);
	note = cc_runtime_sandbox(f)->fork_server;
	CHECK(note && !strncmp(note, "spawned:", 8), "the failure is kept for its key (%s)", note);
	cc_forkserver_shared_close();
	cc_runtime *g = shared_rt(lang, 10, 0);
	note = cc_runtime_sandbox(g)->fork_server;
	CHECK(note && !strcmp(note, "shared"), "tried again after the close (%s)", note);
	cc_runtime *all[] = { a, b, c, d, e, f, g };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		cc_runtime_close(all[i]);
	cc_forkserver_shared_close();
	/* max_sessions is ignored by cc_runtime_new: the first user's does not
	 * size the template every later one of its key shares */
	cc_runtime *h = shared_rt_max(lang, 10, 0, 1), *k = shared_rt(lang, 10, 0);
	note = cc_runtime_sandbox(k)->fork_server;
	CHECK(note && !strcmp(note, "shared"), "a max_sessions of 1 did not size it (%s)", note);
	cc_runtime_close(h);
	cc_runtime_close(k);
	cc_forkserver_shared_close();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "badopts"))
		badopts();
	else if (argc >= 3 && !strcmp(argv[1], "roundtrip"))
		roundtrip(lang_of(argv[2]));
	else if (argc >= 3 && !strcmp(argv[1], "state"))
		state(lang_of(argv[2]));
	else if (argc >= 4 && !strcmp(argv[1], "subreaper"))
		subreaper(lang_of(argv[2]), atoi(argv[3]));
	else if (argc >= 4 && !strcmp(argv[1], "many"))
		many(lang_of(argv[2]), atoi(argv[3]));
	else if (argc >= 4 && !strcmp(argv[1], "fake")) {
		fake(argv[2], atof(argv[3]), argc > 4 ? (size_t)atol(argv[4]) : 1);
		return 0;
	} else if (argc >= 3 && !strcmp(argv[1], "thread"))
		thread(lang_of(argv[2]));
	else if (argc >= 3 && !strcmp(argv[1], "deadlines"))
		deadlines(lang_of(argv[2]));
	else if (argc >= 3 && !strcmp(argv[1], "afterstop"))
		afterstop(lang_of(argv[2]));
	else if (argc >= 3 && !strcmp(argv[1], "dead"))
		dead(lang_of(argv[2]));
	else if (argc >= 3 && !strcmp(argv[1], "files"))
		files(argv[2]);
	else if (argc >= 3 && !strcmp(argv[1], "grants"))
		grants(argv[2]);
	else if (argc >= 3 && !strcmp(argv[1], "stream"))
		stream(lang_of(argv[2]));
	else if (argc >= 3 && !strcmp(argv[1], "shared"))
		shared(lang_of(argv[2]));
	else {
		fprintf(stderr, "usage: cc-libdriver roundtrip|state|many|dead|stream|shared LANG "
				"[N] | badopts | "
				"files DIR | grants DIR\n");
		return 2;
	}
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
