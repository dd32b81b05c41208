"""Threads in the Python guest: numpy's BLAS starts none of its own, and a
guest's threads cost their stacks, not the session's memory limit.

Where Debian's libopenblas0-pthread is installed (it is on the polyglot
machines), OpenBLAS starts one thread per core when numpy loads it. A fork
server's template that preloads numpy then has threads, and its probe
session's fork() waited forever in OpenBLAS's atfork handler: every Python
fork server timed out at start (the MCP server's pools, ForkServer, the
default path). The worker sets OPENBLAS_NUM_THREADS and its kin to 1 while
numpy imports, and only then (py_helper.c's import_setup)."""
import os
import tempfile

import ccpkg  # noqa: F401  (builds the package)

from codecage import ForkServer, IsolatedRuntime, RuntimeConfig



def status(rt, field):
    """A field of the engine process's /proc status, as the host sees it
    (the guest has no /proc): the spawned worker's child, or the session."""
    pid = rt.pid
    with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
        kids = f.read().split()
    with open("/proc/%s/status" % (kids[0] if kids else pid)) as f:
        return int(next(ln for ln in f if ln.startswith(field + ":")).split()[1])


def threads(rt):
    return status(rt, "Threads")


def test_a_template_preloading_numpy_starts_and_forks_sessions():
    # before the fix: TimeoutError "starting the fork server: ... deadline passed"
    with ForkServer(language="python", sandbox="require", preload="numpy") as fs:
        for _ in range(2):
            with fs.session() as rt:
                assert rt.eval("import numpy; int(numpy.arange(4).sum())") == 6
                assert threads(rt) == 1


def test_numpy_in_a_spawned_worker_leaves_one_thread_and_no_variables():
    with IsolatedRuntime(language="python", sandbox="require", fork_server=False) as rt:
        rt.eval("import numpy")
        assert threads(rt) == 1
        assert rt.eval("import numpy; (numpy.ones((64, 64)) @ numpy.ones((64, 64)))[0, 0]") == 64.0
        assert rt.eval("import os; dict(os.environ)") == {}
        assert rt.eval("import ctypes; e = ctypes.POINTER(ctypes.c_char_p).in_dll("
                       "ctypes.CDLL(None), 'environ'); e[0]") is None


def test_the_variables_are_set_exactly_while_numpy_imports():
    # A stand-in numpy on python_path (it comes before Debian's folder)
    # records what its import saw; this holds on a machine with any BLAS.
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "numpy"))
        with open(os.path.join(d, "numpy", "__init__.py"), "w") as f:
            f.write("import os\nseen = {k: v for k, v in os.environ.items() if k.endswith('_THREADS')}\n")
        for p in (d, os.path.join(d, "numpy")):
            os.chmod(p, 0o755)
        cfg = RuntimeConfig(python_path=[d])
        with IsolatedRuntime(cfg, language="python", sandbox="require") as rt:
            seen = rt.eval("import numpy; numpy.seen")
            assert seen == {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
                            "MKL_NUM_THREADS": "1", "BLIS_NUM_THREADS": "1"}
            assert rt.eval("import os; dict(os.environ)") == {}


HOLD_THREADS = """import threading
threading.stack_size(65536)
ev = threading.Event()
ts = [threading.Thread(target=ev.wait) for _ in range(48)]
for t in ts:
    t.start()
"""


def test_a_guests_threads_cost_their_stacks_not_the_address_space_limit():
    # glibc gave each thread a malloc arena of its own, each reserving
    # 64 MiB of address space: with pandas imported, 40 threads exhausted
    # a session's 768 MiB RLIMIT_AS, and in a forked session the 41st left
    # CPython waiting for it until the deadline (the checklist's
    # py-thread-bomb-small-stacks over MCP). One arena for all threads.
    with IsolatedRuntime(language="python", sandbox="require", fork_server=False) as rt:
        before = status(rt, "VmSize")
        rt.eval(HOLD_THREADS)
        assert threads(rt) == 49
        grown_kib = status(rt, "VmSize") - before
        assert grown_kib < 48 * 1024, grown_kib  # 48 stacks of 64 KiB and their guards
        rt.eval("ev.set()\nfor t in ts:\n    t.join()")


def test_threads_after_pandas_in_a_forked_session_reach_the_thread_limit():
    with ForkServer(language="python", sandbox="require", preload="pandas") as fs:
        with fs.session() as rt:
            got = rt.eval("""import threading
threading.stack_size(65536)
ev, ts = threading.Event(), []
try:
    while True:
        t = threading.Thread(target=ev.wait); t.start(); ts.append(t)
except RuntimeError as e:
    out = [len(ts) + 1, str(e)]
ev.set()
for t in ts:
    t.join()
out""", timeout=20)
            assert got == [64, "can't start new thread"]
