"""`codecage mcp` over stdio with raw bytes: bad input gets JSON-RPC errors
and the server keeps serving; negotiation; cancellation; crash and memory
limit replacement; idle reaping of runtimes."""
import json
import time

import pytest

from mcp_util import INIT, Stdio


def err_code(msg):
    assert "error" in msg, msg
    return msg["error"]["code"]


def test_bad_input_gets_errors_and_the_server_keeps_serving():
    s = Stdio()
    cases = [
        (b"garbage\n", -32700),
        (b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"\n", -32700),  # truncated
        (b"\xff\xfe\x00\x01binary\x80\n", -32700),
        (b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"\xc3(\"}\n", -32700),  # bad UTF-8
        (b"{\"a\": 1} {\"b\": 2}\n", -32700),
        (b"[{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}]\n", -32600),  # batch
        (b"42\n", -32600),
        (b"{\"id\": 1, \"method\": \"ping\"}\n", -32600),
        (b"{\"jsonrpc\": \"1.0\", \"id\": 1, \"method\": \"ping\"}\n", -32600),
        (b"{\"jsonrpc\": \"2.0\", \"id\": null, \"method\": \"ping\"}\n", -32600),
        (b"{\"jsonrpc\": \"2.0\", \"id\": 1.5, \"method\": \"ping\"}\n", -32600),
        (b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": 7}\n", -32600),
        (b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\", \"params\": 3}\n", -32600),
        (b"{\"jsonrpc\": \"2.0\", \"id\": 1}\n", -32600),
        (b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"prompts/list\"}\n", -32601),
        (b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\"}\n", -32602),
        (b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\", \"params\": "
         b"{\"name\": \"run_python\"}}\n", -32602),
        (b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\", \"params\": "
         b"{\"name\": \"run_python\", \"arguments\": {\"code\": \"1\", \"extra\": 1}}}\n", -32602),
        (b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\", \"params\": "
         b"{\"name\": \"run_python\", \"arguments\": {\"code\": \"1\", \"reset\": 1}}}\n", -32602),
        (b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"logging/setLevel\", \"params\": {}}\n",
         -32602),
        (json.dumps(INIT).encode() + b"\n", -32600),  # already initialized
    ]
    for data, code in cases:
        s.send_raw(data)
        r = s.read()
        assert err_code(r) == code, (data, r)
    # Notifications (known or not) and client responses get no answer.
    s.send({"jsonrpc": "2.0", "method": "notifications/whatever"})
    s.send({"jsonrpc": "2.0", "id": 99, "result": {}})
    s.send_raw(b"\n   \n")
    assert s.call("run_python", "1 + 1", id=5)["structuredContent"]["value"] == 2
    assert s.close() == []


NOT_TEXT = [b"a\\u0000b", b"\\ud800", b"x\\udfffy", b"\\ud800\\u0041", b"\\udbff"]


@pytest.mark.parametrize("where", ["method", "params", "key"])
def test_nul_and_lone_surrogate_escapes_are_refused_with_their_id(where):
    """Regression: a request whose JSON held \\u0000 or a lone surrogate
    escape got a parse error with id null (the client waited for ever) and
    a message naming jansson's JSON_ALLOW_NUL."""
    s = Stdio()
    for i, esc in enumerate(NOT_TEXT):
        body = {"method": b'"' + esc + b'"', "params": b'"ping", "params": {"x": "' + esc + b'"}',
                "key": b'"ping", "params": {"' + esc + b'": 1}'}[where]
        s.send_raw(b'{"jsonrpc": "2.0", "id": %d, "method": %s}\n' % (100 + i, body))
        r = s.read()
        assert r["id"] == 100 + i and err_code(r) == -32600, (esc, r)
        msg = r["error"]["message"]
        assert "\\u0000" in msg and "surrogate" in msg and "JSON_" not in msg, msg
    # a notification gets the error too (no id to carry), and a pair is fine
    s.send_raw(b'{"jsonrpc": "2.0", "method": "notifications/x", "params": {"a": "\\u0000"}}\n')
    r = s.read()
    assert r["id"] is None and err_code(r) == -32600 and "JSON_" not in r["error"]["message"], r
    assert s.call("run_python", "len('\U0001F600')", id=5)["structuredContent"]["value"] == 1
    assert s.close() == []


def test_oversized_line_is_refused_without_being_held():
    s = Stdio("--max-request", "4096")
    s.send_raw(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\", \"x\": \"" +
               b"a" * 1_000_000 + b"\"}\n")
    r = s.read()
    assert err_code(r) == -32600 and "over 4096 bytes" in r["error"]["message"], r
    assert s.request({"jsonrpc": "2.0", "id": 2, "method": "ping"}) == \
        {"jsonrpc": "2.0", "id": 2, "result": {}}
    s.close()


