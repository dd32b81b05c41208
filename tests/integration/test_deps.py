"""Dependencies on demand through the CLI and the library (issue 33):
`codecage run/eval --dependency SPEC`, PEP 723 blocks with
--allow-dependencies, the cache and the policy flags, against a local
index and npm registry built here (tests/deps_index.py)."""
import json
import os
import subprocess
import sys
import threading

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from conftest import CLI, ev  # noqa: E402
from deps_index import ix  # noqa: E402,F401  (the fixture)


def fresh(ix):
    return ix.fresh_cache()


def run(ix, lang, code, *flags, cache=None):
    return ev(lang, code, *ix.flags(cache), *flags, timeout=300)


def test_install_then_cache_hit(ix, tmp_path):
    cache = fresh(ix)
    r = run(ix, "python", "import ccdemo_pkg; ccdemo_pkg.VERSION", "--dependency", "ccdemo-pkg==1.0",
            cache=cache)
    assert r.kind == "ok" and r.value == "1.0", r
    d = r.json["dependencies"]
    assert d["cached"] is False and d["packages"] == "ccdemo-pkg==1.0", d
    assert d["key"].startswith("py-") and "installed" in d["log"], d
    assert os.path.isdir(os.path.join(cache, d["key"], "site", "ccdemo_pkg"))
    again = run(ix, "python", "import ccdemo_pkg; ccdemo_pkg.VERSION", "--dependency",
                "ccdemo-pkg==1.0", cache=cache)
    assert again.value == "1.0" and again.json["dependencies"]["cached"] is True, again
    assert again.json["dependencies"]["key"] == d["key"]


def test_what_debian_has_is_taken_from_there(ix):
    r = run(ix, "python", "import numpy, ccdemo_pkg; numpy.__file__", "--dependency", "numpy",
            "--dependency", "ccdemo-pkg")
    assert r.kind == "ok" and r.value.startswith("/usr/lib/python3/dist-packages/"), r
    assert "from Debian" in r.json["dependencies"]["log"], r.json["dependencies"]
    assert "numpy" not in r.json["dependencies"]["packages"]


def test_a_compiled_extension_module_loads(ix):
    """The python_path grant is not noexec (a .so of a wheel maps)."""
    r = run(ix, "python", "import ccnative; ccnative.twice(21)", "--dependency", "ccnative")
    assert r.kind == "ok" and r.value == 42, r


def test_conflicting_versions_are_named(ix):
    r = run(ix, "python", "1", "--dependency", "ccneeds", "--dependency", "ccdemo-pkg==2.0")
    assert r.rc == 2 and r.kind == "invalid_input", r
    msg = r.json["error"]["message"]
    assert "conflicting versions" in msg and "ccdemo-pkg" in msg, msg


def test_a_package_that_does_not_exist(ix):
    r = run(ix, "python", "1", "--dependency", "cc-no-such-package")
    assert r.kind == "invalid_input", r
    assert "'cc-no-such-package': no package of that name" in r.json["error"]["message"], r


def test_a_source_only_package_is_refused(ix):
    r = run(ix, "python", "1", "--dependency", "ccsrconly")
    msg = r.json["error"]["message"]
    assert r.kind == "invalid_input" and "only source distributions" in msg, r
    assert "--only-binary" in msg


def test_a_spec_that_is_a_url_or_an_option_is_refused(ix):
    for spec in ("ccdemo-pkg @ https://example.invalid/x.whl", "--index-url=http://x",
                 "ccdemo-pkg; python_version > '3'"):
        r = run(ix, "python", "1", "--dependency", spec)
        assert r.kind == "invalid_input" and "dependency" in r.json["error"]["message"], r


def test_pep723_block_with_allow_dependencies(ix):
    code = ("# /// script\n# requires-python = '>=3.11'\n# dependencies = ['ccdemo-pkg==2.0']\n"
            "# ///\nimport ccdemo_pkg\nccdemo_pkg.VERSION\n")
    r = run(ix, "python", code, "--allow-dependencies")
    assert r.kind == "ok" and r.value == "2.0", r
    # without the flag the block is not installed, and the eval says why
    r = run(ix, "python", code)
    assert r.kind == "invalid_input", r
    assert "needs 'ccdemo-pkg'" in r.json["error"]["message"], r
    bad = "# /// script\n# requires-python = '>=3.12'\n# ///\n1\n"
    r = run(ix, "python", bad, "--allow-dependencies")
    assert r.kind == "invalid_input" and "requires Python >=3.12" in r.json["error"]["message"]


def test_policy_allow_and_deny_lists(ix):
    r = run(ix, "python", "1", "--dependency", "ccdemo-pkg", "--deps-allow", "ccnative")
    assert r.kind == "invalid_input" and "allow-list" in r.json["error"]["message"], r
    ok = run(ix, "python", "import ccdemo_pkg", "--dependency", "ccdemo-pkg==1.0",
             "--deps-allow", "ccdemo_pkg")
    assert ok.kind == "ok", ok
    # a package needed by the one asked for is checked against the deny-list
    r = run(ix, "python", "1", "--dependency", "ccneeds", "--deps-deny", "ccdemo-pkg",
            "--deps-refresh", "0")
    msg = r.json["error"]["message"]
    assert r.kind == "invalid_input" and "deny-list" in msg and "ccdemo-pkg" in msg, r


