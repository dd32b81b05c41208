"""Helpers for the MCP server tests: a raw stdio client, an HTTP server
fixture, and the Node packages (tests/mcp/node_modules, installed by
scripts/test with `npm ci` from package-lock.json). A missing Node or
package fails the test with a message; nothing is skipped."""
import contextlib
import json
import os
import queue
import re
import shutil
import subprocess
import threading

import pytest

from conftest import ASAN_BUILD, BUILD, CLI, ROOT, SANITIZER_ENV

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_MODULES = os.path.join(HERE, "node_modules")

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "pytest", "version": "1"}}}


def need_node():
    """Fail (not skip) when node or the pinned npm packages are missing."""
    if not shutil.which("node"):
        pytest.fail("node is not installed (scripts/install-deps installs nodejs)")
    for pkg in ("@modelcontextprotocol/sdk", "@modelcontextprotocol/inspector"):
        if not os.path.isdir(os.path.join(NODE_MODULES, pkg)):
            pytest.fail("%s is missing: run `npm ci --prefix tests/mcp` (scripts/test does)" % pkg)


class Stdio:
    """`codecage mcp` over stdio, driven line by line."""

    def __init__(self, *flags, init=True, cli=CLI, env=None):
        self._attach(subprocess.Popen([cli, "mcp", "--sandbox", "require", *flags],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, env=env))
        if init:
            r = self.request(INIT)
            assert r["result"]["protocolVersion"] == "2025-06-18", r
            self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _attach(self, proc):
        """Read proc's stdout lines into self.lines and its stderr into
        self.stderr, each from its own thread (None marks the end)."""
        self.proc = proc
        self.lines = queue.Queue()
        self.stderr = []
        threading.Thread(target=self._pump, args=(proc.stdout, self.lines.put),
                         daemon=True).start()
        threading.Thread(target=self._pump, args=(proc.stderr, self.stderr.append),
                         daemon=True).start()

    @staticmethod
    def _pump(stream, put):
        for line in stream:
            put(line)
        put(None)

    def stderr_text(self):
        """What the server wrote to stderr so far (the pump's None, its
        end, left out)."""
        return b"".join(x for x in self.stderr if x).decode(errors="replace")

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, msg):
        self.send_raw(json.dumps(msg).encode() + b"\n")

    def read(self, timeout=60):
        """The next message on stdout (every line must be JSON-RPC)."""
        line = self.lines.get(timeout=timeout)
        assert line is not None, "server closed stdout; stderr: %r" % self.stderr_text()
        msg = json.loads(line)
        assert msg["jsonrpc"] == "2.0"
        return msg

    def request(self, msg, timeout=60):
        """Send a request, skip notifications, return the response."""
        self.send(msg)
        while True:
            r = self.read(timeout)
            if "method" not in r:
                return r

    def call(self, tool, code, id=1, **args):
        r = self.request({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": tool, "arguments": {"code": code, **args}}})
        assert r["id"] == id, r
        return r["result"]

    def close(self, timeout=30):
        """Close stdin: the server must exit 0 on its own."""
        self.proc.stdin.close()
        rc = self.proc.wait(timeout)
        assert rc == 0, (rc, self.stderr_text())
        rest = []
        while True:
            line = self.lines.get(timeout=5)
            if line is None:
                return rest
            rest.append(json.loads(line))


def sc(result):
    """A tools/call result's structuredContent."""
    return result["structuredContent"]


def value(s, lang, code, **args):
    """Run code with run_LANG on the Stdio server s; it must end ok: its
    value."""
    r = s.call("run_" + lang, code, **args)
    assert sc(r)["status"] == "ok", r
    return sc(r)["value"]


def sanitized_cli(tmp_path):
    """build-asan's `codecage` (ASan, UBSan) and the environment that runs
    it, or any of build-asan's builds of it, with the plain build's
    workers: libcodecage finds its workers next to itself, so tmp_path gets
    the sanitized library and the plain workers side by side
    (LD_LIBRARY_PATH wins over the binary's $ORIGIN run path).
    conftest.ASAN_BUILD says why a worker is never the sanitized one.
    Returns (the binary, its environment)."""
    exe = os.path.join(ASAN_BUILD, "codecage")
    if not os.access(exe, os.X_OK):
        pytest.fail("%s is missing: scripts/test builds it (ninja -C build-asan codecage)" % exe)
    os.symlink(os.path.join(ASAN_BUILD, "libcodecage.so.0"), tmp_path / "libcodecage.so.0")
    for w in ("codecage-worker-js", "codecage-worker-py"):
        os.symlink(os.path.join(BUILD, w), tmp_path / w)
    return exe, dict(os.environ, LD_LIBRARY_PATH=str(tmp_path), **SANITIZER_ENV)


@contextlib.contextmanager
def http_server(*flags):
    """`codecage mcp --http 127.0.0.1:0 FLAGS`; yields the /mcp URL. On exit
    sends SIGTERM and checks a clean exit."""
    proc = subprocess.Popen([CLI, "mcp", "--http", "127.0.0.1:0", *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        m = re.search(r"listening on (http://\S+/mcp)", line)
        assert m, line + proc.stderr.read()
        yield m.group(1)
    finally:
        proc.terminate()
        try:
            rc = proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        out = proc.stdout.read()
        assert rc == 0, (rc, proc.stderr.read())
        assert out == "", "nothing on stdout in HTTP mode: %r" % out


def node(*args, timeout=300):
    need_node()
    return subprocess.run(["node", *args], cwd=HERE, capture_output=True, text=True,
                          timeout=timeout)