def test_requests_before_initialize_are_refused():
    s = Stdio(init=False)
    r = s.request({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert err_code(r) == -32600 and "initialize" in r["error"]["message"]
    assert "result" in s.request({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    r = s.request({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {}})
    assert err_code(r) == -32602
    s.close()


@pytest.mark.parametrize("asked,answered", [("2025-06-18", "2025-06-18"),
                                            ("2025-03-26", "2025-03-26"),
                                            ("2024-11-05", "2024-11-05"),
                                            ("2099-01-01", "2025-06-18")])
def test_version_negotiation(asked, answered):
    s = Stdio(init=False)
    init = dict(INIT, params=dict(INIT["params"], protocolVersion=asked))
    r = s.request(init)
    assert r["result"]["protocolVersion"] == answered
    assert r["result"]["capabilities"] == {"tools": {"listChanged": False}, "logging": {},
                                           "resources": {"subscribe": False,
                                                         "listChanged": False}}
    s.close()


def test_cancellation_stops_the_running_call_and_sends_no_response():
    s = Stdio()
    s.call("run_python", "kept = 1", id=1)
    s.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "run_python",
                       "arguments": {"code": "while True:\n    pass", "timeout_s": 25}}})
    # ping is answered while the call runs (the reader never blocks).
    assert s.request({"jsonrpc": "2.0", "id": 3, "method": "ping"})["id"] == 3
    time.sleep(1)  # let the loop start (a call cancelled before it runs is just skipped)
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 2, "reason": "test"}})
    r = s.call("run_python", "'kept' in globals()", id=4)
    assert r["structuredContent"]["value"] is False
    assert "cancelled" in r["structuredContent"]["note"]
    assert s.close() == []  # id 2 never answered


def test_crash_is_replaced_with_a_note():
    s = Stdio()
    r = s.call("run_python", "import ctypes\nctypes.string_at(0)", id=1)
    assert r["isError"] is True
    assert r["structuredContent"]["error"]["kind"] == "worker_crashed"
    r = s.call("run_python", "2 + 2", id=2)
    assert r["structuredContent"]["value"] == 4
    assert r["structuredContent"]["note"].startswith("the previous python runtime ended")
    assert r["content"][0]["text"].startswith("note: the previous python runtime ended")
    # The note is said once.
    assert s.call("run_python", "1", id=3)["structuredContent"]["note"] is None
    s.close()


def test_memory_bomb_then_fresh_call(lang):
    s = Stdio("--memory", "64")
    tool = "run_" + lang
    bomb = "x = ['a' * 1000000 for _ in range(1000)]" if lang == "python" else \
        "let a = []; for (;;) a.push(new Array(1e6).fill(1));"
    r = s.call(tool, bomb, id=1)
    assert r["isError"] is True
    assert r["structuredContent"]["error"]["kind"] == "memory_limit", r
    r = s.call(tool, "40 + 2", id=2)
    assert r["structuredContent"]["value"] == 42, r
    s.close()


def test_limit_messages_name_the_mcp_options(lang):
    """Regression: a timeout said only "the time limit was reached" and a
    JavaScript out-of-memory only "out of memory": neither said the limit
    nor what raises it."""
    s = Stdio("--memory", "64")
    tool = "run_" + lang
    loop = "while True:\n    pass" if lang == "python" else "for (;;) {}"
    r = s.call(tool, loop, id=1, timeout_s=0.3)
    err = r["structuredContent"]["error"]
    assert err["kind"] == "timeout", r
    assert "0.3 s" in err["message"] and "timeout_s" in err["message"], err
    assert "cc_limits" not in err["message"], err
    bomb = "x = ['a' * 1000000 for _ in range(1000)]" if lang == "python" else \
        "let a = []; for (;;) a.push(new Array(1e6).fill(1));"
    err = s.call(tool, bomb, id=2)["structuredContent"]["error"]
    assert err["kind"] == "memory_limit", err
    assert "67108864 bytes (64 MiB)" in err["message"], err
    assert "--memory" in err["message"] and "cc_limits" not in err["message"], err
    s.close()


def test_output_is_capped():
    s = Stdio("--max-output", "2048")
    r = s.call("run_python", "print('x' * 100000)", id=1)
    out = r["structuredContent"]["stdout"]
    assert len(out) < 2048 + 200 and "truncated" in out, r
    s.close()


def test_idle_runtimes_are_closed_and_the_next_call_says_so():
    s = Stdio("--idle-timeout", "0.5")
    s.call("run_javascript", "globalThis.v = 1", id=1)
    time.sleep(2)  # not a timing check: lets the reaper pass
    r = s.call("run_javascript", "typeof v", id=2)
    assert r["structuredContent"]["value"] == "undefined"
    assert "idle" in r["structuredContent"]["note"]
    s.close()


