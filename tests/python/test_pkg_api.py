"""The package's API surface: runtimes, config, tools and bridges, output,
the sandbox report, typing files."""
import os

import pytest

import ccpkg

import codecage
from codecage import (GuestError, InvalidInputError, IsolatedRuntime, RuntimeConfig, ToolBridge,
                      ToolBudgetError)


def test_version_is_the_librarys():
    """codecage.__version__ is libcodecage's cc_version(), meson's project
    version: one place for it (issue 27: three copies of "0.1.0")."""
    assert codecage.__version__ == ccpkg.meson_version()
    assert codecage.__version__ == codecage._codecage.__version__


def test_runtime_basics_both_languages():
    with IsolatedRuntime() as js, IsolatedRuntime(language="py") as py:
        assert js.language == "javascript" and py.language == "python"
        assert js.eval("[1, 2].map(x => x * 21)") == [21, 42]
        assert py.eval("x = 5\nx * 2") == 10
        assert py.eval("x") == 5  # globals persist
        assert js.engine_version.startswith("QuickJS")
        assert py.engine_version.startswith("CPython 3.11")
        for rt in (js, py):
            s = rt.sandbox
            assert s["mode"] == "require" and s["missing"] == ""
            assert "seccomp" in s["applied"] and s["landlock_abi"] >= 1
    assert not js.alive and js.closed


def test_language_spellings_are_the_librarys():
    """The package and the extension accept cc_language_parse's spellings
    (js, py, any ASCII case), and only those."""
    from codecage import _codecage
    for name, want in (("js", "javascript"), ("JS", "javascript"), ("JavaScript", "javascript"),
                       ("py", "python"), ("PY", "python"), ("python", "python")):
        assert _codecage.language_name(name) == want, name
        rt = _codecage.Runtime(name, "auto", {"timeout": 5.0})
        try:
            assert rt.engine_version.startswith("QuickJS" if want == "javascript" else "CPython")
        finally:
            rt.close()
    for bad in ("", "typescript", "python3", " py", "cobol", 3, None):
        assert _codecage.language_name(bad) is None, bad
        with pytest.raises(InvalidInputError, match="language must be"):
            IsolatedRuntime(language=bad)
    with pytest.raises(InvalidInputError, match=r"javascript \(js\) or python \(py\)"):
        _codecage.Runtime("typescript", "auto", {})


def test_defaults_are_the_librarys():
    """RuntimeConfig's defaults and DEFAULT_MAX_MEMORY are cc_options_init's."""
    from codecage import _codecage
    js, py = _codecage.defaults("javascript"), _codecage.defaults("python")
    assert codecage.DEFAULT_MAX_MEMORY == {"javascript": js["max_memory"],
                                           "python": py["max_memory"]}
    assert js["max_memory"] < py["max_memory"]
    cfg = RuntimeConfig()
    for name, value in js.items():
        if name != "max_memory":
            assert getattr(cfg, name) == value == py[name], name
    assert cfg.max_memory is None
    with pytest.raises(InvalidInputError):
        _codecage.defaults("ruby")


def test_run_returns_output_and_duration():
    with IsolatedRuntime(language="python") as rt:
        r = rt.run("import sys\nprint('out')\nprint('err', file=sys.stderr)\n6 * 7")
        assert (r.value, r.stdout, r.stderr) == (42, "out\n", "err\n")
        assert r.duration >= 0


def test_on_output_streams_lines():
    lines = []
    cfg = RuntimeConfig(on_output=lambda stream, line: lines.append((stream, line)))
    with IsolatedRuntime(cfg) as rt:
        rt.eval("console.log('a\\nb'); console.error('c'); 1")
    assert lines == [("stdout", "a"), ("stdout", "b"), ("stderr", "c")]


def test_options_override_config():
    cfg = RuntimeConfig(timeout=5.0, max_memory=64 << 20)
    with IsolatedRuntime(cfg, timeout=9.0) as rt:
        assert rt.config.timeout == 9.0 and rt.config.max_memory == 64 << 20
    assert cfg.timeout == 5.0


def test_bind_function_errors_reach_the_guest_by_name():
    def lookup(sku):
        return {"A1": 3.5}[sku]

    with IsolatedRuntime() as js, IsolatedRuntime(language="python") as py:
        for rt in (js, py):
            rt.bind_function("lookup", lookup)
            assert rt.eval("lookup('A1') * 2") == 7.0
        assert js.eval("try { lookup('B') } catch (e) { [e.name, e.message, e instanceof Error] }") \
            == ["KeyError", "B", True]
        assert py.eval("try:\n    lookup('B')\nexcept KeyError as e:\n    r = e.args[0]\nr") == "B"
        assert py.eval("tools.lookup('A1')") == 3.5
        assert py.eval("import asyncio\nawait atools.lookup('A1')") == 3.5
        assert js.eval("typeof tools.nope") == "undefined"
        # rebinding replaces
        js.bind_function("lookup", lambda sku: "new")
        assert js.eval("lookup('x')") == "new"


def test_uncaught_tool_error_is_a_guest_error_with_the_tools_name():
    with IsolatedRuntime() as rt:
        rt.bind_function("deny", lambda: (_ for _ in ()).throw(PermissionError("no")))
        with pytest.raises(GuestError) as ei:
            rt.eval("deny()")
        assert (ei.value.name, ei.value.message) == ("PermissionError", "no")


