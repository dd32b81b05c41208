/* cc-toolsdriver: the host-tool API end to end, for test_tools.py. Prints
 * "ok ..." / "FAIL ..." per check and "N failed" last.
 * usage: cc-toolsdriver basics LANG | budget | reenter LANG | many LANG N
 *        | output LANG */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codecage.h"
#include "driver.h"

static cc_runtime *start(cc_language lang)
{
	return driver_start(lang, 20, 0);
}

static int calls;

/* lookup(sku): {"A1": 3.5}[sku], KeyError otherwise. */
static int lookup(void *user, const cc_value *args, cc_value **result, cc_tool_error *err)
{
	(void)user;
	calls++;
	const cc_value *sku = args->u.array.len ? args->u.array.items[0] : NULL;
	if (cc_value_type_of(sku) == CC_VALUE_STRING && !strcmp(sku->u.str.ptr, "A1")) {
		*result = cc_value_new_float(3.5);
		return 0;
	}
	return cc_tool_fail(err, "KeyError", "no such sku");
}

static int send_email(void *user, const cc_value *args, cc_value **result, cc_tool_error *err)
{
	(void)user;
	(void)args;
	(void)result;
	calls++;
	return cc_tool_fail(err, "PermissionError", "outbound mail is disabled");
}

/* unsupported(): fails as io.UnsupportedOperation does, with its two
 * builtin bases, plus one that is not a builtin and one that is not a name
 * (both dropped). */
static int unsupported(void *user, const cc_value *args, cc_value **result, cc_tool_error *err)
{
	(void)user;
	(void)args;
	(void)result;
	calls++;
	return cc_tool_fail_bases(err, "UnsupportedOperation", "OSError,NoSuchBase,ValueError,a b",
				  "not readable");
}

/* kw(...): how many positional and keyword arguments, and kwargs["sku"]. */
static int kw(void *user, const cc_value *args, const cc_value *kwargs, cc_value **result,
	      cc_tool_error *err)
{
	(void)user;
	(void)err;
	calls++;
	const cc_value *sku = NULL;
	for (size_t i = 0; kwargs && i < kwargs->u.map.len; i++)
		if (!strcmp(kwargs->u.map.keys[i], "sku"))
			sku = kwargs->u.map.vals[i];
	char buf[128];
	snprintf(buf, sizeof(buf), "%zu %zu %s", args->u.array.len, kwargs ? kwargs->u.map.len : 0,
		 cc_value_type_of(sku) == CC_VALUE_STRING ? sku->u.str.ptr : "-");
	*result = cc_value_new_string(buf, strlen(buf));
	return 0;
}

/* echo(x...): returns its argument array. */
static int echo(void *user, const cc_value *args, cc_value **result, cc_tool_error *err)
{
	(void)user;
	(void)err;
	calls++;
	cc_value *copy = cc_value_new_array();
	for (size_t i = 0; i < args->u.array.len; i++) {
		const cc_value *a = args->u.array.items[i];
		cc_value_array_push(copy, cc_value_type_of(a) == CC_VALUE_INT
						  ? cc_value_new_int(a->u.i)
					  : cc_value_type_of(a) == CC_VALUE_STRING
						  ? cc_value_new_string(a->u.str.ptr, a->u.str.len)
						  : NULL);
	}
	*result = copy;
	return 0;
}

static const char *eval_str(cc_runtime *rt, const char *code, cc_result **keep)
{
	*keep = cc_runtime_eval(rt, code, strlen(code), 0);
	const cc_value *v = cc_result_value(*keep);
	if (!cc_result_ok(*keep))
		return cc_result_error_message(*keep);
	return cc_value_type_of(v) == CC_VALUE_STRING ? v->u.str.ptr : "(not a string)";
}

