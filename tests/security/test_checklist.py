"""The capability checklist (deliverable 6 of the confinement issue).

What it proves: guest code that reaches for a capability the sandbox denies
(host files, the network, processes, signals and tracing, the host's
environment and argv, /proc and /sys, TIOCSTI, io_uring, userfaultfd, memfd
plus exec, raw system calls, inherited descriptors, thread and fork bombs,
core dumps, raised rlimits, QuickJS's std/os/modules/bytecode) gets exactly
the outcome listed for it in checklist_cases.py: an errno, an error kind, or
the worker killed for calling something on the seccomp kill-list. And that
no attempt, whatever its outcome, leaks a planted secret, leaves a file
behind, reaches a host socket, or leaves a process running.

How:
  - Every case runs in the default sandbox mode (require: namespaces,
    Landlock and seccomp all applied) through four surfaces: the CLI
    (build/codecage eval --json, a spawned worker), the C library
    (build/tests/security/cc-checklist-driver, which prints the same fields
    as one JSON line), a fork-server session with tools bound (the driver's
    --fork), and the MCP server over stdio (`codecage mcp`: every case is
    one tools/call with reset: true, so each gets a fresh runtime, in one
    server process for the whole module; its host is the server, planted
    with the same canaries, under a subreaper checked when it exits).
  - A module fixture plants canaries: a random secret in canary.txt in a
    directory under /var/tmp and in one under pytest's base temp directory
    (neither is in the worker's root), another in an environment variable of
    the process hosting the supervisor, a third in its argv (the CLI's
    argv[0], the driver's last argument, the wrapper's argv). It also opens
    listening host sockets the guest is pointed at: TCP and UDP on
    127.0.0.1, unix stream and datagram sockets in the canary directory, and
    abstract stream and datagram sockets.
  - Each run goes through WRAPPER (below), a child subreaper: it forks the
    host process, puts the host's pid where the code says @HOSTPID@, waits
    for it, then waits up to 2 s for every descendant (an escaped worker or
    guest child would be re-parented to it) to be gone; what is left is
    reported and killed by pid.
  - After each run: the outcome is the expected one exactly (kind, type,
    message or value, and the CLI's exit status); no secret appears in
    anything the host printed; the canary directories hold exactly what was
    planted; no file named after the session's tag exists where a case
    tried to create one, and no core file appeared in the host's working
    directory; the host listeners got no connection and no datagram; no
    process survived the subreaper's wait, and no worker process started for
    this case's host (its argv names the host's pid) is alive anywhere.
  - Reverse tests show the detectors are not blind: with the sandbox off a
    guest does read the canary file, a host that prints its environment
    shows the environment secret, a host that leaves a process behind is
    caught, a live worker is found by its host's pid, files and socket
    traffic are noticed.

Every case needs the whole sandbox (mode require refuses to start without
it), so the module carries the userns, landlock and seccomp markers."""
import base64
import glob
import json
import os
import secrets
import socket
import subprocess
import sys
import time

import pytest

from conftest import BUILD, CLI, ROOT

from checklist_cases import CASES, JS, PY

sys.path.insert(0, os.path.join(ROOT, "tests", "mcp"))
from mcp_util import INIT, Stdio  # noqa: E402

pytestmark = [pytest.mark.userns, pytest.mark.landlock, pytest.mark.seccomp]

DRIVER = os.path.join(BUILD, "tests", "security", "cc-checklist-driver")
WORKERS = {os.path.realpath(os.path.join(BUILD, "codecage-worker-js")),
           os.path.realpath(os.path.join(BUILD, "codecage-worker-py"))}
ENV_NAME = "CC_CHECKLIST_CANARY"
PLANTED = {"canary.txt", "canary.sock", "canary-dgram.sock", "cwd"}
EXIT = {"ok": 0, "guest_error": 1, "syntax_error": 1, "worker_crashed": 5}

