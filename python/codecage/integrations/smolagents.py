"""codecage as a smolagents executor: ``CodeAgent(tools=..., model=...,
executor=CodecageExecutor())``.

smolagents' remote executors (E2B, Docker, Modal, Blaxel) send the tools'
source code into the sandbox and run them there. codecage binds them as
host tools instead: the agent's code calls ``web_search(query=...)`` as
it always does, the call crosses to the host and runs the real ``Tool``
object there (with the host's credentials, which never enter the
sandbox), under one call budget. ``final_answer(...)`` ends the step as
smolagents expects (``is_final_answer``); the worker's state (variables,
imports) persists from step to step and run to run; what the code printed
comes back as the step's logs, and a failing step raises the error text
smolagents puts in the model's next observation.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from .. import _codecage
from .._runtime import IsolatedRuntime, RuntimeConfig
from ..errors import CodecageError
from . import _common

_common.require("smolagents", "smolagents", "smolagents")
from smolagents.local_python_executor import CodeOutput, PythonExecutor  # noqa: E402
from smolagents.monitoring import AgentLogger, LogLevel  # noqa: E402
from smolagents.utils import AgentError  # noqa: E402

class FinalAnswerException(Exception):
    """What ``final_answer`` raises in the guest, to end the step there. (An
    Exception on the host: a BaseException raised by a tool would stop the
    host's own eval call. The answer is recorded before it is raised, so a
    guest that catches it still ends the step with that answer.)"""


class CodecageExecutor(PythonExecutor):
    """A smolagents ``PythonExecutor`` over one codecage Python runtime.

    ``CodecageExecutor(config=None, *, sandbox="require", max_calls=None,
    logger=None, **options)``: ``config``/``options`` as
    :class:`codecage.IsolatedRuntime` takes them (limits, mounts,
    ``python_path`` for packages); ``max_calls`` caps the tool calls over
    the executor's life (``final_answer`` not counted); ``logger`` a
    smolagents ``AgentLogger`` for the errors (default: silent). Give it to
    ``CodeAgent(executor=...)``; ``cleanup()`` (the agent's) closes the
    runtime. A value a tool returns must cross the boundary (numbers,
    strings, lists, dicts, bytes, datetimes); another raises
    ``ToolResultError`` in the guest.
    """

    def __init__(self, config: Optional[RuntimeConfig] = None, *, sandbox: str = "require",
                 max_calls: Optional[int] = None, logger: Optional[AgentLogger] = None,
                 **options: Any) -> None:
        self.rt = IsolatedRuntime(config, language="python", sandbox=sandbox, **options)
        self.logger = logger or AgentLogger(level=LogLevel.OFF)
        self.budget = _codecage.Budget(max_calls)
        self.tools: Dict[str, Any] = {}
        self._final: Any = None
        self._has_final = False

    def send_tools(self, tools: Dict[str, Any]) -> None:
        """Bind each of smolagents' ``tools`` (and managed agents), by name,
        as a host tool of the runtime; ``final_answer`` ends the step."""
        for name, tool in tools.items():
            if self.tools.get(name) is tool:
                continue
            self.tools[name] = tool
            if name == "final_answer":
                self.rt._bind(name, self._final_answer(tool), False)
            else:
                self.rt._bind(name, self._call(tool), False)
                self.rt._rt.set_tool_budget(name, self.budget)

    @staticmethod
    def _call(tool: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            return tool(*args, **kwargs)
        return call

    def _final_answer(self, tool: Any) -> Any:
        def final_answer(*args: Any, **kwargs: Any) -> Any:
            self._final, self._has_final = tool(*args, **kwargs), True
            raise FinalAnswerException("final_answer was called: the step ends here")
        return final_answer

    def send_variables(self, variables: Dict[str, Any]) -> None:
        """Make each of ``variables`` (the agent's ``additional_args``) a
        global of the guest. Raises ``InvalidInputError`` for a name or a
        value that cannot cross."""
        for name, value in (variables or {}).items():
            self.rt.set_global(name, value)

    def __call__(self, code_action: str) -> CodeOutput:
        """Run one step's code: its last expression's value, what it
        printed, and whether it called ``final_answer``. A failing step
        raises ``AgentError`` with what it printed, the guest's error and
        traceback (smolagents shows the model that text)."""
        self._has_final, self._final = False, None
        try:
            r = self.rt.run(code_action)
        except CodecageError as e:
            logs = e.stdout + e.stderr
            if self._has_final:
                return CodeOutput(output=self._final, logs=logs, is_final_answer=True)
            raise AgentError(f"{logs}\nExecuting code yielded an error:\n"
                             f"{e.name or e.kind}\n{e.message}\n{e.traceback}".lstrip("\n"),
                             self.logger) from None
        logs = r.stdout + r.stderr
        if self._has_final:
            return CodeOutput(output=self._final, logs=logs, is_final_answer=True)
        return CodeOutput(output=r.value, logs=logs, is_final_answer=False)

    @property
    def calls_made(self) -> int:
        """Tool calls that reached the host (``final_answer`` aside)."""
        return self.budget.calls_made

    def cleanup(self) -> None:
        """Close the runtime (smolagents' ``agent.cleanup()`` calls it)."""
        self.rt.close()

    def __enter__(self) -> "CodecageExecutor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.cleanup()


__all__ = ["CodecageExecutor"]
