"""The MCP server streams guest output while a call runs (issue 16, item 1):
notifications/message (logger stdout/stderr) and, with a progressToken,
notifications/progress, over stdio and in a streamable-HTTP event stream,
before the result. Latency only as ordering: the guest prints and then
waits far longer than BOUND; the notifications must come while the call
still runs, then the test ends the call."""
import http.client
import json
import time
from urllib.parse import urlsplit

import pytest

from mcp_util import INIT, Stdio, http_server

BOUND = 15  # seconds: only reached when output is not streamed

WAIT = {
    "python": "import sys, time\nprint('first', flush=True)\nprint('oops', file=sys.stderr)\n"
              "time.sleep(60)",
    "javascript": "console.log('first'); console.error('oops'); for (;;) {}",
}
TOOL = {"python": "run_python", "javascript": "run_javascript"}


def _call(id, lang, code, token=None):
    params = {"name": TOOL[lang], "arguments": {"code": code}}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


def _output_logs(msgs):
    return [(m["params"]["logger"], m["params"]["data"]) for m in msgs
            if m.get("method") == "notifications/message"
            and m["params"]["logger"] in ("stdout", "stderr")]



def _until_reply(s):
    """The notifications s sends before its next reply, and that reply."""
    msgs = []
    while True:
        m = s.read(BOUND)
        if "method" not in m:
            return msgs, m
        msgs.append(m)

@pytest.mark.parametrize("lang", ["python", "javascript"])
def test_stdio_streams_output_and_progress_before_the_result(lang):
    s = Stdio()
    try:
        s.send(_call(1, lang, WAIT[lang], token="tok"))
        seen = []
        while len(_output_logs(seen)) < 2 or not any(
                m.get("method") == "notifications/progress" for m in seen):
            m = s.read(BOUND)
            assert "method" in m, f"a response came before the streamed output: {m}"
            seen.append(m)
        assert _output_logs(seen) == [("stdout", "first"), ("stderr", "oops")]
        levels = {m["params"]["level"] for m in seen if m["method"] == "notifications/message"}
        assert levels == {"info"}
        prog = [m["params"] for m in seen if m["method"] == "notifications/progress"]
        assert prog[0] == {"progressToken": "tok", "progress": 1, "message": "first"}
        # the call still runs: cancel it; the server goes on
        s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 1}})
        assert s.call(TOOL[lang], "1 + 1", id=2)["structuredContent"]["value"] == 2
    finally:
        s.close()


def test_stdio_no_progress_without_a_token_and_no_logs_above_info():
    s = Stdio()
    try:
        s.send(_call(1, "python", "print('a')\nprint('b')\n7"))
        msgs, m = _until_reply(s)
        assert m["result"]["structuredContent"]["stdout"] == "a\nb\n"
        assert [x["method"] for x in msgs if x["method"] == "notifications/progress"] == []
        assert "".join(d + "\n" for _, d in _output_logs(msgs)) == "a\nb\n"
        assert s.request({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel",
                          "params": {"level": "warning"}})["result"] == {}
        s.send(_call(3, "python", "print('c')"))
        m = s.read(BOUND)
        assert m.get("id") == 3, f"output logged above the client's level: {m}"
    finally:
        s.close()


def test_stdio_flood_is_coalesced():
    """20,000 lines come as far fewer notifications, and all of them."""
    s = Stdio("--max-output", "1048576")
    try:
        s.send(_call(1, "python", "for i in range(20000): print(i)", token=7))
        msgs, m = _until_reply(s)
        out = m["result"]["structuredContent"]["stdout"]
        logs = _output_logs(msgs)
        assert "".join(d + "\n" for _, d in logs) == out == "".join(f"{i}\n" for i in range(20000))
        assert len(logs) < 2000, len(logs)
        prog = [x["params"]["progress"] for x in msgs if x["method"] == "notifications/progress"]
        assert prog == sorted(set(prog)) and prog[-1] == 20000
    finally:
        s.close()


