"""Dependencies on demand (issue 33): first install and cached start, for
polars (Python, pip) and vega-lite (JavaScript, npm), against the
configured package indexes (this machine reaches them).

    /usr/bin/python3 bench/deps.py [--runs N]

For each package, in a fresh cache folder (so the first install downloads;
pip's and npm's own caches may still hold the files):
- first install: `codecage eval --dependency SPEC` in a new process, the
  wall clock of the whole command (resolve, download, install, start, eval);
- cached start, new process: the same command again (the lock is in the
  cache: the helper finds the resolved request, no index is asked);
- cached start, same process: a second `IsolatedRuntime` with the same
  dependencies in one Python process (the library's table of recent
  requests; the session is forked from the template the lock's folder
  keys), the time to construct it and run the first eval.
Prints a Markdown table (BENCHMARKS.md's "Dependencies")."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.path.join(os.environ.get("CODECAGE_BUILD", os.path.join(ROOT, "build")), "codecage")

CASES = [
    ("polars", "python", "polars",
     "import polars as pl\npl.DataFrame({'a': [1, 2, 3]}).select(pl.col('a').sum()).item()",
     []),
    ("vega-lite", "javascript", "vega-lite@5", "typeof vegaLite.compile", ["--web-polyfills"]),
]


def cli(cache, lang, spec, code, extra):
    t0 = time.perf_counter()
    p = subprocess.run([CLI, "eval", "--lang", lang, "--deps-cache", cache, *extra,
                        "--dependency", spec, "--", code], capture_output=True, text=True,
                       timeout=900)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit("%s failed: %s%s" % (spec, p.stdout, p.stderr))
    return dt


def same_process(cache, lang, spec, code, extra):
    """Seconds for the second runtime of one process (first eval included)."""
    prog = (
        "import sys, time; sys.path.insert(0, %r); import ccpkg, codecage\n"
        "o = codecage.DependencyOptions(cache_dir=%r)\n"
        "cfg = codecage.RuntimeConfig(dependencies=[%r], deps=o, web_polyfills=%r)\n"
        "with codecage.IsolatedRuntime(cfg, language=%r) as rt: rt.eval(%r)\n"
        "t0 = time.perf_counter()\n"
        "with codecage.IsolatedRuntime(cfg, language=%r) as rt: rt.eval(%r)\n"
        "print(time.perf_counter() - t0)\n"
        % (os.path.join(ROOT, "tests", "python"), cache, spec, bool(extra), lang, code, lang,
           code))
    p = subprocess.run(["/usr/bin/python3", "-c", prog], capture_output=True, text=True,
                       timeout=900, cwd=os.path.join(ROOT, "tests"))
    if p.returncode != 0:
        raise SystemExit("%s (same process) failed: %s" % (spec, p.stderr[-2000:]))
    return float(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3, help="cached starts measured (median)")
    a = ap.parse_args()
    rows = []
    for name, lang, spec, code, extra in CASES:
        base = tempfile.mkdtemp(prefix="cc-bench-deps-", dir="/var/tmp")
        os.chmod(base, 0o755)
        cache = os.path.join(base, "cache")
        try:
            first = cli(cache, lang, spec, code, extra)
            again = sorted(cli(cache, lang, spec, code, extra) for _ in range(a.runs))
            inproc = sorted(same_process(cache, lang, spec, code, extra)
                            for _ in range(a.runs))
            size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(cache)
                       for f in fs)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        rows.append((name, spec, first, again[len(again) // 2], inproc[len(inproc) // 2],
                     size / 1048576))
    print("| package | spec | first install (s) | cached start, new process (s) | "
          "cached start, same process (ms) | installed (MiB) |")
    print("|---|---|---:|---:|---:|---:|")
    for name, spec, first, again, inproc, mib in rows:
        print("| %s | `%s` | %.1f | %.2f | %.1f | %.0f |" % (name, spec, first, again,
                                                             inproc * 1000, mib))


if __name__ == "__main__":
    main()
