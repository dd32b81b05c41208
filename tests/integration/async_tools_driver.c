/* cc-asyncdriver: deferred tool replies (cc_runtime_bind_tool_async,
 * cc_tool_call_return/_fail) and per-tool budgets (cc_runtime_set_tool_budget)
 * and cc_runtime_interrupt and cc_tool_call_hold (approval waits) end to end, for
 * test_async_tools.py. Prints "ok ..." / "FAIL ..." per check and "N failed" last.
 * usage: cc-asyncdriver fanout LANG | late LANG | budget | interrupt LANG | cap LANG |
 *        approval LANG | keywords (cc_runtime_bind_tool_async_kw, Python) | unhold LANG |
 *        cancelrace (an answer racing a cancel function) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codecage.h"
#include "driver.h"

static cc_runtime *start(cc_language lang, uint64_t max_result)
{
	return driver_start(lang, 20, max_result);
}

static const char *eval_str(cc_runtime *rt, const char *code, cc_result **keep)
{
	*keep = cc_runtime_eval(rt, code, strlen(code), 0);
	const cc_value *v = cc_result_value(*keep);
	if (!cc_result_ok(*keep))
		return cc_result_error_message(*keep);
	return cc_value_type_of(v) == CC_VALUE_STRING ? v->u.str.ptr : "(not a string)";
}

/* a() and b() are answered only once both were called, by another thread,
 * b first: the supervisor must keep serving the worker while calls wait. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cc_tool_call *held_a, *held_b;
static int answers_queued;
static pthread_t answerer;
static bool answerer_started;

static void *answer_both(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	cc_tool_call *a = held_a, *b = held_b;
	held_a = held_b = NULL;
	pthread_mutex_unlock(&lock);
	answers_queued += cc_tool_call_return(b, cc_value_new_string("B", 1)) == 0;
	answers_queued += cc_tool_call_return(a, cc_value_new_string("A", 1)) == 0;
	return NULL;
}

static void hold(void *user, const cc_value *args, cc_tool_call *call)
{
	(void)args;
	pthread_mutex_lock(&lock);
	*(user ? &held_b : &held_a) = call;
	bool both = held_a && held_b;
	pthread_mutex_unlock(&lock);
	if (both)
		answerer_started = pthread_create(&answerer, NULL, answer_both, NULL) == 0;
}

/* Answered inside the callback, on the eval's thread. */
static void now(void *user, const cc_value *args, cc_tool_call *call)
{
	(void)user;
	int n = args->u.array.len ? (int)args->u.array.items[0]->u.i : 0;
	if (n < 0) {
		cc_tool_call_fail(call, "PermissionError", "negative %d", n);
		return;
	}
	cc_tool_call_return(call, cc_value_new_int(n * 2));
}

/* A value over max_result: the guest gets ToolResultError. */
static void huge(void *user, const cc_value *args, cc_tool_call *call)
{
	(void)user;
	(void)args;
	static char big[8192];
	memset(big, 'h', sizeof(big));
	cc_tool_call_return(call, cc_value_new_string(big, sizeof(big)));
}