def _post(host, port, body, sid=None):
    c = http.client.HTTPConnection(host, port, timeout=BOUND)
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if sid:
        h["Mcp-Session-Id"] = sid
    c.request("POST", "/mcp", body=json.dumps(body), headers=h)
    return c, c.getresponse()



def _http_session(u):
    """Initialize a session on the server at u (a urlsplit); its id."""
    c, r = _post(u.hostname, u.port, INIT)
    sid = r.getheader("Mcp-Session-Id")
    r.read()
    c.close()
    return sid

@pytest.mark.parametrize("lang", ["python", "javascript"])
def test_http_event_stream_carries_output_before_the_result(lang):
    with http_server() as url:
        u = urlsplit(url)
        sid = _http_session(u)
        c, r = _post(u.hostname, u.port, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                     sid)
        r.read()
        c.close()
        c, r = _post(u.hostname, u.port, _call(1, lang, WAIT[lang], token=5), sid)
        assert r.status == 200 and r.getheader("Content-Type") == "text/event-stream"
        seen = []
        while len(_output_logs(seen)) < 2:
            line = r.readline()
            assert line, f"the stream ended first: {seen}"
            if line.startswith(b"data: "):
                m = json.loads(line[6:])
                assert "method" in m, f"a response came before the streamed output: {m}"
                seen.append(m)
        assert _output_logs(seen) == [("stdout", "first"), ("stderr", "oops")]
        # still running: end the session; the stream ends with the abort
        d = http.client.HTTPConnection(u.hostname, u.port, timeout=BOUND)
        d.request("DELETE", "/mcp", headers={"Mcp-Session-Id": sid})
        assert d.getresponse().status == 200
        d.close()
        rest = [json.loads(x[6:]) for x in r.read().splitlines() if x.startswith(b"data: ")]
        c.close()
        assert rest and rest[-1]["id"] == 1 and "aborted" in rest[-1]["error"]["message"]


def test_http_client_that_leaves_mid_stream_does_not_stop_the_server():
    """The client reads the first event and hangs up while the call runs:
    the call finishes on its own thread, its events are dropped, the
    session serves the next call, and the server still exits cleanly
    (http_server checks the exit status) after waiting for that thread."""
    with http_server() as url:
        u = urlsplit(url)
        sid = _http_session(u)
        code = "import time\nfor i in range(20):\n    print(i, flush=True)\n    time.sleep(0.05)\n"
        c, r = _post(u.hostname, u.port, _call(1, "python", code), sid)
        while not r.readline().startswith(b"data: "):
            pass
        c.sock.close()
        c.close()
        c, r = _post(u.hostname, u.port, _call(2, "python", "6 * 7"), sid)
        events = [json.loads(x[6:]) for x in r.read().splitlines() if x.startswith(b"data: ")]
        c.close()
        assert events[-1]["id"] == 2 and events[-1]["result"]["structuredContent"]["value"] == 42
        # a streamed call still running when the server is told to stop
        c, r = _post(u.hostname, u.port, _call(3, "python", "import time\nprint(1)\n"
                                                "time.sleep(60)"), sid)
        while not r.readline().startswith(b"data: "):
            pass
    c.close()


def test_stdio_nothing_streamed_after_a_cancel():
    """A partial last line ('tail', flushed without its newline) reaches
    the output handler only when the eval ends; when that end is the
    client's cancellation, the server sends nothing more for the call."""
    s = Stdio()
    try:
        code = ("import time\nprint('first', flush=True)\nprint('tail', end='', flush=True)\n"
                "time.sleep(60)")
        s.send(_call(1, "python", code, token="t"))
        while True:
            m = s.read(BOUND)
            assert "method" in m, m
            if m["method"] == "notifications/message" and m["params"]["data"] == "first":
                break
        time.sleep(0.2)  # 'tail' reaches the supervisor (a flush point, no newline)
        s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 1}})
        s.send(_call(2, "python", "2"))
        after = []
        while True:
            m = s.read(BOUND)
            if m.get("id") == 2:
                break
            after.append(m)
        assert not [x for x in after if x.get("method") in ("notifications/message",
                                                            "notifications/progress")
                    and "tail" in json.dumps(x)], after
    finally:
        s.close()