static void basics(cc_language lang)
{
	bool py = lang == CC_LANG_PYTHON;
	cc_runtime *rt = start(lang);
	cc_error err = { 0 };
	CHECK(cc_runtime_bind_tool(rt, "lookup", lookup, NULL, &err) == 0, "bind lookup");
	CHECK(cc_runtime_bind_tool(rt, "send_email", send_email, NULL, &err) == 0,
	      "bind send_email");
	CHECK(cc_runtime_bind_tool(rt, "echo", echo, NULL, &err) == 0, "bind echo");
	CHECK(cc_runtime_bind_tool(rt, "unsupported", unsupported, NULL, &err) == 0,
	      "bind unsupported");
	CHECK(cc_runtime_bind_tool_kw(rt, "kw", kw, NULL, &err) == 0, "bind kw");
	CHECK(cc_runtime_bind_tool(rt, "bad name", echo, NULL, &err) < 0 &&
		      err.kind == CC_ERR_INVALID_INPUT,
	      "a bad tool name is invalid_input");
	cc_error_clear(&err);

	cc_result *r = cc_runtime_eval(rt, "lookup('A1') * 2", 16, 0);
	const cc_value *v = cc_result_value(r);
	CHECK(cc_result_ok(r) && cc_value_type_of(v) == CC_VALUE_FLOAT && v->u.f == 7.0,
	      "a tool inside an expression: lookup('A1') * 2 == 7.0 (%s)",
	      cc_result_error_message(r));
	cc_result_free(r);

	const char *s =
		eval_str(rt,
			 py ? "try:\n    send_email('a@example.com', 'hi')\nexcept PermissionError "
			      "as e:\n    r = type(e).__name__ + ': ' + str(e)\nr"
			    : "try { send_email('a@example.com', 'hi') } catch (e) { `${e "
			      "instanceof Error} ${e.name}: ${e.message}` }",
			 &r);
	CHECK(!strcmp(s, py ? "PermissionError: outbound mail is disabled"
			    : "true PermissionError: outbound mail is disabled"),
	      "a failing tool is a real error named after the host's: %s", s);
	cc_result_free(r);

	s = eval_str(
		rt,
		py ? "try:\n    tools.lookup('nope')\nexcept KeyError as e:\n    r = 'KeyError'\nr"
		   : "try { await tools.lookup('nope') } catch (e) { e.name }",
		&r);
	CHECK(!strcmp(s, "KeyError"), "tools.<name> form raises/rejects too: %s", s);
	cc_result_free(r);

	s = eval_str(rt,
		     py ? "try:\n    unsupported()\nexcept OSError as e:\n    k = type(e)\n"
			  "','.join(c.__name__ for c in k.__mro__)"
			: "try { unsupported() } catch (e) { `${e instanceof Error} ${e.name}` }",
		     &r);
	CHECK(!strcmp(s, py ? "UnsupportedOperation,OSError,ValueError,Exception,BaseException,"
			      "object"
			    : "true UnsupportedOperation"),
	      "a failure's builtin bases reach the guest's class: %s", s);
	cc_result_free(r);

	s = eval_str(rt, py ? "kw(1, sku='A1', qty=2) + ',' + kw()" : "kw(1, {sku: 'A1'})", &r);
	CHECK(!strcmp(s, py ? "1 2 A1,0 0 -" : "2 0 -"), "keyword arguments reach a _kw tool: %s",
	      s);
	cc_result_free(r);
	if (py) {
		int before = calls;
		s = eval_str(
			rt, "try:\n    lookup(sku='A1')\nexcept TypeError as e:\n    r = str(e)\nr",
			&r);
		CHECK(strstr(s, "positional arguments only") && calls == before,
		      "a tool bound without keywords never sees them: %s", s);
		cc_result_free(r);
	}

	r = cc_runtime_eval(rt, py ? "tools.echo(1, 'x')" : "await tools.echo(1, 'x')",
			    py ? 18 : 24, 0);
	v = cc_result_value(r);
	CHECK(cc_result_ok(r) && cc_value_type_of(v) == CC_VALUE_ARRAY && v->u.array.len == 2,
	      "arguments and results cross (%s)", cc_result_error_message(r));
	cc_result_free(r);

	const char *fan = py ? "import asyncio\nawait asyncio.gather(atools.echo(1), "
			       "atools.echo(2), atools.echo(3))"
			     : "await Promise.all([tools.echo(1), tools.echo(2), tools.echo(3)])";
	r = cc_runtime_eval(rt, fan, strlen(fan), 0);
	v = cc_result_value(r);
	CHECK(cc_result_ok(r) && cc_value_type_of(v) == CC_VALUE_ARRAY && v->u.array.len == 3 &&
		      v->u.array.items[2]->u.array.items[0]->u.i == 3,
	      "concurrent calls fan out and come back in order (%s)", cc_result_error_message(r));
	cc_result_free(r);

	/* Regression: replies the worker had not read yet filled the socket
	 * while it kept writing calls, and both sides blocked until the
	 * deadline killed the worker. */
	const char *flood = py ? "import asyncio\nlen(await asyncio.gather(*[atools.echo(i) for i "
				 "in range(1000)]))"
			       : "(await Promise.all(Array.from({length: 1000}, (_, i) => "
				 "tools.echo(i)))).length";
	r = cc_runtime_eval(rt, flood, strlen(flood), 0);
	v = cc_result_value(r);
	CHECK(cc_result_ok(r) && cc_value_type_of(v) == CC_VALUE_INT && v->u.i == 1000,
	      "1000 calls in flight at once (%s)", cc_result_error_message(r));
	cc_result_free(r);
	const char *big = py ? "import asyncio\nx = 'x' * 1000000\nlen(await "
			       "asyncio.gather(atools.echo(x), atools.echo(x), atools.echo(x)))"
			     : "const x = 'x'.repeat(1000000); (await Promise.all([tools.echo(x), "
			       "tools.echo(x), tools.echo(x)])).length";
	r = cc_runtime_eval(rt, big, strlen(big), 0);
	v = cc_result_value(r);
	CHECK(cc_result_ok(r) && cc_value_type_of(v) == CC_VALUE_INT && v->u.i == 3,
	      "three 1 MB calls in flight at once (%s)", cc_result_error_message(r));
	cc_result_free(r);

	s = eval_str(rt,
		     py ? "try:\n    tools.nope()\nexcept AttributeError:\n    r = 'refused'\nr"
			: "try { tools.nope() } catch (e) { 'refused' }",
		     &r);
	CHECK(!strcmp(s, "refused"), "an unbound name is refused: %s", s);
	cc_result_free(r);

	/* redaction keeps the name, hides the text */
	cc_runtime_set_redaction(rt, true);
	s = eval_str(rt,
		     py ? "try:\n    send_email('a', 'b')\nexcept PermissionError as e:\n    r = "
			  "str(e)\nr"
			: "try { send_email('a', 'b') } catch (e) { e.name + ': ' + e.message }",
		     &r);
	CHECK(strstr(s, "outbound") == NULL && strstr(s, "not shown"),
	      "redaction hides the host's message: %s", s);
	cc_result_free(r);

	/* a tool's own redaction wins over the runtime's, both ways */
	const char *mail = py ? "try:\n    send_email('a', 'b')\nexcept PermissionError as e:\n"
				"    r = str(e)\nr"
			      : "try { send_email('a', 'b') } catch (e) { e.message }";
	CHECK(cc_runtime_set_tool_redaction(rt, "send_email", 0, &err) == 0, "tool redaction off");
	s = eval_str(rt, mail, &r);
	CHECK(!strcmp(s, "outbound mail is disabled"),
	      "a tool with redaction 0 shows its message under a redacting runtime: %s", s);
	cc_result_free(r);
	cc_runtime_set_redaction(rt, false);
	CHECK(cc_runtime_set_tool_redaction(rt, "send_email", 1, &err) == 0, "tool redaction on");
	s = eval_str(rt, mail, &r);
	CHECK(!strcmp(s, CC_REDACTED_MESSAGE),
	      "a tool with redaction 1 hides its message under an open runtime: %s", s);
	cc_result_free(r);
	CHECK(cc_runtime_set_tool_redaction(rt, "send_email", -1, &err) == 0, "tool redaction -1");
	s = eval_str(rt, mail, &r);
	CHECK(!strcmp(s, "outbound mail is disabled"), "-1 follows the runtime again: %s", s);
	cc_result_free(r);
	CHECK(cc_runtime_set_tool_redaction(rt, "nope", 1, &err) < 0 &&
		      err.kind == CC_ERR_INVALID_INPUT && strstr(err.message, "no tool named"),
	      "an unbound name's redaction is invalid_input");
	cc_error_clear(&err);
	CHECK(cc_runtime_set_tool_redaction(rt, "send_email", 2, &err) < 0 &&
		      err.kind == CC_ERR_INVALID_INPUT && strstr(err.message, "-1"),
	      "a redaction other than -1, 0, 1 is invalid_input");
	cc_error_clear(&err);
	cc_runtime_close(rt);
	printf("calls=%d\n", calls);
}

