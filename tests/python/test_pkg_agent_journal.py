"""AgentSession's journal: dump in one process, load in another (a
subprocess) before and during a pause; the guest's random sources and
clock reproduced; tampered, wrong-key and truncated journals refused before
anything runs; replay divergence; budgets preserved across load; nothing
of the host's environment in a dump; describe_tools."""
import json
import os
import subprocess
import sys
import time
from typing import Optional, TypedDict

import pytest

import ccpkg

from codecage import (AgentSession, InvalidInputError, ReplayDivergenceError, Tool,
                      ToolBudgetError, _journal)

KEY = b"journal-key-0123456789abcdef"

SETUP = {"javascript": "globalThis.r0 = Math.random(); globalThis.t0 = Date.now(); "
                       "globalThis.w = lookup('A1'); 'ok'",
         "python": "import random, time, os\nr0 = random.random(); t0 = time.time()\n"
                   "u0 = os.urandom(8).hex(); w = lookup('A1'); 'ok'"}
ASK = {"javascript": "const sent = await tools.send_email('ann', 'hi ' + w); "
                     "[sent, r0, t0, Math.random(), Date.now()]",
       "python": "sent = send_email('ann', 'hi ' + str(w))\n"
                 "[sent, r0, t0, u0, random.random(), time.time()]"}

CHILD = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
from codecage import AgentSession
calls = []
def send_email(to, body):
    calls.append(("send_email", to, body)); return "sent to " + to
def lookup(k):
    calls.append(("lookup", k)); return 7
data = open(sys.argv[2], "rb").read()
s = AgentSession.load(data, key=sys.argv[3].encode(), sandbox="require",
                      tools={"send_email": send_email, "lookup": lookup})
out = {"pending": [[c.id, c.tool, c.args] for c in s.pending], "made": s.calls_made}
if s.pending:
    out["value"] = s.resume(s.pending[0].id).value
else:
    r = s.run(sys.argv[4])
    out["value"] = s.resume(r.pending[0].id).value if r.paused else r.value
