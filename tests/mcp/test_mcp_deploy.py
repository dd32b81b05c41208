"""`codecage mcp` for real deployments (issue 18): runtimes from pooled
fork servers (--pool), inputs, bearer-token authentication
(--auth-token-file), GET /metrics and GET /healthz."""
import http.client
import json
import os
import re
import subprocess
from urllib.parse import urlsplit

from conftest import CLI
from mcp_util import INIT, Stdio, http_server

JSON = "application/json"


class Conn:
    """Raw HTTP to one server; token: sent as a bearer token."""

    def __init__(self, url, token=None):
        u = urlsplit(url)
        self.host, self.port, self.token = u.hostname, u.port, token

    def send(self, method, path="/mcp", body=None, headers=None, token=True):
        h = dict(headers or {})
        if token and self.token:
            h["Authorization"] = "Bearer " + self.token
        c = http.client.HTTPConnection(self.host, self.port, timeout=60)
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), data

    def post(self, msg, sid=None, **kw):
        h = {"Content-Type": JSON, "Accept": JSON}
        if sid:
            h["Mcp-Session-Id"] = sid
        return self.send("POST", body=json.dumps(msg), headers=h, **kw)

    def init(self):
        status, headers, data = self.post(INIT)
        assert status == 200, (status, data)
        sid = headers["mcp-session-id"]
        assert self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)[0] == 202
        return sid

    def call(self, sid, tool, code, id=1, **args):
        status, _, data = self.post({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                                     "params": {"name": tool,
                                                "arguments": {"code": code, **args}}}, sid)
        assert status == 200, (status, data)
        return json.loads(data)

    def metrics(self):
        status, headers, data = self.send("GET", "/metrics")
        assert status == 200, (status, data)
        assert headers["content-type"].startswith("text/plain; version=0.0.4")
        return parse_metrics(data.decode())


def parse_metrics(text):
    """Prometheus text -> {'name{labels}': value}; every sample line must parse
    and every family have HELP and TYPE."""
    out, typed = {}, set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            typed.add(line.split()[2])
            continue
        if line.startswith("#") or not line:
            continue
        m = re.fullmatch(r'([a-z_]+)(\{[a-z_]+="[^"]*"(?:,[a-z_]+="[^"]*")*\})? (\S+)', line)
        assert m, line
        family = re.sub(r"_(bucket|sum|count)$", "", m.group(1))
        assert m.group(1) in typed or family in typed, line
        out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return out


def value(r):
    return r["result"]["structuredContent"]["value"]


# ---- 1. fast sessions: runtimes come from the pool ----

def test_resets_and_new_sessions_are_checkouts_from_the_pool():
    with http_server("--pool", "2") as url:
        c = Conn(url)
        a = c.init()
        for lang in ("run_python", "run_javascript"):
            assert value(c.call(a, lang, "x = 41; x" if "py" in lang else "var x = 41; x")) == 41
            for _ in range(3):
                r = c.call(a, lang, "'x' in globals()" if "py" in lang else "typeof x",
                           reset=True)
                # a checkout is a fresh session: nothing of the previous one
                assert value(r) in (False, "undefined"), r
        b = c.init()
        assert value(c.call(b, "run_python", "'x' in globals()")) is False
        # a session's scratch is its own, also when both come from one pool
        c.call(a, "run_python", "open('/tmp/mine', 'w').write('a')")
        assert value(c.call(b, "run_python", "import os; os.path.exists('/tmp/mine')")) is False
        m = c.metrics()
        for lang in ("python", "javascript"):
            pooled = m['codecage_mcp_runtimes_started_total{language="%s",source="pool"}' % lang]
            fresh = m['codecage_mcp_runtimes_started_total{language="%s",source="fresh"}' % lang]
            assert pooled >= 4 and fresh == 0, m
            assert m['codecage_mcp_pool_started{language="%s"}' % lang] == 1
        assert m['codecage_mcp_runtimes_replaced_total{language="python"}'] == 3
        assert m["codecage_mcp_pool_size"] == 2


def test_pool_0_starts_a_fresh_worker_each_time():
    with http_server("--pool", "0") as url:
        c = Conn(url)
        sid = c.init()
        c.call(sid, "run_javascript", "1")
        c.call(sid, "run_javascript", "1", reset=True)
        m = c.metrics()
        assert m['codecage_mcp_runtimes_started_total{language="javascript",source="fresh"}'] == 2
        assert m['codecage_mcp_runtimes_started_total{language="javascript",source="pool"}'] == 0
        assert m['codecage_mcp_pool_started{language="javascript"}'] == 0


