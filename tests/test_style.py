"""The tree keeps one format (.clang-format, kernel style) and files of
modest size (STYLE.md: under about 1,000 lines)."""
import os
import subprocess

from conftest import ROOT


def tracked(*patterns):
    out = subprocess.run(["git", "ls-files", *patterns], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()
    return [os.path.join(ROOT, p) for p in out]


def test_c_sources_follow_clang_format():
    files = tracked("*.c", "*.h")
    assert files
    proc = subprocess.run(["clang-format", "--dry-run", "--Werror", *files], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, "run clang-format -i on:\n" + proc.stderr[-3000:]


def test_files_stay_modest():
    for path in tracked("*.c", "*.h", "*.py"):
        with open(path, encoding="utf-8") as f:
            n = sum(1 for _ in f)
        assert n <= 1000, "%s has %d lines; split it by role" % (path, n)
