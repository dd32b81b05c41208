"""ForkServer and SessionPool: sessions in about a millisecond.

Thin wrappers over ``codecage._codecage.ForkServer`` and ``.Pool``
(src/python/module.c), which drive libcodecage's ``cc_forkserver_*`` and
``cc_pool_*``. Every session they hand out is an ordinary
:class:`IsolatedRuntime` with the config it was made from.
"""

from __future__ import annotations

import asyncio
import warnings
from typing import Any, Dict, Optional, Sequence, Union

from . import _codecage
from ._runtime import IsolatedRuntime, RuntimeConfig, _native_args, _NativeArgs
from .errors import InvalidInputError

Preload = Union[None, str, Sequence[str]]

#: ``max_sessions`` when not given, and the most it may be (libcodecage's
#: CC_FORK_MAX_SESSIONS_DEFAULT and CC_FORK_MAX_SESSIONS_LIMIT).
MAX_SESSIONS_DEFAULT = 1024
MAX_SESSIONS_LIMIT = 4096


def _max_sessions_arg(max_sessions: Optional[int]) -> int:
    """``max_sessions`` checked, and this process's soft RLIMIT_NOFILE
    raised (never past its hard limit) to what that many sessions hold in
    the host: three descriptors each (socket, pidfd, status pipe), a fourth
    with asynchronous tools or a network policy, plus room for the rest of
    the program. Returns the value to pass on."""
    if max_sessions is None:
        max_sessions = MAX_SESSIONS_DEFAULT
    if isinstance(max_sessions, bool) or not isinstance(max_sessions, int):
        raise TypeError(f"max_sessions must be an int, not {type(max_sessions).__name__}")
    if not 1 <= max_sessions <= MAX_SESSIONS_LIMIT:
        raise InvalidInputError(f"max_sessions is {max_sessions}; it must be between 1 and "
                                f"{MAX_SESSIONS_LIMIT} sessions per fork server (start more "
                                "fork servers for more)")
    try:
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = 4 * max_sessions + 256
        if soft != resource.RLIM_INFINITY and soft < want:
            new = want if hard == resource.RLIM_INFINITY else min(want, hard)
            if new > soft:
                resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    except (ImportError, OSError, ValueError):
        pass  # the session past the limit says so (SandboxUnavailable naming it)
    return max_sessions


def _preload_arg(preload: Preload, language: str) -> Optional[str]:
    """``preload`` as libcodecage takes it: None (the default list) or
    comma-separated module names, a trailing ``?`` marking one that may be
    missing."""
    if preload is None:
        return None
    if isinstance(preload, str):
        names = [p.strip() for p in preload.split(",")] if preload.strip() else []
    elif isinstance(preload, Sequence) and all(isinstance(p, str) for p in preload):
        names = [p.strip() for p in preload]
    else:
        raise TypeError("preload must be None, a str of comma-separated module names, or a "
                        "sequence of module names (str)")
    for name in names:
        if not name.rstrip("?").replace(".", "_").isidentifier() or not name.isascii():
            raise InvalidInputError(f"preload names {name!r}, which is not a module name "
                                    "(a dotted ASCII name, optionally ending in '?')")
    if names and language != "python":
        raise InvalidInputError("preload imports Python modules; a JavaScript fork server "
                                "or pool takes none (leave it None)")
    return ",".join(names)


