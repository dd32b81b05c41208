"""The flags `codecage run`/`eval` and `codecage mcp` share (src/frontend/flags.c):
the same text means the same in both, and a range is the library's
(cc_options_check), reported with the flag's name."""
import os
import shutil
import subprocess
import tempfile

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


def assert_try_help(front, r):
    """A usage error: one line, then where the help is; never the whole
    help text (issue 27)."""
    cmd = "codecage" if front == "cli" else "codecage mcp"
    lines = r.stderr.splitlines()
    assert lines[-1] == f"try '{cmd} --help'" and "usage:" not in r.stderr, r
    assert lines[-2].startswith(cmd + ": "), r


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
def test_timeout_range_is_the_librarys(front):
    for bad in ("0", "-1", "86401", "inf", "nan"):
        r = run(front, "--timeout", bad)
        assert r.returncode == 2, (bad, r)
        assert f"--timeout: timeout must be in (0, 86400] seconds, not '{bad}'" in r.stderr, r
        assert_try_help(front, r)
    r = run(front, "--timeout", "abc")
    assert r.returncode == 2 and "--timeout wants seconds, not 'abc'" in r.stderr, r
    for good in ("86400", "0.0001"):
        r = run(front, "--timeout", good)
        assert r.returncode == 0, (good, r)


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
def test_mount_splits_at_the_last_colon(front):
    """HOST:GUEST[:rw]: the guest path follows the last ':' (a trailing :rw
    or :ro taken off), so a host path may hold ':'; the same in both."""
    tmp = tempfile.mkdtemp(prefix="cc-flags-")  # searchable by the guest's uid
    try:
        os.chmod(tmp, 0o755)
        mount_cases(front, tmp)
    finally:
        shutil.rmtree(tmp)


def mount_cases(front, tmp_path):
    host = os.path.join(tmp_path, "a:b")
    os.mkdir(host)
    os.chmod(host, 0o755)
    with open(os.path.join(host, "f.txt"), "w") as f:
        f.write("colon")
    os.chmod(os.path.join(host, "f.txt"), 0o644)
    for spec in (f"{host}:/data", f"{host}:/data:ro", f"{host}:/data:rw"):
        r = run(front, "--mount", spec,
                code="require('fs').readFileSync('/data/f.txt', 'utf8')")
        assert r.returncode == 0, (spec, r)
        if front == "cli":
            assert r.stdout == "colon\n", r
    for bad in ("relative", f"{host}", f"{host}:data", ":/data", f"{host}:/data:xx"):
        r = run(front, "--mount", bad)
        assert r.returncode == 2, (bad, r)
        assert "--mount" in r.stderr, r
        assert_try_help(front, r)
    r = run(front, "--mount", f"{tmp_path}/missing:x:/data")
    assert r.returncode == 2 and f"{tmp_path}/missing:x" in r.stderr, r


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
def test_scratch_has_one_range(front):
    """--scratch MIB: 0 (none) or up to the library's 64 GiB, in both."""
    for good in ("0", "1", "64"):
        r = run(front, "--scratch", good)
        assert r.returncode == 0, (good, r)
    for bad in ("65537", "-1", "1.5", "x", ""):
        r = run(front, "--scratch", bad)
        assert r.returncode == 2 and "--scratch" in r.stderr, (bad, r)
    for bad in ("65537", "99999999999999999999"):
        r = run(front, "--scratch", bad)
        # the flag's own unit (issue 27: "scratch_bytes is 68720525312")
        assert f"--scratch wants MiB: 0 for none, or 1 to 65536, not '{bad}'" in r.stderr, r
        assert "bytes" not in r.stderr, r
        assert_try_help(front, r)


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
def test_memory_range_is_the_librarys(front):
    for bad in ("15", "1048577", "-1", "x", "99999999999999999999"):
        r = run(front, "--memory", bad)
        assert r.returncode == 2 and "--memory" in r.stderr, (bad, r)
        assert_try_help(front, r)
    for bad in ("15", "1048577", "99999999999999999999"):
        r = run(front, "--memory", bad)
        # MiB, as the flag takes (issue 27: "max_memory is 15728640 bytes")
        assert f"--memory wants MiB from 16 to 1048576, not '{bad}'" in r.stderr, r
        assert "bytes" not in r.stderr, r
    r = run(front, "--memory", "16")
    assert r.returncode == 0, r


def test_mcp_runtime_limits_are_the_librarys():
    """codecage mcp's limits of each runtime take cc_options_check's
    ranges: --max-open-files was 16..1048576 here and [8, 65536] in the
    library, so 100000 started a server whose every runtime failed."""
    for flag, bad, good in (("--max-open-files", "100000", "8"), ("--max-open-files", "7", "65536"),
                            ("--cpu", "0", "1"), ("--max-result", "1023", "1024"),
                            ("--max-result", "x", "1073741824")):
        r = run("mcp", flag, bad)
        assert r.returncode == 2 and f"{flag}" in r.stderr, (flag, r)
        assert_try_help("mcp", r)
        r = run("mcp", flag, good)
        assert r.returncode == 0, (flag, good, r)
    r = run("mcp", "--max-open-files", "100000")
    assert ("--max-open-files wants what the library takes: cpu_s must be >= 1 and "
            "max_open_files in [8, 65536], not '100000'") in r.stderr, r
