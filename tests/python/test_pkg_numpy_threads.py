"""numpy's BLAS starts no threads of its own in the guest.

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



def threads(rt):
    """The worker's threads, as the host sees them (the guest has no /proc)."""
    with open("/proc/%d/status" % rt.pid) as f:
        return int(next(ln for ln in f if ln.startswith("Threads:")).split()[1])


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
