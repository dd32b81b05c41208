"""Code mode (`codecage mcp --upstream`): another MCP server's tools as
functions in the guest. The upstream is upstream_server.mjs, written with
the official TypeScript SDK (pinned in package-lock.json); a hostile one is
hostile_upstream.mjs (raw JSON-RPC); composition uses codecage itself."""
import json
import os
import shlex
import subprocess

import pytest

from conftest import CLI
from mcp_util import HERE, Stdio, http_server, need_node, sc, value

UP = "up=node " + shlex.quote(os.path.join(HERE, "upstream_server.mjs"))
HOSTILE = "h=node " + shlex.quote(os.path.join(HERE, "hostile_upstream.mjs"))


@pytest.fixture
def srv(request):
    need_node()
    flags = getattr(request, "param", ())
    s = Stdio("--scratch", "0", "--upstream", UP, *flags)
    yield s
    s.close()


JS_ALL = """
const w = await tools.up.weather({city: 'Oslo', days: 3});
const t = await tools.up.shout({text: 'hi'});
const j = await tools.up.shout({text: '[1, {"A": 2}]'});
let e;
try { await tools.up.fail({reason: 'no luck'}); } catch (x) { e = [x.name, x.message, x instanceof Error]; }
({w, t, j, e})
"""

PY_ALL = """
w = tools.up.weather(city='Oslo', days=3)
t = tools.up.shout({'text': 'hi'})
j = tools.up.shout(text='[1, {"A": 2}]')
try:
    tools.up.fail(reason='no luck')
except Exception as x:
    e = [type(x).__name__, str(x), isinstance(x, Exception)]
{'w': w, 't': t, 'j': j, 'e': e}
"""


@pytest.mark.parametrize("lang,code", [("javascript", JS_ALL), ("python", PY_ALL)])
def test_structured_text_json_text_and_error(srv, lang, code):
    v = value(srv, lang, code)
    assert v["w"] == {"city": "Oslo", "temp_c": 21.5, "days": 3}  # structuredContent
    assert v["t"] == "HI"  # text
    assert v["j"] == [1, {"A": 2}]  # text that is JSON, parsed
    assert v["e"] == ["UpstreamToolError", "the tool failed: no luck", True]


def test_python_awaitable_form_and_misuse(srv):
    v = value(srv, "python", "import asyncio\nasync def m():\n"
              "    return await atools.up.weather(city='Rome')\nasyncio.run(m())")
    assert v["city"] == "Rome"
    r = srv.call("run_python", "tools.up.weather('Rome', 2)")
    assert sc(r)["error"]["type"] == "TypeError"
    assert "one object of named inputs" in sc(r)["error"]["message"]


def test_stubs_in_the_run_tools_descriptions(srv):
    tools = srv.request({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})["result"]["tools"]
    desc = {t["name"]: t["description"] for t in tools}
    assert "search_tools" not in desc  # 7 tools: listed, no search
    js, py = desc["run_javascript"], desc["run_python"]
    assert "declare const tools: {\n  up: {\n    /** The forecast for a city. */\n" in js
    assert ("    weather(input: { city: string; days?: number; }): Promise<{ city: string; "
            "temp_c: number; days: number; }>;") in js
    assert "    fail(input?: { reason?: string; }): Promise<unknown>;" in js
    assert "class up:  # tools.up\n" in py
    assert ("    def weather(*, city: str, days: int = None) -> dict[str, Any]:\n"
            '        """The forecast for a city."""') in py
    assert "make up to 50 calls" in js


@pytest.mark.parametrize("lang,code", [
    ("javascript", "(await Promise.all([1, 2, 3, 4].map(() => tools.up.slow({ms: 1500}))))"
                   ".map(r => r.max_active)"),
    ("python", "import asyncio\nasync def m():\n"
               "    return await asyncio.gather(*[atools.up.slow(ms=1500) for _ in range(4)])\n"
               "[r['max_active'] for r in asyncio.run(m())]"),
])
def test_fan_out_runs_concurrently_upstream(srv, lang, code):
    # the upstream counts calls running at once: one after another would be 1
    assert max(value(srv, lang, code)) >= 2


