"""WEB_POLYFILLS: timers in delay order, UTF-8 TextEncoder/TextDecoder,
structuredClone, base64; never window or document; RuntimeConfig's
web_polyfills option, in forked sessions too. Each piece against node:
tests/integration/test_web_polyfills.py."""
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ccpkg  # noqa: F401  (builds the package)

from codecage import WEB_POLYFILLS, GuestError, IsolatedRuntime, RuntimeConfig

PIECES = os.path.join(os.path.dirname(__file__), "..", "..", "src", "polyfills")


@pytest.fixture(scope="module")
def rt():
    with IsolatedRuntime(RuntimeConfig(bootstrap=WEB_POLYFILLS)) as r:
        yield r


def test_the_text_is_the_librarys():
    """WEB_POLYFILLS is libcodecage's text (cc_web_polyfills, the
    extension's _codecage.WEB_POLYFILLS): the pieces of src/polyfills/
    joined in name order, whatever files the package holds."""
    from codecage import _codecage
    joined = ""
    for name in sorted(os.listdir(PIECES)):
        if name.endswith(".js"):
            with open(os.path.join(PIECES, name), encoding="utf-8") as f:
                joined += f.read()
    assert WEB_POLYFILLS == _codecage.WEB_POLYFILLS == joined and len(joined) > 10000


def test_no_window_or_document(rt):
    assert rt.eval("[typeof window, typeof document, typeof self, self === globalThis]") == \
        ["undefined", "undefined", "object", True]
    assert WEB_POLYFILLS.language == "javascript"


def test_timers_run_in_delay_order(rt):
    assert rt.eval("""
        var out = [];
        setTimeout(() => out.push('c'), 30);
        setTimeout((x) => out.push(x), 10, 'b');
        setTimeout(() => out.push('a'), 0);
        var gone = setTimeout(() => out.push('never'), 20);
        clearTimeout(gone);
        var n = 0;
        var id = setInterval(() => { out.push('i' + n); if (++n === 3) clearInterval(id); }, 12);
        await new Promise(r => setTimeout(r, 100));
        out
    """) == ["a", "b", "i0", "i1", "c", "i2"]


def test_timers_nest_and_await(rt):
    assert rt.eval("""
        var sleep = (ms) => new Promise(r => setTimeout(r, ms));
        var log = [];
        async function worker(name, ms) { for (let i = 0; i < 2; i++) { await sleep(ms); log.push(name + i); } }
        await Promise.all([worker('slow', 50), worker('fast', 20)]);
        log
    """) == ["fast0", "fast1", "slow0", "slow1"]


def test_timer_errors_do_not_stop_other_timers(rt):
    r = rt.run("""
        var seen = [];
        setTimeout(() => { throw new Error('boom'); }, 1);
        setTimeout(() => seen.push('after'), 2);
        await new Promise(r => setTimeout(r, 5));
        seen
    """)
    assert r.value == ["after"]
    assert "boom" in r.stderr


def test_setTimeout_needs_a_function(rt):
    with pytest.raises(GuestError, match="need a function"):
        rt.eval("setTimeout('alert(1)', 1)")


@settings(max_examples=100, deadline=None, database=None)
@given(s=st.text())
def test_text_encoder_decoder_round_trip(rt, s):
    rt.set_global("s", s)
    fixed = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in s)
    enc = rt.eval("new TextEncoder().encode(s)")
    assert enc == fixed.encode("utf-8")
    assert rt.eval("new TextDecoder().decode(new TextEncoder().encode(s))") == fixed


@settings(max_examples=100, deadline=None, database=None)
@given(b=st.binary(max_size=64), cut=st.integers(0, 64))
def test_text_decoder_matches_python_with_replacement(rt, b, cut):
    rt.set_global("b", b)
    rt.set_global("cut", min(cut, len(b)))
    want = b.decode("utf-8", "replace")
    assert rt.eval("new TextDecoder().decode(b)") == want
    # streaming across an arbitrary cut gives the same text
    assert rt.eval("{ const d = new TextDecoder(); "
                   "d.decode(b.subarray(0, cut), {stream: true}) + d.decode(b.subarray(cut)) }"
                   ) == want


