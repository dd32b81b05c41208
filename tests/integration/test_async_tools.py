"""Deferred (asynchronous) tool replies and per-tool budgets through the C
API (tests/integration/async_tools_driver.c): calls answered later, out of
order, from another thread; answers after the eval or the runtime is gone;
a tool's own budget; cc_runtime_interrupt from another thread; the
in-flight cap (max_pending_calls) and cancellation of unanswered calls
when their eval ends (cc_tool_call_on_cancel); calls held for approval
(cc_tool_call_hold) and the host's decision on them against their approval
deadline (cc_tool_call_unhold); an answer racing a cancel function."""
import conftest


# (scenario, language) -> the checks it makes (language None: either);
# test_sanitized.py runs the same scenarios.
CHECKS = {("fanout", None): 10, ("late", None): 6, ("budget", None): 6, ("interrupt", None): 1,
          ("cap", "javascript"): 9, ("cap", "python"): 7, ("approval", None): 9,
          ("keywords", None): 6, ("unhold", None): 7, ("cancelrace", None): 4}


def checks(scenario, lang=None):
    return CHECKS.get((scenario, lang), CHECKS.get((scenario, None)))


def drive(*args, timeout=300):
    lang = args[1] if len(args) > 1 else None
    return conftest.drive("cc-asyncdriver", *args, checks=checks(args[0], lang),
                          timeout=timeout)


def test_deferred_replies_fan_out(lang):
    drive("fanout", lang)


def test_late_answers_are_dropped_safely(lang):
    drive("late", lang)


def test_per_tool_budget():
    drive("budget")


def test_interrupt_from_another_thread(lang):
    drive("interrupt", lang)


def test_in_flight_cap_and_cancel_at_eval_end(lang):
    drive("cap", lang)


def test_a_held_call_waits_outside_the_deadline_within_its_approval_timeout(lang):
    drive("approval", lang)


def test_an_answer_racing_the_cancel_function_waits_for_it():
    """Regression: an answer from another thread while the call's cancel
    function ran returned at once, so the host freed the data the function
    was still using (the MCP server's upstream reader did: a crash)."""
    drive("cancelrace")


def test_async_tools_with_keyword_arguments():
    """cc_runtime_bind_tool_async_kw sees a Python guest's keywords (NULL
    when none); an async tool bound without _kw refuses them uncalled."""
    out = drive("keywords")
    assert "refuses keywords and is not called" in out


def test_unhold_decides_by_the_calls_own_approval_deadline(lang):
    drive("unhold", lang)
