"""What the guest's source and tracebacks look like from Python: a UTF-8
byte order mark at the start is skipped as python3 skips it in a file;
tracebacks name only the guest's own lines, never codecage's guest-side
code (the network shims, the fs module, the web polyfills, the glue),
on a spawned worker and on the default path (a forked session)."""
import re

import pytest

import ccpkg  # noqa: F401  (builds the package)

from codecage import GuestError, IsolatedRuntime, RuntimeConfig


def frames(tb):
    return [line.strip() for line in tb.splitlines()
            if line.strip().startswith(("File ", "at "))]


@pytest.mark.parametrize("lang,code", [("python", "\ufeffx = 21\nx * 2"),
                                       ("javascript", "\ufefflet x = 21;\nx * 2")])
def test_source_with_a_bom_runs(lang, code):
    """Regression (Python): `SyntaxError: invalid non-printable character
    U+FEFF` for a file saved with a byte order mark."""
    with IsolatedRuntime(language=lang) as rt:
        assert rt.eval(code) == 42
        with pytest.raises(GuestError) as ei:
            rt.eval(code.replace("x * 2", "x.nope()"))
        assert "\ufeff" not in ei.value.traceback


@pytest.mark.parametrize("fork_server", [True, False])
def test_network_refusal_names_only_the_guests_lines(fork_server):
    """Regression: the network shim ran as "<code>", so its frames showed
    as the guest's (`File "<code>", line 71, in _open`)."""
    cfg = RuntimeConfig(allow_net=["example.com"])
    with IsolatedRuntime(cfg, language="python", fork_server=fork_server) as rt:
        with pytest.raises(GuestError, match="not in allow_net") as ei:
            rt.eval("import urllib.request\n\nurllib.request.urlopen('http://127.0.0.2:1/')")
        assert frames(ei.value.traceback) == ['File "<code>", line 3, in <module>'], \
            ei.value.traceback
    with IsolatedRuntime(cfg, language="javascript", fork_server=fork_server) as rt:
        with pytest.raises(GuestError, match="not in allow_net") as ei:
            rt.eval("await fetch('http://127.0.0.2:1/')")
        assert all(re.search(r"\(<code>:1:\d+\)$", f) for f in frames(ei.value.traceback)), \
            ei.value.traceback


@pytest.mark.parametrize("fork_server", [True, False])
def test_js_stack_from_inside_a_polyfill_or_fs_names_only_the_guests_lines(fork_server):
    """Regression: the polyfills' and fs's internal frames
    ("at parseURL (<web_polyfills>:1049:57)", "at readFileSync (<fs>:74:30)")
    came before the guest's own line, in the report and in error.stack."""
    cfg = RuntimeConfig(web_polyfills=True, scratch=1 << 20)
    with IsolatedRuntime(cfg, language="javascript", fork_server=fork_server) as rt:
        with pytest.raises(GuestError, match="Invalid URL") as ei:
            rt.eval("const s = 'x';\nnew URL(s)")
        assert frames(ei.value.traceback) == ["at <eval> (<code>:2:8)"], ei.value.traceback
        stack = rt.eval("function load(p) { return fs.readFileSync(p) }\n"
                        "try { load('/tmp/none') } catch (e) { e.stack }")
        assert frames(stack) == ["at load (<code>:1:20)", "at <eval> (<code>:2:11)"], stack
        assert rt.eval("try { atob('*') } catch (e) { e.stack.includes('codecage') }") is False
