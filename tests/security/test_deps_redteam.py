"""Red team, dependencies (issue 33): a session with dependencies gets its
lock's cache folder read-only and nothing beside it. Each probe also runs
in reverse: unconfined (sandbox off) it must see the breach."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from conftest import ev  # noqa: E402
from deps_index import Index  # noqa: E402


@pytest.fixture(scope="module")
def ix2():
    """An index with two locks in its cache already."""
    i = Index()
    # two locks in one cache: the guest of one must not reach the other
    for spec in ("ccdemo-pkg==1.0", "ccdemo-pkg==2.0"):
        r = ev("python", "1", *i.flags(), "--dependency", spec, timeout=300)
        assert r.kind == "ok", r
    yield i
    i.close()


WRITE = ("import ccdemo_pkg, os\n"
         "p = os.path.join(os.path.dirname(ccdemo_pkg.__file__), 'planted.py')\n"
         "try:\n"
         "    open(p, 'w').write('x = 1')\n"
         "    out = 'wrote'\n"
         "except OSError as e:\n"
         "    out = type(e).__name__\n"
         "out")

SIBLING = ("import ccdemo_pkg, os\n"
           "site = os.path.dirname(os.path.dirname(ccdemo_pkg.__file__))\n"
           "lock = os.path.dirname(site)\n"
           "cache = os.path.dirname(lock)\n"
           "try:\n"
           "    out = sorted(n for n in os.listdir(cache) if n.startswith('py-'))\n"
           "except OSError as e:\n"
           "    out = type(e).__name__\n"
           "out")


def test_the_lock_folder_is_read_only(ix2):
    r = ev("python", WRITE, *ix2.flags(), "--dependency", "ccdemo-pkg==1.0", timeout=300)
    assert r.kind == "ok" and r.value in ("OSError", "PermissionError"), r


def test_reverse_unconfined_the_write_lands(ix2):
    r = ev("python", WRITE, *ix2.flags(), "--dependency", "ccdemo-pkg==1.0", "--sandbox", "off",
           timeout=300)
    try:
        assert r.kind == "ok" and r.value == "wrote", r
    finally:
        for root, dirs, files in os.walk(ix2.cache):
            if "planted.py" in files:
                os.unlink(os.path.join(root, "planted.py"))


def test_no_other_lock_folder_is_in_sight(ix2):
    r = ev("python", SIBLING, *ix2.flags(), "--dependency", "ccdemo-pkg==1.0", timeout=300)
    assert r.kind == "ok" and r.value in ("PermissionError", "FileNotFoundError"), r
    # nor by its host path
    keys = sorted(n for n in os.listdir(ix2.cache) if n.startswith("py-"))
    other = os.path.join(ix2.cache, keys[0], "site")
    r = ev("python", "import os\ntry:\n    out = os.listdir(%r)\nexcept OSError as e:\n"
           "    out = type(e).__name__\nout" % other, *ix2.flags(), "--dependency",
           "ccdemo-pkg==1.0", timeout=300)
    assert r.kind == "ok" and r.value in ("PermissionError", "FileNotFoundError"), r


def test_reverse_unconfined_the_siblings_are_listed(ix2):
    r = ev("python", SIBLING, *ix2.flags(), "--dependency", "ccdemo-pkg==1.0", "--sandbox", "off",
           timeout=300)
    assert r.kind == "ok" and len(r.value) == 2, r


JS_LIST = ("let out; try { out = require('fs').readdirSync(%r).length } "
           "catch (e) { out = e.code || e.name } out")


def test_a_javascript_guest_sees_no_cache(ix2):
    """The host reads a JavaScript lock's bundles; nothing is granted."""
    # a scratch, so that require exists (it does only with files) and the
    # refusal is the file system's
    r = ev("javascript", JS_LIST % ix2.cache, *ix2.flags(), "--dependency", "cc-lib",
           "--scratch", "1", timeout=300)
    assert r.kind == "ok" and r.value == "ENOENT", r


def test_reverse_unconfined_the_javascript_guest_lists_it(ix2):
    r = ev("javascript", JS_LIST % ix2.cache, *ix2.flags(), "--dependency", "cc-lib",
           "--scratch", "1", "--sandbox", "off", timeout=300)
    assert r.kind == "ok" and isinstance(r.value, int) and r.value > 0, r


MAP_EXEC = ("import mmap\nf = open(%r, 'rb')\ntry:\n"
            "    mmap.mmap(f.fileno(), 4096, flags=mmap.MAP_PRIVATE,\n"
            "              prot=mmap.PROT_READ | mmap.PROT_EXEC)\n"
            "    out = 'mapped'\nexcept OSError as e:\n    out = type(e).__name__\nout")


def exec_file(ix2):
    d = os.path.join(ix2.root, "w")
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o777)
    with open(os.path.join(d, "x.bin"), "wb") as f:
        f.write(b"\0" * 4096)
    os.chmod(os.path.join(d, "x.bin"), 0o666)
    return d


def test_writable_grants_stay_noexec(ix2):
    """Only read-only python_path folders map executable: a file in a
    writable mount does not (mmap PROT_EXEC is refused: noexec)."""
    d = exec_file(ix2)
    r = ev("python", MAP_EXEC % "/data/x.bin", "--mount", "%s:/data:rw" % d)
    assert r.kind == "ok" and r.value == "PermissionError", r


def test_reverse_unconfined_the_exec_mapping_works(ix2):
    d = exec_file(ix2)
    r = ev("python", MAP_EXEC % os.path.join(d, "x.bin"), "--sandbox", "off")
    assert r.kind == "ok" and r.value == "mapped", r
