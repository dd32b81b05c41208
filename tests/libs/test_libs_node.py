"""Browser bundles from npm (pinned by tests/libs/package-lock.json, installed
by scripts/test with `npm ci --prefix tests/libs`) loaded through
RuntimeConfig(libraries=...) under WEB_POLYFILLS, each output compared with
node running the same bundle files and the same code, both with fixed.js
first (a fixed clock, a seeded Math.random). Equal strings, or a named,
documented difference (DIFFERENCES)."""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import ccpkg  # noqa: E402,F401  (builds the package)

import codecage  # noqa: E402
from codecage import WEB_POLYFILLS, IsolatedRuntime  # noqa: E402

NM = os.path.join(HERE, "node_modules")
FIXED = os.path.join(HERE, "fixed.js")


def nm(*p):
    return os.path.join(NM, *p)


VL_SPEC = json.dumps({
    "data": {"values": [{"m": "Jan", "v": 28}, {"m": "Feb", "v": 55}, {"m": "Mar", "v": 43}]},
    "mark": "bar", "encoding": {"x": {"field": "m", "type": "nominal"},
                                "y": {"field": "v", "type": "quantitative"}}})

# name: (libraries, the body of an async function returning a string,
#        None or the reason it cannot match yet)
CASES = {
    "vega-lite-svg": (["vega", "vega-lite"], f"""
        const spec = vegaLite.compile({VL_SPEC}).spec;
        const view = new vega.View(vega.parse(spec), {{renderer: 'none'}});
        return await view.toSVG();""", None),
    "vega-spec": (["vega", "vega-lite"],
                  f"return JSON.stringify(vegaLite.compile({VL_SPEC}).spec);", None),
    "d3": (["d3"], """
        const x = d3.scaleLinear().domain([0, 10]).range([0, 100]);
        const root = d3.hierarchy({name: 'r', children: [{name: 'a'}, {name: 'b',
            children: [{name: 'c'}]}]});
        d3.tree().size([100, 100])(root);
        return JSON.stringify({ticks: x.ticks(5), inv: x.invert(37),
            line: d3.line()([[0, 0], [1, 3], [2, 1]]),
            arc: d3.arc()({innerRadius: 10, outerRadius: 50, startAngle: 0, endAngle: 2}),
            pie: d3.pie()([1, 2, 3]).map(a => a.endAngle),
            tree: root.descendants().map(n => [n.data.name, n.x, n.y]),
            color: d3.interpolateViridis(0.3)});""", None),
    "dagre": (["@dagrejs/dagre"], """
        const g = new dagre.graphlib.Graph();
        g.setGraph({}); g.setDefaultEdgeLabel(() => ({}));
        for (const n of ['a', 'b', 'c', 'd']) g.setNode(n, {width: 40, height: 20});
        g.setEdge('a', 'b'); g.setEdge('a', 'c'); g.setEdge('c', 'd'); g.setEdge('b', 'd');
        dagre.layout(g);
        return JSON.stringify(g.nodes().map(n => [n, g.node(n).x, g.node(n).y]));""", None),
    "marked": (["marked"], "return marked.parse('# Title\\n\\n*a* **b** `c`\\n\\n- x\\n- y\\n');",
               None),
    "katex": (["katex"],
              "return katex.renderToString('\\\\frac{a}{b} + \\\\sqrt{x^2}');", None),
    "mathjs": (["mathjs"], """
        return JSON.stringify([math.evaluate('sqrt(3^2 + 4^2)'),
            math.format(math.inv([[1, 2], [3, 4]])), math.format(math.evaluate('2 inch to cm')),
            math.format(math.fraction(1, 3))]);""", None),
    "papaparse": (["papaparse"], """
        return JSON.stringify(Papa.parse('a,b\\n1,"x,y"\\n3,4', {header: true,
            dynamicTyping: true}).data) + Papa.unparse([[1, 'a b'], [2, 'c"d']]);""", None),
    "pdf-lib": (["pdf-lib"], """
        const doc = await PDFLib.PDFDocument.create();
        doc.setCreationDate(new Date(0)); doc.setModificationDate(new Date(0));
        const font = await doc.embedFont(PDFLib.StandardFonts.Helvetica);
        doc.addPage([300, 200]).drawText('Hello', {x: 20, y: 100, size: 24, font});
        const bytes = await doc.save({useObjectStreams: false});
        return Array.from(bytes, b => b.toString(16).padStart(2, '0')).join('');""", None),
    "echarts-svg": (["echarts"], """
        const chart = echarts.init(null, null, {renderer: 'svg', ssr: true, width: 400,
                                                height: 300});
        chart.setOption({animation: false, xAxis: {type: 'category', data: ['a', 'b', 'c']},
                         yAxis: {type: 'value'}, series: [{type: 'bar', data: [3, 1, 2]}]});
        const svg = chart.renderToSVGString();
        chart.dispose();  // stops zrender's frame loop (virtual timers run it forever)
        return svg;""", None),
    "prettier": ([nm("prettier", "standalone.js"), nm("prettier", "plugins", "babel.js"),
                  nm("prettier", "plugins", "estree.js")], """
        return await prettier.format('const x={a:1,b:[1,2]};function f( a ){return a}',
            {parser: 'babel', plugins: prettierPlugins});""", None),
    "jspdf": (["jspdf"], """
        const doc = new jspdf.jsPDF({compress: false});
        doc.setCreationDate(new Date(0)); doc.setFileId('00000000000000000000000000000000');
        doc.text('Hello', 10, 10);
        return doc.output();""", None),
    "pptxgenjs": (["pptxgenjs"], """
        const p = new PptxGenJS(); p.addSlide().addText('Hi', {x: 1, y: 1});
        const b = await p.write({outputType: 'uint8array'});
        return Array.from(b, x => x.toString(16).padStart(2, '0')).join('');""", None),
    # issue 27: by name, each as README's Libraries section resolves it
    "three": (["three"], """
        const g = new three.BoxGeometry(1, 2, 3).toNonIndexed();
        g.computeBoundingSphere();
        const m = new three.Matrix4().makeRotationY(0.5).multiply(
            new three.Matrix4().makeTranslation(1, 2, 3));
        return JSON.stringify([three.REVISION, g.attributes.position.count,
            g.boundingSphere.radius, m.elements, new three.Color('#3366cc').getHSL({})]);""",
              None),
    "lodash": (["lodash"], """
        return JSON.stringify([_.chunk([1, 2, 3, 4, 5], 2), _.groupBy(['one', 'two', 'three'],
            'length'), _.template('hi <%= who %>')({who: 'you'}), _.camelCase('Foo Bar'),
            _.shuffle([1, 2, 3, 4, 5])]);""", None),
    "handlebars": (["handlebars"], """
        Handlebars.registerHelper('up', s => s.toUpperCase());
        return Handlebars.compile('{{#each xs}}<li>{{up this}}</li>{{/each}}{{{raw}}}{{esc}}')(
            {xs: ['a', 'b'], raw: '<b>', esc: '<i>'});""", None),
    "ajv": (["ajv"], """
        const v = new ajv({allErrors: true});
        const check = v.compile({type: 'object', properties: {n: {type: 'integer',
            minimum: 1}, s: {type: 'string', maxLength: 2}}, required: ['n']});
        return JSON.stringify([check({n: 3, s: 'ab'}), check({n: 0, s: 'abc'}),
            check.errors.map(e => [e.instancePath, e.message])]);""", None),
    "chroma-js": (["chroma-js"], """
        return JSON.stringify([chroma('#3366cc').darken().hex(), chroma.mix('red', 'blue', 0.3,
            'lab').hex(), chroma.scale(['white', 'black']).colors(3), chroma('pink').hsl()]);""",
                  None),
    "dayjs": (["dayjs"], """
        const d = dayjs('2024-02-28T12:00:00Z').add(1, 'day');
        return JSON.stringify([d.toISOString(), d.diff(dayjs('2024-01-01T00:00:00Z'), 'day'),
            dayjs(0).toISOString(), d.isAfter(dayjs(0))]);""", None),
}

