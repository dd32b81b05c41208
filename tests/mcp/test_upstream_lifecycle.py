"""Code mode's upstreams when they misbehave in time rather than in
content: an eval that ends with calls in flight, an upstream that dies
while it starts, one that never reads its input, one that outlives a
killed server, one whose answer is too deep to parse. The upstream is
timed_upstream.mjs (raw JSON-RPC, its timing and manners picked by flags);
the races it makes wide are also run against build-asan's server."""
import contextlib
import os
import shlex
import signal
import subprocess
import time

import pytest

from conftest import ASAN_BUILD, BUILD, CLI, assert_no_sanitizer_report
from mcp_util import HERE, Stdio, need_node, sanitized_cli, sc, value

TIMED = os.path.join(HERE, "timed_upstream.mjs")


def up(name, *opts):
    """An --upstream value running timed_upstream.mjs with opts."""
    return "%s=node %s" % (name, " ".join(shlex.quote(a) for a in (TIMED, *opts)))


@contextlib.contextmanager
def http_upstream(tmp_path, *opts):
    """timed_upstream.mjs serving streamable HTTP; yields its URL."""
    portfile = tmp_path / "port"
    proc = subprocess.Popen(["node", TIMED, "--http", str(portfile), *opts])
    try:
        for _ in range(600):  # a hang guard: node starts in well under a minute
            if portfile.exists() and portfile.read_text():
                break
            time.sleep(0.1)
        else:
            pytest.fail("timed_upstream.mjs --http did not start")
        yield "http://127.0.0.1:%s/mcp" % portfile.read_text()
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture(params=[False, True], ids=["plain", "asan"])
def server(request, tmp_path):
    """(the codecage binary, its environment, sanitized?): the plain
    build's, then build-asan's (mcp_util.sanitized_cli)."""
    if request.param:
        return (*sanitized_cli(tmp_path), True)
    return CLI, None, False


def close_checked(s, sanitized):
    s.close()
    if sanitized:
        assert_no_sanitizer_report(s.stderr_text())


# b and c answer `slow` late; a never reads: the eval ends (timeout_s 2)
# with twelve calls in flight. Before the fix a's second 40 kB call filled
# its pipe and held the eval's thread 5 s, and every cancel then waited
# 5 s more in poll(), while b and c answered (after 7 s) the calls whose
# cancellation had not run yet: the cancel hook then read (stdio) or wrote
# (HTTP) the freed entry. Neither wait exists now, so the race is made
# wide by cc-mcp-slowcancel (tests/meson.build), whose cancel hooks sleep
# 300 ms each: b and c answer (after 2.5 s) while the first ones sleep.
RACE = """
const big = 'x'.repeat(40000), calls = [];
for (let i = 0; i < 5; i++) calls.push(tools.b.slow({}), tools.c.slow({}));
calls.push(tools.a.echo({big}), tools.a.echo({big}));
await Promise.allSettled(calls);
"""


@pytest.mark.parametrize("exe,late", [("codecage", "7000"), ("tests/cc-mcp-slowcancel", "2500")],
                         ids=["codecage", "slowcancel"])
def test_eval_ending_with_upstream_calls_in_flight(tmp_path, server, exe, late):
    need_node()
    _, env, sanitized = server
    cli = os.path.join(ASAN_BUILD if sanitized else BUILD, exe)
    assert os.access(cli, os.X_OK), "%s is missing: scripts/test builds it" % cli
    with http_upstream(tmp_path, "--delay", late) as url:
        s = Stdio("--scratch", "0", "--upstream", up("a", "--deaf"),
                  "--upstream", up("b", "--delay", late), "--upstream", "c=" + url,
                  cli=cli, env=env)
        try:
            r = s.call("run_javascript", RACE, timeout_s=2)
            assert sc(r)["error"]["kind"] == "timeout", r
            # once b and c have sent every late answer, the server still serves
            v = value(s, "javascript", "[(await tools.b.drain()).drained, "
                      "(await tools.c.drain()).drained]")
            assert v == [6, 6], v
            assert value(s, "python", "6 * 7") == 42
        finally:
            close_checked(s, sanitized)


