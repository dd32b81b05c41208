"""Files (issue 14) from the Python package: Mount grants, scratch in every
kind of session, the host file API (write_file / read_file / list_files),
and bad input refused before any worker starts. The escape probes and their
reverse runs are tests/security/test_files.py."""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import ccpkg  # noqa: F401  (builds and imports the package)
import pytest

from conftest import BUILD

import codecage
from codecage import (ForkServer, InvalidInputError, IsolatedRuntime, Mount, OutputLimitError,
                      RuntimeConfig, SessionPool, _codecage)

pytestmark = [pytest.mark.userns, pytest.mark.landlock, pytest.mark.seccomp]
LANGS = ["python", "javascript"]
BOUND = 30


@pytest.fixture
def base():
    """A directory the worker's uid (nobody on a root host) can reach."""
    d = pathlib.Path(tempfile.mkdtemp(prefix="cc-pkgfiles-"))
    d.chmod(0o755)
    (d / "data").mkdir()
    (d / "data" / "a.csv").write_text("x,y\n1,2\n3,4\n")
    (d / "out").mkdir()
    (d / "out").chmod(0o777)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def cfg(base, **kw):
    return RuntimeConfig(mounts=[Mount(base / "data", "/data"),
                                 Mount(base / "out", "/out", writable=True)], **kw)


# ---- item 6: bad input, before any worker starts ----

BAD_GUESTS = ["data", "/", "/usr", "/usr/lib/python3.11", "/proc", "/dev", "/tmp", "/tmp/in",
              "/lib", "/etc", "/data/../etc", "/data/", "/a//b", "/a:b"]


@pytest.mark.parametrize("guest", BAD_GUESTS)
def test_bad_guest_paths_are_refused_naming_the_mount(base, guest):
    with pytest.raises(InvalidInputError, match="mount 0") as e:
        # a worker_dir with no workers: the refusal must come before any spawn
        _codecage.Runtime("python", "require",
                          {"mounts": [(str(base / "data"), guest, False)]}, str(base))
    assert guest in str(e.value) or "overlaps" in str(e.value)


def test_missing_host_path(base):
    with pytest.raises(InvalidInputError, match="host path"):
        Mount(base / "nope", "/data")
    with pytest.raises(InvalidInputError, match="mount 0 .*No such file"):
        _codecage.Runtime("python", "require", {"mounts": [(str(base / "nope"), "/d", False)]},
                          str(base))


def test_two_grants_on_one_guest_path(base):
    m = [(str(base / "data"), "/d", False), (str(base / "out"), "/d", True)]
    with pytest.raises(InvalidInputError, match="mount 0 .* and mount 1 .*one guest path"):
        _codecage.Runtime("python", "require", {"mounts": m}, str(base))
    m[1] = (str(base / "out"), "/d/sub", True)  # nested: refused too
    with pytest.raises(InvalidInputError, match="inside the other"):
        _codecage.Runtime("python", "require", {"mounts": m}, str(base))


def test_bad_input_from_every_surface(base):
    bad = RuntimeConfig(mounts=[Mount(base / "data", "/usr")])
    for make in (lambda: IsolatedRuntime(bad, language="python"),
                 lambda: ForkServer(bad, language="javascript"),
                 lambda: SessionPool(bad, language="python", size=1)):
        with pytest.raises(InvalidInputError, match="overlaps /usr"):
            make()
    with pytest.raises(TypeError):
        RuntimeConfig(mounts=["/data"])
    with pytest.raises(InvalidInputError, match="scratch"):
        IsolatedRuntime(language="python", scratch=10)


# ---- item 1: grants ----

@pytest.mark.parametrize("lang", LANGS)
def test_grants_read_only_and_writable(base, lang):
    with IsolatedRuntime(cfg(base), language=lang) as rt:
        assert rt.read_file("/data/a.csv") == b"x,y\n1,2\n3,4\n"
        rt.write_file("/out/r.txt", "report")
        assert (base / "out" / "r.txt").read_text() == "report"
        with pytest.raises(InvalidInputError, match="read-only.*writable=True"):
            rt.write_file("/data/new.txt", b"x")
        assert not (base / "data" / "new.txt").exists()


def test_python_guest_reads_and_writes_grants(base):
    with IsolatedRuntime(cfg(base), language="python") as rt:
        rows = rt.eval("import csv\nlist(csv.reader(open('/data/a.csv')))")
        assert rows == [["x", "y"], ["1", "2"], ["3", "4"]]
        rt.eval("open('/out/sum.txt', 'w').write('4')")
        assert (base / "out" / "sum.txt").read_text() == "4"
        err = rt.eval("try:\n    open('/data/a.csv', 'a')\nexcept OSError as e:\n"
                      "    r = e.errno\nr")
        assert err in (13, 30)  # Landlock's EACCES comes before the mount's EROFS


