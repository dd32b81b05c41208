"""Host tools through the C API (tests/integration/tools_driver.c): tools in
expressions, typed errors, concurrency, budgets shared across languages,
redaction, re-entry, output routing, and 10,000 calls without a leak.
Lying workers' calls are in test_library.py."""
import pytest

import conftest


def drive(*args, timeout=300):
    return conftest.drive("cc-toolsdriver", *args, timeout=timeout)


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
