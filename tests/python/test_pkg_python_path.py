"""RuntimeConfig(python_path=[...]): a package the host installed with pip
(a wheel built and installed offline here) is importable in the guest,
from a read-only folder; without the grant it is not, and the error says
how to add one."""
import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import ccpkg  # noqa: F401  (builds the package)
import pytest

import codecage
from codecage import ForkServer, IsolatedRuntime, RuntimeConfig

PKG = "ccdemo_pkg"


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(dirpath):
    """A minimal pure-Python wheel, written with zipfile (no network, no
    build backend): ccdemo_pkg 1.0 with a function and a data file."""
    files = {
        f"{PKG}/__init__.py": b"from .core import greet\n__version__ = '1.0'\n",
        f"{PKG}/core.py": (b"import importlib.resources\n"
                           b"def greet(who):\n"
                           b"    tpl = importlib.resources.files(__package__)"
                           b".joinpath('greeting.txt').read_text()\n"
                           b"    return tpl.strip().format(who=who)\n"),
        f"{PKG}/greeting.txt": b"hello, {who}\n",
        f"{PKG}-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: ccdemo-pkg\nVersion: 1.0\n",
        f"{PKG}-1.0.dist-info/WHEEL": (b"Wheel-Version: 1.0\nGenerator: codecage-test\n"
                                       b"Root-Is-Purelib: true\nTag: py3-none-any\n"),
    }
    path = os.path.join(dirpath, f"{PKG}-1.0-py3-none-any.whl")
    record = f"{PKG}-1.0.dist-info/RECORD"
    with zipfile.ZipFile(path, "w") as z:
        lines = []
        for name, data in files.items():
            z.writestr(name, data)
            lines.append(_record_line(name, data))
        lines.append(f"{record},,")
        z.writestr(record, "\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def site():
    """A pip --target folder the worker's uid (nobody on a root host) can
    reach, in a folder that also holds a file the guest must not read."""
    import pathlib
    d = pathlib.Path(tempfile.mkdtemp(prefix="cc-pp-"))
    d.chmod(0o755)
    (d / "secret.txt").write_text("host secret\n")
    (d / "secret.txt").chmod(0o644)
    whl = build_wheel(str(d))
    target = d / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps",
                           "--no-compile", "--target", str(target), whl],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (target / PKG / "core.py").exists()
    yield str(target)
    shutil.rmtree(d, ignore_errors=True)


def test_pip_installed_package_imports_through_python_path(site):
    cfg = RuntimeConfig(python_path=[site])
    with IsolatedRuntime(cfg, language="python") as rt:
        assert rt.eval(f"import {PKG}; {PKG}.greet('guest')") == "hello, guest"
        where = rt.eval(f"{PKG}.__file__")
        assert where == "/codecage/python-path/0/ccdemo_pkg/__init__.py"


def test_granted_folder_is_read_only(site):
    with IsolatedRuntime(RuntimeConfig(python_path=[site]), language="python") as rt:
        with pytest.raises(codecage.GuestError) as e:
            rt.eval("open('/codecage/python-path/0/ccdemo_pkg/new.py', 'w')")
        assert e.value.name in ("OSError", "PermissionError")
        # nothing above the grant is visible
        assert rt.eval("import os; os.path.exists(%r)" % os.path.dirname(site)) is False
    assert not os.path.exists(os.path.join(site, PKG, "new.py"))


@pytest.mark.parametrize("scratch", [0, 1 << 20])
def test_forked_sessions_import_it_too(site, scratch):
    # with scratch, each session builds its whole Landlock domain itself,
    # the package folder's grant included
    with ForkServer(RuntimeConfig(python_path=[site], scratch=scratch), language="python",
                    preload=PKG) as fs:
        with fs.session() as rt:
            assert rt.eval(f"import {PKG}; {PKG}.greet('fork')") == "hello, fork"
            with pytest.raises(codecage.GuestError):
                rt.eval("open('/codecage/python-path/0/ccdemo_pkg/x.py', 'w').close()")


def test_without_the_grant_the_error_says_how_to_add_one(site):
    with IsolatedRuntime(language="python") as rt:
        with pytest.raises(codecage.GuestError) as e:
            rt.eval(f"import {PKG}")
    assert e.value.name == "ModuleNotFoundError"
    assert "python_path" in e.value.message and "python3-" in e.value.message


@pytest.mark.parametrize("bad,why", [("relative/dir", "absolute"),
                                     ("/nonexistent/codecage-pp", "readable directory")])
def test_bad_folders_are_invalid_input(bad, why):
    with pytest.raises(codecage.InvalidInputError, match=why):
        IsolatedRuntime(RuntimeConfig(python_path=[bad]), language="python")


def test_javascript_takes_no_python_path(site):
    with pytest.raises(codecage.InvalidInputError, match="python_path"):
        IsolatedRuntime(RuntimeConfig(python_path=[site]), language="javascript")