static void fanout(cc_language lang)
{
	bool py = lang == CC_LANG_PYTHON;
	cc_runtime *rt = start(lang, 4096);
	cc_error err = { 0 };
	int rc = cc_runtime_bind_tool_async(rt, "a", hold, NULL, &err);
	rc |= cc_runtime_bind_tool_async(rt, "b", hold, (void *)1, &err);
	rc |= cc_runtime_bind_tool_async(rt, "now", now, NULL, &err);
	rc |= cc_runtime_bind_tool_async(rt, "huge", huge, NULL, &err);
	CHECK(rc == 0, "bind async tools");
	rc = cc_runtime_bind_tool_async(rt, "bad name", now, NULL, &err);
	CHECK(rc < 0 && err.kind == CC_ERR_INVALID_INPUT, "a bad name is invalid_input");
	cc_error_clear(&err);
	cc_result *r;
	const char *s = eval_str(
		rt,
		py ? "import asyncio\n''.join(await asyncio.gather(atools.a(), atools.b()))"
		   : "(await Promise.all([tools.a(), tools.b()])).join('')",
		&r);
	/* The eval can end between the answerer's second answer and its count:
	 * wait for it (a race in this check, seen on a loaded machine). */
	if (answerer_started)
		pthread_join(answerer, NULL);
	answerer_started = false;
	CHECK(!strcmp(s, "AB") && answers_queued == 2,
	      "two calls wait together, answered out of order from another thread: %s", s);
	cc_result_free(r);
	s = eval_str(rt, py ? "str(now(21))" : "String(now(21))", &r);
	CHECK(!strcmp(s, "42"), "answered inside the callback, synchronous form: %s", s);
	cc_result_free(r);
	s = eval_str(rt,
		     py ? "try:\n    now(-1)\nexcept PermissionError as e:\n    r = str(e)\nr"
			: "try { now(-1) } catch (e) { e.name + ': ' + e.message }",
		     &r);
	CHECK(strstr(s, "negative -1") != NULL, "cc_tool_call_fail reaches the guest: %s", s);
	cc_result_free(r);
	cc_runtime_set_redaction(rt, true);
	s = eval_str(rt,
		     py ? "try:\n    now(-1)\nexcept PermissionError as e:\n    r = str(e)\nr"
			: "try { now(-1) } catch (e) { e.name + ': ' + e.message }",
		     &r);
	CHECK(strstr(s, "negative") == NULL, "redaction applies to deferred failures: %s", s);
	cc_result_free(r);
	cc_runtime_set_redaction(rt, false);
	CHECK(cc_runtime_set_tool_redaction(rt, "now", 1, &err) == 0, "now's redaction on");
	s = eval_str(rt,
		     py ? "try:\n    now(-1)\nexcept PermissionError as e:\n    r = str(e)\nr"
			: "try { now(-1) } catch (e) { e.message }",
		     &r);
	CHECK(!strcmp(s, CC_REDACTED_MESSAGE),
	      "a tool's redaction applies to its deferred failures: %s", s);
	cc_result_free(r);
	CHECK(cc_runtime_set_tool_redaction(rt, "now", -1, &err) == 0, "now's redaction -1");
	cc_runtime_set_redaction(rt, true);
	s = eval_str(rt,
		     py ? "try:\n    huge()\nexcept Exception as e:\n    r = type(e).__name__\nr"
			: "try { huge() } catch (e) { e.name }",
		     &r);
	CHECK(!strcmp(s, "ToolResultError"), "a value over the cap fails the call: %s", s);
	cc_result_free(r);
	cc_runtime_close(rt);
}

/* Calls answered after their eval, or after the runtime is gone. */
static cc_tool_call *kept[4];
static int nkept;
static void keep(void *user, const cc_value *args, cc_tool_call *call)
{
	(void)user;
	(void)args;
	kept[nkept++] = call;
}

static void late(cc_language lang)
{
	bool py = lang == CC_LANG_PYTHON;
	cc_runtime *rt = driver_start(lang, 0.5, 0);
	cc_error err = { 0 };
	cc_runtime_bind_tool_async(rt, "keep", keep, NULL, &err);
	cc_result *r = cc_runtime_eval(rt, py ? "keep()" : "keep()", 6, 0);
	CHECK(cc_result_error_kind(r) == CC_ERR_TIMEOUT && nkept == 1,
	      "an unanswered call ends in timeout (%s)",
	      cc_error_kind_name(cc_result_error_kind(r)));
	cc_result_free(r);
	/* CHECK evaluates its condition twice: answer outside it. */
	int rc = cc_tool_call_return(kept[0], cc_value_new_int(1));
	CHECK(rc == 1, "answering after the eval ended drops the answer");
	if (!cc_runtime_alive(rt)) {
		cc_runtime_close(rt);
		rt = NULL;
		rt = driver_start(lang, 0.5, 0);
		cc_runtime_bind_tool_async(rt, "keep", keep, NULL, &err);
	}
	/* JavaScript: a call nobody awaits does not hold the eval. (Python's
	 * engine waits for the tasks it started, so there it is a timeout
	 * again.) */
	const char *fire = py ? "keep()" : "tools.keep(); 7";
	r = cc_runtime_eval(rt, fire, strlen(fire), 0);
	const cc_value *v = cc_result_value(r);
	if (py)
		CHECK(cc_result_error_kind(r) == CC_ERR_TIMEOUT && nkept == 2,
		      "a second unanswered call (%s)", cc_error_kind_name(cc_result_error_kind(r)));
	else
		CHECK(cc_result_ok(r) && cc_value_type_of(v) == CC_VALUE_INT && v->u.i == 7 &&
			      nkept == 2,
		      "a call nobody awaits does not hold the eval (%s)",
		      cc_result_error_message(r));
	cc_result_free(r);
	if (!cc_runtime_alive(rt)) {
		cc_runtime_close(rt);
		rt = NULL;
		rt = driver_start(lang, 0.5, 0);
	}
	r = cc_runtime_eval(rt, "8", 1, 0);
	v = cc_result_value(r);
	CHECK(cc_result_ok(r) && v && v->u.i == 8, "the runtime carries on");
	cc_result_free(r);
	cc_runtime_close(rt);
	rc = cc_tool_call_fail(kept[1], "Error", "after close");
	CHECK(rc == 1, "answering after the runtime was closed is safe and dropped");
	rc = cc_tool_call_return(NULL, NULL);
	CHECK(rc == -1, "a NULL call is refused");
}

