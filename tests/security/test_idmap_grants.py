"""Idmapped grants and the host paths never granted (issue 27, C), attacked
from the guest; each probe also run in reverse (with the layer that stops
it taken away, or unconfined, it must see the breach).

On a root host every grant is an idmapped mount (src/lib/idmap.c) through
which the guest acts as the folder's owner, root here: so a read-only one
must stay read-only with either layer alone, nothing outside it may be
reached through it, a folder mounted inside it must not show, and the
guest must never leave a set-user-ID file in the host's tree. The folders
are root's, mode 0700, so only the idmapping lets the guest in at all.
The refusals of /, /proc, /sys and /dev by path, symlink and bind mount are
tests/integration/test_grants.py's; here the ones a guest could exploit."""
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

import test_files
from conftest import CLI
from grant_probe import attempt, guest

pytestmark = [pytest.mark.userns, pytest.mark.landlock, pytest.mark.seccomp]


@pytest.fixture
def tree():
    """/data (read-only) and /out (writable), root's and 0700, with a
    secret of root's beside them."""
    assert os.geteuid() == 0, "a root host (CI runs as root)"
    base = pathlib.Path(tempfile.mkdtemp(prefix="cc-idmap-"))
    ro, rw, secret = base / "ro", base / "rw", base / "secret"
    for d in (ro, rw, secret):
        d.mkdir(mode=0o700)
    (ro / "f.txt").write_text("original")
    (ro / "f.txt").chmod(0o600)
    (secret / "key").write_text("SECRET")
    (secret / "key").chmod(0o600)
    yield {"ro": ro, "rw": rw, "secret": secret, "base": base,
           "flags": ["--mount", "%s:/data" % ro, "--mount", "%s:/out:rw" % rw]}
    shutil.rmtree(base, ignore_errors=True)


def test_the_guest_uses_a_0700_grant_as_its_owner(tree):
    r = guest(attempt("open('/data/f.txt').read()"), *tree["flags"])
    assert r.value == repr("original"), r


WRITE_RO = attempt("open('/data/f.txt', 'w').write('pwned')")


@pytest.mark.parametrize("deny,want", [
    (None, "denied:OSError"),                  # both layers: EROFS first
    ("landlock", "denied:OSError"),            # the read-only mount alone: EROFS
    ("ro-remount", "denied:PermissionError"),  # Landlock alone: EACCES
])
def test_a_read_only_idmapped_grant_holds_with_either_layer(tree, deny, want):
    r = guest(WRITE_RO, *tree["flags"], deny=deny, sandbox="auto")
    assert r.value == want, r
    assert (tree["ro"] / "f.txt").read_text() == "original"


def test_a_read_only_idmapped_grant_reverse_both_layers_off(tree):
    r = guest(WRITE_RO, *tree["flags"], deny="landlock,ro-remount", sandbox="auto")
    assert r.value == "5", r
    assert (tree["ro"] / "f.txt").read_text() == "pwned"


# test_files.py's escapes from /data, and the same from the writable /out
ESCAPES = test_files.ESCAPES + [e.replace("'/data'", "'/out'").replace("/data/", "/out/")
                                for e in test_files.ESCAPES if "/data" in e]


@pytest.mark.parametrize("expr", ESCAPES)
def test_nothing_outside_an_idmapped_grant_is_reached(tree, expr):
    # the guest is root's stand-in inside the grant: the root-only secret
    # beside it would be readable if any path led there
    rel = str(tree["secret"] / "key").lstrip("/")
    r = guest(attempt(expr % rel), *tree["flags"])
    assert r.value.startswith("denied:"), r


def test_nothing_outside_reverse_unconfined(tree):
    rel = str(tree["secret"] / "key").lstrip("/")
    r = guest(attempt("open(%r + '/../../../../../../%s').read()" % (str(tree["ro"]), rel)),
              sandbox="off")
    assert r.value == repr("SECRET"), r


def test_no_descriptor_of_the_host_tree_is_left(tree):
    # the supervisor's detached mounts are the worker's fd 4, 5 until it
    # is confined: none may be open when guest code runs
    code = attempt("sorted(os.readlink('/proc/self/fd/' + f) for f in os.listdir('/proc/self/fd'))")
    r = guest(code, *tree["flags"])
    assert str(tree["base"]) not in r.value and "/data" not in r.value, r


def test_a_filesystem_mounted_inside_a_grant_does_not_show(tree):
    # /proc bound inside the folder: the grant is that folder's own tree
    # (open_tree without AT_RECURSIVE), never what is mounted in it
    p = tree["ro"] / "p"
    p.mkdir()
    code = attempt("os.listdir('/data/p')")
    r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                        'mount --bind /proc "$0" && exec "$@"', str(p),
                        CLI, "eval", "--lang", "python", "--mount", "%s:/data" % tree["ro"],
                        "--", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == "[]\n", r
    # reverse: the host sees the processes there
    r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                        'mount --bind /proc "$0" && ls "$0"', str(p)], capture_output=True,
                       text=True, timeout=60)
    assert "self" in r.stdout.split(), r


SETUID = attempt("(open('/out/s', 'w').write('#!/bin/sh\\nid\\n'), os.chmod('/out/s', 0o4755))")
SETGID_CREATE = attempt("os.close(os.open('/out/t', os.O_CREAT | os.O_WRONLY, 0o2755))")


@pytest.mark.parametrize("code,name", [(SETUID, "s"), (SETGID_CREATE, "t")],
                         ids=["chmod", "create"])
def test_no_set_id_file_is_left_in_the_host_tree(tree, code, name):
    # Through the idmapped grant the guest's files are root's on disk: a
    # set-user-ID one would be a root program anyone on the host can run.
    r = guest(code, *tree["flags"])
    assert r.value == "denied:PermissionError", r
    f = tree["rw"] / name
    assert not f.exists() or not (f.stat().st_mode & 0o6000), oct(f.stat().st_mode)
    # a plain mode works
    r = guest(attempt("os.chmod('/out/s', 0o755)" if name == "s" else
                      "os.close(os.open('/out/t', os.O_CREAT | os.O_WRONLY, 0o755))"),
              *tree["flags"])
    assert r.value == "None", r


def test_no_set_id_file_reverse_unconfined(tree):
    # unconfined, the same calls leave a set-user-ID-root file there (the
    # filter's verdict on each mode is test_seccomp_bpf.py's TABLE: the
    # worker refuses to start without seccomp, so no run without it)
    code = SETUID.replace("/out/", str(tree["rw"]) + "/")
    r = guest(code, sandbox="off")
    assert r.value == "(13, None)", r
    st = (tree["rw"] / "s").stat()
    assert st.st_mode & 0o4000 and st.st_uid == 0, oct(st.st_mode)