# Runs one host process (argv[1] is a JSON spec) as a child subreaper and
# prints one JSON object: its exit code, stdout, stderr, pid and survivors.
WRAPPER = r'''
import ctypes, json, os, sys, tempfile, time
spec = json.loads(sys.argv[1])  # sys.argv[2] is the argv canary
if ctypes.CDLL(None).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
    sys.exit("PR_SET_CHILD_SUBREAPER failed")
out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
pid = os.fork()
if pid == 0:
    try:
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        os.execv(spec["exe"], [a.replace("@HOSTPID@", str(os.getpid())) for a in spec["argv"]])
    finally:
        os._exit(127)
deadline, hung, status = time.monotonic() + spec["timeout"], False, None
while status is None:
    done, st = os.waitpid(pid, os.WNOHANG)
    if done:
        status = os.waitstatus_to_exitcode(st)
    elif time.monotonic() > deadline:
        hung = True
        os.kill(pid, 9)
    else:
        time.sleep(0.005)

def reap():
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass

def children():
    with open("/proc/self/task/%d/children" % os.getpid()) as f:
        return [int(p) for p in f.read().split()]

def describe(p):
    try:
        exe = os.readlink("/proc/%d/exe" % p)
    except OSError as e:
        exe = "? (%s)" % e.strerror
    return {"pid": p, "exe": exe}

end = time.monotonic() + 2
while True:
    reap()
    if not children() or time.monotonic() > end:
        break
    time.sleep(0.01)
survivors = []
for _ in range(100):
    reap()
    left = children()
    if not left:
        break
    for p in left:
        survivors.append(describe(p))
        os.kill(p, 9)
    time.sleep(0.01)
out.seek(0)
err.seek(0)
print(json.dumps({"rc": status, "hung": hung, "hostpid": pid, "survivors": survivors,
                  "stdout": out.read().decode("utf-8", "replace"),
                  "stderr": err.read().decode("utf-8", "replace")}))
'''


