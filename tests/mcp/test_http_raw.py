"""`codecage mcp --http` with raw HTTP (http.client): statuses and JSON-RPC
errors for bad input, sessions (Mcp-Session-Id, DELETE, 404 after),
Origin/Host checks, MCP-Protocol-Version, oversized bodies, max-sessions,
idle reaping. The server must keep serving after each."""
import http.client
import json
import socket
import time
from urllib.parse import urlsplit

from mcp_util import INIT, http_server

JSON = "application/json"
BOTH = "application/json, text/event-stream"


class Conn:
    def __init__(self, url):
        u = urlsplit(url)
        self.host, self.port = u.hostname, u.port

    def post(self, body, session=None, headers=None, accept=JSON, ctype=JSON):
        h = {"Content-Type": ctype, "Accept": accept}
        if session:
            h["Mcp-Session-Id"] = session
        h.update(headers or {})
        if not isinstance(body, (bytes, str)):
            body = json.dumps(body)
        return self.send("POST", body, h)

    def send(self, method, body=None, headers=None):
        c = http.client.HTTPConnection(self.host, self.port, timeout=60)
        c.request(method, "/mcp", body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), data

    def init(self):
        status, headers, data = self.post(INIT)
        assert status == 200, (status, data)
        assert json.loads(data)["result"]["protocolVersion"] == "2025-06-18"
        sid = headers["mcp-session-id"]
        assert len(sid) == 32
        assert self.post({"jsonrpc": "2.0", "method": "notifications/initialized"},
                         sid)[0] == 202
        return sid

    def call(self, sid, tool, code, id=1, accept=JSON):
        status, headers, data = self.post(
            {"jsonrpc": "2.0", "id": id, "method": "tools/call",
             "params": {"name": tool, "arguments": {"code": code}}}, sid, accept=accept)
        assert status == 200, (status, data)
        return headers, data


def error(data):
    return json.loads(data)["error"]["code"]


def test_sessions_calls_and_delete():
    with http_server() as url:
        c = Conn(url)
        sid = c.init()
        _, data = c.call(sid, "run_python", "x = 20")
        headers, data = c.call(sid, "run_python", "x + 22")
        assert headers["content-type"] == JSON
        assert json.loads(data)["result"]["structuredContent"]["value"] == 42
        # tools/call as an event stream when the client accepts one
        headers, data = c.call(sid, "run_javascript", "1 + 1", id=9, accept=BOTH)
        assert headers["content-type"] == "text/event-stream"
        events = [json.loads(line[6:]) for line in data.decode().splitlines()
                  if line.startswith("data: ")]
        assert events[-1]["id"] == 9 and events[-1]["result"]["structuredContent"]["value"] == 2
        # a second session does not see the first one's state
        sid2 = c.init()
        _, data = c.call(sid2, "run_python", "'x' in globals()")
        assert json.loads(data)["result"]["structuredContent"]["value"] is False
        assert c.send("DELETE", headers={"Mcp-Session-Id": sid})[0] == 200
        status, _, data = c.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, sid)
        assert status == 404 and error(data) == -32600
        assert c.send("DELETE", headers={"Mcp-Session-Id": sid})[0] == 404
        assert c.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, sid2)[0] == 200


