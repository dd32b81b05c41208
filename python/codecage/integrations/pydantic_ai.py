"""pydantic-ai code mode: the model writes one program instead of one tool
call per turn.

``CodeMode(tools_or_toolsets, language="python", config=None,
max_calls=None)`` is a pydantic-ai toolset. Given to an agent
(``Agent(model, toolsets=[CodeMode([...])])``), it shows the model one
tool, ``run_python`` (or ``run_javascript``), whose description carries
the stubs of the wrapped tools; the model's code calls them as
``tools.NAME(...)`` (Python; ``await atools.NAME(...)`` with
``asyncio.gather``) or ``await tools.NAME(...)`` (JavaScript;
``Promise.all``). The code runs in a codecage :class:`AgentSession`; each
call it makes goes back through pydantic-ai's own tool machinery (a
``ToolManager`` over the wrapped toolsets, as the run's would), so
argument validation, capability hooks, tracing and usage apply to it:

- a wrapped tool's ``ModelRetry`` (or invalid arguments) reaches the guest
  as a catchable error named ``ModelRetry`` (``ValidationError``); left
  uncaught, the code tool fails and the model gets a retry of it whose
  text holds the message and the traceback. Every failed eval (an error,
  a timeout, a limit) is such a retry, up to ``max_retries``;
- ``UsageLimits(tool_calls_limit=N)`` counts each inner call (the code
  tool's own call is one more); the call past it raises
  ``UsageLimitExceeded`` in the guest and then ends the run with it;
- a wrapped tool that needs approval (``requires_approval=True``, an
  ``ApprovalRequiredToolset``, or ``ApprovalRequired`` raised) pauses the
  eval (the session holds the call; the eval's clock stops) and the code
  tool's call becomes pydantic-ai's deferred approval request
  (``DeferredToolRequests.approvals``, with ``metadata`` naming the inner
  calls). Answering it with ``DeferredToolResults(approvals={id: True})``
  runs the held calls and the same eval continues; a denial
  (``False``/``ToolDenied``) makes them raise ``ToolDeniedError`` in the
  guest when the session is next used;
- the session (globals, imports, the call budget ``max_calls``) lives in
  the ``CodeMode`` object, so it persists across the agent's runs: one
  ``CodeMode`` per conversation, or ``session_key=lambda ctx: ...`` (e.g.
  from ``ctx.deps``) for one session per key. ``close()`` ends them.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import datetime
import threading
from typing import Any, Callable, Dict, Hashable, List, Optional, Sequence

from .. import errors
from .._agent import AgentSession
from .._runtime import RuntimeConfig
from . import _common

_pai = _common.require("pydantic_ai", "pydantic-ai", "pydantic_ai")
from pydantic_core import SchemaValidator, core_schema, to_jsonable_python  # noqa: E402
from pydantic_ai import (ApprovalRequired, CallDeferred, ModelRetry, ToolDenied,  # noqa: E402
                         ToolReturn, UsageLimitExceeded)
from pydantic_ai.messages import ToolCallPart, ToolReturnPart  # noqa: E402
from pydantic_ai.tool_manager import ToolManager  # noqa: E402
from pydantic_ai.tools import RunContext, Tool as PaiTool, ToolDefinition  # noqa: E402
from pydantic_ai.toolsets import (AbstractToolset, CombinedToolset,  # noqa: E402
                                  FunctionToolset, ToolsetTool)

_CODE_ARGS = SchemaValidator(core_schema.typed_dict_schema(
    {"code": core_schema.typed_dict_field(core_schema.str_schema())}))

_INTRO = {
    "python": (
        "Run Python 3.11 code in a sandbox and get back the value of its last expression, "
        "with what it printed. State (variables, imports) persists across calls. No network "
        "and no files unless the host granted them. The host's tools below are functions: "
        "call them as tools.NAME(...), or `await asyncio.gather(atools.a(...), atools.b(...))` "
        "to run several at once (top-level await works). A failing tool raises an exception "
        "you may catch."),
    "javascript": (
        "Run JavaScript (QuickJS, ES2023) in a sandbox and get back the completion value "
        "(the last expression; a Promise is awaited), with what console.log printed. State "
        "persists across calls. No network, no Node modules. The host's tools below return "
        "Promises: `await tools.NAME(...)`, or `await Promise.all([...])` to run several at "
        "once (top-level await works). A failing tool throws an Error you may catch."),
}

# the errors a model can fix by changing its code: a retry of the code tool
_RETRYABLE = (errors.GuestError, errors.TimeoutError, errors.MemoryLimitError,
              errors.OutputLimitError, errors.ToolBudgetError, errors.WorkerCrashed)


def _plain(v: Any) -> Any:
    """A tool's result as values that cross into the guest (DESIGN.md
    section 5): pydantic models, dataclasses and other objects through
    pydantic's JSON-able form; bytes and datetimes stay as they are."""
    if v is None or isinstance(v, (bool, int, float, str, bytes, datetime.datetime)):
        return v
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    return _plain(to_jsonable_python(v))


