"""Every error kind of DESIGN.md section 6 reaches Python as its own
exception class under CodecageError, with the right attributes, and the
runtime is usable afterwards exactly when the table says so."""
import os

import pytest

import ccpkg

import codecage
from codecage import (CodecageError, GuestError, GuestSyntaxError, InternalError,
                      InvalidInputError, IsolatedRuntime, MemoryLimitError, OutputLimitError,
                      ProtocolViolation, RuntimeConfig, SandboxUnavailable, ToolBridge,
                      ToolBudgetError, WorkerCrashed)

LANGS = ["javascript", "python"]


def test_one_class_per_kind():
    from codecage import _codecage
    from codecage.errors import KIND_CLASSES
    kinds = [k for k in _codecage.kind_names() if k != "ok"]
    assert sorted(kinds) == sorted(KIND_CLASSES)
    for kind, cls in KIND_CLASSES.items():
        assert issubclass(cls, CodecageError)
        assert cls.kind == kind
    assert issubclass(codecage.TimeoutError, TimeoutError)
    assert issubclass(InvalidInputError, ValueError)
    assert issubclass(GuestSyntaxError, GuestError)


@pytest.mark.parametrize("lang,code,name,msg", [
    ("javascript", "throw new RangeError('too far')", "RangeError", "too far"),
    ("python", "raise KeyError('k')", "KeyError", "'k'"),
    ("python", "1/0", "ZeroDivisionError", "division by zero"),
])
def test_guest_error(lang, code, name, msg):
    with IsolatedRuntime(language=lang) as rt:
        with pytest.raises(GuestError) as ei:
            rt.eval(code)
        e = ei.value
        assert (e.kind, e.name, e.message) == ("guest_error", name, msg)
        assert name in e.traceback
        assert str(e) == f"{name}: {msg}"
        assert rt.eval("1 + 1") == 2  # usable after


@pytest.mark.parametrize("lang,code", [("javascript", "1 +"), ("python", "def (")])
def test_syntax_error(lang, code):
    with IsolatedRuntime(language=lang) as rt:
        with pytest.raises(GuestSyntaxError) as ei:
            rt.eval(code)
        assert ei.value.kind == "syntax_error"
        assert ei.value.name == "SyntaxError"
        assert rt.eval("2") == 2


@pytest.mark.parametrize("lang,code", [("javascript", "for (;;) {}"),
                                       ("python", "while True: pass")])
def test_timeout_engine_stops_cleanly(lang, code):
    with IsolatedRuntime(language=lang, timeout=0.5) as rt:
        rt.eval("x = 40" if lang == "python" else "var x = 40")
        with pytest.raises(codecage.TimeoutError) as ei:
            rt.eval(code)
        assert isinstance(ei.value, TimeoutError)
        assert ei.value.kind == "timeout"
        # the engine stopped the code: alive, with its state, and the
        # message says so, with the limit and the option that raises it
        assert rt.alive
        assert rt.eval("x + 2") == 42
        msg = str(ei.value)
        assert "time limit of 0.5 s" in msg and "still usable" in msg, msg
        assert "RuntimeConfig(timeout=" in msg, msg


def test_timeout_that_needs_a_kill():
    # Array.prototype.fill runs in C without polling the interrupt: only
    # the supervisor's SIGKILL after the grace period stops it.
    with IsolatedRuntime(timeout=0.3, grace=0.1, max_memory=8 << 30) as rt:
        with pytest.raises(codecage.TimeoutError, match="killed") as ei:
            rt.eval("new Array(2 ** 32 - 1).fill(0)")
        assert not rt.alive
        assert "runtime is dead" in str(ei.value) and "RuntimeConfig(timeout=" in str(ei.value)
        with pytest.raises(WorkerCrashed, match="create a new runtime"):
            rt.eval("1")


@pytest.mark.parametrize("code", ["sum(range(10**12))", "('{' + 'x' * 100_000_000).format()"])
def test_timeout_inside_a_long_c_call_ends_the_worker(code):
    """Regression: a C builtin that never checks for signals ignored the
    deadline until it returned (or until deadline + grace). CPython cannot
    stop it, so the worker ends itself after about 5 ms of CPU past the
    deadline: kind timeout, the runtime dead. The grace here is 30 s, so
    ending well before it shows the worker did not wait for the kill."""
    import time
    with IsolatedRuntime(language="python", timeout=0.1, grace=30) as rt:
        rt.eval("x = 41")
        t0 = time.monotonic()
        with pytest.raises(codecage.TimeoutError, match="cannot be interrupted") as ei:
            rt.eval(code)
        assert time.monotonic() - t0 < 15, "waited for the supervisor's kill"
        assert ei.value.kind == "timeout"
        assert "RuntimeConfig(timeout=" in str(ei.value)
        assert not rt.alive
        with pytest.raises(WorkerCrashed):
            rt.eval("x")


