"""Values that cannot cross (issue 16, item 3): strict by default (a
TypeError, as DESIGN.md says); with RuntimeConfig(value_fallback=True) the
value's text form, its type named in EvalResult.value_type. Spawned and
forked."""
import pytest

import ccpkg  # noqa: F401  (builds the package)

from codecage import ForkServer, GuestError, IsolatedRuntime, RuntimeConfig

# (code, the type's name, the text, exactly)
PY = [
    ("{1, 2}", "set", "{1, 2}"),
    ("frozenset()", "frozenset", "frozenset()"),
    ("import datetime\ndatetime.time(3, 4)", "datetime.time", "datetime.time(3, 4)"),
    ("import decimal\ndecimal.Decimal('1.50')", "decimal.Decimal", "Decimal('1.50')"),
    ("1 + 2j", "complex", "(1+2j)"),
    ("range(3)", "range", "range(0, 3)"),
    ("class P:\n    def __repr__(self): return 'P!'\nP()", "P", "P!"),
    ("class Bad:\n    def __repr__(self): raise ValueError('no')\nBad()", "Bad", "<Bad object>"),
    # a lone surrogate in the text: U+FFFD, as in any other str (issue 22)
    ("class S:\n    def __repr__(self): return 'a\\ud800b'\nS()", "S", "a\ufffdb"),
    ("x = [1]\nx.append({2})\nx", "list", "[1, {2}]"),  # a set inside a list
    ("x = []\nx.append(x)\nx", "list", "[[...]]"),  # a cycle: too deep
    ("'\\ud800' + str({1})", None, None),  # converts (a str): no fallback
]
JS = [
    ("({ f: function f() {} })", "Object", "{ f: [Function: f] }"),
    ("Symbol('s')", "symbol", "Symbol(s)"),
    ("new Set([1, 2])", "Set", "Set(2) { 1, 2 }"),
    ("new WeakMap()", "WeakMap", "WeakMap {}"),
    ("class K { constructor() { this.a = 1 } }; new K()", "K", "K { a: 1 }"),
    ("[1, () => 2]", "Array", "[ 1, [Function (anonymous)] ]"),
    ("new Proxy({}, {})", "Proxy", None),
    ("const a = {}; a.a = a; a", "Object", "{ a: [Circular] }"),  # a cycle: too deep
]


@pytest.fixture(scope="module")
def servers():
    cfg = RuntimeConfig(value_fallback=True)
    with ForkServer(cfg, language="python") as py, ForkServer(cfg, language="javascript") as js:
        yield {"python": py, "javascript": js}


def _cases():
    for code, t, text in PY:
        yield "python", code, t, text
    for code, t, text in JS:
        yield "javascript", code, t, text


@pytest.mark.parametrize("lang, code, type_name, text", list(_cases()))
def test_strict_by_default(lang, code, type_name, text):
    with IsolatedRuntime(language=lang) as rt:
        if type_name is None:
            assert isinstance(rt.eval(code), str)
            return
        with pytest.raises(GuestError) as e:
            rt.eval(code)
        assert e.value.name == "TypeError"
        assert rt.alive


@pytest.mark.parametrize("how", ["spawned", "forked"])
@pytest.mark.parametrize("lang, code, type_name, text", list(_cases()))
def test_fallback_gives_the_text_and_names_the_type(lang, code, type_name, text, how, servers):
    if how == "forked":
        rt = servers[lang].session()
    else:
        rt = IsolatedRuntime(RuntimeConfig(value_fallback=True), language=lang)
    with rt:
        res = rt.run(code)
        assert res.value_type == type_name
        if type_name is None:
            assert isinstance(res.value, str)
        elif text is not None:
            assert res.value == text
        else:
            assert isinstance(res.value, str) and res.value
        # a value that converts is unchanged, with no type named
        again = rt.run("[1, 'a']")
        assert (again.value, again.value_type) == ([1, "a"], None)


def test_pandas_dataframe_and_series_come_back_as_text():
    code = ("import pandas as pd\ndf = pd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})\n"
            "(df, repr(df), df['a'], repr(df['a']))")
    with IsolatedRuntime(RuntimeConfig(value_fallback=True), language="python") as rt:
        assert rt.eval("import pandas as pd\nrepr(pd.DataFrame({'a': [1]}))")
        res = rt.run("df = pd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})\ndf")
        assert res.value_type == "DataFrame"
        assert res.value == rt.eval("repr(df)")
        res = rt.run("df['a']")
        assert res.value_type == "Series" and res.value == rt.eval("repr(df['a'])")
    del code


