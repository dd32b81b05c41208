"""The CLI never fails because of the type of the last value (issue 16,
item 3): in text mode a value that cannot be converted is printed as its
text, with a note naming its type on stderr. --json keeps the strict rule."""
import subprocess

import pytest

from conftest import CLI, ev


def text_run(*args):
    """The CLI in text mode (conftest's cli() reads stdout as JSON when it
    starts with a brace, as a set's text does)."""
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=60)

CASES = [
    ("python", "{1, 2}", "set", "{1, 2}"),
    ("python", "import datetime\ndatetime.time(3, 4)", "datetime.time",
     "datetime.time(3, 4)"),  # a date crosses as itself (issue 27); a time does not
    ("python", "import decimal\ndecimal.Decimal('2.5')", "decimal.Decimal", "Decimal('2.5')"),
    ("python", "import pandas as pd\npd.DataFrame({'a': [1, 2]})", "DataFrame",
     "   a\n0  1\n1  2"),
    ("javascript", "({ f: function f() {} })", "Object", "{ f: [Function: f] }"),
    ("javascript", "new Set([1])", "Set", "Set(1) { 1 }"),
]


@pytest.mark.parametrize("lang, code, type_name, text", CASES)
def test_text_mode_prints_the_text_and_names_the_type(lang, code, type_name, text):
    r = text_run("eval", "--lang", lang, "--", code)
    assert r.returncode == 0, r
    assert r.stdout == text + "\n"
    # (a DataFrame also has a display, named on the next line)
    assert r.stderr.splitlines()[0] == (f"codecage: note: the value (type {type_name}) has no "
                                        "JSON form; shown as its text")


@pytest.mark.parametrize("lang, code, type_name, text", CASES)
def test_json_mode_keeps_the_strict_rule(lang, code, type_name, text):
    """--json is the machine contract (DESIGN.md's values): still a
    TypeError there."""
    r = ev(lang, code)
    assert r.rc == 1 and r.kind == "guest_error", r
    assert r.json["error"]["type"] == "TypeError"


def test_a_value_that_converts_has_no_note():
    r = text_run("eval", "--lang", "python", "--", "{'a': 1}")
    assert r.stderr == ""