def test_per_eval_timeout_overrides_config():
    with IsolatedRuntime(timeout=60) as rt:
        with pytest.raises(codecage.TimeoutError):
            rt.eval("for (;;) {}", timeout=0.3)


@pytest.mark.parametrize("lang,code", [
    ("javascript", "let a = []; for (;;) a.push('x'.repeat(1 << 20) + a.length)"),
    ("python", "x = bytearray(200 * 1024 * 1024)"),
])
def test_memory_limit(lang, code):
    with IsolatedRuntime(language=lang, max_memory=64 << 20, timeout=60) as rt:
        with pytest.raises((MemoryLimitError, WorkerCrashed)) as ei:
            rt.eval(code)
        assert ei.value.kind in ("memory_limit", "worker_crashed")


@pytest.mark.parametrize("lang,code", [("javascript", "console.log('y'.repeat(5000))"),
                                       ("python", "print('y' * 5000)")])
def test_output_limit(lang, code):
    with IsolatedRuntime(language=lang, max_stdout=1024) as rt:
        with pytest.raises(OutputLimitError) as ei:
            rt.eval(code)
        assert "truncated" in ei.value.stdout
        assert rt.eval("3") == 3


def test_result_over_its_cap_is_output_limit():
    with IsolatedRuntime(max_result=4096) as rt:
        with pytest.raises(OutputLimitError):
            rt.eval("'z'.repeat(100000)")
        assert rt.alive


@pytest.mark.parametrize("lang,code", [("javascript", "t(); t()"), ("python", "t(); t()")])
def test_uncaught_budget_error_is_tool_budget(lang, code):
    calls = []
    bridge = ToolBridge({"t": lambda: calls.append(1)}, max_calls=1)
    with IsolatedRuntime(language=lang) as rt:
        bridge.attach(rt)
        with pytest.raises(ToolBudgetError) as ei:
            rt.eval(code)
        assert ei.value.kind == "tool_budget"
        assert calls == [1]
        assert rt.eval("7") == 7


CATCH = {"javascript": "let m; try { await t() } catch (e) { m = e.name + ': ' + e.message }; m",
         "python": "try:\n    t()\nexcept Exception as e:\n    m = type(e).__name__ + ': ' + str(e)\nm"}


@pytest.mark.parametrize("lang", LANGS)
def test_a_caught_budget_error_names_the_option_as_the_uncaught_does(lang):
    """Issue 27 D7: what the guest catches and what the host gets uncaught
    are one text, naming the option that raises the limit: ToolBridge's
    max_calls or per_tool, AgentSession's (mcp_tools's: test_pkg_mcp_tools)."""
    from codecage import AgentSession
    want = {
        "total": "the total tool call budget of 1 calls is used up; "
                 "raise ToolBridge(max_calls=N)",
        "per_tool": "the per-tool tool call budget of 0 calls is used up for t; "
                    "raise ToolBridge(per_tool={NAME: N})",
    }
    for which, bridge in (("total", ToolBridge({"t": lambda: 1}, max_calls=1)),
                          ("per_tool", ToolBridge({"t": lambda: 1}, per_tool={"t": 0}))):
        with IsolatedRuntime(language=lang) as rt:
            bridge.attach(rt)
            if which == "total":
                rt.eval("t()")
            assert rt.eval(CATCH[lang]) == "ToolBudgetError: " + want[which]
            with pytest.raises(ToolBudgetError) as ei:
                rt.eval("t()")
            assert ei.value.message == want[which]
    with AgentSession(language=lang, tools={"t": lambda: 1}, max_calls=0) as s:
        msg = "the total tool call budget of 0 calls is used up; raise AgentSession(max_calls=N)"
        assert s.run(CATCH[lang]).value == "ToolBudgetError: " + msg
        with pytest.raises(ToolBudgetError) as ei:
            s.run("t()")
        assert ei.value.message == msg
    with AgentSession(language=lang, tools={"t": lambda: 1}, per_tool={"t": 0}) as s:
        assert s.run(CATCH[lang]).value.endswith("raise AgentSession(per_tool={NAME: N})")


def test_budget_hints_are_checked():
    b = codecage._codecage.Budget(1)
    b.set_hint(None, None)
    for bad in ("", "x" * 201, "\ud800"):
        with pytest.raises((InvalidInputError, UnicodeEncodeError)):
            b.set_hint(bad, None)


