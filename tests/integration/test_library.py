"""The C library through tests/integration/libdriver.c: every value type
host -> guest -> host, state across evals, soft stops that keep the runtime,
dead runtimes, bad options, and 500 runtimes in a row without leaks."""
import os
import subprocess

import pytest

from conftest import BUILD

DRIVER = os.path.join(BUILD, "tests", "cc-libdriver")


def drive(*args, timeout=300):
    proc = subprocess.run([DRIVER, *args], capture_output=True, text=True, timeout=timeout)
    assert "FAIL" not in proc.stdout, proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.rstrip().endswith("0 failed"), proc.stdout
    return proc.stdout


def test_value_roundtrip(lang):
    out = drive("roundtrip", lang)
    assert out.count("ok   ") >= 30


def test_state_persists(lang):
    drive("state", lang)


def test_soft_stops_keep_the_runtime(lang):
    drive("afterstop", lang)


def test_dead_runtime_then_new(lang):
    drive("dead", lang)


def test_bad_options():
    drive("badopts")


@pytest.mark.slow
def test_500_runtimes_no_leak(lang):
    drive("many", lang, "500", timeout=600)
