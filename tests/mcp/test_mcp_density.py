"""`codecage mcp --fork-max-sessions` (issue 23): each language's fork
server holds at most that many runtimes; past it a call that needs a new
runtime gets a clear tool error naming the flag (not a hang, and not a
worker started past the cap), the runtimes already running keep working,
and GET /metrics shows the cap."""
import http.client
import json
from urllib.parse import urlsplit

from mcp_util import http_server
from test_http_raw import Conn


def result(data):
    return json.loads(data)["result"]


def test_past_fork_max_sessions_a_call_is_a_tool_error_naming_the_flag():
    with http_server("--pool", "1", "--fork-max-sessions", "2") as url:
        c = Conn(url)
        sids = [c.init() for _ in range(3)]
        for sid in sids[:2]:
            r = result(c.call(sid, "run_javascript", "40 + 2")[1])
            assert r["structuredContent"]["value"] == 42, r
        r = result(c.call(sids[2], "run_javascript", "40 + 2")[1])
        assert r["isError"] is True, r
        text = r["content"][0]["text"]
        assert "--fork-max-sessions 2" in text and "max_sessions" in text, text
        for sid in sids[:2]:  # the live ones are unaffected
            r = result(c.call(sid, "run_javascript", "1 + 1")[1])
            assert r["structuredContent"]["value"] == 2, r
        u = urlsplit(url)
        h = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        h.request("GET", "/metrics")
        body = h.getresponse().read().decode()
        h.close()
        assert "\ncodecage_mcp_fork_max_sessions 2\n" in body, body


def test_fork_max_sessions_below_the_pool_is_a_usage_error():
    import subprocess
    from mcp_util import CLI
    p = subprocess.run([CLI, "mcp", "--pool", "4", "--fork-max-sessions", "2"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "--fork-max-sessions must be at least --pool" in p.stderr
    p = subprocess.run([CLI, "mcp", "--fork-max-sessions", "5000"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "--fork-max-sessions wants a count from 1 to 4096" in p.stderr


def soft_nofile_of(limits_hard, *flags):
    """The soft RLIMIT_NOFILE `codecage mcp --http` runs with, started with
    a soft limit of 256 and the given hard limit."""
    import re
    import resource
    import subprocess
    from mcp_util import CLI

    def low():
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, limits_hard))
    p = subprocess.Popen([CLI, "mcp", "--http", "127.0.0.1:0", "--pool", "0", *flags],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=low)
    try:
        line = p.stderr.readline()
        assert "listening on" in line, line
        with open("/proc/%d/limits" % p.pid) as f:
            row = [x for x in f if x.startswith("Max open files")][0]
        return int(re.split(r"\s{2,}", row.strip())[1])
    finally:
        p.terminate()
        p.wait(30)


def test_the_server_raises_its_descriptor_limit_for_its_fork_servers():
    """Each runtime holds three or four descriptors in the server: with the
    usual soft limit of 1024 (256 here) two full fork servers' runtimes
    would run out long before --fork-max-sessions. The server raises its
    soft limit to 4 per runtime of both (plus the HTTP sessions and 256),
    and never past the hard limit."""
    import resource
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]  # only lowered here
    assert soft_nofile_of(hard, "--fork-max-sessions", "100") == min(hard, 2 * 4 * 100 + 64 + 256)
    assert soft_nofile_of(hard) == min(hard, 2 * 4 * 1024 + 64 + 256)
    assert soft_nofile_of(1000) == 1000

