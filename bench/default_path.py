#!/usr/bin/python3
"""The default path (issue 19, item 3): `IsolatedRuntime()` + a first
`1+1`, from Python, as a program that asks for nothing would do.

usage: /usr/bin/python3 bench/default_path.py [--runs N]

For each language, in 3 passes, one fresh interpreter (the package built
into a temporary directory as bench/net.py does) makes N + 1 runtimes in
a row with the default (`fork_server=True`: the first starts the
process-wide fork server, the later ones are forked from it), then another
makes N + 1 with `fork_server=False` (each spawns its worker); the first
of each process is dropped (it pays the server's start, or the first
spawn's page faults). The two ways run in processes of their own, so a
spawned runtime's teardown (its monitor and worker exiting on the other
core) does not land inside the default path's figures, and each process
starts a second after the last (the kernel tears network namespaces down
in a workqueue after their processes are gone); a number is the median of
the passes' medians. Each time is `IsolatedRuntime(language=...)` and
`eval("1+1")`, by time.perf_counter around them (as cc-bench's start-up
figures: the close, after, is not counted). Prints one JSON object:
{"javascript": {"default": MS, "spawned": MS}, "python": {...}}, medians
in milliseconds.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import net  # noqa: E402  (build_package)

CHILD = """
import json, sys, time
import codecage
lang, runs, fork_server = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
t = []
for i in range(runs + 1):
    s = time.perf_counter()
    rt = codecage.IsolatedRuntime(language=lang, fork_server=fork_server)
    assert rt.eval("1+1") == 2
    t.append((time.perf_counter() - s) * 1e3)
    rt.close()
if fork_server:  # it measured the path it says
    with codecage.IsolatedRuntime(language=lang) as rt:
        note = rt.sandbox.get("fork_server")
    if note != "shared":
        sys.exit("the default path did not fork: %s" % note)
print(json.dumps(t[1:]))
"""

PASSES = 3


def measure(runs):
    """{language: {"default": ms, "spawned": ms}}: the median of PASSES
    passes' medians, each pass one process of each way in turn."""
    d = net.build_package()
    out = {}
    n = runs
    for lang in ("javascript", "python"):
        meds = {"default": [], "spawned": []}
        for _ in range(PASSES):
            for way, flag in (("default", "1"), ("spawned", "0")):
                time.sleep(1)  # the kernel's teardown of the last one's namespaces
                p = subprocess.run([sys.executable, "-c", CHILD, lang, str(n), flag],
                                   check=True, capture_output=True, text=True,
                                   env=dict(os.environ, PYTHONPATH=d))
                meds[way].append(statistics.median(json.loads(p.stdout)))
        out[lang] = {k: statistics.median(v) for k, v in meds.items()}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    print(json.dumps(measure(ap.parse_args().runs)))


if __name__ == "__main__":
    main()
