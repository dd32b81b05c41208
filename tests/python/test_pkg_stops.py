"""How an eval past its deadline ends, from Python: JavaScript's endless job
queues (src/engine/quickjs/engine_js.c) and Python's long C calls (engine_py.c's
soft stop and its stuck check), on the default path (a forked session)
and on a spawned worker. bench/stop_overshoot.py measures how late; these
tests check what happens."""
import pytest

import ccpkg  # noqa: F401  (builds the package)

import codecage
from codecage import GuestError, IsolatedRuntime, RuntimeConfig, WorkerCrashed

CHAIN = ("Promise.resolve().then(function f() { n++; return Promise.resolve().then(f) });\n"
         "await new Promise(() => {})")


@pytest.mark.parametrize("fork_server", [True, False])
def test_endless_promise_chain_times_out_and_the_runtime_goes_on(fork_server):
    """Regression: the stop ran every queued job with a one-byte stack to
    fail it, which rejected the chain one link (one job) at a time past the
    deadline, until the grace ran out and the worker was killed."""
    cfg = RuntimeConfig(timeout=2, max_memory=1 << 30)
    with IsolatedRuntime(cfg, language="javascript", fork_server=fork_server) as rt:
        rt.eval("globalThis.n = 0")
        with pytest.raises(codecage.TimeoutError, match="still usable"):
            rt.eval(CHAIN)
        assert rt.alive
        assert rt.eval("n") > 1000
        # what the stopped eval left queued was dropped, not run later
        assert rt.eval("const m = n; [1, 2].map(x => x * 2).concat([n === m])") == [2, 4, True]
        # a promise that waited on a dropped job stays pending
        with pytest.raises(codecage.TimeoutError):
            rt.eval("globalThis.q = Promise.resolve().then(function f() {"
                    " return Promise.resolve().then(f) }); 1", timeout=0.3)
        with pytest.raises(GuestError, match="never settle"):
            rt.eval("await q")


def test_endless_chain_that_fills_the_heap_is_a_memory_limit():
    """Regression: QuickJS drops a job it has no memory to queue; the queue
    then ran dry and the eval said its Promise could never settle."""
    cfg = RuntimeConfig(timeout=30, max_memory=16 << 20)
    with IsolatedRuntime(cfg, language="javascript") as rt:
        rt.eval("globalThis.n = 0")
        with pytest.raises(codecage.MemoryLimitError):
            rt.eval(CHAIN)
        assert rt.alive and rt.eval("1 + 1") == 2


# A grace shorter than the worker's old stuck check (its second tick, 50 ms
# after the deadline) and far longer than the new one: the kind of the
# message says which of the two ended the eval.
SHORT_GRACE = 0.04


@pytest.mark.parametrize("fork_server", [True, False])
@pytest.mark.parametrize("code", ["sum(range(10**13))", "('{{' * 50_000_000).format()"])
def test_long_c_call_is_ended_by_the_worker_soon_after_the_deadline(code, fork_server):
    """Regression (three peer sandboxes' timeout tests): the stop landing
    in a C builtin that never checks for signals was found only at the
    soft stop's next tick, 50 ms after the deadline, so such an eval ended
    about 53 ms late; here a 40 ms grace ran out first and the supervisor
    killed the worker ("did not stop within the grace"). Now the worker
    ticks every millisecond once a stop is asked and ends itself after
    5 ms of CPU time that did not take it: the message says the call could
    not be interrupted."""
    cfg = RuntimeConfig(timeout=0.3, grace=SHORT_GRACE)
    with IsolatedRuntime(cfg, language="python", fork_server=fork_server) as rt:
        rt.eval("x = 41")
        with pytest.raises(codecage.TimeoutError, match="cannot be interrupted") as ei:
            rt.eval(code)
        assert "grace" not in str(ei.value), ei.value
        assert not rt.alive
        with pytest.raises(WorkerCrashed):
            rt.eval("x")


@pytest.mark.parametrize("fork_server", [True, False])
def test_pure_python_loop_still_takes_the_soft_stop(fork_server):
    """The faster stuck check must not take a loop the soft stop can end:
    the guest sees a KeyboardInterrupt it may catch, the eval is a
    timeout, the runtime keeps its state. (The default grace: a spawned
    worker's first traceback imports the traceback module, which the
    stop's report waits for.)"""
    cfg = RuntimeConfig(timeout=0.3)
    with IsolatedRuntime(cfg, language="python", fork_server=fork_server) as rt:
        with pytest.raises(codecage.TimeoutError, match="still usable"):
            # (in a function: CPython 3.11 itself misses the handler of a
            # bare `while True: pass` at module level)
            rt.eval("caught = False\ndef spin():\n    while True: pass\ntry:\n    spin()\n"
                    "except KeyboardInterrupt:\n    caught = True")
        assert rt.alive
        assert rt.eval("caught") is True
        with pytest.raises(codecage.TimeoutError, match="still usable"):
            rt.eval("while True: x = [i for i in range(1000)]")
        assert rt.eval("1 + 1") == 2
