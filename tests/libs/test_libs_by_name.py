"""Issue 27: packages named by name, from the pinned tests/libs/node_modules,
whether their package.json names a UMD/IIFE script (main, exports
conditions, a build beside them) or only an ES module or CommonJS entry
(README's Libraries section gives the order), in the CLI (`--library
NAME`) and the Python package (`libraries=[NAME]`). test_libs_node.py
compares their output with node's."""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import ccpkg  # noqa: E402,F401  (builds the package)

import codecage  # noqa: E402
from conftest import CLI  # noqa: E402

NM = os.path.join(HERE, "node_modules")

# name: (code, its value); each loaded by name alone
PACKAGES = {
    "@dagrejs/dagre": ("const g = new dagre.graphlib.Graph(); g.setGraph({}); "
                       "g.setDefaultEdgeLabel(() => ({})); g.setNode('a', {width: 10, height: 10});"
                       " g.setNode('b', {width: 10, height: 10}); g.setEdge('a', 'b'); "
                       "dagre.layout(g); g.node('b').y > g.node('a').y", True),
    "pptxgenjs": ("const p = new PptxGenJS(); p.addSlide().addText('x', {x: 1, y: 1}); "
                  "typeof p.write", "function"),
    "three": ("new three.BoxGeometry(1, 2, 3).attributes.position.count", 24),
    "jspdf": ("const d = new jspdf.jsPDF(); d.text('hi', 10, 10); "
              "d.output().startsWith('%PDF-')", True),
    "katex": ("katex.renderToString('x^2').includes('katex')", True),
    "lodash": ("_.chunk([1, 2, 3], 2)", [[1, 2], [3]]),
    "handlebars": ("Handlebars.compile('hi {{x}}')({x: '<b>'})", "hi &lt;b&gt;"),
    "ajv": ("new ajv().validate({type: 'integer'}, 3)", True),
    "chroma-js": ("chroma('red').hex()", "#ff0000"),
    "dayjs": ("dayjs(0).add(1, 'day').toISOString()", "1970-01-02T00:00:00.000Z"),
}


@pytest.fixture(scope="module", autouse=True)
def installed():
    if not os.path.isdir(NM):
        pytest.fail("tests/libs/node_modules is missing: run "
                    "`npm ci --prefix tests/libs --no-audit --no-fund` (scripts/test does)")


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_by_name_in_the_cli(name):
    code, want = PACKAGES[name]
    p = subprocess.run([CLI, "eval", "--lang", "js", "--json", "--web-polyfills",
                        "--node-modules", NM, "--library", name, "--", code],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert json.loads(p.stdout)["value"] == want


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_by_name_in_the_python_package(name):
    code, want = PACKAGES[name]
    with codecage.IsolatedRuntime(libraries=[name], node_modules=NM, web_polyfills=True,
                                  fork_server=False) as rt:
        assert rt.eval(code) == want


def test_all_ten_in_one_runtime_and_in_a_fork_servers_sessions():
    """Together, in order; a fork server's template loads them once (the ES
    module graph of three and the CommonJS one of ajv too), and every
    session has them."""
    names = sorted(PACKAGES)
    cfg = codecage.RuntimeConfig(libraries=names, node_modules=NM, web_polyfills=True,
                                 timeout=60)
    with codecage.ForkServer(cfg) as fs:
        for _ in range(2):
            with fs.session() as s:
                for name in names:
                    code, want = PACKAGES[name]
                    assert s.eval(code) == want, name


def test_a_modules_library_lends_no_module_loader_to_the_guest():
    """three's modules were served to the engine while it loaded, and only
    then: the guest can import none of them (nor anything else) after."""
    with codecage.IsolatedRuntime(libraries=["three"], node_modules=NM) as rt:
        assert rt.eval("typeof three.Scene") == "function"
        msg = rt.eval("(async () => { try { await import('three/build/three.core.js'); "
                      "return 'imported' } catch (e) { return String(e) } })()")
        assert "imported" not in msg and "modules are not available" in msg, msg
