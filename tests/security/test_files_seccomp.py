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
              "fsync": 74, "fdatasync": 75, "pwrite64": 18, "ftruncate": 77, "listxattr": 194,
              "llistxattr": 195}
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


# ---- a fork server whose sessions have scratch (CC_SC_FORK_SCRATCH) ----

MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_RDONLY, MS_REMOUNT, MS_BIND, MS_MOVE = 2, 4, 8, 1, 32, 4096, 8192
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x20000, 0x10000000, 0x20000000, 0x40000000
PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP = 4, 38, 22
MOUNT, UNSHARE, PRCTL, LANDLOCK_ADD_RULE, CLONE = 165, 272, 157, 445, 56
SIGCHLD = 17
KILL = bpf.SECCOMP_RET_KILL_PROCESS
NEW_FS = MS_NOSUID | MS_NODEV | MS_NOEXEC


def template(engine, files):
    args = (engine, "--with-files") if files else (engine,)
    return (bpf.Program.from_bytes(worker(*args, "--export-bpf-template")),
            bpf.Program.from_bytes(worker(*args, "--export-bpf-session")))


@pytest.mark.parametrize("engine", ["js", "py"])
def test_scratch_template_mounts_a_new_tmpfs_only(engine):
    t, s = template(engine, True)
    assert t.run(MOUNT, args=(0, 0, 0, NEW_FS, 0)) == ALLOW
    for flags in (NEW_FS | MS_BIND, NEW_FS | MS_REMOUNT, NEW_FS | MS_MOVE, MS_BIND, 0,
                  NEW_FS | MS_RDONLY, NEW_FS | (1 << 32)):
        assert t.run(MOUNT, args=(0, 0, 0, flags, 0)) == EPERM, hex(flags)
    # the session's own filter takes it back: mount kills again
    assert bpf.Stack(t, s).run(MOUNT, args=(0, 0, 0, NEW_FS, 0)) == KILL


@pytest.mark.parametrize("engine", ["js", "py"])
def test_scratch_template_clone_and_prctl(engine):
    """A session with scratch is cloned into its own user, pid and mount
    namespaces (issue 23: an intermediate unshared them); nothing else, and
    the template never unshares (the kill-list)."""
    t, s = template(engine, True)
    own = SIGCHLD | CLONE_NEWUSER | CLONE_NEWPID
    assert t.run(CLONE, args=(own,)) == ALLOW
    assert t.run(CLONE, args=(own | CLONE_NEWNS,)) == ALLOW
    for flags in (SIGCHLD | CLONE_NEWNS, own | CLONE_NEWNET, own | CLONE_NEWNS | CLONE_NEWNET):
        assert t.run(CLONE, args=(flags,)) == EPERM, hex(flags)
    for flags in (own, own | CLONE_NEWNS):
        assert t.run(UNSHARE, args=(flags & ~SIGCHLD,)) == KILL, hex(flags)
    assert t.run(PRCTL, args=(PR_SET_DUMPABLE, 1)) == ALLOW
    for opt in (PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, PR_SET_DUMPABLE | (1 << 32)):
        assert t.run(PRCTL, args=(opt, 0)) == EPERM, opt
    assert t.run(LANDLOCK_ADD_RULE, args=(3, 1, 0, 0)) == ALLOW
    st = bpf.Stack(t, s)
    assert st.run(CLONE, args=(own | CLONE_NEWNS,)) == EPERM
    assert st.run(PRCTL, args=(PR_SET_DUMPABLE, 1)) == EPERM
    assert st.run(LANDLOCK_ADD_RULE, args=(3, 1, 0, 0)) == EPERM


@pytest.mark.parametrize("engine", ["js", "py"])
def test_template_without_scratch_has_none_of_it(engine):
    """The reverse: a fork server without scratch never gets these."""
    t, _ = template(engine, False)
    assert t.run(MOUNT, args=(0, 0, 0, NEW_FS, 0)) == KILL
    assert t.run(CLONE, args=(SIGCHLD | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS,)) == EPERM
    assert t.run(PRCTL, args=(PR_SET_DUMPABLE, 1)) == EPERM


@pytest.mark.slow
@pytest.mark.userns
@pytest.mark.landlock
def test_kernel_sweep_of_javascript_with_files():
    """In the kernel (test_sweep.py's sweep, as a session with scratch):
    what ran is exactly within the --with-files policy, the file calls
    among it; the kill-list kills."""
    import os
    import subprocess
    from conftest import BUILD
    proc = subprocess.run([os.path.join(BUILD, "codecage-worker-js"), "--ppid=%d" % os.getpid(),
                           "--with-files", "--sweep"], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=900)
    assert proc.returncode == 0, proc.stderr
    rows = [line.split(" ") for line in proc.stdout.splitlines()[1:]]
    ran = {int(nr) for nr, verdict, _ in rows if verdict == "allowed"} - {335, 336}
    policy = [l.split(" ") for l in worker("js", "--with-files", "--print-policy").decode()
              .splitlines()]
    allowed = {int(nr) for _, nr, how in policy if how in ("allow", "args")}
    assert ran <= allowed, sorted(ran - allowed)
    assert {FILE_CALLS["openat"], FILE_CALLS["unlink"], FILE_CALLS["chmod"]} <= ran
    assert not ran & set(NEVER.values())
    killed = {int(nr) for nr, verdict, _ in rows if verdict == "killed"}
    assert killed == {int(nr) for _, nr, how in policy if how == "kill"}
