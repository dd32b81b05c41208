"""`codecage mcp` driven by the official MCP TypeScript SDK
(@modelcontextprotocol/sdk, pinned in package-lock.json): sdk_client.mjs
lists the tools, calls both, checks state across calls, errors, timeouts,
crash replacement, cancellation, logging and, over HTTP, 20 concurrent
sessions and DELETE."""
from conftest import CLI
from mcp_util import http_server, node


def check(proc):
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "FAIL" not in proc.stdout, out
    assert proc.stdout.rstrip().endswith(" passed, 0 failed"), out
    return proc.stdout


def test_sdk_over_stdio():
    out = check(node("sdk_client.mjs", "stdio", CLI))
    assert "ok cancellation stops the running code" in out
    assert "ok files in, changed files out, resources/list and resources/read" in out


def test_sdk_over_streamable_http():
    with http_server() as url:
        out = check(node("sdk_client.mjs", "http", url))
    assert "ok 20 concurrent sessions: separate state, none blocks another" in out
    assert "18 passed, 0 failed" in out
