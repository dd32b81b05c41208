"""AgentSession: tools that wait for approval pause the eval and resume it,
in both languages, on spawned and forked sessions; deny; answer with
result=; several pending calls; the approval wait outside the deadline and
its own timeout; budgets."""
import threading
import time

import pytest

import ccpkg  # noqa: F401  (builds the package)

from codecage import (AgentSession, ForkServer, InvalidInputError, TimeoutError,
                      ToolBudgetError)

KEY = b"test-key-0123456789abcdef"

# Each language's code: draft three emails concurrently, report each outcome.
FANOUT = {
    "javascript": """
const rs = await Promise.allSettled(["ann", "bob", "cy"].map(to => tools.send_email(to, "hi")));
rs.map(r => r.status === "fulfilled" ? r.value : r.reason.name + ": " + r.reason.message)
""",
    "python": """
import asyncio
async def main():
    return await asyncio.gather(*[atools.send_email(to, "hi") for to in ("ann", "bob", "cy")],
                                return_exceptions=True)
[r if isinstance(r, str) else type(r).__name__ + ": " + str(r) for r in asyncio.run(main())]
""",
}

ONE = {"javascript": "(await tools.send_email('ann', 'hi')) + '!'",
       "python": "send_email('ann', body='hi') + '!'"}


@pytest.fixture(scope="module")
def servers():
    made = {}
    yield lambda lang: made.setdefault(lang, ForkServer(language=lang, preload=""))
    for fs in made.values():
        fs.close()


@pytest.fixture(params=["spawned", "forked"])
def how(request):
    return request.param


@pytest.fixture
def make(lang, how, servers):
    opened = []

    def mk(**kw):
        kw.setdefault("key", KEY)
        if how == "forked":
            s = AgentSession(fork_server=servers(lang), **kw)
        else:
            s = AgentSession(language=lang, **kw)
        opened.append(s)
        return s

    yield mk
    for s in opened:
        s.close()


class Mailer:
    def __init__(self):
        self.sent = []

    def send_email(self, to, body):
        self.sent.append(to)
        return "sent to " + to


def test_pause_then_resume_continues_the_same_eval(lang, make):
    m = Mailer()
    s = make(tools={"send_email": m.send_email}, approval_required={"send_email"})
    s.run("globalThis.n = 1" if lang == "javascript" else "n = 1")
    r = s.run(ONE[lang])
    assert r.paused and r.value is None
    (call,) = r.pending
    assert call.tool == "send_email"
    if lang == "python":
        assert (call.args, call.kwargs) == (["ann"], {"body": "hi"})
    else:
        assert (call.args, call.kwargs) == (["ann", "hi"], {})
    assert m.sent == []  # nothing ran before the approval
    assert s.pending == [call]
    r = s.resume(call.id)
    assert not r.paused and r.value == "sent to ann!"
    assert m.sent == ["ann"]
    assert s.run("n + 1").value == 2  # state kept across turns


def test_deny_is_a_catchable_ToolDeniedError(lang, make):
    m = Mailer()
    s = make(tools={"send_email": m.send_email}, approval_required={"send_email"})
    code = {"javascript": """
try { await tools.send_email('ann', 'hi'); 'no error' }
catch (e) { [e.name, e.message, e instanceof Error].join('|') }""",
            "python": """
try:
    send_email('ann', 'hi')
    out = 'no error'
except PermissionError as e:
    out = '|'.join([type(e).__name__, str(e)])
out"""}[lang]
    r = s.run(code)
    r = s.resume(r.pending[0].id, approve=False, reason="not to customers")
    want = "ToolDeniedError|not to customers" + ("|true" if lang == "javascript" else "")
    assert r.value == want
    assert m.sent == []


def test_result_answers_without_running_the_tool(lang, make):
    m = Mailer()
    s = make(tools={"send_email": m.send_email}, approval_required={"send_email"})
    r = s.run(ONE[lang])
    r = s.resume(r.pending[0].id, result="queued for later")
    assert r.value == "queued for later!"
    assert m.sent == []


