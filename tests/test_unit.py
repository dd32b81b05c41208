"""Runs the Criterion unit-test binaries (codec, UTF-8, frame validation)."""
import os
import subprocess

import pytest

from conftest import BUILD

UNIT = ["test_utf8", "test_value", "test_protocol"]


@pytest.mark.parametrize("name", UNIT)
def test_criterion(name):
    exe = os.path.join(BUILD, "tests", name)
    proc = subprocess.run([exe, "--jobs=1", "--verbose"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Synthesis: Tested:" in proc.stderr + proc.stdout
    assert "Failing: 0" in proc.stderr + proc.stdout
