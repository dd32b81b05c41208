"""IsolatedRuntime and the default runtime (RuntimeConfig and Mount: _config.py;
ToolBridge: _bridge.py).

The Python half of the package: thin wrappers over ``codecage._codecage``
(src/python/), which drives libcodecage. Nothing here runs guest code: every
eval goes to a confined worker process.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import dataclasses
import inspect
import os
import threading
import weakref
from typing import Any, Callable, Dict, Mapping, NamedTuple, Optional

try:
    from . import _codecage
except ImportError as e:  # the source tree, or a broken install
    raise ImportError(
        "codecage's C extension (codecage._codecage) is not built here (%s): install the "
        "package with `pip install .` from the repository root and import it from "
        "outside the source tree" % e) from None
from .errors import (CodecageError, GuestSyntaxError, InternalError, InvalidInputError,
                     ToolBudgetError, make)

_codecage._set_error_factory(make)


# the config's names, also importable from here as before
from ._config import (DEFAULT_MAX_MEMORY, REDACTED_MESSAGE, _SANDBOXES, Mount,  # noqa: F401
                      RuntimeConfig)


def _bin_dir() -> str:
    """Where the worker executables are: $CODECAGE_WORKER_DIR, else the
    package's own ``_bin`` directory (pip install puts them there)."""
    return os.environ.get("CODECAGE_WORKER_DIR") or os.path.join(os.path.dirname(__file__),
                                                                 "_bin")


def _check_worker(worker_dir: str, language: str, chosen: bool) -> None:
    """A clear error for a missing worker: InvalidInputError when the caller
    chose the directory (worker_dir), InternalError when the installation is
    broken."""
    exe = os.path.join(worker_dir, "codecage-worker-" + ("py" if language == "python" else "js"))
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        raise (InvalidInputError if chosen else InternalError)(
            f"the codecage worker executable {exe} is missing or not executable: reinstall "
            "codecage (pip install .), or point RuntimeConfig(worker_dir=...) or "
            "$CODECAGE_WORKER_DIR at a directory holding codecage-worker-js and "
            "codecage-worker-py")


@dataclasses.dataclass(frozen=True)
class EvalResult:
    """What a successful eval produced: ``value``, the guest's ``stdout`` and
    ``stderr`` (str, each capped by the config), ``duration`` (float,
    seconds of wall clock seen by the supervisor), ``value_type``: the
    name of the type of a last value that could not be converted
    (``"list"`` for ``plt.plot(...)``'s lines, ``"DataFrame"``,
    ``"function"``; ``value`` is then its text form, cut to stay under
    ``max_result``), else None: :meth:`IsolatedRuntime.run` always asks
    for that text, ``eval`` only with ``RuntimeConfig(value_fallback=True)``
    (else it raises ``GuestError``, ``TypeError``); and ``displays``: the rich output the guest made, in order (a
    tuple of MIME bundles: dicts of ``"image/png"`` to bytes,
    ``"image/svg+xml"``, ``"text/html"``, ``"text/plain"``,
    ``"application/json"`` to str): Python's ``display(obj)``, matplotlib
    figures left open or passed to ``plt.show()``, a last value that is a
    pandas DataFrame or Series; JavaScript's ``display(value, mimeType)``.
    At most 64 of them, their bytes counted with the value's toward
    ``max_result``; more end the eval as ``OutputLimitError``."""

    value: Any
    stdout: str
    stderr: str
    duration: float
    value_type: Optional[str] = None
    displays: tuple = ()
    #: what installing the runtime's ``dependencies`` said (pip's or npm's
    #: output, what Debian had, or "cached (KEY): ..."); None without any
    install_log: Optional[str] = None


def _failure_text(e: BaseException) -> str:
    # KeyError('x') says "'x'"; the guest should get the host's text.
    if len(e.args) == 1 and isinstance(e.args[0], str):
        return e.args[0]
    return str(e)