# What each package named by name resolves to (README's Libraries section;
# the sandbox finds it itself): a global script, or an ES module (CommonJS)
# entry whose namespace (module.exports) becomes the global named for it.
SCRIPTS = {"@dagrejs/dagre": "dist/dagre.min.js", "katex": "dist/katex.js",
           "jspdf": "dist/jspdf.umd.min.js", "pptxgenjs": "dist/pptxgen.bundle.js",
           "lodash": "lodash.js", "handlebars": "dist/handlebars.min.js",
           "chroma-js": "dist/chroma.cjs", "dayjs": "dayjs.min.js"}
MODULES = {"three": ("three", "build/three.module.js")}
REQUIRES = {"ajv": ("ajv", "dist/ajv.js")}


def load(libs):
    """The files the sandbox resolves for libs, as node gets them."""
    out = []
    for name in libs:
        if os.path.isabs(name):
            out.append(name)
            continue
        if name in MODULES or name in REQUIRES:
            continue  # node imports or requires them: node(..., libs=)
        if name in SCRIPTS:
            out.append(nm(name, SCRIPTS[name]))
            continue
        with open(nm(name, "package.json")) as f:
            pj = json.load(f)
        rel = pj.get("unpkg") or pj.get("jsdelivr") or pj["browser"]
        out.append(os.path.normpath(nm(name, rel)))
    return out


