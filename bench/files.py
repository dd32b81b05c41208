#!/usr/bin/python3
"""Reading a big file from a read-only grant (issue 14), guest against native.

usage: /usr/bin/python3 bench/files.py [--mib N] [--runs N]

Writes an N MiB file (100) of random bytes in a temporary folder, grants
that folder read-only at /data (Mount, sandbox require) and reads the whole
file in --runs rounds (5), the runners taking turns, each round one warm-up
read (so every runner reads from the page cache) and one timed read, by
the runner's own clock:
  - codecage Python: `open('/data/big.bin', 'rb').read()` in a guest,
    time.perf_counter();
  - python3: the same code in /usr/bin/python3 reading the host path;
  - codecage JavaScript: `fs.readFileSync('/data/big.bin')` (a Buffer) in a
    guest, Date.now() (whole ms: a read of 100 MiB takes tens of ms);
  - node: `require('fs').readFileSync(path)`, Date.now().
Medians over the rounds. Needs the Python package: built into a temporary
directory as bench/net.py does (setup.py, CODECAGE_MESON_BUILD=build).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import net  # noqa: E402  (build_package)

PY_READ = """
import json, time
times = []
for i in range({runs} + 1):
    t = time.perf_counter()
    with open({path!r}, 'rb') as f:
        n = len(f.read())
    assert n == {size}, n
    times.append((time.perf_counter() - t) * 1e3)
json.dumps(times[1:])
"""
JS_READ = """(() => {{
const times = [];
for (let i = 0; i < {runs} + 1; i++) {{
    const t = Date.now();
    const n = fs.readFileSync({path}).length;
    if (n !== {size}) throw new Error('read ' + n);
    times.push(Date.now() - t);
}}
return JSON.stringify(times.slice(1));
}})()"""


def make_file(mib):
    """A folder (world-readable: the guest is nobody on a root host) with
    big.bin of mib MiB; returns (folder, size in bytes)."""
    d = tempfile.mkdtemp(prefix="codecage-bench-files-")
    os.chmod(d, 0o755)
    size = mib << 20
    with open(os.path.join(d, "big.bin"), "wb") as f:
        for _ in range(mib):
            f.write(os.urandom(1 << 20))
    os.chmod(os.path.join(d, "big.bin"), 0o644)
    return d, size


def read_times(mib=100, runs=5):
    """{runner: median ms, or None when it failed} of one whole-file read.
    The runners take turns, runs rounds of one warm-up read and one timed
    read each, so a change in the machine's load hits them alike."""
    pkg = net.build_package()
    from codecage import IsolatedRuntime, Mount, RuntimeConfig
    d, size = make_file(mib)
    host = os.path.join(d, "big.bin")
    py = PY_READ.format(runs=1, path="/data/big.bin", size=size)
    # the same code; its last line printed instead of being the eval's value
    py_native = PY_READ.format(runs=1, path=host, size=size).replace(
        "\njson.dumps(", "\nprint(json.dumps(") + ")"
    js = JS_READ.format(runs=1, path=json.dumps("/data/big.bin"), size=size)
    js_native = "const fs = require('fs'); console.log(%s)" % JS_READ.format(
        runs=1, path=json.dumps(host), size=size)
    out = {"codecage Python": [], "python3": [], "codecage JavaScript": [], "node": []}
    try:
        # JavaScript's readFileSync of 100 MiB needs a heap cap above 200 MiB (the
        # default is 128): fs_slurp (src/engine/quickjs/js_fs.c) doubles its buffer when
        # the read reaches the file's size, before the read that sees its end
        cfg = RuntimeConfig(mounts=[Mount(d, "/data")], timeout=300, max_memory=1 << 30)
        with IsolatedRuntime(cfg, language="python") as p, \
                IsolatedRuntime(cfg, language="javascript") as j:
            for _ in range(runs):
                out["codecage Python"] += json.loads(p.eval(py))
                out["python3"] += native([sys.executable, "-c", py_native]) or [None]
                out["codecage JavaScript"] += json.loads(j.eval(js))
                out["node"] += native(["node", "-e", js_native]) or [None]
    finally:
        shutil.rmtree(d, True)
        shutil.rmtree(pkg, True)
    print("  reads (ms): %s" % json.dumps(out), file=sys.stderr)
    return {k: None if None in v else statistics.median(v) for k, v in out.items()}


def native(cmd):
    """The list of ms a reference process printed last, or None."""
    if shutil.which(cmd[0]) is None:
        return None
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print("  %s: exit status %d: %s" % (cmd[0], p.returncode, p.stderr.strip()[-300:]),
              file=sys.stderr)
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    r = read_times(a.mib, a.runs)
    for k, v in r.items():
        print("%-22s %s" % (k, "n/a" if v is None else "%.1f ms" % v))


if __name__ == "__main__":
    main()