static int calls;
static int count(void *user, const cc_value *args, cc_value **result, cc_tool_error *err)
{
	(void)user;
	(void)args;
	(void)err;
	calls++;
	*result = cc_value_new_int(calls);
	return 0;
}

static void budget(void)
{
	cc_runtime *rt = start(CC_LANG_JAVASCRIPT, 0);
	cc_budget *own = cc_budget_new(1), *shared = cc_budget_new(5);
	cc_error err = { 0 };
	cc_runtime_bind_tool(rt, "x", count, NULL, &err);
	cc_runtime_bind_tool_async(rt, "y", now, NULL, &err);
	cc_runtime_set_budget(rt, shared);
	int rc = cc_runtime_set_tool_budget(rt, "x", own, &err);
	CHECK(rc == 0, "set a tool's own budget");
	rc = cc_runtime_set_tool_budget(rt, "nope", own, &err);
	CHECK(rc < 0 && err.kind == CC_ERR_INVALID_INPUT, "an unbound name is invalid_input (%s)",
	      err.message);
	cc_error_clear(&err);
	cc_result *r;
	const char *s = eval_str(rt,
				 "const out = []; for (const f of [x, x, y, y]) { try { "
				 "out.push(String(f(1))) } catch (e) { out.push(e.name) } } "
				 "out.join(',')",
				 &r);
	CHECK(!strcmp(s, "1,ToolBudgetError,2,2"), "x counts against its own budget only: %s", s);
	cc_result_free(r);
	CHECK(cc_budget_calls_made(own) == 1 && cc_budget_calls_made(shared) == 2 && calls == 1,
	      "own 1, shared 2, the host ran x once (%llu %llu %d)",
	      (unsigned long long)cc_budget_calls_made(own),
	      (unsigned long long)cc_budget_calls_made(shared), calls);
	cc_runtime_bind_tool(rt, "x", count, NULL, &err); /* rebinding keeps the budget */
	r = cc_runtime_eval(rt, "x()", 3, 0);
	CHECK(cc_result_error_kind(r) == CC_ERR_TOOL_BUDGET,
	      "uncaught, a per-tool refusal surfaces as tool_budget (%s)",
	      cc_error_kind_name(cc_result_error_kind(r)));
	cc_result_free(r);
	cc_runtime_set_tool_budget(rt, "x", NULL, &err);
	s = eval_str(rt, "String(x())", &r);
	CHECK(!strcmp(s, "2") && cc_budget_calls_made(shared) == 3,
	      "NULL puts x back on the runtime's budget: %s", s);
	cc_result_free(r);
	cc_budget_unref(own);
	cc_runtime_close(rt);
	cc_budget_unref(shared);
}

/* cc_runtime_interrupt from another thread stops a guest that never ends. */
static pthread_cond_t started_cond = PTHREAD_COND_INITIALIZER;
static bool started;
static void mark_started(void *user, const cc_value *args, cc_tool_call *call)
{
	(void)user;
	(void)args;
	pthread_mutex_lock(&lock);
	started = true;
	pthread_cond_signal(&started_cond);
	pthread_mutex_unlock(&lock);
	cc_tool_call_return(call, NULL);
}

struct evaluation {
	cc_runtime *rt;
	const char *code;
	cc_result *r;
};

static void *run_eval(void *arg)
{
	struct evaluation *e = arg;
	e->r = cc_runtime_eval(e->rt, e->code, strlen(e->code), 0);
	return NULL;
}

static void interrupt(cc_language lang)
{
	cc_runtime *rt = start(lang, 0);
	cc_error err = { 0 };
	cc_runtime_bind_tool_async(rt, "started", mark_started, NULL, &err);
	struct evaluation e = { rt,
				lang == CC_LANG_PYTHON ? "started()\nwhile True: pass"
						       : "started(); for (;;) {}",
				NULL };
	pthread_t t;
	pthread_create(&t, NULL, run_eval, &e);
	pthread_mutex_lock(&lock);
	while (!started)
		pthread_cond_wait(&started_cond, &lock);
	pthread_mutex_unlock(&lock);
	cc_runtime_interrupt(rt);
	pthread_join(t, NULL);
	CHECK(cc_result_error_kind(e.r) == CC_ERR_WORKER_CRASHED &&
		      strstr(cc_result_error_message(e.r), "interrupted") && !cc_runtime_alive(rt),
	      "an interrupted eval ends as worker_crashed: %s", cc_result_error_message(e.r));
	cc_result_free(e.r);
	cc_runtime_interrupt(rt); /* a dead runtime: nothing happens */
	cc_runtime_close(rt);
	cc_runtime_interrupt(NULL);
}