def test_worker_crashed_when_a_tool_closes_its_runtime():
    with IsolatedRuntime() as rt:
        rt.bind_function("stop", rt.close)
        with pytest.raises(WorkerCrashed):
            rt.eval("stop(); 1")
        assert rt.closed and not rt.alive
        with pytest.raises(InvalidInputError, match="closed"):
            rt.eval("1")


def test_worker_that_exits_is_worker_crashed(tmp_path):
    d = ccpkg.fake_worker_dir(tmp_path, "exit")
    with IsolatedRuntime(worker_dir=d, sandbox="off") as rt:
        with pytest.raises(WorkerCrashed):
            rt.eval("1")


def test_protocol_violation(tmp_path):
    d = ccpkg.fake_worker_dir(tmp_path, "wrong-id")
    with IsolatedRuntime(worker_dir=d, sandbox="off") as rt:
        with pytest.raises(ProtocolViolation):
            rt.eval("1")
        assert not rt.alive


def test_sandbox_unavailable(tmp_path):
    # A worker that reports a missing layer: "require" refuses, naming it.
    d = ccpkg.fake_worker_dir(tmp_path, "claims-require")
    with pytest.raises(SandboxUnavailable, match="seccomp"):
        IsolatedRuntime(worker_dir=d, sandbox="require")


def test_missing_worker_is_a_clear_error(tmp_path, monkeypatch):
    with pytest.raises(InvalidInputError, match="codecage-worker-js"):
        IsolatedRuntime(worker_dir=str(tmp_path))
    monkeypatch.setenv("CODECAGE_WORKER_DIR", str(tmp_path))
    with pytest.raises(InternalError, match="missing or not executable"):
        IsolatedRuntime(language="python")


def test_wrong_worker_is_a_clear_error(tmp_path):
    # Something executable that is not a worker: it never answers init.
    exe = tmp_path / "codecage-worker-js"
    exe.write_text("#!/bin/sh\nexit 0\n")
    os.chmod(exe, 0o755)
    with pytest.raises((WorkerCrashed, ProtocolViolation), match="starting the javascript"):
        IsolatedRuntime(worker_dir=str(tmp_path), sandbox="off")


@pytest.mark.parametrize("kwargs,exc", [
    (dict(language="ruby"), InvalidInputError),
    (dict(sandbox="maybe"), InvalidInputError),
    (dict(timeout=0), InvalidInputError),
    (dict(timeout="1"), TypeError),
    (dict(max_memory=1 << 20), InvalidInputError),
    (dict(max_memory=-1), InvalidInputError),
    (dict(max_open_files=2), InvalidInputError),
    (dict(nonsense=1), TypeError),
    (dict(bootstrap=b"x"), TypeError),
])
def test_bad_config(kwargs, exc):
    with pytest.raises(exc):
        IsolatedRuntime(**kwargs)


def test_timeout_bounds_are_the_librarys():
    """The package's timeouts take the library's bound (CC_MAX_TIMEOUT_S):
    its constant, cc_options_check's message, cc_runtime_eval's refusal."""
    from codecage import _codecage
    top = _codecage.MAX_TIMEOUT
    assert RuntimeConfig(timeout=top).timeout == top
    for bad in (top + 1, 0, -1, float("nan"), float("inf")):
        with pytest.raises(InvalidInputError) as ei:
            RuntimeConfig(timeout=bad)
        assert str(ei.value) == f"RuntimeConfig.timeout must be in (0, {top}] seconds", bad
    with pytest.raises(InvalidInputError, match=r"RuntimeConfig.grace must be in \[0, 60\]"):
        RuntimeConfig(grace=61)
    with pytest.raises(InvalidInputError, match=r"timeout must be in \(0, 86400\] seconds"):
        _codecage.check_limits({"timeout": 1e9})
    with IsolatedRuntime() as rt:
        with pytest.raises(InvalidInputError, match=rf"\(0, {top}\]"):
            rt.eval("1", timeout=top + 1)
        assert rt.eval("1", timeout=top) == 1