def test_several_pending_calls_are_all_listed(lang, make):
    m = Mailer()
    s = make(tools={"send_email": m.send_email}, approval_required={"send_email"})
    r = s.run(FANOUT[lang])
    assert r.paused
    assert [c.args[0] for c in r.pending] == ["ann", "bob", "cy"]
    ids = [c.id for c in r.pending]
    assert len(set(ids)) == 3
    r = s.resume(ids[1], approve=False, reason="no")
    assert r.paused and [c.id for c in r.pending] == [ids[0], ids[2]]
    r = s.resume(ids[2])
    assert r.paused and [c.id for c in r.pending] == [ids[0]]
    r = s.resume(ids[0])
    assert not r.paused
    assert r.value == ["sent to ann", "ToolDeniedError: no", "sent to cy"]
    assert m.sent == ["cy", "ann"]
    with pytest.raises(InvalidInputError, match="no pending call"):
        s.resume(ids[0])


def test_tools_without_approval_run_at_once(lang, make):
    s = make(tools={"send_email": Mailer().send_email, "lookup": lambda k: k * 2},
             approval_required={"send_email"})
    r = s.run("lookup(21)")
    assert not r.paused and r.value == 42


def test_waiting_for_approval_does_not_count_toward_the_deadline(lang, make):
    m = Mailer()
    s = make(tools={"send_email": m.send_email}, approval_required={"send_email"}, timeout=1)
    r = s.run(ONE[lang])
    time.sleep(2.5)  # a person reads the draft: longer than the eval's timeout
    r = s.resume(r.pending[0].id)
    assert r.value == "sent to ann!"


def test_reverse_a_slow_tool_without_approval_does_count(lang, make):
    def slow(to, body=None):
        time.sleep(2.5)
        return "sent"
    s = make(tools={"send_email": slow}, timeout=1)
    with pytest.raises(TimeoutError):
        s.run(ONE[lang])


def test_the_approval_timeout_ends_the_eval(lang, make):
    m = Mailer()
    s = make(tools={"send_email": m.send_email}, approval_required={"send_email"},
             approval_timeout=0.5, timeout=30)
    r = s.run(ONE[lang])
    time.sleep(2)
    with pytest.raises(TimeoutError, match=r"approval timeout of 0.5 s.*"
                                           r"AgentSession\(approval_timeout=SECONDS\)"):
        s.resume(r.pending[0].id)
    assert m.sent == []  # the eval was over: the tool never ran
    assert s.run("6 * 7").value == 42  # and the session goes on


def test_run_while_paused_is_refused(lang, make):
    s = make(tools={"send_email": Mailer().send_email}, approval_required={"send_email"})
    s.run(ONE[lang])
    with pytest.raises(InvalidInputError, match="resume"):
        s.run("1")


def test_budget_and_per_tool_budget(lang, make):
    m = Mailer()
    s = make(tools={"send_email": m.send_email, "lookup": lambda k: k},
             approval_required={"send_email"}, max_calls=3, per_tool={"send_email": 1})
    r = s.run(ONE[lang])
    s.resume(r.pending[0].id)
    with pytest.raises(ToolBudgetError):
        s.run(ONE[lang])  # the second email is over send_email's own budget
    assert s.run("lookup(1)").value == 1
    assert s.calls_made == 2 and s.calls_remaining == 1


def test_bad_arguments(lang):
    with pytest.raises(InvalidInputError, match="approval_required names 'nope'"):
        AgentSession(language=lang, tools={}, approval_required={"nope"})
    with pytest.raises(InvalidInputError, match="approval_timeout"):
        AgentSession(language=lang, tools={"f": len}, approval_timeout=0)
    with pytest.raises(InvalidInputError, match="key"):
        AgentSession(language=lang, key=b"short")
    with AgentSession(language=lang) as s:
        with pytest.raises(InvalidInputError, match="AgentSession\\(key=...\\)"):
            s.dump()


