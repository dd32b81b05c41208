"""Allocation-failure injection, as SQLite does it (tests/alloc/allocfail.c
interposes the allocator in each driver): every single allocation of a
path fails in turn, for every N until the path completes, and each run must
end in a clean error (an error kind, internal for the host's own memory;
nothing sent to the worker with a hole in it; an ok result never with a
wrong value or its output lost), leave no process or descriptor behind, and
a runtime that says it is alive must still answer. Run from the plain
build and the ASan/UBSan one (build-asan: leaks and memory errors on those
error paths too; the workers stay the plain build's, conftest.ASAN_BUILD).

- decode_driver.c: the supervisor's decoder (cc_msg_parse: mp_reader.c,
  value.c, protocol.c) on the frame fuzzer's corpus, and a result's value
  encoded again (cc_value_encode into msgpack-c's sbuffer);
- runtime_driver.c: cc_runtime_new, cc_runtime_eval, cc_runtime_set_global,
  an eval calling a host tool, and cc_runtime_close, on real workers.
"""
import os
import subprocess

import pytest

import conftest
from conftest import ASAN_BUILD, BUILD, ROOT

BUILDS = {"plain": BUILD, "asan": ASAN_BUILD}
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")


def run(build, *args, timeout=600):
    env = conftest.sanitized_env() if build == "asan" else None
    proc = subprocess.run([os.path.join(BUILDS[build], "tests", args[0]), *args[1:]],
                          capture_output=True, text=True, timeout=timeout, env=env)
    out = proc.stdout + proc.stderr
    conftest.assert_no_sanitizer_report(out)
    assert "FAIL" not in proc.stdout, out[-6000:]
    assert proc.returncode == 0, out[-6000:]
    assert proc.stdout.rstrip().endswith("0 failed"), out[-6000:]
    return proc.stdout


def corpus(build):
    """The whole corpus in the plain build; under ASan (slower by far) the
    seeds and every input under 512 bytes, most of it."""
    files = sorted(os.listdir(CORPUS))
    if build == "asan":
        files = [f for f in files if f.startswith("seed-")
                 or os.path.getsize(os.path.join(CORPUS, f)) < 512]
    return [os.path.join(CORPUS, f) for f in files]


@pytest.mark.parametrize("build", sorted(BUILDS))
def test_decoder_fails_cleanly_at_every_allocation(build):
    files = corpus(build)
    out = run(build, "cc-allocfail-decode", *files)
    assert out.count("\nok   ") + out.startswith("ok   ") == len(files), out[-3000:]
    assert "%d inputs" % len(files) in out
    # a result's value decodes and encodes again: its pass allocates, so
    # failures were really injected
    line = [ln for ln in out.splitlines() if ln.endswith("seed-result-ok: " + ln.split(": ")[-1])
            and "seed-result-ok:" in ln]
    assert len(line) == 1 and int(line[0].split(": ")[1].split()[0]) > 10, out[-3000:]


PATHS = ["new", "eval", "set", "tool", "close"]


@pytest.mark.parametrize("build", sorted(BUILDS))
@pytest.mark.parametrize("path", PATHS)
def test_runtime_path_fails_cleanly_at_every_allocation(build, path, lang):
    out = run(build, "cc-allocfail-runtime", path, lang)
    line = [ln for ln in out.splitlines() if ln.startswith("ok   %s %s:" % (path, lang))]
    assert len(line) == 1, out
    count = int(line[0].split("each of ")[1].split()[0])
    # every path but close allocates (close only frees, and is checked for
    # processes and descriptors)
    assert count > 0 or path == "close", out