@dataclasses.dataclass
class _Call:
    """What the inner calls of one code tool call run with."""

    loop: asyncio.AbstractEventLoop
    tm: Any  # the nested ToolManager
    ctx: Any
    n: int = 0
    fatal: Optional[BaseException] = None  # UsageLimitExceeded: ends the run after the eval
    inflight: set = dataclasses.field(default_factory=set)  # dispatches not yet answered


class _Session(AgentSession):
    """An AgentSession whose tools are the wrapped pydantic-ai tools: each
    call is dispatched on the agent's event loop, without blocking the
    eval (so a fan-out runs concurrently), and a call pydantic-ai defers
    for approval is held as the session's own approval-required calls
    are."""

    call: Optional[_Call] = None  # the code tool call running, if any
    pai_tools: frozenset = frozenset()  # the names bound to pydantic-ai's tools

    def _answer_by_running(self, i: int, idx: int, call: Any, pending: Any) -> None:
        if call.tool not in self.pai_tools:  # a tool the host added itself
            super()._answer_by_running(i, idx, call, pending)
            return
        c = self.call
        if c is None:
            pending.reject("RuntimeError", f"{call.tool} is a tool of the agent's run: it can "
                           "be called only while the agent runs this code (from run_python or "
                           "run_javascript), not from code the host runs in the session")
            return
        fut = asyncio.run_coroutine_threadsafe(_dispatch(c, call.tool, call.args, call.kwargs),
                                               c.loop)
        c.inflight.add(fut)
        fut.add_done_callback(c.inflight.discard)
        fut.add_done_callback(lambda f: self._settle(i, idx, call, pending, f))

    def _settle(self, i: int, idx: int, call: Any, pending: Any, f: Any) -> None:
        e = None if f.cancelled() else f.exception()
        if isinstance(e, ApprovalRequired):
            with self._lock:  # held like a tool in approval_required (AgentSession._on_call)
                pending.hold(self.approval_timeout)
                self._pending[call.id] = (call, pending, i)
                self._events.put(("pause",))
            return
        if f.cancelled():
            outcome = {"error": ["CancelledError", "the tool call was cancelled", ""]}
        elif e is not None:
            outcome = self._error_outcome(e)
        else:
            outcome = self._value_outcome(f.result())
        with self._lock:
            self._record(i, idx, outcome)
            self._send(pending, outcome)

    def approved_call(self, name: str) -> Callable[..., Any]:
        """The tool ``name`` as resume() runs it, once approved: on the
        agent's loop, blocking this (resume's) thread."""
        def run(*args: Any, **kwargs: Any) -> Any:
            c = self.call
            return asyncio.run_coroutine_threadsafe(
                _dispatch(c, name, list(args), kwargs, approved=True), c.loop).result()
        return run


