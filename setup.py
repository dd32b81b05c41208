"""Build the Python package `codecage` (python/codecage + src/python).

How it is built (HACKING.md, "The Python package"):
  1. meson/ninja build libcodecage and the two worker executables into a
     build directory of their own: build-python/meson, or the directory
     named by $CODECAGE_MESON_BUILD (the test suite reuses build/). The
     first build fetches QuickJS from Debian (scripts/fetch-quickjs.sh).
  2. setuptools compiles the extension codecage._codecage (src/python/*.c)
     against that libcodecage, with an rpath of $ORIGIN/_bin.
  3. libcodecage.so.0, codecage-worker-js, codecage-worker-py and codecage-deps are copied
     into the package as codecage/_bin/, where libcodecage finds the
     workers (next to itself) and where codecage passes them as worker_dir.

`pip install .` goes through python/build_backend.py (pyproject.toml), a
dependency-free PEP 517 backend that runs this file with the interpreter's
own setuptools, so the install works offline and without `wheel`.
`python3 setup.py build` works directly too.
"""
import fcntl
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(ROOT, "python"))
from build_backend import project_version  # noqa: E402  (meson.build's version)
WORKERS = ("codecage-worker-js", "codecage-worker-py")
LIB = "libcodecage.so.0"  # the soname the extension records
HELPER = "codecage-deps"  # installs dependencies (src/lib/deps_helper.py; meson copies it)


def meson_dir():
    d = os.environ.get("CODECAGE_MESON_BUILD")
    return os.path.abspath(d) if d else os.path.join(ROOT, "build-python", "meson")


def build_native(bdir):
    """Configure (once) and build libcodecage and the workers in bdir,
    holding $CODECAGE_BUILD_LOCK (a file to flock) when it is set."""
    lock = None
    if os.environ.get("CODECAGE_BUILD_LOCK"):
        lock = open(os.environ["CODECAGE_BUILD_LOCK"], "a")
        fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        if not os.path.exists(os.path.join(bdir, "build.ninja")):
            subprocess.check_call(["meson", "setup", bdir, ROOT, "--buildtype=debugoptimized"])
        subprocess.check_call(["meson", "compile", "-C", bdir, "codecage:shared_library",
                               *WORKERS])
    finally:
        if lock:
            lock.close()


class BuildExt(build_ext):
    def run(self):
        bdir = meson_dir()
        build_native(bdir)
        for ext in self.extensions:
            ext.extra_objects = [os.path.join(bdir, LIB)]
        super().run()
        dests = [os.path.join(self.build_lib, "codecage", "_bin")]
        if self.inplace:
            dests = [os.path.join(ROOT, "python", "codecage", "_bin")]
        for dest in dests:
            os.makedirs(dest, exist_ok=True)
            for name in (LIB, *WORKERS, HELPER):
                # Resolve meson's symlinks: the package holds real files.
                shutil.copy2(os.path.realpath(os.path.join(bdir, name)),
                             os.path.join(dest, name))


ext = Extension(
    "codecage._codecage",
    sources=["src/python/module.c", "src/python/runtime.c", "src/python/options.c",
             "src/python/deps.c",
             "src/python/values.c",
             "src/python/net.c", "src/common/py_from_value.c",
             "src/common/py_objects.c", "src/common/utf8.c",
             "src/common/civil.c"],
    include_dirs=["include", "src/common"],
    extra_compile_args=["-std=gnu11", "-Wall", "-Wextra", "-Wno-missing-field-initializers",
                        "-Wno-cast-function-type"],
    extra_link_args=["-Wl,-rpath,$ORIGIN/_bin"],
)

setup(
    name="codecage",
    version=project_version(),
    description="Run the Python and JavaScript that AI agents write in a confined worker",
    license="MIT",
    python_requires=">=3.11",
    package_dir={"": "python"},
    packages=["codecage", "codecage.integrations"],
    package_data={"codecage": ["py.typed", "*.pyi"]},
    ext_modules=[ext],
    cmdclass={"build_ext": BuildExt},
    options={"build": {"build_base": os.path.join("build-python", "setuptools")}},
    zip_safe=False,
)
