"""Red team (issue 27, C1): every route to granting the host's root,
/proc, /sys or /dev, tried from the host side, must be refused before any
worker starts (before the fix, --mount /proc:/x listed every host
process's command line to the guest). The supervisor decides on the object
it opened (src/lib/grants_host.c), so none of these may get through: a
kernel filesystem mounted afresh elsewhere, a bind mount of a file under
/proc, the Python package's /proc/self/fd/N of an open /proc, a path that
only becomes one of them once resolved. The refusals by plain path and by
a bind mount of each directory are tests/integration/test_grants.py's."""
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import CLI

pytestmark = [pytest.mark.userns, pytest.mark.landlock, pytest.mark.seccomp]
READ = "import os; sorted(os.listdir('/x'))[:3]"


@pytest.fixture
def tmp():
    d = tempfile.mkdtemp(prefix="cc-never-")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def run_in_ns(setup, *args):
    """build/codecage ARGS in a mount namespace of the test's own, after the
    shell commands setup (whatever they mount is gone when it ends)."""
    assert os.geteuid() == 0, "mounting needs root (CI runs as root)"
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                           setup + ' && exec "$@"', "sh", CLI, *args], capture_output=True,
                          text=True, timeout=60)


FRESH = [("proc", "proc"), ("sysfs", "sysfs"), ("devpts", "devpts"),
         ("cgroup2", "cgroup2"), ("mqueue", "mqueue")]


@pytest.mark.parametrize("fstype,why", FRESH)
def test_a_kernel_filesystem_mounted_afresh_elsewhere(tmp, fstype, why):
    d = os.path.join(tmp, "k")
    os.mkdir(d)
    r = run_in_ns("mount -t %s none %s" % (fstype, d), "eval", "--lang", "python",
                  "--mount", d + ":/x", "--", READ)
    assert r.returncode == 2, r
    assert "never granted" in r.stderr and "(%s)" % why in r.stderr, r


def test_a_file_of_proc_bound_elsewhere(tmp):
    # /proc/1/environ: the host's init's environment
    f = os.path.join(tmp, "f")
    open(f, "w").close()
    r = run_in_ns("mount --bind /proc/1/environ %s" % f, "eval", "--lang", "python",
                  "--mount", f + ":/x", "--", "open('/x', 'rb').read()[:20]")
    assert r.returncode == 2 and "never granted" in r.stderr, r


PACKAGE_ROUTE = """import sys
sys.path.insert(0, sys.argv[1])
import codecage
for host in sys.argv[2:]:
    try:
        codecage.IsolatedRuntime(codecage.RuntimeConfig(mounts=[codecage.Mount(host, '/x')]),
                                 language='python').close()
        print('granted', host)
    except codecage.InvalidInputError as e:
        print('never' if 'never granted' in str(e) and host in str(e) else e)
"""


def test_the_python_package_route(tmp):
    # Mount() hands the library /proc/self/fd/N of the descriptor it
    # opened: /proc, a bind of it and /proc/self/root are refused all the
    # same, each named as given
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "python"))
    import ccpkg  # noqa: F401  (builds the package)
    d = os.path.join(tmp, "b")
    os.mkdir(d)
    r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                        'mount --bind /proc "$0" && exec "$@"', d, sys.executable, "-c",
                        PACKAGE_ROUTE, ccpkg.PKG_DIR, "/proc", d, "/proc/self/root"],
                       capture_output=True, text=True, timeout=120)
    assert r.stdout.split("\n")[:3] == ["never"] * 3, r


def test_an_ordinary_folder_reverse(tmp):
    # reverse: a folder of the test's own, mounted afresh (a tmpfs) and by a
    # bind, is granted and read
    d = os.path.join(tmp, "t")
    os.mkdir(d)
    r = run_in_ns("mount -t tmpfs none %s && touch %s/mine" % (d, d), "eval", "--lang",
                  "python", "--mount", d + ":/x", "--", READ)
    assert r.returncode == 0 and r.stdout == '["mine"]\n', r
