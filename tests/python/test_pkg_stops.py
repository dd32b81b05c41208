"""How an eval past its deadline ends, from Python: JavaScript's endless job
queues (src/worker/engine_js.c), on the default path (a forked session)
and on a spawned worker."""
import pytest

import ccpkg  # noqa: F401  (builds the package)

import codecage
from codecage import GuestError, IsolatedRuntime, RuntimeConfig

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
