"""FastMCP and codecage, both ways.

- :func:`bind` gives a runtime (or an :class:`AgentSession`) every tool of
  a FastMCP server, through an in-process ``fastmcp.Client`` (or any
  client or target ``fastmcp.Client`` takes: a URL, a transport, an MCP
  config): ``tools.TOOL({...})`` / ``tools.PREFIX.TOOL(key=value)`` in the
  guest, with the stubs ``codecage mcp --upstream`` would show, results and
  errors as there (``structuredContent``, else the text; ``isError`` raises
  ``UpstreamToolError`` in the guest), under one call budget.
- :func:`server` is a FastMCP server whose tools are codecage's
  ``run_python`` and ``run_javascript``, to run or ``mount`` in a FastMCP
  application.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import dataclasses
import datetime
import json
import math
import threading
from typing import Any, Dict, Iterable, List, Mapping, Optional

from .._agent import AgentSession, Tool
from .._bridge import ToolBridge
from .._mcp import McpToolBridge, UpstreamError, UpstreamToolError
from .._runtime import IsolatedRuntime, RuntimeConfig
from ..errors import CodecageError, InvalidInputError
from . import _common

_fastmcp = _common.require("fastmcp", "fastmcp", "fastmcp")
from fastmcp import Client, Context, FastMCP  # noqa: E402
from fastmcp.tools import ToolResult  # noqa: E402
from mcp.types import ImageContent, TextContent  # noqa: E402
from mcp_types.version import MODERN_PROTOCOL_VERSIONS  # noqa: E402


class _FastMcpClient:
    """codecage's MCP client interface (``tools``, ``call``, ``close``, as
    ``_mcp._Client``) over a ``fastmcp.Client``, on an event loop thread of
    its own: one connection, opened and closed by one task (anyio's rule),
    shared by every call, from any thread."""

    def __init__(self, target: Any, timeout: float) -> None:
        self.client = target if isinstance(target, Client) else Client(target)
        self.timeout = timeout
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                       name="codecage-fastmcp")
        self.thread.start()
        self.ready: "asyncio.Future[Any]" = None  # type: ignore[assignment]
        self.stop: Optional[asyncio.Event] = None
        self.tools: List[Dict[str, Any]] = []
        self.wrapped: set = set()
        try:
            tools = self._submit(self._open()).result(timeout)
        except BaseException as e:
            self.close()
            raise UpstreamError(f"cannot connect to the FastMCP server: {e}") from None
        for t in tools:
            d = t.model_dump(by_alias=True, exclude_none=True, mode="json")
            if (d.get("outputSchema") or {}).get("x-fastmcp-wrap-result"):
                self.wrapped.add(d["name"])  # a non-object result, as {"result": value}
            self.tools.append(d)

    def _submit(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def _open(self) -> Any:
        self.stop = asyncio.Event()
        ready = self.loop.create_future()
        self.task = asyncio.ensure_future(self._hold(ready))
        return await ready

    async def _hold(self, ready: "asyncio.Future[Any]") -> None:
        try:
            async with self.client:
                ready.set_result(await self.client.list_tools())
                await self.stop.wait()
        except BaseException as e:
            if not ready.done():
                ready.set_exception(e)

    async def _call(self, name: str, args: Mapping[str, Any]) -> Any:
        res = await self.client.call_tool(name, dict(args), raise_on_error=False)
        text = "\n".join(b.text for b in res.content if isinstance(b, TextContent))
        if res.is_error:
            raise UpstreamToolError(text)
        if res.structured_content is not None:
            if name in self.wrapped and "result" in res.structured_content:
                return res.structured_content["result"]
            return res.structured_content
        try:
            return json.loads(text)
        except ValueError:
            return text

    def call_async(self, name: str, args: Mapping[str, Any]) -> "asyncio.Future[Any]":
        """The call as an asyncio future of the caller's own loop."""
        return asyncio.wrap_future(self._submit(self._call(name, args)))

    def call(self, name: str, args: Mapping[str, Any]) -> Any:
        try:
            return self._submit(self._call(name, args)).result(self.timeout)
        except TimeoutError:
            raise UpstreamError(f"no answer from tool {name} within {self.timeout} s") from None

    def close(self) -> None:
        if self.loop.is_closed():
            return
        if self.stop is not None:
            self.loop.call_soon_threadsafe(self.stop.set)
            try:
                self._submit(asyncio.wait_for(asyncio.shield(self.task), self.timeout)) \
                    .result(self.timeout + 1)
            except BaseException:
                pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


class FastMcpBridge(McpToolBridge):
    """A :class:`codecage.McpToolBridge` of a FastMCP server's tools
    (:func:`bind` makes one): ``describe(language)`` gives their stubs,
    ``close()`` closes the client. Its tools are coroutine functions, so
    with ``eval_async`` a guest's ``Promise.all`` / ``asyncio.gather`` runs
    them concurrently."""

    def _caller(self, name: str) -> Any:
        client = self._client

        async def call(*args: Any, **kwargs: Any) -> Any:
            if len(args) > 1 or (args and not isinstance(args[0], dict)):
                raise TypeError("an MCP tool takes one dict of named inputs, or keywords")
            return await client.call_async(name, {**(args[0] if args else {}), **kwargs})
        return call

    def session_tools(self) -> Dict[str, Tool]:
        """The tools as :meth:`AgentSession.add_tools` takes them."""
        defs = {(self._prefix + "." if self._prefix else "") + g: d for g, d in self._defs.items()}
        return {name: Tool(fn, description=defs[name].get("description") or "",
                           parameters=defs[name].get("inputSchema") or {"type": "object"})
                for name, fn in self.tools.items()}


def bind(rt_or_session: Any, server_or_client: Any, prefix: Optional[str] = None, *,
         max_calls: Optional[int] = None, timeout: float = 30.0) -> FastMcpBridge:
    """Bind every tool of ``server_or_client`` (a ``fastmcp.FastMCP``
    server, a ``fastmcp.Client``, or anything ``fastmcp.Client`` takes) to
    ``rt_or_session``, an :class:`IsolatedRuntime` or an
    :class:`AgentSession`, and return the :class:`FastMcpBridge` (keep it:
    ``describe("python" | "javascript")`` for the model's prompt,
    ``close()`` when done).

    In the guest: ``tools.TOOL(key=value)`` or ``tools.TOOL({...})``
    (``tools.PREFIX.TOOL`` with ``prefix``; a name that is not an
    identifier has its other characters made ``_``), ``await
    atools.TOOL(...)`` in Python, ``await tools.TOOL({...})`` in
    JavaScript. A call returns the tool's structured result (a FastMCP tool
    that returns a plain value gives that value), else its text; a tool
    error raises ``UpstreamToolError`` in the guest, a dead connection
    ``UpstreamError``. Budget: an AgentSession's own (one budget for all
    its tools); for a runtime, ``max_calls`` (None: unlimited) over these
    tools. ``timeout`` (s) bounds connecting and each call of a
    synchronous eval.

    Raises ``UpstreamError`` (cannot connect), ``InvalidInputError`` (a
    bad prefix, a name the session has), ``TypeError``."""
    if prefix is not None and (not isinstance(prefix, str) or not prefix.isidentifier()
                               or not prefix.isascii()):
        raise InvalidInputError(f"prefix {prefix!r} is not an ASCII identifier")
    if not isinstance(rt_or_session, (IsolatedRuntime, AgentSession)):
        raise TypeError("bind takes an IsolatedRuntime or an AgentSession, not "
                        f"{type(rt_or_session).__name__}")
    client = _FastMcpClient(server_or_client, timeout)
    try:
        bridge = FastMcpBridge(client, prefix, max_calls)
        if isinstance(rt_or_session, AgentSession):
            rt_or_session.add_tools(bridge.session_tools())
        else:
            bridge.attach(rt_or_session)
    except BaseException:
        client.close()
        raise
    return bridge


# ---- codecage's run tools as a FastMCP server ----

def _tagged(v: Any) -> Any:
    """A value as JSON, tagged as ``codecage --json`` and ``codecage mcp``
    tag what JSON lacks (``$bytes``, ``$date``, ``$float``)."""
    if isinstance(v, float) and not math.isfinite(v):
        return {"$float": "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")}
    if isinstance(v, (bytes, bytearray)):
        return {"$bytes": base64.b64encode(bytes(v)).decode()}
    if isinstance(v, datetime.datetime):
        return {"$date": v.isoformat().replace("+00:00", "Z")}
    if isinstance(v, (list, tuple)):
        return [_tagged(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _tagged(x) for k, x in v.items()}
    return v


@dataclasses.dataclass
class _Runtimes:
    """The runtimes of a server's MCP sessions: one per session and
    language, the least recently used closed past ``max_sessions``."""

    config: RuntimeConfig
    sandbox: str
    tools: Optional[ToolBridge]
    max_sessions: int
    live: "collections.OrderedDict[tuple, IsolatedRuntime]" = dataclasses.field(
        default_factory=collections.OrderedDict)
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

    def get(self, key: tuple, language: str, reset: bool) -> tuple:
        """(runtime, note): the session's runtime, a new one after a reset
        or when the last one ended (the note says so)."""
        note = ""
        with self.lock:
            rt = self.live.pop(key, None)
            if rt is not None and (reset or not rt.alive):
                note = "" if reset else "the previous runtime ended; this is a fresh one"
                rt.close()
                rt = None
            if rt is None:
                rt = IsolatedRuntime(self.config, language=language, sandbox=self.sandbox)
                if self.tools is not None:
                    self.tools.attach(rt)
            self.live[key] = rt
            while len(self.live) > self.max_sessions:
                self.live.popitem(last=False)[1].close()
        return rt, note

    def close(self) -> None:
        with self.lock:
            live, self.live = list(self.live.values()), collections.OrderedDict()
        for rt in live:
            rt.close()


def _run_result(rt: IsolatedRuntime, code: str, timeout_s: Optional[float],
                inputs: Optional[Dict[str, Any]], note: str) -> ToolResult:
    for name, value in (inputs or {}).items():
        rt.set_global(name, value)
    try:
        r = rt.run(code, timeout=timeout_s)
    except CodecageError as e:
        structured = {"status": "error", "value": None, "stdout": e.stdout, "stderr": e.stderr,
                      "error": {"kind": e.kind, "type": e.name, "message": e.message,
                                "traceback": e.traceback}, "note": note or None}
        text = (f"note: {note}\n" if note else "") + f"status: error ({e.kind})\n" + \
            _common.error_text(e)
        return ToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=structured, is_error=True)
    structured = {"status": "ok", "value": _tagged(r.value), "stdout": r.stdout,
                  "stderr": r.stderr, "error": None, "value_type": r.value_type,
                  "duration_ms": round(r.duration * 1000, 3), "note": note or None}
    text = (f"note: {note}\n" if note else "") + "status: ok\n" + \
        _common.result_text(r.value, r.stdout, r.stderr)
    content: List[Any] = [TextContent(type="text", text=text)]
    for d in r.displays:
        if "image/png" in d:
            content.append(ImageContent(type="image", mimeType="image/png",
                                        data=base64.b64encode(d["image/png"]).decode()))
        elif "image/svg+xml" in d:
            content.append(TextContent(type="text", text=d["image/svg+xml"]))
    return ToolResult(content=content, structured_content=structured)