def _builtin_bases(cls: type) -> str:
    """The builtin exception classes ``cls`` derives from, comma-separated,
    for the guest's class of the same name: ``io.UnsupportedOperation``
    gives ``"OSError,ValueError"``. In MRO order, without ``Exception`` and
    without a class an earlier one already derives from; ``""`` for a
    builtin class itself (the guest has it)."""
    if cls.__module__ == "builtins":
        return ""
    out: list = []
    for b in cls.__mro__[1:]:
        if (b.__module__ == "builtins" and issubclass(b, Exception) and b is not Exception
                and not any(issubclass(c, b) for c in out)):
            out.append(b)
    return ",".join(b.__name__ for b in out)


def _reject(pending: Any, e: BaseException) -> None:
    # the supervisor redacts the message when the tool's calls are redacted
    pending.reject(type(e).__name__, _failure_text(e), _builtin_bases(type(e)))


class _HostCalls:
    """The coroutine tool calls of one ``eval_async``, on its event loop.
    The eval's thread hands each call over with ``call_soon_threadsafe``
    (``start``); when the eval ends (``end``) every call still running is
    cancelled and awaited, and a call handed over but not started yet is
    never started: no host coroutine outlives its eval."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.tasks: "set[asyncio.Task[Any]]" = set()
        self.closed = False

    def start(self, aw: Any, settle: Callable[[Any], None]) -> None:
        if self.closed:
            if inspect.iscoroutine(aw):
                aw.close()  # never started, so nothing to await
            settle(None)
            return
        task = self.loop.create_task(_await(aw))
        self.tasks.add(task)

        def done(t: "asyncio.Task[Any]") -> None:
            self.tasks.discard(t)
            settle(t)

        task.add_done_callback(done)

    async def end(self) -> None:
        self.closed = True
        for t in list(self.tasks):
            t.cancel()
        while self.tasks:
            await asyncio.wait(list(self.tasks))


async def _await(aw: Any) -> Any:
    return await aw


def _run_blocking(aw: Any) -> Any:
    """Run an awaitable to completion from synchronous code: in a fresh event
    loop on this thread, or on a helper thread when this thread already runs
    a loop (a synchronous eval called from a coroutine)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(aw))
    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        return ex.submit(asyncio.run, _await(aw)).result()


def _is_web_polyfills(bootstrap: Any) -> bool:
    from ._polyfills import WEB_POLYFILLS
    return bootstrap is WEB_POLYFILLS


class _NativeArgs(NamedTuple):
    """What the extension's Runtime, ForkServer and Pool are built from."""

    config: RuntimeConfig
    language: str
    sandbox: str
    limits: Dict[str, Any]
    worker_dir: str


def _native_args(config: Optional[RuntimeConfig], language: str, sandbox: str,
                 options: Mapping[str, Any]) -> _NativeArgs:
    """Check ``config``/``options``, ``language`` and ``sandbox`` as
    IsolatedRuntime does, and turn them into the extension's arguments.
    Raises TypeError, InvalidInputError, InternalError (missing worker)."""
    if config is None:
        config = RuntimeConfig(**options)
    elif not isinstance(config, RuntimeConfig):
        raise TypeError("config must be a RuntimeConfig")
    elif options:
        config = dataclasses.replace(config, **options)
    name = _codecage.language_name(language)  # the library's spellings: js, py
    if name is None:
        raise InvalidInputError("language must be 'javascript' ('js') or 'python' ('py'), "
                                f"not {language!r}")
    if sandbox not in _SANDBOXES:
        raise InvalidInputError(f"sandbox must be 'require', 'auto' or 'off', not {sandbox!r}")
    language = name
    lang = getattr(config.bootstrap, "language", None)
    if lang is not None and lang != language:
        raise InvalidInputError(f"this bootstrap is {lang} code; the runtime is {language}")
    worker_dir = os.fspath(config.worker_dir) if config.worker_dir else _bin_dir()
    _check_worker(worker_dir, language, config.worker_dir is not None)
    limits = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)
              if f.name in ("timeout", "grace", "max_stdout", "max_stderr", "max_result",
                            "max_source", "cpu_time", "max_open_files", "max_file_size",
                            "max_pending_calls", "scratch")}
    limits["mounts"] = [m._native() for m in config.mounts]
    limits["max_memory"] = (config.max_memory if config.max_memory is not None
                            else DEFAULT_MAX_MEMORY[language])
    if config.web_polyfills and language != "javascript":
        raise InvalidInputError("RuntimeConfig.web_polyfills is for JavaScript runtimes; "
                                "turn it off for a python runtime")
    libraries = tuple(os.fspath(x) for x in config.libraries)
    # bootstrap=WEB_POLYFILLS with libraries: the built-in polyfills run
    # first, in the worker, so the libraries find them (_start skips it)
    limits["web_polyfills"] = bool(config.web_polyfills
                                   or (libraries and _is_web_polyfills(config.bootstrap)))
    limits["libraries"] = libraries
    limits["node_modules"] = (os.fspath(config.node_modules)
                              if config.node_modules is not None else None)
    if config.python_path:
        limits["python_path"] = tuple(config.python_path)
    if config.dependencies or config.deps is not None:
        limits["dependencies"] = config.dependencies
        limits["deps"] = config.deps._native() if config.deps is not None else None
    return _NativeArgs(config, language, sandbox, limits, worker_dir)


