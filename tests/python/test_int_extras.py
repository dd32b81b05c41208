"""The package's extras, one per agent framework: declared in the wheel's
METADATA by python/build_backend.py (from its EXTRAS table), named by each
integration's ImportError when its framework is missing, and installable
offline from the wheels scripts/install-deps downloaded (.venv/wheels) into
a fresh venv with nothing else in it."""
import os
import subprocess
import sys

import pytest

import ccpkg
from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "python"))
import build_backend  # noqa: E402

sys.path.pop(0)

MODULES = {"pydantic-ai": ("pydantic_ai", "pydantic_ai"), "fastmcp": ("fastmcp", "fastmcp"),
           "smolagents": ("smolagents", "smolagents"), "langchain": ("langchain", "langchain_core")}
WHEELS = os.path.join(ROOT, ".venv", "wheels")


def test_every_integration_has_an_extra_in_the_wheels_metadata(tmp_path):
    assert set(build_backend.EXTRAS) == set(MODULES)
    dist = build_backend.prepare_metadata_for_build_wheel(str(tmp_path))
    meta = (tmp_path / dist / "METADATA").read_text().splitlines()
    for extra, reqs in build_backend.EXTRAS.items():
        assert "Provides-Extra: " + extra in meta
        for r in reqs:
            assert 'Requires-Dist: %s ; extra == "%s"' % (r, extra) in meta


def test_a_missing_framework_names_its_extra():
    for extra, (module, framework) in MODULES.items():
        code = ("import sys; sys.modules[%r] = None\n"
                "try:\n    import codecage.integrations.%s\n"
                "except ImportError as e:\n    print(e)\n") % (framework, module)
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=ccpkg.PKG_DIR), timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "pip install 'codecage[%s]'" % extra in proc.stdout, proc.stdout


@pytest.mark.slow
def test_the_extras_install_offline_into_a_fresh_venv(tmp_path):
    assert os.path.isdir(WHEELS), ("%s is missing: run scripts/install-deps, which downloads the"
                                   " pinned wheels of requirements/host.txt there" % WHEELS)
    env = dict(ccpkg.build_env(), PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    wheel_dir = tmp_path / "wheel"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir",
                           "-w", str(wheel_dir), "."], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True, timeout=300)
    extras = ",".join(build_backend.EXTRAS)
    proc = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-index",
                           "--find-links", WHEELS, "--find-links", str(wheel_dir),
                           "codecage[%s]" % extras], env=env, capture_output=True, text=True,
                          timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    imports = "; ".join("import codecage.integrations.%s" % m for m, _ in MODULES.values())
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", imports + "; print('ok')"],
                          cwd=str(tmp_path), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout == "ok\n", proc.stdout + proc.stderr