def test_bad_requests_get_http_and_jsonrpc_errors():
    with http_server("--max-request", "65536") as url:
        c = Conn(url)
        sid = c.init()
        cases = [
            (c.post(b"\x00\xff garbage", sid), 400, -32700),
            (c.post(b"{\"jsonrpc\": \"2.0\", \"id\": 1", sid), 400, -32700),
            (c.post([{"jsonrpc": "2.0", "id": 1, "method": "ping"}], sid), 400, -32600),
            (c.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}), 400, -32600),  # no session
            (c.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, "f" * 32), 404, -32600),
            (c.post({"jsonrpc": "2.0", "id": 1, "method": "nope"}, sid), 200, -32601),
            (c.post({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "run_python", "arguments": {}}}, sid), 200, -32602),
            (c.post(b"{}", sid, ctype="text/plain"), 415, -32600),
            (c.post(b"x" * 200000, sid), 413, -32600),
            (c.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, sid,
                    headers={"MCP-Protocol-Version": "1999-01-01"}), 400, -32600),
            (c.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, sid,
                    headers={"Origin": "http://evil.example"}), 403, -32600),
            (c.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, sid,
                    headers={"Host": "evil.example:80"}), 403, -32600),
            (c.send("GET", headers={"Mcp-Session-Id": sid}), 406, -32600),  # no Accept
            (c.send("PUT", b"{}", {"Mcp-Session-Id": sid}), 405, -32600),
        ]
        # \u0000 and lone surrogates: refused, with the request's own id
        for i, esc in enumerate([b"\\u0000", b"\\ud800"]):
            status, _, data = c.post(b'{"jsonrpc": "2.0", "id": %d, "method": "ping", '
                                     b'"params": {"x": "%s"}}' % (40 + i, esc), sid)
            assert status == 400 and json.loads(data)["id"] == 40 + i, (status, data)
            assert error(data) == -32600 and b"JSON_" not in data, data
        for i, ((status, headers, data), want_status, want_code) in enumerate(cases):
            assert status == want_status, (i, status, data)
            assert error(data) == want_code, (i, data)
        assert cases[13][0][1]["allow"] == "GET, POST, DELETE"
        # A loopback Origin is fine; the protocol version header too.
        status, _, data = c.post({"jsonrpc": "2.0", "id": 5, "method": "ping"}, sid,
                                 headers={"Origin": "http://localhost:3000",
                                          "MCP-Protocol-Version": "2025-06-18"})
        assert (status, json.loads(data)) == (200, {"jsonrpc": "2.0", "id": 5, "result": {}})
        _, data = c.call(sid, "run_javascript", "'still serving'")
        assert json.loads(data)["result"]["structuredContent"]["value"] == "still serving"


def head_of(sock):
    """The status line and headers the server sent on sock."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def test_content_length_over_max_request_gets_413_before_the_body():
    """Regression: a Content-Length over --max-request was only refused
    once the whole body had been read (and dropped): the client sent it
    all, or waited for ever for an answer it never got."""
    with http_server("--max-request", "65536") as url:
        c = Conn(url)
        sid = c.init()
        for expect in (b"", b"Expect: 100-continue\r\n"):
            with socket.create_connection((c.host, c.port), timeout=60) as sock:
                sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                             b"Content-Type: application/json\r\nAccept: application/json\r\n"
                             b"Mcp-Session-Id: " + sid.encode() + b"\r\n" + expect +
                             b"Content-Length: 100000000\r\n\r\n")
                head = head_of(sock)  # no body sent: the answer comes without one
                assert head.startswith(b"HTTP/1.1 413"), head
        status, _, data = c.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, sid)
        assert status == 200, data


def test_max_sessions_refuses_new_ones_with_a_clear_error():
    with http_server("--max-sessions", "2") as url:
        c = Conn(url)
        a, b = c.init(), c.init()
        status, _, data = c.post(INIT)
        assert status == 503 and error(data) == -32000, data
        assert "--max-sessions" in json.loads(data)["error"]["message"]
        assert c.send("DELETE", headers={"Mcp-Session-Id": a})[0] == 200
        c.init()  # room again
        assert c.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, b)[0] == 200


def test_idle_sessions_are_reaped():
    with http_server("--idle-timeout", "0.5", "--max-sessions", "1") as url:
        c = Conn(url)
        sid = c.init()
        c.call(sid, "run_python", "1")
        time.sleep(2)  # not a timing check: lets the reaper pass
        status, _, _ = c.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, sid)
        assert status == 404
        c.init()  # its slot is free again
