"""The default path (issue 19, item 3): IsolatedRuntime() and codecage.eval
take their worker from a process-wide fork server per language and
template-fixed options, started lazily. Each scenario runs both ways
(fork_server=False and the default) and must end the same; then the lazy
start (one template per key), the fallback when a template fails, fork()
in the host, and concurrent first use."""
import asyncio
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import textwrap

import pytest

import ccpkg  # noqa: F401  (builds the package)
import netsrv

import codecage
from codecage import IsolatedRuntime, Mount
from codecage import _codecage

MiB = 1 << 20
pytestmark = [pytest.mark.userns, pytest.mark.landlock, pytest.mark.seccomp]


@pytest.fixture
def base():
    """A directory the worker's uid (nobody on a root host) can reach."""
    d = pathlib.Path(tempfile.mkdtemp(prefix="cc-defpath-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def outcome(fn):
    """What a scenario ended with: ("ok", value) or ("error", class, guest
    error name, alive)."""
    try:
        return ("ok", fn())
    except codecage.CodecageError as e:
        return ("error", type(e).__name__, getattr(e, "name", None))


def both(fn, **kw):
    """fn(rt) on a spawned runtime and on the default path's; both
    outcomes, and checks the default one really was forked (scratch
    too)."""
    got = []
    for fork_server in (False, True):
        with IsolatedRuntime(fork_server=fork_server, **kw) as rt:
            if fork_server:
                assert rt.sandbox["fork_server"] == "shared", rt.sandbox
            else:
                assert "fork_server" not in rt.sandbox
            got.append(outcome(lambda: fn(rt)) + (rt.alive,))
    return got


@pytest.fixture(scope="module")
def srv():
    s = netsrv.Server("127.0.0.1")
    yield s
    s.close()


def _tool_rt(rt, code):
    rt.bind_function("add", lambda a, b: a + b)
    return rt.eval(code)


def _kw_rt(rt):
    rt.bind_function("lookup", lambda sku, n=1: f"{sku}x{n}")
    return rt.eval('lookup("A1", n=3)')


def _async_rt(rt, code):
    async def slow(x):
        await asyncio.sleep(0.01)
        return x * 2
    rt.bind_function("slow", slow)
    return asyncio.run(rt.eval_async(code))


def _traceback(rt, code):
    try:
        rt.eval(code)
    except codecage.GuestError as e:
        return (e.name, e.message, e.traceback)


def _scratch(rt, code):
    rt.write_file("/tmp/in.txt", "from the host")
    v = rt.eval(code)
    return v, rt.read_file("/tmp/out.txt"), [f["path"] for f in rt.list_files("/tmp")]


PY = {
    "memory limit": (lambda rt: rt.eval("x = bytearray(200 * 1024 * 1024)\nlen(x)"),
                     {"max_memory": 64 * MiB}),
    "timeout": (lambda rt: rt.eval("while True: pass", timeout=0.3), {}),
    "tool call": (lambda rt: _tool_rt(rt, "add(2, 3)"), {}),
    "kw tool": (_kw_rt, {}),
    "async tool": (lambda rt: _async_rt(rt, "import asyncio\n"
                                        "await asyncio.gather(atools.slow(1), atools.slow(2))"),
                   {}),
    "scratch": (lambda rt: _scratch(rt, "open('/tmp/out.txt', 'w').write("
                                    "open('/tmp/in.txt').read().upper())"),
                {"scratch": 4 * MiB}),
    "scratch absent": (lambda rt: rt.eval("open('/tmp/x', 'w').write('x')"), {}),
    "output limit": (lambda rt: rt.eval("print('x' * 5000)"), {"max_stdout": 1000}),
    "traceback": (lambda rt: _traceback(rt, "def f():\n    raise ValueError('no')\nf()"), {}),
    # the limits the kernel holds the guest to (threads: RLIMIT_NPROC);
    # how many threads really start also depends on the host's other
    # processes of the worker's uid, so that is compared as "at least 8"
    "rlimits": (lambda rt: rt.eval(textwrap.dedent("""\
        import resource as r
        [r.getrlimit(getattr(r, n)) for n in
         ("RLIMIT_NPROC", "RLIMIT_NOFILE", "RLIMIT_DATA", "RLIMIT_CPU", "RLIMIT_FSIZE",
          "RLIMIT_SIGPENDING", "RLIMIT_CORE")]""")), {"max_open_files": 40}),
    "threads": (lambda rt: rt.eval(textwrap.dedent("""\
        import threading
        ev = threading.Event()
        ts = [threading.Thread(target=ev.wait) for i in range(8)]
        [t.start() for t in ts]
        ev.set()
        [t.join() for t in ts]
        len(ts)""")), {}),
    "descriptors": (lambda rt: rt.eval(textwrap.dedent("""\
        fs = []
        try:
            while True:
                fs.append(open('/dev/null'))
        except OSError as e:
            r = e.errno
        r""")), {"max_open_files": 32}),
    "cpu limit": (lambda rt: rt.eval("while True: pass", timeout=10), {"cpu_time": 1}),
    "display": (lambda rt: rt.run("display({'a': 1})\n1").displays, {}),
    "stdout": (lambda rt: rt.run("print('hi')\nimport sys; print('e', file=sys.stderr)"
                                 ).stdout, {}),
}

JS = {
    "memory limit": (lambda rt: rt.eval("let a = []; for (;;) a.push(new Array(1e6).fill(1))"),
                     {"max_memory": 32 * MiB}),
    "timeout": (lambda rt: rt.eval("for (;;) {}", timeout=0.3), {}),
    "tool call": (lambda rt: _tool_rt(rt, "add(2, 3)"), {}),
    "async tool": (lambda rt: _async_rt(rt, "Promise.all([tools.slow(1), tools.slow(2)])"), {}),
    "scratch": (lambda rt: _scratch(rt, "const fs = require('fs'); fs.writeFileSync("
                                    "'/tmp/out.txt', fs.readFileSync('/tmp/in.txt', 'utf8')"
                                    ".toUpperCase()); 1"),
                {"scratch": 4 * MiB}),
    "output limit": (lambda rt: rt.eval("console.log('x'.repeat(5000))"), {"max_stdout": 1000}),
    "traceback": (lambda rt: _traceback(rt, "function f() { throw new TypeError('no') }\nf()"),
                  {}),
    "result limit": (lambda rt: rt.eval("'x'.repeat(100000)"), {"max_result": 4096}),
}


#: The error class a scenario must end with (spawned, so the scenario
#: really reaches its limit); the others end "ok".
ERRORS = {"memory limit": "MemoryLimitError", "timeout": "TimeoutError",
          "output limit": "OutputLimitError", "result limit": "OutputLimitError",
          "cpu limit": "WorkerCrashed", "scratch absent": "GuestError"}


@pytest.mark.parametrize("name", sorted(PY))
def test_python_scenarios_match_a_spawned_runtime(name):
    fn, kw = PY[name]
    spawned, forked = both(fn, language="python", **kw)
    assert forked == spawned
    assert spawned[:2] == (("error", ERRORS[name]) if name in ERRORS else ("ok", spawned[1]))


@pytest.mark.parametrize("name", sorted(JS))
def test_javascript_scenarios_match_a_spawned_runtime(name):
    fn, kw = JS[name]
    spawned, forked = both(fn, language="javascript", **kw)
    assert forked == spawned
    assert spawned[:2] == (("error", ERRORS[name]) if name in ERRORS else ("ok", spawned[1]))


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_mounts_match(base, language):
    tmp_path = base
    (tmp_path / "data.txt").write_text("mounted")
    code = ("open('/data/data.txt').read()" if language == "python"
            else "require('fs').readFileSync('/data/data.txt', 'utf8')")
    write = ("open('/data/new.txt', 'w').write('x')" if language == "python"
             else "require('fs').writeFileSync('/data/new.txt', 'x')")
    spawned, forked = both(lambda rt: (rt.eval(code), outcome(lambda: rt.eval(write))),
                           language=language, mounts=[Mount(tmp_path, "/data")])
    assert forked == spawned
    assert spawned[0] == "ok" and spawned[1][0] == "mounted"
    assert not (tmp_path / "new.txt").exists()


def test_a_new_directory_at_a_mounted_path_is_a_new_template(base):
    """The key is the object a Mount names, not its path: a directory put
    where a mounted one was is what the next runtime sees."""
    d = base / "d"
    d.mkdir()
    d.chmod(0o755)
    (d / "f").write_text("first")
    with IsolatedRuntime(language="python", mounts=[Mount(d, "/data")]) as rt:
        assert rt.eval("open('/data/f').read()") == "first"
    d.rename(base / "old")
    d.mkdir()
    d.chmod(0o755)
    (d / "f").write_text("second")
    with IsolatedRuntime(language="python", mounts=[Mount(d, "/data")]) as rt:
        assert rt.sandbox["fork_server"] == "shared"
        assert rt.eval("open('/data/f').read()") == "second"


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_net_refusal_and_reach_match(srv, language):
    allowed = srv.url("/echo")
    refused = "http://127.0.0.2:9/"
    if language == "python":
        def go(rt, url):
            return rt.eval(f"import urllib.request\n"
                           f"urllib.request.urlopen({url!r}).status")
    else:
        def go(rt, url):
            return rt.eval(f"(async () => (await fetch({url!r})).status)()")
    spawned, forked = both(lambda rt: (outcome(lambda: go(rt, allowed)),
                                       outcome(lambda: go(rt, refused))),
                           language=language, allow_net=[f"127.0.0.1:{srv.port}"])
    assert forked == spawned
    assert spawned[1][1][0] == "error"
    # and with no allow_net at all, the same refusal both ways
    spawned, forked = both(lambda rt: go(rt, allowed), language=language)
    assert forked == spawned and spawned[0] == "error"


def test_the_per_session_options_are_the_runtimes_own():
    """timeout and max_pending_calls are not fixed by the template: two
    runtimes of one server keep their own."""
    with IsolatedRuntime(language="python", timeout=0.2) as a, \
            IsolatedRuntime(language="python", timeout=30) as b:
        assert a.sandbox["fork_server"] == b.sandbox["fork_server"] == "shared"
        with pytest.raises(codecage.TimeoutError):
            a.eval("import time\ntime.sleep(2)")
        assert b.eval("import time\ntime.sleep(0.5)\n1") == 1


def test_sandbox_report_is_the_spawned_one():
    for language in ("python", "javascript"):
        with IsolatedRuntime(language=language, fork_server=False) as s, \
                IsolatedRuntime(language=language) as f:
            got = dict(f.sandbox)
            assert got.pop("fork_server") == "shared"
            assert got == s.sandbox


def test_fork_server_must_be_a_bool():
    with pytest.raises(TypeError, match="fork_server"):
        IsolatedRuntime(fork_server="yes")


# ---- process-wide behaviour: each in a fresh interpreter ----

def run_py(code, **env):
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          env=dict(os.environ, PYTHONPATH=ccpkg.PKG_DIR, **env),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_one_template_per_key_started_on_first_use():
    out = run_py("""
        import os
        import codecage
        from codecage import _codecage
        assert _codecage.shared_fork_server_pids() == []  # lazy: nothing at import
        rts = [codecage.IsolatedRuntime() for _ in range(3)]
        rts += [codecage.IsolatedRuntime(language="python") for _ in range(2)]
        pids = _codecage.shared_fork_server_pids()
        assert len(pids) == 2, pids
        def ppid(p):
            for line in open(f"/proc/{p}/status"):
                if line.startswith("PPid:"):
                    return int(line.split()[1])
        def mine(p):
            while p > 1:
                if p == os.getpid():
                    return True
                p = ppid(p)
            return False
        assert all(mine(p) for p in pids), pids
        assert all(rt.eval("1+1") == 2 for rt in rts)
        rts.append(codecage.IsolatedRuntime(max_memory=64 << 20))  # another key
        assert len(_codecage.shared_fork_server_pids()) == 3
        codecage.IsolatedRuntime(fork_server=False).close()
        assert len(_codecage.shared_fork_server_pids()) == 3
        assert codecage.eval("6 * 7") == 42  # codecage.eval takes the same path
        assert codecage._runtime._default["rt"].sandbox["fork_server"] == "shared"
        assert len(_codecage.shared_fork_server_pids()) == 3
        codecage.close_fork_servers()
        assert _codecage.shared_fork_server_pids() == []
        assert all(rt.eval("2+2") == 4 for rt in rts)  # sessions outlive the close
        print("ok")
    """)
    assert out.strip() == "ok"


def test_a_template_that_fails_falls_back_to_spawning():
    code = """
        import codecage
        from codecage import _codecage
        for lang in ("javascript", "python"):
            with codecage.IsolatedRuntime(language=lang) as rt:
                print(rt.sandbox["fork_server"])
                assert rt.eval("1+1") == 2
        print(len(_codecage.shared_fork_server_pids()))
    """
    out = run_py(code, CODECAGE_TEST_FORK_SERVER_BROKEN="1").splitlines()
    assert out[0].startswith("spawned: the template did not start (internal: "
                             "CODECAGE_TEST_FORK_SERVER_BROKEN is set)"), out
    assert out[1].startswith("spawned: the template did not start"), out
    assert out[2] == "0"
    # in reverse: without the failure, the same code is forked
    assert run_py(code).splitlines() == ["shared", "shared", "2"]


def test_a_forked_host_child_starts_its_own_server():
    out = run_py("""
        import os
        import codecage
        from codecage import _codecage
        rt = codecage.IsolatedRuntime()
        [parent_tmpl] = _codecage.shared_fork_server_pids()
        pid = os.fork()
        if pid == 0:
            try:
                assert _codecage.shared_fork_server_pids() == []
                with codecage.IsolatedRuntime() as c:
                    assert c.sandbox["fork_server"] == "shared"
                    assert c.eval("1+1") == 2
                    [mine] = _codecage.shared_fork_server_pids()
                    assert mine != parent_tmpl
                codecage.close_fork_servers()
                os._exit(0)
            except BaseException as e:
                print("child:", repr(e), flush=True)
                os._exit(1)
        _, st = os.waitpid(pid, 0)
        assert st == 0, st
        # the parent's template was neither used nor ended by the child
        assert _codecage.shared_fork_server_pids() == [parent_tmpl]
        with codecage.IsolatedRuntime() as b:
            assert b.sandbox["fork_server"] == "shared" and b.eval("3") == 3
        assert _codecage.shared_fork_server_pids() == [parent_tmpl]
        print("ok")
    """)
    assert out.strip() == "ok"


@pytest.mark.parametrize("language", ["javascript", "python"])
def test_threads_creating_the_first_runtime_start_one_server(language):
    out = run_py(f"""
        import threading
        import codecage
        from codecage import _codecage
        go = threading.Barrier(6)
        rts = []
        def make():
            go.wait()
            rts.append(codecage.IsolatedRuntime(language={language!r}))
        ts = [threading.Thread(target=make) for _ in range(6)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        assert len(rts) == 6
        assert all(rt.sandbox["fork_server"] == "shared" for rt in rts)
        print(len(_codecage.shared_fork_server_pids()))
    """)
    assert out.strip() == "1"


def test_at_most_eight_servers_are_kept():
    out = run_py("""
        import codecage
        from codecage import _codecage
        rts = [codecage.IsolatedRuntime(max_stdout=1000 + i) for i in range(10)]
        print(len(_codecage.shared_fork_server_pids()),
              all(rt.eval("1") == 1 for rt in rts))
    """)
    assert out.split() == ["8", "True"]


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_streamed_lines_match(language):
    code = ("import sys\nfor i in range(3):\n    print('line', i, flush=True)\n"
            "print('err', file=sys.stderr)\n7" if language == "python" else
            "for (let i = 0; i < 3; i++) console.log('line', i); console.error('err'); 7")
    got = []
    for fork_server in (False, True):
        lines = []
        with IsolatedRuntime(language=language, fork_server=fork_server,
                             on_output=lambda s, line: lines.append((s, line))) as rt:
            got.append((rt.eval(code), lines))
    assert got[0] == got[1]
    assert got[0][1] == [("stdout", "line 0"), ("stdout", "line 1"), ("stdout", "line 2"),
                         ("stderr", "err")]


RENAME = {"python": "import os\nos.makedirs('{d}/w/sub', exist_ok=True)\n"
                    "open('{d}/w/sub/f', 'w').write('x')\n"
                    "os.rename('{d}/w/sub/f', '{d}/w/g')\nsorted(os.listdir('{d}/w'))",
          "javascript": "const fs = require('fs'); fs.mkdirSync('{d}/w/sub', {{recursive: true}});"
                        " fs.writeFileSync('{d}/w/sub/f', 'x');"
                        " fs.renameSync('{d}/w/sub/f', '{d}/w/g'); fs.readdirSync('{d}/w').sort()"}


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_renames_between_directories_of_a_writable_grant(base, language):
    """A forked session's own Landlock layer (scopes) grants REFER
    everywhere, so a rename between two directories of a writable grant is
    the file domain's to allow, as in a spawned worker; it was EXDEV."""
    out = base / "out"
    out.mkdir()
    out.chmod(0o777)
    code = RENAME[language].format(d="/out")
    spawned, forked = both(lambda rt: rt.eval(code), language=language,
                           mounts=[Mount(out, "/out", writable=True)])
    assert spawned == forked == ("ok", ["g", "sub"], True)
    shutil.rmtree(out / "w")
    with codecage.ForkServer(language=language,
                             mounts=[Mount(out, "/out", writable=True)]) as fs:
        with fs.session() as rt:
            assert rt.eval(code) == ["g", "sub"]


#: Scratch work a guest does (4 MiB of scratch, 2 MiB per file): renames
#: between directories, owners and modes, a relative path, the file cap,
#: the size and inode caps (what each stopped at, and how many got in).
SCRATCH_WORK = {"python": r"""
import os
def st(p):
    s = os.stat(p)
    return [s.st_uid, s.st_gid, oct(s.st_mode)]
def err(f):
    try:
        f()
        return 'ok'
    except OSError as e:
        return e.errno
def fill(name, data):
    n = 0
    while True:
        try:
            with open('/tmp/%s%d' % (name, n), 'wb') as f:
                f.write(data)
        except OSError as e:
            code = e.errno
            break
        n += 1
    for f in os.listdir('/tmp'):
        if f.startswith(name):
            os.remove('/tmp/' + f)
    return [n, code]
os.makedirs('/tmp/a/sub'); os.makedirs('/tmp/b')
open('/tmp/a/sub/x', 'w').write('x')
os.rename('/tmp/a/sub/x', '/tmp/b/x'); os.rename('/tmp/a/sub', '/tmp/b/sub')
open('rel', 'w').close()
r = {'tree': sorted(os.listdir('/tmp/b')), 'rel': os.path.exists('/tmp/rel'),
     'owners': [st(p) for p in ('/tmp', '/tmp/b', '/tmp/b/x')],
     'file cap': err(lambda: open('/tmp/big', 'wb').write(b'x' * (3 << 20)))}
os.remove('/tmp/big')
r['size cap'] = fill('s', b'x' * (1 << 20))
r['inode cap'] = fill('i', b'')
r
""", "javascript": r"""{
const fs = require('fs');
const st = p => { const s = fs.statSync(p); return [s.uid, s.gid, s.mode.toString(8)] };
const err = f => { try { f(); return 'ok' } catch (e) { return e.code } };
const fill = (name, data) => {
  let n = 0, code;
  for (;;) { try { fs.writeFileSync('/tmp/' + name + n, data); n++ } catch (e) { code = e.code; break } }
  for (const f of fs.readdirSync('/tmp')) if (f.startsWith(name)) fs.unlinkSync('/tmp/' + f);
  return [n, code];
};
fs.mkdirSync('/tmp/a/sub', {recursive: true}); fs.mkdirSync('/tmp/b');
fs.writeFileSync('/tmp/a/sub/x', 'x');
fs.renameSync('/tmp/a/sub/x', '/tmp/b/x'); fs.renameSync('/tmp/a/sub', '/tmp/b/sub');
fs.writeFileSync('rel', '');
const r = {tree: fs.readdirSync('/tmp/b').sort(), rel: fs.existsSync('/tmp/rel'),
           owners: ['/tmp', '/tmp/b', '/tmp/b/x'].map(st),
           'file cap': err(() => fs.writeFileSync('/tmp/big', new Uint8Array(3 << 20)))};
fs.unlinkSync('/tmp/big');
r['size cap'] = fill('s', new Uint8Array(1 << 20));
r['inode cap'] = fill('i', '');
r }"""}


def _scratch_work(rt, language):
    """The guest's scratch work, then the host's file calls on it."""
    v = rt.eval(SCRATCH_WORK[language])
    rt.write_file("/tmp/b/h", b"from the host")
    return (v, rt.read_file("/tmp/b/h"), rt.read_file("/tmp/b/x"),
            [(f["path"], f["size"], f["dir"]) for f in rt.list_files("/tmp/b")])


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_scratch_is_forked_and_matches_a_spawned_runtime(language):
    """Scratch runtimes take the fork server path (they were always
    spawned, since a forked session's scratch refused renames between
    directories: EXDEV). Everything scratch does, guest and host side,
    ends the same both ways."""
    spawned, forked = both(lambda rt: _scratch_work(rt, language), language=language,
                           scratch=4 * MiB, max_file_size=2 * MiB)
    assert forked == spawned
    assert spawned[0] == "ok", spawned
    v = spawned[1][0]
    assert v["tree"] == ["sub", "x"] and v["rel"] is True, v
    assert v["file cap"] in (27, "EFBIG") and v["size cap"][1] in (28, "ENOSPC"), v
    assert v["inode cap"][1] in (28, "ENOSPC") and v["inode cap"][0] > 4000, v
    assert spawned[1][3] == [("/tmp/b/h", 13, False), ("/tmp/b/sub", 40, True),
                             ("/tmp/b/x", 1, False)]


def test_max_file_size_alone_is_forked_with_its_scratch():
    """max_file_size alone still gives a scratch of that size, forked too."""
    code = "open('/tmp/x', 'w').write('y' * 100)"
    spawned, forked = both(lambda rt: rt.eval(code), max_file_size=1 * MiB,
                           language="python")
    assert spawned == forked == ("ok", 100, True)


def test_configure_default_runtime_takes_fork_server():
    try:
        codecage.configure_default_runtime(fork_server=False)
        assert codecage.eval("20 + 1") == 21
        assert "fork_server" not in codecage._runtime._default["rt"].sandbox
        codecage.configure_default_runtime()
        assert codecage.eval("20 + 2") == 22
        assert codecage._runtime._default["rt"].sandbox["fork_server"] == "shared"
        with pytest.raises(TypeError, match="fork_server"):
            codecage.configure_default_runtime(fork_server=1)
    finally:
        codecage.configure_default_runtime()


def test_a_dead_template_is_started_again():
    out = run_py("""
        import os, signal, time
        import codecage
        from codecage import _codecage
        codecage.IsolatedRuntime().close()
        [old] = _codecage.shared_fork_server_pids()
        os.kill(old, signal.SIGKILL)  # the template this process started
        deadline = time.monotonic() + 30
        while os.path.exists(f"/proc/{old}") and time.monotonic() < deadline:
            try:  # reaped by its supervisor on the next look
                with open(f"/proc/{old}/stat") as f:
                    if f.read().split()[2] == "Z":
                        break
            except FileNotFoundError:
                break
            time.sleep(0.01)
        with codecage.IsolatedRuntime() as rt:
            print(rt.sandbox["fork_server"], rt.eval("1+1"))
        [new] = _codecage.shared_fork_server_pids()
        print(new != old)
    """)
    assert out.split() == ["shared", "2", "True"]