def server(name: str = "codecage", *, languages: Iterable[str] = ("python", "javascript"),
           config: Optional[RuntimeConfig] = None, sandbox: str = "require",
           tools: Optional[ToolBridge] = None, max_sessions: int = 64,
           **options: Any) -> FastMCP:
    """A FastMCP server with codecage's ``run_python`` and
    ``run_javascript`` tools (``languages`` picks), input ``{code,
    timeout_s?, reset?, inputs?}`` and results as ``codecage mcp`` gives
    them: a text block (``status: ok``, ``value:``, ``stdout:``,
    ``stderr:``; or ``status: error (KIND)`` with the guest's error and
    traceback, ``isError``), ``structuredContent`` ``{status, value,
    stdout, stderr, error, value_type, duration_ms, note}`` (values tagged
    as ``--json`` tags them) and PNG displays as image blocks.

    Each MCP session keeps a runtime per language, so state persists
    across its calls (``reset: true`` starts afresh; a runtime that ended
    is replaced, with a ``note``); at most ``max_sessions`` sessions' runtimes
    live, the least recently used closed first. A connection without an MCP
    session (the 2026-07-28 protocol's stateless requests) gets a fresh
    runtime per call. The limits and grants are ``config`` (a
    :class:`RuntimeConfig`) or ``options`` (its fields: ``timeout``,
    ``max_memory``, ``scratch``, ``mounts``, ``allow_net``,
    ``python_path``, ``libraries`` ...), the options ``codecage mcp``'s flags
    set; ``value_fallback`` is on, as there. ``tools``: a
    :class:`ToolBridge` attached to every runtime (code mode: its budget is
    shared by all of them). Mount it in an application with
    ``app.mount(server())``, or ``server().run()``; :func:`close` closes
    the runtimes it keeps."""
    langs = [_common.check_language(lang) for lang in languages]
    if not langs:
        raise InvalidInputError("server() needs at least one language")
    if config is None:
        config = RuntimeConfig(value_fallback=True, **options)
    else:
        config = dataclasses.replace(config, value_fallback=True, **options)
    runtimes = _Runtimes(config, sandbox, tools, max_sessions)
    mcp = FastMCP(name)
    mcp._codecage_runtimes = runtimes  # type: ignore[attr-defined]
    limit = config.timeout

    def make(language: str) -> None:
        what = ("Python 3.11 code: the value of the last expression comes back"
                if language == "python" else
                "JavaScript (QuickJS): the completion value comes back, Promises awaited")
        desc = (f"Run {what}, with stdout and stderr, in a confined codecage sandbox (no "
                f"network or files unless granted; {limit:g} s per call at most). State "
                "persists across calls of this session; reset: true starts afresh. inputs "
                "binds each key as a global first.")
        if tools is not None:
            desc += "\n\n" + (tools.describe(language) if hasattr(tools, "describe")
                              else "Host tools: " + ", ".join(sorted(tools.tools)))

        async def run(code: str, ctx: Context, timeout_s: Optional[float] = None,
                      reset: bool = False, inputs: Optional[Dict[str, Any]] = None) -> ToolResult:
            rc = ctx.request_context
            if rc is not None and rc.protocol_version in MODERN_PROTOCOL_VERSIONS:
                # a stateless request: no session to keep a runtime for
                def once() -> ToolResult:
                    with IsolatedRuntime(config, language=language, sandbox=sandbox) as rt:
                        if tools is not None:
                            tools.attach(rt)
                        return _run_result(rt, code, timeout_s, inputs, "")
                return await asyncio.to_thread(once)
            rt, note = await asyncio.to_thread(runtimes.get, (ctx.session_id, language),
                                               language, reset)
            return await asyncio.to_thread(_run_result, rt, code, timeout_s, inputs, note)

        run.__name__ = "run_" + language
        mcp.tool(run, name="run_" + language, description=desc)

    for lang in langs:
        make(lang)
    return mcp


def close(srv: FastMCP) -> None:
    """Close every runtime ``srv`` (made by :func:`server`) keeps for its
    sessions; a later call starts a fresh one. For a server that stops
    before the process does."""
    runtimes = getattr(srv, "_codecage_runtimes", None)
    if not isinstance(runtimes, _Runtimes):
        raise TypeError("close takes a server made by codecage.integrations.fastmcp.server()")
    runtimes.close()


__all__ = ["bind", "server", "close", "FastMcpBridge"]
