"""The `codecage` command line: flags, input checks, output forms, exit codes."""
import json
import os
import re
import subprocess

import pytest

from conftest import CLI, cli, ev


def test_usage_errors_exit_2():
    for args in ([], ["frobnicate"], ["eval", "1+1"], ["eval", "--lang", "cobol", "1"],
                 ["run", "--timeout", "-1", "x.py"], ["run", "--timeout", "abc", "x.py"],
                 ["run", "--memory", "1", "x.py"], ["run", "--sandbox", "maybe", "x.py"],
                 ["run", "--bogus", "x.py"], ["run"], ["run", "a.py", "b.py"],
                 ["run", "no-extension"]):
        r = cli(*args)
        assert r.rc == 2, (args, r)
        assert_one_line_and_try_help(r, "codecage")


def assert_one_line_and_try_help(r, cmd):
    """A usage error is its own line and a pointer to --help, never the
    whole help text (issue 27: the line was lost above 40 lines of it)."""
    lines = r.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith(cmd + ": "), r
    assert lines[1] == f"try '{cmd} --help'", r
    assert "usage:" not in r.stderr, r


def test_unreadable_file_is_usage_error(tmp_path):
    r = cli("run", str(tmp_path / "missing.py"))
    assert r.rc == 2
    assert "cannot read" in r.stderr
    assert_one_line_and_try_help(r, "codecage")
    r = cli("run", "--lang", "python", str(tmp_path))  # a directory
    assert r.rc == 2


def meson_version():
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "meson.build")) as f:
        return re.search(r"^project\('codecage',.*?version : '([^']+)'", f.read(),
                         re.S | re.M).group(1)


def test_version_is_the_meson_project_version():
    """`codecage --version`: one line, the library's version (cc_version),
    which is meson's project version (issue 27: there was no --version)."""
    r = cli("--version")
    assert r.rc == 0 and r.stdout == f"codecage {meson_version()}\n" and not r.stderr, r
    # the MCP server's serverInfo says the same
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}
    p = subprocess.run([CLI, "mcp", "--sandbox", "auto", "--pool", "0"],
                       input=json.dumps(init) + "\n", capture_output=True, text=True, timeout=60)
    info = json.loads(p.stdout.splitlines()[0])["result"]["serverInfo"]
    assert info["version"] == meson_version(), p


def test_json_and_raw_are_refused_together():
    """The usage line says [--json|--raw]: both at once is a usage error
    (issue 27: --raw was silently ignored under --json)."""
    r = cli("eval", "--lang", "js", "--json", "--raw", "1")
    assert r.rc == 2 and "--json and --raw" in r.stderr, r
    assert_one_line_and_try_help(r, "codecage")


def test_help_exits_0():
    r = cli("--help")
    assert r.rc == 0 and "usage:" in r.stdout


def test_language_from_extension(tmp_path):
    py = tmp_path / "a.py"
    py.write_text("import sys\nsys.version_info[0]")
    js = tmp_path / "a.js"
    js.write_text("typeof process")
    r = cli("run", "--sandbox", "auto", "--json", str(py))
    assert (r.rc, r.value) == (0, 3), r
    r = cli("run", "--sandbox", "auto", "--json", str(js))
    assert (r.rc, r.value) == (0, "undefined"), r


def test_lang_takes_the_librarys_spellings():
    """--lang is cc_language_parse: python/py, javascript/js, any ASCII case."""
    for spelling, want in (("py", 3), ("PY", 3), ("Python", 3), ("js", "object"),
                           ("JS", "object"), ("JavaScript", "object")):
        code = "import sys\nsys.version_info[0]" if want == 3 else "typeof globalThis"
        r = cli("eval", "--lang", spelling, "--sandbox", "auto", "--json", code)
        assert (r.rc, r.value) == (0, want), (spelling, r)
    r = cli("eval", "--lang", "python3", "1")
    assert r.rc == 2 and "unknown language 'python3'" in r.stderr, r


def test_javascript_default_heap_is_the_packages():
    """One source of defaults (src/common/defaults.h): JavaScript gets
    128 MiB here too, as in the Python package, so 200 MiB is too much
    unless --memory raises it."""
    code = "new Uint8Array(200 << 20).length"
    r = cli("eval", "--lang", "js", "--sandbox", "auto", "--json", code)
    assert r.rc == 5 and r.json["error"]["kind"] == "memory_limit", r
    r = cli("eval", "--lang", "js", "--sandbox", "auto", "--memory", "512", "--json", code)
    assert (r.rc, r.value) == (0, 200 << 20), r


def test_stdin_source():
    r = cli("run", "--lang", "python", "--sandbox", "auto", "--json", "-", input="6 * 7")
    assert r.value == 42, r


def test_json_object_shape(lang):
    r = ev(lang, "1 + 1")
    assert r.rc == 0, r
    assert r.stdout.count("\n") == 1, "exactly one JSON object on stdout"
    o = r.json
    assert set(o) == {"ok", "value", "stdout", "stderr", "error", "displays", "duration_ms",
                      "sandbox"}
    assert o["ok"] is True and o["value"] == 2 and o["error"] is None
    assert isinstance(o["duration_ms"], (int, float)) and o["duration_ms"] > 0
    assert o["sandbox"]["mode"] == "require"
    assert "rlimits" in o["sandbox"]["applied"].split(",")


