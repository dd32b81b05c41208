#!/usr/bin/python3
"""The network broker measured (README, "Network").

usage: /usr/bin/python3 bench/net.py [--requests N] [--fanout M]

A local HTTP/1.1 server on 127.0.0.1 (this process, threads) serves a 1 KiB
body. Each runner makes N GETs of it one after another, each on a new
connection (the server closes it), and the table gives the mean time per
request from the runner's own clock:
  - plain urllib: urllib.request.urlopen in this /usr/bin/python3;
  - curl: one `curl` process fetching the URL N times (`-H 'Connection:
    close'`), its time_total per request;
  - codecage Python: urllib.request.urlopen in a guest (the host performs
    it), timed by the guest's loop;
  - codecage JavaScript: `await fetch(url)` then `await r.text()` in a
    guest loop.
The goal is at most 1.3x plain urllib for both guests. Then M fetches of a
URL that waits 20 ms, under one Promise.all against the same M awaited one
by one (wall time of the eval, from the host).
Needs the Python package built (bench/net.py builds it into a temporary
directory with setup.py, as tests/python/ccpkg.py does).
"""
import argparse
import http.server
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BODY = b"x" * 1024


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        if self.path.startswith("/wait"):
            time.sleep(0.02)
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(BODY)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(BODY)
        self.close_connection = True


def build_package():
    d = tempfile.mkdtemp(prefix="codecage-bench-net-")
    env = dict(os.environ, CODECAGE_MESON_BUILD=os.path.join(ROOT, "build"))
    subprocess.run([sys.executable, "setup.py", "-q", "build", "--build-lib", d], cwd=ROOT,
                   env=env, check=True, capture_output=True)
    sys.path.insert(0, d)
    return d


def plain_urllib(url, n):
    t = time.perf_counter()
    for _ in range(n):
        with urllib.request.urlopen(url) as r:
            r.read()
    return (time.perf_counter() - t) / n


def curl(url, n):
    if not shutil.which("curl"):
        return None
    cfg = "".join(f'url = "{url}"\noutput = "/dev/null"\n' for _ in range(n))
    p = subprocess.run(["curl", "-s", "-H", "Connection: close", "-w", "%{time_total}\n",
                        "-K", "-"], input=cfg, capture_output=True, text=True, check=True)
    times = [float(x) for x in p.stdout.split()]
    return statistics.mean(times)


def guest_python(rt, url, n):
    return rt.eval(f"""
import time, urllib.request
t = time.perf_counter()
for _ in range({n}):
    with urllib.request.urlopen('{url}') as r:
        r.read()
(time.perf_counter() - t) / {n}
""")


def guest_js(rt, url, n):
    t = time.perf_counter()
    rt.eval(f"(async () => {{ for (let i = 0; i < {n}; i++) await (await fetch('{url}')).text(); }})()")
    return (time.perf_counter() - t) / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--fanout", type=int, default=100)
    a = ap.parse_args()
    pkg = build_package()
    from codecage import IsolatedRuntime, RuntimeConfig
    http.server.ThreadingHTTPServer.request_queue_size = 256
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    port = srv.server_address[1]
    url = f"http://127.0.0.1:{port}/1k"
    cfg = RuntimeConfig(allow_net=[f"127.0.0.1:{port}"], timeout=600,
                        net_max_requests=max(a.requests, a.fanout) + 100)
    rows = []
    with IsolatedRuntime(cfg, language="python") as py, \
            IsolatedRuntime(cfg, language="javascript") as js:
        for warm in (True, False):  # one short warm-up round, then the measured one
            n = 20 if warm else a.requests
            got = {"plain urllib (python3)": plain_urllib(url, n), "curl": curl(url, n),
                   "codecage Python, guest urllib": guest_python(py, url, n),
                   "codecage JavaScript, guest fetch": guest_js(js, url, n)}
        base = got["plain urllib (python3)"]
        print(f"1 KiB GET, {a.requests} requests, a new connection each\n")
        print("| runner | per request | vs plain urllib |\n|---|---|---|")
        for k, v in got.items():
            rows.append((k, v))
            print(f"| {k} | " + ("n/a |" if v is None else
                                  f"{v * 1e6:.0f} µs | {v / base:.2f}x |"))
        wait = f"http://127.0.0.1:{port}/wait"
        t = time.perf_counter()
        js.eval(f"Promise.all(Array.from({{length: {a.fanout}}}, () => fetch('{wait}')"
                ".then(r => r.text())))")
        par = time.perf_counter() - t
        t = time.perf_counter()
        js.eval(f"(async () => {{ for (let i = 0; i < {a.fanout}; i++) "
                f"await (await fetch('{wait}')).text(); }})()")
        ser = time.perf_counter() - t
        print(f"\n{a.fanout} fetches of a URL that waits 20 ms\n")
        print("| form | wall time |\n|---|---|")
        print(f"| Promise.all | {par * 1e3:.0f} ms |")
        print(f"| one after another | {ser * 1e3:.0f} ms |")
        print(f"| ratio | {ser / par:.1f}x |")
    srv.shutdown()
    shutil.rmtree(pkg, True)


if __name__ == "__main__":
    main()
