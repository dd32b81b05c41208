"""codecage's exceptions: one class per error kind of DESIGN.md section 6.

Every exception the package raises for a sandbox outcome derives from
:class:`CodecageError`, whose ``kind`` is the kind's wire name
(``"guest_error"``, ``"timeout"`` ...). Errors that come from an eval also
carry what the guest printed before it failed (``stdout``, ``stderr``) and
the eval's wall-clock ``duration`` in seconds.

=====================  ======================  ==========================
kind                   class                   runtime usable after?
=====================  ======================  ==========================
guest_error            GuestError              yes
syntax_error           GuestSyntaxError        yes (a GuestError)
timeout                TimeoutError            yes, with its state, when
                                               the engine stopped the code
                                               (the soft stop); no when
                                               the stop found it inside a
                                               call that cannot be
                                               interrupted: check ``alive``
memory_limit           MemoryLimitError        no, unless the engine
                                               stopped cleanly
output_limit           OutputLimitError        yes
tool_budget            ToolBudgetError         yes
worker_crashed         WorkerCrashed           no
protocol_violation     ProtocolViolation       no
sandbox_unavailable    SandboxUnavailable      no
invalid_input          InvalidInputError       yes (also a ValueError)
internal               InternalError           no
=====================  ======================  ==========================

One more class is the package's own, not a kind of the library's:
:class:`UpstreamError` (code mode from Python, ``mcp_tools``), whose
``kind`` is ``invalid_input``: the host's MCP server failed, not the
sandbox.

``codecage.TimeoutError`` also derives from the builtin ``TimeoutError``,
so ``except TimeoutError`` around ``asyncio`` code catches it too; it is
left out of ``__all__`` so that ``from codecage import *`` never shadows
the builtin.
"""

from __future__ import annotations

import builtins
from typing import Dict, Optional, Type

__all__ = [
    "CodecageError",
    "ReplayDivergenceError",
    "GuestError",
    "GuestSyntaxError",
    "EvalTimeoutError",
    "MemoryLimitError",
    "OutputLimitError",
    "ToolBudgetError",
    "JournalFullError",
    "WorkerCrashed",
    "ProtocolViolation",
    "SandboxUnavailable",
    "InvalidInputError",
    "RuntimeBusyError",
    "InternalError",
    "UpstreamError",
]


class CodecageError(Exception):
    """Base of every codecage error.

    Attributes: ``kind`` (str, the DESIGN.md section 6 name), ``message``
    (str, what happened and what to do), ``name`` (str, the error's type
    name as the engine or supervisor gave it, e.g. ``"InternalError"`` for
    QuickJS's out-of-memory; ``""`` when none), ``traceback`` (str, guest
    frames; ``""`` when none), ``stdout`` and ``stderr`` (str, guest output
    of the failed eval; ``""`` outside evals), ``duration`` (float seconds
    of that eval; ``0.0`` outside evals), ``displays`` (the MIME bundles the
    eval made before it failed, as ``EvalResult.displays``; ``()`` when
    none).
    """

    kind = "internal"
    displays: tuple = ()

    def __init__(self, message: str = "", *, name: str = "", traceback: str = "",
                 stdout: str = "", stderr: str = "", duration: float = 0.0) -> None:
        super().__init__(message)
        self.message = message
        self.name = name
        self.traceback = traceback
        self.stdout = stdout
        self.stderr = stderr
        self.duration = duration

    def __str__(self) -> str:
        return self.message


class GuestError(CodecageError):
    """The guest raised (Python) or threw (JavaScript) and did not catch it.

    ``name`` is the guest exception's type (``"ZeroDivisionError"``,
    ``"TypeError"``, a host tool's error name such as ``"PermissionError"``),
    ``message`` its message, ``traceback`` the guest frames only (str; may be
    empty). The runtime stays usable.
    """

    kind = "guest_error"

    def __init__(self, message: str = "", *, name: str = "Error", **kw) -> None:
        super().__init__(message, name=name, **kw)

    def __str__(self) -> str:
        return f"{self.name}: {self.message}" if self.message else self.name


class GuestSyntaxError(GuestError):
    """The code did not parse (kind ``syntax_error``). The runtime stays usable."""

    kind = "syntax_error"


class TimeoutError(CodecageError, builtins.TimeoutError):  # noqa: A001 (deliberate)
    """The eval passed its deadline (``timeout`` seconds). What is left
    depends on where the stop found the code, and the message says which:

    - running guest code (bytecode, a sleep, a wait): the engine stopped it
      and the runtime stays alive, with its state;
    - inside a call that cannot be interrupted (a long C builtin such as
      ``sum(range(10**12))``), or ignoring the stop until the ``grace``
      ran out: the worker was ended and the runtime is dead.

    ``rt.alive`` tells the two apart. Also a builtin ``TimeoutError``."""

    kind = "timeout"


EvalTimeoutError = TimeoutError


class MemoryLimitError(CodecageError):
    """The guest hit ``max_memory``. The runtime is usable only when the
    engine stopped cleanly: check ``alive``."""

    kind = "memory_limit"


