"""RuntimeConfig(dependencies=[...]) (issue 33) against a local index
(tests/deps_index.py): the package imports, EvalResult.install_log says
what was installed, a fork-server template per lock (the same lock: the
same template; another lock: its own), two runtimes with different locks
side by side, PEP 723 blocks, a JavaScript package."""
import os
import sys

import ccpkg  # noqa: F401  (builds the package)
import pytest

import codecage
from codecage import DependencyOptions, IsolatedRuntime, RuntimeConfig

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from deps_index import ix  # noqa: E402,F401  (the fixture)


def opts(ix, cache=None):
    return DependencyOptions(cache_dir=cache or ix.cache, index_url=ix.pypi,
                             registry=ix.npm.url)


def fresh(ix):
    return ix.fresh_cache()


def test_dependency_imports_and_the_install_log_says_so(ix):
    cfg = RuntimeConfig(dependencies=["ccdemo-pkg==1.0"], deps=opts(ix, fresh(ix)))
    with IsolatedRuntime(cfg, language="python") as rt:
        r = rt.run("import ccdemo_pkg; ccdemo_pkg.VERSION")
        assert r.value == "1.0"
        assert "ccdemo-pkg==1.0" in r.install_log and "installed" in r.install_log
        assert rt.dependencies["packages"] == "ccdemo-pkg==1.0"
        assert rt.eval("ccdemo_pkg.__file__").startswith("/codecage/python-path/0/")
    with IsolatedRuntime(language="python") as rt:
        assert rt.run("1").install_log is None and rt.dependencies is None


def test_a_template_per_lock(ix):
    codecage.close_fork_servers()
    o = opts(ix)
    one = RuntimeConfig(dependencies=["ccdemo-pkg==1.0"], deps=o)
    two = RuntimeConfig(dependencies=["ccdemo-pkg==2.0"], deps=o)
    with IsolatedRuntime(one, language="python") as a:
        assert a.sandbox["fork_server"] == "shared"
        pids = set(codecage._codecage.shared_fork_server_pids())
        with IsolatedRuntime(one, language="python") as b:
            assert b.sandbox["fork_server"] == "shared"
            assert set(codecage._codecage.shared_fork_server_pids()) == pids
            assert b.eval("import ccdemo_pkg; ccdemo_pkg.VERSION") == "1.0"
        with IsolatedRuntime(two, language="python") as c:
            assert c.sandbox["fork_server"] == "shared"
            assert len(set(codecage._codecage.shared_fork_server_pids()) - pids) == 1
            assert c.dependencies["key"] != a.dependencies["key"]


def test_two_locks_side_by_side(ix):
    o = opts(ix)
    with IsolatedRuntime(RuntimeConfig(dependencies=["ccdemo-pkg==1.0"], deps=o),
                         language="python") as a, \
            IsolatedRuntime(RuntimeConfig(dependencies=["ccdemo-pkg==2.0"], deps=o),
                            language="python") as b:
        assert a.eval("import ccdemo_pkg; ccdemo_pkg.VERSION") == "1.0"
        assert b.eval("import ccdemo_pkg; ccdemo_pkg.VERSION") == "2.0"
        # each sees its own lock's folder only, not what is beside it
        for rt in (a, b):
            assert "ccdemo_pkg" in rt.eval("import os; os.listdir('/codecage/python-path/0')")
            with pytest.raises(codecage.GuestError, match="PermissionError"):
                rt.eval("os.listdir('/codecage/python-path')")


def test_pep723_block(ix):
    code = "# /// script\n# dependencies = ['ccdemo-pkg==2.0']\n# ///\nimport ccdemo_pkg\nccdemo_pkg.VERSION\n"
    assert codecage.script_dependencies(code) == ["ccdemo-pkg==2.0"]
    assert codecage.script_dependencies("x = 1") == []
    cfg = RuntimeConfig(dependencies=codecage.script_dependencies(code), deps=opts(ix))
    with IsolatedRuntime(cfg, language="python") as rt:
        assert rt.eval(code) == "2.0"
    with IsolatedRuntime(language="python") as rt:
        with pytest.raises(codecage.InvalidInputError, match="needs 'ccdemo-pkg'"):
            rt.eval(code)
        assert rt.eval("1") == 1  # still usable
    with pytest.raises(codecage.InvalidInputError, match="not valid TOML"):
        codecage.script_dependencies("# /// script\n# dependencies = [\n# ///\n")


def test_failures_are_invalid_input_naming_the_package(ix):
    for spec, why in (("cc-no-such-package", "no package of that name"),
                      ("ccsrconly", "only source distributions")):
        with pytest.raises(codecage.InvalidInputError, match=why) as e:
            IsolatedRuntime(RuntimeConfig(dependencies=[spec], deps=opts(ix)), language="python")
        assert spec in str(e.value)
    with pytest.raises(TypeError):
        RuntimeConfig(dependencies="polars")
    with pytest.raises(codecage.InvalidInputError, match="allow-list"):
        IsolatedRuntime(RuntimeConfig(dependencies=["ccdemo-pkg"], deps=DependencyOptions(
            cache_dir=ix.cache, index_url=ix.pypi, allow=["numpy"])), language="python")


def test_javascript_dependency(ix):
    cfg = RuntimeConfig(dependencies=["cc-peer"], deps=opts(ix))
    with IsolatedRuntime(cfg, language="javascript") as rt:
        r = rt.run("ccPeer.quadruple(2)")
        assert r.value == 8 and r.install_log
    assert not os.path.exists(ix.marker)


def test_fork_server_and_pool_take_dependencies(ix):
    cfg = RuntimeConfig(dependencies=["ccdemo-pkg==1.0"], deps=opts(ix))
    with codecage.ForkServer(cfg, language="python", preload="") as fs:
        with fs.session() as rt:
            assert rt.eval("import ccdemo_pkg; ccdemo_pkg.VERSION") == "1.0"
            assert rt.dependencies["packages"] == "ccdemo-pkg==1.0"
