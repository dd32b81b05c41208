"""RuntimeConfig(libraries=...): browser bundles read by the host and loaded
before the runtime is ready, in a spawned runtime, a fork server's
template and a pool (src/lib/libraries.c, the worker's load_libraries)."""
import json
import time

import ccpkg  # noqa: F401  (builds the package)
import pytest

import codecage
from codecage import WEB_POLYFILLS, ForkServer, IsolatedRuntime, SessionPool

UMD = ("(function (root, factory) { if (typeof define === 'function' && define.amd) "
       "define([], factory); else root.{name} = factory(); })(this, function () "
       "{ return { v: '{v}' }; });\n")


def package(root, name, fields, files):
    d = root / name
    d.mkdir(parents=True)
    (d / "package.json").write_text(json.dumps(dict(name=name, version="1.0.0", **fields)))
    for rel, text in files.items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text(text)
    return d


def test_files_load_in_order_and_a_function_completion_is_ignored(tmp_path):
    a = tmp_path / "a.js"
    a.write_text("var answer = 21; console.log('noise'); (function f() {})\n")
    b = tmp_path / "b.js"
    b.write_text("var twice = answer * 2;\n")
    with IsolatedRuntime(libraries=[str(a), b]) as rt:
        r = rt.run("twice")
        assert r.value == 42
        assert r.stdout == ""  # output while loading is dropped


def test_load_error_names_library_and_file(tmp_path):
    bad = tmp_path / "bad.js"
    bad.write_text("var ok = 1;\nnull.boom;\n")
    with pytest.raises(codecage.GuestError) as e:
        IsolatedRuntime(libraries=[str(bad)])
    assert f"loading library '{bad}' ({bad})" in str(e.value)
    assert "TypeError" in str(e.value) and "bad.js:2" in str(e.value)
    syn = tmp_path / "syn.js"
    syn.write_text("var x = ;")
    with pytest.raises(codecage.GuestSyntaxError) as e:
        IsolatedRuntime(libraries=[str(syn)])
    assert "loading library" in str(e.value) and "syn.js" in str(e.value)


def test_package_resolution(tmp_path):
    nm = tmp_path / "node_modules"
    package(nm, "viaunpkg", {"unpkg": "dist/u.min.js", "browser": "nope.js"},
            {"dist/u.min.js": UMD.replace("{name}", "U").replace("{v}", "unpkg")})
    package(nm, "viabrowser", {"browser": "lib/b.umd"},
            {"lib/b.umd.js": UMD.replace("{name}", "B").replace("{v}", "browser")})
    package(nm, "esmonly", {"browser": "lib/e.js"}, {"lib/e.js": "export const e = 1;\n"})
    package(nm, "escapes", {"unpkg": "../viaunpkg/dist/u.min.js", "browser": "/etc/hostname"},
            {})
    package(nm, "@scope/iife", {"jsdelivr": "i.js"}, {"i.js": "!function(){ self.I = 7 }();"})
    cfg = dict(node_modules=str(nm), bootstrap=WEB_POLYFILLS)
    with IsolatedRuntime(libraries=["viaunpkg", str(nm / "viabrowser"), "@scope/iife"],
                         **cfg) as rt:
        assert rt.eval("[U.v, B.v, I]") == ["unpkg", "browser", 7]
    with pytest.raises(codecage.InvalidInputError) as e:
        IsolatedRuntime(libraries=["esmonly"], **cfg)
    assert "names no browser global bundle" in str(e.value)
    assert "give the bundle's file" in str(e.value)
    with pytest.raises(codecage.InvalidInputError) as e:  # no path out of the package
        IsolatedRuntime(libraries=["escapes"], **cfg)
    assert "names no browser global bundle" in str(e.value)
    with pytest.raises(codecage.InvalidInputError) as e:
        IsolatedRuntime(libraries=["missing"], **cfg)
    assert "no package of that name" in str(e.value)
    with pytest.raises(codecage.InvalidInputError) as e:
        IsolatedRuntime(libraries=["viaunpkg"])
    assert "node_modules" in str(e.value)


