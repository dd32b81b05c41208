/* cc-checklist-driver: runs one piece of guest code through the public C
 * API (include/codecage.h) with the default options, sandbox "require"
 * included, and prints one JSON line shaped like the CLI's --json object:
 *
 *   {"kind": "ok" | <error kind>, "type": ..., "message": ..., "value": <JSON>,
 *    "stdout": ..., "stderr": ..., "exit": <the CLI's exit status for kind>}
 *
 * The capability checklist (tests/security/test_checklist.py) runs every
 * case through this driver and through build/codecage and expects the same
 * outcome from both.
 *
 * usage: cc-checklist-driver [--fork] python|javascript CODE [ANYTHING...]
 * --fork: run CODE in a session forked from a fork server (cc_forkserver_*)
 * instead of a spawned worker, with tools bound (a synchronous "echo" and an
 * asynchronous "aecho", each returning its first argument), as a host
 * that gives its guests tools would. Arguments after CODE are ignored: the
 * checklist plants a canary secret there, in the argv of the process that
 * hosts the supervisor. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "codecage.h"
#include "json_out.h"

static int echo(void *user, const cc_value *args, cc_value **result, cc_tool_error *err)
{
	(void)user;
	(void)err;
	*result = NULL;
	if (args->u.array.len)
		*result = cc_value_new_int(cc_value_type_of(args->u.array.items[0]) == CC_VALUE_INT
						   ? args->u.array.items[0]->u.i
						   : 0);
	return 0;
}

static void aecho(void *user, const cc_value *args, cc_tool_call *call)
{
	cc_value *v = NULL;
	cc_tool_error te = { 0 };
	echo(user, args, &v, &te);
	cc_tool_call_return(call, v);
}

static void put_str(struct cc_buf *b, const char *key, const char *s, size_t n)
{
	cc_buf_printf(b, ", \"%s\": ", key);
	cc_json_string(b, s ? s : "", s ? n : 0);
}

int main(int argc, char **argv)
{
	bool fork = argc > 1 && !strcmp(argv[1], "--fork");
	if (fork) {
		argv++;
		argc--;
	}
	if (argc < 3 || (strcmp(argv[1], "python") && strcmp(argv[1], "javascript"))) {
		fprintf(stderr, "usage: cc-checklist-driver [--fork] python|javascript CODE "
				"[IGNORED...]\n");
		return 2;
	}
	cc_options o;
	cc_options_init(&o, !strcmp(argv[1], "python") ? CC_LANG_PYTHON : CC_LANG_JAVASCRIPT);
	cc_runtime *rt = NULL;
	cc_forkserver *fs = NULL;
	cc_result *r = NULL;
	cc_error err = { 0 };
	int rc = fork ? cc_forkserver_new(&o, "json,re,math,datetime", &fs, &err) : 0;
	if (rc == 0)
		rc = fork ? cc_forkserver_spawn(fs, &rt, &err) : cc_runtime_new(&o, &rt, &err);
	if (rc == 0 && fork)
		rc = cc_runtime_bind_tool(rt, "echo", echo, NULL, &err);
	if (rc == 0 && fork)
		rc = cc_runtime_bind_tool_async(rt, "aecho", aecho, NULL, &err);
	if (rc == 0)
		r = cc_runtime_eval(rt, argv[2], strlen(argv[2]), 0);
	cc_error_kind kind = r ? cc_result_error_kind(r) : err.kind;
	size_t out_len = 0, err_len = 0;
	const char *out = r ? cc_result_stdout(r, &out_len) : "";
	const char *serr = r ? cc_result_stderr(r, &err_len) : "";

	/* The CLI's own JSON rendering (src/frontend/json_out.c). */
	struct cc_buf b = { 0 };
	const char *kname = kind == CC_OK ? "ok" : cc_error_kind_name(kind);
	cc_buf_puts(&b, "{\"kind\": ");
	cc_json_string(&b, kname, strlen(kname));
	const char *type = r ? cc_result_error_type(r) : "";
	const char *msg = r ? cc_result_error_message(r) : err.message;
	put_str(&b, "type", type, type ? strlen(type) : 0);
	put_str(&b, "message", msg, msg ? strlen(msg) : 0);
	cc_buf_puts(&b, ", \"value\": ");
	cc_json_value(&b, r ? cc_result_value(r) : NULL);
	put_str(&b, "stdout", out, out_len);
	put_str(&b, "stderr", serr, err_len);
	cc_buf_printf(&b, ", \"exit\": %d}\n", cc_error_kind_exit_code(kind));
	fwrite(b.data, 1, b.len, stdout);
	cc_buf_free(&b);

	cc_result_free(r);
	cc_runtime_close(rt);
	cc_forkserver_close(fs);
	cc_error_clear(&err);
	return 0;
}
