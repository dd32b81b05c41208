"""codecage: run the Python and JavaScript that AI agents write in a
confined worker process, from Python.

>>> from codecage import IsolatedRuntime
>>> with IsolatedRuntime() as rt:
...     rt.eval("[1, 2].map(x => x * 21)")
[21, 42]

The package is a thin layer over libcodecage (the C supervisor): the
extension ``codecage._codecage`` drives it, and the worker executables ship
in ``codecage/_bin`` (``$CODECAGE_WORKER_DIR`` overrides). See
``IsolatedRuntime``, ``RuntimeConfig``, ``ToolBridge``, ``ForkServer`` and
``SessionPool`` (sessions in about a millisecond), ``mcp_tools`` (an MCP
server's tools as a ToolBridge), ``AgentSession`` (tools
that wait for approval, pause and resume, a signed journal), ``WEB_POLYFILLS``
and ``codecage.errors``.
"""

from . import errors
from ._agent import AgentSession, SessionResult, Tool, ToolCall
from ._mcp import McpToolBridge, mcp_tools
from ._polyfills import WEB_POLYFILLS, Bootstrap
from ._pool import ForkServer, SessionPool
from ._bridge import ToolBridge
from ._deps import DependencyOptions, script_dependencies
from ._runtime import (DEFAULT_MAX_MEMORY, EvalResult, IsolatedRuntime, Mount, RuntimeConfig,
                       close_fork_servers, configure_default_runtime, eval)
from .errors import (CodecageError, EvalTimeoutError, GuestError, GuestSyntaxError,
                     InternalError, InvalidInputError, JournalFullError, MemoryLimitError,
                     OutputLimitError,
                     ProtocolViolation, ReplayDivergenceError, RuntimeBusyError, SandboxUnavailable, TimeoutError,
                     ToolBudgetError, UpstreamError, WorkerCrashed)

from . import _codecage

__version__ = _codecage.__version__  # libcodecage's cc_version(): meson's project version

__all__ = [
    "IsolatedRuntime", "RuntimeConfig", "Mount", "EvalResult", "ToolBridge", "ForkServer",
    "SessionPool", "AgentSession", "SessionResult", "Tool", "ToolCall", "McpToolBridge",
    "mcp_tools", "DependencyOptions", "script_dependencies",
    "configure_default_runtime", "close_fork_servers",
    "eval", "WEB_POLYFILLS", "Bootstrap", "DEFAULT_MAX_MEMORY", "errors", *errors.__all__,
]