def test_a_package_by_its_main_exports_or_a_build_beside_them(tmp_path):
    """Issue 27: a UMD/IIFE script named by "main" or by "exports" under
    the browser, import, default or require conditions, or beside those
    entries (dist/STEM.umd.min.js ...), loads by name; ahead of the module
    builds the same package names."""
    nm = tmp_path / "node_modules"
    umd = lambda n, v: UMD.replace("{name}", n).replace("{v}", v)  # noqa: E731
    package(nm, "viamain", {"main": "lib/m.js", "module": "lib/m.mjs"},
            {"lib/m.js": umd("M", "main"), "lib/m.mjs": "export default 1;\n"})
    package(nm, "viaexports", {"main": "cjs.js", "exports": {".": {
        "import": {"types": "./t.d.ts", "default": "./e.mjs"},
        "require": {"default": "./dist/x.cjs"}}}},
            {"cjs.js": "module.exports = 1;\n", "e.mjs": "export const e = 1;\n",
             "dist/x.cjs": umd("X", "exports")})
    package(nm, "beside", {"main": "dist/beside.cjs.js", "module": "dist/beside.es.js"},
            {"dist/beside.cjs.js": "module.exports = 2;\n",
             "dist/beside.es.js": "export default 2;\n",
             "dist/beside.min.js": "module.exports = 3;\n",  # not a global script
             "dist/beside.umd.min.js": umd("S", "beside")})
    package(nm, "iife", {"main": "index.cjs"},
            {"index.cjs": "exports.x = 1;\n", "dist/iife.min.js":
             "\"use strict\";var IIFE=(()=>{ return {v: 'esbuild'}; })();\n"})
    with IsolatedRuntime(libraries=["viamain", "viaexports", "beside", "iife"],
                         node_modules=str(nm)) as rt:
        assert rt.eval("[M.v, X.v, S.v, IIFE.v]") == ["main", "exports", "beside", "esbuild"]


def test_a_package_of_es_modules_or_commonjs_files_loads_by_name(tmp_path):
    """With no global script, the ES module entry and what it imports
    (relative files, packages in node_modules) load as modules, or the
    CommonJS entry and what it requires as one script; the namespace (its
    default export when that is all) or module.exports is the global named
    for the package. An import the host cannot find is refused before the
    runtime starts; an unresolved require() fails only if it runs."""
    nm = tmp_path / "node_modules"
    package(nm, "esm-pkg", {"type": "module", "exports": {".": {"import": "./src/index.js"}}},
            {"src/index.js": "import { twice } from './math.js';\n"
                             "import dep from 'dep';\nexport * from './more.js';\n"
                             "export const four = twice(2) + dep - dep;\n",
             "src/math.js": "export function twice(x) { return 2 * x; }\n",
             "src/more.js": "export const more = 'more';\n"})
    package(nm, "dep", {"module": "d.mjs", "main": "d.cjs"},
            {"d.mjs": "export default 40;\n", "d.cjs": "module.exports = -1;\n"})
    package(nm, "only-default", {"module": "x.mjs"}, {"x.mjs": "export default (n) => n + 1;\n"})
    package(nm, "my-cjs", {"main": "lib/index.js"},
            {"lib/index.js": "var u = require('./util'); var d = require('cdep/sub');\n"
                             "var data = require('../data.json');\n"
                             "module.exports = { total: u.add(d, data.n), "
                             "later: function () { return require('not-installed'); } };\n",
             "lib/util.js": "exports.add = function (a, b) { return a + b; };\n",
             "data.json": '{"n": 2}'})
    package(nm, "cdep", {"main": "index.js"}, {"sub.js": "module.exports = 40;\n",
                                                "index.js": "module.exports = 0;\n"})
    package(nm, "broken-esm", {"module": "b.mjs"}, {"b.mjs": "import x from 'nowhere';\n"})
    package(nm, "escaping", {"module": "e.mjs"}, {"e.mjs": "import x from '../../../etc.mjs';\n"})
    package(nm, "bad-syntax", {"module": "s.mjs"}, {"s.mjs": "export const = 1;\n"})
    cfg = dict(node_modules=str(nm))
    with IsolatedRuntime(libraries=["esm-pkg", "only-default", "my-cjs"], **cfg) as rt:
        assert rt.eval("[esmPkg.four, esmPkg.more, onlyDefault(1), myCjs.total]") == \
            [4, "more", 2, 42]
        assert rt.eval("Object.keys(esmPkg).sort()") == ["four", "more"]
        msg = rt.eval("try { myCjs.later() } catch (e) { e.message }")
        assert "Cannot find module 'not-installed'" in msg, msg
    # a directory: its package.json's name, its own node_modules
    with IsolatedRuntime(libraries=[str(nm / "only-default") + "/"]) as rt:
        assert rt.eval("onlyDefault(41)") == 42
    for name, said in (("broken-esm", "imports 'nowhere'"), ("escaping", "imports '../../")):
        with pytest.raises(codecage.InvalidInputError) as e:
            IsolatedRuntime(libraries=[name], **cfg)
        assert said in str(e.value), e.value
    with pytest.raises(codecage.GuestSyntaxError) as e:
        IsolatedRuntime(libraries=["bad-syntax"], **cfg)
    assert "bad-syntax/s.mjs" in str(e.value), e.value


def test_a_module_graph_counts_all_its_files_against_max_source(tmp_path):
    nm = tmp_path / "node_modules"
    package(nm, "two", {"module": "a.mjs"},
            {"a.mjs": "import './b.mjs';\nexport const a = '" + "a" * 3000 + "';\n",
             "b.mjs": "export const b = '" + "b" * 3000 + "';\n"})
    with pytest.raises(codecage.InvalidInputError) as e:
        IsolatedRuntime(libraries=["two"], node_modules=str(nm), max_source=4096)
    assert "max_source" in str(e.value) and "in all" in str(e.value), e.value
    with IsolatedRuntime(libraries=["two"], node_modules=str(nm), max_source=8192) as rt:
        assert rt.eval("two.a.length") == 3000