def test_keyboard_interrupt_in_a_tool_propagates_to_the_host():
    def interrupt():
        raise KeyboardInterrupt

    with IsolatedRuntime() as rt:
        rt.bind_function("interrupt", interrupt)
        with pytest.raises(KeyboardInterrupt):
            rt.eval("try { interrupt() } catch (e) {} 1")
        assert rt.eval("2") == 2


def test_bridge_budget_is_shared_across_runtimes_and_languages():
    calls = []
    bridge = ToolBridge({"ping": lambda: calls.append(1) or len(calls)}, max_calls=3)
    assert (bridge.calls_made, bridge.calls_remaining) == (0, 3)
    with IsolatedRuntime() as js, IsolatedRuntime(language="python") as py:
        bridge.attach(js)
        bridge.attach(py)
        js.bind_function("free", lambda: "free")  # not the bridge's: never counted
        assert js.eval("ping()") == 1
        assert py.eval("ping()") == 2
        assert js.eval("free() + free()") == "freefree"
        assert py.eval("ping()") == 3
        assert js.eval("try { ping() } catch (e) { e.name }") == "ToolBudgetError"
        with pytest.raises(ToolBudgetError):
            py.eval("ping()")
    assert len(calls) == 3
    assert (bridge.calls_made, bridge.calls_remaining) == (3, 0)


def test_bridge_per_tool_limits_and_unlimited():
    bridge = ToolBridge({"a": lambda: 1, "b": lambda: 2}, per_tool={"a": 1})
    assert bridge.calls_remaining is None
    with IsolatedRuntime(language="python") as rt:
        bridge.attach(rt)
        assert rt.eval("a() + b() + b()") == 5
        assert rt.eval("try:\n    a()\nexcept Exception as e:\n    r = type(e).__name__\nr") == \
            "ToolBudgetError"
    assert bridge.calls_made == 3


@pytest.mark.parametrize("args,exc", [
    (({"bad name": len},), InvalidInputError),
    (({"f": 3},), TypeError),
    (({"f": len}, -1), InvalidInputError),
    ((["f"],), TypeError),
])
def test_bridge_bad_arguments(args, exc):
    with pytest.raises(exc):
        ToolBridge(*args)


def test_redaction_on_the_runtime():
    def fail():
        raise ValueError("secret detail")

    with IsolatedRuntime(redact_host_errors=True) as rt:
        rt.bind_function("fail", fail)
        name, msg = rt.eval("try { fail() } catch (e) { [e.name, e.message] }")
        assert name == "ValueError" and "secret" not in msg


def test_redacted_bridge_hides_unconvertible_results():
    """Regression (red team): a bridge with redaction passed the host's
    class name through the ToolResultError of a value that cannot cross."""
    class Conn_postgres_prod_10_0_0_5:
        pass

    bridge = ToolBridge({"conn": lambda: Conn_postgres_prod_10_0_0_5()},
                        redact_host_errors=True)
    with IsolatedRuntime() as rt:
        bridge.attach(rt)
        name, msg = rt.eval("try { conn() } catch (e) { [e.name, e.message] }")
    assert name == "ToolResultError" and "postgres" not in msg and "Conn" not in msg
    from codecage import _codecage  # the supervisor's text (CC_REDACTED_MESSAGE)
    assert msg == _codecage.REDACTED_MESSAGE
    open_bridge = ToolBridge({"conn": lambda: Conn_postgres_prod_10_0_0_5()})
    with IsolatedRuntime() as rt:
        open_bridge.attach(rt)
        assert "Conn_postgres" in rt.eval("try { conn() } catch (e) { e.message }")


def test_redaction_is_per_tool_in_the_supervisor():
    """A redacting bridge's tools and an open tool share a runtime; each
    call is redacted (or not) by the supervisor, by its tool's setting."""
    def fail():
        raise ValueError("secret detail")

    from codecage import _codecage
    bridge = ToolBridge({"hidden": fail}, redact_host_errors=True)
    with IsolatedRuntime() as rt:
        bridge.attach(rt)
        rt.bind_function("shown", fail)
        got = rt.eval("[hidden, shown].map(f => { try { f() } catch (e) { return e.message } })")
        assert got == [_codecage.REDACTED_MESSAGE, "secret detail"]
        with pytest.raises(InvalidInputError, match="no tool named"):
            rt._rt.set_tool_redaction("nope", 1)


def test_typing_files_ship_with_the_package():
    pkg = os.path.join(ccpkg.PKG_DIR, "codecage")
    for f in ("py.typed", "_codecage.pyi"):
        assert os.path.isfile(os.path.join(pkg, f)), f
    # WEB_POLYFILLS comes from libcodecage (cc_web_polyfills), not from files
    assert not os.path.exists(os.path.join(pkg, "web_polyfills"))
    for f in ("codecage-worker-js", "codecage-worker-py", "libcodecage.so.0"):
        assert os.access(os.path.join(pkg, "_bin", f), os.X_OK), f
    assert codecage.__file__.startswith(ccpkg.PKG_DIR)


def test_public_names_have_docstrings():
    for name in codecage.__all__:
        obj = getattr(codecage, name)
        if callable(obj) or isinstance(obj, type):
            assert obj.__doc__ and len(obj.__doc__) > 20, name
    for meth in ("eval", "eval_async", "run", "bind_function", "set_global", "close"):
        assert getattr(IsolatedRuntime, meth).__doc__, meth