/* One budget of 5 calls shared by a Python and a JavaScript runtime. */
static void budget(void)
{
	cc_budget *b = cc_budget_new(5);
	cc_budget_limit_tool(b, "send_email", 1);
	cc_runtime *py = start(CC_LANG_PYTHON), *js = start(CC_LANG_JAVASCRIPT);
	cc_error err = { 0 };
	cc_runtime_bind_tool(py, "lookup", lookup, NULL, &err);
	cc_runtime_bind_tool(js, "lookup", lookup, NULL, &err);
	cc_runtime_bind_tool(js, "send_email", send_email, NULL, &err);
	cc_runtime_set_budget(py, b);
	cc_runtime_set_budget(js, b);
	calls = 0;
	cc_result *r;
	const char *s = eval_str(py, "str([lookup('A1') for _ in range(3)])", &r);
	CHECK(!strcmp(s, "[3.5, 3.5, 3.5]"), "three Python calls within budget: %s", s);
	cc_result_free(r);
	s = eval_str(js, "try { send_email('a', 'b') } catch (e) { e.name }", &r);
	CHECK(!strcmp(s, "PermissionError"), "first send_email reaches the host: %s", s);
	cc_result_free(r);
	s = eval_str(js, "try { send_email('a', 'b') } catch (e) { e.name }", &r);
	CHECK(!strcmp(s, "ToolBudgetError"), "second send_email: per-tool budget: %s", s);
	cc_result_free(r);
	/* The message names the host's option (cc_budget_set_hint), refused
	 * when it is no hint a guest should read. */
	char longer[CC_BUDGET_HINT_MAX + 2];
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	CHECK(cc_budget_set_hint(NULL, "a", NULL) < 0 && cc_budget_set_hint(b, "", NULL) < 0 &&
		      cc_budget_set_hint(b, longer, NULL) < 0 &&
		      cc_budget_set_hint(b, NULL, "\xff") < 0 &&
		      cc_budget_set_hint(b, "raise TOTAL", "raise PER_TOOL") == 0,
	      "cc_budget_set_hint refuses NULL, empty, over CC_BUDGET_HINT_MAX and non-UTF-8");
	s = eval_str(js, "try { send_email('a', 'b') } catch (e) { e.message }", &r);
	CHECK(!strcmp(s, "the per-tool tool call budget of 1 calls is used up for send_email; "
			 "raise PER_TOOL"),
	      "the per-tool message names the hint: %s", s);
	cc_result_free(r);
	s = eval_str(js,
		     "let out = []; for (let i = 0; i < 3; i++) { try { out.push(lookup('A1')) } "
		     "catch (e) { out.push(e.name) } } out.join(',')",
		     &r);
	CHECK(!strcmp(s, "3.5,ToolBudgetError,ToolBudgetError"), "the shared total runs out: %s",
	      s);
	cc_result_free(r);
	s = eval_str(py,
		     "try:\n    lookup('A1')\nexcept Exception as e:\n    r = type(e).__name__\nr",
		     &r);
	CHECK(!strcmp(s, "ToolBudgetError"), "and in Python too: %s", s);
	cc_result_free(r);
	s = eval_str(py, "try:\n    lookup('A1')\nexcept Exception as e:\n    r = str(e)\nr", &r);
	CHECK(!strcmp(s, "the total tool call budget of 5 calls is used up; raise TOTAL"),
	      "the caught total's message names the hint: %s", s);
	cc_result_free(r);
	r = cc_runtime_eval(js, "lookup('A1')", 12, 0);
	CHECK(cc_result_error_kind(r) == CC_ERR_TOOL_BUDGET && cc_runtime_alive(js) &&
		      !strcmp(cc_result_error_message(r),
			      "the total tool call budget of 5 calls is used up; raise TOTAL"),
	      "an uncaught ToolBudgetError surfaces as tool_budget, the same text (%s: %s)",
	      cc_error_kind_name(cc_result_error_kind(r)), cc_result_error_message(r));
	cc_result_free(r);
	const char *forge = "raise type('ToolBudgetError', (Exception,), {})('forged')";
	r = cc_runtime_eval(py, forge, strlen(forge), 0);
	CHECK(cc_result_error_kind(r) == CC_ERR_GUEST,
	      "a guest cannot forge tool_budget without a refused call (%s)",
	      cc_error_kind_name(cc_result_error_kind(r)));
	cc_result_free(r);
	CHECK(cc_budget_calls_made(b) == 5 && cc_budget_calls_remaining(b) == 0 && calls == 5,
	      "5 calls made, 0 remaining, the host ran exactly 5 (%llu, %llu, %d)",
	      (unsigned long long)cc_budget_calls_made(b),
	      (unsigned long long)cc_budget_calls_remaining(b), calls);
	cc_runtime_close(py);
	cc_runtime_close(js);
	cc_budget_unref(b);
}

