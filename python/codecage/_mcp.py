"""Code mode from Python: ``mcp_tools(command)`` starts a stdio MCP server
and returns a :class:`McpToolBridge` of its tools, attachable to any
``IsolatedRuntime`` (the same results, errors and stubs as ``codecage mcp
--upstream``). The client is small and synchronous: JSON-RPC lines on the
server's stdin/stdout, one reader thread matching answers to requests, so
calls from several threads (and a guest's fan-out through ``eval_async``)
run concurrently upstream. The server's process and environment stay in
the host; the guest only sees the tools' results."""

from __future__ import annotations

import json
import keyword
import shlex
import subprocess
import threading
from concurrent.futures import Future
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from ._mcp_stubs import stubs
from ._bridge import ToolBridge
from .errors import InvalidInputError, UpstreamError

# The largest message the server may send, bytes (as `codecage mcp`).
MAX_MESSAGE = 8 << 20


class UpstreamToolError(Exception):
    """A tool of the MCP server returned ``isError``; the message is its text."""


def _list_of(res: Mapping[str, Any], key: str, method: str) -> list:
    """``res[key]``, a list (missing: empty); UpstreamError for anything
    else: the server's answer is not MCP."""
    v = res.get(key)
    if v is None:
        return []
    if not isinstance(v, list):
        raise UpstreamError(f"the MCP server's {method} result has a {key!r} that is not a "
                            f"list but {type(v).__name__}")
    return v


class _Client:
    def __init__(self, argv: Sequence[str], timeout: float) -> None:
        self.argv = list(argv)
        self.timeout = timeout
        self.lock = threading.Lock()
        self.pending: Dict[int, Future] = {}
        self.next_id = 1
        self.proc: Optional[subprocess.Popen] = None
        self.tools: List[Dict[str, Any]] = []

    def _open(self) -> None:
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        except OSError as e:
            raise UpstreamError(f"cannot run {self.argv[0]!r}: {e.strerror}") from None
        threading.Thread(target=self._read, args=(self.proc,), daemon=True).start()

    def alive(self) -> bool:
        with self.lock:
            return self.proc is not None

    def start(self) -> None:
        self._open()
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "codecage", "version": "1"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools: List[Dict[str, Any]] = []
        cursor = None
        for _ in range(16):
            res = self.request("tools/list", {"cursor": cursor} if cursor else {})
            tools += [t for t in _list_of(res, "tools", "tools/list") if isinstance(t, dict)]
            cursor = res.get("nextCursor")
            if not isinstance(cursor, str):
                break
        self.tools = tools

    def _send(self, msg: Mapping[str, Any]) -> None:
        data = json.dumps(msg).encode() + b"\n"
        with self.lock:
            proc = self.proc
            try:
                proc.stdin.write(data)
                proc.stdin.flush()
            except (OSError, ValueError, AttributeError):
                raise UpstreamError("the MCP server is not reading its input") from None

    def _read(self, proc: subprocess.Popen) -> None:
        while True:
            line = proc.stdout.readline(MAX_MESSAGE + 1)
            if not line or (len(line) > MAX_MESSAGE and not line.endswith(b"\n")):
                break
            try:
                msg = json.loads(line)
            except ValueError:
                continue  # malformed: dropped
            if not isinstance(msg, dict) or "method" in msg:
                continue  # notifications and requests of its own: not followed
            with self.lock:
                f = self.pending.pop(msg.get("id"), None) if isinstance(msg.get("id"), int) \
                    else None
            if f is not None:
                f.set_result(msg)
        proc.kill()
        code = proc.wait()
        with self.lock:
            pending, self.pending = self.pending, {}
            if self.proc is proc:
                self.proc = None
        for f in pending.values():
            f.set_exception(UpstreamError(f"the MCP server exited (status {code}); it is "
                                          f"restarted on the next call"))

    def request(self, method: str, params: Mapping[str, Any]) -> Dict[str, Any]:
        f: Future = Future()
        with self.lock:
            rid, self.next_id = self.next_id, self.next_id + 1
            self.pending[rid] = f
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": dict(params)})
        try:
            msg = f.result(self.timeout)
        except TimeoutError:
            with self.lock:
                self.pending.pop(rid, None)
            self._send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": rid}})
            raise UpstreamError(f"no answer to {method} within {self.timeout} s") from None
        if not isinstance(msg.get("result"), dict):
            err = msg.get("error") if isinstance(msg.get("error"), dict) else {}
            raise UpstreamError(f"{method} failed: {err.get('message', 'no result')}")
        return msg["result"]

    def call(self, name: str, args: Mapping[str, Any]) -> Any:
        if not self.alive():
            self.start()
        res = self.request("tools/call", {"name": name, "arguments": dict(args)})
        text = "\n".join(b["text"] for b in _list_of(res, "content", "tools/call")
                         if isinstance(b, dict) and isinstance(b.get("text"), str))
        if res.get("isError") is True:
            raise UpstreamToolError(text)
        if "structuredContent" in res:
            return res["structuredContent"]
        try:
            return json.loads(text)
        except ValueError:
            return text

    def close(self) -> None:
        with self.lock:
            proc, self.proc = self.proc, None
        if proc is not None:
            proc.kill()
            proc.wait()


