"""What a file grant may be, from the CLI and `codecage mcp` (issue 27, C):
the host paths never granted (`/`, `/proc`, `/sys`, `/dev` and what they
hold, decided on the object the supervisor opened, so a symlink or a bind
mount of one is refused too), a python_path folder a writable mount
reaches, idmapped grants on a root host (a root-owned 0700 folder works
without chmod; what the guest writes belongs to the folder's owner) and the
refusal, naming cause and fix, where idmapping is unavailable. The same
rules from C are the libdriver's "grants" scenario (test_library.py), from
Python tests/python/test_pkg_grants.py; the escape probes are
tests/security/test_idmap_grants.py."""
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import BUILD, CLI, ev

DEGRADE = os.path.join(BUILD, "tests", "security", "cc-degrade")
FRONT_ENDS = {"cli": ["eval", "--lang", "python"], "mcp": ["mcp"]}
pytestmark = [pytest.mark.userns, pytest.mark.landlock, pytest.mark.seccomp]


def run(front, *flags, code="1", pre=()):
    """The front end with flags (the MCP server reads an empty stdin and ends
    once its flags are good); pre is a command that wraps it."""
    args = [*pre, CLI, *FRONT_ENDS[front], *flags]
    if front == "cli":
        args += ["--", code]
    return subprocess.run(args, input="", capture_output=True, text=True, timeout=120)


@pytest.fixture
def tmp():
    d = tempfile.mkdtemp(prefix="cc-grants-")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def in_mount_ns(setup, front, *flags, code="1", pre=()):
    """Run the front end (wrapped by pre) in a private mount namespace of
    its own after the shell commands setup (a mount there is gone when it
    ends)."""
    args = [*pre, CLI, *FRONT_ENDS[front], *flags] + (["--", code] if front == "cli" else [])
    script = setup + ' && exec "$@"'
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                           script, "sh", *args], input="", capture_output=True, text=True,
                          timeout=120)


# ---- C1: the host paths that are never granted ----

NEVER = ["/", "/proc", "/proc/self", "/proc/self/root", "/sys", "/sys/kernel", "/dev", "/dev/shm",
         "/dev/null", "/dev/pts"]


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
@pytest.mark.parametrize("host", NEVER)
def test_the_host_root_proc_sys_dev_are_never_granted(front, host):
    # Before the fix: /proc was granted (the guest listed every host
    # process's command line), and / or /dev failed as `internal` ("bind /:
    # Invalid argument").
    if host == "/proc/self/root":
        want = "the host's root directory"  # resolves to /
    else:
        want = "never granted"
    r = run(front, "--mount", host + ":/x")
    assert r.returncode == 2, r
    assert "never granted" in r.stderr and want in r.stderr, r
    assert "/proc/self/fd" not in r.stderr and "internal" not in r.stderr, r


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
def test_the_root_is_refused_because_it_is_the_root(front):
    r = run(front, "--mount", "/:/x:rw")
    assert r.returncode == 2, r
    assert "mount 0 (/:/x): the host path / is the host's root directory" in r.stderr, r


def test_a_symlink_to_proc_is_refused(tmp):
    link = os.path.join(tmp, "p")
    os.symlink("/proc", link)
    r = ev("python", "import os; len(os.listdir('/x'))", "--mount", link + ":/x")
    assert r.rc == 2 and r.kind == "invalid_input", r
    assert "never granted" in r.json["error"]["message"], r


# The object the supervisor opened decides, not its path: a bind mount of
# each is refused at a path of its own (in a mount namespace of the test's).
BOUND = [("/proc", "the kernel's process information (proc)"),
         ("/sys", "the kernel's objects (sysfs)"),
         ("/dev", "/dev"),
         ("/dev/shm", "/dev/shm"),
         ("/", "the host's root directory")]


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
@pytest.mark.parametrize("src,why", BOUND)
def test_a_bind_mount_of_a_never_granted_path_is_refused(tmp, front, src, why):
    assert os.geteuid() == 0, "bind mounts need root (CI runs as root)"
    d = os.path.join(tmp, "b")
    os.mkdir(d)
    r = in_mount_ns("mount --bind %s %s" % (src, d), front, "--mount", d + ":/x",
                    code="import os; len(os.listdir('/x'))")
    assert r.returncode == 2, r
    assert "never granted" in r.stderr and why in r.stderr, r
    assert d in r.stderr, r


def test_a_bind_mount_reverse_an_ordinary_folder(tmp):
    # reverse: the same bind mount of an ordinary folder is granted
    src, d = os.path.join(tmp, "src"), os.path.join(tmp, "b")
    os.mkdir(src)
    os.mkdir(d)
    with open(os.path.join(src, "f"), "w") as f:
        f.write("mine")
    os.chmod(os.path.join(src, "f"), 0o644)
    r = in_mount_ns("mount --bind %s %s" % (src, d), "cli", "--mount", d + ":/x",
                    code="open('/x/f').read()")
    assert r.returncode == 0 and r.stdout == "mine\n", r


# ---- C2: a package folder no writable mount reaches ----

@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
@pytest.mark.parametrize("rel", ["is", "inside", "contains"])
def test_python_path_and_a_writable_mount_overlap(tmp, front, rel):
    # Before the fix: a session could write a module into the writable
    # mount that a later session of the same options imports.
    top = os.path.join(tmp, "top")
    sub = os.path.join(top, "sub")
    os.makedirs(sub)
    mount, pp = {"is": (top, top), "inside": (top, sub), "contains": (sub, top)}[rel]
    r = run(front, "--mount", mount + ":/w:rw", "--python-path", pp)
    assert r.returncode == 2, r
    assert ("python_path[0] '%s' %s mount 0 (%s:/w)" % (pp, rel, mount)) in r.stderr, r
    assert "writable" in r.stderr, r
    # reverse: read-only, the same folders are fine
    r = run(front, "--mount", mount + ":/w", "--python-path", pp)
    assert r.returncode == 0, r


