"""Red-team round 4: cases kept from attacking file grants, scratch, --out,
libraries, the network broker and agent sessions. Each case asserts the
exact outcome; where it is a security claim it also runs in reverse (the
same attack with the trap or the layer taken away must land), so the probe
can see a breach."""
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

from conftest import CLI

pytestmark = [pytest.mark.userns, pytest.mark.landlock, pytest.mark.seccomp]


@pytest.fixture
def base():
    d = pathlib.Path(tempfile.mkdtemp(prefix="cc-red4-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def run(*args, timeout=30):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout)


# --- --out: DIR's own symlinks, FIFOs and hard links ---------------------

OUT_GUEST = (
    "import os\n"
    "os.makedirs('/tmp/sub/deep', exist_ok=True)\n"
    "open('/tmp/sub/pwned', 'w').write('from the guest')\n"
    "open('/tmp/fifo', 'w').write('x')\n"
    "open('/tmp/hl', 'w').write('from the guest')\n"
    "open('/tmp/ok', 'w').write('fine')\n"
    "1")


def out_dir(base, traps):
    """DIR for --out and a victim directory outside it. With traps, DIR
    already holds sub -> victim, a FIFO and a hard link to victim/hl, as
    an existing project directory might; without, plain names."""
    out, victim = base / "out", base / "victim"
    out.mkdir()
    victim.mkdir()
    (victim / "hl").write_text("original")
    if traps:
        (out / "sub").symlink_to(victim)
        os.mkfifo(out / "fifo")
        os.link(victim / "hl", out / "hl")
    return out, victim


def test_out_never_writes_through_dirs_own_symlinks_fifos_or_links(base):
    # Before the fix: the guest's /tmp/sub/pwned landed in victim/ through
    # DIR's symlink, and the CLI hung for ever opening DIR's FIFO.
    out, victim = out_dir(base, traps=True)
    r = run("eval", "--lang", "python", "--json", "--scratch", "4", "--out", str(out),
            "--", OUT_GUEST)
    assert r.returncode == 0, r
    assert json.loads(r.stdout)["value"] == 1
    assert sorted(p.name for p in victim.iterdir()) == ["hl"]
    assert (victim / "hl").read_text() == "original"
    assert (out / "ok").read_text() == "fine"
    assert (out / "fifo").is_fifo()
    for name in ("/tmp/sub/pwned", "/tmp/fifo", "/tmp/hl"):
        assert "skipped %s" % name in r.stderr, r.stderr


def test_out_reverse_plain_dir_takes_every_file(base):
    out, victim = out_dir(base, traps=False)
    r = run("eval", "--lang", "python", "--json", "--scratch", "4", "--out", str(out),
            "--", OUT_GUEST)
    assert r.returncode == 0, r
    assert (out / "sub" / "pwned").read_text() == "from the guest"
    assert (out / "hl").read_text() == "from the guest"
    assert (out / "fifo").read_text() == "x"
    assert (victim / "hl").read_text() == "original"


# --- --library: a package is read only from its own directory -------------

def package(base, name, pkg_json, links=(), files=()):
    d = base / name
    d.mkdir()
    (d / "package.json").write_text(json.dumps(pkg_json))
    for rel, text in files:
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text(text)
    for rel, target in links:
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).symlink_to(target)
    return d


@pytest.fixture
def secret(base):
    s = base / "secret"
    s.mkdir()
    # A host file that happens to run as a script: its value would reach
    # the guest (and its error messages) if a package could point at it.
    (s / "env.js").write_text("var TOKEN = 'hunter2-host-secret';\n")
    return s


def js(*flags, code="typeof TOKEN === 'string' ? TOKEN : 'absent'"):
    return run("eval", "--lang", "js", "--json", *flags, "--", code)


@pytest.mark.parametrize("how", ["file-symlink", "dir-symlink", "package-json-symlink",
                                 "browser-symlink"])
def test_a_package_symlink_out_of_the_package_is_not_read(base, secret, how):
    # Before the fix each of these read the host's secret/env.js as the
    # package's bundle and ran it, so the guest saw TOKEN.
    if how == "file-symlink":
        d = package(base, "p", {"unpkg": "bundle.js"}, links=[("bundle.js", secret / "env.js")])
    elif how == "dir-symlink":
        d = package(base, "p", {"jsdelivr": "dist/env"}, links=[("dist", secret)])
    elif how == "browser-symlink":
        (secret / "umd.js").write_text("(function(){ this.TOKEN = 'hunter2-host-secret'; })();")
        d = package(base, "p", {"browser": "b.js"}, links=[("b.js", secret / "umd.js")])
    else:
        (secret / "package.json").write_text(json.dumps({"unpkg": "env.js"}))
        d = base / "p"
        d.mkdir()
        (d / "package.json").symlink_to(secret / "package.json")
        (d / "env.js").symlink_to(secret / "env.js")
    r = js("--library", str(d))
    assert "hunter2" not in r.stdout + r.stderr, r
    assert r.returncode == 2, r
    assert json.loads(r.stdout)["error"]["kind"] == "invalid_input"
    # "browser" is a guess the host checks; an unreadable one is passed over.
    said = "names no browser global bundle" if how == "browser-symlink" else "leads out of its package"
    assert said in r.stdout, r


def test_reverse_the_same_file_inside_the_package_or_given_directly_is_read(base, secret):
    d = package(base, "p", {"unpkg": "bundle.js"}, files=[("dist/env.js", (secret / "env.js").read_text())],
                links=[("bundle.js", "dist/env.js")])  # a symlink that stays inside
    r = js("--library", str(d))
    assert json.loads(r.stdout)["value"] == "hunter2-host-secret", r
    r = js("--library", str(secret / "env.js"))  # the host names the file itself
    assert json.loads(r.stdout)["value"] == "hunter2-host-secret", r


def test_a_huge_browser_field_file_is_not_read_into_host_memory(base):
    # Before the fix the "browser" candidate was read whole (up to 4 GiB)
    # to see whether it looks like a UMD script: 256 MiB here.
    d = package(base, "p", {"browser": "big.js"})
    with open(d / "big.js", "wb") as f:
        f.write(b"(function(){})();")
        f.truncate(256 << 20)  # sparse: costs no disk
    code = ("import resource, subprocess, sys\n"
            "subprocess.run(sys.argv[1:], capture_output=True)\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    p = subprocess.run(["/usr/bin/python3", "-c", code, CLI, "eval", "--lang", "js",
                        "--library", str(d), "1"], capture_output=True, text=True, timeout=60)
    peak_kib = int(p.stdout)
    assert peak_kib < (128 << 10), peak_kib  # far below the file's 256 MiB
    r = js("--library", str(d), code="1")
    assert r.returncode == 2 and "browser" in r.stdout + r.stderr, r


