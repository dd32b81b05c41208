"""Red-team round 5: cases kept from attacking the MCP server's deployment
features, code mode (hostile upstreams), displays and streaming output.
Each case asserts the exact outcome; where it is a security claim it also
runs in reverse (the same check on the breach must catch it), so the probe
can see a breach."""
import ast
import http.client
import json
import os
import pathlib
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlsplit

import pytest

from conftest import CLI

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "mcp"))
from mcp_util import Stdio, http_server  # noqa: E402

# --- code mode: a hostile upstream's descriptions in the Python stubs ----

DOC_UP = "h=%s %s" % (sys.executable, os.path.join(HERE, "hostile_doc_upstream.py"))


def stub_breaches(stub):
    """What in a Python stub is not a declaration: [] when every method of
    class h is `def NAME(...) -> T:` with only a docstring and `...`."""
    try:
        tree = ast.parse(stub)
    except SyntaxError as e:
        return ["SyntaxError: %s" % e]
    bad = [type(n).__name__ for n in tree.body
           if not isinstance(n, (ast.ClassDef, ast.ImportFrom))]
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for f in cls.body:
            if not isinstance(f, ast.FunctionDef):
                bad.append("%s in class %s" % (type(f).__name__, cls.name))
                continue
            kinds = [type(s).__name__ + ":" + type(getattr(s, "value", None)).__name__
                     for s in f.body]
            if kinds != ["Expr:Constant", "Expr:Constant"] or ast.get_docstring(f) is None:
                bad.append("%s's body %s" % (f.name, kinds))
    return bad