static cc_runtime *reenter_rt;
static int reenter(void *user, const cc_value *args, cc_value **result, cc_tool_error *err)
{
	(void)user;
	(void)args;
	(void)err;
	cc_result *r = cc_runtime_eval(reenter_rt, "1", 1, 0);
	cc_error e = { 0 };
	/* Regression: rebinding an existing name from inside a tool went through. */
	int rc = cc_runtime_bind_tool(reenter_rt, "again", echo, NULL, &e);
	char text[128];
	snprintf(text, sizeof(text), "%s %s", cc_error_kind_name(cc_result_error_kind(r)),
		 rc < 0 ? cc_error_kind_name(e.kind) : "bound");
	*result = cc_value_new_string(text, strlen(text));
	cc_error_clear(&e);
	cc_result_free(r);
	return 0;
}

/* Regression: closing the runtime from inside its own tool freed it under
 * the running eval. */
static int closer(void *user, const cc_value *args, cc_value **result, cc_tool_error *err)
{
	(void)args;
	(void)result;
	(void)err;
	cc_runtime_close(user);
	return 0;
}

static int slow_calls;
static int slow(void *user, const cc_value *args, cc_value **result, cc_tool_error *err)
{
	(void)user;
	(void)args;
	(void)err;
	slow_calls++;
	struct timespec ts = { 0, 300000000 };
	nanosleep(&ts, NULL);
	*result = NULL;
	return 0;
}

