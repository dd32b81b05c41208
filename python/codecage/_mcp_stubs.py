"""Stubs of MCP tools for ``McpToolBridge.describe``: the same text as
``codecage mcp --upstream`` puts in its run tools' descriptions
(src/mcp/client/stubs.c, ported line for line: keep the two in step;
tests/python/test_pkg_mcp_tools.py compares them)."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence, Tuple

DEPTH, PROPS, DESC = 6, 40, 600

TS_HEAD = ("// Upstream MCP tools: `await tools.SERVER.TOOL({...})` returns the tool's structured "
           "result (or its text, parsed when it is JSON);\n// a failing tool throws an "
           "UpstreamToolError, over budget a ToolBudgetError.\ndeclare const tools: {\n")
PY_HEAD = ("# Upstream MCP tools: tools.SERVER.TOOL(key=value, ...) returns the tool's structured "
           "result\n# (or its text, parsed when it is JSON); `await atools.SERVER.TOOL(...)` for "
           "asyncio.gather.\n# A failing tool raises UpstreamToolError, over budget "
           "ToolBudgetError.\nfrom typing import Any\n")


def _ident(k: Any) -> bool:
    return isinstance(k, str) and k.isascii() and k.isidentifier() and len(k) <= 256


def _req(s: Any) -> List[str]:
    r = s.get("required") if isinstance(s, dict) else None
    return [x for x in r if isinstance(x, str)] if isinstance(r, list) else []


def _props(s: Any) -> Dict[str, Any]:
    p = s.get("properties") if isinstance(s, dict) else None
    return p if isinstance(p, dict) else {}


def _ts_props(s: Any, depth: int, sep: str) -> str:
    out, req = [], _req(s)
    for n, (k, v) in enumerate(_props(s).items()):
        if n == PROPS:
            out.append("[more: string]: unknown" + sep)
            break
        key = k if _ident(k) else json.dumps(k, ensure_ascii=False)
        out.append(key + (": " if k in req else "?: ") + _ts(v, depth + 1) + sep)
    return "".join(out)


def _union(lst: List[Any], depth: int, ts: bool) -> str:
    out = []
    for i, x in enumerate(lst):
        if i:
            out.append(" | ")
        if i == 8:
            out.append("unknown" if ts else "Any")
            break
        out.append(_ts(x, depth + 1) if ts else _py(x, depth + 1))
    return "".join(out) if lst else ("unknown" if ts else "Any")


def _ts(s: Any, depth: int) -> str:
    if not isinstance(s, dict) or depth > DEPTH:
        return "unknown"
    t = s.get("type") if isinstance(s.get("type"), str) else None
    if isinstance(s.get("enum"), list):
        out = []
        for i, x in enumerate(s["enum"]):
            lit = json.dumps(x, separators=(",", ":"), ensure_ascii=False) if i < 16 else None
            out.append((" | " if i else "") + (lit if lit and len(lit.encode()) < 80
                                               else "unknown"))
            if i >= 16:
                break
        return "".join(out)
    for k in ("anyOf", "oneOf"):
        if isinstance(s.get(k), list):
            return _union(s[k], depth, True)
    if t is None:
        return "unknown"
    if t == "string":
        return "string"
    if t in ("integer", "number"):
        return "number"
    if t in ("boolean", "null"):
        return t
    if t == "array":
        return "(" + _ts(s.get("items"), depth + 1) + ")[]"
    if t == "object" and _props(s):
        return "{ " + _ts_props(s, depth, "; ") + "}"
    return "Record<string, unknown>" if t == "object" else "unknown"


def _py(s: Any, depth: int) -> str:
    if not isinstance(s, dict) or depth > DEPTH:
        return "Any"
    t = s.get("type") if isinstance(s.get("type"), str) else None
    for k in ("anyOf", "oneOf"):
        if isinstance(s.get(k), list):
            return _union(s[k], depth, False)
    simple = {"string": "str", "integer": "int", "number": "float", "boolean": "bool",
              "null": "None", "object": "dict[str, Any]"}
    if t == "array":
        return "list[" + _py(s.get("items"), depth + 1) + "]"
    return simple.get(t, "Any")


def _doc(text: Any, first: str, prefix: str, last: str, py: bool = False) -> str:
    if not isinstance(text, str) or not text:
        return ""
    raw = text.encode()[:DESC].decode("utf-8", "ignore")
    out, i = [first], 0
    while i < len(raw):
        c = raw[i]
        if c == "\n":
            out.append("\n" + prefix)
        elif c == "*" and raw[i + 1:i + 2] == "/":
            out.append("* ")
        elif raw[i:i + 3] == '"""':
            out.append("'''")
            i += 2
        elif c == "\\" and py:  # doubled: it would escape the closing quotes
            out.append("\\\\")
        elif c >= " " or c == "\t":
            out.append(c)
        i += 1
    text = "".join(out)
    if py and text.endswith('"'):  # a space: it would run into the quotes
        text += " "
    return text + last


def _ts_tool(name: str, t: Dict[str, Any]) -> str:
    inp = t.get("inputSchema")
    out = _doc(t.get("description"), "    /** ", "     * ", " */\n")
    out += "    " + name + "(input" + (": " if _req(inp) else "?: ")
    out += ("{ " + _ts_props(inp, 1, "; ") + "}") if _props(inp) else "Record<string, unknown>"
    return out + "): Promise<" + (_ts(t["outputSchema"], 1) if "outputSchema" in t
                                  else "unknown") + ">;\n"


def _py_tool(name: str, t: Dict[str, Any]) -> str:
    inp = t.get("inputSchema")
    req, args = _req(inp), []
    for pass_ in (0, 1):
        for k, v in _props(inp).items():
            if (k in req) != (pass_ == 0) or not _ident(k) or len(args) >= PROPS:
                continue
            args.append(k + ": " + _py(v, 1) + (" = None" if pass_ else ""))
    out = "    def " + name + "(" + ("*, " + ", ".join(args) if args else "") + ") -> "
    out += (_py(t["outputSchema"], 1) if "outputSchema" in t else "Any") + ":\n"
    return out + _doc(t.get("description"), '        """', "        ", '"""\n', py=True) + \
        "        ...\n"


def stubs(servers: Sequence[Tuple[str, Sequence[Tuple[str, Dict[str, Any]]]]], lang: str,
          query: Optional[str] = None) -> str:
    """``servers``: (name, [(guest tool name, tools/list entry)]); lang
    ``javascript`` or ``python``."""
    js = lang == "javascript"
    out = [TS_HEAD if js else PY_HEAD]
    for server, tools in servers:
        shown = 0
        for name, t in tools:
            d = t.get("description") if isinstance(t.get("description"), str) else ""
            if query and query.lower() not in (server + "." + name).lower() and \
                    query.lower() not in d.lower():
                continue
            if not shown:
                out.append(f"  {server}: {{\n" if js else f"class {server}:  # tools.{server}\n")
            shown += 1
            out.append(_ts_tool(name, t) if js else _py_tool(name, t))
        if shown and js:
            out.append("  };\n")
    if js:
        out.append("};\n")
    return "".join(out)