def test_single_file_grant(base):
    with IsolatedRuntime(RuntimeConfig(mounts=[Mount(base / "data" / "a.csv", "/in.csv")]),
                         language="python") as rt:
        assert rt.eval("open('/in.csv').read()").startswith("x,y")


def test_host_path_swapped_for_a_symlink_after_mount_was_built(base):
    evil = base / "evil"
    evil.mkdir()
    (evil / "a.csv").write_text("EVIL")
    m = Mount(base / "data", "/data")
    os.rename(base / "data", base / "moved")
    os.symlink(evil, base / "data")
    with IsolatedRuntime(RuntimeConfig(mounts=[m]), language="python") as rt:
        assert rt.read_file("/data/a.csv").startswith(b"x,y")
    # reverse: a Mount built now follows the symlink
    with IsolatedRuntime(RuntimeConfig(mounts=[Mount(base / "data", "/data")]),
                         language="python") as rt:
        assert rt.read_file("/data/a.csv") == b"EVIL"


# ---- item 2: scratch, ordinary file work ----

FILE_WORK = r"""
import fcntl, mmap, os, shutil, sqlite3
os.chdir('/tmp')
os.makedirs('w/sub')
open('w/sub/f', 'w').write('hello')
os.rename('w/sub/f', 'w/g')
shutil.copy('w/g', 'w/h')
shutil.copy2('w/g', 'w/h2')
os.chmod('w/h', 0o600)
os.utime('w/h', (1, 2))
os.symlink('g', 'w/link')
with open('w/link') as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    fcntl.lockf(open('w/g', 'a'), fcntl.LOCK_EX)
with open('w/g', 'r+b') as f:
    m = mmap.mmap(f.fileno(), 0)
    first = m[:5]
    m.close()
db = sqlite3.connect('/tmp/t.db')
db.execute('create table t(a)')
db.executemany('insert into t values (?)', [(i,) for i in range(100)])
db.commit()
total = db.execute('select sum(a) from t').fetchone()[0]
db.close()
os.unlink('w/h2')
shutil.rmtree('w')
(first, total, os.stat('/tmp/t.db').st_size > 0, os.getcwd(), os.path.exists('w'))
"""


def test_ordinary_file_work_in_scratch():
    with IsolatedRuntime(language="python", scratch=8 << 20) as rt:
        assert rt.eval(FILE_WORK) == [b"hello", 4950, True, "/tmp", False]


def test_ordinary_file_work_in_a_writable_grant(base):
    code = FILE_WORK.replace("'/tmp", "'/out")
    with IsolatedRuntime(cfg(base), language="python") as rt:
        assert rt.eval(code) == [b"hello", 4950, True, "/out", False]


@pytest.mark.parametrize("lang", LANGS)
def test_forked_and_pooled_sessions_have_private_scratch(base, lang):
    with ForkServer(cfg(base, scratch=1 << 20), language=lang) as fs:
        with fs.session() as a, fs.session() as b:
            a.write_file("/tmp/secret", b"A's")
            assert [e["path"] for e in a.list_files("/tmp")] == ["/tmp/secret"]
            assert b.list_files("/tmp") == []
            with pytest.raises(InvalidInputError, match="No such file"):
                b.read_file("/tmp/secret")
            assert b.read_file("/data/a.csv").startswith(b"x,y")  # grants in forked sessions
    with SessionPool(cfg(base, scratch=1 << 20), language=lang, size=2) as pool:
        with pool.checkout(BOUND) as a, pool.checkout(BOUND) as b:
            a.write_file("/tmp/x", b"1")
            assert b.list_files("/tmp") == []
            # reverse: the same session sees its own file
            assert a.read_file("/tmp/x") == b"1"


RENAME = {"python": "import os\nos.makedirs('{d}/a'); os.makedirs('{d}/b')\n"
                    "open('{d}/a/x', 'w').close()\nos.rename('{d}/a/x', '{d}/b/x')\n"
                    "sorted(os.listdir('{d}/b'))",
          "javascript": "{{ const fs = require('fs'); fs.mkdirSync('{d}/a', {{recursive: true}});"
                        " fs.mkdirSync('{d}/b');"
                        " fs.writeFileSync('{d}/a/x', ''); fs.renameSync('{d}/a/x', '{d}/b/x');"
                        " fs.readdirSync('{d}/b') }}"}
