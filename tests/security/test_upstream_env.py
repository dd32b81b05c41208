"""Code mode: an upstream MCP server's environment (its credentials) stays
in the host. `codecage mcp` runs with a secret in its environment, which
the upstream inherits; the guest of either language must not find it
(environment, /proc), while the reverse check shows the probe would: the
upstream does have it, and a guest value carrying it is found."""
import os
import shlex
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "mcp"))
from mcp_util import HERE, Stdio, need_node  # noqa: E402

SECRET = "cc-upstream-secret-5f1e"
UP = "up=node " + shlex.quote(os.path.join(HERE, "upstream_server.mjs"))

PY_PROBE = """
import os
found = [k for k, v in os.environ.items() if SECRET in v or SECRET in k]
for p in ('/proc/self/environ', '/proc/1/environ'):
    try:
        found += [p] if SECRET.encode() in open(p, 'rb').read() else []
    except OSError:
        pass
found
"""
JS_PROBE = "[typeof process, typeof std, typeof os].filter(t => t !== 'undefined')" \
           ".concat(JSON.stringify(globalThis).includes(SECRET) ? ['global'] : [])"


def test_upstream_environment_never_reaches_the_guest(monkeypatch):
    need_node()
    monkeypatch.setenv("CC_UPSTREAM_SECRET", SECRET)
    s = Stdio("--scratch", "0", "--upstream", UP)
    try:
        def run(lang, code):
            r = s.call("run_" + lang, code)["structuredContent"]
            assert r["status"] == "ok", r
            return r["value"]
        pre = "SECRET = %r\n" % SECRET
        assert run("python", pre + PY_PROBE) == []
        assert run("javascript", "const SECRET = %r; " % SECRET + JS_PROBE) == []
        # reverse: the upstream (host side) has it, and the probe finds it
        # once something hands it to the guest
        v = run("python", "tools.up.env(name='CC_UPSTREAM_SECRET')['value']")
        assert v == SECRET
        assert run("python", pre + "os_env = {'X': SECRET}\n" + PY_PROBE.replace(
            "os.environ.items()", "os_env.items()")) == ["X"]
    finally:
        s.close()