@pytest.mark.parametrize("spec,why", [
    ("dead=/bin/false", "upstream dead: it exited (status 1) during initialize"),
    (up("dead", "--exit-after-init"), "upstream dead: it exited (status 3) during initialize"),
])
def test_upstream_that_exits_while_it_starts_is_a_clear_error(spec, why, server):
    """Regression: 13 of 50 starts segfaulted (the pending list walked after
    its lock was dropped) and 28 of 50 died of SIGPIPE without a word."""
    need_node()
    cli, env, _ = server
    outcomes = set()
    for _ in range(50):
        p = subprocess.run([cli, "mcp", "--upstream", spec], capture_output=True, text=True,
                           timeout=60, stdin=subprocess.DEVNULL, env=env)
        outcomes.add((p.returncode, p.stderr.strip()))
    assert outcomes == {(1, "codecage mcp: --upstream: " + why)}, outcomes


def test_upstream_flooding_pings_never_holds_the_eval(server):
    """Regression: an upstream that floods ping requests and never reads
    its stdin held the upstream's lock in a 5 s poll() per answer, and the
    eval's thread waited behind it: an eval that only starts a call (and
    ends at once, cancelling it) ran past its 3 s deadline."""
    need_node()
    cli, env, sanitized = server
    s = Stdio("--scratch", "0", "--upstream", up("f", "--flood-pings"), cli=cli, env=env)
    try:
        assert value(s, "javascript", "tools.f.echo({}); 'not waiting'", timeout_s=3) == \
            "not waiting"
        r = s.call("run_javascript", "await tools.f.echo({})", timeout_s=3)
        assert sc(r)["error"]["kind"] == "timeout", r
        assert s.request({"jsonrpc": "2.0", "id": 7, "method": "ping"})["id"] == 7
        assert value(s, "python", "6 * 7", timeout_s=3) == 42
    finally:
        close_checked(s, sanitized)


def gone(pid):
    """The process pid has exited (no /proc entry, or a zombie)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.parametrize("restarted", [False, True], ids=["first", "restarted"])
def test_upstream_dies_with_a_killed_server(tmp_path, restarted):
    """Regression: upstreams outlived a crashed or SIGKILLed server. This
    one never reads its stdin, so it never sees it close: only the
    parent-death signal ends it. One started again by a call (from a
    thread that ends once the call is sent) must die with the server too,
    not with that thread."""
    need_node()
    pidfile = tmp_path / "pid"
    s = Stdio("--scratch", "0", "--upstream", up("u", "--deaf", "--pidfile", str(pidfile)))
    try:
        pid = int(pidfile.read_text())
        if restarted:
            os.kill(pid, signal.SIGKILL)  # our own test upstream, by its pid
            for _ in range(30):  # a hang guard: the first or second call restarts it
                # the death it found, its deadline (it is deaf), or an
                # answer (a new deaf instance reads three lines first)
                s.call("run_javascript", "await tools.u.echo({})", timeout_s=1)
                if int(pidfile.read_text() or pid) != pid:
                    break
            assert int(pidfile.read_text()) != pid
            pid = int(pidfile.read_text())
        assert not gone(pid)
    finally:
        s.proc.kill()  # the server, SIGKILL: no cleanup of its own runs
        s.proc.wait()
    for _ in range(300):  # a hang guard; the kernel sends SIGKILL at once
        if gone(pid):
            break
        time.sleep(0.1)
    assert gone(pid), "upstream %d outlived the server" % pid


def test_a_failed_restart_is_reported_as_such(tmp_path):
    """A call to an upstream that died starts it again on a thread of its
    own; when that start fails, the call says why (its own start's
    words), not how the instance started for it died."""
    need_node()
    pidfile = tmp_path / "pid"
    s = Stdio("--scratch", "0", "--upstream",
              up("u", "--once", str(tmp_path / "once"), "--pidfile", str(pidfile)))
    try:
        assert value(s, "javascript", "(await tools.u.count()).calls") == 1
        os.kill(int(pidfile.read_text()), signal.SIGKILL)  # our own test upstream
        for _ in range(5):  # the first call may still find the dead one
            err = sc(s.call("run_javascript", "await tools.u.count()"))["error"]
            if "during" in err["message"]:
                break
        assert err["type"] == "UpstreamError", err
        assert err["message"] == ("upstream u: it exited (status 3) during initialize (it is "
                                  "tried again on the next call)"), err
    finally:
        s.close()


def test_a_restarted_upstream_does_not_inherit_the_clients_stdout(tmp_path):
    """Regression: the stdio transport kept the client's stdout on a
    descriptor without O_CLOEXEC, so an upstream started again by a call
    held the client's pipe (and could write to it)."""
    need_node()
    pidfile = tmp_path / "pid"
    s = Stdio("--scratch", "0", "--upstream", up("u", "--pidfile", str(pidfile)))
    try:
        client = "pipe:[%d]" % os.fstat(s.proc.stdout.fileno()).st_ino
        assert client not in value(s, "javascript", "await tools.u.fds()")
        os.kill(int(pidfile.read_text()), signal.SIGKILL)  # our own test upstream
        for _ in range(5):  # the first call may still find the dead one
            r = s.call("run_javascript", "await tools.u.fds()")
            if sc(r)["status"] == "ok":
                break
        assert sc(r)["status"] == "ok", r
        assert client not in sc(r)["value"], sc(r)["value"]
    finally:
        s.close()


