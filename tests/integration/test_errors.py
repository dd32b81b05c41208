"""Errors and limits: every error kind a guest can cause, tracebacks of guest
frames only, deadlines (plain loops and long native builtins), memory bombs,
a segfault, output caps, and state across evals."""
import os
import re

import pytest

from conftest import ROOT, cli, ev


def test_guest_error_traceback_is_guest_only_python():
    r = ev("python", "def f(x):\n    return 1 / x\n\nf(0)")
    err = r.json["error"]
    assert (r.rc, err["kind"], err["type"]) == (1, "guest_error", "ZeroDivisionError")
    assert err["message"] == "division by zero"
    tb = err["traceback"]
    assert tb.startswith("Traceback (most recent call last):")
    assert 'File "<code>", line 4' in tb and 'File "<code>", line 2, in f' in tb
    assert "return 1 / x" in tb
    assert tb.rstrip().endswith("ZeroDivisionError: division by zero")
    for leak in ("/usr/lib", "codecage", "engine", ".c"):
        assert leak not in tb.replace("<code>", ""), tb


def test_caret_under_the_failing_expression_python():
    """Regression: the last line without a trailing newline put the caret
    one column to the right."""
    for code in ("1/0", "x = 0\n1/x"):
        tb = ev("python", code).json["error"]["traceback"]
        assert "\n    1/%s\n    ~^~\n" % code[-1] in tb, tb


def test_guest_error_traceback_from_stdlib_hides_host_paths():
    r = ev("python", "import json\njson.loads('{')")
    err = r.json["error"]
    assert err["type"] == "JSONDecodeError"
    assert "/usr/lib" not in err["traceback"]
    assert 'File "<code>", line 2' in err["traceback"]


@pytest.mark.parametrize("code,want", [
    # exec: the guest's own frame, then the frames of the code it compiled
    ("exec('def f():\\n    raise ValueError(\"boom\")\\nf()')",
     ['File "<code>", line 1, in <module>', 'File "<string>", line 3, in <module>',
      'File "<string>", line 2, in f']),
    ("eval('1 / 0')", ['File "<code>", line 1, in <module>', 'File "<string>", line 1']),
    ("exec(compile('x = 1\\ny = x / 0', 'mine.py', 'exec'))",
     ['File "<code>", line 1, in <module>', 'File "mine.py", line 2, in <module>']),
    # an import inside exec: the exec'd line shows, the stdlib's frames do not
    ("exec('import json\\njson.loads(\"{\")')",
     ['File "<code>", line 1, in <module>', 'File "<string>", line 2, in <module>']),
])
def test_traceback_keeps_frames_of_code_the_guest_compiled_python(code, want):
    """Regression: only "<code>" frames were kept, so exec/eval/compile
    frames vanished (plain python3 shows them)."""
    tb = ev("python", code).json["error"]["traceback"]
    pos = [tb.find(w) for w in want]
    assert -1 not in pos and pos == sorted(pos), tb
    for leak in ("/usr/lib", "codecage", "<frozen"):
        assert leak not in tb, tb


def test_guest_error_stack_javascript():
    r = ev("javascript", "function f() { throw new TypeError('boom') }\nf()")
    err = r.json["error"]
    assert (err["kind"], err["type"], err["message"]) == ("guest_error", "TypeError", "boom")
    assert "<code>" in err["traceback"] and "f" in err["traceback"]


def test_thrown_non_error_javascript():
    r = ev("javascript", "throw 5")
    assert r.kind == "guest_error"
    assert "5" in r.json["error"]["message"]


@pytest.mark.parametrize("lang,code,typ", [
    ("python", "def f(:\n  pass", "SyntaxError"),
    ("python", "if True:\nx = 1", "IndentationError"),
    ("javascript", "let = = 2", "SyntaxError"),
    ("javascript", "1 +", "SyntaxError"),
])
def test_syntax_errors(lang, code, typ):
    r = ev(lang, code)
    assert (r.rc, r.kind) == (1, "syntax_error"), r
    assert r.json["error"]["type"] == typ


def test_runtime_syntax_error_is_guest_error(lang):
    code = "eval('(')" if lang == "python" else "JSON.parse('{')"
    r = ev(lang, code)
    assert r.kind == "guest_error", r
    assert r.json["error"]["type"] == "SyntaxError"