def node(files, code, libs=()):
    req = {"files": files, "code": code,
           "modules": [[MODULES[n][0], nm(n, MODULES[n][1])] for n in libs if n in MODULES],
           "requires": [[REQUIRES[n][0], nm(n, REQUIRES[n][1])] for n in libs if n in REQUIRES]}
    # bytes, decoded here: text=True would turn node's "\r\n" into "\n"
    proc = subprocess.run(["node", os.path.join(HERE, "node_run.js")],
                          input=json.dumps(req).encode(), capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")[-3000:]
    return proc.stdout.decode("utf-8")


@pytest.fixture(scope="module", autouse=True)
def installed():
    if not os.path.isdir(NM):
        pytest.fail("tests/libs/node_modules is missing: run "
                    "`npm ci --prefix tests/libs --no-audit --no-fund` (scripts/test does)")


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_node(name):
    libs, code, pending = CASES[name]
    if pending:
        pytest.xfail(pending)  # drop once issue 15a's polyfill/patch lands
    cfg = codecage.RuntimeConfig(bootstrap=WEB_POLYFILLS, libraries=[FIXED] + libs,
                                 node_modules=NM, timeout=60, max_memory=512 << 20)
    with IsolatedRuntime(cfg) as rt:
        got = rt.eval("(async () => {" + code + "})()")
    want = node([FIXED] + load(libs), code, libs)
    assert isinstance(got, str) and len(got) > 20
    assert got == want


def test_fork_server_and_pool_sessions_start_with_vega_ready():
    """The template loads the bundles once; every session (forked or
    pooled) has them and compiles the same spec as a spawned runtime."""
    libs = [FIXED, "vega", "vega-lite"]
    code = f"JSON.stringify(vegaLite.compile({VL_SPEC}).spec)"
    want = node([FIXED] + load(["vega", "vega-lite"]), "return " + code + ";")
    cfg = codecage.RuntimeConfig(bootstrap=WEB_POLYFILLS, libraries=libs, node_modules=NM)
    with codecage.ForkServer(cfg) as fs:
        for _ in range(2):
            with fs.session() as s:
                assert s.eval("typeof vega.View + typeof setTimeout") == "functionfunction"
                assert s.eval(code) == want
    with codecage.SessionPool(cfg, size=1) as pool:
        with pool.checkout(timeout=60) as s:
            assert s.eval(code) == want


THREE_ENTRY = """import * as THREE from 'three';
import { GLTFExporter } from 'three/examples/jsm/exporters/GLTFExporter.js';
globalThis.THREE = THREE;
globalThis.GLTFExporter = GLTFExporter;
"""

THREE_CODE = """
    const scene = new THREE.Scene();
    const mesh = new THREE.Mesh(new THREE.BoxGeometry(1, 2, 3),
                                new THREE.MeshStandardMaterial({color: 0x3366cc}));
    mesh.name = 'box'; mesh.position.set(1, 0, -1);
    scene.add(mesh);
    const glb = await new GLTFExporter().parseAsync(scene, {binary: true});
    return Array.from(new Uint8Array(glb), b => b.toString(16).padStart(2, '0')).join('');"""


def test_three_glb_through_gltf_exporter(tmp_path):
    """three.js ships its exporter as an ES module only: bundled here into
    one classic script with the pinned esbuild, then loaded like any other."""
    entry = tmp_path / "entry.mjs"
    entry.write_text(THREE_ENTRY)
    bundle = tmp_path / "three-gltf.js"
    proc = subprocess.run([nm(".bin", "esbuild"), str(entry), "--bundle", "--format=iife",
                           "--log-level=warning", f"--outfile={bundle}"],
                          cwd=HERE, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, NODE_PATH=NM))
    assert proc.returncode == 0, proc.stderr
    cfg = codecage.RuntimeConfig(web_polyfills=True, libraries=[FIXED, str(bundle)],
                                 timeout=60)
    with IsolatedRuntime(cfg) as rt:
        got = rt.eval("(async () => {" + THREE_CODE + "})()")
    want = node([FIXED, str(bundle)], THREE_CODE)
    assert got.startswith("676c5446")  # "glTF"
    assert got == want
