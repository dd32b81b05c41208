"""No MCP call fails because of the type of its last value (issue 16,
item 3): the result is ok, its text block shows the value's text under a
line naming the type, and structuredContent has value (the text) and
value_type. A value that converts has value_type null."""
import pytest

from mcp_util import Stdio

CASES = [
    ("run_python", "{1, 2}", "set", "{1, 2}"),
    ("run_python", "import datetime\ndatetime.time(3, 4)", "datetime.time",
     "datetime.time(3, 4)"),  # a date crosses as itself (issue 27); a time does not
    ("run_python", "import decimal\ndecimal.Decimal('2.5')", "decimal.Decimal", "Decimal('2.5')"),
    ("run_python", "import pandas as pd\npd.DataFrame({'a': [1, 2]})", "DataFrame",
     "   a\n0  1\n1  2"),
    ("run_python", "import pandas as pd\npd.Series([5])", "Series", "0    5\ndtype: int64"),
    ("run_javascript", "({ f: function f() {} })", "Object", "{ f: [Function: f] }"),
    ("run_javascript", "Symbol('s')", "symbol", "Symbol(s)"),
    ("run_javascript", "new Set([1])", "Set", "Set(1) { 1 }"),
]


@pytest.fixture(scope="module")
def server():
    s = Stdio()
    yield s
    s.close()


@pytest.mark.parametrize("tool, code, type_name, text", CASES)
def test_a_value_with_no_json_form_comes_back_as_text(server, tool, code, type_name, text):
    r = server.call(tool, code)
    assert r["isError"] is False, r
    sc = r["structuredContent"]
    assert (sc["status"], sc["value"], sc["value_type"]) == ("ok", text, type_name)
    block = r["content"][0]["text"]
    assert block.startswith(f"status: ok\nvalue (type {type_name}, shown as its text; it has "
                            f"no JSON form):\n{text}\n"), block


def test_a_value_that_converts_is_unchanged(server):
    r = server.call("run_python", "[1, 'a']")
    sc = r["structuredContent"]
    assert (sc["value"], sc["value_type"]) == ([1, "a"], None)
    assert r["content"][0]["text"].startswith('status: ok\nvalue: [1, "a"]\n')
