"""ToolBridge: a set of host tools with one call budget, attachable to
any number of runtimes (the budget kept by the supervisor, libcodecage)."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, Mapping, Optional

from . import _codecage
from ._runtime import IsolatedRuntime
from .errors import InvalidInputError


def make_budget(owner: str, max_calls: Optional[int], per_tool: Optional[Mapping[str, int]],
                tools: Iterable[str]) -> "tuple[_codecage.Budget, Dict[str, int]]":
    """The supervisor's budget of ``max_calls`` (None: no total) and
    ``per_tool`` (names of ``tools`` to their own caps), both checked, and
    the per-tool caps as a dict. A refused call's ``ToolBudgetError``, as
    the guest catches it and as the host gets it uncaught (one message,
    libcodecage's), names ``owner``'s option to raise: ``raise
    OWNER(max_calls=N)`` or ``raise OWNER(per_tool={NAME: N})``. Raises
    ``InvalidInputError``."""
    if max_calls is not None and (isinstance(max_calls, bool) or
                                  not isinstance(max_calls, int) or max_calls < 0):
        raise InvalidInputError("max_calls must be None or a non-negative int")
    per_tool = dict(per_tool or {})
    tools = set(tools)
    for name, n in per_tool.items():
        if name not in tools:
            raise InvalidInputError(f"per_tool names {name!r}, which is not a tool here")
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise InvalidInputError("per_tool limits must be non-negative ints")
    budget = _codecage.Budget(max_calls)
    budget.set_hint(f"raise {owner}(max_calls=N)", f"raise {owner}(per_tool={{NAME: N}})")
    for name, n in per_tool.items():
        budget.limit_tool(name, n)
    return budget, per_tool


class ToolBridge:
    """A set of host tools with one call budget, attachable to any number of
    runtimes (of either language), which then share the budget.

    ``ToolBridge(tools, max_calls=None, *, per_tool=None,
    redact_host_errors=False)``: ``tools`` maps identifier names to
    callables (plain or coroutine functions); ``max_calls`` (int or None
    for unlimited) caps the calls that reach the host, counted over every
    attached runtime, failed calls included; ``per_tool`` maps names to
    their own caps. A call over budget never reaches the host: the guest
    gets a catchable ``ToolBudgetError``, and if it does not catch it the
    eval raises :class:`codecage.ToolBudgetError`, with the same message
    ("the total tool call budget of 5 calls is used up; raise
    ToolBridge(max_calls=N)"). With
    ``redact_host_errors`` the guest sees a failing tool's error name but
    not its message. The budget is enforced by the supervisor (libcodecage),
    thread-safely. Raises ``TypeError`` or ``InvalidInputError`` for bad
    arguments.
    """

    _OWNER = "ToolBridge"  # what a refused call's message says to raise

    def __init__(self, tools: Mapping[str, Callable[..., Any]], max_calls: Optional[int] = None,
                 *, per_tool: Optional[Mapping[str, int]] = None,
                 redact_host_errors: bool = False) -> None:
        if not isinstance(tools, Mapping):
            raise TypeError("tools must be a mapping of names to callables")
        for name, fn in tools.items():
            if not isinstance(name, str) or not name.isascii() or not all(
                    p.isidentifier() for p in name.split(".", 1)):
                raise InvalidInputError(f"tool name {name!r} is not an ASCII identifier "
                                        f"(or two joined by a dot: SERVER.TOOL)")
            if not callable(fn):
                raise TypeError(f"tool {name!r} is not callable")
        self._budget, _ = make_budget(type(self)._OWNER, max_calls, per_tool, tools)
        self._tools = dict(tools)
        self.max_calls = max_calls
        self.redact_host_errors = bool(redact_host_errors)

    @property
    def tools(self) -> Dict[str, Callable[..., Any]]:
        return dict(self._tools)

    @property
    def calls_made(self) -> int:
        """Calls that reached the host so far, over every attached runtime."""
        return self._budget.calls_made

    @property
    def calls_remaining(self) -> Optional[int]:
        """Calls left in ``max_calls``; None when unlimited."""
        return self._budget.calls_remaining

    def attach(self, rt: IsolatedRuntime) -> None:
        """Bind every tool to ``rt`` and count their calls against this
        bridge's budget (other tools of ``rt`` are not counted). Raises as
        :meth:`IsolatedRuntime.bind_function`."""
        if not isinstance(rt, IsolatedRuntime):
            raise TypeError("attach takes an IsolatedRuntime")
        for name, fn in self._tools.items():
            rt._bind(name, fn, self.redact_host_errors)
            rt._rt.set_tool_budget(name, self._budget)


__all__ = ["ToolBridge"]
