/* Allocation-failure injection on the runtime's paths with a real worker
 * (tests/alloc/test_allocfail.py): cc_runtime_new, cc_runtime_eval,
 * cc_runtime_set_global, an eval calling a host tool, and
 * cc_runtime_close, each run once per N with the Nth allocation of the
 * whole process failing, for every N until the path completes without
 * reaching N. Each run must end cleanly: an error kind (or a NULL result),
 * no worker left behind, no descriptor leaked, and a runtime that still
 * says it is alive must still answer correctly; nothing may crash or leak
 * (LeakSanitizer in build-asan, at exit).
 * usage: cc-allocfail-runtime PATH LANG  (PATH: new, eval, set, tool, close)
 * prints "ok"/"FAIL" lines and "N failed". */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../integration/driver.h"
#include "allocfail.h"

static cc_language lang;

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

static void options(cc_options *o)
{
	driver_options_init(o, lang);
	o->sandbox = CC_SANDBOX_AUTO;
	o->limits.timeout_s = 30;
}

static cc_runtime *fresh(void)
{
	cc_options o;
	options(&o);
	return driver_start_opts(&o);
}

/* A runtime that survived an injected failure still answers 1 + 1. */
static bool answers(cc_runtime *rt)
{
	cc_result *r = cc_runtime_eval(rt, "1 + 1", 5, 0);
	const cc_value *v = cc_result_value(r);
	bool ok = r && cc_result_ok(r) && cc_value_type_of(v) == CC_VALUE_INT && v->u.i == 2;
	cc_result_free(r);
	return ok;
}

/* A tool answering ["a\u00e9", {"k": [1, 2.5]}] (its own allocations may
 * fail too: it then fails as a MemoryError the guest sees). */
static int echo(void *ud, const cc_value *args, cc_value **out, cc_tool_error *e)
{
	(void)ud;
	(void)args;
	/* each call takes its item even on failure; a NULL from a constructor
	 * would be a null, not an error: check them */
	cc_value *one = cc_value_new_int(1), *half = cc_value_new_float(2.5);
	cc_value *s = cc_value_new_string("a\xc3\xa9", 3);
	cc_value *k = cc_value_new_array(), *m = cc_value_new_map();
	*out = cc_value_new_array();
	int bad = !one || !half || !s || !k || !m || !*out;
	bad |= cc_value_array_push(k, one) < 0;
	bad |= cc_value_array_push(k, half) < 0;
	bad |= cc_value_map_set(m, "k", 1, k) < 0;
	bad |= cc_value_array_push(*out, s) < 0;
	bad |= cc_value_array_push(*out, m) < 0;
	if (bad) {
		cc_value_free(*out);
		*out = NULL;
		return cc_tool_fail(e, "MemoryError", "out of memory");
	}
	return 0;
}

/* The code of the eval, tool and set paths, and what it must give. */
static const char *code_of(const char *path)
{
	if (!strcmp(path, "tool"))
		return lang == CC_LANG_PYTHON ? "echo('a\\u00e9', {'k': [1, 2.5]})[1]['k'][1]"
					      : "echo('a\\u00e9', {k: [1, 2.5]})[1].k[1]";
	if (!strcmp(path, "set"))
		return lang == CC_LANG_PYTHON ? "g['k'][1]" : "g.k[1]";
	return lang == CC_LANG_PYTHON ? "print('out'); [x * 1.25 for x in (1, 2)][0] + 1.25"
				      : "console.log('out'); [1, 2].map(x => x * 1.25)[0] + 1.25";
}

/* The eval path's code prints "out". */
static bool has_stdout(const char *path, const cc_result *r)
{
	size_t len = 0;
	const char *out = cc_result_stdout(r, &len);
	return strcmp(path, "eval") || (out && len == 4 && !memcmp(out, "out\n", 4));
}

/* One run of an eval-like path with the Nth allocation failing: 1 when it
 * completed (the failure was never reached), 0 when it failed cleanly, -1
 * when it did not. *rt may be replaced (a dead runtime by a fresh one). */