async def _dispatch(c: _Call, name: str, args: List[Any], kwargs: Dict[str, Any],
                    approved: bool = False) -> Any:
    """One guest call of tool ``name``, through the nested ToolManager."""
    tool = (c.tm.tools or {}).get(name)
    if tool is None:
        raise LookupError(f"the tool {name!r} is not available in this run step")
    named = _common.named_args(name, tool.tool_def.parameters_json_schema, args, kwargs)
    limits = c.ctx.usage_limits
    if limits is not None and limits.tool_calls_limit is not None:
        projected = copy.copy(c.ctx.usage)
        # the code tool's own call is counted when it returns: count it now
        projected.tool_calls += 2
        try:
            limits.check_before_tool_call(projected)
        except UsageLimitExceeded as e:
            c.fatal = c.fatal or e
            raise
    c.n += 1
    part = ToolCallPart(tool_name=name, args=named, tool_call_id=f"{c.ctx.tool_call_id}.{c.n}")
    try:
        result = await c.tm.handle_call(part, approved=approved,
                                        wrap_validation_errors=False)
    except CallDeferred:
        raise RuntimeError(f"{name} is an external (deferred) tool, which code mode cannot "
                           "call: its result comes from outside the agent run") from None
    if isinstance(result, ToolDenied):
        raise PermissionError(result.message)
    if isinstance(result, ToolReturn):
        result = result.return_value
    return _plain(result)


@dataclasses.dataclass
class _Slot:
    """One session of a CodeMode and the approval its eval waits for."""

    session: Optional[_Session] = None
    paused_id: Optional[str] = None  # the code tool call whose eval is paused
    paused_at: Any = None  # (run_id, run_step) of that call
    paused_calls: List[Any] = dataclasses.field(default_factory=list)
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


