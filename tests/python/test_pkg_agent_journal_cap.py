"""AgentSession's journal is capped (issue 27, B2): it kept every tool
call's arguments and result for the session's life (+157 MB per eval,
dump() 472 MB). Past max_journal_calls or max_journal_bytes a call is
refused in the guest with a catchable JournalFullError naming the cap and
its option; the host sees it (uncaught: codecage.JournalFullError; the
journal_* counts); nothing journaled before is lost; dump() stays within
the cap, and replays the refusals."""
import pytest

import ccpkg  # noqa: F401  (builds the package)

from codecage import (AgentSession, GuestError, InvalidInputError, JournalFullError,
                      ToolBudgetError)

KEY = b"journal-cap-key-0123456789"

# Make n calls of tool(arg), catching each failure: the values, or the
# error's name and message.
LOOP = {
    "javascript": """
(async () => {{
  const out = [];
  for (let i = 0; i < {n}; i++) {{
    try {{ out.push(await tools.{tool}({arg})) }} catch (e) {{ out.push([e.name, e.message]) }}
  }}
  return out;
}})()""",
    "python": """
out = []
for i in range({n}):
    try:
        out.append({tool}({arg}))
    except Exception as e:
        out.append([type(e).__name__, str(e)])
out""",
}


def loop(lang, n, tool="echo", arg="i"):
    return LOOP[lang].format(n=n, tool=tool, arg=arg)


class Host:
    def __init__(self):
        self.ran = []

    def echo(self, v):
        self.ran.append(v)
        return v

    def blob(self, n):
        self.ran.append(n)
        return "x" * n

    def tools(self):
        return {"echo": self.echo, "blob": self.blob}


def test_defaults_and_bad_caps():
    from codecage import _journal
    assert (_journal.DEFAULT_MAX_BYTES, _journal.DEFAULT_MAX_CALLS) == (64 << 20, 10_000)
    with AgentSession(language="javascript") as s:
        assert (s.max_journal_bytes, s.max_journal_calls) == (64 << 20, 10_000)
        assert s.journal_calls == 0 and s.journal_refused == 0
        assert 0 < s.journal_bytes < 1024
    for kw in ({"max_journal_calls": 0}, {"max_journal_calls": True},
               {"max_journal_bytes": 4095}, {"max_journal_bytes": 1.5e6},
               {"max_journal_calls": None}):
        with pytest.raises(InvalidInputError, match=list(kw)[0]):
            AgentSession(language="javascript", **kw)


@pytest.mark.parametrize("lang", ["javascript", "python"])
def test_calls_past_the_call_cap_are_refused_and_nothing_is_lost(lang):
    host = Host()
    with AgentSession(language=lang, tools=host.tools(), key=KEY, max_journal_calls=3) as s:
        s.run("globalThis.kept = 'state'" if lang == "javascript" else "kept = 'state'")
        out = s.run(loop(lang, 5)).value
        assert out[:3] == [0, 1, 2]
        for name, message in out[3:]:
            assert name == "JournalFullError"
            assert "at most 3 tool calls" in message
            assert "AgentSession(max_journal_calls=N)" in message
        assert host.ran == [0, 1, 2]  # refused calls never reached the host
        assert (s.journal_calls, s.journal_refused) == (3, 2)
        # uncaught: the host's own error, a ToolBudgetError of kind tool_budget
        with pytest.raises(JournalFullError) as e:
            s.run("await tools.echo(9)" if lang == "javascript" else "echo(9)")
        assert isinstance(e.value, ToolBudgetError) and e.value.kind == "tool_budget"
        assert "max_journal_calls" in str(e.value)
        assert s.journal_refused == 3 and host.ran == [0, 1, 2]
        # a guest that merely names the error is not taken for a refusal
        forged = ("throw Object.assign(new Error('x'), {name: 'JournalFullError'})"
                  if lang == "javascript" else
                  "raise type('JournalFullError', (Exception,), {})('x')")
        with pytest.raises(GuestError) as e:
            s.run(forged)
        assert not isinstance(e.value, JournalFullError)
        assert s.run("kept").value == "state"  # evals without calls still run
        data = s.dump()
        assert len(data) <= s.journal_bytes
    # the same caps: the refusals replay as they were, nothing runs again
    with AgentSession.load(data, key=KEY, tools=host.tools(), max_journal_calls=3) as s2:
        assert (s2.journal_calls, s2.journal_refused) == (3, 3)
        assert s2.run("kept").value == "state"
        assert host.ran == [0, 1, 2]
    # higher caps: it goes on where it was
    with AgentSession.load(data, key=KEY, tools=host.tools(), max_journal_calls=10) as s3:
        assert s3.run(loop(lang, 2)).value == [0, 1]
        assert s3.journal_calls == 5 and host.ran == [0, 1, 2, 0, 1]


@pytest.mark.parametrize("lang", ["javascript", "python"])
def test_the_byte_cap_bounds_the_dump(lang):
    host = Host()
    cap = 64 << 10
    with AgentSession(language=lang, tools=host.tools(), key=KEY, max_journal_bytes=cap) as s:
        # results that fit, until one does not: that one's tool ran, the
        # guest got the error instead of it
        out = s.run(loop(lang, 3, tool="blob", arg="25000")).value
        assert out[0] == "x" * 25000 and out[1] == "x" * 25000
        assert out[2][0] == "JournalFullError" and "its outcome (" in out[2][1]
        assert "AgentSession(max_journal_bytes=N)" in out[2][1]
        assert host.ran == [25000] * 3
        assert len(s.dump()) <= s.journal_bytes <= cap
        # arguments that do not fit: refused before the host
        big = "'y'.repeat(40000)" if lang == "javascript" else "'y' * 40000"
        out = s.run(loop(lang, 2, arg=big)).value
        assert [o[0] for o in out] == ["JournalFullError"] * 2
        assert "64 MiB" not in out[0][1] and f"{cap} bytes" in out[0][1]
        assert host.ran == [25000] * 3
        # a later eval's small call still fits
        assert s.run(loop(lang, 1)).value == [0]
        assert len(s.dump()) <= s.journal_bytes <= cap
        # code that does not fit is refused before it runs
        with pytest.raises(JournalFullError, match="cannot take this code"):
            s.run("globalThis.ran = 1; " + "/" * 2 + "z" * cap if lang == "javascript"
                  else "ran = 1  # " + "z" * cap)
        with pytest.raises(GuestError):
            s.run("ran")  # it never ran
        data = s.dump()
        assert len(data) <= cap
    with AgentSession.load(data, key=KEY, tools=host.tools(), max_journal_bytes=cap) as s2:
        assert s2.journal_refused == 2
        assert host.ran == [25000] * 3 + [0]  # replayed from the journal


def test_a_journal_over_the_caps_given_to_load_loads_and_refuses_more():
    host = Host()
    with AgentSession(language="python", tools=host.tools(), key=KEY) as s:
        s.run(loop("python", 3))
        data = s.dump()
    with AgentSession.load(data, key=KEY, tools=host.tools(), max_journal_calls=2) as s2:
        assert s2.journal_calls == 3
        out = s2.run(loop("python", 1)).value
        assert out[0][0] == "JournalFullError"
