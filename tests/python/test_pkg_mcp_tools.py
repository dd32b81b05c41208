"""codecage.mcp_tools: an MCP server's tools (tests/mcp/upstream_server.mjs,
written with the official SDK) as a ToolBridge, in both guest languages,
with the bridge's budget and the same stubs as `codecage mcp --upstream`."""
import os
import shlex
import shutil
import sys

import ccpkg  # noqa: F401  (builds and imports the package)
import pytest

import codecage
from conftest import ROOT

SERVER = os.path.join(ROOT, "tests", "mcp", "upstream_server.mjs")


@pytest.fixture
def bridge():
    if not shutil.which("node") or not os.path.isdir(
            os.path.join(ROOT, "tests", "mcp", "node_modules", "@modelcontextprotocol", "sdk")):
        pytest.fail("node and `npm ci --prefix tests/mcp` are needed")
    b = codecage.mcp_tools(["node", SERVER], name="up", max_calls=6)
    yield b
    b.close()


def test_both_languages_results_errors_and_budget(bridge):
    with codecage.IsolatedRuntime(language="python") as py, \
            codecage.IsolatedRuntime(language="javascript") as js:
        bridge.attach(py)
        bridge.attach(js)
        assert py.eval("tools.up.weather(city='Oslo')") == {
            "city": "Oslo", "temp_c": 21.5, "days": 1}
        assert js.eval("await tools.up.shout({text: '[1]'})") == [1]
        assert js.eval("try { await tools.up.fail({reason: 'r'}) } catch (e) "
                       "{ [e.name, e.message] }") == ["UpstreamToolError", "the tool failed: r"]
        assert py.eval("tools.up.shout(text='ab')") == "AB"
        # 4 calls so far; the bridge's budget of 6 is shared by both runtimes
        assert js.eval("let n = 0; try { for (;;) { await tools.up.shout({text: 'a'}); n++ } } "
                       "catch (e) { [n, e.name] }") == [2, "ToolBudgetError"]


def test_describe_gives_the_same_stubs_as_codecage_mcp(bridge):
    # the text `codecage mcp --upstream up=...` puts in its run tools'
    # descriptions (src/mcp/client/stubs.c) is what describe() returns
    sys.path.insert(0, os.path.join(ROOT, "tests", "mcp"))
    from mcp_util import Stdio
    s = Stdio("--scratch", "0", "--upstream", "up=node " + shlex.quote(SERVER))
    try:
        tools = s.request({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})["result"]["tools"]
    finally:
        s.close()
    desc = {t["name"]: t["description"] for t in tools}
    for lang, head in (("javascript", "// Upstream MCP tools"), ("python", "# Upstream MCP tools")):
        mine = bridge.describe(lang)
        assert mine.startswith(head) and "weather" in mine
        theirs = desc["run_" + lang]
        start = theirs.index(head)  # (run_python's may go on with what the sandbox has)
        assert theirs[start:start + len(mine)] == mine
    assert ("    weather(input: { city: string; days?: number; }): Promise<{ city: string; "
            "temp_c: number; days: number; }>;") in bridge.describe("javascript")
    with pytest.raises(codecage.InvalidInputError):
        bridge.describe("ruby")


def test_a_streamable_http_server_codecage_itself():
    sys.path.insert(0, os.path.join(ROOT, "tests", "mcp"))
    from mcp_util import http_server
    with http_server("--scratch", "0") as url:
        with codecage.mcp_tools(url, name="cc") as b, \
                codecage.IsolatedRuntime(language="javascript") as rt:
            b.attach(rt)
            v = rt.eval("await tools.cc.run_python({code: 'print(2)\\n[3]'})")
            assert v["stdout"] == "2\n" and v["value"] == [3], v
            assert "run_python(input: { code: string;" in b.describe("javascript")


def test_bad_commands():
    with pytest.raises(codecage.UpstreamError, match="cannot reach http://127.0.0.1:1/mcp"):
        codecage.mcp_tools("http://127.0.0.1:1/mcp")
    with pytest.raises(codecage.UpstreamError, match="cannot reach http://\\[/mcp"):
        codecage.mcp_tools("http://[/mcp")  # urllib's ValueError, as the server's failure
    with pytest.raises(codecage.UpstreamError, match="cannot run '/nonexistent'"):
        codecage.mcp_tools("/nonexistent --flag")


# A stdio MCP server in a few lines, whose answers are not quite MCP:
# tools/list's "tools" (argv[1] == "list") or tools/call's "content"
# ("call") is a number.
FAKE = r"""
import json, sys
bad = sys.argv[1]
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    r = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
         "serverInfo": {"name": "fake", "version": "1"}}
    if m["method"] == "tools/list":
        r = {"tools": 5 if bad == "list" else [{"name": "t", "inputSchema": {"type": "object"}}]}
    elif m["method"] == "tools/call":
        r = {"content": 5}
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
"""


