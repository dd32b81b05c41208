"""What the integrations share: importing a framework lazily, JSON Schema
tools as stubs for the guest, and a guest call's arguments as the named
arguments a framework's tool takes."""

from __future__ import annotations

import importlib
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .. import _describe
from .._agent import Tool
from ..errors import InvalidInputError


def require(module: str, extra: str, what: str) -> Any:
    """Import ``module`` (a framework) or raise ImportError naming the
    extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            f"codecage.integrations.{what} needs {module.split('.')[0]}, which is not "
            f"installed: pip install 'codecage[{extra}]' (the versions tested are pinned in "
            f"codecage's requirements/host.txt) ({e})") from e


def inline_refs(schema: Any, depth: int = 0, root: Any = None) -> Any:
    """``schema`` with its local ``$ref``s (``#/$defs/X``, ``#/definitions/X``)
    replaced by what they name, so the stubs show the fields; a reference
    nested past 8 levels (a recursive type) becomes ``{}`` (any value)."""
    root = schema if root is None else root
    if isinstance(schema, list):
        return [inline_refs(x, depth, root) for x in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        if depth >= 8:
            return {}
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        if not isinstance(target, dict):
            return {}
        merged = {k: v for k, v in schema.items() if k != "$ref"}
        return inline_refs({**target, **merged}, depth + 1, root)
    return {k: inline_refs(v, depth, root) for k, v in schema.items()
            if k not in ("$defs", "definitions")}


def describe(tools: Mapping[str, Tuple[Optional[str], Mapping[str, Any], Optional[Mapping]]],
             language: str) -> str:
    """Stubs of tools given as ``{name: (description, parameters schema,
    returns schema or None)}`` for the guest of ``language``: TypeScript
    declarations or Python stubs, as ``AgentSession.describe_tools``."""
    def placeholder() -> None:
        pass
    return _describe.describe({
        name: Tool(placeholder, description=desc or "", parameters=inline_refs(dict(params)),
                   returns=inline_refs(dict(ret)) if ret else None)
        for name, (desc, params, ret) in tools.items()}, language)


def named_args(name: str, schema: Mapping[str, Any], args: Sequence[Any],
               kwargs: Mapping[str, Any]) -> Dict[str, Any]:
    """A guest call's positional and keyword arguments as the named
    arguments of a tool whose parameters are the JSON Schema object
    ``schema``: positional ones take the properties in order; one dict
    and nothing else, for a tool whose first parameter is not an object,
    is the named arguments themselves (``tools.f({city: "Oslo"})``).
    Raises TypeError (the guest sees it) for too many or repeated ones."""
    props: List[str] = list((schema.get("properties") or {}).keys())
    if len(args) == 1 and not kwargs and isinstance(args[0], dict):
        first = (schema.get("properties") or {}).get(props[0], {}) if props else {}
        if first.get("type") != "object" and "$ref" not in first and set(args[0]) <= set(props):
            return dict(args[0])
    if len(args) > len(props):
        raise TypeError(f"{name}() takes {len(props)} positional argument"
                        f"{'' if len(props) == 1 else 's'} but {len(args)} were given")
    out = dict(zip(props, args))
    for k, v in kwargs.items():
        if k in out:
            raise TypeError(f"{name}() got multiple values for argument {k!r}")
        out[k] = v
    return out


def check_language(language: str) -> str:
    """'python' or 'javascript' (also 'py', 'js'); InvalidInputError otherwise."""
    lang = {"python": "python", "py": "python", "javascript": "javascript",
            "js": "javascript"}.get(str(language).lower())
    if lang is None:
        raise InvalidInputError(f"language must be 'python' or 'javascript', not {language!r}")
    return lang


def result_text(value: Any, stdout: str, stderr: str) -> str:
    """An eval's outcome as the text a model reads (as ``codecage mcp``'s
    text block: ``value:``, ``stdout:``, ``stderr:``, the empty ones left
    out)."""
    parts = []
    if stdout:
        parts.append("stdout:\n" + stdout.rstrip("\n"))
    if stderr:
        parts.append("stderr:\n" + stderr.rstrip("\n"))
    parts.append("value: " + repr(value) if not isinstance(value, str) else "value: " + value)
    return "\n".join(parts)


def error_text(e: BaseException) -> str:
    """A failed eval as the text a model reads: kind, the guest's
    exception and message, its traceback, what it printed."""
    kind = getattr(e, "kind", None) or type(e).__name__
    name = getattr(e, "name", None)
    message = getattr(e, "message", None) or str(e)
    lines = [f"error ({kind}): {name + ': ' if name else ''}{message}"]
    tb = getattr(e, "traceback", None)
    if tb:
        lines.append("traceback:\n" + tb.rstrip("\n"))
    for stream in ("stdout", "stderr"):
        text = getattr(e, stream, None)
        if text:
            lines.append(f"{stream}:\n" + text.rstrip("\n"))
    return "\n".join(lines)