# ---- C3: idmapped grants on a root host ----

def root_folder(tmp, mode=0o700, owner=(0, 0)):
    d = os.path.join(tmp, "owned")
    os.mkdir(d)
    with open(os.path.join(d, "in.txt"), "w") as f:
        f.write("private")
    os.chmod(os.path.join(d, "in.txt"), 0o600)
    os.chown(os.path.join(d, "in.txt"), *owner)
    os.chmod(d, mode)
    os.chown(d, *owner)
    return d


# the guest sees what it writes, and the folder, owned by its own ids (1000)
WRITE = ("open('/x/out.txt', 'w').write('guest'); import os; s = os.stat('/x/out.txt'); "
         "[open('/x/in.txt').read(), [s.st_uid, s.st_gid, os.stat('/x').st_uid] == [1000] * 3]")


@pytest.mark.parametrize("owner", [(0, 0), (4321, 4321)])
def test_a_0700_folder_is_granted_as_its_owner(tmp, owner):
    # Before the fix: on a root host the guest (host nobody) got
    # PermissionError for any folder it could not read as nobody, and
    # files it wrote were owned by nobody.
    assert os.geteuid() == 0, "a root host (CI runs as root)"
    d = root_folder(tmp, owner=owner)
    r = ev("python", "open('/x/in.txt').read()", "--mount", d + ":/x")
    assert r.kind == "ok" and r.value == "private", r
    r = ev("python", WRITE, "--mount", d + ":/x:rw")
    assert r.kind == "ok" and r.value == ["private", True], r
    st = os.stat(os.path.join(d, "out.txt"))
    assert (st.st_uid, st.st_gid) == owner, st


def test_a_read_only_idmapped_grant_stays_read_only(tmp):
    d = root_folder(tmp)
    r = ev("python", "open('/x/in.txt', 'a').write('x')", "--mount", d + ":/x")
    assert r.kind == "guest_error" and "Read-only file system" in r.json["error"]["message"], r
    with open(os.path.join(d, "in.txt")) as f:
        assert f.read() == "private"


@pytest.mark.parametrize("front", sorted(FRONT_ENDS))
def test_no_idmapping_on_a_filesystem_that_has_none_is_refused_at_start(tmp, front):
    # ramfs supports no idmapped mounts: a folder the guest cannot use as
    # nobody is refused at start naming the cause and the fix (before the
    # fix: a bare PermissionError in the guest, later).
    d = os.path.join(tmp, "ram")
    os.mkdir(d)
    r = in_mount_ns("mount -t ramfs none %s && chmod 700 %s" % (d, d), front,
                    "--mount", d + ":/x", code="import os; os.listdir('/x')")
    assert r.returncode == 2, r
    for words in ("mount 0 (%s:/x)" % d, "idmapped", "ramfs", "chmod o+rx %s" % d):
        assert words in r.stderr, (words, r)
    # reverse: a folder nobody may read needs no idmapping
    r = in_mount_ns("mount -t ramfs none %s && chmod 755 %s" % (d, d), "cli",
                    "--mount", d + ":/x", code="import os; os.listdir('/x')")
    assert r.returncode == 0, r
    # writable: o+rwx
    r = in_mount_ns("mount -t ramfs none %s && chmod 755 %s" % (d, d), "cli",
                    "--mount", d + ":/x:rw", code="1")
    assert r.returncode == 2 and "chmod o+rwx %s" % d in r.stderr, r


def test_no_idmapping_without_cap_sys_admin_is_refused_at_start(tmp):
    # cc-degrade --deny idmap: open_tree and mount_setattr answer EPERM, as
    # in a container without CAP_SYS_ADMIN
    d = root_folder(tmp)
    r = run("cli", "--mount", d + ":/x", code="1", pre=[DEGRADE, "--deny", "idmap", "--"])
    assert r.returncode == 2, r
    for words in ("idmapped", "CAP_SYS_ADMIN", "chmod o+rx %s" % d):
        assert words in r.stderr, (words, r)
    # reverse: a folder nobody may read is bound as before
    os.chmod(d, 0o755)
    os.chmod(os.path.join(d, "in.txt"), 0o644)
    r = run("cli", "--mount", d + ":/x", code="open('/x/in.txt').read()",
            pre=[DEGRADE, "--deny", "idmap", "--"])
    assert r.returncode == 0 and "private" in r.stdout, r


# ---- C4: the real reason ----

def test_a_bind_that_may_not_uncover_a_mount_inside_says_so(tmp):
    # Before the fix: "internal: grant /x: bind ...: Invalid argument". A
    # bind (a host without idmapped grants: cc-degrade --deny idmap here)
    # in the worker's user namespace may not show a tree with another
    # filesystem mounted inside it.
    d = os.path.join(tmp, "d")
    os.makedirs(os.path.join(d, "sub"))
    r = in_mount_ns("mount -t tmpfs none %s/sub" % d, "cli", "--mount", d + ":/x",
                    code="import os; os.listdir('/x')",
                    pre=[DEGRADE, "--deny", "idmap", "--"])
    assert r.returncode == 2, r
    assert ("mount /x: the host path %s has other filesystems mounted inside it" % d
            in r.stderr), r
    # reverse: idmapped (the supervisor clones the folder's own tree), the
    # same grant starts and the mount inside does not show
    r = in_mount_ns("mount -t tmpfs none %s/sub && touch %s/sub/hidden" % (d, d), "cli",
                    "--mount", d + ":/x", code="import os; os.listdir('/x/sub')")
    assert r.returncode == 0 and r.stdout == "[]\n", r