out["calls"] = calls
print(json.dumps(out))
'''


def in_child(tmp_path, data, code=""):
    (tmp_path / "journal").write_bytes(data)
    (tmp_path / "child.py").write_text(CHILD)
    p = subprocess.run([sys.executable, str(tmp_path / "child.py"), ccpkg.PKG_DIR,
                        str(tmp_path / "journal"), KEY.decode(), code],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


class Host:
    def __init__(self):
        self.calls = []

    def send_email(self, to, body):
        self.calls.append(("send_email", to, body))
        return "sent to " + to

    def lookup(self, k):
        self.calls.append(("lookup", k))
        return 7

    def tools(self):
        return {"send_email": self.send_email, "lookup": self.lookup}


def session(lang, host, **kw):
    return AgentSession(language=lang, tools=host.tools(), approval_required={"send_email"},
                        key=KEY, **kw)


def test_load_in_another_process_during_a_pause(lang, tmp_path):
    host = Host()
    with session(lang, host) as s:
        assert s.run(SETUP[lang]).value == "ok"
        r = s.run(ASK[lang])
        (call,) = r.pending
        data = s.dump()
        mine = s.resume(call.id).value  # this process goes on too
    out = in_child(tmp_path, data)
    # paused again at the same call; the journal answered lookup, not the tool
    assert out["pending"] == [[call.id, "send_email", ["ann", "hi 7"]]]
    assert out["calls"] == [["send_email", "ann", "hi 7"]]
    assert out["made"] == 2  # lookup and the pending send_email, as before the dump
    # random draws and clock readings are the same in both processes
    assert out["value"] == mine
    assert mine[0] == "sent to ann"
    # the clock is the recorded start of the eval, moving 1 ms per reading
    t0 = mine[2] / 1000 if lang == "javascript" else mine[2]
    assert abs(t0 - time.time()) < 3600
    assert mine[-1] > mine[2]


def test_load_in_another_process_before_a_pause(lang, tmp_path):
    host = Host()
    with session(lang, host) as s:
        s.run(SETUP[lang])
        data = s.dump()
        r = s.run(ASK[lang])
        mine = s.resume(r.pending[0].id).value
    out = in_child(tmp_path, data, ASK[lang])
    assert out["pending"] == [] and out["made"] == 1
    assert out["calls"] == [["send_email", "ann", "hi 7"]]
    # the new eval's clock is the child's own; the seeded draws match
    assert out["value"][:3] == mine[:3]
    assert out["value"][3 if lang == "javascript" else 4] == mine[3 if lang == "javascript"
                                                                  else 4]


def test_reverse_without_the_journal_seed_draws_differ(lang):
    vals = []
    for _ in range(2):
        with session(lang, Host()) as s:
            vals.append(s.run("Math.random()" if lang == "javascript" else
                              "import random; random.random()").value)
    assert vals[0] != vals[1]  # each session has its own seed


def _tampered(data):
    return data[:-5] + bytes([data[-5] ^ 1]) + data[-4:]


@pytest.mark.parametrize("bad", ["tampered", "edited", "wrong_key", "truncated", "short",
                                 "magic", "not_bytes"])
def test_bad_journals_are_refused_before_anything_runs(lang, bad):
    host = Host()
    with session(lang, host) as s:
        s.run(SETUP[lang])
        data = s.dump()
    host.calls.clear()
    key = KEY
    edited = data.replace(b"'ok'", b"'OK'")  # still a valid body, and it would replay
    assert edited != data
    data = {"tampered": _tampered(data), "edited": edited, "wrong_key": data, "truncated": data[:-1],
            "short": data[:20], "magic": b"XXAGENT1" + data[8:], "not_bytes": "text"}[bad]
    if bad == "wrong_key":
        key = b"another-key-0123456789abcdef"
    # refused by the envelope's checks, which come before any worker starts
    with pytest.raises(InvalidInputError, match="signature does not match|not an agent session "
                                                "journal|format version|bytes AgentSession"):
        AgentSession.load(data, key=key, tools=host.tools())
    assert host.calls == []


def test_reverse_the_same_journal_with_the_right_key_loads(lang):
    host = Host()
    with session(lang, host) as s:
        s.run(SETUP[lang])
        data = s.dump()
    with AgentSession.load(data, key=KEY, tools=host.tools()) as s2:
        assert s2.run("w").value == 7


def _resign(data, change):
    body = json.loads(data[8 + 32:])
    change(body)
    return _journal.sign(body, KEY)


def test_replay_divergence_is_an_explicit_error(lang):
    host = Host()
    with session(lang, host) as s:
        s.run(SETUP[lang])
        data = s.dump()

    def other_args(b):
        b["evals"][0]["calls"][0]["args"] = ["B2"]

    def no_calls(b):
        b["evals"][0]["calls"] = []
        b["evals"][0]["order"] = []

    for change in (other_args, no_calls):
        with pytest.raises(ReplayDivergenceError, match="not deterministic"):
            AgentSession.load(_resign(data, change), key=KEY, tools=host.tools())


def test_real_nondeterminism_is_caught_on_replay():
    host = Host()
    with session("python", host) as s:
        s.run("import time\nlookup(time.perf_counter_ns())")  # perf_counter is real
        data = s.dump()
    with pytest.raises(ReplayDivergenceError, match=r"lookup\(\d+\).*not deterministic"):
        AgentSession.load(data, key=KEY, tools=host.tools())


def test_budgets_survive_load(lang):
    host = Host()
    kw = dict(max_calls=3, per_tool={"send_email": 1})
    with session(lang, host, **kw) as s:
        s.run(SETUP[lang])
        r = s.run(ASK[lang])
        s.resume(r.pending[0].id)
        data = s.dump()
        assert (s.calls_made, s.calls_remaining) == (2, 1)
    with AgentSession.load(data, key=KEY, tools=host.tools()) as s2:
        assert (s2.calls_made, s2.calls_remaining) == (2, 1)
        with pytest.raises(ToolBudgetError):
            s2.run("send_email('bob', 'x')")  # send_email's own budget is spent
        assert s2.run("lookup('x')").value == 7
        with pytest.raises(ToolBudgetError):
            s2.run("lookup('y')")  # the total is spent


def test_nothing_of_the_host_environment_in_a_dump(lang, monkeypatch):
    secret = "sk-live-ZZZ-do-not-leak-1234567890"
    monkeypatch.setenv("CC_AGENT_TEST_SECRET", secret)
    api_key = "api-key-QQQ-" + "9" * 20

    def lookup(k):
        assert api_key  # the tool holds a secret; only its result is journaled
        return 7

    with AgentSession(language=lang, tools={"lookup": lookup}, key=KEY) as s:
        s.run("lookup('A1')")
        data = s.dump()
    for text in (secret, api_key, KEY.decode(), os.environ.get("HOME", "/nonexistent"),
                 ccpkg.PKG_DIR, os.getcwd()):
        assert text.encode() not in data, text
    body = json.loads(data[8 + 32:])
    assert set(body) == {"v", "language", "seed", "bootstrap", "approval_required",
                         "max_calls", "per_tool", "evals"}
    # reverse: what the guest asked for is in it
    assert b"lookup('A1')" in data


class Weather(TypedDict):
    """Current conditions."""
    city: str
    temp_c: float


def get_weather(city: str, units: Optional[str] = None) -> Weather:
    """The weather in a city."""
    return {"city": city, "temp_c": 21.0}


SEND = Tool(lambda to, body: "ok", description="Send an email (needs approval).",
            parameters={"type": "object", "required": ["to"],
                        "properties": {"to": {"type": "string"},
                                       "body": {"type": "string"}}},
            returns={"type": "string"})


def test_describe_tools():
    with AgentSession(tools={"get_weather": get_weather, "send_email": SEND}) as s:
        ts = s.describe_tools("javascript")
        py = s.describe_tools("python")
        assert s.run("get_weather('Oslo').temp_c").value == 21.0
        with pytest.raises(InvalidInputError, match="describe_tools"):
            s.describe_tools("ruby")
    assert "interface Weather {\n  city: string;\n  temp_c: number;\n}" in ts
    assert "declare const tools: {" in ts
    assert "  /** The weather in a city. */\n" \
           "  get_weather(city: string, units?: string | null): Promise<Weather>;" in ts
    assert "  send_email(to: string, body?: string): Promise<string>;" in ts
    assert "class Weather(TypedDict):" in py and "    temp_c: float" in py
    assert "def get_weather(city: str, units: str | None = None) -> Weather:\n" \
           '    """The weather in a city."""' in py
    assert "def send_email(to: str, body: str = None) -> str:" in py
    compile(py, "<stubs>", "exec")  # valid Python


def test_reverse_an_edit_signed_with_the_key_is_replayed(lang):
    """What keeps an edited journal out is the signature alone: the same
    edit, signed with the key, is replayed as written."""
    host = Host()
    with session(lang, host) as s:
        s.run(SETUP[lang])
        data = s.dump()

    def edit(b):
        b["evals"][0]["code"] += ("; globalThis.edited = 1" if lang == "javascript"
                                  else "\nedited = 1")

    with AgentSession.load(_resign(data, edit), key=KEY, tools=host.tools()) as s2:
        assert s2.run("edited").value == 1


def test_an_eval_ended_by_its_approval_timeout_replays(lang):
    host = Host()
    with session(lang, host, approval_timeout=0.3) as s:
        s.run(SETUP[lang])
        r = s.run(ASK[lang])
        s._thread.join(20)  # the approval timeout ends it (20 s: only when broken)
        with pytest.raises(Exception, match="approval timeout"):
            s.resume(r.pending[0].id)
        assert s.run("w").value == 7
        data = s.dump()
    with AgentSession.load(data, key=KEY, tools=host.tools()) as s2:
        assert s2.pending == []
        assert s2.run("w + 1").value == 8
    assert [c[0] for c in host.calls] == ["lookup"]  # send_email never ran


def test_load_into_a_fork_server_session_during_a_pause(lang):
    from codecage import ForkServer
    host = Host()
    with session(lang, host) as s:
        s.run(SETUP[lang])
        r = s.run(ASK[lang])
        data = s.dump()
        mine = s.resume(r.pending[0].id).value
    with ForkServer(language=lang, preload="") as fs:
        with AgentSession.load(data, key=KEY, tools=host.tools(), fork_server=fs) as s2:
            (call,) = s2.pending
            assert s2.resume(call.id).value == mine


def test_a_call_never_awaited_replays():
    host = Host()
    with session("javascript", host) as s:
        r = s.run("tools.send_email('ann', 'hi'); globalThis.k = 5; 'done'")
        # the eval returned without awaiting: the call is cancelled with it
        while r.paused:
            s._thread.join(20)
            r = s.resume(r.pending[0].id)
        assert r.value == "done"
        data = s.dump()
    with AgentSession.load(data, key=KEY, tools=host.tools()) as s2:
        assert s2.run("k").value == 5
    assert host.calls == []


def test_the_default_journal_cap_bounds_a_dump():
    """Issue 27 B2: every call's result stayed in the journal for the
    session's life (dump() 472 MB in the report). With the default cap
    (64 MiB) the 1 MiB results past it reach the guest as a catchable
    JournalFullError (the tool ran: its result did not fit), and the dump
    stays within the cap."""
    ran = []

    def blob(n):
        ran.append(n)
        return "x" * n

    code = """
let n = 0, names = new Set();
for (let i = 0; i < 70; i++) {
  try { (await tools.blob(1 << 20)).length === 1 << 20 && n++ } catch (e) { names.add(e.name) }
}
[n, [...names]]"""
    with AgentSession(language="javascript", tools={"blob": blob}, key=KEY) as s:
        n, names = s.run(code).value
        assert names == ["JournalFullError"] and 50 < n < 64, (n, names)
        data = s.dump()
    assert len(data) <= 64 << 20
    assert len(ran) == 70  # every call reached the host; the last results did not fit


def test_dates_durations_zones_and_paths_are_journaled_as_themselves():
    """Issue 27: what crosses as itself is journaled as itself, so a replay
    gives the guest the same value (a tool's arguments compare equal on
    replay; they were "cannot be journaled")."""
    import datetime
    import pathlib
    tz = datetime.timezone(-datetime.timedelta(hours=23, minutes=59), "far west")
    for v in (datetime.date.min, datetime.timedelta.min, datetime.timedelta(microseconds=-1),
              tz, datetime.timezone.utc, datetime.timezone(datetime.timedelta(0), ""),
              datetime.datetime(1, 1, 1, tzinfo=tz), pathlib.PurePosixPath("/t/\u00e9"),
              datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=5)))):
        back = _journal.decode(json.loads(json.dumps(_journal.encode(v))))
        assert type(back) is type(v) and repr(back) == repr(v), (v, back)
    tools = {"shift": lambda d, td, where: [d + td, where]}
    code = ("import datetime, pathlib\n"
            "shift(datetime.date(2024, 2, 28), datetime.timedelta(days=1), pathlib.Path('/x'))")
    with AgentSession(language="python", tools=tools, key=KEY) as s:
        first = s.run(code).value
        data = s.dump()
    assert first == [datetime.date(2024, 2, 29), pathlib.PurePosixPath("/x")]
    s = AgentSession.load(data, key=KEY, tools=tools)  # replays the call: same arguments
    try:
        assert s.run("1").value == 1
    finally:
        s.close()
