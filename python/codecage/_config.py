"""RuntimeConfig and Mount: what a runtime is given (limits, grants,
start-up code, network, dependencies), checked when it is made. The
runtime itself is in _runtime.py."""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from . import _codecage
from ._deps import DependencyOptions, check_dependencies
from .errors import InvalidInputError

#: The library's default limits (cc_options_init, src/common/defaults.h),
#: under RuntimeConfig's field names: the one source of the defaults.
_DEFAULTS = {lang: _codecage.defaults(lang) for lang in ("javascript", "python")}

#: The default engine heap per language, bytes (the library's: 128 MiB for
#: JavaScript, whose heaps are small, so a runaway allocation ends as
#: ``memory_limit`` well before a short deadline; 512 MiB for Python, as
#: CPython with numpy or pandas needs more).
DEFAULT_MAX_MEMORY = {lang: d["max_memory"] for lang, d in _DEFAULTS.items()}

#: What the guest sees of a failing tool's message when redaction is on
#: (the library's CC_REDACTED_MESSAGE; the supervisor decides redaction).
REDACTED_MESSAGE = _codecage.REDACTED_MESSAGE

_SANDBOXES = ("require", "auto", "off")


class Mount:
    """A file grant: the host directory or file ``host`` appears in the guest
    at ``guest`` (an absolute path such as ``/data``), read-only unless
    ``writable``. Enforced by a bind mount in the worker's mount namespace
    and by Landlock rules for exactly that tree.

    ``Mount()`` opens the host path at once (``O_PATH``) and keeps that
    descriptor: a runtime, fork server or pool started later grants the very
    directory or file it names now, wherever it has moved since, and a path
    swapped for a symlink after ``Mount()`` cannot redirect it; where its
    path no longer leads to it (another directory mounted over it), the
    runtime is refused with ``InvalidInputError``. A host path that does not
    exist raises ``InvalidInputError`` here; a bad guest path raises it when
    the runtime starts, before any worker exists, as do the host paths never
    granted (``/``, and ``/proc``, ``/sys``, ``/dev`` with what they hold,
    also through a symlink or a bind mount). Messages name ``host`` as
    given. On a root host the guest uses the folder as its owner (an
    idmapped mount: no ``chmod`` needed, and what it writes is the owner's);
    where that is not available, a folder ``nobody`` may not use is
    refused at start, naming the cause and the fix."""

    __slots__ = ("host", "guest", "writable", "_fd", "__weakref__")

    def __init__(self, host: "os.PathLike[str] | str", guest: str, writable: bool = False):
        self._fd = -1
        if not isinstance(host, (str, os.PathLike)) or not isinstance(guest, str):
            raise TypeError("Mount(host, guest, writable=False): host is a path, guest a str")
        if not isinstance(writable, bool):
            raise TypeError("Mount.writable must be a bool")
        self.host = os.fspath(host)
        self.guest = guest
        self.writable = writable
        try:
            self._fd = os.open(self.host, os.O_PATH | os.O_CLOEXEC)
        except OSError as e:
            raise InvalidInputError(f"mount {self.host}:{guest}: the host path: "
                                    f"{e.strerror}") from None

    def _native(self) -> tuple:
        # libcodecage resolves this link to where the object is now; its
        # messages name the path as the user gave it
        return (f"/proc/self/fd/{self._fd}", self.guest, self.writable, self.host)

    def __del__(self) -> None:
        if getattr(self, "_fd", -1) >= 0:
            os.close(self._fd)
            self._fd = -1

    def __repr__(self) -> str:
        return f"Mount({self.host!r}, {self.guest!r}, writable={self.writable})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Mount) and
                (self.host, self.guest, self.writable) == (other.host, other.guest, other.writable))

    def __hash__(self) -> int:
        return hash((self.host, self.guest, self.writable))