class ForkServer:
    """A confined, initialised template worker that forks sessions.

    ``ForkServer(config=None, *, language="javascript", sandbox="require",
    preload=None, **options)`` takes ``config``, ``language``, ``sandbox``
    and ``options`` as :class:`IsolatedRuntime` does; every session gets
    that config. ``preload`` (Python only): the modules the template imports
    once, so that sessions start with them loaded; a str of comma-separated
    names or a sequence of names, a trailing ``?`` marking a module that
    may be missing (``"numpy?"``); None = json, re, math, datetime,
    collections, itertools, functools, numpy? and pandas?; ``""`` = none.
    ``"matplotlib"`` imports ``matplotlib.pyplot`` (Agg) too. An optional
    module that does not import is dropped with a ``RuntimeWarning`` that
    says why; :attr:`preload_skipped` lists them.

    Starting it takes as long as starting a runtime plus the imports; each
    :meth:`session` then costs a ``fork()`` plus the session's own Landlock
    domain and seccomp filter. Sessions share no writable state with each
    other or the template (random generators are reseeded per session);
    they share the template's address-space layout and Python's hash
    secret (SECURITY.md).

    Raises what :class:`IsolatedRuntime` raises at start
    (``SandboxUnavailable`` ...), ``InvalidInputError`` for bad mounts and
    for a preload module that fails to import (the message names it),
    ``TypeError`` for wrong types. Each session gets its own scratch
    (``scratch``/``max_file_size``: a private tmpfs on ``/tmp`` that no
    other session sees) and the server's ``mounts``.

    ``max_sessions`` (int, 1..4096; None = 1024): the most sessions it
    holds open at once; every quota the template and its sessions share
    (processes and threads, queued signals and timers, the template's
    descriptors) is sized for it (SECURITY.md, "Density"). A
    :meth:`session` past it raises ``SandboxUnavailable`` at once, naming
    ``max_sessions``; the open sessions are unaffected, and closing one
    makes room. Each open session holds three descriptors in this process,
    so the constructor raises the process's soft ``RLIMIT_NOFILE`` (never
    past the hard limit) to ``4 * max_sessions + 256`` when it is lower.

    Thread-safe: any thread may call :meth:`session`; the GIL is released
    while it forks. Use it as a context manager.
    """

    def __init__(self, config: Optional[RuntimeConfig] = None, *, language: str = "javascript",
                 sandbox: str = "require", preload: Preload = None,
                 max_sessions: Optional[int] = None, **options: Any) -> None:
        self._fs = None
        n = _native_args(config, language, sandbox, options)
        self._args: _NativeArgs = n
        self.language = n.language
        self.config = n.config
        #: The most sessions open at once (``max_sessions``).
        self.max_sessions = _max_sessions_arg(max_sessions)
        self._fs = _codecage.ForkServer(n.language, n.sandbox, n.limits, n.worker_dir,
                                        _preload_arg(preload, n.language), self.max_sessions)
        self._sandbox = self._fs.sandbox
        #: The optional preload modules the template dropped, each
        #: ``"name: Type: message"`` (``()`` when none).
        self.preload_skipped: tuple = self._fs.preload_skipped
        for why in self.preload_skipped:
            warnings.warn("ForkServer: optional preload module dropped: %s" % why,
                          RuntimeWarning, stacklevel=2)

    def session(self) -> IsolatedRuntime:
        """A new session forked from the template: an :class:`IsolatedRuntime`
        owned by the caller (close it, or use it as a context manager), with
        this server's config (its bootstrap runs now, in the session). It
        stays usable after the fork server is closed.

        Raises ``InvalidInputError`` (the server is closed),
        ``WorkerCrashed`` (the template is gone: start a new ForkServer),
        ``SandboxUnavailable`` (the session could not add its layers, or
        the server is full: its ``max_sessions`` open sessions, or the
        processes and threads (RLIMIT_NPROC) or queued signals and timers
        (RLIMIT_SIGPENDING) all its sessions share, or this process's
        descriptors, named in the message; refused at once: close sessions,
        raise ``max_sessions`` or start another ForkServer), ``TimeoutError``,
        ``ProtocolViolation``, ``InternalError``, or the bootstrap's error.
        """
        if self._fs is None:
            raise InvalidInputError("this fork server is closed")
        return IsolatedRuntime._adopt(self._fs.spawn(), self._args)

    @property
    def sandbox(self) -> Dict[str, Any]:
        """The template's confinement (what every session has, plus its own
        Landlock domain and seccomp filter): ``mode``, ``applied``,
        ``missing``, ``landlock_abi``, ``seccomp_allowed``."""
        return dict(self._sandbox)

    @property
    def closed(self) -> bool:
        return self._fs is None or self._fs.closed

    def close(self) -> None:
        """Let go of the template. Idempotent. Sessions still open keep it
        alive (and stay usable) until the last of them is closed; new
        :meth:`session` calls raise ``InvalidInputError``."""
        if self._fs is not None:
            self._fs.close()

    def __enter__(self) -> "ForkServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class SessionPool:
    """Up to ``size`` ready sessions, kept full by a thread of the pool's own.

    ``SessionPool(config=None, *, language="javascript", sandbox="require",
    size=4, fork_server=True, preload=None, max_sessions=None,
    **options)``: ``config``,
    ``language``, ``sandbox`` and ``options`` as for
    :class:`IsolatedRuntime`; ``size`` (int, 1..1024) sessions are kept
    ready; with ``fork_server`` they are forked from a :class:`ForkServer`
    template (``preload`` as there), else each is a freshly started
    worker; either way each has its own scratch when ``scratch`` is set.
    Before a session is offered, the pool warms it
    up (one throwaway eval of a constant), so the first real eval does not
    pay the new process's page faults.

    A session is single-use: :meth:`checkout` hands it to the caller, who
    owns it and closes it; it never comes back to the pool, and the pool
    makes a fresh one instead. So no state (globals, imports, files, tools)
    ever crosses from one user to the next.

    With ``fork_server``, ``max_sessions`` is its fork server's (as for
    :class:`ForkServer`): the ready sessions and the checked-out ones still
    open count against it, and past it :meth:`checkout` raises the
    filler's ``SandboxUnavailable`` naming ``max_sessions`` at once, until
    a session is closed.

    Raises as :class:`ForkServer` (the fork server starts here, so a host
    that cannot confine says so now), ``InvalidInputError`` for ``size``
    out of range (or over ``max_sessions``), ``TypeError`` for wrong types. Thread-safe; the GIL is
    released while it starts, checks out and closes. Use it as a context
    manager.
    """

    def __init__(self, config: Optional[RuntimeConfig] = None, *, language: str = "javascript",
                 sandbox: str = "require", size: int = 4, fork_server: bool = True,
                 preload: Preload = None, max_sessions: Optional[int] = None,
                 **options: Any) -> None:
        self._pool = None
        if isinstance(size, bool) or not isinstance(size, int):
            raise TypeError(f"size must be an int, not {type(size).__name__}")
        if not 1 <= size <= 1024:
            raise InvalidInputError(f"pool size is {size}; it must be between 1 and 1024 "
                                    "sessions")
        if not isinstance(fork_server, bool):
            raise TypeError(f"fork_server must be a bool, not {type(fork_server).__name__}")
        n = _native_args(config, language, sandbox, options)
        self._args: _NativeArgs = n
        self.language = n.language
        self.config = n.config
        self.size = size
        self.fork_server = fork_server
        #: The fork server's ``max_sessions`` (with ``fork_server``).
        self.max_sessions = _max_sessions_arg(max_sessions)
        self._pool = _codecage.Pool(n.language, n.sandbox, n.limits, n.worker_dir,
                                    size, fork_server,
                                    _preload_arg(preload, n.language), self.max_sessions)

    def checkout(self, timeout: float = 5.0) -> IsolatedRuntime:
        """Take a ready session, waiting up to ``timeout`` seconds (a number
        in [0, 86400]; 0: only if one is ready now) for the pool's thread to
        make one. Returns an :class:`IsolatedRuntime` owned by the caller:
        close it when done (or use it as a context manager); it never
        returns to the pool, and it stays usable after the pool is closed.
        The config's bootstrap, if any, runs now, in the session. A session
        that died while waiting in the pool is never handed out.

        Raises ``codecage.TimeoutError`` (no session became ready in time:
        raise the timeout or the pool size), ``InvalidInputError`` (the pool
        is closed, or ``timeout`` out of range), ``TypeError`` (``timeout``
        not a number), or the error of the pool's thread when it cannot
        make sessions at all (``SandboxUnavailable``, ``WorkerCrashed`` ...),
        or the bootstrap's error.
        """
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise TypeError(f"timeout must be a number of seconds, not {type(timeout).__name__}")
        if self._pool is None:
            raise InvalidInputError("this session pool is closed")
        return IsolatedRuntime._adopt(self._pool.checkout(float(timeout)), self._args)

    async def checkout_async(self, timeout: float = 5.0) -> IsolatedRuntime:
        """:meth:`checkout` for asyncio: it waits in a worker thread
        (``asyncio.to_thread``), so the event loop is never blocked. If the
        awaiting task is cancelled, a session that arrives afterwards is
        closed. Raises as :meth:`checkout`."""
        fut = asyncio.ensure_future(asyncio.to_thread(self.checkout, timeout))
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            def drop(f: "asyncio.Future[IsolatedRuntime]") -> None:
                if not f.cancelled() and f.exception() is None:
                    f.result().close()
            fut.add_done_callback(drop)
            raise

    @property
    def ready(self) -> int:
        """Sessions ready to check out right now (0 once closed)."""
        return self._pool.ready if self._pool is not None else 0

    @property
    def closed(self) -> bool:
        return self._pool is None or self._pool.closed

    def close(self) -> None:
        """Stop the pool's thread and close the sessions it holds ready.
        Idempotent. Sessions already checked out stay usable until their own
        close; new :meth:`checkout` calls raise ``InvalidInputError``. A
        checkout waiting in another thread finishes first (within its
        timeout)."""
        if self._pool is not None:
            self._pool.close()

    def __enter__(self) -> "SessionPool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> "SessionPool":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await asyncio.to_thread(self.close)


__all__ = ["ForkServer", "SessionPool"]
