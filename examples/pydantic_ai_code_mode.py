"""pydantic-ai code mode, offline: the "model" is pydantic-ai's FunctionModel
playing a model that writes one program for the whole task.

The agent has two tools, get_weather and send_email (which needs a
person's approval). With CodeMode the model sees one tool, run_python,
whose description holds both tools' stubs; its program calls them. The
email pauses the program: the run ends with pydantic-ai's
DeferredToolRequests, the host approves, and a second run resumes the same
program where it stopped.

Run: PYTHONPATH=DIR python3 examples/pydantic_ai_code_mode.py, with the
codecage package and its pydantic-ai extra installed (README, "Integrations").
"""
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, Tool
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel

from codecage.integrations.pydantic_ai import CodeMode


def get_weather(city: str) -> dict:
    """Current weather of a city: {"city", "temp_c"}."""
    return {"city": city, "temp_c": 21}


def send_email(to: str, body: str) -> str:
    """Send an email; a person approves each one."""
    return "sent to " + to


PROGRAM = """
w = tools.get_weather("Oslo")
sent = tools.send_email("ann@example.com", body=f"It is {w['temp_c']} C in {w['city']}")
f"{sent}; it is {w['temp_c']} C in {w['city']}"
"""


def model(messages, info):
    """First turn: one program. After the tool's answer: say what it returned."""
    returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
    if not returns:
        assert "def send_email(to: str, body: str) -> str:" in info.function_tools[0].description
        return ModelResponse(parts=[ToolCallPart("run_python", {"code": PROGRAM},
                                                 tool_call_id="call-1")])
    return ModelResponse(parts=[TextPart("model: " + returns[0].content["value"])])


with CodeMode([get_weather, Tool(send_email, requires_approval=True)]) as code_mode:
    agent = Agent(FunctionModel(model), toolsets=[code_mode],
                  output_type=[str, DeferredToolRequests])
    run = agent.run_sync("Tell Ann the weather in Oslo.")
    requests = run.output
    approvals = {}
    for call in requests.approvals:  # the run_python call, paused inside send_email
        for inner in requests.metadata[call.tool_call_id]["calls"]:
            print(f"approve {inner['tool']}(to={inner['args']['to']!r})")
        approvals[call.tool_call_id] = True
    run = agent.run_sync(message_history=run.all_messages(),
                         deferred_tool_results=DeferredToolResults(approvals=approvals))
    print(run.output)