@dataclasses.dataclass(frozen=True)
class RuntimeConfig:
    """Limits and start-up code of a runtime. All fields are optional.

    - ``timeout``: wall-clock deadline per eval, seconds (float, in (0, 86400],
      the library's ``CC_MAX_TIMEOUT_S``);
      30. Past it the eval raises ``TimeoutError``. The runtime stays alive,
      with its state, when the engine stopped the code; it is dead when the
      code was inside a call that cannot be interrupted (a long C builtin)
      or ignored the stop for the whole ``grace``. ``alive`` tells which.
    - ``max_memory``: engine heap, bytes; ``None`` = 128 MiB for JavaScript,
      512 MiB for Python (``DEFAULT_MAX_MEMORY``); at least 16 MiB.
    - ``bootstrap``: code run once when the runtime starts, in its language
      (``WEB_POLYFILLS`` for JavaScript). A failure closes the runtime and
      raises the bootstrap's error.
    - ``web_polyfills``: JavaScript only: the worker runs ``WEB_POLYFILLS``
      (the same text, built into it) as it starts, before the bootstrap; a
      ``ForkServer``/``SessionPool`` runs them once in its template, so every
      session starts with them; False. True for Python is
      ``InvalidInputError``.
    - ``grace``: seconds between the soft stop and SIGKILL; 0.5. (A Python
      eval stuck in a C call ends sooner: about 5 ms of CPU time after the
      deadline, within about 10 ms on an idle machine.)
    - ``max_stdout``, ``max_stderr``: captured output per eval, bytes; 1 MiB.
    - ``max_result``: encoded result value, bytes; 16 MiB.
    - ``max_source``: code per eval, bytes of UTF-8; 16 MiB.
    - ``cpu_time``: CPU seconds for the whole session; 3600.
    - ``max_open_files``: the worker's file descriptors; 64.
    - ``scratch``: bytes of the session's private, size-capped tmpfs at
      ``/tmp`` (both languages); 0 = none. ``max_file_size`` set alone also
      gives a scratch of that size (older configs).
    - ``max_file_size``: the largest file the guest may write (RLIMIT_FSIZE),
      bytes; 0 = ``scratch``, or 1 GiB with a writable mount and no scratch.
    - ``mounts``: a list of :class:`Mount` grants (host folders or files the
      guest sees, read-only unless ``writable``); empty by default.
    - ``max_pending_calls``: host tool calls of one eval in flight at once
      (coroutine tools under ``eval_async``), counted by the supervisor; 64,
      in [1, 65536]. A call beyond it fails in the guest at once with a
      catchable ``ToolConcurrencyError`` naming this option; it never
      reaches the host nor counts against a budget.
    - ``value_fallback``: a last value that cannot be converted (a set, a
      ``date``, a ``Decimal``, a pandas DataFrame; a JavaScript function
      or Symbol) comes back as its text form (``repr``; JavaScript's
      console form) with :attr:`EvalResult.value_type` naming its type,
      instead of raising ``GuestError`` (``TypeError``), also from
      ``eval`` and ``eval_async``; False: those stay strict, as DESIGN.md
      says (``run`` always gives the text). A value over ``max_result``
      still fails.
    - ``redact_host_errors``: a failing tool's message never reaches the
      guest, only its name; False.
    - ``on_output``: ``fn(stream, line)`` called with ``"stdout"`` or
      ``"stderr"`` and each line of guest output as it arrives (on the
      eval's thread), while the eval runs: a line is sent at its newline
      or at an explicit flush, within about 20 ms; None. An exception it raises stops the eval at once
      and reaches the caller of ``eval``/``run``/``eval_async`` as is; the
      worker is stopped for it (as by ``interrupt()``), so the runtime is
      dead afterwards.
    - ``worker_dir``: directory holding ``codecage-worker-js``/``-py``;
      None = ``$CODECAGE_WORKER_DIR`` or the package's ``_bin``.
    - ``libraries``: JavaScript browser bundles loaded, in order, before
      the runtime is ready (a fork server's template loads them once for
      all its sessions): each a ``.js`` file, a package directory, or a
      package name found in ``node_modules``. A package resolves to its
      browser global bundle through ``package.json`` (``unpkg``,
      ``jsdelivr``, or a ``browser`` string naming a UMD/IIFE script),
      else ``InvalidInputError`` asks for the file. Each runs as a classic
      script in the global scope, its completion value ignored; a load
      error (``GuestError``, ``GuestSyntaxError``...) names the library and
      file. The host reads the files (each at most ``max_source`` bytes);
      the worker never opens them. The built-in polyfills
      (``web_polyfills=True``, also turned on by ``bootstrap=WEB_POLYFILLS``
      when libraries are given) run first. ``()``.
    - ``node_modules``: the directory package names in ``libraries`` are
      looked up in; None.
    - ``allow_net``: hosts the guest may reach, brokered by the host (README,
      "Network"): ``HOST``, ``HOST:PORT``, ``*.DOMAIN[:PORT]``,
      ``https://HOST[:PORT]``; empty (the default) = no network. With
      entries, JavaScript gets ``fetch`` and Python's ``urllib.request`` and
      ``requests`` work. A malformed entry is ``InvalidInputError`` here.
    - ``net_max_requests``: requests per eval; 100.
    - ``net_max_response_bytes``: one response body, decompressed, bytes;
      4 MiB (cut there, with an error). ``net_max_total_bytes``: responses
      of one eval, bytes; 16 MiB. ``net_max_body_bytes``: one request body,
      bytes; 1 MiB. ``net_timeout``: one request, seconds; 30 (never past
      the eval's deadline).
    - ``ca_file``: PEM CA bundle for https; None = the system store.
    - ``on_request``: ``fn(request)`` called on a broker thread before each
      request and redirect hop goes, with a dict (method, url, host, port,
      address); return None to let it go, a dict of headers to add (an API
      key the guest never sees), or False or raise to refuse it (the
      exception's text is the reason the guest sees).
    - ``on_response``: ``fn(info)`` for audit, after each request: a dict
      (method, url, status, bytes, ms, error).
    - ``net_credential_headers``: more header names (beside Authorization,
      Proxy-Authorization, Cookie, X-Api-Key, Api-Key, X-Auth-Token and any
      name holding auth, token, secret, key, session, password, credential
      or cookie) that the broker drops from the guest's request when a
      redirect leads to another origin; ``()``.
    - ``net_test_resolve``: TEST ONLY: ``{name: address}`` answering the
      broker's name lookups instead of the system resolver.
    - ``python_path``: Python only: host folders of packages the guest may
      import (a ``pip install --target DIR``, a Python 3.11 venv's
      site-packages), at most 8; each is mounted read-only at
      ``/codecage/python-path/N`` and put on ``sys.path`` after the
      standard library, before Debian's dist-packages (``.pth`` files are
      not run); ``()`` = none.
    - ``dependencies``: packages the host installs before the runtime
      starts (README "Dependencies"): pip specs for Python
      (``["polars==1.*", "openpyxl"]``, wheels only, what Debian has taken
      from there), npm specs for JavaScript (``["vega-lite@5"]``, loaded
      as browser globals, no install script run); cached by lock hash and
      granted read-only (a Python runtime's takes one ``python_path``
      place). A failure is ``InvalidInputError`` naming the package and
      pip's or npm's reason. ``deps``: a :class:`DependencyOptions` (cache,
      size caps, timeout, allow/deny lists, index, lock file); None = the
      defaults. :attr:`EvalResult.install_log` says what was installed.
      not run); never the same folder as a writable mount, nor inside or
      around one (``InvalidInputError`` naming both); ``()`` = none.

    Wrong types raise ``TypeError``; out-of-range values raise
    ``InvalidInputError`` (here, or when the runtime starts).
    """

    # the library's defaults (the same for both languages but max_memory)
    timeout: float = _DEFAULTS["javascript"]["timeout"]
    max_memory: Optional[int] = None
    bootstrap: Optional[str] = None
    grace: float = _DEFAULTS["javascript"]["grace"]
    max_stdout: int = _DEFAULTS["javascript"]["max_stdout"]
    max_stderr: int = _DEFAULTS["javascript"]["max_stderr"]
    max_result: int = _DEFAULTS["javascript"]["max_result"]
    max_source: int = _DEFAULTS["javascript"]["max_source"]
    cpu_time: int = _DEFAULTS["javascript"]["cpu_time"]
    max_open_files: int = _DEFAULTS["javascript"]["max_open_files"]
    max_file_size: int = _DEFAULTS["javascript"]["max_file_size"]
    max_pending_calls: int = _DEFAULTS["javascript"]["max_pending_calls"]
    scratch: int = _DEFAULTS["javascript"]["scratch"]
    mounts: Sequence["Mount"] = ()
    redact_host_errors: bool = False
    value_fallback: bool = False
    on_output: Optional[Callable[[str, str], Any]] = None
    worker_dir: Optional[str] = None
    libraries: Sequence[Union[str, "os.PathLike[str]"]] = ()
    node_modules: Optional[Union[str, "os.PathLike[str]"]] = None
    web_polyfills: bool = False
    python_path: Sequence[str] = ()
    allow_net: Sequence[str] = ()
    net_max_requests: int = _DEFAULTS["javascript"]["net_max_requests"]
    net_max_response_bytes: int = _DEFAULTS["javascript"]["net_max_response_bytes"]
    net_max_total_bytes: int = _DEFAULTS["javascript"]["net_max_total_bytes"]
    net_max_body_bytes: int = _DEFAULTS["javascript"]["net_max_body_bytes"]
    net_timeout: float = _DEFAULTS["javascript"]["net_timeout"]
    ca_file: Optional[str] = None
    on_request: Optional[Callable[[dict], Any]] = None
    on_response: Optional[Callable[[dict], Any]] = None
    net_test_resolve: Optional[Mapping[str, str]] = None
    dependencies: Sequence[str] = ()
    deps: Optional[DependencyOptions] = None
    net_credential_headers: Sequence[str] = ()

    def _net_spec(self) -> dict:
        """The extension's network spec (``_codecage.Runtime.set_net``)."""
        return {
            "allow_net": list(self.allow_net),
            "max_requests": self.net_max_requests,
            "max_response_bytes": self.net_max_response_bytes,
            "max_total_bytes": self.net_max_total_bytes,
            "max_body_bytes": self.net_max_body_bytes,
            "timeout": float(self.net_timeout),
            "ca_file": os.fspath(self.ca_file) if self.ca_file is not None else None,
            "test_resolve": [f"{k}={v}" for k, v in (self.net_test_resolve or {}).items()],
            "on_request": self.on_request,
            "on_response": self.on_response,
            "credential_headers": list(self.net_credential_headers),
        }

    def __post_init__(self) -> None:
        for f in ("timeout", "grace"):
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise TypeError(f"RuntimeConfig.{f} must be a number of seconds, "
                                f"not {type(v).__name__}")
        try:  # the ranges are the library's (cc_options_check)
            _codecage.check_limits({"timeout": self.timeout, "grace": self.grace})
        except InvalidInputError as e:
            raise InvalidInputError(f"RuntimeConfig.{e}") from None
        for f in ("max_memory", "max_stdout", "max_stderr", "max_result", "max_source",
                  "cpu_time", "max_open_files", "max_file_size", "max_pending_calls", "scratch"):
            v = getattr(self, f)
            if v is None and f == "max_memory":
                continue
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"RuntimeConfig.{f} must be an int, not {type(v).__name__}")
            if v < 0:
                raise InvalidInputError(f"RuntimeConfig.{f} must not be negative")
        if not isinstance(self.web_polyfills, bool):
            raise TypeError("RuntimeConfig.web_polyfills must be a bool")
        if isinstance(self.mounts, (str, bytes, Mount)) or not all(
                isinstance(m, Mount) for m in self.mounts):
            raise TypeError("RuntimeConfig.mounts must be a list of codecage.Mount")
        object.__setattr__(self, "mounts", tuple(self.mounts))
        if self.bootstrap is not None and not isinstance(self.bootstrap, str):
            raise TypeError("RuntimeConfig.bootstrap must be source text (str)")
        if not isinstance(self.value_fallback, bool):
            raise TypeError("RuntimeConfig.value_fallback must be True or False")
        if self.on_output is not None and not callable(self.on_output):
            raise TypeError("RuntimeConfig.on_output must be callable")
        if self.worker_dir is not None and not isinstance(self.worker_dir, (str, os.PathLike)):
            raise TypeError("RuntimeConfig.worker_dir must be a path")
        if isinstance(self.libraries, (str, os.PathLike)) or not isinstance(
                self.libraries, Sequence) or not all(
                    isinstance(x, (str, os.PathLike)) for x in self.libraries):
            raise TypeError("RuntimeConfig.libraries must be a list of paths or package "
                            "names, e.g. ['vega', 'vega-lite'] or ['dist/x.min.js']")
        if self.node_modules is not None and not isinstance(self.node_modules,
                                                            (str, os.PathLike)):
            raise TypeError("RuntimeConfig.node_modules must be a path")
        if isinstance(self.allow_net, (str, bytes)) or not all(
                isinstance(e, str) for e in self.allow_net):
            raise TypeError("RuntimeConfig.allow_net must be a list of str entries "
                            "(HOST, HOST:PORT, *.DOMAIN[:PORT], https://HOST[:PORT])")
        if isinstance(self.net_credential_headers, (str, bytes)) or not all(
                isinstance(e, str) for e in self.net_credential_headers):
            raise TypeError("RuntimeConfig.net_credential_headers must be a list of header "
                            "names")
        for f in ("on_request", "on_response"):
            if getattr(self, f) is not None and not callable(getattr(self, f)):
                raise TypeError(f"RuntimeConfig.{f} must be callable")
        if self.allow_net:
            try:
                _codecage.check_net(self._net_spec())
            except InvalidInputError as e:
                raise InvalidInputError(f"RuntimeConfig: {e}") from None
        if isinstance(self.python_path, (str, bytes, os.PathLike)) or not all(
                isinstance(p, (str, os.PathLike)) for p in self.python_path):
            raise TypeError("RuntimeConfig.python_path must be a list of folder paths")
        object.__setattr__(self, "python_path",
                           tuple(os.fspath(p) for p in self.python_path))
        object.__setattr__(self, "dependencies", check_dependencies(self.dependencies,
                                                                    self.deps))
