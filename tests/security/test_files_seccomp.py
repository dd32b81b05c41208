"""The file-work rules of the seccomp policy (issue 14): JavaScript gets the
file system calls exactly when its session has scratch or a grant
(`--with-files` exports that filter), and never otherwise; Python has them
always. Each call added for ordinary file work (chmod, utime, symlink,
chdir, locks, fsync: shutil and sqlite in scratch) is checked here by the
filter's verdict; tests/python/test_pkg_files.py runs them for real."""
import pytest

import bpf
from test_seccomp_bpf import ALLOW, EPERM, NR, worker

FILE_CALLS = {"openat": 257, "newfstatat": 262, "getdents64": 217, "unlink": 87,
              "unlinkat": 263, "mkdir": 83, "rmdir": 84, "rename": 82, "chmod": 90,
              "fchmod": 91, "utimensat": 280, "symlink": 88, "chdir": 80, "flock": 73,
              "fsync": 74, "fdatasync": 75, "pwrite64": 18, "ftruncate": 77}
# never for ordinary file work: hard links (a path out of a tree), owners,
# extended attributes, device nodes
NEVER = {"link": 86, "linkat": 265, "chown": 92, "fchown": 93, "lchown": 94, "mknod": 133,
         "setxattr": 188, "fchmodat2": 452}


def program(exe_args):
    return bpf.Stack(bpf.Program.from_bytes(worker(*exe_args, "--export-bpf")),
                     bpf.Program.from_bytes(worker(*exe_args, "--export-bpf-notify")))


@pytest.mark.parametrize("name", sorted(FILE_CALLS))
def test_javascript_gets_file_calls_only_with_files(name):
    nr = FILE_CALLS[name]
    # the reverse: without scratch or a grant, the same call is refused
    assert program(("js",)).run(nr, args=(0, 0, 0)) == EPERM, name
    assert program(("js", "--with-files")).run(nr, args=(0, 0, 0)) == ALLOW, name


@pytest.mark.parametrize("name", sorted(FILE_CALLS))
def test_python_has_the_file_calls(name):
    assert program(("py",)).run(FILE_CALLS[name], args=(0, 0, 0)) == ALLOW, name


@pytest.mark.parametrize("exe", [("js", "--with-files"), ("py",)])
@pytest.mark.parametrize("name", sorted(NEVER))
def test_links_owners_and_xattrs_stay_refused(exe, name):
    assert program(exe).run(NEVER[name], args=(0, 0, 0)) == EPERM, name


def test_javascript_file_set_size():
    js = [l for l in worker("js", "--with-files", "--print-policy").decode().splitlines()
          if l.endswith((" allow", " args"))]
    base = [l for l in worker("js", "--print-policy").decode().splitlines()
            if l.endswith((" allow", " args"))]
    assert len(base) < len(js) <= 50, (len(base), len(js))


def test_fcntl_locks_but_never_setown():
    p = program(("js", "--with-files"))
    F_SETLK, F_SETLKW, F_OFD_SETLK, F_SETOWN, F_SETLEASE = 6, 7, 37, 8, 1024
    for cmd in (F_SETLK, F_SETLKW, F_OFD_SETLK):
        assert p.run(NR["fcntl"], args=(3, cmd, 0)) == ALLOW
    for cmd in (F_SETOWN, F_SETLEASE):
        assert p.run(NR["fcntl"], args=(3, cmd, 0)) == EPERM