def test_a_guest_computing_while_its_call_waits_is_still_bounded(lang, make):
    """The approval wait stops the eval's clock, not the guest: code that
    keeps running while its call waits is ended by the approval timeout
    (the supervisor's) at the latest."""
    spin = {"javascript": "const p = tools.send_email('ann', 'hi'); for (;;) {}",
            "python": "import asyncio\nasync def main():\n"
                      "    t = asyncio.ensure_future(atools.send_email('ann', 'hi'))\n"
                      "    await asyncio.sleep(0)\n"
                      "    while True: pass\nasyncio.run(main())"}[lang]
    s = make(tools={"send_email": Mailer().send_email}, approval_required={"send_email"},
             approval_timeout=1, timeout=1, grace=0.5)
    r = s.run(spin)
    assert r.paused
    s._thread.join(20)  # the eval ends by itself, no resume needed (20 s: only when broken)
    assert not s._thread.is_alive()
    with pytest.raises(TimeoutError):
        s.resume(r.pending[0].id)


def test_the_worker_says_it_waits_after_the_whole_fan_out(lang, make):
    """The hint that lists a fan-out at once (cc_runtime_set_wait_handler):
    the worker's "wait" comes after every call it sent before blocking."""
    seen = []
    s = make(tools={"send_email": Mailer().send_email}, approval_required={"send_email"})
    s._rt._rt.set_wait_handler(lambda: (seen.append("wait"), s._events.put(("idle",))))
    real = s._on_call

    def on_call(name, args, kwargs, pending):
        seen.append(args[0])
        real(name, args, kwargs, pending)

    s._on_call = on_call
    r = s.run(FANOUT[lang])
    assert [c.args[0] for c in r.pending] == ["ann", "bob", "cy"]
    assert seen[:4] == ["ann", "bob", "cy", "wait"]


def test_staggered_holds_keep_the_workers_clock_stopped(how, servers):
    """Two calls held at different times: when the first is answered, the
    second's approval deadline is the one the worker's own clock waits
    for (else the worker would stop the eval by its first deadline)."""
    m = Mailer()

    def slow():  # a tool that needs no approval, answered while 'a' waits
        time.sleep(2)
        return "slow"

    kw = dict(tools={"send_email": m.send_email, "slow": slow},
              approval_required={"send_email"}, approval_timeout=4, timeout=0.5)
    s = (AgentSession(fork_server=servers("javascript"), **kw) if how == "forked" else
         AgentSession(language="javascript", **kw))
    code = ("const pa = tools.send_email('a', 'x'); await tools.slow(); "
            "const b = await tools.send_email('b', 'x'); [await pa, b]")
    with s:
        t0 = time.monotonic()
        r = s.run(code)
        assert [c.args[0] for c in r.pending] == ["a"]
        time.sleep(max(0, t0 + 3 - time.monotonic()))
        r = s.resume(r.pending[0].id)  # a's deadline was t0+4, b's is about t0+6
        assert [c.args[0] for c in r.pending] == ["b"]
        time.sleep(max(0, t0 + 5.2 - time.monotonic()))  # past t0 + 0.5 + 4
        r = s.resume(r.pending[0].id)
        assert r.value == ["sent to a", "sent to b"]


# Issue 27 B3: the approval timeout is decided by the held call's own
# deadline, in the supervisor (cc_tool_call_unhold against track_hold's
# cc_replyq_expire), never by whether the eval's thread has noticed yet.
HOLD_THEN_BLOCK = {
    "javascript": "const p = tools.send_email('ann', 'hi'); await tools.block(); await p",
    "python": "import asyncio\nasync def main():\n"
              "    t = asyncio.ensure_future(atools.send_email('ann', 'hi'))\n"
              "    await asyncio.sleep(0)\n"  # the call is made (and held)
              "    block()\n"
              "    return await t\nasyncio.run(main())",
}


def _until(t):
    """Wait for the monotonic clock (the supervisor's, CLOCK_MONOTONIC) to
    pass t: a condition, not a schedule."""
    while time.monotonic() <= t:
        threading.Event().wait(max(0.001, t - time.monotonic()))


