"""Source that starts with a UTF-8 byte order mark (as editors on Windows
save it) runs as python3 and node run the same file: python3's tokenizer
skips the mark (engine_py.c's py_eval does), and JavaScript takes U+FEFF
for white space (QuickJS and V8 alike, so node's columns count it too)."""
import shutil
import subprocess

import pytest

from conftest import cli

BOM = b"\xef\xbb\xbf"


def host(cmd, path):
    if not shutil.which(cmd):
        pytest.fail(f"{cmd} is needed (scripts/install-deps installs it)")
    return subprocess.run([cmd, path], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("suffix,interpreter,body", [
    (".py", "python3", b"print('h\xc3\xa9', 1 + 1)\n"),
    (".py", "python3", b"# -*- coding: utf-8 -*-\nimport sys\nprint(sys.version_info[0])\n"),
    (".py", "python3", b"x = 21\nprint(x * 2)\n"),
    (".js", "node", b"console.log('h\xc3\xa9', 1 + 1)\n"),
    (".js", "node", b"const x = 21;\nconsole.log(x * 2)\n"),
])
def test_file_with_a_bom_runs_as_under_its_interpreter(tmp_path, suffix, interpreter, body):
    """Regression (Python): `SyntaxError: invalid non-printable character
    U+FEFF`. (JavaScript ran such a file already.)"""
    f = tmp_path / ("bom" + suffix)
    f.write_bytes(BOM + body)
    want = host(interpreter, str(f))
    r = cli("run", str(f))
    assert (r.rc, r.stdout) == (want.returncode, want.stdout), (r, want)


def test_python_bom_keeps_the_line_numbers(tmp_path):
    f = tmp_path / "bom.py"
    f.write_bytes(BOM + b"x = 1\n1 / 0\n")
    r = cli("run", "--json", str(f))
    err = r.json["error"]
    assert err["type"] == "ZeroDivisionError", r
    assert 'File "<code>", line 2, in <module>' in err["traceback"], err
    assert "\ufeff" not in err["traceback"], err


def test_js_bom_before_a_completion_value(tmp_path):
    f = tmp_path / "bom.js"
    f.write_bytes(BOM + b"1 + 1")
    r = cli("run", "--json", str(f))
    assert r.value == 2, r
