"""codecage's own QuickJS patch (deps/quickjs/patches/0001): a '.' after a
hexadecimal, octal or binary literal is a property access, never a fraction.
Without it `0x10.toString()` is a syntax error (pptxgenjs's bundle fails at
load). Each case is compared with node, which follows ECMAScript here; the
string conversions and real syntax errors around it must stay as they were."""
import json
import shutil
import subprocess

import pytest

from conftest import ev

CASES = [
    "0x10.toString()",
    "0x10.toString(16)",
    "0XfF.toFixed(1)",
    "0b101.toString(2)",
    "0o17.valueOf()",
    "0x10n.toString()",
    "String(Number('0x1.8'))",
    "String(Number('0b1.1'))",
    "String(Number('0x10'))",
    "String(0x1e3)",
    "String(1.5e3 + .5 + 5.)",
    "String(08.5)",
    "String(parseFloat('0x1.8'))",
    "String(JSON.parse('[1.5e2]'))",
]

# Not numbers at all, in node as in ECMAScript.
SYNTAX_ERRORS = ["0x1.8", "0b1.1", "0x10.5.toString()", "0x1p3"]


def node(code):
    if not shutil.which("node"):
        pytest.fail("node is needed (scripts/install-deps installs nodejs)")
    out = subprocess.run(["node", "-e", "process.stdout.write(JSON.stringify(eval(%s)))"
                          % json.dumps(code)], capture_output=True, text=True, timeout=60)
    return out


@pytest.mark.parametrize("code", CASES)
def test_literal_like_node(code):
    want = node(code)
    assert want.returncode == 0, want.stderr
    r = ev("javascript", code)
    assert r.rc == 0, r
    assert r.value == json.loads(want.stdout)


@pytest.mark.parametrize("code", SYNTAX_ERRORS)
def test_not_a_number_literal(code):
    assert node(code).returncode != 0
    r = ev("javascript", code)
    assert r.kind == "syntax_error", r