BUDGET_JS = """
let ok = 0, err;
for (let i = 0; i < 5; i++) {
  try { await tools.up.shout({text: 'a'}); ok++; } catch (e) { err = [e.name, e.message]; break; }
}
({ok, err})
"""


@pytest.mark.parametrize("srv", [("--max-tool-calls", "3")], indirect=True)
def test_one_budget_per_tools_call(srv):
    v = value(srv, "javascript", BUDGET_JS)
    assert v["ok"] == 3 and v["err"][0] == "ToolBudgetError", v
    # the calls over budget never reached the upstream (3 shouts and this
    # stats call); a new tools/call has a fresh budget
    assert value(srv, "javascript", "await tools.up.stats()")["calls"] == 4
    r = srv.call("run_python", "try:\n    [tools.up.shout(text='a') for _ in range(4)]\n"
                 "except Exception as e:\n    x = type(e).__name__\nx")
    assert sc(r)["value"] == "ToolBudgetError", r
    # uncaught, the call's error names the flag that sets the budget
    r = srv.call("run_javascript", "for (;;) await tools.up.shout({text: 'a'})")
    assert sc(r)["error"]["kind"] == "tool_budget", r
    assert "--max-tool-calls" in sc(r)["error"]["message"], r


@pytest.mark.parametrize("srv", [("--upstream-max-calls", "up=1")], indirect=True)
def test_per_upstream_limit(srv):
    r = srv.call("run_javascript", "await tools.up.shout({text: 'a'}); "
                 "await tools.up.shout({text: 'b'})")
    err = sc(r)["error"]
    assert err["type"] == "ToolBudgetError" and "--upstream-max-calls" in err["message"], r
    assert value(srv, "javascript", "await tools.up.stats()")["calls"] == 2


def test_upstream_crash_is_reported_and_restarted(srv):
    pid = value(srv, "javascript", "(await tools.up.stats()).pid")
    r = srv.call("run_javascript", "await tools.up.crash()")
    err = sc(r)["error"]
    assert err["type"] == "UpstreamError", r
    assert "exited (status 3)" in err["message"] and "restarted" in err["message"]
    # the next call starts it again: a new process, and the runtime survived
    v = value(srv, "python", "tools.up.stats()")
    assert v["pid"] != pid and v["calls"] == 1


def test_upstream_hang_is_bounded_by_the_deadline(srv):
    r = srv.call("run_javascript", "await tools.up.hang()", timeout_s=2)
    assert sc(r)["status"] == "error" and sc(r)["error"]["kind"] == "timeout", r
    # the upstream is still the same live process, and answers
    assert value(srv, "javascript", "await tools.up.shout({text: 'x'})") == "X"