def test_text_decoder_options(rt):
    assert rt.eval("new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41]))") == "A"
    assert rt.eval("new TextDecoder('utf-8', {ignoreBOM: true})"
                   ".decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41]))") == "\ufeffA"
    with pytest.raises(GuestError, match="TypeError"):
        rt.eval("new TextDecoder('utf-8', {fatal: true}).decode(new Uint8Array([0xff]))")
    with pytest.raises(GuestError, match="RangeError"):
        rt.eval("new TextDecoder('shift_jis')")
    assert rt.eval("{ const u = new Uint8Array(4); const r = new TextEncoder().encodeInto('aé€', u);"
                   " [r.read, r.written] }") == [2, 3]


def test_structured_clone(rt):
    assert rt.eval("""
        {
        const d = new Date(0);
        const o = { a: [1, { d }], m: new Map([['k', new Set([1, 2])]]), u: new Uint8Array([1, 2]) };
        o.self = o;
        const c = structuredClone(o);
        [c !== o, c.self === c, c.a[1].d instanceof Date, c.a[1].d !== d, c.a[1].d.getTime(),
         c.m.get('k').has(2), c.u[1], c.u.buffer !== o.u.buffer]
        }
    """) == [True, True, True, True, 0, True, 2, True]
    assert rt.eval("try { structuredClone({ f() {} }) } catch (e) { e.name }") == "DataCloneError"
    assert rt.eval("structuredClone(new RangeError('x')) instanceof RangeError") is True


@settings(max_examples=50, deadline=None, database=None)
@given(b=st.binary(max_size=40))
def test_base64(rt, b):
    import base64
    latin1 = b.decode("latin-1")
    rt.set_global("s", latin1)
    assert rt.eval("btoa(s)") == base64.b64encode(b).decode()
    assert rt.eval("atob(btoa(s))") == latin1


def test_python_runtime_refuses_javascript_bootstrap():
    from codecage import InvalidInputError
    with pytest.raises(InvalidInputError):
        IsolatedRuntime(RuntimeConfig(bootstrap=WEB_POLYFILLS), language="python")


def test_web_polyfills_option_is_the_same_text():
    """RuntimeConfig(web_polyfills=True) runs the text built into the
    worker; WEB_POLYFILLS is the same text, read from libcodecage."""
    probe = ("[typeof URL, typeof Blob, typeof FileReader, typeof AbortController, "
             "typeof crypto.randomUUID, typeof performance.now, typeof window]")
    with IsolatedRuntime(RuntimeConfig(web_polyfills=True)) as a:
        with IsolatedRuntime(RuntimeConfig(bootstrap=WEB_POLYFILLS)) as b:
            assert a.eval(probe) == b.eval(probe) == ["function"] * 6 + ["undefined"]
    # both at once: the second run leaves the first one's clock and timers
    with IsolatedRuntime(RuntimeConfig(web_polyfills=True, bootstrap=WEB_POLYFILLS)) as r:
        assert r.eval("const t = Date.now(); await new Promise(r => setTimeout(r, 500)); "
                      "Date.now() - t >= 500") is True


def test_web_polyfills_refused_for_python():
    from codecage import InvalidInputError
    with pytest.raises(InvalidInputError, match="web_polyfills"):
        IsolatedRuntime(RuntimeConfig(web_polyfills=True), language="python")
    with pytest.raises(TypeError):
        RuntimeConfig(web_polyfills="yes")


def test_forked_sessions_have_their_own_random_bytes():
    """The template runs the polyfills once; every forked session still
    draws its own bytes from the kernel (and its own Math.random)."""
    from codecage import ForkServer, SessionPool
    code = "[crypto.randomUUID(), Array.from(crypto.getRandomValues(new Uint8Array(8))), Math.random()]"
    seen = []
    with ForkServer(RuntimeConfig(web_polyfills=True), language="javascript") as fs:
        for _ in range(3):
            with fs.session() as s:
                assert s.eval("typeof URL") == "function"
                seen.append(s.eval(code))
    with SessionPool(RuntimeConfig(web_polyfills=True), language="javascript", size=2) as pool:
        for _ in range(2):
            with pool.checkout(timeout=30) as s:
                seen.append(s.eval(code))
    for i in range(3):
        values = [repr(v[i]) for v in seen]
        assert len(set(values)) == len(values), values
