"""AgentSession: tools that wait for approval, pause and resume, and a
signed journal that resumes in another process.

One runtime (either language), a set of tools with one budget, state kept
across turns. The eval runs on a thread of the session's own; a call to a
tool in ``approval_required`` is held in the supervisor
(``PendingCall.hold``: the eval's deadline clock stops, the approval
timeout runs) and :meth:`AgentSession.run` returns a paused
:class:`SessionResult` listing it, while the guest waits. Answering it
(:meth:`AgentSession.resume`) lets the same eval continue.

Everything the session needs to be rebuilt goes into its journal
(``_journal.py``): the seed of the guest's random sources and the virtual
clock (``_determinism.py``), each eval's code and start time, each tool
call's arguments and outcome, and the order in which calls were answered.
:meth:`AgentSession.load` replays it into a fresh worker, answering the
calls from the journal instead of running the tools.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import queue
import threading
import time
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional

from . import _codecage, _describe, _journal
from ._determinism import bootstrap as _det_bootstrap
from ._bridge import make_budget
from ._pool import ForkServer
from ._runtime import (IsolatedRuntime, RuntimeConfig, _builtin_bases, _failure_text,
                       _run_blocking, REDACTED_MESSAGE)
from .errors import GuestError, InvalidInputError, JournalFullError, ReplayDivergenceError

#: run() and resume() return a paused result as soon as the worker says it
#: waits for answers (a "wait" frame: every call of a fan-out such as
#: Promise.all or asyncio.gather was sent before it), or when no call came
#: for this many seconds while one is pending (a guest that keeps running
#: sends no "wait").
SETTLE_S = 0.5

_MISSING = object()


@dataclasses.dataclass(frozen=True)
class ToolCall:
    """A tool call waiting for approval: ``id`` (int, unique in the
    session, the same after :meth:`AgentSession.load`), ``tool`` (name),
    ``args`` (list) and ``kwargs`` (dict; a Python guest's keywords)."""

    id: int
    tool: str
    args: List[Any]
    kwargs: Dict[str, Any]


@dataclasses.dataclass(frozen=True)
class SessionResult:
    """What :meth:`AgentSession.run` and :meth:`AgentSession.resume`
    return. Paused (``paused`` True): ``pending`` lists the calls waiting
    for approval, the eval is still running. Final (``paused`` False):
    ``value``, the eval's ``stdout`` and ``stderr``, ``duration`` (seconds,
    approval waits included). A failed eval raises instead, as
    :meth:`IsolatedRuntime.run` does."""

    paused: bool
    pending: List[ToolCall] = dataclasses.field(default_factory=list)
    value: Any = None
    stdout: str = ""
    stderr: str = ""
    duration: float = 0.0


@dataclasses.dataclass(frozen=True)
class Tool:
    """A tool with a description for the prompt: ``fn`` (callable), and
    optionally ``description`` (str; default the docstring), ``parameters``
    (a JSON Schema object: ``{"type": "object", "properties": {...},
    "required": [...]}``; default from ``fn``'s signature and type hints)
    and ``returns`` (a JSON Schema; default from the return hint). Pass it
    as a value of ``AgentSession(tools=...)``."""

    fn: Callable[..., Any]
    description: Optional[str] = None
    parameters: Optional[Mapping[str, Any]] = None
    returns: Optional[Mapping[str, Any]] = None


def _runtime_config(config: Optional[RuntimeConfig], fork_server: Optional[ForkServer],
                    options: Dict[str, Any]) -> RuntimeConfig:
    """The session's config: ``config`` (or the fork server's) with
    ``options`` over it."""
    if fork_server is not None:
        if not isinstance(fork_server, ForkServer):
            raise TypeError("fork_server must be a codecage.ForkServer")
        config = config or fork_server.config
    if config is None:
        return RuntimeConfig(**options)
    if not isinstance(config, RuntimeConfig):
        raise TypeError("config must be a RuntimeConfig")
    return dataclasses.replace(config, **options) if options else config


class _Replay:
    """One eval's recorded calls, answered in the recorded order."""

    def __init__(self, entry: Dict[str, Any], finished: bool) -> None:
        self.calls = list(entry["calls"])
        self.order = list(entry["order"])
        self.finished = finished
        self.refused = entry.get("refused", 0)  # calls refused after the recorded ones
        self.k = 0  # next answer in order
        self.arrived: Dict[int, Any] = {}


class AgentSession:
    """An agent's sandbox across turns, with tools that wait for a person.

    ``AgentSession(config=None, *, language="javascript", sandbox="require",
    tools={name: fn or Tool}, approval_required=(names), max_calls=None,
    per_tool=None, key=None, approval_timeout=3600.0, fork_server=None,
    redact_host_errors=False, max_journal_bytes=64 MiB,
    max_journal_calls=10000, **options)``:

    - ``config``/``options``/``language``/``sandbox`` as for
      :class:`IsolatedRuntime` (``fork_server``: a :class:`ForkServer` to
      take the session from instead; its language and limits win, except
      ``timeout``, which is per eval). ``timeout`` bounds each eval's time
      *not* spent waiting for approval.
    - ``tools``: the host functions the guest may call (plain or
      coroutine functions, run with host authority).
    - ``approval_required``: names of tools whose calls pause the eval
      until :meth:`resume` answers them.
    - ``approval_timeout``: seconds a held call may wait, in (0, 86400];
      past it (by the call's own deadline, decided in the supervisor) the
      eval ends with ``TimeoutError`` naming this option, the tool never
      runs, and the session goes on (a guest that computes meanwhile is
      stopped as at a deadline).
    - ``max_calls``, ``per_tool``: the call budget (as :class:`ToolBridge`),
      enforced by the supervisor and rebuilt by :meth:`load`.
    - ``key``: bytes (16 or more) that sign :meth:`dump`; a session without
      one cannot be dumped.
    - ``max_journal_bytes`` (int, at least 4096; default 64 MiB) and
      ``max_journal_calls`` (int, at least 1; default 10,000) cap the
      journal the session keeps in memory, over its life: the bytes of
      :meth:`dump` and the tool calls it records. A call that would pass
      either is refused before it reaches the host: the guest gets a
      catchable ``JournalFullError`` naming the cap and this option, and
      so does every later call of that eval (replay refuses the same
      calls); a tool result that would pass it reaches the guest as that
      error instead (the tool ran). Uncaught, the eval raises
      :class:`codecage.JournalFullError` (a ``ToolBudgetError``); so does
      :meth:`run` for code that does not fit. Nothing journaled is lost:
      dump, then load with higher caps to go on. :attr:`journal_bytes`,
      :attr:`journal_calls` and :attr:`journal_refused` show the use. The journal names no session, so under one key
      any session's dump loads as any other's: derive a key per session or
      user (``hmac.new(app_key, b"session:" + sid, "sha256").digest()``).

    Raises what :class:`IsolatedRuntime` raises at start, ``TypeError`` and
    ``InvalidInputError`` for bad arguments. Use it as a context manager;
    one thread at a time.
    """

    def __init__(self, config: Optional[RuntimeConfig] = None, *, language: str = "javascript",
                 sandbox: str = "require", tools: Optional[Mapping[str, Any]] = None,
                 approval_required: Iterable[str] = (), max_calls: Optional[int] = None,
                 per_tool: Optional[Mapping[str, int]] = None, key: Any = None,
                 approval_timeout: float = 3600.0, fork_server: Optional[ForkServer] = None,
                 redact_host_errors: bool = False,
                 max_journal_bytes: int = _journal.DEFAULT_MAX_BYTES,
                 max_journal_calls: int = _journal.DEFAULT_MAX_CALLS, **options: Any) -> None:
        self._check_caps(max_journal_bytes, max_journal_calls)
        self._start(config, language, sandbox, tools, approval_required, max_calls, per_tool,
                    key, approval_timeout, fork_server, redact_host_errors, options, None)

    # -- start, load --

    def _check_caps(self, max_bytes: Any, max_calls: Any) -> None:
        for name, v, lo in (("max_journal_bytes", max_bytes, _journal.MIN_MAX_BYTES),
                            ("max_journal_calls", max_calls, 1)):
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise InvalidInputError(f"{name} must be an int of at least {lo}, not {v!r}")
        self.max_journal_bytes, self.max_journal_calls = max_bytes, max_calls

    def _start(self, config: Optional[RuntimeConfig], language: str, sandbox: str,
               tools: Optional[Mapping[str, Any]], approval_required: Iterable[str],
               max_calls: Optional[int], per_tool: Optional[Mapping[str, int]], key: Any,
               approval_timeout: float, fork_server: Optional[ForkServer], redact: bool,
               options: Dict[str, Any], journal: Optional[Dict[str, Any]]) -> None:
        self._rt: Optional[IsolatedRuntime] = None
        self._thread: Optional[threading.Thread] = None
        self._lock = threading.RLock()
        self._events: "queue.Queue[tuple]" = queue.Queue()
        self._pending: Dict[int, tuple] = {}  # id -> (ToolCall, PendingCall, entry index)
        self._replay: Optional[_Replay] = None
        self._cur = -1  # the index of the eval running (in the journal)
        self._diverged: Optional[str] = None
        self._key = None if key is None else _journal.check_key(key)
        self._redact = bool(redact)
        self._check_tools(tools, approval_required, approval_timeout)
        per_tool = self._make_budget(max_calls, per_tool)
        cfg = _runtime_config(config, fork_server, options)
        self._timeout = cfg.timeout
        # A fork server's session ran the server's bootstrap already (before
        # the seeding: what it draws is not reproduced).
        user_bootstrap = None if fork_server is not None else cfg.bootstrap
        if journal is not None:
            user_bootstrap = journal["bootstrap"]
        self._journal: Dict[str, Any] = journal if journal is not None else {
            "v": _journal.VERSION, "language": None, "seed": os.urandom(32).hex(),
            "bootstrap": None if user_bootstrap is None else str(user_bootstrap),
            "approval_required": sorted(self.approval_required), "max_calls": max_calls,
            "per_tool": per_tool, "evals": []}
        self._count_journal()
        if fork_server is not None:
            self._rt = fork_server.session()
        else:
            self._rt = IsolatedRuntime(dataclasses.replace(cfg, bootstrap=None),
                                       language=language, sandbox=sandbox)
        try:
            self._prepare(user_bootstrap, journal)
        except BaseException:
            self._rt.close()
            raise

    def _count_journal(self) -> None:
        """What the journal holds, against its caps: the dump's bytes, with
        room for the outcome of each call not answered yet; its calls."""
        evals = self._journal["evals"]
        unanswered = sum(1 for e in evals for c in e["calls"] if c["outcome"] is None)
        self._jbytes = _journal.dump_size(self._journal) + unanswered * _journal.OUTCOME_RESERVE
        self._jcalls = sum(len(e["calls"]) for e in evals)
        self._last_id = max((c["id"] for e in evals for c in e["calls"]), default=0)
        self._jrefused = sum(e.get("refused", 0) for e in evals)
        self._refusing = False  # the running eval refuses its calls (one was refused)
        self._refused_now = False  # the running eval was refused a call or a result

    def _full_text(self) -> str:
        return ("the agent session's journal is full: it records at most "
                f"{self.max_journal_calls} tool calls and {self.max_journal_bytes} bytes "
                "(raise AgentSession(max_journal_calls=N) or (max_journal_bytes=N)); this "
                "call was not made, nor will the rest of this eval's be; dump() keeps "
                "everything so far, and AgentSession.load with higher caps goes on")

    def _check_tools(self, tools: Optional[Mapping[str, Any]], approval_required: Iterable[str],
                     approval_timeout: float) -> None:
        self._tools: Dict[str, Tool] = {}
        self._tools.update(self._checked_tools(tools or {}))
        if isinstance(approval_required, str):
            approval_required = (approval_required,)
        self.approval_required = frozenset(approval_required)
        for name in self.approval_required:
            if name not in self._tools:
                raise InvalidInputError(f"approval_required names {name!r}, which is not a tool "
                                        "of this session")
        if (isinstance(approval_timeout, bool) or not isinstance(approval_timeout, (int, float))
                or not 0 < approval_timeout <= _codecage.MAX_TIMEOUT):
            raise InvalidInputError("approval_timeout must be a number of seconds in "
                                    f"(0, {_codecage.MAX_TIMEOUT}]")
        self.approval_timeout = float(approval_timeout)

    @staticmethod
    def _checked_tools(tools: Mapping[str, Any]) -> Dict[str, Tool]:
        out: Dict[str, Tool] = {}
        for name, t in tools.items():
            # an identifier, or GROUP.TOOL as ToolBridge takes (tools.GROUP.TOOL)
            if not isinstance(name, str) or not name.isascii() or not all(
                    p.isidentifier() for p in name.split(".", 1)):
                raise InvalidInputError(f"tool name {name!r} is not an ASCII identifier "
                                        "(or two joined by a dot: GROUP.TOOL)")
            t = t if isinstance(t, Tool) else Tool(t)
            if not callable(t.fn):
                raise TypeError(f"tool {name!r} is not callable")
            out[name] = t
        return out

    def add_tools(self, tools: Mapping[str, Any]) -> None:
        """Give the session more tools between evals: ``{name: fn or Tool}``
        as the constructor's ``tools`` takes (a name may be ``GROUP.TOOL``
        too, ``tools.GROUP.TOOL`` in the guest). Their calls count against
        the session's budget and go into its journal (:meth:`load` needs
        them among its ``tools``). Raises ``InvalidInputError`` (a bad name
        or one the session has, an eval paused, the session closed),
        ``TypeError`` (not callable)."""
        self._check_open()
        if self._thread is not None:
            raise InvalidInputError("an eval of this session is paused: answer its pending "
                                    "calls with resume() before adding tools")
        new = self._checked_tools(tools)
        for name in new:
            if name in self._tools:
                raise InvalidInputError(f"this session has a tool named {name!r} already")
        for name, t in new.items():
            self._rt._rt.bind(name, self._callback(name))
            self._rt._rt.set_tool_budget(name, self._budget)
            self._tools[name] = t

    def _make_budget(self, max_calls: Optional[int],
                     per_tool: Optional[Mapping[str, int]]) -> Dict[str, int]:
        self._budget, per_tool = make_budget("AgentSession", max_calls, per_tool, self._tools)
        return per_tool

    def _prepare(self, user_bootstrap: Optional[str],
                 journal: Optional[Dict[str, Any]]) -> None:
        """Seed the new runtime from the journal, run the bootstrap, bind
        the tools under the session's budget."""
        rt = self._rt
        self.language = rt.language
        if journal is not None and journal["language"] != self.language:
            raise InvalidInputError(f"this journal is of a {journal['language']} session; "
                                    f"the runtime here is {self.language}")
        self._journal["language"] = self.language
        rt.eval(_det_bootstrap(self.language, self._journal["seed"]))
        if user_bootstrap:
            rt.eval(str(user_bootstrap))
        events = self._events
        rt._rt.set_wait_handler(lambda: events.put(("idle",)))
        for name in self._tools:
            rt._rt.bind(name, self._callback(name))
            rt._rt.set_tool_budget(name, self._budget)

    @classmethod
    def load(cls, data: bytes, *, key: Any, tools: Optional[Mapping[str, Any]] = None,
             config: Optional[RuntimeConfig] = None, sandbox: str = "require",
             approval_timeout: float = 3600.0, fork_server: Optional[ForkServer] = None,
             redact_host_errors: bool = False,
             max_journal_bytes: int = _journal.DEFAULT_MAX_BYTES,
             max_journal_calls: int = _journal.DEFAULT_MAX_CALLS,
             **options: Any) -> "AgentSession":
        """Rebuild a session from :meth:`dump`'s bytes, in any process:
        the signature is checked (under ``key``) before anything runs, then
        a fresh worker replays every eval with the tool calls answered from
        the journal (the tools are not run again), so budgets, globals and
        the guest's state are as they were. An eval that was paused is
        paused again at the same calls: :attr:`pending` lists them and
        :meth:`resume` continues it. ``tools`` must hold every tool the
        session had (they serve calls after the load); the journal's
        language, approval list, budget and bootstrap are used, the other
        arguments are as for the constructor (a journal over the caps given
        here loads; its further calls are refused).

        Raises ``InvalidInputError`` (not a journal, truncated, tampered,
        wrong key, an unknown version, missing tools: nothing ran),
        ``ReplayDivergenceError`` (the code did not do on replay what the
        journal recorded: it is not deterministic), or what the
        constructor raises."""
        body = _journal.verify(data, _journal.check_key(key))
        tools = dict(tools or {})
        needed = set(body["approval_required"]) | set(body["per_tool"])
        needed |= {c["tool"] for e in body["evals"] for c in e["calls"]}
        missing = sorted(needed - set(tools))
        if missing:
            raise InvalidInputError("AgentSession.load needs the session's tools; missing: "
                                    + ", ".join(missing))
        if fork_server is None:
            options = dict(options, language=body["language"])
        self = cls.__new__(cls)
        self._check_caps(max_journal_bytes, max_journal_calls)
        self._start(config, options.pop("language", body["language"]), sandbox, tools,
                    body["approval_required"], body["max_calls"], body["per_tool"], key,
                    approval_timeout, fork_server, redact_host_errors, options, body)
        try:
            evals = body["evals"]
            for i, entry in enumerate(evals):
                finished = entry["end"] is not None
                self._replay = _Replay(entry, finished)
                self._start_eval(i)
                if not finished:
                    self._replay_wait_paused(i)
                    break
                try:
                    self._wait()
                    end = "ok"
                except ReplayDivergenceError:
                    raise
                except Exception as e:
                    end = getattr(e, "kind", "error")
                if end != entry["end"]:
                    raise ReplayDivergenceError(
                        f"replaying eval {i}, the code ended as {end} where the journal "
                        f"recorded {entry['end']}: the code is not deterministic")
                self._check_replay_done(i)
                self._replay = None
        except BaseException:
            self.close()
            raise
        return self

    def _replay_wait_paused(self, i: int) -> None:
        """Wait until the paused eval being replayed is paused again at the
        recorded calls."""
        want = sum(1 for c in self._journal["evals"][i]["calls"] if c["outcome"] is None)
        deadline = time.monotonic() + self._timeout + 30  # the eval's own time, and more
        while True:
            with self._lock:
                if self._diverged:
                    raise ReplayDivergenceError(self._diverged)
                if len(self._pending) >= want and (self._replay is None or
                                                   self._replay.k == len(self._replay.order)):
                    return
            try:
                ev = self._events.get(timeout=max(0.0, min(0.05, deadline - time.monotonic())))
            except queue.Empty:
                if time.monotonic() >= deadline:
                    raise ReplayDivergenceError(
                        f"replaying eval {i}, the code did not make the calls the journal "
                        "recorded as pending: the code is not deterministic") from None
                continue
            if ev[0] == "done":
                self._events.put(ev)
                self._wait()  # raises the eval's error, or returns its value
                raise ReplayDivergenceError(
                    f"replaying eval {i}, the code finished where the journal recorded a "
                    "pause: the code is not deterministic")

    def _check_replay_done(self, i: int) -> None:
        r = self._replay
        if r is not None and (len(r.arrived) < len(r.calls) or r.k < len(r.order) or r.refused):
            raise ReplayDivergenceError(
                f"replaying eval {i}, the code made {len(r.arrived)} tool calls where the "
                f"journal recorded {len(r.calls)}: the code is not deterministic")

    # -- the tools' side (the eval's thread) --

    def _callback(self, name: str) -> Callable[[list, Optional[dict], Any], None]:
        def callback(args: list, kwargs: Optional[dict], pending: Any) -> None:
            self._on_call(name, args, kwargs or {}, pending)
        return callback

    def _on_call(self, name: str, args: list, kwargs: dict, pending: Any) -> None:
        with self._lock:
            i = self._cur
            entry = self._journal["evals"][i]
            r = self._replay
            if self._diverged:
                pending.reject("ReplayDivergenceError", self._diverged)
                return
            try:
                eargs, ekw = _journal.encode(args), _journal.encode(kwargs)["$map"]
            except _journal.NotJournalable as e:  # the supervisor's values always are
                pending.reject("ToolError", f"the call cannot be journaled: {e}")
                return
            if r is not None and len(r.arrived) < len(r.calls):
                idx = len(r.arrived)
                rec = r.calls[idx]
                if (rec["tool"] != name or _journal.canonical(rec["args"]) !=
                        _journal.canonical(eargs) or _journal.canonical(rec["kwargs"]) !=
                        _journal.canonical(ekw)):
                    self._diverge(pending, i, idx, rec, name, args, kwargs)
                    return
                r.arrived[idx] = pending
                if rec["outcome"] is None:
                    if r.finished:
                        # The eval ended while the call waited: by its approval
                        # timeout (end it the same way, at once), or with the
                        # call never awaited (leave it; the eval's end cancels it).
                        if entry["end"] == "timeout":
                            pending.hold(0.001)
                    else:
                        pending.hold(self.approval_timeout)
                        call = ToolCall(rec["id"], name, list(args), dict(kwargs))
                        self._pending[call.id] = (call, pending, i)
                        self._events.put(("pause",))
                self._replay_flush()
                return
            if r is not None and r.refused:
                r.refused -= 1  # refused when it was made: refused again
                self._refuse(pending, live=False)
                return
            if r is not None and r.finished:
                self._diverge(pending, i, len(r.arrived), None, name, args, kwargs)
                return
            call = ToolCall(self._last_id + 1, name, list(args), dict(kwargs))
            rec = {"id": call.id, "tool": name, "args": eargs, "kwargs": ekw, "outcome": None}
            idx = len(entry["calls"])
            cost = _journal.call_cost(rec, idx) + _journal.OUTCOME_RESERVE
            if (self._refusing or self._jcalls >= self.max_journal_calls
                    or self._jbytes + cost > self.max_journal_bytes):
                self._refuse(pending, live=True)
                return
            self._jbytes += cost
            self._jcalls += 1
            self._last_id = call.id
            entry["calls"].append(rec)
            if name in self.approval_required:
                pending.hold(self.approval_timeout)
                self._pending[call.id] = (call, pending, i)
                self._events.put(("pause",))
                return
        self._answer_by_running(i, idx, call, pending)

    def _refuse(self, pending: Any, live: bool) -> None:
        """Refuse a call for the journal's cap (lock held): this one and the
        rest of the eval's; counted in the eval's entry when live (replay
        refuses the recorded ones again)."""
        if live:
            entry = self._journal["evals"][self._cur]
            entry["refused"] = entry.get("refused", 0) + 1
            self._jrefused += 1
        self._refusing = self._refused_now = True
        pending.reject("JournalFullError", self._full_text(), None)

    def _diverge(self, pending: Any, i: int, idx: int, rec: Optional[dict], name: str,
                 args: list, kwargs: dict) -> None:
        want = ("no further call" if rec is None else
                f"{rec['tool']}({_describe.call_text(_journal.value_list(rec['args']), _journal.decode({'$map': rec['kwargs']}))})")
        self._diverged = (
            f"replaying eval {i}, call {idx}: the code called "
            f"{name}({_describe.call_text(args, kwargs)}) where the journal recorded {want}: "
            "the code is not deterministic (it depends on something the journal does not "
            "reproduce; see AgentSession's documentation), so the session cannot be rebuilt")
        pending.reject("ReplayDivergenceError", self._diverged)
        rt = self._rt
        if rt is not None:
            rt.interrupt()  # stop the guest: its state is no longer the recorded one

    def _replay_flush(self) -> None:
        """Send the recorded answers whose turn it is (lock held)."""
        r = self._replay
        while r is not None and r.k < len(r.order) and r.order[r.k] in r.arrived:
            idx = r.order[r.k]
            r.k += 1
            outcome = r.calls[idx]["outcome"]
            if outcome.get("error", [None])[0] == "JournalFullError":
                self._refused_now = True  # a result that did not fit, as it was
            self._send(r.arrived[idx], outcome)

    @staticmethod
    def _send(pending: Any, outcome: Dict[str, Any]) -> None:
        if "value" in outcome:
            pending.resolve(_journal.decode(outcome["value"]))
        else:
            name, message, bases = outcome["error"]
            pending.reject(name, message, bases)

    def _outcome_of(self, fn: Callable[[], Any]) -> tuple:
        """Run a tool; its outcome as the journal keeps it, and a
        BaseException to raise again (KeyboardInterrupt) or None."""
        try:
            v = fn()
            if inspect.isawaitable(v):
                v = _run_blocking(v)
        except Exception as e:
            return self._error_outcome(e), None
        except BaseException as e:
            return self._error_outcome(e), e
        return self._value_outcome(v), None

    def _error_outcome(self, e: BaseException) -> Dict[str, Any]:
        return {"error": [type(e).__name__, REDACTED_MESSAGE if self._redact else
                          _failure_text(e), _builtin_bases(type(e))]}

    def _value_outcome(self, v: Any) -> Dict[str, Any]:
        try:
            return {"value": _journal.encode(v)}
        except _journal.NotJournalable as e:
            msg = ("the host tool returned a value that cannot cross the sandbox boundary"
                   + ("" if self._redact else f": {e}"))
            return {"error": ["ToolResultError", msg, ""]}

    def _record(self, i: int, idx: int, outcome: Dict[str, Any]) -> Dict[str, Any]:
        """Journal a call's outcome (lock held) and return it, for the guest:
        one that would pass the journal's byte cap is replaced by a
        JournalFullError (the room kept for it at the call pays for that)."""
        extra = _journal.outcome_cost(outcome) - _journal.OUTCOME_RESERVE
        if self._jbytes + extra > self.max_journal_bytes:
            outcome = {"error": ["JournalFullError", (
                f"the tool ran, but its outcome ({extra + _journal.OUTCOME_RESERVE} bytes) "
                f"would take the agent session's journal past its {self.max_journal_bytes} "
                "bytes (raise AgentSession(max_journal_bytes=N)), so it is not given to the "
                "guest; dump() keeps everything before it"), ""]}
            extra = _journal.outcome_cost(outcome) - _journal.OUTCOME_RESERVE
            self._refused_now = True
        self._jbytes += extra
        entry = self._journal["evals"][i]
        entry["calls"][idx]["outcome"] = outcome
        entry["order"].append(idx)
        return outcome

    def _answer_by_running(self, i: int, idx: int, call: ToolCall, pending: Any) -> None:
        fn = self._tools[call.tool].fn
        # A KeyboardInterrupt in the tool reaches the guest as that error
        # (it runs on the eval's thread, inside the library's callback).
        outcome, _ = self._outcome_of(lambda: fn(*call.args, **call.kwargs))
        with self._lock:
            self._send(pending, self._record(i, idx, outcome))

    # -- evaluation --

    def _start_eval(self, i: int) -> None:
        entry = self._journal["evals"][i]
        rt = self._rt
        self._cur = i
        self._refusing = self._refused_now = entry.get("refused", 0) > 0
        rt.set_global("__cc_clock", entry["clock"])

        def body() -> None:
            try:
                res = rt._run_strict(entry["code"], self._timeout)
            except BaseException as e:
                self._events.put(("done", None, e))
            else:
                self._events.put(("done", res, None))

        self._thread = threading.Thread(target=body, name="codecage-agent-eval", daemon=True)
        self._thread.start()

    def _wait(self) -> SessionResult:
        """The next paused or final result of the running eval."""
        while True:
            with self._lock:
                n = len(self._pending)
            try:
                ev = self._events.get(timeout=SETTLE_S if n else None)
            except queue.Empty:
                with self._lock:
                    calls = sorted((c for c, _, _ in self._pending.values()),
                                   key=lambda c: c.id)
                return SessionResult(True, calls)
            if ev[0] == "idle" and n:
                with self._lock:
                    calls = sorted((c for c, _, _ in self._pending.values()),
                                   key=lambda c: c.id)
                if calls:
                    return SessionResult(True, calls)
            if ev[0] != "done":
                continue
            self._thread.join()
            self._thread = None
            _, res, exc = ev
            with self._lock:
                recorded = self._journal["evals"][self._cur]["end"]  # replaying: how it ended
            if (isinstance(exc, GuestError) and exc.name == "JournalFullError"
                    and (self._refused_now if recorded is None else recorded == "tool_budget")):
                # this session refused it: the host's error, not just the guest's
                full = JournalFullError(exc.message, name=exc.name, traceback=exc.traceback,
                                        stdout=exc.stdout, stderr=exc.stderr,
                                        duration=exc.duration)
                full.displays = exc.displays
                exc = full
            with self._lock:
                entry = self._journal["evals"][self._cur]
                if entry["end"] is None:
                    entry["end"] = "ok" if exc is None else getattr(exc, "kind", "error")
                    self._replay = None
                self._pending.clear()
                diverged = self._diverged
            if diverged:
                raise ReplayDivergenceError(diverged)
            if exc is not None:
                raise exc
            return SessionResult(False, [], res.value, res.stdout, res.stderr, res.duration)

    def run(self, code: str) -> SessionResult:
        """Run ``code`` (str) in the session: a final :class:`SessionResult`
        (``paused`` False, ``value``), or a paused one when the code called
        a tool that needs approval (``pending`` lists every such call made
        so far, the eval waiting); answer them with :meth:`resume`.

        Raises as :meth:`IsolatedRuntime.run` (``GuestError``,
        ``TimeoutError`` ...), ``JournalFullError`` (the code does not fit
        the journal: nothing ran; or the eval did not catch one a call
        got), and ``InvalidInputError`` when an eval is still paused
        (answer its calls first) or the session is closed."""
        if not isinstance(code, str):
            raise TypeError(f"code must be str, not {type(code).__name__}")
        self._check_open()
        if self._thread is not None:
            raise InvalidInputError("an eval of this session is paused: answer its pending "
                                    "calls with resume() before running more code")
        with self._lock:
            entry = {"code": code, "clock": int(time.time() * 1000), "calls": [], "order": [],
                     "end": None}
            cost = _journal.eval_cost(entry)
            if self._jbytes + cost > self.max_journal_bytes:
                raise JournalFullError(
                    f"the agent session's journal cannot take this code ({cost} bytes): it "
                    f"holds {self._jbytes} of its {self.max_journal_bytes} bytes (raise "
                    "AgentSession(max_journal_bytes=N)); nothing ran; dump() keeps everything "
                    "so far, and AgentSession.load with a higher cap goes on")
            self._jbytes += cost
            self._journal["evals"].append(entry)
            self._start_eval(len(self._journal["evals"]) - 1)
        return self._wait()

    def resume(self, call_id: int, approve: bool = True, *, reason: Optional[str] = None,
               result: Any = _MISSING) -> SessionResult:
        """Answer pending call ``call_id`` and continue the eval; returns
        the next result (paused again or final), or raises its error.

        - ``approve=True`` (default): the tool runs now, here, with host
          authority; its value or exception goes to the guest.
        - ``approve=False``: the tool does not run; the guest gets a
          catchable ``ToolDeniedError`` (a ``PermissionError`` in Python;
          ``e.name === "ToolDeniedError"`` in JavaScript) with ``reason``.
        - ``result=value``: the tool does not run; the guest gets ``value``,
          computed by the host itself.

        The call's approval timeout is decided by its own deadline, in the
        supervisor (``cc_tool_call_unhold``): once this call is answered in
        time it no longer waits for approval, and the tool's own run counts
        toward the eval's ``timeout`` as any tool's does. Past it, the tool
        is not run, nothing is recorded, and the eval's ``TimeoutError``
        (naming ``approval_timeout``) is raised; the session goes on.

        Raises ``TypeError`` (``call_id`` is not an int: ``resume(True)``
        is refused, it is not an id), ``InvalidInputError`` (no such
        pending call), or the eval's error."""
        if isinstance(call_id, bool) or not isinstance(call_id, int):
            raise TypeError(f"resume's call_id is a ToolCall's id (an int), not "
                            f"{type(call_id).__name__}: resume(call.id) approves, "
                            "resume(call.id, approve=False) denies")
        self._check_open()
        with self._lock:
            entry = self._pending.pop(call_id, None)
        if entry is None:
            raise InvalidInputError(f"no pending call has id {call_id!r}: see "
                                    "SessionResult.pending or AgentSession.pending")
        call, pending, i = entry
        if not pending.unhold():
            # Its approval timeout passed (the supervisor stops the eval),
            # or the eval is over: raise what it ended with; nothing ran.
            return self._wait()
        idx = next(k for k, c in enumerate(self._journal["evals"][i]["calls"])
                   if c["id"] == call.id)
        self._drain_idle()
        exc = None
        if result is not _MISSING:
            outcome = self._value_outcome(result)
        elif not approve:
            outcome = {"error": ["ToolDeniedError",
                                 str(reason) if reason else "the host denied this call",
                                 "PermissionError"]}
        else:
            fn = self._tools[call.tool].fn
            outcome, exc = self._outcome_of(lambda: fn(*call.args, **call.kwargs))
        with self._lock:
            self._send(pending, self._record(i, idx, outcome))
        if exc is not None:
            raise exc
        return self._wait()

    def _drain_idle(self) -> None:
        """Forget "wait" hints from before this answer (keep the rest)."""
        kept = []
        while True:
            try:
                ev = self._events.get_nowait()
            except queue.Empty:
                break
            if ev[0] != "idle":
                kept.append(ev)
        for ev in kept:
            self._events.put(ev)

    # -- state --

    @property
    def pending(self) -> List[ToolCall]:
        """The calls waiting for approval now (empty when none)."""
        with self._lock:
            return sorted((c for c, _, _ in self._pending.values()), key=lambda c: c.id)

    @property
    def paused(self) -> bool:
        return bool(self.pending)

    @property
    def journal_bytes(self) -> int:
        """Bytes the journal holds: what :meth:`dump` returns at most now
        (room for unanswered calls' outcomes included), under
        ``max_journal_bytes``."""
        with self._lock:
            return self._jbytes

    @property
    def journal_calls(self) -> int:
        """Tool calls the journal records, under ``max_journal_calls``."""
        with self._lock:
            return self._jcalls

    @property
    def journal_refused(self) -> int:
        """Calls refused because the journal was at its cap, over the
        session (replayed ones included), however the guest took it."""
        with self._lock:
            return self._jrefused

    @property
    def calls_made(self) -> int:
        """Tool calls that reached the host over the session (replayed
        ones included), as the supervisor counts them."""
        return self._budget.calls_made

    @property
    def calls_remaining(self) -> Optional[int]:
        return self._budget.calls_remaining

    def dump(self) -> bytes:
        """The session's journal, signed: bytes to keep and give to
        :meth:`load` (this process or another). It holds the code of every
        eval, every tool call's arguments and outcome, the random seed and
        the clock readings: never the key, the tools, the config or
        anything of the host's environment. Works while paused. Raises
        ``InvalidInputError`` when the session has no ``key``."""
        if self._key is None:
            raise InvalidInputError("this session has no key to sign its journal: create it "
                                    "with AgentSession(key=...)")
        with self._lock:
            return _journal.sign(self._journal, self._key)

    def describe_tools(self, language: Optional[str] = None) -> str:
        """The tools as the guest sees them, for the model's prompt:
        TypeScript declarations (``declare const tools: {...}``) for
        ``"javascript"``, Python stubs for ``"python"`` (default: the
        session's language), from each tool's type hints and docstring or
        the JSON Schema of its :class:`Tool`."""
        return _describe.describe(self._tools, language or self.language)

    def _check_open(self) -> None:
        if self._rt is None or self._rt.closed:
            raise InvalidInputError("this agent session is closed")

    def close(self) -> None:
        """Stop the worker (a paused eval ends) and free the session.
        Idempotent."""
        rt, self._rt = self._rt, None
        if rt is not None:
            rt.interrupt()
            t = self._thread
            if t is not None:
                t.join()
            rt.close()
        self._thread = None

    def __enter__(self) -> "AgentSession":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
