"""codecage.integrations.smolagents.CodecageExecutor against the pinned
smolagents (requirements/host.txt), offline: a real CodeAgent whose model
is a subclass of smolagents' Model returning scripted messages."""
import os

import pytest

import ccpkg  # noqa: F401
from conftest import need

need("smolagents", "the smolagents extra (scripts/install-deps installs it into .venv)")

from smolagents import CodeAgent, tool  # noqa: E402
from smolagents.models import ChatMessage, MessageRole, Model  # noqa: E402

from codecage.integrations.smolagents import CodecageExecutor  # noqa: E402

HOST_PID = os.getpid()


@tool
def get_weather(city: str) -> dict:
    """Current weather of a city.

    Args:
        city: the city's name
    """
    return {"city": city, "temp_c": 21, "host_pid": os.getpid()}


@tool
def get_time(city: str) -> str:
    """Local time of a city.

    Args:
        city: the city's name
    """
    return "12:00"


class Scripted(Model):
    """A smolagents Model whose replies are fixed, one per step; it keeps
    the messages of each step (what the model would have read)."""

    def __init__(self, *codes):
        super().__init__(model_id="scripted")
        self.replies = ["Thought: next.\n<code>\n%s\n</code>" % c for c in codes]
        self.seen = []

    def generate(self, messages, stop_sequences=None, response_format=None,
                 tools_to_call_from=None, **kwargs):
        self.seen.append("\n".join(str(m.content) for m in messages))
        return ChatMessage(role=MessageRole.ASSISTANT, content=self.replies.pop(0))


def agent(model, executor, **kw):
    return CodeAgent(tools=[get_weather, get_time], model=model, executor=executor,
                     max_steps=6, verbosity_level=0, **kw)


def test_host_tools_print_a_raising_step_state_and_final_answer():
    model = Scripted("w = get_weather('Oslo')\nprint('temp', w['temp_c'])",
                     "1 / 0",
                     "final_answer(f\"{w['city']}: {w['temp_c']} C, host {w['host_pid']}\")")
    with CodecageExecutor() as ex:
        a = agent(model, ex)
        out = a.run("What is the weather in Oslo?")
        # the tool ran on the host (its pid), the code in the sandbox
        assert out == "Oslo: 21 C, host %d" % HOST_PID
        printed, raised, final = a.memory.steps[1:4]
        assert "temp 21" in printed.observations
        assert "ZeroDivisionError" in str(raised.error) and "Traceback" in str(raised.error)
        # the model's next step read the error
        assert "ZeroDivisionError: division by zero" in model.seen[2]
        assert final.is_final_answer
        assert ex.calls_made == 1


def test_final_answer_stops_the_step_even_when_the_code_catches_it():
    model = Scripted("try:\n    final_answer(42)\nexcept Exception:\n    pass\n"
                     "print('not reached?')")
    with CodecageExecutor() as ex:
        assert agent(model, ex).run("x") == 42


def test_gather_variables_and_state_across_runs():
    model = Scripted("import asyncio\nw, t = await asyncio.gather(atools.get_weather('Oslo'), "
                     "atools.get_time(city='Oslo'))\nfinal_answer([w['temp_c'], t, n])")
    with CodecageExecutor() as ex:
        a = agent(model, ex)
        assert a.run("x", additional_args={"n": 3}) == [21, "12:00", 3]
        model.replies.append("Thought: again.\n<code>\nfinal_answer(t + '!')\n</code>")
        assert a.run("again", reset=False) == "12:00!"


def test_the_budget_is_shared_with_other_code_on_the_runtime():
    model = Scripted("get_weather('a')", "get_weather('b')", "final_answer('done')")
    with CodecageExecutor(max_calls=2) as ex:
        a = agent(model, ex)
        a.python_executor.send_tools({"get_time": get_time})
        ex.rt.eval("get_time('host code')")  # the host's own code, same runtime, same budget
        assert a.run("x") == "done"
        assert "ToolBudgetError" in str(a.memory.steps[2].error), a.memory.steps[2]
        assert ex.calls_made == 2


def test_the_executor_alone_runs_a_step_and_raises_a_failing_one():
    with CodecageExecutor() as ex:
        ex.send_tools({"get_weather": get_weather})
        with pytest.raises(Exception, match="ZeroDivisionError"):
            ex("1/0")
        out = ex("get_weather('Oslo')['temp_c']")
        assert (out.output, out.is_final_answer) == (21, False)
