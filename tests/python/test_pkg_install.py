"""`pip install .` works offline with the interpreter that runs the tests
(Debian's python3 in CI): pip takes pyproject.toml's dependency-free backend
(python/build_backend.py), which builds with the interpreter's own
setuptools. Installed with --target into a temporary directory, so nothing
outside it changes; the meson build is shared with the rest of the suite."""
import os
import subprocess
import sys

import ccpkg
from conftest import ROOT

SNIPPET = """
import codecage
codecage.configure_default_runtime(isolated=True, sandbox="require")
print(codecage.eval("1 + 1"))
print(codecage.__file__)
print(codecage.__version__)
"""


def test_pip_install_target_then_import(tmp_path):
    target = tmp_path / "site"
    env = ccpkg.build_env()
    env["PIP_NO_INDEX"] = "1"  # prove it needs nothing from an index
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps",
                           "--no-cache-dir", "--target", str(target), "."],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    pkg = target / "codecage"
    for f in ("_bin/codecage-worker-js", "_bin/codecage-worker-py", "_bin/libcodecage.so.0"):
        assert os.access(pkg / f, os.X_OK), f
    assert (pkg / "py.typed").exists() and (pkg / "_codecage.pyi").exists()
    # The wheel's Python worker is the meson build's: CPython linked in
    # (tests/integration/test_py_worker_link.py), no libpython3.11.so.
    dyn = subprocess.run(["readelf", "-d", str(pkg / "_bin/codecage-worker-py")],
                         capture_output=True, text=True, check=True).stdout
    assert "libc.so.6" in dyn and "libpython" not in dyn, dyn
    run = subprocess.run([sys.executable, "-c", SNIPPET], cwd=str(tmp_path),
                         env=dict(os.environ, PYTHONPATH=str(target)), capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    value, where, version = run.stdout.split()
    assert value == "2" and where.startswith(str(target))
    # one version, meson's (issue 27), in the wheel's metadata and the module
    want = ccpkg.meson_version()
    assert version == want and (target / f"codecage-{want}.dist-info").is_dir(), version
