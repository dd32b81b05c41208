"""codecage.integrations.langchain.CodeInterpreterTool against the pinned
langchain-core and LangGraph (requirements/host.txt), offline: a LangGraph
agent (a model node and LangGraph's ToolNode) whose chat model is
langchain-core's GenericFakeChatModel with scripted tool calls, and direct
invocations with a ToolCall, as LangChain's own tool tests do."""
import asyncio

import pytest

import ccpkg  # noqa: F401
import codecage
from conftest import need

need("langchain_core", "the langchain extra (scripts/install-deps installs it into .venv)")
need("langgraph", "LangGraph, pinned in requirements/host.txt for these tests")

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, ToolMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402
from langgraph.prebuilt import ToolNode, tools_condition  # noqa: E402

from codecage.integrations.langchain import CodeInterpreterTool  # noqa: E402


@tool
def get_weather(city: str) -> dict:
    """Current weather of a city."""
    return {"city": city, "temp_c": 21}


@tool
def get_time(city: str) -> str:
    """Local time of a city."""
    return "12:00"


def agent(codes, code_tool):
    """A LangGraph agent whose model calls code_tool with each of codes in
    turn, then says "done"."""
    name = code_tool.name
    replies = [AIMessage(content="", tool_calls=[{"name": name, "args": {"code": c},
                                                  "id": "c%d" % i}])
               for i, c in enumerate(codes, 1)] + [AIMessage(content="done")]
    model = GenericFakeChatModel(messages=iter(replies))
    graph = StateGraph(MessagesState)
    graph.add_node("model", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("tools", ToolNode([code_tool]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile()


def tool_messages(out):
    return [m for m in out["messages"] if isinstance(m, ToolMessage)]


MULTI = {
    "python": ["import asyncio\nw, t = await asyncio.gather(atools.get_weather(city='Oslo'), "
               "atools.get_time({'city': 'Oslo'}))\nprint(t)", "w['temp_c']", "1 / 0"],
    "javascript": ["var [w, t] = await Promise.all([tools.get_weather('Oslo'), "
                   "tools.get_time({city: 'Oslo'})]);\nconsole.log(t)", "w.temp_c", "null.x"],
}


def test_a_langgraph_agent_calls_it_with_state_tools_and_errors(lang):
    t = CodeInterpreterTool(language=lang, tools=[get_weather, get_time], max_calls=5)
    try:
        assert t.name == "run_" + lang
        assert "get_weather" in t.description and "Local time of a city." in t.description
        out = agent(MULTI[lang], t).invoke({"messages": [("user", "weather?")]})
        first, second, failed = tool_messages(out)
        assert first.content == [{"type": "text", "text": "stdout:\n12:00\nvalue: None"}], first
        assert second.content == [{"type": "text", "text": "value: 21"}]  # state kept
        assert failed.status == "error"
        assert ("ZeroDivisionError" if lang == "python" else "TypeError") in failed.content
        assert out["messages"][-1].content == "done"
        assert t.calls_made == 2
    finally:
        t.close()


def test_a_chart_comes_back_as_an_image_block():
    t = CodeInterpreterTool()
    try:
        msg = t.invoke({"type": "tool_call", "name": "run_python", "id": "x", "args": {
            "code": "import matplotlib.pyplot as plt\n_ = plt.bar(['a', 'b'], [1, 2])"}})
        assert isinstance(msg, ToolMessage)
        text, image = msg.content
        assert text == {"type": "text", "text": "value: None"}
        assert image["type"] == "image" and image["mime_type"] == "image/png"
        assert image["base64"].startswith("iVBOR")  # PNG's signature, base64
    finally:
        t.close()


def test_the_budget_is_shared_with_host_code_on_its_runtime():
    t = CodeInterpreterTool(tools={"double": lambda n: 2 * n}, max_calls=1)
    try:
        assert "def double(n: Any) -> Any:" in t.description
        t.runtime.eval("double(1)")  # host code, same runtime, same budget
        msg = t.invoke({"type": "tool_call", "name": "run_python", "id": "y",
                        "args": {"code": "double(2)"}})
        assert msg.status == "error" and "ToolBudgetError" in msg.content
    finally:
        t.close()


def test_async_invocation_and_a_fresh_session_after_close():
    t = CodeInterpreterTool(language="javascript")
    try:
        assert asyncio.run(t.ainvoke({"code": "globalThis.k = 6 * 7; k"})) == [
            {"type": "text", "text": "value: 42"}]
        t.close()
        assert t.invoke({"code": "typeof k"}) == [{"type": "text", "text": "value: undefined"}]
    finally:
        t.close()


def test_bad_arguments_are_refused():
    with pytest.raises(codecage.InvalidInputError, match="language must be"):
        CodeInterpreterTool(language="bash")
    with pytest.raises(TypeError, match="as a list"):
        CodeInterpreterTool(tools={"w": get_weather})
