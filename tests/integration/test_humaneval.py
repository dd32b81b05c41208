"""The first real workload: HumanEval-X programs through `codecage run`
match plain python3 and node program by program (bench/humaneval.py)."""
import os
import subprocess
import sys

import pytest

from conftest import CLI, DATA, ROOT


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["python", "javascript"])
def test_humaneval_matches_reference(lang):
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "humaneval.py"),
                           "--data", DATA, "--codecage", CLI, "--lang", lang],
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 programs differ from the reference" in proc.stdout
    if lang == "javascript":
        # two canonical solutions fail their own assertions, one needs npm
        assert "node     161 passed,   3 failed" in proc.stdout, proc.stdout
        assert "codecage 161 passed,   3 failed" in proc.stdout, proc.stdout
    else:
        assert "codecage 164 passed,   0 failed" in proc.stdout, proc.stdout