/* The in-flight cap (limits.max_pending_calls) and cancellation at the
 * end of an eval (cc_tool_call_on_cancel): "hold" keeps its calls, the
 * guest fans out 10 with a cap of 4, reports what the other 6 got, and
 * ends by timeout (both languages) or with a result (JavaScript); every
 * held call must be cancelled by the time the eval returns. */
static cc_tool_call *held[16];
static int nheld, cancels;
static char reported[128];

static void count_cancel(void *data)
{
	(void)data;
	cancels++;
}

static void hold_call(void *user, const cc_value *args, cc_tool_call *call)
{
	(void)user;
	(void)args;
	if (nheld < 16)
		held[nheld++] = call;
	cc_tool_call_on_cancel(call, count_cancel, NULL);
}

static int report(void *user, const cc_value *args, cc_value **result, cc_tool_error *err)
{
	(void)user;
	(void)err;
	const cc_value *a = args->u.array.len ? args->u.array.items[0] : NULL;
	snprintf(reported, sizeof(reported), "%s",
		 a && cc_value_type_of(a) == CC_VALUE_STRING ? a->u.str.ptr : "?");
	*result = NULL;
	return 0;
}

static cc_runtime *start_capped(cc_language lang, uint32_t cap)
{
	cc_options o;
	driver_options_init(&o, lang);
	o.sandbox = CC_SANDBOX_AUTO;
	o.limits.timeout_s = 2;
	o.limits.max_pending_calls = cap;
	cc_runtime *rt = driver_start_opts(&o);
	cc_error err = { 0 };
	cc_runtime_bind_tool_async(rt, "hold", hold_call, NULL, &err);
	cc_runtime_bind_tool(rt, "report", report, NULL, &err);
	return rt;
}

static void cap(cc_language lang)
{
	bool py = lang == CC_LANG_PYTHON;
	cc_options o;
	driver_options_init(&o, lang);
	CHECK(o.limits.max_pending_calls == 64, "the default cap is 64");
	o.limits.max_pending_calls = 0;
	cc_runtime *rt = NULL;
	cc_error err = { 0 };
	CHECK(cc_runtime_new(&o, &rt, &err) < 0 && err.kind == CC_ERR_INVALID_INPUT &&
		      strstr(err.message, "max_pending_calls"),
	      "a cap of 0 is invalid_input naming the option (%s)", err.message);
	cc_error_clear(&err);

	rt = start_capped(lang, 4);
	const char *code =
		/* Python's atools wait for their replies in order, so the
		 * refused calls are made synchronously once the four are out. */
		py ? "import asyncio\nnames = []\n"
		     "ts = [asyncio.ensure_future(atools.hold(i)) for i in range(4)]\n"
		     "await asyncio.sleep(0)\nfor i in range(6):\n    try:\n        hold(i)\n"
		     "    except Exception as e:\n"
		     "        names.append(type(e).__name__ + ': ' + str(e))\n"
		     "report('%d %s' % (len(names), names[0]))\nwhile True: pass"
		   : "const names = []; const ps = []; for (let i = 0; i < 10; i++) "
		     "ps.push(tools.hold(i).catch(e => { names.push(e.name + ': ' + e.message) "
		     "})); "
		     "await Promise.all(ps.slice(4)); report(names.length + ' ' + names[0]); "
		     "for (;;) {}";
	cc_result *r = cc_runtime_eval(rt, code, strlen(code), 0);
	CHECK(cc_result_error_kind(r) == CC_ERR_TIMEOUT, "the fan-out ends in timeout (%s)",
	      cc_error_kind_name(cc_result_error_kind(r)));
	cc_result_free(r);
	CHECK(nheld == 4, "only the cap's 4 calls reached the host (%d)", nheld);
	CHECK(!strncmp(reported, "6 ToolConcurrencyError: 4 host tool calls are already in flight",
		       63) &&
		      strstr(reported, "max_pending_calls"),
	      "the other 6 failed in the guest, naming the cap: %s", reported);
	CHECK(cancels == 4, "every held call was cancelled when the eval timed out (%d)", cancels);
	int dropped = 0;
	for (int i = 0; i < nheld; i++)
		dropped += cc_tool_call_return(held[i], NULL) == 1;
	CHECK(dropped == 4, "answers after the cancel are dropped (%d)", dropped);
	cc_runtime_close(rt);

	if (!py) {
		/* Ended by a result: the held calls are cancelled too, and the
		 * next eval has the whole cap again. */
		nheld = cancels = 0;
		rt = start_capped(lang, 4);
		const char *fire = "for (let i = 0; i < 4; i++) tools.hold(i); 7";
		r = cc_runtime_eval(rt, fire, strlen(fire), 0);
		CHECK(cc_result_ok(r) && nheld == 4 && cancels == 4,
		      "an eval that returns cancels its unanswered calls (%d held, %d cancelled)",
		      nheld, cancels);
		cc_result_free(r);
		r = cc_runtime_eval(rt, fire, strlen(fire), 0);
		CHECK(cc_result_ok(r) && nheld == 8 && cancels == 8,
		      "the next eval has the whole cap (%d held)", nheld);
		cc_result_free(r);
		cc_runtime_close(rt);
		for (int i = 0; i < nheld; i++)
			cc_tool_call_fail(held[i], "Error", "after close");
	}
}

