"""`codecage mcp --python-path DIR` (repeatable): run_python imports the
packages in DIR from /codecage/python-path/N; a bad folder stops the
server before it serves (exit 2, naming python_path)."""
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import CLI
from mcp_util import Stdio


@pytest.fixture
def folder():
    d = tempfile.mkdtemp(prefix="cc-mcp-pp-")
    os.chmod(d, 0o755)
    os.makedirs(os.path.join(d, "ccmcp_mod"))
    with open(os.path.join(d, "ccmcp_mod", "__init__.py"), "w") as f:
        f.write("def hello():\n    return 'hello from a package'\n")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_run_python_imports_from_python_path(folder):
    s = Stdio("--python-path", folder)
    try:
        r = s.call("run_python", "import ccmcp_mod; [ccmcp_mod.hello(), ccmcp_mod.__file__]")
        assert r["isError"] is False, r
        assert r["structuredContent"]["value"] == [
            "hello from a package", "/codecage/python-path/0/ccmcp_mod/__init__.py"]
    finally:
        s.close()


@pytest.mark.parametrize("flag,why", [("relative", "absolute"),
                                      ("/no/such/codecage-dir", "readable directory")])
def test_bad_python_path_stops_the_server(flag, why):
    p = subprocess.run([CLI, "mcp", "--python-path", flag], input=b"", capture_output=True,
                       timeout=60)
    assert p.returncode == 2, p
    err = p.stderr.decode()
    assert "python_path[0]" in err and why in err, err
    assert p.stdout == b""