class CodeMode(AbstractToolset):
    """A pydantic-ai toolset of one code tool over ``tools_or_toolsets``
    (see the module's docstring for how pydantic-ai's retries, usage
    limits and approvals map onto it).

    ``CodeMode(tools_or_toolsets, language="python", config=None,
    max_calls=None, *, sandbox="require", max_retries=3,
    approval_timeout=3600.0, session_key=None, id=None)``:

    - ``tools_or_toolsets``: a toolset, or a list of functions,
      ``pydantic_ai.Tool``s and toolsets (functions take ``RunContext``
      first or not, as ``Agent(tools=...)`` takes them);
    - ``language``: ``"python"`` (the tool is ``run_python``) or
      ``"javascript"`` (``run_javascript``);
    - ``config``: a :class:`codecage.RuntimeConfig` (limits, grants;
      ``timeout`` bounds each call's code, approval waits excluded);
    - ``max_calls``: the session's tool call budget, over all its runs
      (None: unlimited), enforced by the supervisor;
    - ``max_retries``: how often the model may retry failed code;
    - ``approval_timeout``: seconds a held call may wait for its approval;
    - ``session_key``: ``f(ctx) -> hashable``: one session per key (e.g.
      ``lambda ctx: ctx.deps.user_id``); default one session.

    Raises ``InvalidInputError`` (a bad language) and ``TypeError`` (not a
    tool or toolset); the sandbox starts at the first call.
    """

    def __init__(self, tools_or_toolsets: Any, language: str = "python",
                 config: Optional[RuntimeConfig] = None, max_calls: Optional[int] = None, *,
                 sandbox: str = "require", max_retries: int = 3,
                 approval_timeout: float = 3600.0,
                 session_key: Optional[Callable[[Any], Hashable]] = None,
                 id: Optional[str] = None) -> None:  # noqa: A002
        self.language = _common.check_language(language)
        self.tool_name = "run_python" if self.language == "python" else "run_javascript"
        self.config = config
        self.max_calls = max_calls
        self.sandbox = sandbox
        self.max_retries = int(max_retries)
        self.approval_timeout = approval_timeout
        self._key = session_key
        self._id = id
        self._inner = self._toolset(tools_or_toolsets)
        self._slots: Dict[Hashable, _Slot] = {}
        self._slots_lock = threading.Lock()

    @staticmethod
    def _toolset(given: Any) -> AbstractToolset:
        items = [given] if isinstance(given, AbstractToolset) or not isinstance(
            given, (list, tuple)) else list(given)
        toolsets: List[AbstractToolset] = []
        funcs: List[Any] = []
        for t in items:
            if isinstance(t, AbstractToolset):
                toolsets.append(t)
            elif isinstance(t, PaiTool) or callable(t):
                funcs.append(t)
            else:
                raise TypeError(f"CodeMode takes functions, pydantic_ai.Tool objects and "
                                f"toolsets, not {type(t).__name__}")
        if funcs:
            toolsets.insert(0, FunctionToolset(funcs))
        return toolsets[0] if len(toolsets) == 1 else CombinedToolset(toolsets)

    # -- the toolset API --

    @property
    def id(self) -> Optional[str]:
        return self._id

    async def __aenter__(self) -> "CodeMode":
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *args: Any) -> Optional[bool]:
        return await self._inner.__aexit__(*args)

    async def _manager(self, ctx: RunContext) -> Any:
        """A ToolManager over the wrapped toolsets for this run step (on a
        copy of ``ctx``: preparing one sets its ``tool_manager``)."""
        tm = ToolManager(toolset=self._inner, root_capability=ctx.root_capability)
        return await tm.for_run_step(dataclasses.replace(ctx))

    def describe(self, tools: Dict[str, ToolsetTool]) -> str:
        """The code tool's description: what the sandbox is, then the
        stubs of ``tools`` (the wrapped tools of this step)."""
        stubs = _common.describe({
            name: (t.tool_def.description, t.tool_def.parameters_json_schema,
                   t.tool_def.return_schema) for name, t in tools.items()}, self.language)
        return _INTRO[self.language] + "\n\n" + stubs

    async def get_tools(self, ctx: RunContext) -> Dict[str, ToolsetTool]:
        tm = await self._manager(ctx)
        tool_def = ToolDefinition(
            name=self.tool_name, description=self.describe(tm.tools or {}),
            parameters_json_schema={
                "type": "object", "required": ["code"], "additionalProperties": False,
                "properties": {"code": {"type": "string", "description": (
                    "the program; its last expression is the result" if self.language ==
                    "python" else "the program; its completion value is the result")}}},
            sequential=True)  # one session runs one program at a time
        return {self.tool_name: ToolsetTool(toolset=self, tool_def=tool_def,
                                            max_retries=self.max_retries,
                                            args_validator=_CODE_ARGS)}

    async def call_tool(self, name: str, tool_args: Dict[str, Any], ctx: RunContext,
                        tool: ToolsetTool) -> Any:
        slot = self._slot(ctx)
        c = _Call(asyncio.get_running_loop(), await self._manager(ctx), ctx)
        resume = False
        if slot.paused_id is not None:
            if ctx.tool_call_id == slot.paused_id and ctx.tool_call_approved:
                resume = True
            elif slot.paused_at == (ctx.run_id, ctx.run_step):
                raise ModelRetry(f"the sandbox is waiting for the approval of an earlier "
                                 f"{self.tool_name} call; call it again once that is answered")
            else:  # that approval was denied, or never given: its eval ends
                await asyncio.to_thread(self._deny, slot, c, self._denial(ctx, slot.paused_id))
        try:
            try:
                res = await asyncio.to_thread(self._run, slot, c, tool_args["code"], resume)
            finally:
                # a call still running when the eval paused is answered before the run
                # (and perhaps its event loop) ends; later ones are refused (_Session)
                while c.inflight:
                    await asyncio.wait([asyncio.wrap_future(f) for f in list(c.inflight)])
                if slot.session is not None:
                    slot.session.call = None
        except _RETRYABLE as e:
            if c.fatal is not None:
                raise c.fatal from None
            if isinstance(e, errors.WorkerCrashed) or not slot.session._rt.alive:
                self._drop(slot)
                raise ModelRetry(_common.error_text(e) + "\nnote: the sandbox was restarted; "
                                 "its state (variables, imports) is gone") from None
            raise ModelRetry(_common.error_text(e)) from None
        if c.fatal is not None:
            raise c.fatal
        if res.paused:
            slot.paused_id, slot.paused_at = ctx.tool_call_id, (ctx.run_id, ctx.run_step)
            slot.paused_calls = list(res.pending)
            raise ApprovalRequired(metadata={"calls": [
                {"tool": p.tool, "args": _common.named_args(
                    p.tool, (c.tm.tools[p.tool].tool_def.parameters_json_schema
                             if p.tool in (c.tm.tools or {}) else {}), p.args, p.kwargs)}
                for p in res.pending]})
        slot.paused_id = slot.paused_at = None
        slot.paused_calls = []
        out: Dict[str, Any] = {"value": _plain(res.value)}
        if res.stdout:
            out["stdout"] = res.stdout
        if res.stderr:
            out["stderr"] = res.stderr
        return out

    # -- sessions --

    def _slot(self, ctx: RunContext) -> _Slot:
        key = self._key(ctx) if self._key is not None else None
        with self._slots_lock:
            return self._slots.setdefault(key, _Slot())

    def session(self, key: Hashable = None) -> Optional[AgentSession]:
        """The :class:`codecage.AgentSession` of ``key`` (None: the default
        session), or None before its first call: host code may run code in
        it too, under the same budget (``calls_made``)."""
        with self._slots_lock:
            slot = self._slots.get(key)
        return slot.session if slot else None

    def _open(self, slot: _Slot, c: _Call) -> _Session:
        """The slot's session, started at its first call, with every tool
        of this step bound (tools that appear in later steps are added)."""
        fns = {name: None for name in (c.tm.tools or {})}
        if slot.session is None:
            s = _Session(self.config, language=self.language, sandbox=self.sandbox,
                         max_calls=self.max_calls, approval_timeout=self.approval_timeout)
            slot.session = s
        s = slot.session
        missing = {n: s.approved_call(n) for n in fns if n not in s._tools}
        if missing:
            s.pai_tools = s.pai_tools | set(missing)
            s.add_tools(missing)
        return s

    def _run(self, slot: _Slot, c: _Call, code: str, resume: bool) -> Any:
        with slot.lock:
            if resume:
                s = slot.session
                s.call = c
                return self._resume_held(s, slot.paused_calls, approve=True)
            s = self._open(slot, c)
            s.call = c
            return s.run(code)

    @staticmethod
    def _resume_held(s: _Session, calls: Sequence[Any], approve: bool,
                     reason: Optional[str] = None) -> Any:
        """Answer ``calls`` (held in ``s``'s paused eval); the result after
        the last, or as soon as the eval holds a call not among them."""
        ids = {p.id for p in calls}
        res = None
        for p in calls:
            if p.id not in {q.id for q in s.pending}:
                continue
            res = s.resume(p.id, approve, reason=reason)
            if not res.paused:
                return res
            if any(q.id not in ids for q in res.pending):
                return res
        return res if res is not None else s._wait()

    def _deny(self, slot: _Slot, c: _Call, reason: str) -> None:
        """End a paused eval whose approval never came: its held calls
        raise ToolDeniedError in the guest; what it ends with is dropped."""
        with slot.lock:
            s = slot.session
            s.call = c
            try:
                res = self._resume_held(s, list(s.pending), approve=False, reason=reason)
                while res is not None and res.paused:
                    res = self._resume_held(s, list(res.pending), approve=False, reason=reason)
            except errors.CodecageError:
                if not s._rt.alive:
                    self._drop_locked(slot)
            slot.paused_id = slot.paused_at = None
            slot.paused_calls = []

    @staticmethod
    def _denial(ctx: RunContext, call_id: str) -> str:
        """The text the user's denial of ``call_id`` gave, from the run's
        messages, or a default."""
        for m in reversed(ctx.messages or []):
            for part in getattr(m, "parts", ()):
                if isinstance(part, ToolReturnPart) and part.tool_call_id == call_id:
                    return str(part.content)
        return "the user did not approve this call"

    def _drop(self, slot: _Slot) -> None:
        with slot.lock:
            self._drop_locked(slot)

    @staticmethod
    def _drop_locked(slot: _Slot) -> None:
        s, slot.session = slot.session, None
        slot.paused_id = slot.paused_at = None
        slot.paused_calls = []
        if s is not None:
            s.close()

    def close(self) -> None:
        """Close every session (a paused eval ends). Idempotent; a later
        call starts a fresh session."""
        with self._slots_lock:
            slots, self._slots = list(self._slots.values()), {}
        for slot in slots:
            self._drop(slot)

    def __enter__(self) -> "CodeMode":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


__all__ = ["CodeMode"]