# --- --out against a hostile worker: bounded by what scratch can hold -----

LYING_WORKER = r'''#!/usr/bin/python3
import os, struct, sys
import msgpack
MODE = os.path.basename(os.path.dirname(os.path.abspath(__file__)))
N, SIZE = {"many": (5000, 16), "big": (40, 256 << 10)}.get(MODE, (3, 1000))
def send(o):
    b = msgpack.packb(o, use_bin_type=True)
    os.write(3, struct.pack("<I", len(b)) + b)
def recv():
    def exact(n):
        d = b""
        while len(d) < n:
            c = os.read(3, n - len(d))
            if not c:
                sys.exit(0)
            d += c
        return d
    return msgpack.unpackb(exact(struct.unpack("<I", exact(4))[0]), raw=False)
assert recv()["t"] == "init"
send({"t": "ready", "engine": "javascript", "version": "fake", "applied": "hygiene",
      "missing": "", "landlock_abi": 0, "seccomp_allowed": 0})
while True:
    req = recv()
    r = {"t": "result", "id": req["id"], "ok": True, "value": 1}
    if req["t"] == "eval" and MODE == "wait-flood":
        while True:  # "about to wait for a reply", for ever: the clock must not stop
            send({"t": "wait", "id": req["id"]})
    if req["t"] == "eval" and MODE == "send-clock":
        send({"t": "clock", "timeout_ms": 3600000})  # only the supervisor sends these
        while True:
            recv()
    if req["t"] == "flist":
        r["value"] = [{"path": "/tmp/f%d" % i, "size": SIZE, "mtime": 0.0, "dir": False}
                      for i in range(N)]
    elif req["t"] == "fread":
        r["value"] = b"x" * min(SIZE, req["max"])  # never more than asked
    send(r)
'''


