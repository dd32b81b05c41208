"""A LangChain tool that runs code in codecage:
``CodeInterpreterTool(language="python")``, for LangChain and LangGraph
agents (``create_react_agent(model, [CodeInterpreterTool()])``).

The tool keeps one codecage session (state persists across the agent's
calls) and one call budget for the host tools it is given (functions or
LangChain tools, ``tools.NAME(...)`` in the guest). Its result is a list of
LangChain content blocks: a text block (``value:``, ``stdout:``,
``stderr:``) and one ``image`` block per PNG the code displayed (a
matplotlib chart); a failing eval is a ``ToolException``, which LangChain
turns into an error ``ToolMessage`` the model reads (``status="error"``).

LangChain's other sandbox interface, a shell (``ShellTool``, terminal
toolkits), runs commands, not code: codecage offers no shell (the guest
cannot run processes), so it does not pretend to be one.
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any, Dict, List, Mapping, Optional, Type

from .. import _describe
from .._agent import Tool
from .._bridge import ToolBridge
from .._runtime import IsolatedRuntime, RuntimeConfig
from ..errors import (GuestError, MemoryLimitError, OutputLimitError, TimeoutError,
                      ToolBudgetError, WorkerCrashed)
from . import _common

_common.require("langchain_core", "langchain", "langchain")
from langchain_core.tools import BaseTool, ToolException  # noqa: E402
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr  # noqa: E402

# the outcomes the model can fix by changing its code: an error ToolMessage
_MODEL_ERRORS = (GuestError, TimeoutError, MemoryLimitError, OutputLimitError, ToolBudgetError,
                 WorkerCrashed)


class _CodeInput(BaseModel):
    code: str = Field(description="the program; the value of its last expression (Python) or "
                                  "its completion value (JavaScript) is the result")


def _host_tool(t: Any) -> Any:
    """A LangChain tool as a function of the guest: keyword arguments
    (or one dict of them) go to ``invoke``."""
    def call(*args: Any, **kwargs: Any) -> Any:
        schema = t.get_input_jsonschema() if hasattr(t, "get_input_jsonschema") else {}
        return t.invoke(_common.named_args(t.name, schema, args, kwargs))
    return call


class CodeInterpreterTool(BaseTool):
    """A ``langchain_core`` tool running the model's code in a codecage
    sandbox.

    ``CodeInterpreterTool(language="python", config=None, tools=None,
    max_calls=None, sandbox="require", name=None, description=None)``:
    ``language`` ``"python"`` or ``"javascript"`` (the tool is
    ``run_python`` / ``run_javascript`` unless ``name`` says); ``config`` a
    :class:`codecage.RuntimeConfig` (limits, grants); ``tools`` host tools
    for the guest (a dict of functions, or a list of LangChain tools), with
    their stubs appended to the description; ``max_calls`` their budget
    over the tool's life. The session starts at the first call; ``close()``
    ends it (a later call starts a fresh one).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = "run_python"
    description: str = ""
    args_schema: Type[BaseModel] = _CodeInput
    handle_tool_error: Any = True
    language: str = "python"
    config: Optional[RuntimeConfig] = None
    sandbox: str = "require"
    max_calls: Optional[int] = None
    host_tools: Dict[str, Any] = Field(default_factory=dict)
    _rt: Optional[IsolatedRuntime] = PrivateAttr(default=None)
    _bridge: Optional[ToolBridge] = PrivateAttr(default=None)

    def __init__(self, language: str = "python", config: Optional[RuntimeConfig] = None,
                 tools: Any = None, max_calls: Optional[int] = None, *,
                 sandbox: str = "require", name: Optional[str] = None,
                 description: Optional[str] = None, **kwargs: Any) -> None:
        lang = _common.check_language(language)
        host = self._host_tools(tools)
        super().__init__(language=lang, config=config, max_calls=max_calls, sandbox=sandbox,
                         host_tools=host, name=name or ("run_" + lang),
                         description=description or self._describe(lang, host, tools),
                         **kwargs)
        self._bridge = ToolBridge(host, max_calls) if host else None

    @staticmethod
    def _host_tools(tools: Any) -> Dict[str, Any]:
        if tools is None:
            return {}
        if isinstance(tools, Mapping):
            if any(isinstance(v, BaseTool) for v in tools.values()):
                raise TypeError("tools: give LangChain tools as a list (their names are their "
                                "own), functions as a dict")
            return dict(tools)
        out = {}
        for t in tools:
            if not isinstance(t, BaseTool):
                raise TypeError("tools must be a dict of functions or a list of LangChain tools")
            out[t.name] = _host_tool(t)
        return out

    @staticmethod
    def _describe(lang: str, host: Dict[str, Any], given: Any) -> str:
        what = ("Python 3.11: the value of the last expression comes back" if lang == "python"
                else "JavaScript (QuickJS): the completion value comes back, Promises awaited")
        text = (f"Run {what}, with what it printed, in a sandbox (no network or files unless "
                "granted). State persists across calls. PNG charts (matplotlib) come back as "
                "images.")
        if not host:
            return text
        if isinstance(given, Mapping):
            return text + "\n\n" + _describe.describe({k: Tool(v) for k, v in host.items()}, lang)
        defs = {t.name: (t.description, t.get_input_jsonschema(), None) for t in given}
        return text + "\n\n" + _common.describe(defs, lang)

    # -- the session --

    @property
    def runtime(self) -> IsolatedRuntime:
        """The tool's runtime (started now if it was not): host code may
        use it too; its calls of the host tools share the tool's budget."""
        if self._rt is None or self._rt.closed or not self._rt.alive:
            if self._rt is not None:
                self._rt.close()
            self._rt = IsolatedRuntime(self.config, language=self.language, sandbox=self.sandbox)
            if self._bridge is not None:
                self._bridge.attach(self._rt)
        return self._rt

    @property
    def calls_made(self) -> int:
        """Host tool calls so far, over the tool's life."""
        return self._bridge.calls_made if self._bridge is not None else 0

    def close(self) -> None:
        """Close the session (idempotent)."""
        rt, self._rt = self._rt, None
        if rt is not None:
            rt.close()

    def _blocks(self, r: Any) -> List[Dict[str, Any]]:
        blocks: List[Dict[str, Any]] = [{"type": "text", "text": _common.result_text(
            r.value, r.stdout, r.stderr)}]
        for d in r.displays:
            if "image/png" in d:
                blocks.append({"type": "image", "mime_type": "image/png",
                               "base64": base64.b64encode(d["image/png"]).decode()})
        return blocks

    def _run(self, code: str, run_manager: Any = None) -> List[Dict[str, Any]]:
        try:
            return self._blocks(self.runtime.run(code))
        except _MODEL_ERRORS as e:
            raise ToolException(_common.error_text(e)) from None

    async def _arun(self, code: str, run_manager: Any = None) -> List[Dict[str, Any]]:
        rt = await asyncio.to_thread(lambda: self.runtime)
        try:
            loop = asyncio.get_running_loop()
            return self._blocks(await loop.run_in_executor(None, rt.run, code))
        except _MODEL_ERRORS as e:
            raise ToolException(_common.error_text(e)) from None


__all__ = ["CodeInterpreterTool"]