def test_a_text_over_the_result_cap_is_shortened_not_failed():
    cfg = RuntimeConfig(value_fallback=True, max_result=4096)
    with IsolatedRuntime(cfg, language="python") as rt:
        res = rt.run("{'x' * 100000}")
        assert res.value_type == "set"
        assert res.value.startswith("{'xxx") and res.value.endswith("[codecage: text shortened]")
        assert len(res.value.encode()) < 4096
        # the caps still hold for values that do convert
        with pytest.raises(Exception, match="larger than the limit"):
            rt.eval("'x' * 100000")


@pytest.mark.parametrize("lang, code", [("python", "10**4300"), ("javascript", "10n**4300n")])
def test_a_value_over_a_cap_still_fails(lang, code):
    """Only a value's type falls back: a BigInt over the digit cap is a cap
    (Python ValueError; JavaScript refuses it with TypeError) and fails."""
    cfg = RuntimeConfig(value_fallback=True)
    with IsolatedRuntime(cfg, language=lang) as rt:
        with pytest.raises(GuestError, match="4300"):
            rt.eval(code)


def test_a_repr_that_runs_forever_is_stopped_by_the_deadline():
    code = "class Slow:\n    def __repr__(self):\n        while True: pass\nSlow()"
    cfg = RuntimeConfig(value_fallback=True, timeout=1)
    with IsolatedRuntime(cfg, language="python") as rt:
        with pytest.raises(Exception) as e:
            rt.eval(code)
        assert "time limit" in str(e.value) or "timeout" in type(e.value).__name__.lower()


def test_value_fallback_must_be_a_bool():
    with pytest.raises(TypeError, match="value_fallback"):
        RuntimeConfig(value_fallback=1)


# Issue 27 E2: run() returns what the MCP server and the CLI return for a
# last value that cannot cross (its text, value_type, the output and the
# displays); eval() and eval_async() stay strict (a TypeError) unless the
# config asks for the fallback.
LAST = {
    "python": ("import matplotlib.pyplot as plt\nprint('drawing')\n"
               "fig, ax = plt.subplots(figsize=(2, 1.5), dpi=50)\nplt.plot([1, 3, 2])",
               "list", "[<matplotlib.lines.Line2D object at 0x"),
    # (a bare function as the completion value is dropped, engine_js.c)
    "javascript": ("console.log('drawing'); display('<b>hi</b>', 'text/html');\n"
                   "({draw() {}, id: Symbol('chart')})", "Object",
                   "{ draw: [Function: draw], id: Symbol(chart) }"),
}


@pytest.mark.parametrize("how", ["spawned", "forked"])
@pytest.mark.parametrize("lang", ["python", "javascript"])
def test_run_gives_the_text_of_a_value_that_cannot_cross(lang, how):
    import conftest
    if lang == "python":
        conftest.need("matplotlib", "python3-matplotlib (scripts/install-deps) is needed")
    code, type_name, text = LAST[lang]
    fs = ForkServer(language=lang) if how == "forked" else None
    try:
        with (fs.session() if fs else IsolatedRuntime(language=lang)) as rt:
            res = rt.run(code)
            assert res.value_type == type_name
            assert res.value.startswith(text)
            assert res.stdout == "drawing\n"
            assert len(res.displays) == 1
            if lang == "python":
                assert res.displays[0]["image/png"].startswith(b"\x89PNG\r\n\x1a\n")
            else:
                assert res.displays[0] == {"text/html": "<b>hi</b>"}
            # a value that converts: as before, no type named
            assert (rt.run("[1, 'a']").value, rt.run("[1, 'a']").value_type) == ([1, "a"], None)
            # eval keeps the strict error, with the output and displays it made
            with pytest.raises(GuestError) as e:
                rt.eval(code)
            assert e.value.name == "TypeError"
            assert e.value.stdout == "drawing\n" and len(e.value.displays) == 1
            # and so does eval_async
            import asyncio
            with pytest.raises(GuestError, match="TypeError"):
                asyncio.run(rt.eval_async("Symbol('s')" if lang == "javascript" else "{1}"))
            # run after eval: the per-eval choice did not stick either way
            assert rt.run("Symbol('s')" if lang == "javascript" else "{1}").value_type == (
                "symbol" if lang == "javascript" else "set")
            with pytest.raises(GuestError, match="TypeError"):
                rt.eval("Symbol('s')" if lang == "javascript" else "{1}")
            assert rt.alive
    finally:
        if fs:
            fs.close()


def test_value_fallback_in_the_config_makes_eval_fall_back_too():
    with IsolatedRuntime(RuntimeConfig(value_fallback=True), language="javascript") as rt:
        assert rt.eval("Symbol('s')") == "Symbol(s)"
        assert rt.run("Symbol('s')").value_type == "symbol"
        assert rt.eval("Symbol('t')") == "Symbol(t)"
