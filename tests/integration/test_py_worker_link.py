"""The Python worker has CPython linked in statically (meson.build), as
Debian's /usr/bin/python3 has: libpython3.11.a, built with PGO and without
-fPIC, not libpython3.11.so. Extension modules (numpy, pandas, the stdlib's
lib-dynload) link against the C API, so the worker must export every symbol
libpython3.11.so exports, and nothing of its own (an extension module's
symbol of the same name would bind to it)."""
import os
import subprocess

import pytest

from conftest import BUILD, ev

WORKER = os.path.join(BUILD, "codecage-worker-py")


def libpython_so():
    libdir = subprocess.run(["pkg-config", "--variable=libdir", "python-3.11-embed"],
                            capture_output=True, text=True, check=True).stdout.strip()
    return os.path.realpath(os.path.join(libdir, "libpython3.11.so"))


def needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True,
                         check=True).stdout
    return [ln.split("[", 1)[1].rstrip("]") for ln in out.splitlines() if "(NEEDED)" in ln]


def exported(path):
    """The defined symbols of path's dynamic symbol table."""
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    return {ln.split()[-1].split("@")[0] for ln in out.splitlines() if ln.strip()}


def worker_needs_no_libpython(path):
    libs = needed(path)
    assert "libc.so.6" in libs, libs  # readelf read the dynamic section
    assert not [n for n in libs if n.startswith("libpython")], libs


def test_python_worker_has_no_libpython_needed():
    worker_needs_no_libpython(WORKER)


def test_python_worker_exports_the_c_api_and_nothing_of_its_own():
    want, have = exported(libpython_so()), exported(WORKER)
    assert len(want) > 1000, len(want)
    assert not want - have, sorted(want - have)[:20]
    # The rest is the C runtime's (copy relocations of stdin/stdout, _end):
    # no codecage symbol.
    own = sorted(s for s in have - want if s.startswith("cc_"))
    assert not own, own


@pytest.mark.userns
@pytest.mark.seccomp
@pytest.mark.landlock
def test_extension_modules_load_in_the_confined_worker():
    # Stdlib extension modules from lib-dynload and Debian's numpy/pandas,
    # each needing C API symbols only the worker's export table gives.
    code = ("import _decimal, _ctypes, _sqlite3, _lzma, _bz2, _hashlib, numpy, pandas\n"
            "[float(numpy.arange(4).sum()), int(pandas.Series([1, 2]).sum())]")
    r = ev("python", code, timeout=120)
    assert r.kind == "ok", r
    assert r.value == [6.0, 3], r
