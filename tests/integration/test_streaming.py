"""The CLI without --json passes guest output through while the eval runs
(issue 16, item 1). Latency only as ordering: the guest writes a line and
then waits far longer than BOUND; the line must be readable while the
process still runs."""
import os
import select
import subprocess

import pytest

from conftest import CLI, cli

BOUND = 15  # seconds: only reached when output is not streamed

WAIT = {
    ("python", 1): "import time\nprint('first', flush=True)\ntime.sleep(120)",
    ("python", 2): "import sys, time\nprint('first', file=sys.stderr)\ntime.sleep(120)",
    ("javascript", 1): "console.log('first'); for (;;) {}",
    ("javascript", 2): "console.error('first'); for (;;) {}",
}


def _read_line(fd):
    got = b""
    while not got.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], BOUND)
        assert ready, f"nothing streamed within {BOUND} s (got {got!r})"
        chunk = os.read(fd, 4096)
        assert chunk, f"the stream ended first (got {got!r})"
        got += chunk
    return got


@pytest.mark.parametrize("lang", ["python", "javascript"])
@pytest.mark.parametrize("fd", [1, 2])
def test_cli_passes_output_through_live(lang, fd):
    proc = subprocess.Popen([CLI, "eval", "--lang", lang, "--timeout", "120", "--",
                             WAIT[lang, fd]], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = _read_line((proc.stdout if fd == 1 else proc.stderr).fileno())
        assert line == b"first\n"
        assert proc.poll() is None  # the eval still runs
    finally:
        proc.kill()
        proc.wait(BOUND)
        proc.stdout.close()
        proc.stderr.close()


@pytest.mark.parametrize("lang, code, out", [
    ("python", "import sys\nprint('a')\nsys.stderr.write('e\\n')\nprint('b', end='')\n7",
     "a\nb7\n"),
    ("javascript", "console.log('a'); console.error('e'); console.log('b'); 7", "a\nb\n7\n"),
])
def test_cli_streamed_bytes_are_exact(lang, code, out):
    """Passing through keeps the bytes: a last line without its newline is
    written as it is, then the value."""
    r = cli("eval", "--lang", lang, "--", code)
    assert r.rc == 0, r
    assert (r.stdout, r.stderr) == (out, "e\n")


def test_cli_truncation_marker_still_printed():
    """Output over the cap: what was streamed, then the marker."""
    r = cli("eval", "--lang", "python", "--", "for i in range(10**6): print('x' * 99)")
    assert r.rc != 0
    assert r.stdout.endswith("[codecage: stdout truncated at 1048576 bytes]\n")
    assert r.stdout.count("x" * 99 + "\n") == 1048576 // 100
