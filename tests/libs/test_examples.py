"""examples/sales_chart.py and examples/deck.py run as a user runs them
(a fresh interpreter, the built package on its path), against the pinned
npm packages of tests/libs, each given an output folder that does not
exist yet (the example makes it)."""
import os
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import ccpkg  # noqa: E402  (builds the package)

ROOT = os.path.join(HERE, "..", "..")
NM = os.path.join(HERE, "node_modules")


def run_example(name, out):
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", name), str(out), NM],
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=ccpkg.PKG_DIR))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_sales_chart(tmp_path):
    tmp_path = tmp_path / "charts" / "q1"  # missing: the example makes it
    out = run_example("sales_chart.py", tmp_path)
    assert "python: read /etc/passwd: refused (" in out
    assert "; fetch: refused (" in out.split("python:")[1].splitlines()[0]
    js = [line for line in out.splitlines() if line.startswith("javascript:")][0]
    assert "fetch: refused (ReferenceError)" in js
    # no scratch and no mount: the session has no fs, so no require either
    assert "read /etc/passwd: refused (ReferenceError)" in js
    assert "NOT refused" not in out
    assert "tool calls: 2 of 2" in out
    svg = (tmp_path / "sales.svg").read_text()
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    for word in ("East", "West", "North", "4 sales by region"):
        assert word in svg


def test_deck(tmp_path):
    tmp_path = tmp_path / "decks"  # missing: the example makes it
    out = run_example("deck.py", tmp_path)
    assert "wrote" in out
    with zipfile.ZipFile(tmp_path / "deck.pptx") as z:
        names = set(z.namelist())
        assert {"ppt/slides/slide1.xml", "ppt/slides/slide2.xml"} <= names
        assert "ppt/slides/slide3.xml" not in names
        assert "Quarterly sales" in z.read("ppt/slides/slide1.xml").decode()