def python_stub(s):
    r = s.request({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    d = [t for t in r["result"]["tools"] if t["name"] == "run_python"][0]["description"]
    stub = d[d.index("# Upstream MCP tools"):]
    return stub[:stub.index("        ...\n", stub.index("def fifth")) + len("        ...\n")]


def test_upstream_description_cannot_escape_its_python_docstring():
    # Before the fix: "first"'s trailing backslash escaped its docstring's
    # closing quotes, so "second"'s description stood in the stub as code
    # (`import os; os.system(...)` outside any string), and "third"'s
    # trailing quote left an unterminated string.
    s = Stdio("--scratch", "0", "--upstream", DOC_UP)
    try:
        stub = python_stub(s)
    finally:
        s.close()
    assert stub_breaches(stub) == [], stub
    tree = ast.parse(stub)
    docs = {f.name: ast.get_docstring(f) for f in tree.body[-1].body}
    assert docs["first"].rstrip() == "ends with a backslash \\"
    assert docs["second"] == "import os; os.system('evil')  # looks like code"
    assert docs["third"].rstrip() == 'ends with a quote"'
    # Reverse: the same check sees the breach in the stub as it was.
    raw = ('class h:\n    def first() -> Any:\n        """ends \\"""\n        ...\n'
           '    def second() -> Any:\n        """import os; os.system(1)"""\n        ...\n')
    assert stub_breaches(raw) != []
    assert stub_breaches('class h:\n    def t() -> Any:\n        """a quote""""\n'
                         '        ...\n') != []


# --- code mode: a hostile upstream's tool names in the guests -------------

NAMES_UP = DOC_UP + " names"


def test_upstream_tool_named_like_a_dunder_or_keyword_cannot_break_run_python():
    # Before the fix: a tool named "__class__" made every run_python call
    # fail ("binding tool 'h.__class__': TypeError"), whatever it called,
    # and "class" could not be called at all (a SyntaxError) and broke the
    # stub. Such names now get a trailing '_' in both guests.
    s = Stdio("--scratch", "0", "--upstream", NAMES_UP)
    try:
        def run(lang, code):
            r = s.call("run_" + lang, code)["structuredContent"]
            assert r["status"] == "ok", r
            return r["value"]
        assert run("python", "tools.h.ok()") == "called ok"
        assert run("python", "[tools.h.class_(), getattr(tools.h, '__class___')(),"
                             " tools.h.import_(), type(tools.h).__name__]") == \
            ["called class", "called __class__", "called import", "SimpleNamespace"]
        assert run("javascript", "[await tools.h.class_(), await tools.h.__dict___(),"
                                 " Object.keys(tools.h).sort()]") == \
            ["called class", "called __dict__",
             ["__class___", "__dict___", "class_", "import_", "ok"]]
        r = s.request({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        d = [t for t in r["result"]["tools"] if t["name"] == "run_python"][0]["description"]
        stub = d[d.index("# Upstream MCP tools"):]
        stub = stub[:stub.index("        ...\n", stub.index("def ok")) + len("        ...\n")]
        assert stub_breaches(stub) == [], stub
    finally:
        s.close()


# --- displays: --display-dir's own FIFOs and hard links -------------------

def display_dir(traps):
    """DIR for --display-dir and a victim file outside it. With traps, DIR
    already holds display-1.txt as a FIFO and display-2.txt as a hard link
    to the victim, as a shared or reused directory might; without, plain
    names."""
    base = pathlib.Path(tempfile.mkdtemp(prefix="cc-red5-"))
    out, victim = base / "out", base / "victim.txt"
    out.mkdir()
    victim.write_text("original")
    if traps:
        os.mkfifo(out / "display-1.txt")
        os.link(victim, out / "display-2.txt")
    return base, out, victim


DISPLAY_GUEST = "display('one', 'text/plain'); display('from the guest', 'text/plain'); 1"


@pytest.mark.parametrize("traps", [True, False])
def test_display_dir_never_blocks_on_a_fifo_or_writes_through_a_hard_link(traps):
    # Before the fix: display-1.txt, a FIFO, hung the CLI in open() for
    # ever (no reader), and display-2.txt, a hard link, carried the guest's
    # bytes into the victim outside DIR.
    base, out, victim = display_dir(traps)
    try:
        r = subprocess.run([CLI, "eval", "--lang", "js", "--display-dir", str(out),
                            DISPLAY_GUEST], capture_output=True, text=True, timeout=30)
        if traps:
            assert r.returncode != 0, r
            assert "cannot write '%s/display-1.txt'" % out in r.stderr, r.stderr
            assert "cannot write '%s/display-2.txt'" % out in r.stderr, r.stderr
            assert victim.read_text() == "original"
        else:
            # Reverse: with plain names the writes land, so the trap case
            # would see a write-through.
            assert r.returncode == 0, r
            assert (out / "display-2.txt").read_text() == "from the guest"
            os.unlink(out / "display-2.txt")
            os.link(victim, out / "display-2.txt")
            with open(out / "display-2.txt", "w") as f:
                f.write("from the guest")
            assert victim.read_text() == "from the guest"
    finally:
        shutil.rmtree(base, ignore_errors=True)


# --- HTTP: connections that never send a request --------------------------

HTTP_IDLE_S = 60  # src/mcp/server/http.c's MCP_HTTP_IDLE_S


def healthz(host, port):
    try:
        c = http.client.HTTPConnection(host, port, timeout=5)
        c.request("GET", "/healthz")
        return c.getresponse().status
    except OSError as e:
        return type(e).__name__


@pytest.mark.slow
def test_idle_unauthenticated_connections_cannot_hold_the_server_for_ever():
    # Before the fix: 1030 connections that never sent a byte took all of
    # MHD's 1024 slots (one thread each, no timeout) until the client let
    # them go; no one, authenticated or not, got an answer meanwhile.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    with http_server("--pool", "0") as url:
        u = urlsplit(url)
        socks = [socket.create_connection((u.hostname, u.port)) for _ in range(1030)]
        try:
            time.sleep(1)
            # Reverse: while they are fresh the slots are taken, so the
            # probe sees the lock-out it guards against.
            assert healthz(u.hostname, u.port) != 200
            deadline = time.monotonic() + HTTP_IDLE_S + 60
            while healthz(u.hostname, u.port) != 200:
                assert time.monotonic() < deadline, "idle connections still hold the server"
                time.sleep(2)
            # The server closed them: each idle socket reads EOF.
            socks[0].settimeout(5)
            assert socks[0].recv(1) == b""
        finally:
            for s in socks:
                s.close()


def test_silent_event_stream_call_gets_keep_alives():
    # A tools/call answered as an event stream that says nothing for a
    # while (here 17 s) must get ": keep-alive" comments, as the GET stream
    # does, or MCP_HTTP_IDLE_S would cut a long silent call.
    from test_http_raw import BOTH, Conn
    with http_server("--pool", "0") as url:
        c = Conn(url)
        sid = c.init()
        _, data = c.call(sid, "run_python", "import time; time.sleep(17); 5", id=3, accept=BOTH)
        text = data.decode()
        assert ": keep-alive" in text, text
        events = [json.loads(ln[6:]) for ln in text.splitlines() if ln.startswith("data: ")]
        assert events[-1]["id"] == 3
        assert events[-1]["result"]["structuredContent"]["value"] == 5
