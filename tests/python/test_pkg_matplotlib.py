"""matplotlib under the default sandbox ("require"): it finds its data
(/usr/share/matplotlib, /etc/matplotlibrc: derived from the installed
python3-* packages by scripts/py-data-dirs), draws with Agg, and keeps its
config folder in the worker's private cache; in a spawned worker and in a
session forked from a template that preloaded it."""
import ccpkg  # noqa: F401  (builds the package)
import pytest

from codecage import ForkServer, IsolatedRuntime

pytest.importorskip("matplotlib", reason="python3-matplotlib (scripts/install-deps) is needed")

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