class IsolatedRuntime:
    """One confined worker (a session): globals persist across evals until
    :meth:`close`.

    ``IsolatedRuntime(config=None, *, language="javascript", sandbox="require",
    **options)``: ``language`` is ``"javascript"`` (``"js"``) or ``"python"``
    (``"py"``); ``sandbox`` is ``"require"`` (every confinement layer or
    ``SandboxUnavailable``), ``"auto"`` (what the kernel offers) or ``"off"``
    (debugging only); ``options`` override fields of ``config``
    (``IsolatedRuntime(timeout=2)``). Use it as a context manager.

    Raises ``SandboxUnavailable``, ``InvalidInputError`` (bad options),
    ``InternalError`` (a missing worker executable), ``WorkerCrashed`` or
    ``ProtocolViolation`` (the worker failed to start), or the bootstrap's
    error.

    A runtime serves one thread at a time (``RuntimeBusyError`` otherwise);
    the GIL is released while it waits for the worker.

    ``fork_server`` (bool, True): the default path. The worker is forked
    from a process-wide fork server for this language and the options its
    template fixes (``sandbox``, ``max_memory``, the output, result and
    source caps, ``cpu_time``, ``max_open_files``, ``max_file_size``,
    ``scratch`` (its size: each runtime mounts a private one), ``mounts``
    (the objects named), ``python_path``, ``libraries`` (their bytes),
    ``web_polyfills``, ``worker_dir``; ``timeout`` too with libraries, which
    load within it), started by the first such runtime of the process: later
    ones cost a fork, not a worker's start. Each runtime's own as always:
    ``timeout``, ``grace``, ``max_pending_calls``, the network options,
    tools, redaction, ``on_output``, ``bootstrap``. It behaves as a spawned
    runtime (a Python template imports nothing more); its server's sessions
    share a hash secret, address-space layout and a thread allowance
    (SECURITY.md). Never refused by the path: when a server cannot serve
    (its template did not start, it cannot fork: its ``max_sessions`` (1024)
    live, its process quota), the worker is spawned and ``rt.sandbox["fork_server"]``
    says why (``"spawned: ..."``; ``"shared"`` when forked).
    ``fork_server=False`` spawns (no ``fork_server`` key). At most 8 servers
    are kept (the least recently used goes first; its live sessions keep
    it); they end at exit or :func:`close_fork_servers`; a child of
    ``os.fork()`` starts its own.
    Thread-safe: first runtimes of one key made at once start one server.
    """

    def __init__(self, config: Optional[RuntimeConfig] = None, *, language: str = "javascript",
                 sandbox: str = "require", fork_server: bool = True, **options: Any) -> None:
        self._rt = None
        if not isinstance(fork_server, bool):
            raise TypeError(f"fork_server must be a bool, not {type(fork_server).__name__}")
        n = _native_args(config, language, sandbox, options)
        self._prepare(n)
        limits = dict(n.limits, fork_server=fork_server)
        self._rt = _codecage.Runtime(n.language, n.sandbox, limits, n.worker_dir)
        self._start()

    @classmethod
    def _adopt(cls, native: Any, n: "_NativeArgs") -> "IsolatedRuntime":
        """An IsolatedRuntime over ``native``, a ``_codecage.Runtime`` that
        a fork server or pool made from ``n`` (its config and language);
        takes ownership of it (closes it if the bootstrap fails)."""
        self = cls.__new__(cls)
        self._rt = None
        self._prepare(n)
        self._rt = native
        self._start()
        return self

    def _prepare(self, n: "_NativeArgs") -> None:
        self.language = n.language
        self.config = n.config
        self._local = threading.local()
        self._tool_exc: Optional[BaseException] = None
        self._out_exc: Optional[BaseException] = None

    def _start(self) -> None:
        """What every new session gets from the config, whoever made its
        worker: redaction, the output handler, the network policy
        (``allow_net``), then the bootstrap."""
        config = self.config
        if config.redact_host_errors:
            self._rt.set_redaction(True)
        if config.value_fallback:
            self._rt.set_value_fallback(True)
        if config.on_output is not None:
            self._rt.set_output_handler(self._output_handler(config.on_output))
        if config.allow_net:
            try:
                self._rt.set_net(config._net_spec())
            except BaseException:
                self.close()
                raise
        if config.bootstrap and not (config.libraries
                                     and _is_web_polyfills(config.bootstrap)):
            try:
                self.eval(config.bootstrap)
            except BaseException:
                self.close()
                raise

    def _output_handler(self, cb: Callable[[str, str], Any]) -> Callable[[int, str], None]:
        """The extension's handler for ``cb``: the first exception ``cb``
        raises stops the eval at once (the worker is stopped, as by
        :meth:`interrupt`) and is kept for :meth:`_finish` to raise; no
        more lines reach ``cb`` in that eval."""
        me = weakref.ref(self)

        def handler(fd: int, line: str) -> None:
            owner = me()
            if owner is None or owner._out_exc is not None:
                return
            try:
                cb("stdout" if fd == 1 else "stderr", line)
            except BaseException as e:
                owner._out_exc = e
                owner._rt.interrupt()

        return handler

    # -- lifecycle --

    def __enter__(self) -> "IsolatedRuntime":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Stop the worker and free the runtime. Idempotent. From inside one
        of the runtime's tools it stops the worker at once; from another
        thread while an eval runs, the runtime closes when that eval ends."""
        if self._rt is not None:
            self._rt.close()

    def interrupt(self) -> None:
        """Stop the worker now, from any thread: an eval running in another
        thread ends at once with ``WorkerCrashed`` ("interrupted by the
        host"). The runtime is dead afterwards; close it."""
        if self._rt is not None:
            self._rt.interrupt()

    @property
    def alive(self) -> bool:
        """Whether the runtime can run more code: False once closed, after
        a crash, an interrupt(), or a timeout or memory error that ended the
        worker (a timeout the engine stopped cleanly leaves it True, with
        the state intact)."""
        return self._rt is not None and self._rt.alive

    @property
    def closed(self) -> bool:
        return self._rt is None or self._rt.closed

    @property
    def sandbox(self) -> Dict[str, Any]:
        """The confinement the worker got: ``mode``, ``applied`` and
        ``missing`` (comma-separated layer names), ``landlock_abi``,
        ``seccomp_allowed`` (allow-list size)."""
        return self._rt.sandbox

    @property
    def dependencies(self) -> Optional[Dict[str, Any]]:
        """What the runtime's ``dependencies`` installed: ``{"key": the
        lock's cache key, "packages": "name==version, ...", "cached": bool,
        "log": str}``; None without any."""
        return self._rt.dependencies if self._rt is not None else None

    @property
    def engine_version(self) -> str:
        """E.g. ``"QuickJS 2025-04-26"`` or ``"CPython 3.11.2"``."""
        return self._rt.engine_version

    @property
    def pid(self) -> Optional[int]:
        """The worker's process id in the host's pid namespace (for a
        forked session, the process running the guest), for monitoring
        memory and CPU from outside; None once it is gone. Signal it only
        through :meth:`interrupt`."""
        return self._rt.pid if self._rt is not None else None

    # -- evaluation --

    def _raw(self, code: str, timeout: Optional[float], calls: Optional[_HostCalls] = None,
             fallback: int = -1) -> tuple:
        if not isinstance(code, str):
            raise TypeError(f"code must be str, not {type(code).__name__}")
        # the upper bound is the library's (cc_runtime_eval); 0 there is
        # the default, which is None here
        if timeout is not None and (isinstance(timeout, bool) or
                                    not isinstance(timeout, (int, float)) or
                                    not 0 < timeout):
            raise InvalidInputError("timeout must be a number of seconds in "
                                    f"(0, {_codecage.MAX_TIMEOUT}]")
        self._local.calls = calls
        self._tool_exc = None
        self._out_exc = None
        try:
            return self._rt.eval(code, float(timeout or 0), fallback)
        finally:
            self._local.calls = None

    def _finish(self, t: tuple) -> EvalResult:
        kind, value, out, err, name, message, tb, duration, value_type, displays = t
        exc, self._tool_exc = self._tool_exc, None
        out_exc, self._out_exc = self._out_exc, None
        if out_exc is not None:
            raise out_exc  # raised by on_output: the eval was stopped for it
        if exc is not None:
            raise exc  # KeyboardInterrupt or SystemExit raised inside a tool
        if kind == "ok":
            deps = self._rt.dependencies
            return EvalResult(value, out, err, duration, value_type, displays,
                              deps["log"] if deps else None)
        e = make(kind, message, name=name, traceback=tb, stdout=out, stderr=err,
                 duration=duration)
        e.displays = displays
        raise e

    def run(self, code: str, *, timeout: Optional[float] = None) -> EvalResult:
        """Like :meth:`eval`, but returns an :class:`EvalResult` with the
        guest's output, displays and duration as well as the value; and a
        last value that cannot cross (``plt.plot(...)``'s list of lines, a
        set, a DataFrame; a JavaScript function or Symbol) is no error:
        ``value`` is its text and ``value_type`` names its type, as the MCP
        server and the CLI give it (:attr:`RuntimeConfig.value_fallback`
        for every eval). Raises as :meth:`eval` otherwise."""
        return self._finish(self._raw(code, timeout, fallback=1))

    def _run_strict(self, code: str, timeout: Optional[float]) -> EvalResult:
        """:meth:`run` with :meth:`eval`'s strict values (AgentSession: its
        journal records how each eval ended)."""
        return self._finish(self._raw(code, timeout))

    def eval(self, code: str, *, timeout: Optional[float] = None) -> Any:
        """Run ``code`` (str) and return the value of its last expression
        (Python, as in the REPL) or its completion value (JavaScript;
        Promises and top-level ``await`` are awaited). ``timeout`` (seconds)
        overrides the config's for this eval. Values follow DESIGN.md
        section 5: None, bool, int, float, str, bytes, list, dict, datetime
        (aware, UTC).

        A last value that cannot cross raises ``GuestError``
        (``TypeError``) here, unless ``RuntimeConfig(value_fallback=True)``;
        :meth:`run` gives its text instead.

        Raises ``GuestError`` (``.name``, ``.message``, ``.traceback``),
        ``GuestSyntaxError``, ``TimeoutError``, ``MemoryLimitError``,
        ``OutputLimitError``, ``ToolBudgetError``, ``WorkerCrashed``,
        ``ProtocolViolation``, ``InvalidInputError`` (code not UTF-8 or over
        ``max_source``, a closed runtime), ``RuntimeBusyError``.
        """
        return self._finish(self._raw(code, timeout)).value

    async def eval_async(self, code: str, *, timeout: Optional[float] = None) -> Any:
        """:meth:`eval` for asyncio: the eval runs on the loop's default
        executor, so the event loop is never blocked. Coroutine host tools
        run on this event loop, concurrently when the guest fans out
        (``Promise.all``, ``asyncio.gather`` over ``atools``). If the
        awaiting task is cancelled (``asyncio.wait_for`` past its time,
        ``task.cancel()``), the worker is stopped at once and the runtime
        closed: the guest is never left running unobserved.
        ``CancelledError`` propagates. However the eval ends (value, error,
        timeout, crash, cancellation), every coroutine tool call it started
        and that is still running is cancelled and awaited before this
        returns, and none starts afterwards; at most ``max_pending_calls``
        run at once."""
        loop = asyncio.get_running_loop()
        calls = _HostCalls(loop)
        fut = loop.run_in_executor(None, self._raw, code, timeout, calls)
        try:
            t = await asyncio.shield(fut)
        except asyncio.CancelledError:
            self.interrupt()
            self.close()
            # The worker is dead: the eval's thread returns at once. Wait
            # for it, so the runtime is really closed when this returns.
            await asyncio.wait([fut])
            await asyncio.shield(calls.end())
            raise
        except BaseException:
            await calls.end()
            raise
        await calls.end()
        return self._finish(t).value

    def set_global(self, name: str, value: Any) -> None:
        """Bind guest global ``name`` (an identifier) to a copy of ``value``.
        Raises ``InvalidInputError`` (bad name, a value that cannot cross),
        ``GuestError`` (the engine cannot hold it), ``WorkerCrashed``."""
        self._rt.set_global(name, value)

    # -- files (between evals) --

    def write_file(self, path: str, data: "bytes | str") -> None:
        """Create or replace the guest file ``path`` (absolute, under scratch
        ``/tmp`` or a writable :class:`Mount`) with ``data`` (``str`` is
        written as UTF-8). Its directory must exist. Not while an eval runs.
        Raises ``InvalidInputError`` (the message names the setting that
        makes a place writable; too large; no space), ``WorkerCrashed``."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        self._rt.write_file(os.fspath(path), bytes(data))

    def read_file(self, path: str, max_bytes: int = 0) -> bytes:
        """The bytes of guest file ``path`` (under scratch or any mount), at
        most ``max_bytes`` (0: ``max_result``). A longer file raises
        ``OutputLimitError``; a missing one ``InvalidInputError``."""
        return self._rt.read_file(os.fspath(path), max_bytes)

    def list_files(self, dir: str = "/tmp") -> list:
        """Every entry under guest directory ``dir``, recursively (symlinks
        not followed): dicts ``{path, size, mtime, dir}`` (``mtime`` in
        seconds since the epoch), at most 10,000."""
        return self._rt.list_files(os.fspath(dir))

    # -- tools --

    def _callback(self, fn: Callable[..., Any]) -> Callable[[list, Optional[dict], Any], None]:
        me = weakref.ref(self)

        def settle(pending: Any, f: "Optional[asyncio.Future[Any]]") -> None:
            if f is None or f.cancelled():
                pending.reject("CancelledError", "the host tool was cancelled")
            elif f.exception() is not None:
                _reject(pending, f.exception())
            else:
                pending.resolve(f.result())

        def callback(args: list, kwargs: Optional[dict], pending: Any) -> None:
            try:
                result = fn(*args, **(kwargs or {}))
                if inspect.isawaitable(result):
                    owner = me()
                    calls = getattr(owner._local, "calls", None) if owner else None
                    if calls is not None and calls.loop.is_running():
                        # eval_async: answer later, from the loop; the
                        # supervisor keeps serving the guest meanwhile.
                        calls.loop.call_soon_threadsafe(calls.start, result,
                                                        lambda f: settle(pending, f))
                        return
                    result = _run_blocking(result)
            except Exception as e:
                _reject(pending, e)
                return
            except BaseException as e:
                _reject(pending, e)
                owner = me()
                if owner is not None:
                    owner._tool_exc = e
                return
            pending.resolve(result)

        return callback

    def bind_function(self, name: str, fn: Callable[..., Any]) -> None:
        """Make ``fn`` callable by the guest as ``name(...)`` (synchronous in
        both languages), ``tools.name(...)`` (JavaScript: a Promise) and, in
        Python, ``atools.name(...)`` (awaitable). ``fn`` gets the guest's
        arguments converted to Python values and runs in the host with host
        authority, on the eval's thread (a coroutine function runs on the
        event loop of ``eval_async``); a Python guest's keyword arguments
        (``lookup(sku="A1")``) reach it as keyword arguments (JavaScript
        passes positional arguments only). Its return value goes back to the
        guest; an exception reaches the guest as an error of the same name
        (``PermissionError``), with ``str(e)`` (or ``e.args[0]``) as message.

        Raises ``InvalidInputError`` (``name`` is not an identifier, or
        called from inside a tool), ``GuestError`` (the name clashes with a
        guest constant), ``TypeError`` (``fn`` is not callable).
        """
        self._bind(name, fn, False)

    def _bind(self, name: str, fn: Callable[..., Any], redact: bool) -> None:
        if not callable(fn):
            raise TypeError("fn must be callable")
        if not isinstance(name, str):
            raise TypeError("name must be str")
        self._rt.bind(name, self._callback(fn))
        # the supervisor decides redaction: on for a redacting bridge's
        # tools, else the runtime's (RuntimeConfig.redact_host_errors)
        self._rt.set_tool_redaction(name, 1 if redact else -1)


# ---- the default runtime ----

# Re-entrant: a tool that calls codecage.eval gets InvalidInputError, not a
# deadlock.
_default_lock = threading.RLock()
_default: Dict[str, Any] = {"isolated": True, "sandbox": "require", "language": "javascript",
                            "config": None, "options": {}, "rt": None, "fork_server": True}


def configure_default_runtime(isolated: bool = True, sandbox: str = "require", *,
                              language: str = "javascript",
                              config: Optional[RuntimeConfig] = None, fork_server: bool = True,
                              **options: Any) -> None:
    """Set up what module-level :func:`eval` uses: a runtime of ``language``
    with ``sandbox``, ``fork_server`` and ``config``/``options`` as for
    :class:`IsolatedRuntime` (so by default it is forked from the
    process-wide fork server). Closes the previous default runtime.
    ``isolated=False`` is refused (``InvalidInputError``): codecage never
    runs guest code in the host process."""
    if not isolated:
        raise InvalidInputError("codecage always runs guest code in an isolated worker; "
                                "isolated=False is not supported")
    if sandbox not in _SANDBOXES:
        raise InvalidInputError(f"sandbox must be 'require', 'auto' or 'off', not {sandbox!r}")
    if not isinstance(fork_server, bool):
        raise TypeError(f"fork_server must be a bool, not {type(fork_server).__name__}")
    with _default_lock:
        old = _default["rt"]
        _default.update(sandbox=sandbox, language=language, config=config, options=options,
                        rt=None, fork_server=fork_server)
    if old is not None:
        old.close()


def eval(code: str, *, timeout: Optional[float] = None) -> Any:  # noqa: A001
    """Run ``code`` in the default runtime (JavaScript, sandbox "require"
    unless :func:`configure_default_runtime` said otherwise), started on
    first use and started again if its worker died (its globals are then
    lost). Thread-safe: evals are serialised. Returns and raises as
    :meth:`IsolatedRuntime.eval`."""
    with _default_lock:
        rt = _default["rt"]
        if rt is None or not rt.alive:
            if rt is not None:
                rt.close()
            rt = IsolatedRuntime(_default["config"], language=_default["language"],
                                 sandbox=_default["sandbox"],
                                 fork_server=_default["fork_server"], **_default["options"])
            _default["rt"] = rt
        try:
            return rt.eval(code, timeout=timeout)
        except GuestSyntaxError as e:
            # the worker's hint says the code looks like the other
            # language; here that language is a call away
            if "the code looks like" in e.message:
                other = "javascript" if _default["language"] == "python" else "python"
                e.message += (f"; codecage.eval's default runtime is {_default['language']}: "
                              f"configure_default_runtime(language={other!r}) switches it")
                e.args = (e.message,)
            raise


def close_fork_servers() -> None:
    """Let go of the process-wide fork servers of the default path
    (``IsolatedRuntime(fork_server=True)``): runtimes forked from them stay
    usable until closed; the next runtime starts a new server (also for
    options whose template had failed to start). Also run at interpreter
    exit. Thread-safe."""
    _codecage.close_shared_fork_servers()


@atexit.register
def _close_default() -> None:
    rt = _default.get("rt")
    if rt is not None:
        rt.close()
    close_fork_servers()


__all__ = ["IsolatedRuntime", "RuntimeConfig", "EvalResult",
           "configure_default_runtime", "close_fork_servers", "eval", "DEFAULT_MAX_MEMORY", "CodecageError",
           "ToolBudgetError"]