def test_a_module_graph_too_wide_for_its_frame_is_refused_by_the_host(tmp_path):
    """Many modules with long names: the names and imports do not fit the
    lib frame beside max_source. The host says so (it was the worker's
    "malformed lib frame", a protocol_violation)."""
    nm = tmp_path / "node_modules"
    deep = "/".join(["d" * 50] * 4)  # short specifiers, long file names
    files = {f"{deep}/i.mjs": "".join(f"import './{k}.mjs';\n" for k in range(400))}
    files.update({f"{deep}/{k}.mjs": "" for k in range(400)})
    package(nm, "wide", {"module": f"{deep}/i.mjs"}, files)
    with pytest.raises(codecage.InvalidInputError) as e:
        IsolatedRuntime(libraries=["wide"], node_modules=str(nm), max_source=65536)
    assert "names and imports" in str(e.value), e.value
    with IsolatedRuntime(libraries=["wide"], node_modules=str(nm)) as rt:
        assert rt.eval("typeof wide") == "object"


def test_size_cap_and_language(tmp_path):
    big = tmp_path / "big.js"
    big.write_text("var s = '" + "x" * 5000 + "';\n")
    with pytest.raises(codecage.InvalidInputError) as e:
        IsolatedRuntime(libraries=[str(big)], max_source=4096)
    assert "max_source" in str(e.value)
    with IsolatedRuntime(libraries=[str(big)], max_source=8192) as rt:
        assert rt.eval("s.length") == 5000
    with pytest.raises(codecage.InvalidInputError) as e:
        IsolatedRuntime(language="python", libraries=[str(big)])
    assert "JavaScript" in str(e.value)
    with pytest.raises(TypeError):
        codecage.RuntimeConfig(libraries="vega")


def test_polyfills_load_before_the_libraries(tmp_path):
    lib = tmp_path / "needs.js"
    lib.write_text("var bytes = new TextEncoder().encode('hé').length;"
                   "var later = 0; setTimeout(function () { later = 1; }, 10);\n")
    for cfg in (dict(bootstrap=WEB_POLYFILLS), dict(web_polyfills=True)):
        with IsolatedRuntime(libraries=[str(lib)], **cfg) as rt:
            assert rt.eval("[bytes, later]") == [3, 1]
    with pytest.raises(codecage.GuestError):  # without them it cannot load
        IsolatedRuntime(libraries=[str(lib)])


def test_fork_server_and_pool_sessions_start_with_the_libraries(tmp_path):
    lib = tmp_path / "counter.js"
    lib.write_text("var loads = (typeof loads === 'number' ? loads : 0) + 1; var state = [];\n")
    with ForkServer(libraries=[str(lib)]) as fs:
        with fs.session() as a, fs.session() as b:
            assert a.eval("state.push(1); [loads, state.length]") == [1, 1]
            assert b.eval("[loads, state.length]") == [1, 0]  # own copy
    lib.unlink()  # a pool read the file once, at its start
    lib.write_text("var loads = 1; var state = [];\n")
    with SessionPool(libraries=[str(lib)], size=1) as pool:
        lib.unlink()
        for _ in range(2):
            with pool.checkout(timeout=30) as s:
                assert s.eval("loads") == 1


def test_a_library_that_never_ends_or_fills_memory_is_stopped(tmp_path):
    loop = tmp_path / "loop.js"
    loop.write_text("for (;;) {}\n")
    start = time.monotonic()
    with pytest.raises(codecage.TimeoutError) as e:
        IsolatedRuntime(libraries=[str(loop)], timeout=1)
    assert time.monotonic() - start < 15  # timeout bounds it, not the 30 s start-up

    assert f"loading library '{loop}'" in str(e.value)
    with pytest.raises(codecage.TimeoutError):
        ForkServer(libraries=[str(loop)], timeout=1)
    hog = tmp_path / "hog.js"
    hog.write_text("var a = []; for (;;) a.push(new Array(1e6).fill(1));\n")
    with pytest.raises(codecage.MemoryLimitError) as e:
        IsolatedRuntime(libraries=[str(hog)], max_memory=64 << 20)
    assert "loading library" in str(e.value)


def test_spawning_pool_keeps_the_bytes_it_read(tmp_path):
    lib = tmp_path / "once.js"
    lib.write_text("var once = 'read at the start';\n")
    with SessionPool(libraries=[str(lib)], size=1, fork_server=False) as pool:
        lib.unlink()  # sessions spawned later still get it
        for _ in range(2):
            with pool.checkout(timeout=30) as s:
                assert s.eval("once") == "read at the start"