class Canaries:
    """Everything planted for the session, and the checks that it held."""

    def __init__(self, tmpdir):
        self.tag = "cc-checklist-" + secrets.token_hex(6)
        self.file_secret = "FILESECRET" + secrets.token_hex(16)
        self.env_secret = "ENVSECRET" + secrets.token_hex(16)
        self.argv_secret = "ARGVSECRET" + secrets.token_hex(16)
        self.vardir = "/var/tmp/" + self.tag
        self.tmpdir = str(tmpdir)
        self.cwd = os.path.join(self.vardir, "cwd")
        os.makedirs(self.cwd)
        for d in (self.vardir, self.tmpdir):
            with open(os.path.join(d, "canary.txt"), "w") as f:
                f.write(self.file_secret + "\n")
        self.listeners = []
        self.tcp = self._listen(socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", 0))
        self.udp = self._listen(socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", 0))
        self.usock = os.path.join(self.vardir, "canary.sock")
        self.udgram = os.path.join(self.vardir, "canary-dgram.sock")
        self._listen(socket.AF_UNIX, socket.SOCK_STREAM, self.usock)
        self._listen(socket.AF_UNIX, socket.SOCK_DGRAM, self.udgram)
        self.abstract = self.tag
        self._listen(socket.AF_UNIX, socket.SOCK_STREAM, "\0" + self.abstract)
        self._listen(socket.AF_UNIX, socket.SOCK_DGRAM, "\0" + self.abstract + "-dgram")
        self.env = dict(os.environ, **{ENV_NAME: self.env_secret})

    def _listen(self, family, type_, addr):
        s = socket.socket(family, type_)
        s.bind(addr)
        if type_ == socket.SOCK_STREAM:
            s.listen(8)
        s.setblocking(False)
        self.listeners.append(s)
        return s.getsockname()[1] if family == socket.AF_INET else addr

    def substitute(self, code):
        for key, val in (("@VARDIR@", self.vardir), ("@TMPDIR@", self.tmpdir),
                         ("@TAG@", self.tag), ("@TCPPORT@", str(self.tcp)),
                         ("@UDPPORT@", str(self.udp)), ("@USOCK@", self.usock),
                         ("@UDGRAM@", self.udgram), ("@ABSTRACT@", self.abstract)):
            code = code.replace(key, val)
        return code

    def check(self, text):
        """No secret in text; nothing created, nothing reached."""
        for name in ("file_secret", "env_secret", "argv_secret"):
            assert getattr(self, name) not in text, "%s leaked:\n%s" % (name, text[-3000:])
        assert set(os.listdir(self.vardir)) == PLANTED
        assert os.listdir(self.tmpdir) == ["canary.txt"]
        for d in (self.vardir, self.tmpdir):
            with open(os.path.join(d, "canary.txt")) as f:
                assert f.read() == self.file_secret + "\n"
        assert os.listdir(self.cwd) == [], "files (a core dump?) in the host's cwd"
        made = [p for pattern in ("/%s*", "/tmp/%s*", "/usr/lib/python3.11/%s*")
                for p in glob.glob(pattern % self.tag)]
        assert made == [], "files created outside: %s" % made
        for s in self.listeners:
            with pytest.raises(BlockingIOError):
                if s.type == socket.SOCK_STREAM:
                    s.accept()[0].close()
                else:
                    s.recv(1)
                pytest.fail("a host socket got something: %s" % (s.getsockname(),))

    def close(self):
        for s in self.listeners:
            s.close()
        for name in os.listdir(self.cwd):
            os.unlink(os.path.join(self.cwd, name))
        os.rmdir(self.cwd)
        for name in os.listdir(self.vardir):
            os.unlink(os.path.join(self.vardir, name))
        os.rmdir(self.vardir)


def workers_of(hostpid):
    """Live processes running a worker executable of this build that were
    started for the supervisor in process hostpid (the worker's argv says
    --ppid=HOSTPID; the monitor and the namespace's pid 1 both carry it)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            exe = os.readlink("/proc/%s/exe" % pid).replace(" (deleted)", "")
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if exe in WORKERS and b"--ppid=%d" % hostpid in argv:
            found.append(int(pid))
    return found


@pytest.fixture(scope="module")
def canaries(tmp_path_factory):
    c = Canaries(tmp_path_factory.mktemp("canary"))
    yield c
    c.close()


def wrap(canaries, exe, argv, timeout=90):
    """Run exe with argv under WRAPPER; returns its report (a dict)."""
    spec = json.dumps({"exe": exe, "argv": argv, "timeout": timeout})
    proc = subprocess.run(["/usr/bin/python3", "-c", WRAPPER, spec, canaries.argv_secret],
                          capture_output=True, text=True, env=canaries.env, cwd=canaries.cwd,
                          timeout=timeout + 30)
    assert proc.returncode == 0 and proc.stdout, proc.stderr
    report = json.loads(proc.stdout)
    report["wrapper_stderr"] = proc.stderr
    return report


def run(canaries, surface, lang, code):
    """One eval through the CLI or the library; returns (report, outcome)
    with outcome the fields both surfaces print."""
    if surface == "cli":
        report = wrap(canaries, CLI, ["codecage-" + canaries.argv_secret, "eval", "--lang", lang,
                                      "--json", "--", code])
        assert report["stdout"].startswith("{"), report
        j = json.loads(report["stdout"])
        err = j["error"] or {"kind": "ok", "type": "", "message": ""}
        outcome = {"kind": err["kind"], "type": err["type"], "message": err["message"],
                   "value": j["value"], "exit": report["rc"]}
    else:
        fork = ["--fork"] if surface == "forked" else []
        report = wrap(canaries, DRIVER,
                      [DRIVER] + fork + [lang, code, "--canary=" + canaries.argv_secret])
        assert report["rc"] == 0 and report["stdout"].startswith("{"), report
        outcome = json.loads(report["stdout"])
    return report, outcome


def check_outcome(expect, got, surface="cli"):
    what = expect[0]
    if surface in ("forked", "mcp") and what == "killed":
        # A forked session has no monitor: its own filter kills a
        # kill-list call outright (SECCOMP_RET_KILL_PROCESS), without
        # the call's name. The MCP server's runtimes are forked sessions
        # from its pools (--pool, default 2).
        expect, what = ("died", "SIGSYS"), "died"
    if what == "ok":
        assert (got["kind"], got["value"]) == ("ok", expect[1]), got
    elif what in ("guest_error", "syntax_error"):
        assert (got["kind"], got["type"], got["message"]) == expect, got
    elif what == "killed":
        assert got["kind"] == "worker_crashed", got
        assert ("killed by seccomp for calling %s, which no guest may call" % expect[1]
                in got["message"]), got
    elif what == "died":
        assert got["kind"] == "worker_crashed", got
        assert "killed by %s" % expect[1] in got["message"], got
    elif what == "exited":
        assert got["kind"] == "worker_crashed", got
        assert "exited with status %d" % expect[1] in got["message"], got
        assert "seccomp" not in got["message"], got
    else:
        raise AssertionError("unknown expectation %r" % (expect,))
    kind = "worker_crashed" if what in ("killed", "died", "exited") else what
    if surface != "mcp":  # MCP has results, not exit statuses
        assert got["exit"] == EXIT[kind], got


def decoded_bytes(v):
    """The text of every {"$bytes": ...} in a value (a secret returned as
    bytes arrives base64-encoded)."""
    if isinstance(v, dict) and set(v) == {"$bytes"}:
        return base64.b64decode(v["$bytes"]).decode("latin-1")
    items = v.values() if isinstance(v, dict) else v if isinstance(v, list) else []
    return "".join(decoded_bytes(x) for x in items)


def check_no_survivor(report):
    assert not report["hung"], report
    assert report["survivors"] == [], "processes outlived the case: %s" % report["survivors"]


def check_no_worker_left(report):
    """Whatever the subreaper saw, no worker process of this case is alive
    (a bounded wait: reaping is asynchronous)."""
    end = time.monotonic() + 2
    while workers_of(report["hostpid"]) and time.monotonic() < end:
        time.sleep(0.02)
    assert workers_of(report["hostpid"]) == []


@pytest.mark.parametrize("surface", ["cli", "library", "forked"])
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case(canaries, case, surface):
    report, got = run(canaries, surface, case.lang, canaries.substitute(case.code))
    everything = json.dumps(report) + json.dumps(got) + decoded_bytes(got["value"])
    canaries.check(everything)
    expect = case.forked if surface == "forked" and case.forked else case.expect
    check_outcome(expect, got, surface)
    check_no_survivor(report)
    check_no_worker_left(report)


# The MCP server's host process under a subreaper that, once the server
# exits, waits up to 2 s for every descendant and reports survivors (killing
# them by pid). argv: report path, the CLI, the server's argv[0] (a canary).
MCP_WRAPPER = r'''
import ctypes, json, os, sys, time
report, exe, argv0 = sys.argv[1:4]
if ctypes.CDLL(None).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
    sys.exit("PR_SET_CHILD_SUBREAPER failed")
pid = os.fork()
if pid == 0:
    # --scratch 0: the cases measure a session with nothing granted, as on
    # the other paths (the server's default scratch is tests/mcp's)
    os.execv(exe, [argv0, "mcp", "--sandbox", "require", "--scratch", "0"])
with open(report + ".pid.tmp", "w") as f:
    f.write(str(pid))
os.rename(report + ".pid.tmp", report + ".pid")
os.close(0)
os.close(1)
status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])

def children():
    try:
        with open("/proc/self/task/%d/children" % os.getpid()) as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []

end = time.monotonic() + 2
while time.monotonic() < end:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass
    if not children():
        break
    time.sleep(0.02)
left = children()
for p in left:
    os.kill(p, 9)
with open(report, "w") as f:
    json.dump({"rc": status, "survivors": left}, f)
'''


class McpHost(Stdio):
    """`codecage mcp` over stdio (mcp_util.Stdio's reading and calls),
    hosted under MCP_WRAPPER with the canaries' environment, working
    directory and argv[0]."""

    def __init__(self, canaries, report):
        self.report_path = report
        self._attach(subprocess.Popen(
            ["/usr/bin/python3", "-c", MCP_WRAPPER, report, CLI,
             "codecage-" + canaries.argv_secret],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=canaries.env, cwd=canaries.cwd))
        r = self.request(INIT)
        assert "result" in r, r
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        with open(report + ".pid") as f:
            self.pid = int(f.read())
        self.next_id = 1

    def stderr_text(self):
        return b"".join(x for x in self.stderr if x is not None).decode("latin-1")

    def run_case(self, lang, code):
        self.next_id += 1
        tool = "run_python" if lang == PY else "run_javascript"
        return self.call(tool, code, id=self.next_id, reset=True)

    def finish(self):
        """Close stdin; returns the wrapper's report once everything ended."""
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        self.proc.wait(60)
        with open(self.report_path) as f:
            return json.load(f)


@pytest.fixture(scope="module")
def mcp_host(canaries, tmp_path_factory):
    h = McpHost(canaries, str(tmp_path_factory.mktemp("mcp") / "report.json"))
    yield h
    if h.proc.poll() is None:
        h.finish()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_mcp(canaries, mcp_host, case):
    code = canaries.substitute(case.code).replace("@HOSTPID@", str(mcp_host.pid))
    r = mcp_host.run_case(case.lang, code)
    sc = r["structuredContent"]
    err = sc["error"] or {"kind": "ok", "type": "", "message": ""}
    got = {"kind": err["kind"], "type": err["type"], "message": err["message"],
           "value": sc["value"]}
    everything = (json.dumps(r) + mcp_host.stderr_text()
                  + decoded_bytes(sc["value"]))
    canaries.check(everything)
    # The server's runtimes are forked sessions from its pools (--pool,
    # default 2), with no tools bound: the forked outcome applies where it
    # comes from forking (no monitor), not where it comes from the tools
    # the forked surface binds (js-globals, layer "engine").
    forked = case.forked and case.layer != "engine"
    check_outcome(case.forked if forked else case.expect, got, "mcp")


def test_mcp_session_leaves_nothing(canaries, mcp_host):
    """After the MCP cases: the server exits 0 when its stdin closes, no
    descendant survives it, no worker of it is alive, and its stderr holds
    no secret."""
    report = mcp_host.finish()
    assert report == {"rc": 0, "survivors": []}, report
    assert workers_of(mcp_host.pid) == []
    canaries.check(mcp_host.stderr_text())


def test_reverse_mcp_host_survivor_is_caught(tmp_path):
    """MCP_WRAPPER sees (and kills) a process its host left behind."""
    host = tmp_path / "host"
    host.write_text("#!/bin/sh\nsleep 60 &\nexit 0\n")
    host.chmod(0o755)
    report = str(tmp_path / "report.json")
    subprocess.run(["/usr/bin/python3", "-c", MCP_WRAPPER, report, str(host), "host"],
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    with open(report) as f:
        got = json.load(f)
    assert got["rc"] == 0 and len(got["survivors"]) == 1, got


def test_forked_surface_has_tools_bound():
    """The forked surface is a session with tools bound, as the docstring
    says; each tool answers."""
    for lang in ("python", "javascript"):
        proc = subprocess.run([DRIVER, "--fork", lang, "echo(5) + aecho(2)"],
                              capture_output=True, text=True, timeout=60)
        assert json.loads(proc.stdout)["value"] == 7, proc


def test_the_table():
    """At least 60 cases, unique ids, both languages, known outcomes."""
    ids = [c.id for c in CASES]
    assert len(CASES) >= 60
    assert len(set(ids)) == len(ids)
    assert {c.lang for c in CASES} == {PY, JS}
    assert all(c.id.startswith({PY: "py-", JS: "js-"}[c.lang]) for c in CASES)
    assert all(c.expect[0] in ("ok", "guest_error", "syntax_error", "killed", "died", "exited")
               for c in CASES)


# ---- the detectors, in reverse: each must see a leak when there is one ----

def test_reverse_file_canary_is_seen_unconfined(canaries):
    """With the sandbox off the guest reads the canary, as text and as bytes
    (which the check decodes from base64), and the check says so."""
    code = canaries.substitute("[open('@VARDIR@/canary.txt').read(), "
                               "open('@TMPDIR@/canary.txt', 'rb').read()]")
    report = wrap(canaries, CLI, ["codecage", "eval", "--lang", "python", "--json",
                                  "--sandbox", "off", "--", code])
    text, raw = json.loads(report["stdout"])["value"]
    assert text == canaries.file_secret + "\n"
    assert decoded_bytes(raw) == canaries.file_secret + "\n"
    with pytest.raises(AssertionError, match="file_secret leaked"):
        canaries.check(report["stdout"])
    with pytest.raises(AssertionError, match="file_secret leaked"):
        canaries.check(decoded_bytes(raw))
    check_no_survivor(report)


def test_reverse_env_and_argv_canaries_reach_the_host(canaries):
    report = wrap(canaries, "/bin/sh", ["sh-" + canaries.argv_secret, "-c",
                                        'echo "$0"; echo "$%s"; echo @HOSTPID@' % ENV_NAME])
    lines = report["stdout"].split()
    assert lines == ["sh-" + canaries.argv_secret, canaries.env_secret, str(report["hostpid"])]
    with pytest.raises(AssertionError, match="env_secret leaked"):
        canaries.check(report["stdout"])


def test_reverse_survivor_is_caught(canaries):
    report = wrap(canaries, "/bin/sh", ["sh", "-c", "sleep 60 & echo started"])
    assert report["stdout"] == "started\n"
    assert [s["exe"] for s in report["survivors"]] == [os.path.realpath("/bin/sleep")]


def test_reverse_files_created_are_caught(canaries):
    path = os.path.join(canaries.vardir, canaries.tag)
    open(path, "w").close()
    try:
        with pytest.raises(AssertionError):
            canaries.check("")
    finally:
        os.unlink(path)
    canaries.check("")


def test_reverse_host_sockets_are_watched(canaries):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"x", ("127.0.0.1", canaries.udp))
    with pytest.raises(pytest.fail.Exception, match="a host socket got something"):
        canaries.check("")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect("\0" + canaries.abstract)
        with pytest.raises(pytest.fail.Exception, match="a host socket got something"):
            canaries.check("")
    canaries.check("")


def test_reverse_live_worker_is_seen(canaries):
    """A running eval's worker (the monitor and the namespace's pid 1) is
    found by its host's pid; once the host is killed, it is gone."""
    p = subprocess.Popen([CLI, "eval", "--lang", "python", "--json", "--",
                          "import time; time.sleep(60)"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd=canaries.cwd)
    try:
        end = time.monotonic() + 20
        while len(workers_of(p.pid)) < 2 and time.monotonic() < end:
            time.sleep(0.02)
        assert len(workers_of(p.pid)) == 2
    finally:
        p.kill()
        p.communicate()
    check_no_worker_left({"hostpid": p.pid})