def test_answer_too_deep_to_parse_is_reported(tmp_path, server):
    """Regression: an answer nested deeper than jansson parses was dropped
    as malformed, so its request waited: at start "no answer to tools/list
    within 15 s", in a call its whole deadline."""
    need_node()
    cli, env, sanitized = server
    p = subprocess.run([cli, "mcp", "--upstream", up("d", "--deep-list", "3000")],
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                       env=env)
    assert p.returncode == 1, p.stderr
    assert p.stderr.strip() == (
        "codecage mcp: --upstream: upstream d: its answer to tools/list was nested deeper than "
        "2048 levels, more than the JSON parser takes"), p.stderr
    with http_upstream(tmp_path, "--deep", "3000") as url:
        s = Stdio("--scratch", "0", "--upstream", up("d", "--deep", "3000"),
                  "--upstream", "h=" + url, cli=cli, env=env)
        try:
            for name in ("d", "h"):
                r = s.call("run_javascript", "await tools.%s.deep()" % name, timeout_s=20)
                err = sc(r)["error"]
                assert err["type"] == "UpstreamError", r
                assert "nested deeper than 2048 levels" in err["message"], r
            assert value(s, "javascript", "(await tools.d.count()).calls") == 2
        finally:
            close_checked(s, sanitized)


LOOPING_THREAD = """
import threading
def loop():
    while True:
        try:
            tools.b.echo()
        except Exception:
            pass
threading.Thread(target=loop, daemon=True).start()
'started'
"""


def test_no_guest_code_runs_without_a_budget(tmp_path):
    """Regression: a call's `files` were written (their folders made by an
    eval) before the call's budget was set, and with none in force: a
    guest thread left running by the previous call made 650-1,360
    upstream calls under --max-tool-calls 1. The upstream counts what it
    received: at most the budget of each tools/call made."""
    need_node()
    count = tmp_path / "count"
    s = Stdio("--max-tool-calls", "1", "--upstream", up("b", "--countfile", str(count)))
    try:
        assert value(s, "python", LOOPING_THREAD) == "started"
        for i in range(3):
            files = {"d%d/sub/f.txt" % i: "x", "e%d/g.txt" % i: "y"}
            assert value(s, "python", "len(open('/tmp/d%d/sub/f.txt').read())" % i,
                         files=files) == 1
        made = int(count.read_text()) if count.exists() else 0
        assert made <= 4, "%d upstream calls under a budget of 1 per tools/call" % made
    finally:
        s.close()