class OutputLimitError(CodecageError):
    """stdout/stderr or the result value went over its cap. The runtime stays
    usable."""

    kind = "output_limit"


class ToolBudgetError(CodecageError):
    """A tool call over budget that the guest did not catch. The call never
    reached the host. The runtime stays usable."""

    kind = "tool_budget"


class JournalFullError(ToolBudgetError):
    """An :class:`AgentSession`'s journal is at its cap
    (``max_journal_calls`` tool calls, or ``max_journal_bytes`` bytes of
    :meth:`AgentSession.dump`), so a tool call was refused: it never
    reached the host (or its result did not fit: the tool ran, the guest
    got this error instead). The guest sees a catchable
    ``JournalFullError`` whose message names the cap and the option that
    raises it; one it does not catch ends the eval as this (kind
    ``tool_budget``, also a :class:`ToolBudgetError`), and
    :meth:`AgentSession.run` raises it too when an eval's code does not
    fit. Everything journaled before stays; the session stays usable."""


class WorkerCrashed(CodecageError):
    """The worker died (signal, seccomp kill, out of memory) or was stopped.
    The runtime is unusable: create a new one."""

    kind = "worker_crashed"


class ProtocolViolation(CodecageError):
    """The worker sent an invalid frame and was killed. The runtime is
    unusable."""

    kind = "protocol_violation"


class SandboxUnavailable(CodecageError):
    """``sandbox="require"`` could not be met; the message names the missing
    confinement layers (``codecage doctor`` shows them)."""

    kind = "sandbox_unavailable"


class InvalidInputError(CodecageError, ValueError):
    """The caller's request or configuration is invalid (bad option, code
    that is not UTF-8, a value that cannot cross, a closed runtime, a tool
    calling back into its own runtime). Also a ``ValueError``."""

    kind = "invalid_input"


class ReplayDivergenceError(InvalidInputError):
    """Replaying an agent session's journal (``AgentSession.load``), the
    guest code asked for a different tool call than the journal recorded
    (another tool, other arguments, more or fewer calls) or ended
    differently: the code is not deterministic, so the session cannot be
    rebuilt. Kind ``invalid_input``."""


class RuntimeBusyError(InvalidInputError):
    """The runtime is already running a request in another thread: a
    runtime serves one thread at a time."""


class InternalError(CodecageError):
    """A bug in codecage, or its installation is broken (a missing worker
    executable)."""

    kind = "internal"


class UpstreamError(CodecageError):
    """An MCP server of code mode (:func:`codecage.mcp_tools`) failed: it
    could not be started or reached, exited, refused a request, did not
    answer within the bridge's ``timeout``, or answered with something
    that is not MCP. :func:`codecage.mcp_tools` raises it in the host;
    during an eval, a call to one of the server's tools fails in the guest
    with a catchable error of this name (the message is this one's), and
    one the guest does not catch ends the eval as a :class:`GuestError`
    whose ``name`` is ``"UpstreamError"``, as ``codecage mcp --upstream``'s
    guests see it. The server's process is started again on the next
    call. Kind ``invalid_input`` (the host's server, not the sandbox); not
    a ``ValueError``, so that a guest's ``except ValueError`` does not
    catch it."""

    kind = "invalid_input"


KIND_CLASSES: Dict[str, Type[CodecageError]] = {
    cls.kind: cls
    for cls in (GuestError, GuestSyntaxError, TimeoutError, MemoryLimitError,
                OutputLimitError, ToolBudgetError, WorkerCrashed, ProtocolViolation,
                SandboxUnavailable, InvalidInputError, InternalError)
}


# The C library's messages end by naming the cc_limits field that changes
# the limit (CC_TIMEOUT_HINT, CC_MEMORY_HINT in codecage.h); the package
# names its own option instead.
_HINTS = (
    ("raise cc_limits.timeout_s (or cc_runtime_eval's timeout_s)",
     "raise RuntimeConfig(timeout=SECONDS) (or eval(code, timeout=SECONDS))"),
    ("raise cc_limits.max_memory", "raise RuntimeConfig(max_memory=BYTES)"),
    ("raise cc_tool_call_hold's approval_timeout_s",
     "raise AgentSession(approval_timeout=SECONDS)"),
    ("raise cc_limits.max_result", "raise RuntimeConfig(max_result=BYTES)"),
)


def make(kind: str, message: str, detail: Optional[str] = None, *, name: str = "",
         traceback: str = "", stdout: str = "", stderr: str = "",
         duration: float = 0.0) -> CodecageError:
    """The exception for an error ``kind`` (the extension calls this)."""
    for lib, ours in _HINTS:
        message = message.replace(lib, ours)
    if detail == "busy":
        return RuntimeBusyError(message)
    cls = KIND_CLASSES.get(kind, InternalError)
    if issubclass(cls, GuestError) and not name:
        name = "SyntaxError" if kind == "syntax_error" else "Error"
    return cls(message, name=name, traceback=traceback, stdout=stdout, stderr=stderr,
               duration=duration)
