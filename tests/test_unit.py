"""Runs the Criterion unit-test binaries (codec, UTF-8, frame validation),
from the normal build and from the ASan/UBSan build (build-asan)."""
import os
import subprocess

import pytest

from conftest import ASAN_BUILD, BUILD, ROOT

UNIT = ["test_utf8", "test_value", "test_cleanup", "test_names", "test_protocol", "test_net_policy",
        "test_lib_scan"]
BUILDS = {"plain": BUILD, "asan": ASAN_BUILD}


@pytest.mark.parametrize("build", sorted(BUILDS))
@pytest.mark.parametrize("name", UNIT)
def test_criterion(name, build):
    exe = os.path.join(BUILDS[build], "tests", name)
    env = dict(os.environ, UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
               ASAN_OPTIONS="detect_leaks=1")
    proc = subprocess.run([exe, "--jobs=1", "--verbose"], capture_output=True, text=True,
                          timeout=300, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "Synthesis: Tested:" in out
    assert "Failing: 0" in out and "Crashing: 0" in out
    assert "runtime error" not in out and "ERROR: AddressSanitizer" not in out, out


# fuzz target -> (its replay binary, its corpus under tests/fuzz)
FUZZ = {"frame": ("cc-fuzz-replay", "corpus"),
        "jsonrpc": ("cc-fuzz-jsonrpc-replay", "corpus-jsonrpc")}


@pytest.mark.parametrize("build", sorted(BUILDS))
@pytest.mark.parametrize("target", sorted(FUZZ))
def test_fuzz_corpus_replays_clean(target, build):
    """Every input a fuzzer kept (tests/fuzz/corpus: the frame decoder and
    validator; corpus-jsonrpc: the MCP server's JSON-RPC parser, whose
    target also checks the parser's contract) goes through its target
    again, also under ASan/UBSan."""
    exe_name, corpus_name = FUZZ[target]
    corpus = os.path.join(ROOT, "tests", "fuzz", corpus_name)
    files = sorted(os.path.join(corpus, f) for f in os.listdir(corpus))
    assert len(files) >= 10
    exe = os.path.join(BUILDS[build], "tests", exe_name)
    env = dict(os.environ, UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
               ASAN_OPTIONS="detect_leaks=1")
    proc = subprocess.run([exe, *files], capture_output=True, text=True, timeout=300, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "replayed %d inputs" % len(files) in out
    assert "runtime error" not in out and "Sanitizer" not in out, out
