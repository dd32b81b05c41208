"""The Python package's tests (tests/python/test_pkg_*.py) import this first:
it builds `codecage` once per session and makes it importable.

The package is built with the running interpreter (Debian's python3 under
scripts/test) by `setup.py build` into a temporary directory, reusing the
meson build directory the rest of the suite uses (build/, or
$CODECAGE_BUILD), so nothing is installed anywhere. test_install.py checks
the real `pip install` path separately."""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

from conftest import BUILD, ROOT

PKG_DIR = tempfile.mkdtemp(prefix="codecage-pkg-")
atexit.register(shutil.rmtree, PKG_DIR, True)


def build_env():
    """setup.py reuses the test build directory (it flocks
    $CODECAGE_BUILD_LOCK around its ninja run when that is set)."""
    return dict(os.environ, CODECAGE_MESON_BUILD=BUILD)


def _build():
    proc = subprocess.run([sys.executable, "setup.py", "-q", "build", "--build-lib", PKG_DIR],
                          cwd=ROOT, env=build_env(), capture_output=True, text=True,
                          timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError("building the codecage package failed:\n" + proc.stdout[-4000:]
                           + proc.stderr[-4000:])


_build()
sys.path.insert(0, PKG_DIR)
os.environ.pop("CODECAGE_WORKER_DIR", None)


def meson_version():
    """meson.build's project version, read as a test independent of
    python/build_backend.py's own reader."""
    import re
    with open(os.path.join(ROOT, "meson.build"), encoding="utf-8") as f:
        return re.search(r"^project\('codecage',.*?version : '([^']+)'", f.read(),
                         re.S | re.M).group(1)


def fake_worker_dir(tmp_path, mode):
    """A worker_dir whose codecage-worker-js is tests/integration/fake_worker.py
    behaving as `mode` (the directory's name)."""
    d = tmp_path / mode
    d.mkdir()
    src = os.path.join(ROOT, "tests", "integration", "fake_worker.py")
    with open(src) as f:
        (d / "codecage-worker-js").write_text(f.read())
    os.chmod(d / "codecage-worker-js", 0o755)
    return str(d)
