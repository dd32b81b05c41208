"""`codecage eval/run --library` and `--node-modules`: the CLI's face of
cc_options.libraries (src/lib/libraries.c)."""
import json
import time

from conftest import cli


def test_libraries_load_in_order(tmp_path):
    (tmp_path / "a.js").write_text("var base = 20; (function () {})\n")
    (tmp_path / "b.js").write_text("var sum = base + 22;\n")
    r = cli("eval", "--lang", "js", "--library", str(tmp_path / "a.js"), "--library",
            str(tmp_path / "b.js"), "sum")
    assert (r.rc, r.stdout.strip()) == (0, "42")


def test_package_name_needs_node_modules(tmp_path):
    pkg = tmp_path / "nm" / "tiny"
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text(json.dumps({"name": "tiny", "unpkg": "t.js"}))
    (pkg / "t.js").write_text("(function (g) { g.tiny = 'yes'; })(this);\n")
    r = cli("eval", "--lang", "js", "--library", "tiny", "tiny")
    assert r.rc == 2 and "--node-modules" in r.stderr
    r = cli("eval", "--lang", "js", "--library", "tiny", "--node-modules",
            str(tmp_path / "nm"), "tiny")
    assert (r.rc, r.stdout.strip()) == (0, "yes"), r.stderr


def test_load_error_exit_1_names_the_library(tmp_path):
    bad = tmp_path / "bad.js"
    bad.write_text("undefinedThing();\n")
    r = cli("eval", "--lang", "js", "--library", str(bad), "1")
    assert r.rc == 1
    assert f"loading library '{bad}' ({bad}): ReferenceError" in r.stderr


def test_polyfills_run_before_the_libraries(tmp_path):
    lib = tmp_path / "url.js"
    lib.write_text("var host = new URL('https://example.com:8080/a?b=1').host;\n")
    r = cli("eval", "--lang", "js", "--library", str(lib), "host")
    assert r.rc == 1 and "ReferenceError" in r.stderr  # no URL without the polyfills
    r = cli("eval", "--lang", "js", "--web-polyfills", "--library", str(lib), "host")
    assert (r.rc, r.stdout.strip()) == (0, "example.com:8080"), r.stderr


def test_missing_browser_api_names_web_polyfills(tmp_path):
    """Regression: vega-lite without --web-polyfills failed with a bare
    "'structuredClone' is not defined" that did not say what adds it."""
    lib = tmp_path / "clone.js"
    lib.write_text("var copy = structuredClone({a: 1});\n")
    r = cli("eval", "--lang", "js", "--library", str(lib), "copy.a")
    assert r.rc == 1 and "'structuredClone' is not defined" in r.stderr, r.stderr
    assert "--web-polyfills" in r.stderr, r.stderr
    r = cli("eval", "--lang", "js", "--web-polyfills", "--library", str(lib), "copy.a")
    assert (r.rc, r.stdout.strip()) == (0, "1"), r.stderr
    # a library's own undefined name with the polyfills on gets no such hint
    bad = tmp_path / "bad.js"
    bad.write_text("undefinedThing();\n")
    r = cli("eval", "--lang", "js", "--web-polyfills", "--library", str(bad), "1")
    assert r.rc == 1 and "ReferenceError" in r.stderr and "--web-polyfills" not in r.stderr


def test_endless_library_times_out_with_its_name(tmp_path):
    loop = tmp_path / "loop.js"
    loop.write_text("for (;;) {}\n")
    start = time.monotonic()
    r = cli("eval", "--lang", "js", "--timeout", "1", "--library", str(loop), "1")
    # --timeout bounds the loading, not the 30 s start-up allowance
    # (a deadline bound, generous)
    assert time.monotonic() - start < 15
    assert r.rc == 3 and f"timeout: loading library '{loop}'" in r.stderr