/* cc_tool_call_hold: a held call's wait is not on the eval's clock, its
 * approval timeout bounds it. The answer comes from another thread after
 * approve_after_s. */
static double approve_after_s, approval_s;
static int hold_rc[3];

static void *approve_later(void *arg)
{
	struct timespec ts = { (time_t)approve_after_s,
			       (long)((approve_after_s - (time_t)approve_after_s) * 1e9) };
	nanosleep(&ts, NULL);
	answers_queued = cc_tool_call_return(arg, cc_value_new_int(41));
	return NULL;
}

static void ask(void *user, const cc_value *args, cc_tool_call *call)
{
	(void)user;
	(void)args;
	hold_rc[0] = cc_tool_call_hold(call, 0);
	hold_rc[1] = cc_tool_call_hold(call, 86401);
	hold_rc[2] = cc_tool_call_hold(call, approval_s);
	pthread_t t;
	pthread_create(&t, NULL, approve_later, call);
	pthread_detach(t);
}

static void approval(cc_language lang)
{
	bool py = lang == CC_LANG_PYTHON;
	const char *code = py ? "ask() + 1" : "(await tools.ask()) + 1";
	cc_error err = { 0 };
	CHECK(cc_tool_call_hold(NULL, 1) == -1, "hold(NULL) is refused");
	cc_runtime *rt = driver_start(lang, 1, 0);
	cc_runtime_bind_tool_async(rt, "ask", ask, NULL, &err);

	/* Approved after 1.5 s: longer than the eval's 1 s deadline. */
	approve_after_s = 1.5;
	approval_s = 30;
	cc_result *r = cc_runtime_eval(rt, code, strlen(code), 0);
	const cc_value *v = cc_result_value(r);
	CHECK(cc_result_ok(r) && v && v->type == CC_VALUE_INT && v->u.i == 42,
	      "a held call waits past the eval's deadline (%s %s)",
	      cc_error_kind_name(cc_result_error_kind(r)), cc_result_error_message(r));
	CHECK(hold_rc[0] == -1 && hold_rc[1] == -1 && hold_rc[2] == 0,
	      "approval timeouts outside (0, 86400] are refused (%d %d %d)", hold_rc[0], hold_rc[1],
	      hold_rc[2]);
	CHECK(cc_result_duration(r) >= 1.5, "the duration counts the wait (%.3g s)",
	      cc_result_duration(r));
	cc_result_free(r);

	/* Not answered within its approval timeout: the eval ends as timeout,
	 * saying so; the runtime goes on; the late answer is dropped. */
	approve_after_s = 1.5;
	approval_s = 0.3;
	r = cc_runtime_eval(rt, code, strlen(code), 0);
	CHECK(cc_result_error_kind(r) == CC_ERR_TIMEOUT &&
		      strstr(cc_result_error_message(r), "approval timeout of 0.3 s") &&
		      strstr(cc_result_error_message(r), "approval_timeout_s"),
	      "an approval timeout ends the eval naming it (%s)", cc_result_error_message(r));
	CHECK(cc_result_duration(r) < 1.2, "it ends at the approval timeout (%.3g s)",
	      cc_result_duration(r));
	cc_result_free(r);
	CHECK(cc_runtime_alive(rt), "the runtime is still alive after an approval timeout");
	struct timespec ts = { 1, 500000000 };
	nanosleep(&ts, NULL);
	CHECK(answers_queued == 1, "the late answer was dropped (%d)", answers_queued);
	r = cc_runtime_eval(rt, "6 * 7", 5, 0);
	v = cc_result_value(r);
	CHECK(cc_result_ok(r) && v && v->u.i == 42, "and serves the next eval");
	cc_result_free(r);
	cc_runtime_close(rt);
}