class _HttpClient(_Client):
    """The same over streamable HTTP: one POST per message (urllib), the
    answer as JSON or from an event stream, the server's Mcp-Session-Id on
    every later request; a lost session starts again on the next call."""

    def __init__(self, url: str, timeout: float) -> None:
        super().__init__([url], timeout)
        self.url = url
        self.session: Optional[str] = None
        self.up = False

    def _open(self) -> None:
        with self.lock:
            self.session, self.up = None, True

    def alive(self) -> bool:
        with self.lock:
            return self.up

    def _post(self, msg: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
        import http.client
        import urllib.error
        import urllib.request
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
             "MCP-Protocol-Version": "2025-06-18"}
        with self.lock:
            if self.session:
                h["Mcp-Session-Id"] = self.session
        data = json.dumps(msg).encode()
        try:
            req = urllib.request.Request(self.url, data, h, method="POST")
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                sid = r.headers.get("Mcp-Session-Id")
                body = r.read(MAX_MESSAGE + 1)
                sse = "text/event-stream" in (r.headers.get("Content-Type") or "")
        except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as e:
            with self.lock:
                self.up = False
            raise UpstreamError(f"cannot reach {self.url}: {e}; it is tried again on the "
                                f"next call") from None
        if len(body) > MAX_MESSAGE:
            raise UpstreamError("the MCP server sent a message over 8 MiB")
        with self.lock:
            self.session = sid or self.session
        if "id" not in msg:
            return None
        texts = [body]
        if sse:
            events, cur = [], []
            for line in body.decode("utf-8", "replace").splitlines() + [""]:
                if line.startswith("data:"):
                    cur.append(line[5:].lstrip(" "))
                elif not line and cur:
                    events.append("\n".join(cur))
                    cur = []
            texts = events
        for t in texts:
            try:
                m = json.loads(t)
            except ValueError:
                continue
            if isinstance(m, dict) and m.get("id") == msg["id"] and "method" not in m:
                return m
        raise UpstreamError("the MCP server answered with no JSON-RPC response")

    def _send(self, msg: Mapping[str, Any]) -> None:
        self._post(msg)

    def request(self, method: str, params: Mapping[str, Any]) -> Dict[str, Any]:
        with self.lock:
            rid, self.next_id = self.next_id, self.next_id + 1
        msg = self._post({"jsonrpc": "2.0", "id": rid, "method": method,
                          "params": dict(params)}) or {}
        if not isinstance(msg.get("result"), dict):
            err = msg.get("error") if isinstance(msg.get("error"), dict) else {}
            raise UpstreamError(f"{method} failed: {err.get('message', 'no result')}")
        return msg["result"]

    def close(self) -> None:
        with self.lock:
            self.up = False


def _guest_name(name: str) -> str:
    """As src/mcp/client/upstream.c's: "get-weather" -> "get_weather", a leading
    digit gets a '_', a Python keyword or a "__" name a trailing '_'."""
    g = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in name)
    g = "_" + g if g[:1].isdigit() else g
    return g + "_" if keyword.iskeyword(g) or g.startswith("__") else g