def lying_cli(base, mode):
    """A copy of the CLI and libcodecage whose JavaScript worker (found
    next to the library) is LYING_WORKER in `mode`."""
    from conftest import BUILD
    d = base / mode
    d.mkdir()
    shutil.copy(CLI, d / "codecage")
    for name in os.listdir(BUILD):
        if name.startswith("libcodecage.so") and not name.endswith(".p"):
            shutil.copy(os.path.join(BUILD, name), d / name, follow_symlinks=True)
    (d / "codecage-worker-js").write_text(LYING_WORKER)
    os.chmod(d / "codecage-worker-js", 0o755)
    return str(d / "codecage")


def du(path):
    return sum(f.stat().st_size for f in pathlib.Path(path).rglob("*") if f.is_file())


@pytest.mark.parametrize("mode", ["many", "big"])
def test_out_from_a_lying_worker_is_bounded_by_the_scratch(base, mode):
    # Before the fix the CLI wrote whatever the worker listed: 5000 files,
    # or 40 x 256 KiB = 10 MiB from a 1 MiB scratch (any worker may lie;
    # a real one can list at most 4096 inodes and hold at most --scratch).
    cli = lying_cli(base, mode)
    out = base / "out"
    r = subprocess.run([cli, "eval", "--lang", "js", "--sandbox", "auto", "--scratch", "1",
                        "--out", str(out), "1"], capture_output=True, text=True, timeout=60)
    if mode == "many":  # no real worker lists more than its inodes: stopped
        assert r.returncode == 2, r  # a failed copy turns the run into invalid_input
        assert "more than scratch's 4096 inodes" in r.stderr, r
    else:  # files past the scratch's size are skipped
        assert r.returncode == 0, r
        assert "skipped /tmp/f39 (over the 0 bytes left" in r.stderr, r
    assert du(out) <= 1 << 20
    assert len(list(out.iterdir())) <= 4096


def test_sparse_files_past_the_scratch_size_are_skipped_not_fatal(base):
    out = base / "out"
    r = run("eval", "--lang", "python", "--scratch", "1", "--out", str(out), "--",
            "for n in ('a', 'b'):\n    f = open('/tmp/' + n, 'wb'); f.truncate((1 << 20) - 1)\n"
            "open('/tmp/c', 'w').write('ok')")
    assert r.returncode == 0, r
    assert "skipped /tmp/" in r.stderr and du(out) <= 1 << 20, r


def test_reverse_an_honest_listing_from_the_same_worker_is_copied(base):
    cli = lying_cli(base, "honest")
    out = base / "out"
    r = subprocess.run([cli, "eval", "--lang", "js", "--sandbox", "auto", "--scratch", "1",
                        "--out", str(out), "1"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r
    assert sorted(p.name for p in out.iterdir()) == ["f0", "f1", "f2"]
    assert du(out) == 3000


# --- the deadline clock: only the host's held calls stop it ---------------

@pytest.mark.parametrize("mode,rc,kind", [("wait-flood", 3, "timeout"),
                                          ("send-clock", 5, "protocol_violation")])
def test_a_worker_cannot_stop_its_own_deadline_clock(base, mode, rc, kind):
    # A worker that floods "wait" frames (no call is held) is stopped at the
    # deadline; one that sends the supervisor a "clock" frame is stopped at
    # once for breaking the protocol.
    cli = lying_cli(base, mode)
    r = subprocess.run([cli, "eval", "--lang", "js", "--json", "--sandbox", "auto",
                        "--timeout", "1", "1"], capture_output=True, text=True, timeout=30)
    assert r.returncode == rc, r
    assert json.loads(r.stdout)["error"]["kind"] == kind, r


def test_reverse_the_same_worker_answering_is_a_success(base):
    cli = lying_cli(base, "plain")
    r = subprocess.run([cli, "eval", "--lang", "js", "--json", "--sandbox", "auto",
                        "--timeout", "1", "1"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and json.loads(r.stdout)["value"] == 1, r


# --- agent sessions: a journal from another session ------------------------

def test_a_journal_from_another_session_is_refused_under_a_per_session_key():
    # Found: under one key a journal names no session, so Bob's session
    # loads Alice's dump with her state (the documented answer: a key per
    # session, as README and SECURITY.md now say). Reverse: the shared key.
    import hmac
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "python"))
    import ccpkg  # noqa: F401  (builds the package)
    from codecage import AgentSession, InvalidInputError

    app = b"app-secret-" * 3
    ka, kb = (hmac.new(app, b"session:" + s, "sha256").digest() for s in (b"alice", b"bob"))

    def lookup():
        return "alice-private-record"

    def alice(key):
        with AgentSession(language="javascript", tools={"lookup": lookup}, key=key) as a:
            a.run("globalThis.mine = await lookup()")
            return a.dump()
    with pytest.raises(InvalidInputError, match="signature does not match"):
        AgentSession.load(alice(ka), key=kb, tools={"lookup": lookup})
    with AgentSession.load(alice(app), key=app, tools={"lookup": lookup}) as b:
        assert b.run("mine").value == "alice-private-record"


# --- network: credentials do not follow a redirect to another origin -------

def test_credentials_are_dropped_on_a_redirect_to_another_port_or_scheme():
    # Found: Authorization and Cookie the guest set were sent on to a
    # redirect's target on the same host but another port (another origin:
    # fetch and curl drop them there). Reverse: a redirect to the same
    # origin keeps them, so the probe sees the headers when they are sent.
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "python"))
    sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
    import ccpkg  # noqa: F401  (builds the package)
    import netsrv
    from codecage import IsolatedRuntime, RuntimeConfig

    a, b = netsrv.Server("127.0.0.1"), netsrv.Server("127.0.0.1")
    try:
        with IsolatedRuntime(RuntimeConfig(allow_net=["127.0.0.1"]),
                             language="javascript") as rt:
            def via(target):
                url = a.url("/redir?to=" + target)
                text = rt.eval(
                    "(async () => (await fetch(%s, {headers: {Authorization: 'Bearer t0k',"
                    " Cookie: 'c=1'}})).text())()" % json.dumps(url))
                h = json.loads(text)["headers"]
                return h.get("authorization"), h.get("cookie")
            assert via(b.url("/echo")) == (None, None)  # another port
            assert via(a.url("/echo")) == ("Bearer t0k", "c=1")  # reverse: same origin
    finally:
        a.close()
        b.close()