def test_system_exit_python():
    assert ev("python", "import sys\nprint('x')\nsys.exit(0)").kind == "ok"
    r = ev("python", "import sys\nsys.exit(3)")
    assert r.kind == "guest_error" and r.json["error"]["type"] == "SystemExit"


def test_output_captured_both_streams(lang):
    if lang == "python":
        code = "import sys\nprint('out', 1)\nprint('err', file=sys.stderr)\nsys.stdout.write('x')"
        want_out = "out 1\nx"
    else:
        code = "console.log('out', 1); console.info('i'); console.debug('d'); " \
               "console.warn('w'); console.error('err')"
        want_out = "out 1\ni\nd\n"
    r = ev(lang, code)
    assert r.json["stdout"] == want_out
    assert r.json["stderr"] == ("err\n" if lang == "python" else "w\nerr\n")


def test_console_assert_like_node():
    r = ev("javascript", "console.assert(1 === 1); console.assert(false); "
                         "console.assert(0, 'msg', 2)")
    assert r.kind == "ok"
    assert r.json["stderr"] == "Assertion failed\nAssertion failed: msg 2\n"


def test_stdout_cap_truncates_with_marker(lang):
    code = "while True: print('y' * 1000)" if lang == "python" else \
        "for (;;) console.log('y'.repeat(1000))"
    r = ev(lang, code, "--timeout", "20")
    assert (r.rc, r.kind) == (5, "output_limit"), r
    out = r.json["stdout"]
    assert out.endswith("[codecage: stdout truncated at 1048576 bytes]\n")
    assert len(out.encode()) <= 1048576 + 100
    assert "stdout" in r.json["error"]["message"]


def test_stderr_cap(lang):
    code = "import sys\nwhile True: sys.stderr.write('e' * 4096)" if lang == "python" else \
        "for (;;) console.error('e'.repeat(4096))"
    r = ev(lang, code, "--timeout", "20")
    assert r.kind == "output_limit"
    assert r.json["stderr"].endswith("[codecage: stderr truncated at 1048576 bytes]\n")


def test_output_is_valid_utf8_even_from_bytes():
    r = ev("python", "import sys\nsys.stdout.write('\\udcff ok')")
    assert r.json["stdout"] == "\ufffd ok"


@pytest.mark.parametrize("lang,code", [
    ("python", "while True: pass"),
    ("javascript", "while (true) {}"),
    ("python", "sum(range(10**12))"),                        # long native builtin
    ("javascript", "/(a+)+$/.test('a'.repeat(40) + 'b')"),   # catastrophic regex
    ("python", "import re\nre.match(r'(a+)+$', 'a' * 40 + 'b')"),
    ("javascript", "await new Promise(() => {})") ,
    ("python", "import asyncio\nawait asyncio.sleep(1000)"),
])
def test_deadlines(lang, code):
    r = ev(lang, code, "--timeout", "1")
    if "Promise" in code:
        # nothing can ever settle it: reported at once, not at the deadline
        assert r.kind in ("guest_error", "timeout"), r
        return
    assert (r.rc, r.kind) == (3, "timeout"), r
    assert r.json["duration_ms"] < 1000 + 500 + 1500  # deadline + grace + slack


@pytest.mark.parametrize("code", [
    "import threading\nthreading.Event().wait()",          # futex wait, no timeout
    "import threading\nl = threading.Lock(); l.acquire(); l.acquire()",
])
def test_wait_without_timeout_stops_cleanly(code):
    """Regression: the stop signal was installed with SA_RESTART, so a wait
    with no timeout restarted forever and the worker had to be killed."""
    r = ev("python", code, "--timeout", "1")
    assert (r.rc, r.kind) == (3, "timeout"), r
    assert "killed" not in r.json["error"]["message"], r