static int long_error(void *user, const cc_value *args, cc_value **result, cc_tool_error *err)
{
	(void)user;
	(void)args;
	(void)result;
	static char big[100001];
	memset(big, 'e', sizeof(big) - 1);
	return cc_tool_fail(err, "ValueError", "%s", big);
}

static void reenter_check(cc_language lang)
{
	reenter_rt = start(lang);
	cc_error err = { 0 };
	cc_runtime_bind_tool(reenter_rt, "again", reenter, NULL, &err);
	cc_result *r;
	const char *s = eval_str(reenter_rt, "again()", &r);
	CHECK(!strcmp(s, "invalid_input invalid_input"),
	      "eval and bind re-entered from a tool are refused: %s", s);
	cc_result_free(r);
	s = eval_str(reenter_rt, "'still ' + 'fine'", &r);
	CHECK(!strcmp(s, "still fine"), "and the runtime carries on: %s", s);
	cc_result_free(r);
	/* Regression: a huge host error message made a reply frame the worker
	 * refused, killing the session. It arrives cut, and the runtime lives. */
	cc_runtime_bind_tool(reenter_rt, "long_error", long_error, NULL, &err);
	s = eval_str(reenter_rt,
		     lang == CC_LANG_PYTHON
			     ? "try:\n    long_error()\nexcept ValueError as e:\n    r = "
			       "str(len(str(e)))\nr"
			     : "try { long_error() } catch (e) { String(e.message.length) }",
		     &r);
	CHECK(!strcmp(s, "4096"), "a huge host error message is cut to 4096 bytes: %s", s);
	cc_result_free(r);
	cc_runtime_close(reenter_rt);

	/* Regression: calls queued before the deadline still ran long after it
	 * (40 calls of 0.3 s each took 12 s with a 1 s deadline). */
	cc_options o;
	driver_options_init(&o, lang);
	o.sandbox = CC_SANDBOX_AUTO;
	o.limits.timeout_s = 1;
	o.limits.grace_s = 0.5;
	cc_runtime *rt = NULL;
	if (cc_runtime_new(&o, &rt, &err) < 0)
		return;
	cc_runtime_bind_tool(rt, "slow", slow, NULL, &err);
	const char *many_slow =
		lang == CC_LANG_PYTHON
			? "import asyncio\nawait asyncio.gather(*[atools.slow() for _ in "
			  "range(40)])"
			: "await Promise.all(Array.from({length: 40}, () => tools.slow()))";
	r = cc_runtime_eval(rt, many_slow, strlen(many_slow), 0);
	CHECK(cc_result_error_kind(r) == CC_ERR_TIMEOUT && slow_calls <= 6,
	      "calls after the deadline never reach the host: %s, %d of 40 ran",
	      cc_error_kind_name(cc_result_error_kind(r)), slow_calls);
	cc_result_free(r);
	cc_runtime_close(rt);

	rt = start(lang);
	cc_runtime_bind_tool(rt, "closer", closer, rt, &err);
	r = cc_runtime_eval(rt, "closer()", 8, 0);
	CHECK(cc_result_error_kind(r) == CC_ERR_WORKER_CRASHED,
	      "closing the runtime from its own tool ends the eval cleanly (%s)",
	      cc_error_kind_name(cc_result_error_kind(r)));
	cc_result_free(r);
	/* rt was freed when the eval returned */
}

