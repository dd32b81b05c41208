"""The MCP Inspector's CLI mode (@modelcontextprotocol/inspector, pinned)
against the stdio server: its output must be exactly what the server said."""
import json
import os

from conftest import CLI
from mcp_util import HERE, Stdio, need_node
import subprocess


def inspector(*args):
    need_node()
    proc = subprocess.run([os.path.join(HERE, "node_modules", ".bin", "mcp-inspector"), "--cli",
                           CLI, "mcp", *args], cwd=HERE, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_inspector_lists_the_tools_exactly():
    got = inspector("--method", "tools/list")
    s = Stdio()
    want = s.request({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})["result"]
    s.close()
    assert got == want
    assert [t["name"] for t in got["tools"]] == ["run_python", "run_javascript"]


def test_inspector_calls_run_python():
    got = inspector("--method", "tools/call", "--tool-name", "run_python",
                    "--tool-arg", "code=print('hi')\n6*7")
    assert got["content"] == [{"type": "text", "text": "status: ok\nvalue: 42\nstdout:\nhi\n"}]
    sc = got["structuredContent"]
    assert sc.pop("duration_ms") > 0
    assert sc == {"status": "ok", "value": 42, "stdout": "hi\n", "stderr": "", "error": None,
                  "files": [], "value_type": None, "note": None}
    assert got["isError"] is False


def test_inspector_calls_run_javascript_error():
    got = inspector("--method", "tools/call", "--tool-name", "run_javascript",
                    "--tool-arg", "code=null.x")
    assert got["isError"] is True
    err = got["structuredContent"]["error"]
    assert (err["kind"], err["type"]) == ("guest_error", "TypeError")
    assert got["content"][0]["text"].startswith("status: error (guest_error)\nerror: TypeError: ")
