"""Tracebacks name only the guest's own lines: codecage's guest-side code
carries file names starting "<codecage" (the network shims "<codecage:net>",
the fs module "<codecage:fs>", the web polyfills "<codecage:web>", the
Python glue "<codecage>"), and their frames are left out: by py_helper.c's
_guest_file for Python, by QuickJS itself for JavaScript
(deps/quickjs/patches/0003), so a guest's own error.stack reads the same."""
import re

from conftest import ev

# a host in allow_net, so the guest has its network APIs; the URL below is
# refused by the policy before anything leaves the machine
NET = ["--allow-net", "example.com"]


def frames(tb):
    """The frame lines of a traceback: Python's `File "..."`, QuickJS's `at`."""
    return [line.strip() for line in tb.splitlines()
            if line.strip().startswith(("File ", "at "))]


def test_python_network_refusal_names_only_the_guests_lines():
    """Regression: the network shim ran as "<code>", so a three-line
    program's traceback showed `File "<code>", line 71, in _open`."""
    code = "import urllib.request\nx = 1\nurllib.request.urlopen('http://127.0.0.2:1/')"
    r = ev("python", code, *NET)
    err = r.json["error"]
    assert (err["kind"], err["type"]) == ("guest_error", "URLError"), r
    assert frames(err["traceback"]) == ['File "<code>", line 3, in <module>'], err["traceback"]
    assert "not in allow_net" in err["traceback"].splitlines()[-1], err


def test_python_network_frames_carry_codecages_name_for_the_guest():
    """The guest's own traceback module sees the shim's frames under its
    name, not as lines of the guest's code."""
    code = ("import traceback, urllib.request\ntry:\n"
            "    urllib.request.urlopen('http://127.0.0.2:1/')\n"
            "except Exception as e:\n"
            "    files = sorted({f.filename for f in traceback.extract_tb(e.__traceback__)})\n"
            "files")
    r = ev("python", code, *NET)
    assert r.kind == "ok", r
    assert "<codecage:net>" in r.value and all(
        f == "<code>" or f.startswith(("<codecage", "/")) for f in r.value), r.value


def test_js_network_refusal_names_no_shim_frame():
    """Regression: fetch's failure carried the shim's own frame,
    `at <anonymous> (<code>:204:53)`, a line the guest never wrote."""
    r = ev("javascript", "const u = 'http://127.0.0.2:1/';\nawait fetch(u)", *NET)
    err = r.json["error"]
    assert (err["kind"], err["type"]) == ("guest_error", "TypeError"), r
    assert "not in allow_net" in err["message"], err
    for f in frames(err["traceback"]):
        assert re.search(r"\(<code>:[12]:\d+\)$", f), err["traceback"]


def test_js_stack_from_inside_a_polyfill_names_only_the_guests_lines():
    """Regression: `new URL('x')` reported "at fail (<web_polyfills>:848:43)",
    "at parseURL ...", "at URL ..." above the guest's one line."""
    r = ev("javascript", "let a = 1;\nnew URL('no scheme')", "--web-polyfills")
    err = r.json["error"]
    assert (err["kind"], err["type"]) == ("guest_error", "TypeError"), r
    assert frames(err["traceback"]) == ["at <eval> (<code>:2:8)"], err["traceback"]
    # the guest's own error.stack, as it reads it
    code = ("function parse(s) { return new URL(s) }\n"
            "try { parse('no scheme') } catch (e) { e.stack }")
    r = ev("javascript", code, "--web-polyfills")
    assert r.kind == "ok", r
    assert frames(r.value) == ["at parse (<code>:1:35)", "at <eval> (<code>:2:12)"], r.value


def test_js_fs_error_names_only_the_guests_lines():
    """Regression: "at readFileSync (<fs>:74:30)" above the guest's line."""
    r = ev("javascript", "fs.readFileSync('/nope')", "--scratch", "1")
    err = r.json["error"]
    assert (err["kind"], err["type"]) == ("guest_error", "Error"), r
    assert "ENOENT" in err["message"], err
    assert frames(err["traceback"]) == ["at <eval> (<code>:1:16)"], err["traceback"]


def test_js_native_called_by_the_guest_stays():
    """Only natives that codecage's code called are left out: one the
    guest calls, with the guest's callback above it, stays."""
    r = ev("javascript", "[1].map(function cb() { throw new Error('x') })")
    err = r.json["error"]
    assert frames(err["traceback"]) == ["at cb (<code>:1:40)", "at map (native)",
                                        "at <eval> (<code>:1:8)"], err["traceback"]