def test_error_object_shape(lang):
    code = "raise ValueError('bad thing')" if lang == "python" else "throw new RangeError('bad thing')"
    r = ev(lang, code)
    assert r.rc == 1
    err = r.json["error"]
    assert set(err) == {"kind", "type", "message", "traceback"}
    assert err["kind"] == "guest_error"
    assert err["type"] == ("ValueError" if lang == "python" else "RangeError")
    assert err["message"] == "bad thing"
    assert r.json["ok"] is False and r.json["value"] is None


def test_text_mode_prints_output_then_value(lang):
    code = "print('hi')\n[1, 2]" if lang == "python" else "console.log('hi'); [1, 2]"
    r = cli("eval", "--lang", lang, "--sandbox", "auto", code)
    assert r.rc == 0
    assert r.stdout == "hi\n[1, 2]\n"


def test_text_mode_hides_none_and_prints_strings_raw(lang):
    none = "None" if lang == "python" else "undefined"
    r = cli("eval", "--lang", lang, "--sandbox", "auto", none)
    assert (r.rc, r.stdout) == (0, "")
    r = cli("eval", "--lang", lang, "--sandbox", "auto", "'a\\tb'")
    assert r.stdout == "a\tb\n"


def test_text_mode_error_goes_to_stderr(lang):
    code = "1/0" if lang == "python" else "null.x"
    r = cli("eval", "--lang", lang, "--sandbox", "auto", code)
    assert r.rc == 1
    assert r.stdout == ""
    assert ("ZeroDivisionError" if lang == "python" else "TypeError") in r.stderr


def test_source_over_cap(tmp_path):
    big = tmp_path / "big.py"
    with open(big, "wb") as f:
        f.write(b"#" * (16 * 1024 * 1024 + 1))
    r = cli("run", "--sandbox", "auto", "--json", str(big))
    assert r.rc == 2 and r.kind == "invalid_input"
    assert "source cap" in r.json["error"]["message"]


def test_source_exactly_at_cap_runs(tmp_path):
    big = tmp_path / "big.py"
    with open(big, "wb") as f:
        f.write(b"x = 1" + b" " * (16 * 1024 * 1024 - 6) + b"\n")
    r = cli("run", "--sandbox", "auto", "--json", str(big))
    assert r.rc == 0, r


def test_source_with_nul(tmp_path):
    p = tmp_path / "nul.js"
    p.write_bytes(b"1+\x001")
    r = cli("run", "--sandbox", "auto", "--json", str(p))
    assert r.rc == 2 and r.kind == "invalid_input"
    assert "NUL byte at offset 2" in r.json["error"]["message"]


def test_source_with_invalid_utf8(tmp_path):
    p = tmp_path / "bad.py"
    p.write_bytes(b"x = '\xff'")
    r = cli("run", "--sandbox", "auto", "--json", str(p))
    assert r.rc == 2 and r.kind == "invalid_input"
    assert "not valid UTF-8 (first bad byte at offset 5)" in r.json["error"]["message"]
    r = cli("run", "--sandbox", "auto", str(p))
    assert r.rc == 2 and "invalid_input" in r.stderr


LAYERS = ["hygiene", "rlimits", "namespaces", "capabilities", "no_new_privs", "landlock",
          "seccomp", "self-probes"]


@pytest.mark.userns
@pytest.mark.landlock
@pytest.mark.seccomp
def test_require_applies_every_layer(lang):
    """The default mode applies every layer and says so in every result."""
    r = cli("eval", "--lang", lang, "--json", "1")
    assert r.rc == 0, r
    sb = r.json["sandbox"]
    assert sb["mode"] == "require"
    assert sb["applied"].split(",") == LAYERS
    assert sb["missing"] == ""
    assert sb["landlock_abi"] >= 6  # scopes for signals and abstract sockets
    assert 0 < sb["seccomp_allowed"] <= (70 if lang == "python" else 30)  # test_seccomp_bpf CAPS


def test_sandbox_off_warns_loudly(lang):
    r = cli("eval", "--lang", lang, "--sandbox", "off", "--json", "1")
    assert r.rc == 0
    assert "WARNING" in r.stderr and "off" in r.stderr
    assert r.json["sandbox"]["mode"] == "off"


def test_exit_codes_per_kind(lang):
    py = lang == "python"
    cases = [
        ("1 +" if py else "1 +", 1, "syntax_error"),
        ("while True: pass" if py else "while (true) {}", 3, "timeout"),
    ]
    for code, rc, kind in cases:
        r = ev(lang, code, "--timeout", "0.5")
        assert (r.rc, r.kind) == (rc, kind), (code, r)


def test_doctor_reports_layers():
    r = cli("doctor")
    assert r.rc == 0, r
    assert "applied: hygiene,rlimits" in r.stdout
    assert "missing:" in r.stdout and "seccomp" in r.stdout
    assert "QuickJS 2025-04-26" in r.stdout and "CPython 3.11" in r.stdout
