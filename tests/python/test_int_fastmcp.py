"""codecage.integrations.fastmcp against the pinned FastMCP
(requirements/host.txt), offline: real FastMCP servers reached through
fastmcp's in-process Client, nothing mocked."""
import asyncio

import pytest

import ccpkg  # noqa: F401
import codecage
from conftest import need

need("fastmcp", "the fastmcp extra (scripts/install-deps installs it into .venv)")

from fastmcp import Client, FastMCP  # noqa: E402

from codecage.integrations.fastmcp import bind, close, server  # noqa: E402


def weather_server():
    mcp = FastMCP("weather")
    state = {}

    @mcp.tool
    async def get_weather(city: str) -> dict:
        """Current weather of a city."""
        # returns only once local_time is in flight too: a serialised
        # bridge would wait here for ever (bounded: then it says so)
        state["weather"] = True
        for _ in range(2000):
            if state.get("time"):
                return {"city": city, "temp_c": 21}
            await asyncio.sleep(0.005)
        return {"city": "local_time never ran alongside", "temp_c": -1}

    @mcp.tool
    async def local_time(city: str) -> str:
        """Local time of a city."""
        state["time"] = True
        return "12:00"

    @mcp.tool
    def temp(city: str) -> int:
        """Temperature of a city, in C."""
        return 21

    @mcp.tool
    def refuse(city: str) -> int:
        """Always fails."""
        raise ValueError("no such city: " + city)

    return mcp


FAN_OUT = {
    "python": "import asyncio\nw, t = await asyncio.gather(atools.w.get_weather(city='Oslo'), "
              "atools.w.local_time({'city': 'Oslo'}))\n[w['temp_c'], t]",
    "javascript": "const [w, t] = await Promise.all([tools.w.get_weather({city: 'Oslo'}), "
                  "tools.w.local_time({city: 'Oslo'})]);\n[w.temp_c, t]",
}


def test_bind_fans_out_concurrently_with_stubs_and_a_budget(lang):
    with codecage.IsolatedRuntime(language=lang) as rt:
        bridge = bind(rt, weather_server(), prefix="w", max_calls=3)
        try:
            stubs = bridge.describe(lang)
            assert "get_weather" in stubs and "Current weather of a city." in stubs, stubs
            assert asyncio.run(rt.eval_async(FAN_OUT[lang])) == [21, "12:00"]
            # a plain value comes back as that value, not FastMCP's {"result": ...}
            call = {"python": "tools.w.temp(city='Oslo')",
                    "javascript": "await tools.w.temp({city: 'Oslo'})"}[lang]
            assert rt.eval(call) == 21
            assert bridge.calls_made == 3
            with pytest.raises(codecage.ToolBudgetError):
                rt.eval(call)
        finally:
            bridge.close()


def test_a_tool_error_is_a_host_tool_error_the_guest_catches(lang):
    code = {"python": "try:\n    tools.refuse(city='Atlantis')\nexcept Exception as e:\n"
                      "    r = [type(e).__name__, str(e)]\nr",
            "javascript": "let r;\ntry { await tools.refuse({city: 'Atlantis'}) } catch (e) "
                          "{ r = [e.name, e.message] }\nr"}[lang]
    with codecage.IsolatedRuntime(language=lang) as rt:
        with bind(rt, Client(weather_server())):  # a client works as well as a server
            name, message = rt.eval(code)
    assert name == "UpstreamToolError" and "no such city: Atlantis" in message, message


def test_bound_to_an_agent_session_the_budget_is_the_sessions(lang):
    seen = []
    call = {"python": "tools.%s(city='Oslo')", "javascript": "await tools.%s({city: 'Oslo'})"}
    with codecage.AgentSession(language=lang, tools={"note": lambda city: seen.append(city)},
                               max_calls=2) as s:
        bridge = bind(s, weather_server())
        try:
            assert s.run(call[lang] % "temp").value == 21
            s.run({"python": "note('Oslo')", "javascript": "note('Oslo')"}[lang])
            assert s.calls_made == 2 and seen == ["Oslo"]
            with pytest.raises(codecage.ToolBudgetError):
                s.run(call[lang] % "temp")
        finally:
            bridge.close()


def test_bind_refuses_what_it_cannot_bind():
    with codecage.IsolatedRuntime() as rt:
        with pytest.raises(codecage.InvalidInputError, match="prefix"):
            bind(rt, weather_server(), prefix="not ok")
    with pytest.raises(TypeError, match="IsolatedRuntime or an AgentSession"):
        bind(object(), weather_server())


def run(srv, *calls, mode="legacy", closing=None):
    """Call the server's tools in order over one in-process connection;
    the CallToolResults."""
    async def go():
        async with Client(srv, mode=mode) as c:
            names = [t.name for t in await c.list_tools()]
            out = [names]
            for name, args in calls:
                out.append(await c.call_tool(name, args, raise_on_error=False))
            return out
    try:
        return asyncio.run(go())
    finally:
        close(closing or srv)


def test_server_keeps_state_per_session_and_resets():
    srv = server(timeout=10)
    names, a, b, c, d = run(srv, ("run_python", {"code": "x = 41"}),
                            ("run_python", {"code": "x + 1"}),
                            ("run_javascript", {"code": "typeof x"}),
                            ("run_python", {"code": "'x' in globals()", "reset": True}))
    assert sorted(names) == ["run_javascript", "run_python"]
    assert b.structured_content["value"] == 42 and b.structured_content["status"] == "ok"
    assert "value: 42" in b.content[0].text
    assert c.structured_content["value"] == "undefined"  # languages are separate
    assert d.structured_content["value"] is False


def test_server_errors_and_inputs_as_codecage_mcp_gives_them(lang):
    srv = server(languages=[lang])
    bad = {"python": "1 / 0", "javascript": "null.x"}[lang]
    _, err, ok = run(srv, ("run_" + lang, {"code": bad}),
                     ("run_" + lang, {"code": "n * 2", "inputs": {"n": 21}}))
    assert err.is_error
    assert err.structured_content["error"]["kind"] == "guest_error"
    assert err.content[0].text.startswith("status: error (guest_error)")
    assert ok.structured_content["value"] == 42


def test_server_code_mode_tools_share_one_budget_and_mount_in_an_app():
    bridge = codecage.ToolBridge({"double": lambda n: 2 * n}, max_calls=1)
    app = FastMCP("app")
    srv = server(languages=["python"], tools=bridge)
    app.mount(srv, namespace="cc")
    names, ok, over = run(app, ("cc_run_python", {"code": "double(21)"}),
                          ("cc_run_python", {"code": "double(1)"}), closing=srv)
    assert names == ["cc_run_python"]
    assert ok.structured_content["value"] == 42
    assert over.structured_content["error"]["kind"] == "tool_budget"


def test_a_stateless_connection_gets_a_fresh_runtime_per_call():
    srv = server(languages=["python"])
    _, a, b = run(srv, ("run_python", {"code": "x = 1"}),
                  ("run_python", {"code": "'x' in globals()"}), mode="auto")
    assert b.structured_content["value"] is False
    assert not srv._codecage_runtimes.live
