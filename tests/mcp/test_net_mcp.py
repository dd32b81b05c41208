"""`codecage mcp --allow-net`: the MCP tools reach the listed hosts through
the host broker and nothing else; a malformed entry is a usage error."""
import subprocess

import netsrv
from mcp_util import CLI, Stdio


def test_mcp_allow_net_both_languages():
    s = netsrv.Server("127.0.0.1")
    try:
        m = Stdio("--allow-net", f"127.0.0.1:{s.port}")
        tools = m.request({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})["result"]["tools"]
        for t in tools:
            assert "only these hosts" in t["description"] and \
                f"127.0.0.1:{s.port}" in t["description"], t
            assert t["annotations"]["openWorldHint"] is True
        r = m.call("run_javascript",
                   f"fetch('{s.url('/echo?mcp')}').then(r => r.json()).then(j => j.path)")
        assert r["structuredContent"]["value"] == "/echo?mcp", r
        r = m.call("run_python", "import requests\n"
                   f"requests.get('{s.url('/echo?rq')}').json()['path']", id=2)
        assert r["structuredContent"]["value"] == "/echo?rq", r
        r = m.call("run_javascript",
                   "fetch('http://127.0.0.2:1/').then(() => 'reached', e => e.message)", id=3)
        assert "not in allow_net" in r["structuredContent"]["value"], r
        assert m.close() == []
        # In reverse: without the flag the guest has no fetch.
        m = Stdio()
        r = m.call("run_javascript", "typeof fetch")
        assert r["structuredContent"]["value"] == "undefined", r
        assert m.close() == []
    finally:
        s.close()


def test_mcp_bad_entry_is_a_usage_error():
    p = subprocess.run([CLI, "mcp", "--allow-net", "x.test/path"], capture_output=True,
                       text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert p.returncode == 2 and "allow_net entry 'x.test/path'" in p.stderr, p


def test_mcp_credentials_stay_behind_and_pip_requests_work():
    # issue 27: E6 (credential-like headers on a redirect to another
    # origin) and E4 (pip's vendored requests through the broker)
    a, b = netsrv.Server("127.0.0.1"), netsrv.Server("127.0.0.1")
    try:
        m = Stdio("--allow-net", "127.0.0.1")
        to = a.url("/redir?to=" + b.url("/echo"))
        r = m.call("run_python", "import requests\n"
                   f"sorted(requests.get('{to}', headers={{'X-Api-Key': 'k', 'X-Plain': 'p'}})"
                   ".json()['headers'])")
        names = r["structuredContent"]["value"]
        assert "x-plain" in names and "x-api-key" not in names, r
        r = m.call("run_python", "import pip._vendor.requests as r\n"
                   f"r.get('{a.url('/echo?pip')}').json()['path']", id=2)
        assert r["structuredContent"]["value"] == "/echo?pip", r
        assert m.close() == []
    finally:
        a.close()
        b.close()