def test_invalid_input_from_calls():
    with IsolatedRuntime() as rt:
        with pytest.raises(InvalidInputError, match="UTF-8"):
            rt.eval("'\ud800'")
        with pytest.raises(TypeError):
            rt.eval(b"1")
        with pytest.raises(InvalidInputError):
            rt.eval("1", timeout=-1)
        with pytest.raises(InvalidInputError, match="identifier"):
            rt.bind_function("not a name", len)
        with pytest.raises(TypeError):
            rt.bind_function("f", 42)
        with pytest.raises(InvalidInputError, match="identifier"):
            rt.set_global("1x", 1)
        with pytest.raises(InvalidInputError, match="cannot cross"):
            rt.set_global("x", object())
        with pytest.raises(InvalidInputError, match="deeper"):
            v = []
            v.append(v)
            rt.set_global("x", v)
        with pytest.raises(InvalidInputError, match="source"):
            IsolatedRuntime(max_source=10).eval("1 + 1 + 1 + 1 + 1")
        assert rt.eval("'still' + ' fine'") == "still fine"


def test_bootstrap_failure_raises_and_closes():
    with pytest.raises(GuestError, match="boom"):
        IsolatedRuntime(RuntimeConfig(bootstrap="throw new Error('boom')"))
    with pytest.raises(InvalidInputError, match="javascript"):
        IsolatedRuntime(RuntimeConfig(bootstrap=codecage.WEB_POLYFILLS), language="python")


def test_errors_carry_output_and_duration():
    with IsolatedRuntime() as rt:
        with pytest.raises(GuestError) as ei:
            rt.eval("console.log('before'); null.x")
        assert ei.value.stdout == "before\n"
        assert ei.value.name == "TypeError"
        assert ei.value.duration >= 0


class _Stop(Exception):
    pass


@pytest.mark.parametrize("lang,code", [
    # the write to stderr makes the worker send stdout's line at once
    ("python", "import sys\nprint('first')\nsys.stderr.write('x')\nwhile True:\n    pass"),
    ("javascript", "console.log('first'); console.error('x'); for (;;) {}"),
])
@pytest.mark.parametrize("how", ["eval", "run", "eval_async"])
def test_on_output_exception_stops_the_eval(lang, code, how, capfd):
    """Regression: an exception from on_output was printed as "Exception
    ignored in ..." and the eval ran on. It must stop the eval at once
    (the guest loops forever after its first line) and reach the caller as
    that exception; the runtime is dead afterwards, as after interrupt()."""
    import asyncio
    seen = []

    def on_output(stream, line):
        seen.append(line)
        raise _Stop("the host refused " + line)

    with IsolatedRuntime(RuntimeConfig(timeout=10, on_output=on_output), language=lang) as rt:
        with pytest.raises(_Stop, match="the host refused first"):
            if how == "eval_async":
                asyncio.run(rt.eval_async(code))
            else:
                getattr(rt, how)(code)
        assert seen == ["first"]
        assert not rt.alive
    assert "Exception ignored" not in capfd.readouterr().err


@pytest.mark.parametrize("redact", [False, True])
def test_tool_result_that_cannot_cross_is_a_type_error(redact):
    """Regression: ToolResultError derived from Exception only, so a guest's
    `except TypeError` (JavaScript: `instanceof TypeError`) missed it. Also
    for a value over the result cap (the supervisor's ToolResultError)."""
    cfg = RuntimeConfig(redact_host_errors=redact, max_result=4096)
    with IsolatedRuntime(cfg, language="python") as rt:
        rt.bind_function("bad", lambda: object())
        rt.bind_function("huge", lambda: "x" * 10000)
        for tool in ("bad", "huge"):
            got = rt.eval("try:\n    %s()\nexcept TypeError as e:\n    k = type(e)\nk.__name__"
                          % tool)
            assert got == "ToolResultError"
        assert rt.eval("k.__mro__[1:] == (TypeError, Exception, BaseException, object)")
    with IsolatedRuntime(cfg, language="javascript") as rt:
        rt.bind_function("bad", lambda: object())
        rt.bind_function("huge", lambda: "x" * 10000)
        for tool in ("bad()", "huge()", "await tools.bad()"):
            got = rt.eval("(async () => { try { %s } catch (e) { return [e instanceof TypeError, "
                          "e instanceof Error, e.name] } })()" % tool)
            assert got == [True, True, "ToolResultError"], tool


