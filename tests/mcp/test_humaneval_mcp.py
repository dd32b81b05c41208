"""The real workload through the MCP server: every HumanEval-X program
(164 Python, 164 JavaScript) as a run_python/run_javascript call with
reset: true in one stdio session per language must end exactly as it does
through `codecage run --json` (bench/mcp.py humaneval compares them)."""
import os
import subprocess
import sys

import pytest

from conftest import CLI, DATA, ROOT


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["python", "javascript"])
def test_humaneval_via_mcp_matches_the_cli(lang):
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "mcp.py"), "humaneval",
                           "--data", DATA, "--codecage", CLI, "--lang", lang],
                          capture_output=True, text=True, timeout=1200)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "0 programs differ between the MCP server and the CLI" in proc.stdout, out
    if lang == "python":
        assert "python      mcp  164 passed,   0 failed" in proc.stdout, out
    else:
        # the same three fail under node too (bench/humaneval.py)
        assert "javascript  mcp  161 passed,   3 failed" in proc.stdout, out
