#!/usr/bin/python3
"""How late an eval that runs past its deadline ends (issue 27, D5).

usage: /usr/bin/python3 bench/stop_overshoot.py [--runs N] [--timeout S]
                                                [--root TREE] [--markdown FILE]

The overshoot is how long after its deadline the host has the eval's
outcome: the supervisor's own duration of the eval (`duration_ms` of
`codecage eval --json`) minus the timeout, for a spawned worker (the CLI);
and, through the Python package's default path (a session forked from
the shared fork server), the time `rt.eval` took minus the timeout. Cases:
  - c-call: `sum(range(10**13))`, a C builtin that never checks for
    signals: the soft stop cannot land, the worker ends itself (the
    runtime is dead afterwards);
  - c-call-format: `('{{' * 5_000_000).format()`, about 100 ms of C on
    this machine, the deadline landing inside it (an eval of 30 ms);
  - python-loop: `while True: pass`, where the soft stop lands (a
    catchable timeout, the runtime usable);
  - javascript-loop: `while (true) {}`, QuickJS's interrupt handler, for
    comparison.
Each row: median and worst of --runs runs, with the outcome seen (kind,
and whether the runtime stayed usable). The floor: how late a plain
threading.Event().wait(timeout) in this process wakes up (the kernel's
timer and scheduler, which no deadline can beat), and cc-floor's wake_us.

--root TREE measures another source tree (its build/ and setup.py), for a
before/after pair: e.g. a checkout of the commit before the change, built
with `meson setup build && ninja -C build`.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))

CASES = [
    # name, language, code, timeout (None: --timeout)
    ("c-call", "python", "sum(range(10**13))", None),
    ("c-call-format", "python", "('{{' * 5_000_000).format()", 0.03),
    ("python-loop", "python", "while True: pass", None),
    ("javascript-loop", "javascript", "while (true) {}", None),
]


def cli_run(root, lang, code, timeout):
    """(overshoot ms, kind, usable) of one `codecage eval --json`."""
    cli = os.path.join(root, "build", "codecage")
    p = subprocess.run([cli, "eval", "--json", "--lang", lang, "--timeout", str(timeout),
                        "--", code], capture_output=True, text=True, timeout=120)
    j = json.loads(p.stdout)
    err = j["error"] or {}
    usable = "still usable" in err.get("message", "")
    return j["duration_ms"] - timeout * 1000, err.get("kind", "ok"), usable


def build_package(root):
    d = tempfile.mkdtemp(prefix="codecage-bench-stop-")
    env = dict(os.environ, CODECAGE_MESON_BUILD=os.path.join(root, "build"))
    subprocess.run([sys.executable, "setup.py", "-q", "build", "--build-lib", d], cwd=root,
                   env=env, check=True, capture_output=True)
    sys.path.insert(0, d)
    import codecage
    return codecage


def package_run(codecage, lang, code, timeout):
    """(overshoot ms, kind, usable) of one rt.eval on the default path."""
    with codecage.IsolatedRuntime(codecage.RuntimeConfig(timeout=timeout), language=lang) as rt:
        rt.eval("1")  # started and warm
        t = time.perf_counter()
        kind = "ok"
        try:
            rt.eval(code)
        except codecage.TimeoutError:
            kind = "timeout"
        except codecage.CodecageError as e:
            kind = type(e).__name__
        d = (time.perf_counter() - t) * 1000 - timeout * 1000
        return d, kind, rt.alive


def floor_wait(timeout, runs):
    late = []
    for _ in range(runs):
        e = threading.Event()
        t = time.perf_counter()
        e.wait(timeout)
        late.append((time.perf_counter() - t - timeout) * 1000)
    return late


def cc_floor(root):
    try:
        out = subprocess.run([os.path.join(root, "build", "cc-floor")], capture_output=True,
                             text=True, timeout=120).stdout
    except OSError:
        return None
    for line in out.splitlines():
        if line.startswith("wake_us "):
            return float(line.split()[1])
    return None


def row(name, via, results):
    ms = [r[0] for r in results]
    kinds = sorted({r[1] for r in results})
    usable = sum(1 for r in results if r[2])
    return (f"| {name} | {via} | {statistics.median(ms):.1f} | {max(ms):.1f} | "
            f"{', '.join(kinds)} | {usable}/{len(results)} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--timeout", type=float, default=0.2)
    ap.add_argument("--root", default=os.path.dirname(HERE))
    ap.add_argument("--markdown")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    codecage = build_package(root)
    lines = [f"tree: {root}, {a.runs} runs each, deadline {a.timeout} s unless the case says",
             "", "| case | via | median overshoot ms | worst ms | outcome | runtime usable |",
             "|---|---|---|---|---|---|"]
    for name, lang, code, t in CASES:
        t = t or a.timeout
        lines.append(row(name, "CLI (spawned)",
                         [cli_run(root, lang, code, t) for _ in range(a.runs)]))
        print(lines[-1], flush=True)
        lines.append(row(name, "Python (forked)",
                         [package_run(codecage, lang, code, t) for _ in range(a.runs)]))
        print(lines[-1], flush=True)
    late = floor_wait(a.timeout, a.runs)
    lines.append(f"| floor: Event().wait({a.timeout}) wakes late | host | "
                 f"{statistics.median(late):.2f} | {max(late):.2f} | | |")
    wake = cc_floor(root)
    if wake is not None:
        lines.append(f"| floor: cc-floor wake_us (a sleeping peer's wake-up) | host | "
                     f"{wake / 1000:.3f} | | | |")
    text = "\n".join(lines)
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
