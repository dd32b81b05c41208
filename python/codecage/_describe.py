"""Tool descriptions for the model's prompt: TypeScript declarations for a
JavaScript guest, Python stubs for a Python guest.

Each tool's signature comes from its JSON Schema (``Tool(parameters=,
returns=)``) when given, else from its type hints; its description from
``Tool(description=)`` else the docstring. Type hints map to JSON Schema
first (``schema_of``), so both sources go through one renderer per
language. TypedDicts and dataclasses become named types (``interface
Weather`` / ``class Weather(TypedDict)``); an unknown annotation is
``unknown`` / ``Any``.
"""

from __future__ import annotations

import dataclasses
import datetime
import inspect
import json
import typing
from typing import Any, Dict, List, Mapping, Optional, Tuple

_PRIMS = {str: "string", int: "integer", float: "number", bool: "boolean", bytes: "bytes",
          type(None): "null", datetime.datetime: "datetime"}


def _is_typeddict(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, dict) and hasattr(t, "__annotations__") \
        and hasattr(t, "__total__")


def schema_of(t: Any, named: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
    """A JSON Schema for annotation ``t``; named object types go into
    ``named`` and are referenced as ``{"$ref": name}``."""
    if t is inspect.Parameter.empty or t is Any:
        return {}
    if t in _PRIMS:
        p = _PRIMS[t]
        if p == "bytes":
            return {"type": "string", "format": "binary"}
        if p == "datetime":
            return {"type": "string", "format": "date-time"}
        return {"type": p}
    origin, args = typing.get_origin(t), typing.get_args(t)
    if origin is typing.Union:
        return {"anyOf": [schema_of(a, named) for a in args]}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (list, tuple, set, frozenset) or t in (list, tuple):
        return {"type": "array", "items": schema_of(args[0], named) if args else {}}
    if origin is dict or t is dict:
        return {"type": "object",
                "additionalProperties": schema_of(args[1], named) if len(args) == 2 else {}}
    if _is_typeddict(t) or (isinstance(t, type) and dataclasses.is_dataclass(t)):
        name = t.__name__
        if name not in named:
            named[name] = {}  # recursion stops here
            hints = typing.get_type_hints(t)
            req = sorted(getattr(t, "__required_keys__", hints.keys()))
            named[name] = {"type": "object", "description": inspect.getdoc(t) or "",
                           "properties": {k: schema_of(v, named) for k, v in hints.items()},
                           "required": req}
        return {"$ref": name}
    return {}


def _signature(tool: Any, named: Dict[str, Dict[str, Any]]) -> Tuple[Dict[str, Any], Dict]:
    """(parameters schema, returns schema) of a Tool."""
    if tool.parameters is not None:
        params = dict(tool.parameters)
    else:
        try:
            sig = inspect.signature(tool.fn)
            hints = typing.get_type_hints(tool.fn)
        except (TypeError, ValueError, NameError):
            sig, hints = None, {}
        props, req = {}, []
        for p in (sig.parameters.values() if sig else ()):
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            props[p.name] = schema_of(hints.get(p.name, p.annotation), named)
            if p.default is p.empty:
                req.append(p.name)
        params = {"type": "object", "properties": props, "required": req}
        if tool.returns is None and sig is not None:
            return params, schema_of(hints.get("return", sig.return_annotation), named)
    return params, dict(tool.returns or {})


# ---- TypeScript ----

def _ts(s: Mapping[str, Any]) -> str:
    if "$ref" in s:
        return str(s["$ref"])
    if "enum" in s:
        return " | ".join(json.dumps(v) for v in s["enum"]) or "never"
    if "anyOf" in s:
        return " | ".join(_ts(x) for x in s["anyOf"]) or "unknown"
    t = s.get("type")
    if isinstance(t, list):
        return " | ".join(_ts(dict(s, type=x)) for x in t)
    if t == "string":
        return {"binary": "Uint8Array", "date-time": "Date"}.get(s.get("format"), "string")
    if t in ("integer", "number"):
        return "number"
    if t == "boolean":
        return "boolean"
    if t == "null":
        return "null"
    if t == "array":
        inner = _ts(s.get("items") or {})
        return f"({inner})[]" if "|" in inner else f"{inner}[]"
    if t == "object":
        props = s.get("properties")
        if props:
            req = set(s.get("required") or ())
            return "{ " + "; ".join(f"{k}{'' if k in req else '?'}: {_ts(v)}"
                                    for k, v in props.items()) + " }"
        extra = s.get("additionalProperties")
        return f"Record<string, {_ts(extra) if isinstance(extra, dict) else 'unknown'}>"
    return "unknown"


def _doc_lines(text: str, indent: str) -> List[str]:
    text = (text or "").strip().replace("*/", "* /")
    if not text:
        return []
    lines = text.splitlines()
    if len(lines) == 1:
        return [f"{indent}/** {lines[0]} */"]
    return [f"{indent}/**"] + [f"{indent} * {ln}".rstrip() for ln in lines] + [f"{indent} */"]


def _typescript(tools: Mapping[str, Any]) -> str:
    named: Dict[str, Dict[str, Any]] = {}
    members: List[str] = []
    for name, tool in tools.items():
        params, ret = _signature(tool, named)
        req = set(params.get("required") or ())
        args = ", ".join(f"{k}{'' if k in req else '?'}: {_ts(v)}"
                         for k, v in (params.get("properties") or {}).items())
        members += _doc_lines(tool.description or inspect.getdoc(tool.fn) or "", "  ")
        members.append(f"  {name}({args}): Promise<{_ts(ret) if ret else 'unknown'}>;")
    out = ["// The host's tools: call them as tools.NAME(...) (a Promise) or NAME(...)."]
    for tname, s in named.items():
        out += _doc_lines(s.get("description", ""), "")
        req = set(s.get("required") or ())
        out.append(f"interface {tname} {{")
        out += [f"  {k}{'' if k in req else '?'}: {_ts(v)};"
                for k, v in (s.get("properties") or {}).items()]
        out.append("}")
    out.append("declare const tools: {")
    out += members
    out.append("};")
    return "\n".join(out) + "\n"


# ---- Python ----

def _py(s: Mapping[str, Any]) -> str:
    if "$ref" in s:
        return str(s["$ref"])
    if "enum" in s:
        return "Literal[" + ", ".join(repr(v) for v in s["enum"]) + "]"
    if "anyOf" in s:
        return " | ".join(_py(x) for x in s["anyOf"]) or "Any"
    t = s.get("type")
    if isinstance(t, list):
        return " | ".join(_py(dict(s, type=x)) for x in t)
    if t == "string":
        return {"binary": "bytes", "date-time": "datetime"}.get(s.get("format"), "str")
    simple = {"integer": "int", "number": "float", "boolean": "bool", "null": "None"}
    if t in simple:
        return simple[t]
    if t == "array":
        return f"list[{_py(s.get('items') or {})}]"
    if t == "object":
        extra = s.get("additionalProperties")
        if not s.get("properties") and isinstance(extra, dict) and extra:
            return f"dict[str, {_py(extra)}]"
        return "dict[str, Any]"
    return "Any"


def _docstring(text: str, indent: str) -> List[str]:
    # backslashes doubled and a closing quote kept off the delimiter, so
    # no description can end the docstring early (as stubs.c's doc())
    text = (text or "").strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if text.endswith('"'):
        text += " "
    if not text:
        return []
    lines = text.splitlines()
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    return [f'{indent}"""{lines[0]}'] + [f"{indent}{ln}".rstrip() for ln in lines[1:]] + \
        [f'{indent}"""']


def _python(tools: Mapping[str, Any]) -> str:
    named: Dict[str, Dict[str, Any]] = {}
    funcs: List[str] = []
    for name, tool in tools.items():
        params, ret = _signature(tool, named)
        req = set(params.get("required") or ())
        props = params.get("properties") or {}
        args = [f"{k}: {_py(v)}" for k, v in props.items() if k in req]
        args += [f"{k}: {_py(v)} = None" for k, v in props.items() if k not in req]
        funcs.append(f"def {name}({', '.join(args)}) -> {_py(ret) if ret else 'Any'}:")
        funcs += _docstring(tool.description or inspect.getdoc(tool.fn) or "", "    ")
        funcs += ["    ...", ""]
    out = ["# The host's tools: call them as NAME(...) or tools.NAME(...), or",
           "# `await atools.NAME(...)` for asyncio.gather.",
           "from datetime import datetime",
           "from typing import Any, Literal, TypedDict", ""]
    for tname, s in named.items():
        req = set(s.get("required") or ())
        props = s.get("properties") or {}
        total = all(k in req for k in props)
        out.append(f"class {tname}(TypedDict{'' if total else ', total=False'}):")
        out += _docstring(s.get("description", ""), "    ")
        out += [f"    {k}: {_py(v)}" for k, v in props.items()] or ["    pass"]
        out.append("")
    return "\n".join(out + funcs).rstrip() + "\n"


def describe(tools: Mapping[str, Any], language: str) -> str:
    """Declarations of ``tools`` (name -> Tool) for ``language``."""
    from .errors import InvalidInputError
    lang = {"javascript": "javascript", "js": "javascript", "typescript": "javascript",
            "python": "python", "py": "python"}.get(str(language).lower())
    if lang is None:
        raise InvalidInputError(f"describe_tools takes 'javascript' or 'python', not "
                                f"{language!r}")
    return _typescript(tools) if lang == "javascript" else _python(tools)


def call_text(args: List[Any], kwargs: Optional[Mapping[str, Any]] = None) -> str:
    """``1, 'a', k=2``: a call's arguments for a message, cut to 200 chars."""
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in (kwargs or {}).items()]
    text = ", ".join(parts)
    return text if len(text) <= 200 else text[:197] + "..."
