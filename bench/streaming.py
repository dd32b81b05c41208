#!/usr/bin/python3
"""Streamed guest output measured (issue 16): how soon a printed line
reaches the host, and what streaming costs a flood.

usage: /usr/bin/python3 bench/streaming.py [--runs N] [--lines N]
                                           [--base BUILD] [--markdown FILE]

Latency ("first line", goal at most 50 ms): the guest prints its clock
(Python time.monotonic_ns(), CLOCK_MONOTONIC, which the sandbox shares:
no time namespace; JavaScript Date.now(), wall clock in ms) and the host
subtracts it from its own clock when the line arrives, through:
  - the CLI in text mode (`codecage eval`, which passes output through
    with cc_runtime_set_output_text_handler), read from its stdout pipe;
  - the MCP server over stdio, from the notifications/message it sends.
Each run prints 5 lines 50 ms apart (Python sleeps, JavaScript spins), so
"first" is the first line and "later" the other four; "held" is a second
line printed right after the first (Python), which the worker holds for
its 20 ms gap (coalescing) before sending. --runs runs per row; medians
and the worst.

Flood: `for i in range(LINES): print(i)` (100,000 lines, 589 KB, under the
CLI's 1 MiB cap) in `codecage eval --json` (the worker streams, no output
handler) and in text mode (streamed through to a pipe this script drains),
against the same with BUILD's codecage (--base: a build of the commit
before streaming, where output left the worker in 64 KiB chunks and at the
end). "guest" is the loop's own time.perf_counter() inside the worker (the
worker-side cost of the flush points), "wall" the process's. Medians of
--runs runs, the builds taking turns.
"""
import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CODECAGE = os.path.join(ROOT, "build", "codecage")

PY_LINES = ("import time\nfor i in range(5):\n    print(time.monotonic_ns(), flush=True)\n"
            "    time.sleep(0.05)\n")
PY_HELD = "import time\nprint(time.monotonic_ns())\nprint(time.monotonic_ns())\ntime.sleep(0.2)\n"
JS_LINES = ("for (let i = 0; i < 5; i++) { console.log(Date.now()); "
            "const t = Date.now(); while (Date.now() - t < 50) {} }")


def now_for(lang):
    return time.monotonic_ns() if lang == "python" else time.time_ns()


def to_ms(lang, stamp, arrived):
    return (arrived - stamp) / 1e6 if lang == "python" else (arrived - stamp * 1000000) / 1e6


def cli_latencies(lang, code, codecage=CODECAGE):
    """ms from print to arrival for each line of one `codecage eval` run."""
    p = subprocess.Popen([codecage, "eval", "--lang", lang, "--", code],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out, buf = [], b""
    fd = p.stdout.fileno()
    while True:
        select.select([fd], [], [], 30)
        chunk = os.read(fd, 65536)
        arrived = now_for(lang)
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if line.strip().isdigit():
                out.append(to_ms(lang, int(line), arrived))
    p.wait()
    return out


class Mcp:
    def __init__(self):
        self.p = subprocess.Popen([CODECAGE, "mcp"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.request({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "bench", "version": "1"}}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.id = 1

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg).encode() + b"\n")
        self.p.stdin.flush()

    def request(self, msg, on_note=None):
        self.send(msg)
        while True:
            line = self.p.stdout.readline()
            arrived = time.monotonic_ns(), time.time_ns()
            m = json.loads(line)
            if "method" not in m:
                return m
            if on_note:
                on_note(m, arrived)

    def latencies(self, lang, code):
        out = []

        def note(m, arrived):
            if m["method"] == "notifications/message" and m["params"]["logger"] == "stdout":
                for line in m["params"]["data"].split("\n"):
                    if line.isdigit():
                        out.append(to_ms(lang, int(line), arrived[lang != "python"]))

        self.id += 1
        tool = "run_python" if lang == "python" else "run_javascript"
        self.request({"jsonrpc": "2.0", "id": self.id, "method": "tools/call",
                      "params": {"name": tool, "arguments": {"code": code}}}, note)
        return out

    def close(self):
        self.p.stdin.close()
        self.p.wait(30)


def summary(first, later):
    return (f"{statistics.median(first):.2f} ms", f"{max(first):.2f} ms",
            f"{statistics.median(later):.2f} ms" if later else "n/a",
            f"{max(later):.2f} ms" if later else "n/a")


def latency_rows(runs):
    rows = []
    for lang, code in (("python", PY_LINES), ("javascript", JS_LINES)):
        first, later = [], []
        for _ in range(runs):
            ls = cli_latencies(lang, code)
            first.append(ls[0])
            later += ls[1:]
        rows.append((f"CLI text mode, {lang}",) + summary(first, later))
    first, later = [], []
    for _ in range(runs):
        ls = cli_latencies("python", PY_HELD)
        first.append(ls[0])
        later += ls[1:]
    rows.append(("CLI text mode, python, line printed right after another (held)",)
                + summary(later, []) [:2] + ("", ""))
    m = Mcp()
    try:
        m.latencies("python", "1")  # start the runtimes first
        m.latencies("javascript", "1")
        for lang, code in (("python", PY_LINES), ("javascript", JS_LINES)):
            first, later = [], []
            for _ in range(runs):
                ls = m.latencies(lang, code)
                first.append(ls[0])
                later += ls[1:]
            rows.append((f"MCP stdio notifications/message, {lang}",) + summary(first, later))
    finally:
        m.close()
    return rows


def flood_once(codecage, lines, json_mode):
    code = (f"import time\nt0 = time.perf_counter()\nfor i in range({lines}): print(i)\n"
            "time.perf_counter() - t0")
    args = [codecage, "eval", "--lang", "python"] + (["--json"] if json_mode else []) + ["--", code]
    t = time.perf_counter()
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - t
    if json_mode:
        guest = json.loads(p.stdout)["value"]
    else:
        guest = float(p.stdout.rstrip("\n").rsplit("\n", 1)[-1])
    return guest * 1000, wall * 1000


def flood_rows(runs, lines, base):
    builds = [("streaming (this build)", CODECAGE)]
    if base:
        builds.append(("buffered (--base build)", os.path.join(base, "codecage")))
    got = {(b, j): ([], []) for b, _ in builds for j in (True, False)}
    for _ in range(runs):
        for name, exe in builds:
            for j in (True, False):
                g, w = flood_once(exe, lines, j)
                got[name, j][0].append(g)
                got[name, j][1].append(w)
    rows = []
    for name, _ in builds:
        for j in (True, False):
            g, w = got[name, j]
            rows.append((name, "--json" if j else "text mode",
                         f"{statistics.median(g):.1f} ms", f"{statistics.median(w):.1f} ms"))
    return rows


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--lines", type=int, default=100000)
    ap.add_argument("--base", help="a build directory of the commit before streaming")
    ap.add_argument("--markdown")
    a = ap.parse_args()
    subprocess.run(["ninja", "-C", os.path.join(ROOT, "build")], check=True,
                   stdout=subprocess.DEVNULL)
    text = ("First streamed line, ms from the guest's print to the host\n\n"
            + table(("path", "first: median", "first: worst", "later lines: median",
                     "later lines: worst"), latency_rows(a.runs))
            + f"\n\nFlood of {a.lines:,} lines (Python)\n\n"
            + table(("build", "CLI mode", "guest loop", "wall"),
                    flood_rows(a.runs, a.lines, a.base)))
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