/* cc_tool_call_unhold: the host's decision on a held call, against its
 * approval deadline, by the call's own deadline. "ask" holds its call; the
 * guest then calls "block", a synchronous tool that keeps the eval's
 * thread (so the supervisor cannot look at the clock) until the deciding
 * thread has decided: in time, or only once the deadline has passed. */
static cc_tool_call *asked;
static int64_t held_at;
static bool decide_late;
static int unhold_rc, unheld_first, answer_rc;
static pthread_mutex_t decided_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t decided_cond = PTHREAD_COND_INITIALIZER;
static bool decided;
static pthread_t decider;

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* the supervisor's clock (cc_now_ns) */
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Wait for the clock to pass t: a condition, not a schedule. */
static void until_ns(int64_t t)
{
	for (int64_t now; (now = mono_ns()) <= t;) {
		struct timespec ts = { 0, t - now < 10000000 ? (long)(t - now) + 1 : 10000000 };
		nanosleep(&ts, NULL);
	}
}

static void *decide(void *arg)
{
	(void)arg;
	int64_t deadline = held_at + (int64_t)(approval_s * 1e9);
	if (decide_late)
		until_ns(deadline);
	unhold_rc = cc_tool_call_unhold(asked);
	pthread_mutex_lock(&decided_lock);
	decided = true;
	pthread_cond_signal(&decided_cond);
	pthread_mutex_unlock(&decided_lock);
	until_ns(deadline + 100000000); /* the tool runs past the approval deadline */
	answer_rc = cc_tool_call_return(asked, cc_value_new_int(41));
	return NULL;
}

static void ask_hold(void *user, const cc_value *args, cc_tool_call *call)
{
	(void)user;
	(void)args;
	unheld_first = cc_tool_call_unhold(call); /* not held yet */
	cc_tool_call_hold(call, approval_s);
	held_at = mono_ns();
	asked = call;
	decided = false;
	pthread_create(&decider, NULL, decide, NULL);
}

static int block(void *user, const cc_value *args, cc_value **result, cc_tool_error *err)
{
	(void)user;
	(void)args;
	(void)err;
	pthread_mutex_lock(&decided_lock);
	while (!decided)
		pthread_cond_wait(&decided_cond, &decided_lock);
	pthread_mutex_unlock(&decided_lock);
	*result = cc_value_new_int(0);
	return 0;
}

static void unhold(cc_language lang)
{
	const char *code = lang == CC_LANG_PYTHON ? "import asyncio\nasync def m():\n"
						    "    t = asyncio.ensure_future(atools.ask())\n"
						    "    await asyncio.sleep(0)\n    block()\n"
						    "    return (await t) + 1\nasyncio.run(m())"
						  : "var p = tools.ask(); block(); (await p) + 1";
	cc_error err = { 0 };
	CHECK(cc_tool_call_unhold(NULL) == -1, "unhold(NULL) is refused");
	cc_runtime *rt = driver_start(lang, 30, 0);
	cc_runtime_bind_tool_async(rt, "ask", ask_hold, NULL, &err);
	cc_runtime_bind_tool(rt, "block", block, NULL, &err);
	approval_s = 0.3;

	/* Decided in time: the approval timeout no longer applies, though the
	 * answer comes after it (the eval's clock, 30 s, bounds the tool). */
	decide_late = false;
	cc_result *r = cc_runtime_eval(rt, code, strlen(code), 0);
	pthread_join(decider, NULL);
	const cc_value *v = cc_result_value(r);
	CHECK(unheld_first == -1, "a call that is not held is not unheld (%d)", unheld_first);
	CHECK(unhold_rc == 0 && answer_rc == 0 && cc_result_ok(r) && v && v->u.i == 42,
	      "unheld in time, its tool may run past the approval deadline (%d %d %s %s)",
	      unhold_rc, answer_rc, cc_error_kind_name(cc_result_error_kind(r)),
	      cc_result_error_message(r));
	cc_result_free(r);

	/* Decided once the call's deadline has passed, while the supervisor
	 * has not looked yet: refused, the answer dropped, the eval ends as
	 * the approval timeout, the runtime goes on. */
	decide_late = true;
	r = cc_runtime_eval(rt, code, strlen(code), 0);
	CHECK(unhold_rc == -1, "unhold past the call's own deadline is refused (%d)", unhold_rc);
	CHECK(cc_result_error_kind(r) == CC_ERR_TIMEOUT &&
		      strstr(cc_result_error_message(r), "approval timeout of 0.3 s"),
	      "the eval ends as the approval timeout (%s)", cc_result_error_message(r));
	cc_result_free(r);
	pthread_join(decider, NULL); /* it has answered */
	CHECK(answer_rc == 1, "the answer to the expired call was dropped (%d)", answer_rc);
	r = cc_runtime_eval(rt, "6 * 7", 5, 0);
	v = cc_result_value(r);
	CHECK(cc_runtime_alive(rt) && cc_result_ok(r) && v && v->u.i == 42,
	      "and the runtime serves the next eval");
	cc_result_free(r);
	cc_runtime_close(rt);
}