def test_host_exception_keeps_its_builtin_bases():
    """Regression: io.UnsupportedOperation (OSError and ValueError) reached
    the guest as a class derived from Exception only."""
    import io

    class Both(KeyError, AttributeError):  # two builtin bases, one host class
        pass

    def unsupported():
        raise io.UnsupportedOperation("not readable")

    def both():
        raise Both("neither")

    with IsolatedRuntime(language="python") as rt:
        rt.bind_function("unsupported", unsupported)
        rt.bind_function("both", both)
        code = ("try:\n    unsupported()\nexcept OSError as e:\n    a = e\n"
                "try:\n    unsupported()\nexcept ValueError as e:\n    b = e\n"
                "try:\n    both()\nexcept KeyError as e:\n    c = e\n"
                "try:\n    both()\nexcept AttributeError as e:\n    d = e\n"
                "[type(x).__name__ for x in (a, b, c, d)] + [str(a), "
                "[k.__name__ for k in type(a).__mro__], issubclass(type(c), LookupError)]")
        got = rt.eval(code)
        assert got[:5] == ["UnsupportedOperation"] * 2 + ["Both"] * 2 + ["not readable"]
        assert got[5] == ["UnsupportedOperation", "OSError", "ValueError", "Exception",
                          "BaseException", "object"]
        assert got[6] is True


def test_tools_take_keyword_arguments():
    """Regression: `lookup(sku="A1")` from a Python guest was refused
    ("tools take positional arguments"). Sync tools, coroutine tools under
    eval_async, and ToolBridge get the keywords as keywords."""
    import asyncio

    def lookup(sku, qty=1):
        return {"A1": 3.5}[sku] * qty

    async def alookup(sku, *, qty=1):
        await asyncio.sleep(0)
        return {"A1": 3.5}[sku] * qty

    with IsolatedRuntime(language="python") as rt:
        rt.bind_function("lookup", lookup)
        assert rt.eval("[lookup(sku='A1'), tools.lookup('A1', qty=2), lookup(qty=3, sku='A1')]"
                       ) == [3.5, 7.0, 10.5]
        rt.bind_function("alookup", alookup)
        got = asyncio.run(rt.eval_async(
            "import asyncio\nawait asyncio.gather(atools.alookup(sku='A1', qty=2), "
            "atools.lookup(sku='A1'))"))
        assert got == [7.0, 3.5]
        with pytest.raises(GuestError, match="unexpected keyword argument 'colour'"):
            rt.eval("lookup('A1', colour='red')")
    bridge = ToolBridge({"lookup": lookup}, max_calls=2)
    with IsolatedRuntime(language="python") as rt:
        bridge.attach(rt)
        assert rt.eval("tools.lookup(sku='A1', qty=4)") == 14.0
        assert bridge.calls_made == 1
def test_write_messages_name_the_scratch_option():
    """Regression: writing with no scratch directory was a bare
    FileNotFoundError; with scratch on, a write outside /tmp did not say
    that only /tmp is writable. The classes stay the OSError subclasses."""
    with IsolatedRuntime(language="python") as rt:
        with pytest.raises(GuestError) as ei:
            rt.eval("open('/tmp/x', 'w')")
        assert ei.value.name == "FileNotFoundError"
        assert "scratch is off" in ei.value.message
        assert "RuntimeConfig(max_file_size=" in ei.value.message
        assert rt.eval("try:\n    open('/tmp/x', 'w')\nexcept FileNotFoundError as e:\n"
                       "    r = e.errno\nr") == 2
    with IsolatedRuntime(language="python", max_file_size=1 << 20) as rt:
        assert rt.eval("open('/tmp/x', 'w').write('abc')") == 3
        with pytest.raises(GuestError) as ei:
            rt.eval("open('/out.txt', 'w')")
        assert ei.value.name == "OSError"
        assert "only /tmp" in ei.value.message and "scratch is off" not in ei.value.message


def test_default_runtime_syntax_error_names_the_switch():
    """Regression: codecage.eval('import math; math.pi') failed with a bare
    JavaScript SyntaxError: the default runtime is JavaScript."""
    codecage.configure_default_runtime()
    try:
        with pytest.raises(GuestSyntaxError) as ei:
            codecage.eval("import math; math.pi")
        msg = str(ei.value)
        assert "looks like Python" in msg, msg
        assert "configure_default_runtime(language='python')" in msg, msg
        codecage.configure_default_runtime(language="python")
        assert codecage.eval("import math; round(math.pi, 2)") == 3.14
        with pytest.raises(GuestSyntaxError, match="language='javascript'"):
            codecage.eval("const x = 1")
    finally:
        codecage.configure_default_runtime()


def test_memory_limit_message_names_the_option():
    """Regression: JavaScript's out-of-memory said only "out of memory"."""
    with IsolatedRuntime(language="javascript", max_memory=64 << 20, timeout=60) as rt:
        with pytest.raises(MemoryLimitError) as ei:
            rt.eval("const a = []; for (;;) a.push('y'.repeat(1000) + a.length)")
        msg = str(ei.value)
        assert "67108864 bytes (64 MiB)" in msg and "RuntimeConfig(max_memory=" in msg, msg
        assert "cc_limits" not in msg, msg