#: a rename out of scratch into the read-only grant: what it raised
RENAME_OUT = {"python": "import os\nopen('/tmp/y', 'w').close()\n"
                        "try:\n    os.rename('/tmp/y', '/data/y')\n"
                        "except OSError as e:\n    r = e.errno\nr",
              "javascript": "{ const fs = require('fs'); fs.writeFileSync('/tmp/y', '');"
                            " let r; try { fs.renameSync('/tmp/y', '/data/y') }"
                            " catch (e) { r = e.code } r }"}


@pytest.mark.parametrize("lang", LANGS)
def test_renames_between_directories_in_forked_scratch(base, lang):
    """A forked session's scratch (and a writable grant beside it) takes a
    rename between two of its directories, as a spawned worker's does: the
    session's Landlock domain is its own and whole, its template has none
    (it was EXDEV: the template's scope layer denied REFER). A rename out
    of scratch into the read-only grant is still refused."""
    def check(rt):
        assert rt.eval(RENAME[lang].format(d="/tmp/r")) == ["x"]
        assert rt.eval(RENAME[lang].format(d="/out/r")) == ["x"]
        assert rt.eval(RENAME_OUT[lang]) in (18, "EXDEV")
        assert [e["path"] for e in rt.list_files("/tmp") if e["path"] == "/tmp/y"] == ["/tmp/y"]
        shutil.rmtree(base / "out" / "r")
    with ForkServer(cfg(base, scratch=1 << 20), language=lang) as fs:
        with fs.session() as rt:
            check(rt)
    with SessionPool(cfg(base, scratch=1 << 20), language=lang, size=1) as pool:
        with pool.checkout(BOUND) as rt:
            check(rt)
    with IsolatedRuntime(cfg(base, scratch=1 << 20), language=lang, fork_server=False) as rt:
        check(rt)  # the same as spawned
    assert not (base / "data" / "y").exists()


DEGRADE = os.path.join(BUILD, "tests", "security", "cc-degrade")
#: forked scratch sessions, a rename between two directories of the
#: read-only grant: what each language got, and the layers missing
RENAME_IN_RO = r"""
import json, sys
sys.path.insert(0, sys.argv[2])
from codecage import ForkServer, Mount, RuntimeConfig
cfg = RuntimeConfig(mounts=[Mount(sys.argv[1], "/data")], scratch=1 << 20)
code = {"python": "import os\ntry:\n    os.rename('/data/a/python', '/data/b/python')\n"
                  "    r = 'moved'\nexcept OSError as e:\n    r = e.errno\nr",
        "javascript": "{ let r; try { require('fs').renameSync('/data/a/javascript',"
                      " '/data/b/javascript'); r = 'moved' } catch (e) { r = e.code } r }"}
out = {}
for lang in code:
    with ForkServer(cfg, language=lang, sandbox="auto") as fs, fs.session() as rt:
        out[lang] = [rt.eval(code[lang]), rt.sandbox["missing"]]
print(json.dumps(out))
"""


def rename_in_ro(base, deny):
    for d in ("a", "b"):
        (base / "data" / d).mkdir()
        (base / "data" / d).chmod(0o777)
    for lang in LANGS:
        (base / "data" / "a" / lang).write_text(lang)
    proc = subprocess.run([DEGRADE, "--deny", deny, "--", sys.executable, "-c", RENAME_IN_RO,
                           str(base / "data"), ccpkg.PKG_DIR],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout), sorted(os.listdir(base / "data" / "b"))


def test_forked_scratch_sessions_landlock_still_refuses_renames_it_forbids(base):
    """With the read-only bind failing open (cc-degrade --deny ro-remount),
    a forked scratch session's own Landlock domain alone refuses a rename
    inside the read-only grant (EACCES), as a spawned worker's does: the
    session's domain is whole, not just its REFER."""
    got, moved = rename_in_ro(base, "ro-remount")
    assert got == {"python": [13, ""], "javascript": ["EACCES", ""]}, got
    assert moved == []


def test_forked_scratch_sessions_rename_in_ro_reverse_both_layers_off(base):
    got, moved = rename_in_ro(base, "landlock,ro-remount")
    assert got == {"python": ["moved", "landlock"], "javascript": ["moved", "landlock"]}, got
    assert moved == ["javascript", "python"]


def test_forked_python_guests_cannot_see_each_others_scratch():
    with ForkServer(language="python", scratch=1 << 20) as fs:
        with fs.session() as a, fs.session() as b:
            a.eval("open('/tmp/mine', 'w').write('A')")
            assert b.eval("import os\nos.listdir('/tmp')") == []
            b.eval("open('/tmp/mine', 'w').write('B')")
            assert a.eval("open('/tmp/mine').read()") == "A"


# ---- item 3: the host file API ----

