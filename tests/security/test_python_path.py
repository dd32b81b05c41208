"""python_path (read-only package folders, issue 15) and the engine's
matplotlib cache folder: what a guest can reach through them, each probe
also run in reverse (with the layers that stop it off, or unconfined, it
must see the breach).

python_path folders are file grants (src/lib/grants.c): a read-only bind
at /codecage/python-path/N plus a Landlock rule by the supervisor's
descriptor. Layers are taken away with build/tests/security/cc-degrade as
in test_files.py (--deny landlock: the mount namespace alone; --deny
ro-remount: read-only binds fail open, Landlock alone)."""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import pytest

import conftest

from conftest import ROOT
from grant_probe import DEGRADE, attempt, guest

pytestmark = [pytest.mark.userns, pytest.mark.landlock, pytest.mark.seccomp]


@pytest.fixture
def tree():
    """base/site: a package folder (ccsec_mod) with host-made symlinks out
    of it; base/secret: a file beside it. All reachable by the worker's uid
    (nobody on a root host)."""
    base = pathlib.Path(tempfile.mkdtemp(prefix="cc-sec-pp-"))
    site, secret = base / "site", base / "secret"
    (site / "ccsec_mod").mkdir(parents=True)
    (site / "ccsec_mod" / "__init__.py").write_text("X = 1\n")
    secret.write_text("SECRET")
    os.symlink(str(secret), str(site / "abs_link"))
    os.symlink("../secret", str(site / "rel_link"))
    for p in (base, site, site / "ccsec_mod"):
        p.chmod(0o777)
    for p in (secret, site / "ccsec_mod" / "__init__.py"):
        p.chmod(0o666)
    yield {"base": base, "site": site, "secret": secret,
           "flags": ["--python-path", str(site)]}
    shutil.rmtree(base, ignore_errors=True)


PP = "/codecage/python-path/0"
ESCAPES = [
    "open('%s/../secret').read()" % PP,
    "open('%s/../../../%%s').read()" % PP,
    "open('%s/abs_link').read()" % PP,
    "open('%s/rel_link').read()" % PP,
    "os.listdir('%s/..')" % PP,
    "os.read(os.open('../secret', os.O_RDONLY, dir_fd=os.open('%s', os.O_RDONLY)), 100)" % PP,
    "open('/proc/self/fd/%%d/../secret' %% os.open('%s', os.O_RDONLY)).read()" % PP,
]


@pytest.mark.parametrize("deny", [None, "landlock"])
@pytest.mark.parametrize("expr", ESCAPES)
def test_nothing_outside_the_folder_is_readable_through_it(tree, expr, deny):
    code = attempt(expr.replace("%s", str(tree["secret"]).lstrip("/")) if "%s" in expr
                   else expr)
    r = guest(code, *tree["flags"], deny=deny, sandbox="auto" if deny else "require")
    assert r.kind == "ok", r
    assert "SECRET" not in r.value and "secret" not in r.value, r
    # the package itself is there
    r = guest("import ccsec_mod; ccsec_mod.X", *tree["flags"], deny=deny,
              sandbox="auto" if deny else "require")
    assert r.value == 1, r


def test_nothing_outside_reverse_unconfined(tree):
    """Unconfined, the folder's host path and its links lead to the secret."""
    site = str(tree["site"])
    for expr in ("open(%r).read()" % (site + "/abs_link"), "open(%r).read()" % (site + "/rel_link"),
                 "open(%r).read()" % (site + "/../secret")):
        r = guest(attempt(expr), *tree["flags"], sandbox="off")
        assert "SECRET" in r.value, (expr, r)


WRITES = [
    "open('%s/ccsec_mod/__init__.py', 'w').write('X = 2')" % PP,
    "open('%s/ccsec_mod/new.py', 'w').write('X = 2')" % PP,
    "os.mkdir('%s/newdir')" % PP,
    "os.unlink('%s/ccsec_mod/__init__.py')" % PP,
]


@pytest.mark.parametrize("deny,want", [
    (None, "denied:OSError"),                  # both layers: EROFS first
    ("landlock", "denied:OSError"),            # the read-only bind mount alone: EROFS
    ("ro-remount", "denied:PermissionError"),  # Landlock alone: EACCES
])
@pytest.mark.parametrize("expr", WRITES)
def test_folder_is_read_only_with_each_layer(tree, expr, deny, want):
    r = guest(attempt(expr), *tree["flags"], deny=deny, sandbox="auto")
    assert r.value == want, r
    assert (tree["site"] / "ccsec_mod" / "__init__.py").read_text() == "X = 1\n"
    assert sorted(os.listdir(tree["site"] / "ccsec_mod")) == ["__init__.py"]
    assert not (tree["site"] / "newdir").exists()


def test_folder_is_read_only_reverse_both_layers_off(tree):
    # scratch: a per-file size cap above 0 (RLIMIT_FSIZE), so the write can land
    r = guest(attempt(WRITES[0]), *tree["flags"], "--scratch", "1",
              deny="landlock,ro-remount", sandbox="auto")
    assert r.value == "5", r
    assert (tree["site"] / "ccsec_mod" / "__init__.py").read_text() == "X = 2"


# ---- the matplotlib cache folder of fork server sessions ----

SESSIONS = r"""
import json, sys
sys.path.insert(0, %(pkg)r)
import codecage
from codecage import ForkServer, RuntimeConfig
WRITE = '''
import os, matplotlib
d = matplotlib.get_cachedir()
try:
    with open(os.path.join(d, 'planted.json'), 'w') as f:
        f.write('{"from": "session a"}')
    r = 'wrote'
except OSError as e:
    r = type(e).__name__
[d, r]
'''
READ = "import os, matplotlib; sorted(os.listdir(matplotlib.get_cachedir()))"
out = []
for scratch in %(scratches)r:
    with ForkServer(RuntimeConfig(scratch=scratch), language='python',
                    sandbox=%(sandbox)r, preload='matplotlib') as fs:
        with fs.session() as a, fs.session() as b:
            out.append([a.eval(WRITE), b.eval(READ)])
print(json.dumps(out))
"""


def sessions(sandbox, deny=None, scratches=(0, 1 << 20)):
    sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
    import ccpkg  # builds the package once
    args = [sys.executable, "-c", SESSIONS % {"pkg": ccpkg.PKG_DIR, "sandbox": sandbox,
                                            "scratches": tuple(scratches)}]
    if deny:
        args = [DEGRADE, "--deny", deny, "--", *args]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, CODECAGE_WORKER_DIR=""))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def mpl():
    conftest.need("matplotlib", "python3-matplotlib (scripts/install-deps)")


@pytest.mark.parametrize("deny", [None, "landlock"])
def test_a_session_cannot_write_the_matplotlib_cache_of_another(mpl, deny):
    """Landlock has no write rule for the cache folder; without Landlock,
    its tmpfs has no free inode: either way session b sees nothing of a."""
    for (cache, wrote), seen in sessions("auto" if deny else "require", deny):
        assert cache == "/run/codecage"
        assert wrote in ("PermissionError", "OSError"), wrote
        assert seen == [], seen


def test_matplotlib_cache_reverse_unconfined(mpl):
    """Unconfined, one cache folder is the host's, shared: b sees a's file
    (with scratch: a file size cap above 0)."""
    for (cache, wrote), seen in sessions("off", scratches=(1 << 20,)):
        try:
            assert wrote == "wrote"
            assert "planted.json" in seen
        finally:
            p = os.path.join(cache, "planted.json")
            if os.path.exists(p):
                os.unlink(p)