def test_memory_bombs(lang):
    code = "x = bytearray(10**10)" if lang == "python" else "new Array(2 ** 32 - 1).fill(0)"
    r = ev(lang, code, "--memory", "64", "--timeout", "30")
    assert r.kind in ("memory_limit", "worker_crashed"), r
    assert r.rc == 5
    code = "x = ['y' * 1000 for _ in range(10**7)]" if lang == "python" else \
        "const a = []; for (;;) a.push('y'.repeat(1000) + a.length)"
    r = ev(lang, code, "--memory", "64", "--timeout", "30")
    assert r.kind == "memory_limit", r


def test_segfault_is_worker_crashed():
    r = ev("python", "import ctypes\nctypes.string_at(0)")
    assert (r.rc, r.kind) == (5, "worker_crashed"), r
    assert "SIGSEGV" in r.json["error"]["message"]


def _gone(pid, wait_s=5.0):
    """True once pid no longer runs (gone, or a zombie awaiting its reaper)."""
    import time
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        try:
            with open("/proc/%d/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def test_guest_child_processes_do_not_outlive_the_runtime():
    """Regression: a child the guest forked (possible as root until seccomp)
    was left running after the runtime closed."""
    r = ev("python", "import os, time\npid = os.fork()\n"
                     "if pid == 0:\n    time.sleep(60)\n    os._exit(0)\npid")
    if r.kind == "guest_error":  # fork refused (RLIMIT_NPROC binds non-root)
        assert r.json["error"]["type"] in ("BlockingIOError", "PermissionError"), r
        return
    assert r.kind == "ok", r
    assert _gone(r.value), "the guest's child %d is still running" % r.value


def test_parser_stack_memoryerror_is_not_the_memory_limit():
    """Regression: CPython's parser raises a bare MemoryError when code is
    nested too deeply (its stack is fixed, the heap is untouched); it was
    reported as memory_limit naming the heap limit."""
    r = ev("python", "eval('-' * 100_000 + '1')")
    err = r.json["error"]
    assert (r.rc, err["kind"], err["type"]) == (1, "guest_error", "MemoryError"), r
    assert "nested too deeply" in err["message"] and "heap limit" not in err["message"], r
    r = ev("python", "-" * 100_000 + "1")
    err = r.json["error"]
    assert (r.rc, err["kind"]) == (1, "syntax_error"), r
    assert "nested too deeply" in err["message"], r
    # still a usable runtime: the parser's failure is the guest's error
    r = ev("python", "try:\n    eval('-' * 100_000 + '1')\nexcept MemoryError:\n    pass\n1 + 1")
    assert r.value == 2, r


def test_real_allocation_over_the_cap_is_still_memory_limit():
    r = ev("python", "x = bytearray(200 * 2**20)", "--memory", "64")
    err = r.json["error"]
    assert (r.rc, err["kind"]) == (5, "memory_limit"), r
    assert "67108864" in err["message"] or "64 MiB" in err["message"], r


def test_limit_messages_name_the_cli_options(lang):
    """Regression: a timeout said only "the time limit was reached" and a
    JavaScript out-of-memory only "out of memory": neither said the limit
    nor the flag that raises it."""
    loop = "while True: pass" if lang == "python" else "for (;;) {}"
    r = ev(lang, loop, "--timeout", "0.3")
    msg = r.json["error"]["message"]
    assert (r.rc, r.kind) == (3, "timeout"), r
    assert "0.3 s" in msg and "--timeout" in msg and "cc_limits" not in msg, msg
    bomb = "x = ['y' * 1000 for _ in range(10**7)]" if lang == "python" else \
        "const a = []; for (;;) a.push('y'.repeat(1000) + a.length)"
    r = ev(lang, bomb, "--memory", "64")
    msg = r.json["error"]["message"]
    assert r.kind == "memory_limit", r
    assert "67108864 bytes (64 MiB)" in msg and "--memory" in msg and "cc_limits" not in msg, msg


def test_write_to_read_only_mount_names_the_writable_mount():
    """Regression: a Python write into a read-only mount said only /tmp is
    writable, not how the host makes the mount writable (JavaScript's does)."""
    sales = os.path.join(ROOT, "examples", "sales")
    for flags in (["--scratch", "1"], []):
        r = ev("python", "open('/data/x.csv', 'w')", "--mount", sales + ":/data", *flags)
        err = r.json["error"]
        assert (err["kind"], err["type"]) == ("guest_error", "OSError"), r
        assert "--mount HOST:GUEST:rw" in err["message"], err
        assert "writable=True" in err["message"], err


@pytest.mark.parametrize("code,typ,errno_", [
    ("open('/tmp/x', 'w')", "FileNotFoundError", 2),
    ("open('out.txt', 'w')", "OSError", 30),
    ("import os\nos.open('/tmp/y', os.O_WRONLY | os.O_CREAT)", "FileNotFoundError", 2),
    ("import pathlib\npathlib.Path('/tmp/d').mkdir()", "FileNotFoundError", 2),
])
def test_write_without_scratch_says_scratch_is_off(code, typ, errno_):
    """Regression: a write with no scratch directory was a bare
    FileNotFoundError / "Read-only file system" that did not say why."""
    r = ev("python", code)
    err = r.json["error"]
    assert (err["kind"], err["type"]) == ("guest_error", typ), r
    assert "scratch is off" in err["message"], err
    assert "max_file_size" in err["message"], err
    # the CLI user's option too (regression: only Python's and C's were named)
    assert "--scratch MIB" in err["message"], err
    # still the OSError subclass it was, with its errno and file name
    last = code.split("\n")[-1]
    setup = "\n".join(code.split("\n")[:-1])
    r = ev("python", setup + "\ntry:\n    " + last + "\nexcept " + typ
           + " as e:\n    r = [type(e).__name__, e.errno, e.filename[-1:]]\nr")
    assert r.value == [typ, errno_, last.split("'")[1][-1:]], r


def test_failed_read_is_not_blamed_on_scratch():
    err = ev("python", "open('/etc/passwd')").json["error"]
    assert err["type"] == "FileNotFoundError" and "scratch" not in err["message"], err


@pytest.mark.parametrize("code,typ", [
    ("import socket\nsocket.create_connection(('127.0.0.1', 9), timeout=5)", "PermissionError"),
    ("import socket\nsocket.getaddrinfo('example.com', 80)", "gaierror"),
    ("import urllib.request\nurllib.request.urlopen('http://example.com/', timeout=5)", "URLError"),
])
def test_no_network_says_the_network_is_off(code, typ):
    """Regression: a socket or urlopen failed with a bare EPERM or a name
    resolution error that did not say the network is off."""
    r = ev("python", code)
    err = r.json["error"]
    assert (err["kind"], err["type"]) == ("guest_error", typ), r
    assert "the network is off" in err["message"] and "host tool" in err["message"], err


@pytest.mark.parametrize("code", ["import os from 'os'", "import { readFileSync } from 'node:os'",
                                  "import * as os from 'os'", "import 'side-effect'"])
def test_static_import_says_modules_are_not_available(code):
    """Regression: QuickJS's own words were "expecting '('". (fs is the one
    module a static import may name: test_pkg_js_fs.py.)"""
    r = ev("javascript", code)
    err = r.json["error"]
    assert (r.rc, err["kind"], err["type"]) == (1, "syntax_error", "SyntaxError"), r
    assert err["message"].startswith("import declarations are not available"), err
    assert "expecting" not in err["traceback"], err


@pytest.mark.parametrize("lang,code,hint", [
    ("javascript", "import math; math.pi", "looks like Python"),
    ("javascript", "def f(x):\n    return x\nf(2)", "looks like Python"),
    ("python", "const xs = [1, 2].map(x => x * 2)", "looks like JavaScript"),
    ("python", "function f() { return 1 }", "looks like JavaScript"),
])
def test_syntax_error_in_the_other_language_says_so(lang, code, hint):
    r = ev(lang, code)
    err = r.json["error"]
    assert err["kind"] == "syntax_error", r
    assert hint in err["message"] and hint in err["traceback"], err


@pytest.mark.parametrize("lang,code", [
    ("javascript", "let = = 2"),     # JavaScript, just wrong
    ("python", "def (:\n  pass"),    # Python, just wrong
    ("javascript", "x = {\n  a: 1"),
])
def test_plain_syntax_errors_get_no_language_hint(lang, code):
    err = ev(lang, code).json["error"]
    assert err["kind"] == "syntax_error" and "looks like" not in err["message"], err


@pytest.mark.parametrize("code", [
    "1+1", "'doc'", " 1+1", "\t1", "(yield 1)", "1/0", "[i * i for i in range(4)]",
    "print('hi') or 3", "await __import__('asyncio').sleep(0, 5)", "(x := 4) + x",
    "x := 4", "1+1;", "lambda: 1", "undefined_name", "f'{1/0}'", "b'\\xff'",
    "1 is 1",  # a SyntaxWarning, shown with its source line from linecache
])
def test_one_line_expression_fast_path_matches_the_ast_path_python(code):
    """Issue 19: a short one-line expression compiles straight from its
    text (py_helper.c, _one_expr); "pass" on a line before it sends the
    same expression down the AST path. Both give the same outcome: value,
    output, error kind, type and message (line numbers shifted by one)."""
    fast, slow = ev("python", code).json, ev("python", "pass\n" + code).json
    slow["stderr"] = slow["stderr"].replace("<code>:2:", "<code>:1:")
    for r in (fast, slow):
        r.pop("duration_ms", None)
        r.pop("sandbox", None)
        if r["error"]:
            r["error"]["traceback"] = None
            r["error"]["message"] = r["error"]["message"].replace("line 2", "line 1")
    assert fast == slow


@pytest.mark.parametrize("code", [
    "1+1", "let a1 = 2; a1 * 3", "throw new Error('x')", "null.x",
    "function f1() { throw new TypeError('y') }\nf1()", "Promise.resolve(3)",
    "({ then(r) { r(4) } })", "Promise.reject(new Error('z'))",
    "var p1 = Promise.reject(new Error('w')); 1", "console.log('a'); 2",
    "Promise.resolve().then(() => console.log('job')); 5", "this === globalThis",
    "(function g() {})", "JSON.parse('{')", "x = ", "return 1", "undefinedName",
    "new Promise(() => {})", "let [q1] = [7]; q1",
])
def test_no_await_sync_path_matches_the_async_path_javascript(code):
    """Issue 19: source without "await" runs as a plain script, not an
    async one (engine_js.c, js_eval); an "await" in a comment on a line
    after it sends the same code down the async path. Both give the same
    outcome: value, output, error kind, type, message and stack (but for
    the line an error at the end of the input is reported at)."""
    fast, slow = ev("javascript", code).json, ev("javascript", code + "\n// await").json
    for r in (fast, slow):
        r.pop("duration_ms", None)
        r.pop("sandbox", None)
        if r["error"] and r["error"]["traceback"]:
            r["error"]["traceback"] = re.sub(r"<code>(:\d+)+", "<code>", r["error"]["traceback"])
    assert fast == slow


def test_worker_exit_status_is_explained_and_hedged():
    """Issue 22: the worker's exit statuses have names (worker_exit.h) and
    the supervisor says what one means, as the worker's word only: guest
    code can exit with any status."""
    err = ev("python", "import os\nos._exit(4)").json["error"]
    assert err["kind"] == "worker_crashed", err
    assert ("exited with status 4 (the worker's status for a frame from the supervisor it "
            "refused, or the guest's own exit)") in err["message"], err
    err = ev("python", "import os\nos._exit(7)").json["error"]
    assert "(the worker exited with status 7)" in err["message"], err


@pytest.mark.parametrize("flags,want", [
    ([], "undefined undefined"),
    (["--scratch", "1"], "function object"),
    (["--mount", os.path.join(ROOT, "examples", "sales") + ":/data"], "function object"),
])
def test_js_fs_and_require_only_with_scratch_or_a_mount(flags, want):
    """Regression (the peers' suite checks `typeof require === 'undefined'`):
    fs and require were globals of every JavaScript session; README's
    Files section gives them only to one with a scratch or a mount."""
    r = ev("javascript", "typeof require + ' ' + typeof fs", *flags)
    assert r.value == want, r
    if not flags:
        r = ev("javascript", "import fs from 'fs'\nfs.readFileSync('/data/a.csv', 'utf8')")
        err = r.json["error"]
        assert (err["kind"], err["type"]) == ("guest_error", "ReferenceError"), r
        assert "only in a session with files" in err["message"], err
        assert "--scratch MIB" in err["message"] and "--mount HOST:GUEST" in err["message"], err
