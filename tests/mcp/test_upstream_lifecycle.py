"""Code mode's upstreams when they misbehave in time rather than in
content: an eval that ends with calls in flight, an upstream that dies
while it starts, one that never reads its input, one that outlives a
killed server, one whose answer is too deep to parse. The upstream is
timed_upstream.mjs (raw JSON-RPC, its timing and manners picked by flags);
the races it makes wide are also run against build-asan's server."""
import os
import shlex
import signal
import subprocess
import time

import pytest

from conftest import CLI, assert_no_sanitizer_report
from mcp_util import HERE, Stdio, need_node, sanitized_cli

TIMED = os.path.join(HERE, "timed_upstream.mjs")


def up(name, *opts):
    """An --upstream value running timed_upstream.mjs with opts."""
    return "%s=node %s" % (name, " ".join(shlex.quote(a) for a in (TIMED, *opts)))


def sc(result):
    return result["structuredContent"]


def value(s, lang, code, **args):
    r = s.call("run_" + lang, code, **args)
    assert sc(r)["status"] == "ok", r
    return sc(r)["value"]


def http_upstream(tmp_path, *opts):
    """timed_upstream.mjs serving streamable HTTP: (its process, its URL)."""
    portfile = tmp_path / "port"
    proc = subprocess.Popen(["node", TIMED, "--http", str(portfile), *opts])
    for _ in range(600):  # a hang guard: node starts in well under a minute
        if portfile.exists() and portfile.read_text():
            return proc, "http://127.0.0.1:%s/mcp" % portfile.read_text()
        time.sleep(0.1)
    proc.kill()
    pytest.fail("timed_upstream.mjs --http did not start")


def close_checked(s, sanitized):
    s.close()
    if sanitized:
        assert_no_sanitizer_report(b"".join(x for x in s.stderr if x).decode(errors="replace"))


# b and c answer `slow` 7 s after it arrived; a never reads: the eval ends
# (timeout_s 2) with ten calls in flight. Before the fix a's second 40 kB
# call filled its pipe and held the eval's thread 5 s, and every cancel
# then waited 5 s more in poll(), while b and c answered the calls whose
# cancellation had not run yet: the cancel hook then read (stdio) or wrote
# (HTTP) the freed entry.
RACE = """
const big = 'x'.repeat(40000), calls = [];
for (let i = 0; i < 5; i++) calls.push(tools.b.slow({}), tools.c.slow({}));
calls.push(tools.a.echo({big}), tools.a.echo({big}));
await Promise.allSettled(calls);
"""


@pytest.mark.parametrize("sanitized", [False, True], ids=["plain", "asan"])
def test_eval_ending_with_upstream_calls_in_flight(tmp_path, sanitized):
    need_node()
    cli, env = sanitized_cli(tmp_path) if sanitized else (CLI, None)
    web, url = http_upstream(tmp_path, "--delay", "7000")
    s = Stdio("--scratch", "0", "--upstream", up("a", "--deaf"),
              "--upstream", up("b", "--delay", "7000"), "--upstream", "c=" + url,
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
        web.kill()
        web.wait()
