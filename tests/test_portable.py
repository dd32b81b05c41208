"""The tree builds beyond x86 (issue 22): the spin loops relax through
src/common/cpu_relax.h, which clang compiles for aarch64, 32-bit ARM and
RISC-V as well as x86-64, to the instruction each should use."""
import os
import shutil
import subprocess

import pytest

from conftest import ROOT

# target triple -> the instruction cc_cpu_relax must become (None: a bare
# compiler barrier, no instruction)
TARGETS = {"x86_64-linux-gnu": "pause", "aarch64-linux-gnu": "yield",
           "armv7a-linux-gnueabihf": "yield", "riscv64-linux-gnu": None}


def test_no_architecture_builtin_outside_cpu_relax_h():
    out = subprocess.run(["git", "grep", "-l", "__builtin_ia32_", "--", "*.c", "*.h"], cwd=ROOT,
                         capture_output=True, text=True).stdout.split()
    assert out == ["src/common/cpu_relax.h"], out


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_cpu_relax_builds_for(target, tmp_path):
    if not shutil.which("clang"):
        pytest.fail("clang is needed (scripts/install-deps installs it)")
    src = tmp_path / "relax.c"
    src.write_text('#include "cpu_relax.h"\nvoid f(void) { cc_cpu_relax(); }\n')
    asm = tmp_path / "relax.s"
    proc = subprocess.run(["clang", "--target=" + target, "-O2", "-Wall", "-Werror",
                           "-I", os.path.join(ROOT, "src", "common"), "-S", str(src),
                           "-o", str(asm)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    dis = asm.read_text()
    words = dis.split()
    want = TARGETS[target]
    if want:
        assert want in words, dis
    else:
        assert "pause" not in words and "yield" not in words, dis