def test_policy_size_cap_and_timeout(ix, tmp_path):
    r = run(ix, "python", "1", "--dependency", "ccbig-a", "--deps-max-install", "1",
            "--deps-max-cache", "10", cache=fresh(ix))
    assert r.kind == "invalid_input" and "over the cap" in r.json["error"]["message"], r
    assert "py-" not in r.stdout
    r = run(ix, "python", "1", "--dependency", "ccdemo-pkg", "--deps-timeout", "0")
    assert r.rc == 2 and "--deps-timeout" in r.stderr, r
    r = run(ix, "python", "1", "--dependency", "ccdemo-pkg", "--deps-cache", "relative")
    assert r.rc == 2 and "absolute" in r.stderr, r


def test_eviction_keeps_the_cache_under_its_cap(ix, tmp_path):
    cache = fresh(ix)
    cap = ["--deps-max-install", "4", "--deps-max-cache", "5"]
    a = run(ix, "python", "import ccbig_a", "--dependency", "ccbig-a", *cap, cache=cache)
    assert a.kind == "ok", a
    key_a = a.json["dependencies"]["key"]
    b = run(ix, "python", "import ccbig_b", "--dependency", "ccbig-b", *cap, cache=cache)
    assert b.kind == "ok", b
    assert "evicted " + key_a in b.json["dependencies"]["log"], b.json["dependencies"]
    assert not os.path.exists(os.path.join(cache, key_a))
    assert os.path.isdir(os.path.join(cache, b.json["dependencies"]["key"]))


def test_a_lock_file_is_installed_with_hashes(ix, tmp_path):
    whl = os.path.join(ix.pypi[len("file://"):], "ccdemo-pkg", "ccdemo_pkg-1.0-py3-none-any.whl")
    import hashlib
    good = hashlib.sha256(open(whl, "rb").read()).hexdigest()
    lock = tmp_path / "requirements.txt"
    lock.write_text(f"ccdemo-pkg==1.0 --hash=sha256:{good}\n")
    r = run(ix, "python", "import ccdemo_pkg; ccdemo_pkg.VERSION", "--deps-lock", str(lock))
    assert r.kind == "ok" and r.value == "1.0", r
    lock.write_text("ccdemo-pkg==1.0 --hash=sha256:" + "0" * 64 + "\n")
    r = run(ix, "python", "1", "--deps-lock", str(lock), "--deps-refresh", "0")
    assert r.kind == "invalid_input" and "hash" in r.json["error"]["message"].lower(), r
    r = run(ix, "python", "1", "--deps-lock", str(lock), "--dependency", "ccnative")
    assert r.kind == "invalid_input" and "not in the lock file" in r.json["error"]["message"]


def test_two_processes_install_one_lock_at_once(ix, tmp_path):
    cache = fresh(ix)
    out = [None, None]

    def one(i):
        out[i] = run(ix, "python", "import ccnative; ccnative.twice(1)", "--dependency",
                     "ccnative", cache=cache)

    ts = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert all(r.kind == "ok" and r.value == 2 for r in out), out
    keys = {r.json["dependencies"]["key"] for r in out}
    assert len(keys) == 1
    assert sorted(n for n in os.listdir(cache) if n.startswith(("py-", ".tmp"))) == list(keys)
    # exactly one of them installed; the other found it in place
    assert sorted(r.json["dependencies"]["cached"] for r in out) in ([False, True],
                                                                     [True, True]), out


def test_npm_package_loads_and_its_install_script_never_runs(ix):
    r = run(ix, "javascript", "typeof ccScripted + ' ' + ccLib.twice(4)", "--dependency",
            "cc-scripted", "--dependency", "cc-lib@1")
    assert r.kind == "ok" and r.value == "number 8", r
    assert not os.path.exists(ix.marker), "an install script ran"
    assert r.json["dependencies"]["key"].startswith("js-")


def test_npm_peer_dependency_loads_first(ix):
    r = run(ix, "javascript", "ccPeer.quadruple(3)", "--dependency", "cc-peer")
    assert r.kind == "ok" and r.value == 12, r


def test_npm_package_that_does_not_exist(ix):
    r = run(ix, "javascript", "1", "--dependency", "cc-no-such-package")
    assert r.kind == "invalid_input", r
    assert "no package of that name in the npm registry" in r.json["error"]["message"], r
    r = run(ix, "javascript", "1", "--dependency", "cc-lib@git+https://example.invalid/x")
    assert r.kind == "invalid_input" and "no URL, git" in r.json["error"]["message"], r


def test_text_mode_says_what_it_installed(ix, tmp_path):
    p = subprocess.run([CLI, "eval", "--lang", "py", *ix.flags(fresh(ix)),
                        "--dependency", "ccdemo-pkg==1.0", "--", "1"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stdout == "1\n", p
    assert "codecage: installed the dependencies (py-" in p.stderr, p