class McpToolBridge(ToolBridge):
    """A :class:`ToolBridge` of one MCP server's tools (see
    :func:`mcp_tools`), with :meth:`describe` and :meth:`close`."""

    _OWNER = "mcp_tools"  # its budget is mcp_tools(max_calls=N)

    def __init__(self, client: _Client, prefix: Optional[str],
                 max_calls: Optional[int]) -> None:
        self._client = client
        self._defs: Dict[str, Dict[str, Any]] = {}
        fns = {}
        for t in client.tools:
            name = t.get("name")
            if not isinstance(name, str) or not name:
                continue
            g = _guest_name(name)
            if g in fns:
                continue
            self._defs[g] = t
            fns[g] = self._caller(name)
        self._prefix = prefix
        super().__init__({(prefix + "." if prefix else "") + g: f for g, f in fns.items()},
                         max_calls)

    def _caller(self, name: str):
        client = self._client

        def call(*args: Any, **kwargs: Any) -> Any:
            if len(args) > 1 or (args and not isinstance(args[0], dict)):
                raise TypeError("an MCP tool takes one dict of named inputs, or keywords")
            return client.call(name, {**(args[0] if args else {}), **kwargs})
        call.__name__ = _guest_name(name)
        return call

    def describe(self, language: str) -> str:
        """TypeScript declarations (``"javascript"``) or Python stubs
        (``"python"``) of the tools, from their schemas and descriptions:
        the same text ``codecage mcp --upstream NAME=...`` gives the model
        (the group is ``name``, or ``mcp`` for a bridge made without one)."""
        lang = {"javascript": "javascript", "js": "javascript", "typescript": "javascript",
                "python": "python", "py": "python"}.get(str(language).lower())
        if lang is None:
            raise InvalidInputError(f"describe takes 'javascript' or 'python', not "
                                    f"{language!r}")
        return stubs([(self._prefix or "mcp", list(self._defs.items()))], lang)

    def close(self) -> None:
        """Stop the MCP server's process (a later call starts it again)."""
        self._client.close()

    def __enter__(self) -> "McpToolBridge":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()



def mcp_tools(command_or_url: Union[str, Sequence[str]], *, name: Optional[str] = None,
              max_calls: Optional[int] = None, timeout: float = 30.0):
    """Start the stdio MCP server ``command_or_url`` (a command line, split
    as a shell splits words, or an argv list; or connect to a streamable
    HTTP one at that URL) and return a
    ``McpToolBridge`` (a :class:`ToolBridge`) of its tools: attach it to
    any ``IsolatedRuntime`` and the guest calls ``tools.TOOL(key=value)``
    (``tools.NAME.TOOL`` with ``name=``). A call returns the tool's
    ``structuredContent``, else its text (JSON-parsed when it is JSON); an
    ``isError`` result raises ``UpstreamToolError`` in the guest with its
    text, a dead server :class:`codecage.UpstreamError` (it is restarted
    on the next call). ``max_calls`` is the bridge's budget; ``timeout`` (s) bounds
    each request. ``describe("javascript" | "python")`` gives the stubs.
    An ``http://`` or ``https://`` URL is a streamable HTTP server.
    Raises :class:`codecage.UpstreamError` (a ``CodecageError``) when the
    server cannot be started or reached or its answers are not MCP,
    ``InvalidInputError`` for an empty command or a bad ``name``."""
    http = isinstance(command_or_url, str) and command_or_url.startswith(("http://", "https://"))
    if isinstance(command_or_url, str):
        argv = [command_or_url] if http else shlex.split(command_or_url)
    else:
        argv = list(command_or_url)
    if not argv:
        raise InvalidInputError("mcp_tools: the command is empty")
    if name is not None and (not name.isidentifier() or not name.isascii()):
        raise InvalidInputError(f"mcp_tools: name {name!r} is not an ASCII identifier")
    client = _HttpClient(argv[0], timeout) if http else _Client(argv, timeout)
    try:
        client.start()
    except BaseException:
        client.close()
        raise
    return McpToolBridge(client, name, max_calls)