def test_an_answer_past_the_approval_deadline_never_runs_the_tool(lang, make):
    """The race that ran the tool and then raised TimeoutError: the host
    answers after the call's approval deadline but before the eval's
    thread has looked (here it is busy running another tool, `block`,
    which returns only once resume() has decided)."""
    m = Mailer()
    started, decided = threading.Event(), threading.Event()

    def block():
        started.set()
        assert decided.wait(20)
        return "done"

    s = make(tools={"send_email": m.send_email, "block": block},
             approval_required={"send_email"}, approval_timeout=0.2)
    r = s.run(HOLD_THEN_BLOCK[lang])
    assert [c.tool for c in r.pending] == ["send_email"]
    assert started.wait(20)  # the call was held before block started
    t_block = time.monotonic()
    _until(t_block + 0.2)  # past the held call's approval deadline
    cid = r.pending[0].id
    call, pending, i = s._pending[cid]
    decisions = []

    class Spy:  # tells block that resume() has decided
        def unhold(self):
            decisions.append(pending.unhold())
            decided.set()
            return decisions[-1]

        def __getattr__(self, name):
            return getattr(pending, name)

    s._pending[cid] = (call, Spy(), i)
    with pytest.raises(TimeoutError, match=r"approval timeout of 0.2 s"):
        s.resume(cid)
    assert decisions == [False]
    assert m.sent == []  # the tool never ran
    assert s.run("6 * 7").value == 42  # and the session goes on
    assert s.calls_made == 2  # send_email's and block's: nothing more


def test_an_approval_in_time_lets_a_slow_tool_finish(lang, make):
    """Approved in time, the call no longer waits for approval: its tool
    may run past the approval deadline (on the eval's clock, 30 s here)
    without the eval ending as an approval timeout."""
    box = {}

    def send_email(to, body=None):
        _until(box["paused"] + 0.4)  # past the approval deadline of 0.3 s
        return "sent to " + to

    s = make(tools={"send_email": send_email}, approval_required={"send_email"},
             approval_timeout=0.3)
    r = s.run(ONE[lang])
    box["paused"] = time.monotonic()  # after the hold
    r = s.resume(r.pending[0].id)
    assert r.value == "sent to ann!"


def test_resume_refuses_a_bool_as_an_id(lang, make):
    m = Mailer()
    s = make(tools={"send_email": m.send_email}, approval_required={"send_email"})
    r = s.run(ONE[lang])
    assert r.pending[0].id == 1  # True == 1: it would have approved it
    for bad in (True, False, 1.0, "1"):
        with pytest.raises(TypeError, match="call_id is a ToolCall's id"):
            s.resume(bad)
    assert m.sent == [] and s.pending == r.pending
    assert s.resume(1).value == "sent to ann!"


def test_after_an_approval_timeout_a_computing_guest_is_stopped_and_the_session_goes_on(
        lang, make):
    """A guest that computes while its call waits read no frame, so the
    supervisor's clock frame (the approval timed out: the deadline is now)
    went unseen until its SIGKILL, and the next run() raised WorkerCrashed.
    The worker now looks at its channel while a call is unanswered
    (cc_worker_calls_tick) and stops the guest as at a deadline."""
    spin = {"javascript": "const p = tools.send_email('ann', 'hi'); for (;;) {}",
            "python": "import asyncio\nasync def main():\n"
                      "    t = asyncio.ensure_future(atools.send_email('ann', 'hi'))\n"
                      "    await asyncio.sleep(0)\n"
                      "    while True: pass\nasyncio.run(main())"}[lang]
    m = Mailer()
    s = make(tools={"send_email": m.send_email}, approval_required={"send_email"},
             approval_timeout=0.5, timeout=30, grace=5)
    r = s.run(spin)
    assert r.paused
    s._thread.join(20)  # ends by itself at the approval timeout (20 s: only when broken)
    assert not s._thread.is_alive()
    with pytest.raises(TimeoutError, match="approval timeout of 0.5 s"):
        s.resume(r.pending[0].id)
    assert s._rt.alive  # the engine stopped the code: the worker was not killed
    assert s.run("6 * 7").value == 42
    assert m.sent == []
