/* The C API in one program: options, a runtime, an eval and its result, a
 * host tool, a pool of forked sessions and cleanup, every error checked.
 *
 * Build (meson does it too, as build/examples/hello):
 *   cc examples/hello.c -o build/hello -Iinclude -Lbuild -lcodecage -Wl,-rpath,$PWD/build
 * Run: build/examples/hello [require|auto|off]   (the sandbox mode; require by default)
 * Exit status: 0 ok, 1 a codecage call failed (its kind and message are
 * printed on stderr), 2 usage. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "codecage.h"

/* A host tool: the only thing guest code can call outside the sandbox.
 * args is an array of the guest's arguments (borrowed); *result is owned
 * by the library once we return 0. */
static int lookup(void *user, const cc_value *args, cc_value **result, cc_tool_error *err)
{
	(void)user;
	const cc_value *sku = args->u.array.len ? args->u.array.items[0] : NULL;
	if (cc_value_type_of(sku) != CC_VALUE_STRING || strcmp(sku->u.str.ptr, "A1"))
		return cc_tool_fail(err, "KeyError", "unknown sku");
	*result = cc_value_new_float(3.5);
	return 0;
}

/* Print the value kinds this program gets back (NULL is null/None). */
static void print_value(const cc_value *v)
{
	switch (cc_value_type_of(v)) {
	case CC_VALUE_NULL:
		printf("null");
		break;
	case CC_VALUE_BOOL:
		printf(v->u.b ? "true" : "false");
		break;
	case CC_VALUE_INT:
		printf("%" PRId64, v->u.i);
		break;
	case CC_VALUE_FLOAT:
		printf("%g", v->u.f);
		break;
	case CC_VALUE_STRING:
		printf("%s", v->u.str.ptr);
		break;
	case CC_VALUE_ARRAY:
		printf("[");
		for (size_t i = 0; i < v->u.array.len; i++) {
			printf(i ? ", " : "");
			print_value(v->u.array.items[i]);
		}
		printf("]");
		break;
	default:
		printf("(a value of type %d)", (int)v->type);
	}
}

/* Evaluate code, print the guest's stdout, then "label: value". Returns 0,
 * or -1 after printing the error (kind, guest type, message). */
static int eval_and_print(cc_runtime *rt, const char *label, const char *code)
{
	cc_result *r = cc_runtime_eval(rt, code, strlen(code), 0); /* 0: limits.timeout_s */
	if (!r) {
		fprintf(stderr, "out of memory\n");
		return -1;
	}
	int rc = 0;
	size_t out_len;
	const char *out = cc_result_stdout(r, &out_len);
	if (out_len)
		printf("%s", out);
	if (cc_result_ok(r)) {
		printf("%s: ", label);
		print_value(cc_result_value(r));
		printf("\n");
	} else {
		fprintf(stderr, "%s: %s: %s: %s\n", label,
			cc_error_kind_name(cc_result_error_kind(r)), cc_result_error_type(r),
			cc_result_error_message(r));
		rc = -1;
	}
	cc_result_free(r);
	return rc;
}

static int fail(const char *what, cc_error *err)
{
	fprintf(stderr, "%s: %s: %s\n", what, cc_error_kind_name(err->kind),
		err->message ? err->message : "");
	cc_error_clear(err);
	return -1;
}

/* One JavaScript runtime, started for this program alone, with a tool. */
static int javascript(cc_sandbox_mode mode)
{
	cc_options o;
	cc_options_init(&o, CC_LANG_JAVASCRIPT);
	o.sandbox = mode;
	o.limits.timeout_s = 5; /* seconds per eval */
	cc_runtime *rt;
	cc_error err = { 0 };
	if (cc_runtime_new(&o, &rt, &err) < 0)
		return fail("starting the JavaScript runtime", &err);
	printf("sandbox: %s\n", cc_sandbox_mode_name(cc_runtime_sandbox(rt)->mode));
	if (cc_runtime_bind_tool(rt, "lookup", lookup, NULL, &err) < 0) {
		cc_runtime_close(rt);
		return fail("binding lookup", &err);
	}
	int rc = eval_and_print(rt, "javascript", "[1, 2].map(x => x * 21)");
	if (rc == 0)
		rc = eval_and_print(rt, "lookup('A1') * 2", "lookup('A1') * 2");
	if (rc == 0) /* a failing tool is an exception in the guest */
		rc = eval_and_print(rt, "lookup('B2')",
				    "try { lookup('B2') } catch (e) { `${e.name}: ${e.message}` }");
	cc_runtime_close(rt);
	return rc;
}

/* Python sessions from a pool: forked from a confined template that has
 * started CPython, each used once and closed. */
static int python(cc_sandbox_mode mode)
{
	cc_options o;
	cc_options_init(&o, CC_LANG_PYTHON);
	o.sandbox = mode;
	cc_pool *pool;
	cc_error err = { 0 };
	if (cc_pool_new(&o, 2, true, "", &pool, &err) < 0) /* 2 ready sessions, forked */
		return fail("starting the Python pool", &err);
	int rc = 0;
	for (int user = 0; user < 2 && rc == 0; user++) {
		cc_runtime *rt;
		if (cc_pool_checkout(pool, 30.0, &rt, &err) < 0) { /* seconds to wait */
			rc = fail("checking out a session", &err);
			break;
		}
		if (user == 0)
			rc = eval_and_print(rt, "python",
					    "seen = True; print('hello from python'); "
					    "sum(i*i for i in range(10))");
		else /* a fresh session: nothing of the first user's */
			rc = eval_and_print(rt, "the next user sees it", "'seen' in globals()");
		cc_runtime_close(rt); /* the pool makes a fresh one */
	}
	cc_pool_close(pool);
	return rc;
}

int main(int argc, char **argv)
{
	cc_sandbox_mode mode = CC_SANDBOX_REQUIRE;
	if (argc > 2 || (argc == 2 && cc_sandbox_mode_parse(argv[1], &mode) < 0)) {
		fprintf(stderr, "usage: %s [require|auto|off]\n", argv[0]);
		return 2;
	}
	if (javascript(mode) < 0 || python(mode) < 0)
		return 1;
	return 0;
}