def test_stdin_eof_lets_running_calls_answer():
    s = Stdio()
    s.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "run_javascript", "arguments": {"code": "6 * 7"}}})
    rest = s.close()
    assert [m["result"]["structuredContent"]["value"] for m in rest] == [42]


def test_web_polyfills_flag():
    """--web-polyfills: run_javascript runtimes start with WEB_POLYFILLS
    (and its description says so); run_python is unchanged; off by default."""
    probe = "[typeof URL, typeof setTimeout, typeof crypto, typeof window]"
    s = Stdio("--web-polyfills")
    tools = s.request({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})["result"]["tools"]
    js = next(t for t in tools if t["name"] == "run_javascript")
    assert "URL, URLSearchParams" in js["description"] and "No window" in js["description"]
    r = s.call("run_javascript", probe, id=2)
    assert r["structuredContent"]["value"] == ["function", "function", "object", "undefined"], r
    r = s.call("run_javascript", "new URL('a/../b?x=1 2', 'https://h/p/q').href", id=3)
    assert r["structuredContent"]["value"] == "https://h/p/b?x=1%202", r
    assert s.call("run_python", "1 + 1", id=4)["structuredContent"]["value"] == 2
    s.close()
    s = Stdio()
    r = s.call("run_javascript", probe, id=1)
    assert r["structuredContent"]["value"] == ["undefined"] * 4, r
    tools = s.request({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})["result"]["tools"]
    assert "URLSearchParams" not in next(t for t in tools if t["name"] == "run_javascript")["description"]
    s.close()


def test_a_long_message_of_multibyte_characters_is_not_cut_into_invalid_utf8():
    """jsonrpc_error (and mcp_log) format into an allocated string and
    repair what is not UTF-8: a "%.200s" of a URI of 3-byte characters
    ends mid-character, which jansson refused (the message became
    "(unprintable message)"). Issue 22."""
    s = Stdio()
    uri = "codecage://python/" + "\u20ac" * 400
    r = s.request({"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {"uri": uri}})
    msg = r["error"]["message"]
    assert r["error"]["code"] == -32002, r
    assert msg.startswith("Resource not found: codecage://python/\u20ac\u20ac"), msg
    assert "resources/list names the files of this session" in msg, msg
    assert msg.count("\u20ac") == 60 and "\ufffd" in msg, msg
    assert s.close() == []


def test_descriptions_state_each_languages_own_memory_limit():
    """Without --memory each tool's description gives its language's
    default heap (the library's: JavaScript 128 MiB, Python 512 MiB), the
    one a call then gets; with --memory, that (found by a new user: both
    said 512 MiB)."""
    # README's defaults (src/common/defaults.h): 128 and 512 MiB
    for flags, want in (((), {"run_javascript": 128, "run_python": 512}),
                        (("--memory", "256"), {"run_javascript": 256, "run_python": 256})):
        s = Stdio(*flags)
        tools = s.request({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})["result"]["tools"]
        got = {t["name"]: t["description"] for t in tools if t["name"] in want}
        s.close()
        for name, mib in want.items():
            assert "%d MiB of memory" % mib in got[name], (flags, name, got[name][:400])


def test_a_note_is_never_cut_mid_word_or_mid_parenthesis():
    """Regression: the note after a runtime ended cut its reason at 200
    bytes: "...(the worker exited with status 124 (the Python worker's );
    state was reset"."""
    s = Stdio()
    r = s.call("run_python", "sum(range(10**13))", id=1, timeout_s=1)
    err = r["structuredContent"]["error"]
    assert err["kind"] == "timeout", r
    full = "timeout: " + err["message"]
    note = s.call("run_python", "1", id=2)["structuredContent"]["note"]
    head = "the previous python runtime ended ("
    assert note.startswith(head) and "); state was reset" in note, note
    reason = note[len(head):note.index("); state was reset")]
    assert reason.count("(") == reason.count(")"), reason
    if reason != full:
        assert reason.endswith("\u2026") and len(reason) < len(full), reason
        kept = reason[:-1]
        assert full.startswith(kept) and full[len(kept)] in " ,;:", (kept, full)
    s.close()


def test_a_timeout_over_the_servers_cap_says_it_was_capped():
    s = Stdio("--timeout", "5")
    r = s.call("run_javascript", "1 + 1", id=1, timeout_s=100)
    note = r["structuredContent"]["note"]
    assert note and "timeout_s 100 s is over the server's limit: capped to 5 s" in note, r
    assert "--timeout" in note and r["content"][0]["text"].startswith("note: "), r
    # under the cap: no note
    assert s.call("run_javascript", "1", id=2, timeout_s=5)["structuredContent"]["note"] is None
    s.close()
