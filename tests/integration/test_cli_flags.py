"""The flags `codecage run`/`eval` and `codecage mcp` share (src/cli/flags.c):
the same text means the same in both, and a range is the library's
(cc_options_check), reported with the flag's name."""
import subprocess

import pytest

from conftest import CLI

FRONT_ENDS = {"cli": ["eval", "--lang", "js"], "mcp": ["mcp"]}


def run(front, *flags, code="1"):
    """The front end with flags; the CLI evaluates code, the MCP server
    reads an empty stdin (and ends at once once its flags are good)."""
    args = [CLI, *FRONT_ENDS[front], "--sandbox", "auto", *flags]
    if front == "cli":
        args.append(code)
    return subprocess.run(args, input="", capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
def test_timeout_range_is_the_librarys(front):
    for bad in ("0", "-1", "86401", "inf", "nan"):
        r = run(front, "--timeout", bad)
        assert r.returncode == 2, (bad, r)
        assert f"--timeout: timeout must be in (0, 86400] seconds, not '{bad}'" in r.stderr, r
        assert "usage:" in r.stderr
    r = run(front, "--timeout", "abc")
    assert r.returncode == 2 and "--timeout wants seconds, not 'abc'" in r.stderr, r
    for good in ("86400", "0.0001"):
        r = run(front, "--timeout", good)
        assert r.returncode == 0, (good, r)
