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
