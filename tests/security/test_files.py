"""File grants and scratch (issue 14): what a guest with mounts and scratch
can reach, each probe also run in reverse (with the layer that stops it off,
or unconfined, it must see the breach).

The guest is Python (its file API is the whole of os/io); the JavaScript fs
module's own tests are issue 14b's. Runs build/codecage with --mount and
--scratch; layers are taken away with build/tests/security/cc-degrade
(--deny landlock: the mount namespace alone; --deny ro-remount: read-only
binds fail open, Landlock alone)."""
import os
import pathlib
import shutil
import tempfile

import pytest

from grant_probe import attempt, guest


pytestmark = [pytest.mark.userns, pytest.mark.landlock, pytest.mark.seccomp]


@pytest.fixture
def tree():
    """A read-only grant, a writable grant and a secret outside both, all
    readable and writable by the worker's uid (nobody on a root host), in a
    directory it can reach (pytest's own tmp_path is 0700)."""
    tmp_path = pathlib.Path(tempfile.mkdtemp(prefix="cc-files-"))
    yield from _tree(tmp_path)
    shutil.rmtree(tmp_path, ignore_errors=True)


def _tree(tmp_path):
    ro, rw, secret = tmp_path / "ro", tmp_path / "rw", tmp_path / "secret"
    for d in (ro, rw, secret):
        d.mkdir()
        d.chmod(0o777)
    (ro / "f.txt").write_text("original")
    (ro / "f.txt").chmod(0o666)
    (secret / "key").write_text("SECRET")
    (secret / "key").chmod(0o666)
    tmp_path.chmod(0o755)
    yield {"ro": ro, "rw": rw, "secret": secret, "base": tmp_path,
            "flags": ["--mount", "%s:/data" % ro, "--mount", "%s:/out:rw" % rw,
                      "--scratch", "4"]}


def test_reading_outside_every_grant(tree):
    key = str(tree["secret"] / "key")
    r = guest(attempt("open(%r).read()" % key), *tree["flags"])
    assert r.value.startswith("denied:"), r
    r = guest(attempt("os.listdir('/')"), *tree["flags"])
    assert "secret" not in r.value
    # reverse: unconfined, the same read works
    r = guest(attempt("open(%r).read()" % key), sandbox="off")
    assert r.value == repr("SECRET"), r


WRITE_RO = attempt("open('/data/f.txt', 'w').write('pwned')")


@pytest.mark.parametrize("deny,want", [
    (None, "denied:OSError"),                  # both layers: EROFS first
    ("landlock", "denied:OSError"),            # the read-only bind mount alone: EROFS
    ("ro-remount", "denied:PermissionError"),  # Landlock alone: EACCES
])
def test_read_only_grant_holds_with_either_layer(tree, deny, want):
    r = guest(WRITE_RO, *tree["flags"], deny=deny, sandbox="auto")
    assert r.value == want, r
    assert (tree["ro"] / "f.txt").read_text() == "original"


def test_read_only_grant_reverse_both_layers_off(tree):
    r = guest(WRITE_RO, *tree["flags"], deny="landlock,ro-remount", sandbox="auto")
    assert r.value == "5", r
    assert (tree["ro"] / "f.txt").read_text() == "pwned"


def test_host_made_symlink_out_of_a_writable_grant(tree):
    os.symlink(str(tree["secret"]), str(tree["rw"] / "link"))
    r = guest(attempt("open('/out/link/key').read()"), *tree["flags"])
    assert r.value.startswith("denied:"), r
    r = guest(attempt("open('/out/link/key').read()"), *tree["flags"], deny="landlock",
              sandbox="auto")
    assert r.value.startswith("denied:"), r  # the mount namespace alone
    # reverse: unconfined, the link leads out
    r = guest(attempt("open(%r).read()" % str(tree["rw"] / "link" / "key")), sandbox="off")
    assert r.value == repr("SECRET")


def test_guest_made_symlink_out_of_a_writable_grant(tree):
    key = str(tree["secret"] / "key")
    code = attempt("(os.symlink(%r, '/out/l'), open('/out/l').read())" % key)
    r = guest(code, *tree["flags"])
    assert r.value.startswith("denied:"), r
    # a link that stays inside works
    r = guest(attempt("(os.symlink('/out/a', '/out/b'), open('/out/a', 'w').write('x'), "
                      "open('/out/b').read())[2]"), *tree["flags"])
    assert r.value == repr("x"), r
    # reverse: unconfined, a link the guest makes leads out
    r = guest(attempt("(os.symlink(%r, %r), open(%r).read())[1]"
                      % (key, str(tree["rw"] / "l2"), str(tree["rw"] / "l2"))), sandbox="off")
    assert r.value == repr("SECRET")


