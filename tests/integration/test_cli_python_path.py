"""`codecage run|eval --python-path DIR` (repeatable): the guest imports
packages from host folders, read-only, at /codecage/python-path/N, in the
order given; a bad folder is invalid input (exit 2) naming python_path."""
import os
import shutil
import tempfile

import pytest

from conftest import cli, ev


@pytest.fixture
def folders():
    """Two package folders the worker's uid (nobody on a root host) can
    reach (pytest's own tmp folders are 0700)."""
    d = tempfile.mkdtemp(prefix="cc-cli-pp-")
    os.chmod(d, 0o755)
    for n, body in (("a", "NAME = 'first'\n"), ("b", "NAME = 'second'\n")):
        os.makedirs(os.path.join(d, n, "ccpp_mod"))
        with open(os.path.join(d, n, "ccpp_mod", "__init__.py"), "w") as f:
            f.write(body)
        with open(os.path.join(d, n, "ccpp_only_%s.py" % n), "w") as f:
            f.write("X = %r\n" % n)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_python_path_folders_are_importable_in_order(folders):
    a, b = os.path.join(folders, "a"), os.path.join(folders, "b")
    r = ev("python", "import ccpp_mod, ccpp_only_a, ccpp_only_b\n"
           "[ccpp_mod.NAME, ccpp_mod.__file__, ccpp_only_b.X]",
           "--python-path", a, "--python-path", b)
    assert r.kind == "ok", r.stdout + r.stderr
    assert r.json["value"] == ["first", "/codecage/python-path/0/ccpp_mod/__init__.py", "b"]


def test_without_python_path_the_module_is_missing(folders):
    r = ev("python", "import ccpp_mod")
    assert r.kind == "guest_error"
    assert "python-path" in r.json["error"]["message"]


def test_text_mode_shows_the_missing_module_hint():
    """Regression: the hint was only in --json's message; text mode prints
    the traceback, whose last line was the bare "No module named ..."."""
    r = cli("eval", "--lang", "python", "--", "import ccpp_nowhere")
    assert r.rc == 1, r.stderr
    last = r.stderr.strip().split("\n")[-1]
    assert last.startswith("ModuleNotFoundError: No module named 'ccpp_nowhere'"), r.stderr
    assert "--python-path DIR" in last, r.stderr
    # the exception itself is unchanged: its str() has no hint
    r = ev("python", "try:\n    import ccpp_nowhere\nexcept ImportError as e:\n    r = str(e)\nr")
    assert r.json["value"] == "No module named 'ccpp_nowhere'", r.stdout


@pytest.mark.parametrize("bad,why", [("relative", "absolute"),
                                     ("/no/such/codecage-dir", "readable directory")])
def test_bad_python_path_is_invalid_input(bad, why):
    r = ev("python", "1", "--python-path", bad)
    assert r.rc == 2 and r.kind == "invalid_input", r.stdout + r.stderr
    assert "python_path[0]" in r.json["error"]["message"] and why in r.json["error"]["message"]


def test_javascript_refuses_python_path(folders):
    r = ev("javascript", "1", "--python-path", folders)
    assert r.rc == 2 and "python_path" in r.json["error"]["message"]