def test_composition_codecage_as_upstream_of_codecage():
    need_node()
    inner = "inner=%s mcp --scratch 0" % shlex.quote(CLI)
    s = Stdio("--scratch", "0", "--upstream", inner)
    try:
        v = value(s, "javascript",
                  "await tools.inner.run_python({code: 'print(6 * 7)\\n[1, 2]'})")
        assert v["status"] == "ok" and v["stdout"] == "42\n" and v["value"] == [1, 2], v
        v = value(s, "python", "tools.inner.run_javascript(code='1 + 1')")
        assert v["value"] == 2, v
        tools = s.request({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
        desc = tools["result"]["tools"][0]["description"]
        assert "def run_python(*, code: str" in desc
    finally:
        s.close()


def test_composition_over_streamable_http():
    # the inner codecage serves streamable HTTP; the outer is its client
    with http_server("--scratch", "0") as url:
        s = Stdio("--scratch", "0", "--upstream", "inner=" + url)
        try:
            v = value(s, "javascript",
                      "await tools.inner.run_python({code: 'print(6 * 7)\\n[1, 2]'})")
            assert v["stdout"] == "42\n" and v["value"] == [1, 2], v
            v = value(s, "python", "import asyncio\nasync def m():\n    return await "
                      "asyncio.gather(*[atools.inner.run_javascript(code=str(i)) "
                      "for i in range(4)])\n[r['value'] for r in asyncio.run(m())]")
            assert v == [0, 1, 2, 3]
            # a hanging upstream call ends with the outer call's deadline
            r = s.call("run_javascript", "await tools.inner.run_python("
                       "{code: 'import time; time.sleep(20)'})", timeout_s=2)
            assert sc(r)["error"]["kind"] == "timeout", r
            assert value(s, "javascript", "(await tools.inner.run_python({code: '1+1'}))"
                         ".value") == 2
        finally:
            s.close()


def test_hostile_upstream_does_not_harm_the_server():
    need_node()
    s = Stdio("--scratch", "0", "--upstream", HOSTILE)
    try:
        tools = s.request({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})["result"]["tools"]
        names = [t["name"] for t in tools]
        assert names == ["run_python", "run_javascript", "search_tools"]  # 30 tools: search
        assert "deep_schema" not in tools[1]["description"]
        r = s.request({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {
            "name": "search_tools", "arguments": {"query": "DEEP", "language": "javascript"}}})
        text = r["result"]["content"][0]["text"]
        # the 1800-level schema is cut at depth 6; its comment cannot end the block
        assert "deep_schema(input: { x: { x: { x: { x: { x: { x: unknown; }" in text
        assert "*/ }; evil" not in text and "deep_value" in text and "filler" not in text
        r = s.request({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {
            "name": "search_tools", "arguments": {"query": "weather"}}})
        assert "def get_weather_v2(" in r["result"]["content"][0]["text"]
        # the language takes the library's spellings (cc_language_parse)
        r = s.request({"jsonrpc": "2.0", "id": 13, "method": "tools/call", "params": {
            "name": "search_tools", "arguments": {"query": "DEEP", "language": "JS"}}})
        assert "deep_schema(input: { x:" in r["result"]["content"][0]["text"], r
        r = s.request({"jsonrpc": "2.0", "id": 14, "method": "tools/call", "params": {
            "name": "search_tools", "arguments": {"query": "weather", "language": "py"}}})
        assert "def get_weather_v2(" in r["result"]["content"][0]["text"], r
        r = s.request({"jsonrpc": "2.0", "id": 15, "method": "tools/call", "params": {
            "name": "search_tools", "arguments": {"query": "x", "language": "ts"}}})
        assert r["error"]["code"] == -32602, r
        # a description cut at 600 bytes inside a character stays UTF-8
        r = s.request({"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {
            "name": "search_tools", "arguments": {"query": "answers properly"}}})
        text = r["result"]["content"][0]["text"]
        assert '"""answers properly xy' + "\u00e9" * 290 + '"""' in text, r

        def err(code):
            r = s.call("run_javascript", code, timeout_s=3)
            assert sc(r)["status"] == "error", r
            return sc(r)["error"]
        # garbage lines, a wrong-typed id, a request of its own: dropped or refused
        assert value(s, "javascript", "await tools.h.garbage()") == "survived"
        e = err("await tools.h.deep_value()")
        assert e["type"] == "ToolResultError" and "deeper than 32" in e["message"]
        e = err("await tools.h.huge()")
        assert e["type"] == "UpstreamError" and "over 8 MiB" in e["message"]
        assert value(s, "javascript", "await tools.h.get_weather_v2()") == {
            "ok": "get-weather.v2"}
        assert err("await tools.h.wrong_id()")["kind"] == "timeout"
        assert value(s, "python", "tools.h.ok()") == {"ok": "ok"}
    finally:
        s.close()


@pytest.mark.parametrize("flag,status,text", [
    ("--upstream=bad name", 2, "NAME an identifier"),
    ("--upstream=x=", 2, "the command is empty"),
    ("--upstream=x=http://127.0.0.1:1/mcp", 1, "upstream x: cannot reach http://127.0.0.1:1/mcp"),
    ("--upstream=x=/nonexistent/server", 1, "upstream x: cannot run '/nonexistent/server'"),
    ("--upstream-max-calls=nope=1", 2, "--upstream-max-calls wants NAME=N"),
])
def test_bad_upstream_flags(flag, status, text):
    p = subprocess.run([CLI, "mcp", flag], capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert p.returncode == status, p.stderr
    assert text in p.stderr, p.stderr