static void many(cc_language lang, int n)
{
	cc_runtime *rt = start(lang);
	cc_error err = { 0 };
	cc_runtime_bind_tool(rt, "echo", echo, NULL, &err);
	char code[256];
	snprintf(code, sizeof(code),
		 lang == CC_LANG_PYTHON
			 ? "s = 0\nfor i in range(%d): s += echo(i)[0]\ns"
			 : "var s = 0; for (let i = 0; i < %d; i++) s += echo(i)[0]; s",
		 n);
	cc_result *r = cc_runtime_eval(rt, code, strlen(code), 0); /* warm-up */
	cc_result_free(r);
	long rss0 = rss_kib();
	calls = 0;
	r = cc_runtime_eval(rt, code, strlen(code), 0);
	long rss1 = rss_kib();
	const cc_value *v = cc_result_value(r);
	long long want = (long long)n * (n - 1) / 2;
	CHECK(cc_result_ok(r) && cc_value_type_of(v) == CC_VALUE_INT && v->u.i == want &&
		      calls == n,
	      "%d calls in one eval sum to %lld (%s)", n, want, cc_result_error_message(r));
	if (DRIVER_ASAN)
		printf("skip RSS growth under ASan (LeakSanitizer checks at exit)\n");
	else
		CHECK(rss1 - rss0 < 2048, "host RSS grew %ld KiB over %d calls (limit 2048)",
		      rss1 - rss0, n);
	cc_result_free(r);
	cc_runtime_close(rt);
}

static char lines[4096];
static void on_line(void *user, int fd, const char *line, size_t len)
{
	(void)user;
	size_t n = strlen(lines);
	snprintf(lines + n, sizeof(lines) - n, "%d:%.*s|", fd, (int)len, line);
}

static void output(cc_language lang)
{
	cc_runtime *rt = start(lang);
	cc_error err = { 0 };
	cc_runtime_bind_tool(rt, "echo", echo, NULL, &err);
	cc_runtime_set_output_handler(rt, on_line, NULL);
	const char *code =
		lang == CC_LANG_PYTHON
			? "import sys\nprint('a')\necho(1)\nprint('b', "
			  "file=sys.stderr)\nsys.stdout.write('tail')"
			: "console.log('a'); echo(1); console.error('b'); console.log('c\\nd')";
	cc_result *r = cc_runtime_eval(rt, code, strlen(code), 0);
	const char *want = lang == CC_LANG_PYTHON ? "1:a|2:b|1:tail|" : "1:a|2:b|1:c|1:d|";
	CHECK(cc_result_ok(r) && !strcmp(lines, want), "output handler got lines %s (want %s)",
	      lines, want);
	cc_result_free(r);
	cc_runtime_close(rt);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	cc_language lang =
		argc > 2 && !strcmp(argv[2], "python") ? CC_LANG_PYTHON : CC_LANG_JAVASCRIPT;
	if (argc >= 3 && !strcmp(argv[1], "basics"))
		basics(lang);
	else if (argc >= 2 && !strcmp(argv[1], "budget"))
		budget();
	else if (argc >= 3 && !strcmp(argv[1], "reenter"))
		reenter_check(lang);
	else if (argc >= 4 && !strcmp(argv[1], "many"))
		many(lang, atoi(argv[3]));
	else if (argc >= 3 && !strcmp(argv[1], "output"))
		output(lang);
	else {
		fprintf(stderr,
			"usage: cc-toolsdriver basics|reenter|many|output LANG [N] | budget\n");
		return 2;
	}
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
