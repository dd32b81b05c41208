"""matplotlib under the default sandbox ("require"): it finds its data
(/usr/share/matplotlib, /etc/matplotlibrc: derived from the installed
python3-* packages by scripts/py-data-dirs), draws with Agg, and keeps its
config folder in the worker's private cache; in a spawned worker and in a
session forked from a template that preloaded it."""
import ccpkg  # noqa: F401  (builds the package)
import pytest

import conftest

from codecage import ForkServer, IsolatedRuntime

conftest.need("matplotlib", "python3-matplotlib (scripts/install-deps) is needed")

DRAW = """
import io
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(2, 1.5), dpi=50)
ax.plot([1, 3, 2])
ax.set_title('sales')
buf = io.BytesIO()
fig.savefig(buf, format='png')
plt.close(fig)
(plt.get_backend(), buf.getvalue())
"""


def check_png(value):
    backend, png = value
    assert backend.lower() == "agg"
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 500


def test_png_in_a_spawned_worker():
    with IsolatedRuntime(language="python", sandbox="require") as rt:
        check_png(rt.eval(DRAW))


def test_png_in_a_forked_session_with_matplotlib_preloaded():
    with ForkServer(language="python", sandbox="require", preload="matplotlib") as fs:
        for _ in range(2):
            with fs.session() as rt:
                assert rt.eval("import sys; 'matplotlib.pyplot' in sys.modules")
                check_png(rt.eval(DRAW))


def test_first_import_prints_nothing_and_leaves_the_environment_empty():
    # 15c printed "Could not save font_manager cache ... File too large"
    # on the guest's stderr and left MPLBACKEND/MPLCONFIGDIR in os.environ
    with IsolatedRuntime(language="python", sandbox="require") as rt:
        r = rt.run("import os\nbefore = dict(os.environ)\n" + DRAW.replace(
            "(plt.get_backend(), buf.getvalue())",
            "[before, dict(os.environ), plt.get_backend(), buf.getvalue()]"))
        before, after, backend, png = r.value
        assert (r.stdout, r.stderr) == ("", "")
        assert before == {} and after == {}
        check_png((backend, png))
        # the libc environment too (os.environ is a copy)
        assert rt.eval("import ctypes; e = ctypes.POINTER(ctypes.c_char_p).in_dll("
                       "ctypes.CDLL(None), 'environ'); e[0]") is None


@pytest.mark.parametrize("scratch", [0, 1 << 20])
def test_forked_session_without_preload_imports_it(scratch):
    from codecage import RuntimeConfig
    with ForkServer(RuntimeConfig(scratch=scratch), language="python", sandbox="require") as fs:
        with fs.session() as rt:
            r = rt.run(DRAW)
            assert r.stderr == ""
            check_png(r.value)
            assert rt.eval("import os; dict(os.environ)") == {}


def test_optional_preload_module_dropped_says_why():
    with pytest.warns(RuntimeWarning, match="ccnope_missing: ModuleNotFoundError"):
        fs = ForkServer(language="python", sandbox="require",
                        preload="json,ccnope_missing?,matplotlib?")
    with fs:
        assert len(fs.preload_skipped) == 1
        assert fs.preload_skipped[0].startswith(
            "ccnope_missing: ModuleNotFoundError: No module named 'ccnope_missing'")
        with fs.session() as rt:
            assert rt.eval("import sys; 'matplotlib.pyplot' in sys.modules") is True
    with ForkServer(language="python", sandbox="require", preload="json") as fs:
        assert fs.preload_skipped == ()
