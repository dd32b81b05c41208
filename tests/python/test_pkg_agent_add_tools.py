"""AgentSession.add_tools: tools given between evals (the FastMCP bridge
and pydantic-ai's code mode add theirs this way) count against the
session's budget, go into its journal, and may be GROUP.TOOL."""
import pytest

import ccpkg  # noqa: F401
import codecage
from codecage import AgentSession

KEY = b"a host secret, 16+ bytes"


def test_added_tools_share_the_budget_and_replay_from_the_journal(lang):
    calls = []

    def temp(city):
        calls.append(city)
        return 21

    call = {"python": "tools.w.temp('Oslo') + lookup('a')",
            "javascript": "(await tools.w.temp('Oslo')) + lookup('a')"}[lang]
    with AgentSession(language=lang, tools={"lookup": lambda k: 1}, max_calls=2, key=KEY) as s:
        s.add_tools({"w.temp": temp})
        assert s.run(call).value == 22
        assert s.calls_remaining == 0
        with pytest.raises(codecage.ToolBudgetError):
            s.run(call)
        journal = s.dump()
    with AgentSession.load(journal, key=KEY, tools={"lookup": lambda k: 1, "w.temp": temp}) as s2:
        assert s2.calls_made == 2  # replayed from the journal: the tool did not run again
    assert calls == ["Oslo"]


def test_add_tools_refuses_a_taken_or_bad_name_and_a_paused_session():
    with AgentSession(language="python", tools={"send": lambda: 1},
                      approval_required={"send"}) as s:
        with pytest.raises(codecage.InvalidInputError, match="already"):
            s.add_tools({"send": lambda: 2})
        with pytest.raises(codecage.InvalidInputError, match="not an ASCII identifier"):
            s.add_tools({"a-b": lambda: 2})
        with pytest.raises(TypeError, match="not callable"):
            s.add_tools({"x": 3})
        r = s.run("send()")
        assert r.paused
        with pytest.raises(codecage.InvalidInputError, match="paused"):
            s.add_tools({"later": lambda: 2})
        assert s.resume(r.pending[0].id).value == 1