def test_pool_flag_is_checked():
    r = subprocess.run([CLI, "mcp", "--pool", "65"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "--pool wants a count" in r.stderr


# ---- 2. inputs ----

def test_inputs_become_globals_in_both_languages():
    s = Stdio()
    tools = s.request({"jsonrpc": "2.0", "id": 90, "method": "tools/list"})["result"]["tools"]
    for t in tools:
        assert t["inputSchema"]["properties"]["inputs"]["type"] == "object", t
    inputs = {"n": 20, "name": "ada", "xs": [1, 2.5, None, True], "m": {"k": "v"},
              "big": {"$bigint": "123456789012345678901234567890"},
              "raw": {"$bytes": "AAH/"}, "inf": {"$float": "-Infinity"},
              "when": {"$date": "2020-01-02T03:04:05.250000Z"}}
    r = s.call("run_python", "[n + 1, name, xs, m['k'], big + 1, raw, inf, when.isoformat()]",
               inputs=inputs)
    assert r["structuredContent"]["value"] == [
        21, "ada", [1, 2.5, None, True], "v", {"$bigint": "123456789012345678901234567891"},
        {"$bytes": "AAH/"}, {"$float": "-Infinity"}, "2020-01-02T03:04:05.250000+00:00"], r
    r = s.call("run_javascript", "[n + 1, name, xs.length, m.k, typeof big, raw.length]", id=2,
               inputs=inputs)
    assert r["structuredContent"]["value"] == [21, "ada", 4, "v", "bigint", 3], r
    s.close()


def test_bad_inputs_name_the_key():
    s = Stdio()
    bad = [({"1x": 1}, "'1x'"), ({"ok": 1, "no-dash": 2}, "'no-dash'"),
           ({"b": {"$bytes": "!!"}}, "inputs.b: $bytes"),
           ({"f": {"$float": "1.5"}}, "inputs.f: $float"),
           ({"d": {"$date": "yesterday"}}, "inputs.d: $date"),
           ({"i": {"$bigint": "12a"}}, "inputs.i: $bigint"),
           ([1, 2], "inputs must be an object")]
    for i, (inputs, want) in enumerate(bad):
        r = s.request({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
                       "params": {"name": "run_python",
                                  "arguments": {"code": "1", "inputs": inputs}}})
        assert r["error"]["code"] == -32602, (inputs, r)
        assert want in r["error"]["message"], (inputs, r)
    # Over set_global's cap (the 1 MiB value cap): a tool error naming the key.
    r = s.call("run_python", "1", id=30, inputs={"huge": "x" * (1100 << 10)})
    assert r["isError"] and "inputs.huge" in r["content"][0]["text"], r
    # A JavaScript const of that name: also a tool error naming the key.
    s.call("run_javascript", "const taken = 1", id=31)
    r = s.call("run_javascript", "taken", id=32, inputs={"taken": 2})
    assert r["isError"] and "inputs.taken" in r["content"][0]["text"], r
    # and the session goes on
    assert s.call("run_python", "k * 2", id=33, inputs={"k": 21})["structuredContent"][
        "value"] == 42
    s.close()


# ---- 3. every runtime option has a flag, and the descriptions say so ----

def test_limit_flags_reach_the_runtime_and_the_descriptions():
    s = Stdio("--max-result", "2048", "--cpu", "20", "--max-open-files", "16",
              "--max-file-size", "1")
    tools = s.request({"jsonrpc": "2.0", "id": 90, "method": "tools/list"})["result"]["tools"]
    for t in tools:
        assert "2 KiB of result value" in t["description"], t["description"]
    r = s.call("run_python", "'x' * 5000")
    assert r["structuredContent"]["error"]["kind"] == "output_limit", r
    r = s.call("run_python", "inputs_ok = len(v)", id=2, inputs={"v": "y" * 100000})  # over 2 KiB + the 64 KiB frame envelope
    assert r["isError"] and "inputs.v" in r["content"][0]["text"], r
    r = s.call("run_python", "fs = [open('/tmp/f%d' % i, 'w') for i in range(20)]", id=3)
    assert "Too many open files" in r["content"][0]["text"], r
    r = s.call("run_python", "open('/tmp/big', 'wb').write(b'z' * (2 << 20))", id=4)
    assert r["isError"], r
    assert s.call("run_python", "'fine'", id=5, reset=True)["structuredContent"]["value"] == "fine"
    s.close()
    for flag, bad in (("--max-result", "10"), ("--cpu", "0"), ("--max-open-files", "3"),
                      ("--max-file-size", "x")):
        r = subprocess.run([CLI, "mcp", flag, bad], capture_output=True, text=True, timeout=30)
        assert r.returncode == 2 and flag + " wants" in r.stderr, r.stderr


# ---- 4. authentication ----

TOKEN = "s3cret-token-0123456789abcdef"


def token_file(tmp_path, text=TOKEN + "\n"):
    p = tmp_path / "token"
    p.write_text(text)
    return str(p)


def test_bearer_token_is_required_on_every_request(tmp_path):
    with http_server("--auth-token-file", token_file(tmp_path)) as url:
        c = Conn(url, TOKEN)
        sid = c.init()
        assert value(c.call(sid, "run_python", "6 * 7")) == 42
        for headers in ({}, {"Authorization": "Bearer wrong-token-0123456789abcdef"},
                        {"Authorization": "Bearer " + TOKEN[:-1]},
                        {"Authorization": "Bearer " + TOKEN + "x"},
                        {"Authorization": "Basic " + TOKEN}):
            h = {"Content-Type": JSON, "Mcp-Session-Id": sid, **headers}
            for method, path in (("POST", "/mcp"), ("DELETE", "/mcp"), ("GET", "/metrics")):
                body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
                status, rh, data = c.send(method, path, body if method == "POST" else None,
                                          h, token=False)
                assert status == 401, (headers, method, status, data)
                assert rh["www-authenticate"].startswith("Bearer"), rh
                assert "--auth-token-file" in json.loads(data)["error"]["message"]
        # a new session needs the token too
        status, _, _ = c.post(INIT, token=False)
        assert status == 401
        # /healthz stays open (load balancers); the session is untouched
        assert c.send("GET", "/healthz", token=False)[:1] == (200,)
        assert value(c.call(sid, "run_python", "'still here'", id=2)) == "still here"


def test_without_a_token_requests_go_through():
    # The reverse of the test above: the same requests without --auth-token-file.
    with http_server() as url:
        c = Conn(url)
        sid = c.init()
        assert value(c.call(sid, "run_python", "6 * 7")) == 42
        assert c.send("GET", "/metrics")[0] == 200


def test_bad_token_files_are_refused(tmp_path):
    for text, want in (("short\n", "16 to 4096"),
                       ("has a space in the token 12345\n", "16 to 4096")):
        r = subprocess.run([CLI, "mcp", "--http", "127.0.0.1:0", "--auth-token-file",
                            token_file(tmp_path, text)], capture_output=True, text=True,
                           timeout=30)
        assert r.returncode == 2 and want in r.stderr, r.stderr
    r = subprocess.run([CLI, "mcp", "--http", "127.0.0.1:0", "--auth-token-file",
                        str(tmp_path / "missing")], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "missing" in r.stderr, r.stderr
    r = subprocess.run([CLI, "mcp", "--auth-token-file", token_file(tmp_path)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "is for --http" in r.stderr, r.stderr


def test_non_loopback_bind_needs_a_token(tmp_path):
    r = subprocess.run([CLI, "mcp", "--http", "0.0.0.0:0"], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 2 and "--auth-token-file" in r.stderr, r.stderr
    p = subprocess.Popen([CLI, "mcp", "--http", "0.0.0.0:0", "--auth-token-file",
                          token_file(tmp_path)], stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()
        port = int(re.search(r":(\d+)/mcp", line).group(1))
        c = Conn("http://127.0.0.1:%d/mcp" % port, TOKEN)
        assert c.post(INIT, token=False)[0] == 401
        c.init()
    finally:
        p.terminate()
        assert p.wait(30) == 0


# ---- 5. metrics and health ----

def test_metrics_count_calls_by_tool_and_outcome():
    with http_server() as url:
        c = Conn(url)
        status, headers, data = c.send("GET", "/healthz")
        assert (status, data) == (200, b"ok\n")
        assert c.send("POST", "/metrics", b"{}")[0] == 405
        sid = c.init()
        c.init()
        c.call(sid, "run_python", "1")
        c.call(sid, "run_python", "2")
        c.call(sid, "run_python", "raise ValueError('x')")
        c.call(sid, "run_javascript", "syntax error here")
        c.post({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                "params": {"name": "run_python", "arguments": {}}}, sid)
        c.post({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
                "params": {"name": "nope", "arguments": {}}}, sid)
        m = c.metrics()
        calls = {k: v for k, v in m.items() if k.startswith("codecage_mcp_calls_total")}
        assert calls == {
            'codecage_mcp_calls_total{tool="run_python",outcome="ok"}': 2,
            'codecage_mcp_calls_total{tool="run_python",outcome="guest_error"}': 1,
            'codecage_mcp_calls_total{tool="run_python",outcome="invalid_params"}': 1,
            'codecage_mcp_calls_total{tool="run_javascript",outcome="syntax_error"}': 1,
            'codecage_mcp_calls_total{tool="unknown",outcome="invalid_params"}': 1}, m
        assert m["codecage_mcp_call_duration_seconds_count"] == 6
        assert m['codecage_mcp_call_duration_seconds_bucket{le="+Inf"}'] == 6
        buckets = [v for k, v in m.items() if k.startswith("codecage_mcp_call_duration_seconds_b")]
        assert buckets == sorted(buckets)
        assert m["codecage_mcp_sessions"] == 2
        assert c.send("DELETE", headers={"Mcp-Session-Id": sid})[0] == 200
        assert c.metrics()["codecage_mcp_sessions"] == 1
        assert 0 <= m['codecage_mcp_pool_ready{language="python"}'] <= 2


def test_get_event_stream_carries_notifications_between_posts():
    with http_server("--pool", "0") as url:
        c = Conn(url)
        sid = c.init()
        assert c.post({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel",
                       "params": {"level": "info"}}, sid)[0] == 200
        u = urlsplit(url)
        stream = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        stream.request("GET", "/mcp", headers={"Accept": "text/event-stream",
                                               "Mcp-Session-Id": sid})
        resp = stream.getresponse()
        assert resp.status == 200 and resp.getheader("content-type") == "text/event-stream"
        # one stream per session
        status, _, data = c.send("GET", "/mcp", headers={"Accept": "text/event-stream",
                                                         "Mcp-Session-Id": sid})
        assert status == 409, (status, data)
        # a call answered as plain JSON: its log notification goes to the stream
        assert value(c.call(sid, "run_python", "1 + 1", id=3)) == 2
        line = resp.readline()
        while line.startswith(b":") or line == b"\n":
            line = resp.readline()
        assert line == b"event: message\n", line
        msg = json.loads(resp.readline().decode()[len("data: "):])
        assert msg["method"] == "notifications/message", msg
        assert "started the python runtime" in msg["params"]["data"], msg
        # the session ends: so does its stream
        assert c.send("DELETE", headers={"Mcp-Session-Id": sid})[0] == 200
        rest = resp.read()
        assert b"notifications" not in rest, rest
        stream.close()
        # unknown sessions and a missing Accept
        assert c.send("GET", "/mcp", headers={"Accept": "text/event-stream",
                                              "Mcp-Session-Id": sid})[0] == 404
        assert c.send("GET", "/mcp", headers={"Mcp-Session-Id": c.init()})[0] == 406


def test_run_python_description_says_what_is_installed():
    s = Stdio()
    tools = s.request({"jsonrpc": "2.0", "id": 90, "method": "tools/list"})["result"]["tools"]
    desc = {t["name"]: t["description"] for t in tools}
    found = re.search(r"Found in this sandbox: Python (3\.\d+\.\d+); importable beyond the "
                      r"standard library: ([^\n]*)\.$", desc["run_python"])
    assert found, desc["run_python"]
    version = s.call("run_python", "import platform; platform.python_version()")
    assert found.group(1) == version["structuredContent"]["value"]
    # what it names, the guest can import (and numpy exactly when it is there)
    have_numpy = s.call("run_python", "import importlib.util; "
                        "importlib.util.find_spec('numpy') is not None", id=2)
    assert ("numpy " in found.group(2)) == have_numpy["structuredContent"]["value"]
    for pkg in found.group(2).split(", "):
        if pkg != "nothing else":
            mod = pkg.split()[0]
            r = s.call("run_python", "import %s; 1" % mod, id=3)
            assert r["structuredContent"]["value"] == 1, (mod, r)
    assert "Found in this sandbox" not in desc["run_javascript"]
    s.close()