static int eval_once(const char *path, cc_runtime **rt, long n)
{
	cc_error err = { 0 };
	cc_value *g = NULL;
	if (!strcmp(path, "set")) {
		g = cc_value_new_map();
		cc_value *arr = cc_value_new_array();
		cc_value_array_push(arr, cc_value_new_string("x", 1));
		cc_value_array_push(arr, cc_value_new_float(2.5));
		cc_value_map_set(g, "k", 1, arr);
	}
	const char *code = code_of(path);
	allocfail_arm(n);
	int rc = 0;
	cc_result *r = NULL;
	if (g)
		rc = cc_runtime_set_global(*rt, "g", g, &err);
	if (rc == 0)
		r = cc_runtime_eval(*rt, code, strlen(code), 0);
	allocfail_disarm();
	bool fired = allocfail_fired();
	const cc_value *v = cc_result_value(r);
	bool right = rc == 0 && r && cc_result_ok(r) && cc_value_type_of(v) == CC_VALUE_FLOAT &&
		     v->u.f == 2.5;
	int out = 0;
	if (getenv("ALLOCFAIL_VERBOSE"))
		fprintf(stderr, "%s %ld: fired=%d rc=%d kind=%s msg=%s alive=%d\n", path, n, fired,
			rc,
			r ? cc_error_kind_name(cc_result_error_kind(r))
			  : cc_error_kind_name(err.kind),
			r ? cc_result_error_message(r) : err.message, cc_runtime_alive(*rt));
	if (!fired && !right) {
		printf("FAIL %s: no failure injected at %ld, yet the path failed (%s)\n", path, n,
		       r ? cc_result_error_message(r) : err.message);
		out = -1;
	} else if (!fired) {
		out = 1;
	} else if (rc < 0 && err.kind == CC_OK) {
		printf("FAIL %s: allocation %ld: set_global failed with no error kind\n", path, n);
		out = -1;
	} else if (r && !cc_result_ok(r) && cc_result_error_kind(r) != CC_ERR_INTERNAL &&
		   !(cc_result_error_kind(r) == CC_ERR_GUEST && !strcmp(path, "tool"))) {
		/* the host's memory ran out: not the worker's fault, not the guest's
		 * (but for the tool's own MemoryError) */
		printf("FAIL %s: allocation %ld: the result's kind is %s (%s), not internal\n",
		       path, n, cc_error_kind_name(cc_result_error_kind(r)),
		       cc_result_error_message(r));
		out = -1;
	} else if (rc < 0 && err.kind != CC_ERR_INTERNAL) {
		printf("FAIL %s: allocation %ld: set_global's kind is %s (%s), not internal\n",
		       path, n, cc_error_kind_name(err.kind), err.message);
		out = -1;
	} else if (r && cc_result_ok(r) && !right) {
		printf("FAIL %s: allocation %ld: an ok result with a wrong value\n", path, n);
		out = -1;
	} else if (r && cc_result_ok(r) && !has_stdout(path, r)) {
		printf("FAIL %s: allocation %ld: an ok result lost its stdout\n", path, n);
		out = -1;
	}
	cc_result_free(r);
	cc_value_free(g);
	cc_error_clear(&err);
	if (cc_runtime_alive(*rt) && !answers(*rt)) {
		printf("FAIL %s: allocation %ld: the runtime says it is alive but does not "
		       "answer\n",
		       path, n);
		out = -1;
	}
	if (!cc_runtime_alive(*rt)) {
		cc_runtime_close(*rt);
		*rt = fresh();
		if (!strcmp(path, "tool"))
			cc_runtime_bind_tool(*rt, "echo", echo, NULL, &err);
	}
	cc_error_clear(&err);
	return out;
}

/* One cc_runtime_new with the Nth allocation failing (as eval_once). */
static int new_once(long n)
{
	cc_options o;
	options(&o);
	cc_runtime *rt = NULL;
	cc_error err = { 0 };
	allocfail_arm(n);
	int rc = cc_runtime_new(&o, &rt, &err);
	allocfail_disarm();
	bool fired = allocfail_fired();
	int out = fired ? 0 : 1;
	if (rc < 0 && (!fired || err.kind != CC_ERR_INTERNAL || rt)) {
		printf("FAIL new: allocation %ld (fired %d): rc %d kind %s rt %p\n", n, fired, rc,
		       cc_error_kind_name(err.kind), (void *)rt);
		out = -1;
	}
	if (rc == 0 && !answers(rt)) {
		printf("FAIL new: allocation %ld: a runtime that started does not answer\n", n);
		out = -1;
	}
	cc_runtime_close(rt);
	cc_error_clear(&err);
	return out;
}

/* One cc_runtime_close with the Nth allocation failing. */
static int close_once(long n)
{
	cc_runtime *rt = fresh();
	answers(rt);
	allocfail_arm(n);
	cc_runtime_close(rt);
	allocfail_disarm();
	return allocfail_fired() ? 0 : 1;
}

static int run_once(const char *path, cc_runtime **rt, long n)
{
	if (!strcmp(path, "new"))
		return new_once(n);
	if (!strcmp(path, "close"))
		return close_once(n);
	return eval_once(path, rt, n);
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[2], "python") && strcmp(argv[2], "javascript"))) {
		fprintf(stderr, "usage: cc-allocfail-runtime new|eval|set|tool|close LANG\n");
		return 2;
	}
	const char *path = argv[1];
	lang = strcmp(argv[2], "python") ? CC_LANG_JAVASCRIPT : CC_LANG_PYTHON;
	cc_runtime *rt = NULL;
	cc_error err = { 0 };
	bool evals = strcmp(path, "new") && strcmp(path, "close");
	if (evals) {
		rt = fresh();
		if (!strcmp(path, "tool"))
			cc_runtime_bind_tool(rt, "echo", echo, NULL, &err);
		answers(rt); /* warm-up: lazy one-time allocations */
	} else {
		cc_runtime_close(fresh());
	}
	long fds0 = count_fds(), kids0 = children();
	/* ALLOCFAIL_ONLY=N (debugging, with ALLOCFAIL_BACKTRACE=1): that N only */
	long only = getenv("ALLOCFAIL_ONLY") ? atol(getenv("ALLOCFAIL_ONLY")) : 0;
	long n = only > 0 ? only : 1, bad = 0;
	for (;; n++) {
		int r = run_once(path, &rt, n);
		bad += r < 0;
		if (count_fds() != fds0 || children() != kids0) {
			printf("FAIL %s: allocation %ld: %d descriptors (%ld before), %ld "
			       "children\n",
			       path, n, count_fds(), fds0, children());
			bad++;
		}
		if (r == 1 || bad > 5 || n > 100000 || only > 0)
			break;
	}
	/* closing frees and makes no allocation today: then only the process
	 * and descriptor counts are checked */
	CHECK(bad == 0 && (n > 1 || !strcmp(path, "close")),
	      "%s %s: each of %ld allocations failing ended cleanly", path, argv[2], n - 1);
	cc_runtime_close(rt);
	cc_error_clear(&err);
	printf("%d failed\n", failures);
	return failures != 0;
}
