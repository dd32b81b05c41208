"""Host tools through the C API (tests/integration/tools_driver.c): tools in
expressions, typed errors, concurrency, budgets shared across languages,
redaction, re-entry, output routing, and 10,000 calls without a leak.
Lying workers' calls are in test_library.py."""
import pytest

import conftest


# (scenario, language) -> the checks it makes (language None: either);
# test_sanitized.py runs the same scenarios.
CHECKS = {("basics", "javascript"): 25, ("basics", "python"): 26, ("budget", None): 11,
          ("reenter", None): 5, ("output", None): 1, ("many", None): 2}


def checks(scenario, lang=None):
    return CHECKS.get((scenario, lang), CHECKS.get((scenario, None)))


def drive(*args, timeout=300):
    lang = args[1] if len(args) > 1 else None
    return conftest.drive("cc-toolsdriver", *args, checks=checks(args[0], lang),
                          timeout=timeout)


def test_tool_basics(lang):
    drive("basics", lang)


def test_budget_shared_by_python_and_javascript():
    drive("budget")


def test_eval_reentered_from_a_tool_is_refused(lang):
    drive("reenter", lang)


def test_output_routed_line_by_line(lang):
    drive("output", lang)


@pytest.mark.slow
def test_ten_thousand_calls_no_leak(lang):
    drive("many", lang, "10000")
