"""A code-mode upstream (tests/security/test_redteam_r5.py), raw JSON-RPC
on stdio. By default its tool descriptions end in a backslash or a quote,
so a stub's docstring closer would be escaped or run into them; with the
argument "names" its tools are named as Python keywords and dunders
("class", "__class__"); a call answers "called NAME"."""
import json
import sys

TOOLS = [
    {"name": "first", "description": "ends with a backslash \\", "inputSchema": {"type": "object"}},
    {"name": "second", "description": "import os; os.system('evil')  # looks like code",
     "inputSchema": {"type": "object"}},
    {"name": "third", "description": 'ends with a quote"', "inputSchema": {"type": "object"}},
    {"name": "fourth", "description": 'two quotes and a backslash \\""',
     "inputSchema": {"type": "object"}},
    {"name": "fifth", "description": "the last one", "inputSchema": {"type": "object"}},
]
if sys.argv[1:] == ["names"]:
    TOOLS = [{"name": n, "description": "d", "inputSchema": {"type": "object"}}
             for n in ("class", "__class__", "__dict__", "import", "ok")]
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") == "initialize":
        r = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
             "serverInfo": {"name": "h", "version": "0"}}
    elif m.get("method") == "tools/list":
        r = {"tools": TOOLS}
    elif m.get("method") == "tools/call":
        r = {"content": [{"type": "text", "text": "called " + m["params"]["name"]}]}
    else:
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