/* cc_runtime_bind_tool_async_kw: the tool sees the Python guest's keyword
 * arguments ("k=v,..." in order, or "none" when there were none: NULL),
 * answered now or from another thread; a tool bound with
 * cc_runtime_bind_tool_async refuses keywords as TypeError and is never
 * called. */
static cc_tool_call *kw_held;

/* Answers kw_held with the text it is given (freed). */
static void *answer_kw(void *arg)
{
	cc_tool_call_return(kw_held, cc_value_new_string(arg, strlen(arg)));
	free(arg);
	return NULL;
}

static int old_calls;
static void describe_kw(void *user, const cc_value *args, const cc_value *kwargs,
			cc_tool_call *call)
{
	char buf[256] = "";
	size_t n = 0;
	if (!kwargs)
		n = (size_t)snprintf(buf, sizeof(buf), "none");
	for (size_t i = 0; kwargs && i < kwargs->u.map.len && n < sizeof(buf); i++) {
		const cc_value *v = kwargs->u.map.vals[i];
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s=%lld", i ? "," : "",
				      kwargs->u.map.keys[i],
				      cc_value_type_of(v) == CC_VALUE_INT ? (long long)v->u.i : -1);
	}
	snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "/%zu", args->u.array.len);
	if (user) { /* answered later, from another thread */
		kw_held = call;
		pthread_create(&answerer, NULL, answer_kw, strdup(buf));
		answerer_started = true;
		return;
	}
	cc_tool_call_return(call, cc_value_new_string(buf, strlen(buf)));
}

static void old_style(void *user, const cc_value *args, cc_tool_call *call)
{
	(void)user, (void)args;
	old_calls++;
	cc_tool_call_return(call, cc_value_new_string("called", 6));
}

static void keywords(void)
{
	cc_runtime *rt = start(CC_LANG_PYTHON, 0);
	cc_error err = { 0 };
	int rc = cc_runtime_bind_tool_async_kw(rt, "kw", describe_kw, NULL, &err);
	rc |= cc_runtime_bind_tool_async_kw(rt, "kwlater", describe_kw, (void *)1, &err);
	rc |= cc_runtime_bind_tool_async(rt, "old", old_style, NULL, &err);
	CHECK(rc == 0, "bind async tools with and without keywords");
	cc_result *r;
	const char *s = eval_str(rt, "kw(1, sheet=2, row=3)", &r);
	CHECK(!strcmp(s, "sheet=2,row=3/1"), "the tool sees the keywords in order: %s", s);
	cc_result_free(r);
	s = eval_str(rt, "kw(1, 2)", &r);
	CHECK(!strcmp(s, "none/2"), "kwargs is NULL when there are none: %s", s);
	cc_result_free(r);
	s = eval_str(rt, "import asyncio\nawait atools.kwlater(row=7)", &r);
	if (answerer_started)
		pthread_join(answerer, NULL);
	answerer_started = false;
	CHECK(!strcmp(s, "row=7/0"), "answered from another thread, awaited: %s", s);
	cc_result_free(r);
	s = eval_str(rt,
		     "try:\n    old(1, row=3)\nexcept TypeError as e:\n    r = 'TypeError: ' + "
		     "str(e)\nr",
		     &r);
	CHECK(strstr(s, "TypeError: old() takes positional arguments only") != NULL &&
		      old_calls == 0,
	      "a tool bound without _kw refuses keywords and is not called (%d calls): %s",
	      old_calls, s);
	cc_result_free(r);
	s = eval_str(rt, "old(1)", &r);
	CHECK(!strcmp(s, "called") && old_calls == 1, "without keywords it is called: %s", s);
	cc_result_free(r);
	cc_runtime_close(rt);
}

