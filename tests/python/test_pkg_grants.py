"""What a file grant may be, from the Python package (issue 27, C): Mount
and RuntimeConfig(python_path=...) refuse the host paths never granted and
package folders a writable mount reaches, naming the paths the user gave
(never /proc/self/fd/N); on a root host a folder only its owner may use
(every tempfile.mkdtemp) is granted as an idmapped mount, spawned, forked
and pooled. The CLI and MCP side is tests/integration/test_grants.py."""
import os
import pathlib
import shutil
import tempfile

import ccpkg  # noqa: F401  (builds and imports the package)
import pytest

from codecage import (ForkServer, InvalidInputError, IsolatedRuntime, Mount, RuntimeConfig,
                      SessionPool)

pytestmark = [pytest.mark.userns, pytest.mark.landlock, pytest.mark.seccomp]
BOUND = 30


def surfaces(config, language="python"):
    """Every way to start a runtime from config."""
    return [lambda: IsolatedRuntime(config, language=language),
            lambda: IsolatedRuntime(config, language=language, fork_server=False),
            lambda: ForkServer(config, language=language),
            lambda: SessionPool(config, language=language, size=1)]


@pytest.fixture
def tmp():
    d = pathlib.Path(tempfile.mkdtemp(prefix="cc-pkggrants-"))  # 0700, root's on a root host
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("host", ["/", "/proc", "/proc/self", "/sys", "/dev", "/dev/shm"])
def test_never_granted_paths_are_refused_naming_them(host):
    # Before the fix: Mount("/proc") let the guest read every host process's
    # command line, and Mount("/") failed as InternalError naming
    # /proc/self/fd/N.
    config = RuntimeConfig(mounts=[Mount(host, "/x")])
    for make in surfaces(config):
        with pytest.raises(InvalidInputError) as e:
            make()
        msg = str(e.value)
        assert "never granted" in msg and "mount 0 (%s:/x)" % host in msg, msg
        assert "/proc/self/fd" not in msg, msg


def test_a_symlink_to_proc_is_refused_naming_the_link(tmp):
    link = tmp / "p"
    os.symlink("/proc", link)
    with pytest.raises(InvalidInputError, match="mount 0 \\(%s:/x\\).*never granted" % link):
        IsolatedRuntime(RuntimeConfig(mounts=[Mount(link, "/x")]), language="python")


def test_messages_name_the_path_the_user_gave(tmp):
    # Before the fix: "mount 0 (/proc/self/fd/12:/usr)".
    (tmp / "d").mkdir()
    with pytest.raises(InvalidInputError) as e:
        IsolatedRuntime(RuntimeConfig(mounts=[Mount(tmp / "d", "/usr")]), language="python")
    assert "mount 0 (%s:/usr)" % (tmp / "d") in str(e.value), e.value
    assert "/proc/self/fd" not in str(e.value)


@pytest.mark.parametrize("rel", ["is", "inside", "contains"])
def test_python_path_reached_by_a_writable_mount_is_refused(tmp, rel):
    # Before the fix: one session could write a module into the writable
    # mount that another session of the same options imports.
    top, sub = tmp / "top", tmp / "top" / "sub"
    sub.mkdir(parents=True)
    mount, pp = {"is": (top, top), "inside": (top, sub), "contains": (sub, top)}[rel]
    config = RuntimeConfig(mounts=[Mount(mount, "/w", writable=True)], python_path=[pp])
    for make in surfaces(config):
        with pytest.raises(InvalidInputError) as e:
            make()
        assert "python_path[0] '%s' %s mount 0 (%s:/w)" % (pp, rel, mount) in str(e.value), e
    # reverse: a read-only mount of the same folder is fine
    config = RuntimeConfig(mounts=[Mount(mount, "/w")], python_path=[pp])
    with IsolatedRuntime(config, language="python") as rt:
        assert rt.eval("1") == 1


def test_a_0700_folder_works_without_chmod(tmp):
    # Before the fix (a root host): PermissionError in the guest; the
    # README's Files example needed chmod 0o777.
    assert os.geteuid() == 0, "a root host (CI runs as root)"
    data, out = tmp / "data", tmp / "out"
    for d in (data, out):
        d.mkdir(mode=0o700)
    (data / "in.txt").write_text("private")
    (data / "in.txt").chmod(0o600)
    config = RuntimeConfig(mounts=[Mount(data, "/data"), Mount(out, "/out", writable=True)])
    code = "open('/out/o.txt', 'w').write(open('/data/in.txt').read()); open('/out/o.txt').read()"
    for i, make in enumerate(surfaces(config)):
        with make() as started:
            rt = (started.session() if isinstance(started, ForkServer)
                  else started.checkout() if isinstance(started, SessionPool) else started)
            assert rt.eval(code, timeout=BOUND) == "private"
            rt.write_file("/out/host.txt", b"by the host's call")
            if rt is not started:
                rt.close()
        for f in ("o.txt", "host.txt"):
            st = os.stat(out / f)
            assert (st.st_uid, st.st_gid) == (0, 0), (i, f, st)
            os.remove(out / f)
    with IsolatedRuntime(config, language="python") as rt:
        with pytest.raises(InvalidInputError, match="read-only"):
            rt.write_file("/data/x", b"x")