@pytest.mark.parametrize("lang", LANGS)
def test_host_file_api(lang):
    with IsolatedRuntime(language=lang, scratch=1 << 20, max_result=64 << 10) as rt:
        rt.write_file("/tmp/in.bin", bytes(range(256)))
        assert rt.read_file("/tmp/in.bin") == bytes(range(256))
        ls = rt.list_files("/tmp")
        assert ls[0]["path"] == "/tmp/in.bin" and ls[0]["size"] == 256 and not ls[0]["dir"]
        assert isinstance(ls[0]["mtime"], float)
        with pytest.raises(OutputLimitError, match="over the 10-byte cap"):
            rt.read_file("/tmp/in.bin", 10)
        rt.write_file("/tmp/big", b"x" * (200 << 10))  # max_source: 16 MiB
        with pytest.raises(OutputLimitError):
            rt.read_file("/tmp/big")  # over max_result
        with pytest.raises(InvalidInputError, match="No such file"):
            rt.write_file("/tmp/no/dir/f", b"x")
        with pytest.raises(InvalidInputError, match="Is a directory"):
            rt.read_file("/tmp")
        assert rt.eval("1 + 1") == 2  # still usable


@pytest.mark.parametrize("path", ["/tmp/../etc/passwd", "/etc/passwd", "tmp/x", "/usr/x",
                                  "/tmp/./x"])
def test_host_file_api_refuses_paths_that_leave(path):
    with IsolatedRuntime(language="python", scratch=1 << 20) as rt:
        with pytest.raises(InvalidInputError):
            rt.write_file(path, b"x")
        with pytest.raises(InvalidInputError):
            rt.read_file(path)


def test_host_file_api_does_not_follow_guest_symlinks_out():
    with IsolatedRuntime(language="python", scratch=1 << 20) as rt:
        rt.eval("import os\nos.symlink('/usr/lib/python3.11', '/tmp/lib')\n"
                "os.symlink('/usr/lib/python3.11/os.py', '/tmp/os.py')")
        with pytest.raises(InvalidInputError, match="not in scratch"):
            rt.read_file("/tmp/lib/os.py")
        with pytest.raises(InvalidInputError, match="symbolic links"):
            rt.read_file("/tmp/os.py")
        with pytest.raises(InvalidInputError):
            rt.write_file("/tmp/os.py", b"x")


def test_writing_where_nothing_is_writable_names_the_setting():
    with IsolatedRuntime(language="javascript") as rt:
        with pytest.raises(InvalidInputError, match=r"RuntimeConfig\(scratch=BYTES\)"):
            rt.write_file("/tmp/x", b"x")


def test_host_file_api_refuses_a_fifo_without_hanging(base):
    os.mkfifo(base / "out" / "pipe")
    with IsolatedRuntime(cfg(base), language="python") as rt:
        with pytest.raises(InvalidInputError):
            rt.read_file("/out/pipe")
        with pytest.raises(InvalidInputError):
            rt.write_file("/out/pipe", b"x")
        assert rt.eval("1") == 1


def test_file_calls_are_refused_while_an_eval_runs():
    with IsolatedRuntime(language="python", scratch=1 << 20) as rt:
        seen = []

        def tool():
            try:
                rt.write_file("/tmp/x", b"x")
            except InvalidInputError as e:
                seen.append(str(e))
            return 1

        rt.bind_function("tool", tool)
        assert rt.eval("tool()") == 1
        assert seen and "called back into its own runtime" in seen[0], seen
        rt.write_file("/tmp/x", b"x")  # between evals it works


REL_WRITE = {"python": "open('rel.txt', 'w').write('r')",
             "javascript": "fs.writeFileSync('rel.txt', 'r')"}


@pytest.mark.parametrize("lang", LANGS)
def test_guest_code_starts_in_its_scratch(lang):
    """From the fresh-clone user: with scratch on, a relative path is the
    scratch's (the guest started in /, read-only, so open('out.txt', 'w')
    failed with EROFS). Spawned and forked; reverse: without scratch the
    working directory stays the root."""
    write = REL_WRITE[lang]
    with IsolatedRuntime(language=lang, scratch=1 << 20) as rt:
        rt.eval(write)
        assert [e["path"] for e in rt.list_files("/tmp")] == ["/tmp/rel.txt"]
    with ForkServer(language=lang, scratch=1 << 20) as fs:
        with fs.session() as s:
            s.eval(write)
            assert [e["path"] for e in s.list_files("/tmp")] == ["/tmp/rel.txt"]
    if lang == "python":
        with IsolatedRuntime(language=lang, scratch=1 << 20) as rt:
            assert rt.eval("import os\nos.getcwd()") == "/tmp"
        with IsolatedRuntime(language=lang) as rt:
            assert rt.eval("import os\nos.getcwd()") == "/"
