#!/usr/bin/python3
"""The MCP server (`codecage mcp`) measured and checked.

  bench/mcp.py latency [--calls N]   run_javascript `1+1` over stdio and HTTP:
                                     calls per second and latency percentiles
  bench/mcp.py humaneval [--lang L]  every HumanEval-X program through one MCP
                                     stdio session per language (reset: true
                                     before each program) and through
                                     `codecage run --json`; outcomes must match
                                     program by program (exit 1 otherwise)

A program passes when it ends without error and, for JavaScript, prints no
"Assertion failed" to stderr (bench/humaneval.py's rule).
"""
import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import humaneval  # noqa: E402  (load, passed_codecage, EXT, TIMEOUT_S)

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}}
TOOL = {"python": "run_python", "javascript": "run_javascript"}


class StdioClient:
    """A minimal MCP client over `codecage mcp` (stdio), one call at a time."""

    def __init__(self, codecage, *flags):
        self.proc = subprocess.Popen([codecage, "mcp", *flags], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)
        self.next_id = 1
        self.request(INIT)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, msg):
        self.send(msg)
        while True:
            r = json.loads(self.proc.stdout.readline())
            if "method" not in r:
                return r

    def call(self, tool, args):
        self.next_id += 1
        r = self.request({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                          "params": {"name": tool, "arguments": args}})
        return r["result"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(60)


class HttpClient:
    """The same over streamable HTTP, one keep-alive connection."""

    def __init__(self, url):
        m = re.match(r"http://([^:/]+):(\d+)/mcp", url)
        self.conn = http.client.HTTPConnection(m.group(1), int(m.group(2)))
        self.sid = None
        self.next_id = 1
        self.post(INIT)
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, msg):
        h = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.sid:
            h["Mcp-Session-Id"] = self.sid
        self.conn.request("POST", "/mcp", json.dumps(msg), h)
        r = self.conn.getresponse()
        data = r.read()
        self.sid = self.sid or r.getheader("Mcp-Session-Id")
        return json.loads(data) if data else None

    def call(self, tool, args):
        self.next_id += 1
        return self.post({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                          "params": {"name": tool, "arguments": args}})["result"]


def timed_calls(client, n):
    lat = []
    for _ in range(n):
        t = time.perf_counter()
        r = client.call("run_javascript", {"code": "1+1"})
        lat.append(time.perf_counter() - t)
        assert r["structuredContent"]["value"] == 2, r
    return lat


def report(name, lat):
    lat.sort()
    total = sum(lat)
    print("%-6s %6d calls  %8.0f calls/s  median %7.1f us  p99 %7.1f us" %
          (name, len(lat), len(lat) / total, lat[len(lat) // 2] * 1e6,
           lat[int(len(lat) * 0.99)] * 1e6))


def cmd_latency(args):
    c = StdioClient(args.codecage, "--sandbox", args.sandbox)
    timed_calls(c, 50)  # warm: the runtime starts on the first call
    report("stdio", timed_calls(c, args.calls))
    c.close()
    proc = subprocess.Popen([args.codecage, "mcp", "--sandbox", args.sandbox, "--http",
                             "127.0.0.1:0"], stderr=subprocess.PIPE, text=True)
    url = re.search(r"(http://\S+/mcp)", proc.stderr.readline()).group(1)
    h = HttpClient(url)
    timed_calls(h, 50)
    report("http", timed_calls(h, args.calls))
    proc.terminate()
    proc.wait(30)
    return 0


def passed_mcp(result, lang):
    sc = result["structuredContent"]
    if sc["status"] != "ok":
        return False, sc["error"]["kind"]
    if lang == "javascript" and "Assertion failed" in sc["stderr"]:
        return False, "assertion"
    return True, None


def cmd_humaneval(args):
    mismatches = 0
    with tempfile.TemporaryDirectory(prefix="codecage-mcp-humaneval-") as tmp:
        for lang in args.lang or ["python", "javascript"]:
            programs = list(humaneval.load(args.data, lang))
            if args.limit:
                programs = programs[:args.limit]
            counts = {"cli": [0, 0], "mcp": [0, 0], "native": [0, 0]}
            t_cli = t_mcp = t_native = 0.0
            client = StdioClient(args.codecage, "--sandbox", args.sandbox, "--timeout",
                                 str(humaneval.TIMEOUT_S), "--pool", str(args.pool))
            for i, (task, text) in enumerate(programs):
                path = os.path.join(tmp, "p%d%s" % (i, humaneval.EXT[lang]))
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
                t = time.perf_counter()
                cli, _ = humaneval.run([args.codecage, "run", "--json", "--sandbox",
                                        args.sandbox, "--timeout", str(humaneval.TIMEOUT_S),
                                        path])
                t_cli += time.perf_counter() - t
                ok_cli, kind_cli = humaneval.passed_codecage(cli, lang)
                t = time.perf_counter()
                ref, _ = humaneval.run(humaneval.reference_cmd(lang, path))
                t_native += time.perf_counter() - t
                counts["native"][0 if humaneval.passed_reference(ref, lang) else 1] += 1
                t = time.perf_counter()
                res = client.call(TOOL[lang], {"code": text, "reset": True})
                t_mcp += time.perf_counter() - t
                ok_mcp, kind_mcp = passed_mcp(res, lang)
                counts["cli"][0 if ok_cli else 1] += 1
                counts["mcp"][0 if ok_mcp else 1] += 1
                if (ok_cli, kind_cli) != (ok_mcp, kind_mcp):
                    mismatches += 1
                    print("MISMATCH %s: cli %s (%s), mcp %s (%s)" %
                          (task, ok_cli, kind_cli, ok_mcp, kind_mcp))
            client.close()
            native = "python3" if lang == "python" else "node"
            for name, t in (("cli", t_cli), ("mcp", t_mcp), ("native", t_native)):
                print("%-10s  %-4s %3d passed, %3d failed, %7.2f s" %
                      (lang, name if name != "native" else native, counts[name][0],
                       counts[name][1], t))
            print("%-10s  mcp/%s: %.2fx" % (lang, native, t_mcp / t_native if t_native else 0))
    print("%d programs differ between the MCP server and the CLI" % mismatches)
    return 1 if mismatches else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["latency", "humaneval"])
    ap.add_argument("--codecage", default=os.path.join(ROOT, "build", "codecage"))
    ap.add_argument("--sandbox", default="require")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data", "humaneval-x"))
    ap.add_argument("--lang", choices=sorted(TOOL), action="append")
    ap.add_argument("--limit", type=int, default=0, help="first N programs per language")
    ap.add_argument("--pool", type=int, default=2, help="codecage mcp --pool N")
    args = ap.parse_args()
    return cmd_latency(args) if args.command == "latency" else cmd_humaneval(args)


if __name__ == "__main__":
    sys.exit(main())