def test_hard_link_to_an_outside_file(tree):
    r = guest(attempt("os.link('/usr/lib/python3.11/os.py', '/out/h')"), *tree["flags"])
    assert r.value.startswith("denied:"), r
    r = guest(attempt("os.link('/data/f.txt', '/out/h')"), *tree["flags"])
    assert r.value.startswith("denied:"), r
    assert not (tree["rw"] / "h").exists()
    # reverse: unconfined, a hard link to a file outside the tree works
    r = guest(attempt("os.link(%r, %r)" % (str(tree["secret"] / "key"), str(tree["rw"] / "h"))),
              sandbox="off")
    assert r.value == "None", r
    assert (tree["rw"] / "h").read_text() == "SECRET"


ESCAPES = [
    "open('/data/../../../%s').read()",
    "open('/proc/self/root/%s').read()",
    "open('/proc/self/fd/%%d/../../../%s' %% os.open('/data', os.O_RDONLY)).read()",
    "os.read(os.open('../../../../../../%s', os.O_RDONLY, dir_fd=os.open('/data', "
    "os.O_RDONLY)), 100)",
]


@pytest.mark.parametrize("expr", ESCAPES)
def test_dotdot_proc_and_dirfd_escapes(tree, expr):
    rel = str(tree["secret"] / "key").lstrip("/")
    r = guest(attempt(expr % rel), *tree["flags"])
    assert r.value.startswith("denied:"), r


def test_dotdot_and_dirfd_escapes_reverse(tree):
    """Unconfined, the same paths from a directory reach the secret."""
    rel = str(tree["secret"] / "key").lstrip("/")
    base = str(tree["ro"])
    for expr in ("open(%r + '/../../../../../../%s').read()" % (base, rel),
                 "os.read(os.open('../../../../../../%s', os.O_RDONLY, dir_fd=os.open(%r, "
                 "os.O_RDONLY)), 100)" % (rel, base)):
        r = guest(attempt(expr), sandbox="off")
        assert "SECRET" in r.value, (expr, r)


def test_renaming_a_granted_directory_away_and_back(tree):
    r = guest(attempt("(os.rename('/out', '/out2'), os.rename('/out2', '/out'))"), *tree["flags"])
    assert r.value.startswith("denied:"), r
    r = guest(attempt("os.rename('/data', '/tmp/data')"), *tree["flags"])
    assert r.value.startswith("denied:"), r
    assert tree["rw"].is_dir() and tree["ro"].is_dir()


def test_scratch_full_and_out_of_inodes(tree):
    big = attempt("open('/tmp/big', 'wb').write(b'x' * (8 << 20))")
    r = guest(big, "--scratch", "4")
    assert r.value == "denied:OSError", r  # ENOSPC (or EFBIG: the file cap is the scratch)
    inodes = attempt("[open('/tmp/f%d' % i, 'w').close() for i in range(5000)]")
    r = guest(inodes, "--scratch", "4")
    assert r.value == "denied:OSError", r
    # reverse: the same file fits a bigger scratch
    r = guest(big, "--scratch", "16")
    assert r.value == str(8 << 20), r


def test_writable_grant_file_size_is_capped(tree):
    """RLIMIT_FSIZE bounds each file in a writable grant (the grant's total
    is bounded only by its filesystem: SECURITY.md). The CLI's per-file
    cap is the scratch size."""
    code = attempt("open('/out/big', 'wb').write(b'x' * (6 << 20))")
    r = guest(code, *tree["flags"])  # --scratch 4: files up to 4 MiB
    assert r.value == "denied:OSError", r
    assert os.path.getsize(tree["rw"] / "big") <= 4 << 20
    r = guest(code, *tree["flags"][:4], "--scratch", "8")
    assert r.value == str(6 << 20), r


def test_nothing_writable_without_scratch_or_rw_grant(tree):
    r = guest(attempt("open('/tmp/x', 'w').write('x')"), "--mount", "%s:/data" % tree["ro"])
    assert r.value.startswith("denied:"), r
    r = guest(attempt("open('/tmp/x', 'w').write('x')"), "--scratch", "1")
    assert r.value == "1", r


def test_cli_out_copies_scratch(tree):
    out = tree["base"] / "copied"
    r = guest("import os\nos.mkdir('/tmp/d')\nopen('/tmp/d/r.txt', 'w').write('report')\n"
              "os.symlink(%r, '/tmp/d/l')\n1" % str(tree["secret"] / "key"),
              "--scratch", "1", "--out", str(out))
    assert r.rc == 0, r
    assert (out / "d" / "r.txt").read_text() == "report"
    assert not (out / "d" / "l").exists()  # symlinks are skipped, never followed
    assert "skipped" in r.stderr
