"""codecage mcp and dependencies (issue 33): the tools' `dependencies`
argument and PEP 723 blocks with --allow-dependencies (and refused
without it, as the descriptions say), the install log in the result, a
call naming other packages getting a runtime that has them; the package
probe run at start and kept on disk. Against a local index
(tests/deps_index.py), but for the peers' two cases, which use the
configured index, as a user's server would."""
import os
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from deps_index import ix  # noqa: E402,F401  (the fixture)
from mcp_util import Stdio  # noqa: E402


def tools(s):
    return {t["name"]: t for t in s.request({"jsonrpc": "2.0", "id": 9,
                                             "method": "tools/list"})["result"]["tools"]}


def test_dependencies_argument_installs_and_the_result_has_the_log(ix):
    s = Stdio("--allow-dependencies", *ix.flags(), "--pool", "0")
    try:
        t = tools(s)
        assert "dependencies" in t["run_python"]["inputSchema"]["properties"]
        assert "Packages: pass dependencies" in t["run_python"]["description"]
        assert "dependencies" in t["run_javascript"]["inputSchema"]["properties"]
        r = s.call("run_python", "import ccdemo_pkg; ccdemo_pkg.VERSION",
                   dependencies=["ccdemo-pkg==1.0"])
        sc = r["structuredContent"]
        assert not r["isError"] and sc["value"] == "1.0", r
        assert sc["dependencies"]["packages"] == "ccdemo-pkg==1.0"
        assert "ccdemo-pkg==1.0" in sc["dependencies"]["log"]
        assert "dependencies: " in r["content"][0]["text"]
        # state persists; other packages: a runtime that has them
        s.call("run_python", "x = 41", id=2)
        r = s.call("run_python", "x + 1", id=3)
        assert r["structuredContent"]["value"] == 42
        r = s.call("run_python", "import ccdemo_pkg; ccdemo_pkg.VERSION", id=4,
                   dependencies=["ccdemo-pkg==2.0"])
        assert r["structuredContent"]["value"] == "2.0", r
        assert "started again with the dependencies" in r["structuredContent"]["note"]
        r = s.call("run_python", "# /// script\n# dependencies = ['ccnative']\n# ///\n"
                   "import ccnative\nccnative.twice(5)", id=5)
        assert r["structuredContent"]["value"] == 10, r
        r = s.call("run_javascript", "ccPeer.quadruple(5)", id=6, dependencies=["cc-peer"])
        assert r["structuredContent"]["value"] == 20, r
        r = s.call("run_python", "1", id=7, dependencies=["cc-no-such-package"])
        assert r["isError"] and "no package of that name" in \
            r["structuredContent"]["error"]["message"], r
        bad = s.request({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
            "name": "run_python", "arguments": {"code": "1", "dependencies": "polars"}}})
        assert "must be a list" in bad["error"]["message"], bad
    finally:
        s.close()


def test_without_allow_dependencies_the_model_may_not_ask(ix):
    s = Stdio(*ix.flags(), "--pool", "0")
    try:
        t = tools(s)
        assert "dependencies" not in t["run_python"]["inputSchema"]["properties"]
        assert "No packages can be installed" in t["run_python"]["description"]
        r = s.call("run_python", "1", dependencies=["ccdemo-pkg"])
        assert r["isError"] and "--allow-dependencies" in \
            r["structuredContent"]["error"]["message"], r
        r = s.call("run_python", "# /// script\n# dependencies = ['ccdemo-pkg']\n# ///\n1", id=2)
        assert r["isError"] and "--allow-dependencies" in \
            r["structuredContent"]["error"]["message"], r
    finally:
        s.close()


def test_the_package_probe_runs_at_start_and_is_cached(ix, tmp_path):
    cache = os.path.join(ix.root, "probe-cache")
    s = Stdio("--deps-cache", cache)
    try:
        deadline = time.monotonic() + 120
        # no tools/list yet: the probe is the server's own, at start
        while time.monotonic() < deadline and not (
                os.path.isdir(cache) and [n for n in os.listdir(cache) if n.startswith("probe-")]):
            time.sleep(0.2)
        files = [n for n in os.listdir(cache) if n.startswith("probe-")]
        assert len(files) == 1, files
        text = open(os.path.join(cache, files[0])).read()
        assert text.startswith("Python 3.11") and "numpy" in text, text
        assert text in tools(s)["run_python"]["description"]
    finally:
        s.close()
    # the next server reads it: the account it lists is the cached one
    with open(os.path.join(cache, files[0]), "w") as f:
        f.write("Python 3.11.2; importable beyond the standard library: cached-marker")
    s = Stdio("--deps-cache", cache)
    try:
        assert "cached-marker" in tools(s)["run_python"]["description"]
    finally:
        s.close()


def test_peers_cases_against_the_configured_index(ix):
    """The two dependency cases of the peers (a package from a dependencies
    list, a PEP 723 block), with pip's own index as a user's server has."""
    cache = os.path.join(ix.root, "real-cache")
    s = Stdio("--allow-dependencies", "--deps-cache", cache, "--pool", "0")
    try:
        r = s.call("run_python", "import humanize\nhumanize.intcomma(1234567)",
                   dependencies=["humanize"])
        assert r["structuredContent"]["value"] == "1,234,567", r
        assert "humanize==" in r["structuredContent"]["dependencies"]["packages"]
        code = ("# /// script\n# dependencies = ['tabulate']\n# ///\n"
                "from tabulate import tabulate\nprint(tabulate([[1, 2]], headers=['a', 'b']))")
        r = s.call("run_python", code, id=2)
        assert not r["isError"] and "a    b" in r["structuredContent"]["stdout"], r
    finally:
        s.close()
