#!/usr/bin/python3
"""Code mode (`codecage mcp --upstream`) against one tool call per turn.

  /usr/bin/python3 bench/codemode.py [--calls 20] [--rounds 5] [--ms 0]

The upstream is tests/mcp/upstream_server.mjs (the official TypeScript SDK;
`npm ci --prefix tests/mcp`), its `slow` tool waiting --ms milliseconds
(0: answers at once). Four ways to make --calls calls, each timed from the
client's request written to the last response read, median of --rounds:

  - code mode, sequential: ONE tools/call of run_javascript whose program
    awaits the calls one after another;
  - code mode, fan-out: the same with Promise.all (concurrent upstream);
  - one call per turn: --calls tools/calls of run_javascript, each making
    one upstream call (how a model without code mode calls a tool through
    codecage: one round trip per call);
  - direct: the client calling the upstream's tool itself --calls times
    (no codecage, no sandbox: the floor).

Model round trips: code mode needs 1 (one tools/call) where one call per
turn needs --calls; each saved round trip is a model turn (seconds of
inference and the context it re-reads) that no wall-clock figure here
includes.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from mcp import StdioClient  # noqa: E402

CLI = os.path.join(ROOT, "build", "codecage")
SERVER = os.path.join(ROOT, "tests", "mcp", "upstream_server.mjs")


def timed(fn, rounds):
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


class Direct(StdioClient):
    """The upstream itself, driven like codecage (same framing)."""

    def __init__(self):
        self.proc = subprocess.Popen(["node", SERVER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)
        self.next_id = 1
        self.request({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "bench", "version": "1"}}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ms", type=int, default=0)
    a = ap.parse_args()
    n, ms = a.calls, a.ms
    cc = StdioClient(CLI, "--scratch", "0", "--upstream", "up=node " + SERVER,
                     "--max-tool-calls", str(max(50, n)))

    def ok(r):
        assert not r.get("isError"), r
        return r

    seq = "for (let i = 0; i < %d; i++) await tools.up.slow({ms: %d}); %d" % (n, ms, n)
    fan = "(await Promise.all(Array.from({length: %d}, () => tools.up.slow({ms: %d})))).length" \
        % (n, ms)
    one = "await tools.up.slow({ms: %d})" % ms
    ok(cc.call("run_javascript", {"code": one}))  # warm: the runtime starts
    rows = [
        ("code mode, sequential (1 tools/call)", 1,
         timed(lambda: ok(cc.call("run_javascript", {"code": seq})), a.rounds)),
        ("code mode, Promise.all (1 tools/call)", 1,
         timed(lambda: ok(cc.call("run_javascript", {"code": fan})), a.rounds)),
        ("one call per turn (%d tools/calls)" % n, n,
         timed(lambda: [ok(cc.call("run_javascript", {"code": one})) for _ in range(n)],
               a.rounds)),
    ]
    cc.close()
    d = Direct()
    rows.append(("direct to the upstream, no codecage (%d calls)" % n, n,
                 timed(lambda: [d.call("slow", {"ms": ms}) for _ in range(n)], a.rounds)))
    d.close()
    print("%d upstream calls of `slow` (%d ms each), median of %d rounds\n" % (n, ms, a.rounds))
    print("| way | model round trips | wall time |")
    print("|---|---|---|")
    for name, trips, t in rows:
        print("| %s | %d | %.1f ms |" % (name, trips, t * 1000))
    print("\nround trips saved by code mode: %d of %d" % (n - 1, n))


if __name__ == "__main__":
    main()