def test_upstream_error_is_exported_and_a_codecage_error():
    """Issue 27 D8: codecage.UpstreamError is public, a CodecageError, and
    what every failure of the server is, in the host (mcp_tools) and in
    the guest (a catchable error of that name), also for answers that are
    not MCP (they were a TypeError of the package's own code)."""
    assert issubclass(codecage.UpstreamError, codecage.CodecageError)
    assert not issubclass(codecage.UpstreamError, ValueError)
    assert "UpstreamError" in codecage.__all__ and "UpstreamError" in codecage.errors.__all__
    assert codecage.UpstreamError.kind == "invalid_input"
    with pytest.raises(codecage.CodecageError, match="exited"):
        codecage.mcp_tools([sys.executable, "-c", "pass"])
    with pytest.raises(codecage.UpstreamError, match="'tools' that is not a list but int"):
        codecage.mcp_tools([sys.executable, "-c", FAKE, "list"])
    with codecage.mcp_tools([sys.executable, "-c", FAKE, "call"]) as b:
        for lang, code in (("javascript", "try { await tools.t({}) } catch (e) "
                                          "{ [e.name, e.message] }"),
                           ("python", "try:\n    tools.t()\nexcept Exception as e:\n"
                                      "    r = [type(e).__name__, str(e)]\nr")):
            with codecage.IsolatedRuntime(language=lang) as rt:
                b.attach(rt)
                assert rt.eval(code) == [
                    "UpstreamError",
                    "the MCP server's tools/call result has a 'content' that is not a list "
                    "but int"]
                with pytest.raises(codecage.GuestError) as e:  # uncaught: the guest's error
                    rt.eval("await tools.t({})" if lang == "javascript" else "tools.t()")
                assert e.value.name == "UpstreamError"


def test_over_budget_the_message_names_mcp_tools_max_calls():
    """Issue 27 D7: caught and uncaught, one text naming the option."""
    msg = "the total tool call budget of 0 calls is used up; raise mcp_tools(max_calls=N)"
    with codecage.mcp_tools([sys.executable, "-c", FAKE, "call"], max_calls=0) as b, \
            codecage.IsolatedRuntime(language="javascript") as rt:
        b.attach(rt)
        assert rt.eval("try { await tools.t({}) } catch (e) { e.message }") == msg
        with pytest.raises(codecage.ToolBudgetError) as e:
            rt.eval("await tools.t({})")
        assert e.value.message == msg


@pytest.mark.parametrize("language", ["javascript", "python"])
def test_dotted_tool_names_make_a_namespace(language):
    # SERVER.TOOL is tools.SERVER.TOOL only (no global), and SERVER must not
    # already be a tool of its own
    with codecage.IsolatedRuntime(language=language) as rt:
        codecage.ToolBridge({"s.one": lambda: 1, "s.two": lambda: 2, "solo": lambda: 3}).attach(rt)
        if language == "javascript":
            assert rt.eval("[await tools.s.one(), await tools.s.two(), typeof s, solo()]") == [
                1, 2, "undefined", 3]
        else:
            assert rt.eval("import asyncio\n[tools.s.one(), asyncio.run(atools.s.two()), "
                           "'s' in globals(), solo()]") == [1, 2, False, 3]
        with pytest.raises(codecage.GuestError, match="is a tool, not a namespace"):
            codecage.ToolBridge({"solo.x": lambda: 0}).attach(rt)
        with pytest.raises(codecage.InvalidInputError):
            codecage.ToolBridge({"a.b.c": lambda: 0})
        # the library's own rule (cc_tool_name_ok), past the package's check
        for bad in ("a.b.c", "a.", ".b", "a..b", "1a.b", "a.b-c"):
            with pytest.raises(codecage.InvalidInputError, match="SERVER.TOOL"):
                rt.bind_function(bad, len)


def test_stub_ports_defuse_docstrings_and_names_as_the_server_does():
    """From red team round five: the server's stubs.c doubles a backslash in
    a Python docstring, keeps a final quote off the closing quotes, and
    gives a keyword or "__" tool name a trailing '_'; the package's port
    (codecage.mcp_tools().describe()) and describe_tools must do the same,
    or their stubs are not valid Python (reverse: the raw text is not)."""
    import ast
    from codecage import _describe, _mcp, _mcp_stubs
    hostile = 'ends in a backslash \\'
    raw = 'def f():\n    """%s"""\n' % hostile
    with pytest.raises(SyntaxError):
        ast.parse(raw)
    doc = _mcp_stubs._doc(hostile, '"""', "", '"""', py=True)
    ast.parse("def f():\n    " + doc + "\n")
    doc = _mcp_stubs._doc('a final quote"', '"""', "", '"""', py=True)
    ast.parse("def f():\n    " + doc + "\n")
    lines = _describe._docstring(hostile, "    ")
    ast.parse("def f():\n" + "\n".join(lines) + "\n    pass\n")
    assert [_mcp._guest_name(n) for n in ("class", "__class__", "get-weather", "9x")] == \
        ["class_", "__class___", "get_weather", "_9x"]
