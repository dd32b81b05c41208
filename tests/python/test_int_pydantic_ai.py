"""codecage.integrations.pydantic_ai.CodeMode against the pinned
pydantic-ai (requirements/host.txt), offline: the model is pydantic-ai's
own FunctionModel, scripted per test; the tools are real pydantic-ai tools
(FunctionToolset, Tool(requires_approval=True)), nothing is mocked."""
import asyncio
import os
import subprocess
import sys

import pytest

import ccpkg
import codecage
from conftest import ROOT, need

need("pydantic_ai", "the pydantic-ai extra (scripts/install-deps installs it into .venv)")

from pydantic_ai import (Agent, DeferredToolRequests, DeferredToolResults, ModelRetry,  # noqa: E402
                         Tool, ToolDenied, UsageLimitExceeded, UsageLimits)
from pydantic_ai.messages import (ModelResponse, TextPart, ToolCallPart,  # noqa: E402
                                  ToolReturnPart)
from pydantic_ai.models.function import FunctionModel  # noqa: E402

from codecage.integrations.pydantic_ai import CodeMode  # noqa: E402

TOOL = {"python": "run_python", "javascript": "run_javascript"}


class Script:
    """A FunctionModel that answers with one code call per entry of
    ``codes`` (in order, ids c1, c2, ...), then with text: the repr of the
    last tool return's content. ``returns`` keeps every ToolReturnPart the
    model was sent, ``descriptions`` the code tool's description."""

    def __init__(self, lang, *codes):
        self.lang, self.codes, self.returns, self.descriptions = lang, list(codes), [], []
        self.n = 0

    def __call__(self, messages, info):
        self.descriptions.append(info.function_tools[0].description)
        self.returns += [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        if self.codes:
            self.n += 1
            return ModelResponse(parts=[ToolCallPart(TOOL[self.lang], {"code": self.codes.pop(0)},
                                                     tool_call_id="c%d" % self.n)])
        return ModelResponse(parts=[TextPart(repr(self.returns[-1].content))])

    def model(self):
        return FunctionModel(self)


def get_weather(city: str) -> dict:
    """The weather in a city."""
    return {"city": city, "temp_c": 21}


FAN_OUT = {
    "python": "import asyncio\nw, t = await asyncio.gather(atools.get_weather('Oslo'), "
              "atools.local_time(city='Oslo'))\nprint('got', w['city'])\n[w['temp_c'], t]",
    "javascript": "const [w, t] = await Promise.all([tools.get_weather('Oslo'), "
                  "tools.local_time({city: 'Oslo'})]);\nconsole.log('got', w.city);\n[w.temp_c, t]",
}


def test_fan_out_runs_the_tools_concurrently_and_the_model_sees_their_stubs(lang):
    started = {}

    async def local_time(city: str) -> str:
        """The local time in a city."""
        # get_weather's event is set by the time this call runs only if both
        # were in flight together: a serialised host would never set it
        started["time"] = True
        for _ in range(2000):
            if started.get("weather_done"):
                return "12:00"
            await asyncio.sleep(0.005)
        return "never saw get_weather"

    async def weather(city: str) -> dict:
        """The weather in a city."""
        while not started.get("time"):
            await asyncio.sleep(0.005)
        started["weather_done"] = True
        return get_weather(city)

    script = Script(lang, FAN_OUT[lang])
    with CodeMode([Tool(weather, name="get_weather"), local_time], language=lang) as cm:
        out = Agent(script.model(), toolsets=[cm]).run_sync("weather?").output
    assert out == repr({"value": [21, "12:00"], "stdout": "got Oslo\n"})
    desc = script.descriptions[0]
    stub = ("def get_weather(city: str)" if lang == "python" else
            "get_weather(city: string): Promise<")
    assert stub in desc and "The local time in a city." in desc, desc


def test_a_tools_model_retry_reaches_the_model_as_a_retry_of_the_code_tool(lang):
    def get_temp(city: str) -> int:
        """Temperature of a city (capitalised name)."""
        if city != city.capitalize():
            raise ModelRetry("city must be capitalised, e.g. Oslo")
        return 21

    call = {"python": "tools.get_temp('%s')", "javascript": "await tools.get_temp('%s')"}[lang]
    script = Script(lang, call % "oslo", call % "Oslo")
    with CodeMode([get_temp], language=lang) as cm:
        out = Agent(script.model(), toolsets=[cm]).run_sync("temp?").output
    retry = script.returns[0]
    assert retry.tool_name == TOOL[lang] and retry.outcome == "retried", retry
    assert "ModelRetry: city must be capitalised, e.g. Oslo" in str(retry.content), retry
    assert out == repr({"value": 21})


def test_a_guest_error_is_a_retry_with_its_traceback(lang):
    code = {"python": "x = 1\n1 / 0", "javascript": "null.x"}[lang]
    script = Script(lang, code, "1 + 1")
    with CodeMode([get_weather], language=lang) as cm:
        out = Agent(script.model(), toolsets=[cm]).run_sync("go").output
    text = str(script.returns[0].content)
    assert script.returns[0].outcome == "retried"
    assert ("ZeroDivisionError" if lang == "python" else "TypeError") in text, text
    assert "traceback:" in text, text
    assert out == repr({"value": 2})


def test_usage_limits_count_the_inner_calls(lang):
    calls = []

    def lookup(name: str) -> str:
        calls.append(name)
        return name + "@example.com"

    code = {"python": "[tools.lookup(n) for n in 'abc']",
            "javascript": "[await tools.lookup('a'), await tools.lookup('b'), "
                          "await tools.lookup('c')]"}[lang]
    script = Script(lang, code)
    with CodeMode([lookup], language=lang) as cm:
        agent = Agent(script.model(), toolsets=[cm])
        with pytest.raises(UsageLimitExceeded, match="tool_calls_limit of 3"):
            agent.run_sync("go", usage_limits=UsageLimits(tool_calls_limit=3))
        # the code tool's own call and two inner ones fit; the third did not run
        assert calls == ["a", "b"]
        script2 = Script(lang, code)
        agent2 = Agent(script2.model(), toolsets=[cm])
        r = agent2.run_sync("go", usage_limits=UsageLimits(tool_calls_limit=4))
        assert r.usage.tool_calls == 4


def send_email(to: str, body: str) -> str:
    """Send an email."""
    SENT.append(to)
    return "sent to " + to


SENT = []

APPROVE = {
    "python": "addr = tools.lookup('ann')\nr = tools.send_email(addr, body='hi')\nr",
    "javascript": "var addr = await tools.lookup('ann');\n"
                  "await tools.send_email(addr, 'hi')",
}


def test_an_approval_is_a_deferred_request_and_resumes_the_same_eval(lang):
    SENT.clear()
    script = Script(lang, APPROVE[lang])
    tools = [lambda name: name + "@example.com", Tool(send_email, requires_approval=True)]
    tools[0].__name__ = "lookup"
    with CodeMode(tools, language=lang) as cm:
        agent = Agent(script.model(), toolsets=[cm], output_type=[str, DeferredToolRequests])
        r = agent.run_sync("mail ann")
        req = r.output
        assert isinstance(req, DeferredToolRequests), req
        assert [c.tool_name for c in req.approvals] == [TOOL[lang]]
        assert req.metadata["c1"] == {"calls": [{"tool": "send_email", "args": {
            "to": "ann@example.com", "body": "hi"}}]}
        assert SENT == []  # held, not run
        r2 = agent.run_sync(message_history=r.all_messages(),
                            deferred_tool_results=DeferredToolResults(approvals={"c1": True}))
        assert r2.output == repr({"value": "sent to ann@example.com"})
        assert SENT == ["ann@example.com"]
        # the eval that paused is the one that went on: its variable is there
        script3 = Script(lang, "addr")
        out = Agent(script3.model(), toolsets=[cm]).run_sync("again").output
        assert out == repr({"value": "ann@example.com"})


def test_a_denied_approval_raises_tool_denied_in_the_guest(lang):
    SENT.clear()
    code = {"python": "try:\n    tools.send_email('bob@example.com', 'hi')\nexcept "
                      "PermissionError as e:\n    denied = str(e)\n'done'",
            "javascript": "var denied;\ntry { await tools.send_email('bob@example.com', 'hi') } "
                          "catch (e) { denied = e.name + ': ' + e.message }\n'done'"}[lang]
    script = Script(lang, code)
    with CodeMode([Tool(send_email, requires_approval=True)], language=lang) as cm:
        agent = Agent(script.model(), toolsets=[cm], output_type=[str, DeferredToolRequests])
        r = agent.run_sync("mail bob")
        assert isinstance(r.output, DeferredToolRequests)
        results = DeferredToolResults(approvals={"c1": ToolDenied("not bob")})
        script.codes.append("denied")
        r2 = agent.run_sync(message_history=r.all_messages(), deferred_tool_results=results)
    assert SENT == []
    assert "not bob" in r2.output, r2.output


def test_state_persists_across_the_agents_runs(lang):
    set_x = {"python": "x = 41", "javascript": "var x = 41"}[lang]
    with CodeMode([get_weather], language=lang) as cm:
        s1 = Script(lang, set_x)
        agent = Agent(s1.model(), toolsets=[cm])
        r = agent.run_sync("set")
        s2 = Script(lang, "x + 1")
        r2 = Agent(s2.model(), toolsets=[cm]).run_sync("read", message_history=r.all_messages())
    assert r2.output == repr({"value": 42})


def test_one_session_per_key_from_deps():
    with CodeMode([get_weather], session_key=lambda ctx: ctx.deps) as cm:
        Agent(Script("python", "x = 'ann'").model(), toolsets=[cm], deps_type=str).run_sync(
            "a", deps="ann")
        out = Agent(Script("python", "'x' in globals()").model(), toolsets=[cm],
                    deps_type=str).run_sync("b", deps="bob").output
        assert out == repr({"value": False})
        assert cm.session("ann") is not cm.session("bob")


def test_the_budget_is_the_sessions_and_host_code_shares_it(lang):
    calls = []

    def lookup(name: str) -> str:
        calls.append(name)
        return name

    call = {"python": "tools.%s('%s')", "javascript": "await tools.%s('%s')"}[lang]
    with CodeMode([lookup], language=lang, max_calls=3) as cm:
        Agent(Script(lang, call % ("lookup", "a")).model(), toolsets=[cm]).run_sync("1")
        session = cm.session()
        assert session.calls_made == 1
        # host code in the same session: its own tool counts against the same budget
        session.add_tools({"audit": lambda who: calls.append(who) or who})
        assert session.run(call % ("audit", "host")).value == "host"
        # the agent's tools are the run's: outside it, a clear error (the call
        # reached the host, so it counts: the third)
        with pytest.raises(codecage.GuestError, match="a tool of the agent's run"):
            session.run(call % ("lookup", "x"))
        script = Script(lang, call % ("lookup", "b"), "'gave up'")
        out = Agent(script.model(), toolsets=[cm]).run_sync("2").output
        assert "ToolBudgetError" in str(script.returns[0].content), script.returns[0]
        assert out == repr({"value": "gave up"})
        assert calls == ["a", "host"] and session.calls_remaining == 0


def test_bad_arguments_are_a_guest_error_naming_the_tool():
    script = Script("python", "tools.get_weather(1, 2)", "'ok'")
    with CodeMode([get_weather]) as cm:
        Agent(script.model(), toolsets=[cm]).run_sync("go")
    assert "get_weather() takes 1 positional argument but 2 were given" in str(
        script.returns[0].content)


def test_bad_language_and_tool_are_refused():
    with pytest.raises(codecage.InvalidInputError, match="language must be"):
        CodeMode([get_weather], language="ruby")
    with pytest.raises(TypeError, match="CodeMode takes functions"):
        CodeMode([42])


def test_the_offline_example_runs():
    env = dict(os.environ, PYTHONPATH=ccpkg.PKG_DIR)
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "pydantic_ai_code_mode.py")],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "approve send_email(to='ann@example.com')" in proc.stdout, proc.stdout
    assert proc.stdout.rstrip().endswith("model: sent to ann@example.com; it is 21 C in Oslo"), \
        proc.stdout