/* An answer from another thread while the call's cancel function runs
 * (cc_tool_call_on_cancel): the answer must return only once the function
 * returned, so the answering thread may free the function's data (the MCP
 * server's upstream reader did, and the cancel function then used freed
 * memory). The cancel function lets the answerer go, then takes its time;
 * the answerer answers and frees the data. A second call is answered from
 * inside its own cancel function, which must not wait for itself. */
struct race {
	cc_tool_call *call;
	bool in_cancel;
};
static pthread_cond_t race_cond = PTHREAD_COND_INITIALIZER;
static bool race_answered; /* the answerer's cc_tool_call_return returned */
static bool race_early, self_answered;

static void *race_answer(void *arg)
{
	struct race *r = arg;
	pthread_mutex_lock(&lock);
	while (!r->in_cancel)
		pthread_cond_wait(&race_cond, &lock);
	pthread_mutex_unlock(&lock);
	cc_tool_call_return(r->call, NULL);
	pthread_mutex_lock(&lock);
	race_answered = true;
	pthread_mutex_unlock(&lock);
	free(r); /* what the host may do once the call is answered */
	return NULL;
}

static void race_cancel(void *data)
{
	struct race *r = data;
	pthread_mutex_lock(&lock);
	r->in_cancel = true;
	pthread_cond_broadcast(&race_cond);
	pthread_mutex_unlock(&lock);
	struct timespec ts = { 0, 300 * 1000000L }; /* the answerer's chance */
	nanosleep(&ts, NULL);
	pthread_mutex_lock(&lock);
	race_early = race_answered; /* and r freed, before the fix */
	pthread_mutex_unlock(&lock);
}

static pthread_t race_thread;
static bool race_started;

static void race_tool(void *user, const cc_value *args, cc_tool_call *call)
{
	(void)user, (void)args;
	struct race *r = calloc(1, sizeof(*r));
	if (!r) {
		cc_tool_call_fail(call, "MemoryError", "out of memory");
		return;
	}
	r->call = call;
	cc_tool_call_on_cancel(call, race_cancel, r);
	race_started = pthread_create(&race_thread, NULL, race_answer, r) == 0;
}

static void self_cancel(void *data)
{
	self_answered = cc_tool_call_fail(data, "Cancelled", "the eval ended") >= 0;
}

static void self_tool(void *user, const cc_value *args, cc_tool_call *call)
{
	(void)user, (void)args;
	cc_tool_call_on_cancel(call, self_cancel, call);
}

static void cancelrace(void)
{
	cc_runtime *rt = start(CC_LANG_JAVASCRIPT, 0);
	cc_error err = { 0 };
	cc_runtime_bind_tool_async(rt, "race", race_tool, NULL, &err);
	cc_runtime_bind_tool_async(rt, "selfish", self_tool, NULL, &err);
	cc_result *r = NULL;
	const char *s = eval_str(rt, "tools.race(); tools.selfish(); 'ended'", &r);
	CHECK(!strcmp(s, "ended") && race_started, "the eval ends with both calls unanswered: %s",
	      s);
	cc_result_free(r);
	if (race_started)
		pthread_join(race_thread, NULL);
	CHECK(!race_early, "an answer from another thread returned only after the running cancel "
			   "function did (so its data could be freed)");
	CHECK(self_answered, "a cancel function answers its own call without waiting for itself");
	s = eval_str(rt, "'still serving'", &r);
	CHECK(!strcmp(s, "still serving"), "the runtime serves the next eval: %s", s);
	cc_result_free(r);
	cc_runtime_close(rt);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: cc-asyncdriver fanout LANG | late LANG | budget | "
				"interrupt LANG | cap LANG | approval LANG | keywords | unhold "
				"LANG | cancelrace\n");
		return 2;
	}
	cc_language lang =
		argc > 2 && !strcmp(argv[2], "python") ? CC_LANG_PYTHON : CC_LANG_JAVASCRIPT;
	if (!strcmp(argv[1], "fanout"))
		fanout(lang);
	else if (!strcmp(argv[1], "late"))
		late(lang);
	else if (!strcmp(argv[1], "budget"))
		budget();
	else if (!strcmp(argv[1], "interrupt"))
		interrupt(lang);
	else if (!strcmp(argv[1], "cap"))
		cap(lang);
	else if (!strcmp(argv[1], "approval"))
		approval(lang);
	else if (!strcmp(argv[1], "keywords"))
		keywords();
	else if (!strcmp(argv[1], "unhold"))
		unhold(lang);
	else if (!strcmp(argv[1], "cancelrace"))
		cancelrace();
	printf("children=%ld\n", children());
	printf("%d failed\n", failures);
	return failures != 0;
}
