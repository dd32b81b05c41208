#!/usr/bin/python3
"""Load on `codecage mcp`: N concurrent sessions of M calls each, mixed
languages (run_python and run_javascript in turn), over streamable HTTP
(one server, one keep-alive connection per session) and over stdio (one
server process per session, as stdio has one session each).

Prints calls/s and latency percentiles per transport, failed calls, and
for HTTP the server's resident memory and open descriptors after a warm-up
round and after the measured round (all sessions deleted, pools full
again). tests/mcp/test_load.py runs the same rounds and asserts no failed
call and no growth.

usage: bench/mcp_load.py [--sessions 50] [--calls 100] [--transport http|stdio]...
"""
import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.path.join(ROOT, "build", "codecage")
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "mcp-load", "version": "1"}}}
CODE = {"run_python": "sum(range(100))", "run_javascript": "[...Array(100).keys()].reduce((a, b) => a + b, 0)"}
WANT = 4950


def call_msg(i, tool):
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": tool, "arguments": {"code": CODE[tool]}}}


def tool_for(s, i):
    return ("run_python", "run_javascript")[(s + i) % 2]


def ok(resp):
    r = resp.get("result")
    return bool(r) and not r.get("isError") and r["structuredContent"]["value"] == WANT


class HttpSession:
    def __init__(self, host, port, token=None):
        self.c = http.client.HTTPConnection(host, port, timeout=120)
        self.h = {"Content-Type": "application/json", "Accept": "application/json"}
        if token:
            self.h["Authorization"] = "Bearer " + token
        status, headers, _ = self.post(INIT)
        assert status == 200, status
        self.h["Mcp-Session-Id"] = headers["mcp-session-id"]
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, msg):
        self.c.request("POST", "/mcp", json.dumps(msg), self.h)
        r = self.c.getresponse()
        data = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data

    def request(self, msg):
        status, _, data = self.post(msg)
        return json.loads(data) if status == 200 else {"error": status}

    def close(self):
        self.c.request("DELETE", "/mcp", headers=self.h)
        self.c.getresponse().read()
        self.c.close()


class StdioSession:
    def __init__(self, flags):
        self.p = subprocess.Popen([CLI, "mcp", *flags], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.request(INIT)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg).encode() + b"\n")
        self.p.stdin.flush()

    def request(self, msg):
        self.send(msg)
        while True:
            r = json.loads(self.p.stdout.readline())
            if "method" not in r:
                return r

    def close(self):
        self.p.stdin.close()
        self.p.wait(60)


def run_round(open_session, sessions, calls):
    """sessions threads, each opens a session, warms both languages, then
    (after all are ready) makes calls calls. Returns (latencies s, failures,
    wall s)."""
    lat, failures, lock = [], [], threading.Lock()
    ready = threading.Barrier(sessions + 1)
    go = threading.Event()

    def worker(s):
        mine, bad = [], []
        sess = None
        try:
            sess = open_session()
            for tool in ("run_python", "run_javascript"):
                sess.request(call_msg(1, tool))
        except Exception as e:  # counted as a failure below
            bad.append("open: %r" % e)
        ready.wait()
        go.wait()
        for i in range(calls if sess else 0):
            t = time.perf_counter()
            try:
                r = sess.request(call_msg(i + 2, tool_for(s, i)))
            except Exception as e:
                r = {"error": repr(e)}
            mine.append(time.perf_counter() - t)
            if not ok(r):
                bad.append(json.dumps(r)[:300])
        if sess:
            sess.close()
        with lock:
            lat.extend(mine)
            failures.extend(bad)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(sessions)]
    for t in threads:
        t.start()
    ready.wait()
    t0 = time.perf_counter()
    go.set()
    for t in threads:
        t.join()
    return lat, failures, time.perf_counter() - t0


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] if xs else float("nan")


def summary(name, lat, failures, wall):
    return ("%-6s %6d calls, %d failed, %7.0f calls/s, p50 %6.2f ms, p90 %6.2f ms, "
            "p99 %6.2f ms, max %7.2f ms" % (name, len(lat), len(failures), len(lat) / wall,
                                           pct(lat, 50) * 1e3, pct(lat, 90) * 1e3,
                                           pct(lat, 99) * 1e3, max(lat) * 1e3))


class HttpServer:
    """`codecage mcp --http 127.0.0.1:0 FLAGS`, started and stopped by pid."""

    def __init__(self, *flags):
        self.p = subprocess.Popen([CLI, "mcp", "--http", "127.0.0.1:0", *flags],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        line = self.p.stderr.readline()
        self.port = int(re.search(r":(\d+)/mcp", line).group(1))
        threading.Thread(target=self.p.stderr.read, daemon=True).start()

    def metrics(self):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request("GET", "/metrics")
        text = c.getresponse().read().decode()
        c.close()
        return {m.group(1): float(m.group(2))
                for m in re.finditer(r"^(\S+) (\S+)$", text, re.M)}

    def settle(self, pool):
        """Wait (up to 60 s) until no session is open and the pools are full."""
        for _ in range(600):
            m = self.metrics()
            if m["codecage_mcp_sessions"] == 0 and all(
                    m['codecage_mcp_pool_ready{language="%s"}' % lang] >= pool
                    for lang in ("python", "javascript")):
                return
            time.sleep(0.1)
        raise AssertionError("the server did not settle: %r" % m)

    def usage(self):
        """(resident KiB, open descriptors) of the server process."""
        with open("/proc/%d/status" % self.p.pid) as f:
            rss = int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))
        return rss, len(os.listdir("/proc/%d/fd" % self.p.pid))

    def stop(self):
        self.p.terminate()
        return self.p.wait(60)


def load_http(sessions, calls, pool=2):
    """Warm-up round, then the measured round; returns (lat, failures,
    wall, usage after warm-up, usage after the measured round)."""
    srv = HttpServer("--pool", str(pool), "--max-sessions", str(sessions + 8))
    try:
        opener = lambda: HttpSession("127.0.0.1", srv.port)  # noqa: E731
        run_round(opener, sessions, calls)
        srv.settle(pool)
        before = srv.usage()
        lat, failures, wall = run_round(opener, sessions, calls)
        srv.settle(pool)
        after = srv.usage()
    finally:
        rc = srv.stop()
    assert rc == 0, rc
    return lat, failures, wall, before, after


def load_stdio(sessions, calls):
    return run_round(lambda: StdioSession(["--pool", "0"]), sessions, calls)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--transport", choices=["http", "stdio"], action="append")
    args = ap.parse_args()
    bad = 0
    for t in args.transport or ["http", "stdio"]:
        if t == "http":
            lat, failures, wall, before, after = load_http(args.sessions, args.calls)
            print(summary("http", lat, failures, wall))
            print("http   server after warm-up: %d KiB resident, %d fds; after the round: "
                  "%d KiB, %d fds" % (before + after))
        else:
            lat, failures, wall = load_stdio(args.sessions, args.calls)
            print(summary("stdio", lat, failures, wall))
        for f in failures[:5]:
            print("  failed:", f)
        bad += len(failures)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