# --- --out's notes name guest files: inert on a terminal --------------------

EVIL_NAME = "\x1b]0;PWNED\x07\x1b]52;c;aGk=\x07\ncodecage: forged"
NAMING = "import os; os.symlink('/x', '/tmp/' + %r); 1" % EVIL_NAME


def test_out_notes_cannot_drive_the_terminal(base):
    # Found: the guest's file names reached the terminal raw in --out's
    # "skipped" notes (an OSC 52 clipboard write, a title, a forged line).
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "integration"))
    from test_cli_terminal import run_on_pty
    rc, term, _ = run_on_pty(["eval", "--lang", "python", "--scratch", "1", "--out",
                              str(base / "o"), "--", NAMING], stdout_tty=False)
    assert rc == 0, term
    assert b"skipped /tmp/^[]0;PWNED^G^[]52;c;aGk=^G^Jcodecage: forged" in term, term
    assert b"\x1b" not in term and b"\x07" not in term
    assert [ln for ln in term.split(b"\n") if ln] and all(
        ln.startswith(b"codecage: --out: ") for ln in term.split(b"\n") if ln), term


def test_reverse_out_notes_on_a_pipe_are_the_bytes(base):
    r = run("eval", "--lang", "python", "--scratch", "1", "--out", str(base / "o"), "--", NAMING)
    assert r.returncode == 0, r
    assert "skipped /tmp/" + EVIL_NAME in r.stderr, r


def test_a_package_named_by_name_is_read_only_from_inside_node_modules(base, secret):
    # Found: node_modules/evil -> a directory outside node_modules was read
    # (its package.json and bundle) when the library was named "evil".
    # Reverse: pnpm's layout, a symlink to elsewhere inside node_modules.
    (secret / "package.json").write_text(json.dumps({"unpkg": "env.js"}))
    nm = base / "node_modules"
    (nm / ".pnpm" / "real").mkdir(parents=True)
    for f in ("package.json", "env.js"):
        shutil.copy(secret / f, nm / ".pnpm" / "real" / f)
    (nm / "evil").symlink_to(secret)
    (nm / "good").symlink_to(pathlib.Path(".pnpm") / "real")
    r = js("--node-modules", str(nm), "--library", "evil")
    assert r.returncode == 2 and "hunter2" not in r.stdout + r.stderr, r
    assert "leads out of" in json.loads(r.stdout)["error"]["message"], r
    r = js("--node-modules", str(nm), "--library", "good")
    assert json.loads(r.stdout)["value"] == "hunter2-host-secret", r
