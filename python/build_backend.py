"""A dependency-free PEP 517 build backend for `pip install .` (pyproject.toml).

pip builds in an isolated environment and would download setuptools and
wheel into it, but PyPI is not reachable and not every Python has `wheel`.
This backend needs neither: it runs setup.py with the interpreter's own
setuptools (outside pip's isolation: PYTHONPATH and PYTHONNOUSERSITE are
dropped for that one subprocess) to build into a staging directory, then
writes the wheel itself (a zip with METADATA, WHEEL and RECORD). Only the
standard library is used here.
"""

import base64
import hashlib
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "codecage"

# The optional extras, one per agent framework that codecage.integrations
# plugs into (`pip install .[pydantic-ai]`): extra -> requirements. The
# floors are the versions requirements/host.txt pins and the tests run
# against (tests/python/test_int_*.py); the ceilings the next major.
EXTRAS = {
    "pydantic-ai": ["pydantic-ai-slim>=2.68.0,<3"],
    "fastmcp": ["fastmcp>=4.2.3,<5"],
    "smolagents": ["smolagents>=1.26.0,<2"],
    "langchain": ["langchain-core>=1.8.3,<2"],
}


def project_version():
    """The version in meson.build's project(): the one place it is written
    (libcodecage's cc_version(), the CLI's --version, the wheel's and
    setup.py's version, codecage.__version__ all come from it)."""
    with open(os.path.join(ROOT, "meson.build"), encoding="utf-8") as f:
        m = re.search(r"^project\(\s*'codecage'.*?\bversion\s*:\s*'([^']+)'", f.read(),
                      re.S | re.M)
    if not m:
        raise RuntimeError("meson.build's project() names no version")
    return m.group(1)


_version = project_version


def _tag():
    impl = "cp%d%d" % sys.version_info[:2]
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "%s-%s-%s" % (impl, impl, plat)


def _metadata():
    return ("Metadata-Version: 2.1\n"
            "Name: %s\n"
            "Version: %s\n"
            "Summary: Run the Python and JavaScript that AI agents write in a confined worker\n"
            "License: MIT\n"
            "Requires-Python: >=3.11\n" % (NAME, _version()) + _extras_metadata())


def _extras_metadata():
    """EXTRAS as METADATA lines (core metadata 2.1: Provides-Extra, then
    each requirement marked with its extra)."""
    out = []
    for extra, reqs in EXTRAS.items():
        out.append("Provides-Extra: %s\n" % extra)
        out += ['Requires-Dist: %s ; extra == "%s"\n' % (r, extra) for r in reqs]
    return "".join(out)


def _dist_info():
    return "%s-%s.dist-info" % (NAME, _version())


def _write_dist_info(directory):
    d = os.path.join(directory, _dist_info())
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    return os.path.basename(d)


def _setup_py(*args):
    env = dict(os.environ)
    for k in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONNOUSERSITE"):
        env.pop(k, None)
    subprocess.check_call([sys.executable, os.path.join(ROOT, "setup.py"), *args], cwd=ROOT,
                          env=env, stdout=sys.stderr)


def _hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _write_dist_info(metadata_directory)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    with tempfile.TemporaryDirectory(prefix="codecage-wheel-") as stage:
        lib = os.path.join(stage, "lib")
        _setup_py("-q", "build", "--build-lib", lib, "--force")
        name = "%s-%s-%s.whl" % (NAME, _version(), _tag())
        path = os.path.join(wheel_directory, name)
        dist = _dist_info()
        records = []
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:

            def add(arc, data, mode=0o644):
                info = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
                info.external_attr = (0o100000 | mode) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, data)
                records.append("%s,%s,%d" % (arc, _hash(data), len(data)))

            for top, dirs, files in os.walk(lib):
                dirs.sort()
                for fn in sorted(files):
                    full = os.path.join(top, fn)
                    arc = os.path.relpath(full, lib).replace(os.sep, "/")
                    if "__pycache__" in arc:
                        continue
                    with open(full, "rb") as f:
                        data = f.read()
                    add(arc, data, 0o755 if os.access(full, os.X_OK) else 0o644)
            add(dist + "/METADATA", _metadata().encode())
            add(dist + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: codecage build_backend\n"
                                  "Root-Is-Purelib: false\nTag: %s\n" % _tag()).encode())
            add(dist + "/top_level.txt", (NAME + "\n").encode())
            records.append(dist + "/RECORD,,")
            info = zipfile.ZipInfo(dist + "/RECORD", date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o100644 << 16
            z.writestr(info, "\n".join(records) + "\n")
    return name


def build_sdist(sdist_directory, config_settings=None):
    """The tracked source tree (git ls-files) as NAME-VERSION.tar.gz."""
    base = "%s-%s" % (NAME, _version())
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split("\n")
    path = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(path, "w:gz") as t:
        for f in files:
            if f and os.path.exists(os.path.join(ROOT, f)):
                t.add(os.path.join(ROOT, f), arcname=base + "/" + f)
        pkg = os.path.join(sdist_directory, "PKG-INFO")
        with open(pkg, "w", encoding="utf-8") as out:
            out.write(_metadata())
        t.add(pkg, arcname=base + "/PKG-INFO")
        os.unlink(pkg)
    return base + ".tar.gz"
