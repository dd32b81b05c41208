"""Threads and asyncio: the GIL is released while the worker runs, a runtime
used from two threads at once gets RuntimeBusyError, eval_async never blocks
the event loop, and coroutine tools run concurrently when the guest fans
out. No timings: every check is an ordering that could not happen
otherwise (a deadlock would fail through asyncio.wait_for or Event.wait's
generous bound, not through a measured duration)."""
import asyncio
import threading

import pytest

import ccpkg  # noqa: F401  (builds the package)

import codecage
from codecage import InvalidInputError, IsolatedRuntime, RuntimeBusyError, ToolBridge

BOUND = 60  # seconds: only reached when something is broken


def test_gil_is_released_while_the_worker_computes():
    counter = [0]
    seen = {}
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            counter[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        with IsolatedRuntime(timeout=BOUND) as rt:
            rt.bind_function("mark", lambda k: seen.__setitem__(k, counter[0]))
            # Between the two marks only the worker computes; the host
            # thread counts only if the eval released the GIL.
            rt.eval("mark('a'); let s = 0; for (let i = 0; i < 3e7; i++) s += i; mark('b'); s")
    finally:
        stop.set()
        t.join()
    assert seen["b"] > seen["a"]


def test_two_threads_on_one_runtime_get_a_clear_error():
    entered, release = threading.Event(), threading.Event()

    def block():
        entered.set()
        assert release.wait(BOUND)
        return "done"

    with IsolatedRuntime() as rt:
        rt.bind_function("block", block)
        out = {}
        t = threading.Thread(target=lambda: out.setdefault("v", rt.eval("block()")))
        t.start()
        assert entered.wait(BOUND)
        with pytest.raises(RuntimeBusyError, match="another thread"):
            rt.eval("1")
        with pytest.raises(RuntimeBusyError):
            rt.set_global("x", 1)
        release.set()
        t.join(BOUND)
        assert out["v"] == "done"
        assert rt.eval("2") == 2  # nothing was corrupted


def test_tool_calling_back_into_its_runtime_is_refused():
    with IsolatedRuntime() as rt:
        rt.bind_function("again", lambda: rt.eval("1"))
        assert rt.eval("try { again() } catch (e) { e.name }") == "InvalidInputError"
        assert rt.eval("3") == 3


def test_close_from_another_thread_waits_for_the_eval():
    entered, release = threading.Event(), threading.Event()
    with IsolatedRuntime() as rt:
        rt.bind_function("block", lambda: (entered.set(), release.wait(BOUND))[1])
        out = {}
        t = threading.Thread(target=lambda: out.setdefault("v", rt.eval("block()")))
        t.start()
        assert entered.wait(BOUND)
        rt.close()
        assert rt.closed
        release.set()
        t.join(BOUND)
        assert out["v"] is True
        with pytest.raises(InvalidInputError, match="closed"):
            rt.eval("1")


def test_many_threads_many_runtimes_one_budget():
    bridge = ToolBridge({"inc": lambda x: x + 1}, max_calls=10_000)
    errors = []

    def work(lang, n):
        try:
            with IsolatedRuntime(language=lang) as rt:
                bridge.attach(rt)
                for i in range(n):
                    assert rt.eval(f"inc({i})") == i + 1
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=("javascript" if i % 2 else "python", 25))
               for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(BOUND * 5)
    assert not errors
    assert bridge.calls_made == 200
    assert bridge.calls_remaining == 10_000 - 200


def test_eval_async_does_not_block_the_loop():
    async def main():
        ticks = 0
        gate = asyncio.Event()

        async def ticker():
            nonlocal ticks
            while not gate.is_set():
                ticks += 1
                await asyncio.sleep(0)

        async def wait_gate():
            # Runs on the loop while the eval waits: the loop must be free.
            await gate.wait()
            return ticks

        with IsolatedRuntime() as rt:
            rt.bind_function("wait_gate", wait_gate)
            rt.bind_function("open_gate", lambda: asyncio.get_event_loop_policy() and None)
            task = asyncio.ensure_future(ticker())
            loop = asyncio.get_running_loop()
            loop.call_soon(lambda: None)
            ev = asyncio.ensure_future(rt.eval_async("await tools.wait_gate()"))
            while ticks < 3:
                await asyncio.sleep(0)
            gate.set()
            seen = await asyncio.wait_for(ev, BOUND)
            await task
        return seen

    assert asyncio.run(main()) >= 3


@pytest.mark.parametrize("lang,code", [
    ("javascript", "await Promise.all([tools.a(), tools.b()])"),
    ("python", "import asyncio\nawait asyncio.gather(atools.a(), atools.b())"),
])
def test_coroutine_tools_run_concurrently(lang, code):
    async def main():
        ea, eb = asyncio.Event(), asyncio.Event()

        async def a():
            ea.set()
            await eb.wait()  # only returns if b() runs meanwhile
            return "a"

        async def b():
            eb.set()
            await ea.wait()
            return "b"

        bridge = ToolBridge({"a": a, "b": b}, max_calls=2)
        with IsolatedRuntime(language=lang) as rt:
            bridge.attach(rt)
            out = await asyncio.wait_for(rt.eval_async(code), BOUND)
        return out, bridge.calls_made

    assert asyncio.run(main()) == (["a", "b"], 2)


def test_coroutine_tools_fan_out_wide_and_fail_per_call():
    async def main():
        async def square(x):
            await asyncio.sleep(0)
            if x == 7:
                raise PermissionError("seven is private")
            return x * x

        with IsolatedRuntime() as rt:
            rt.bind_function("square", square)
            return await rt.eval_async(
                "const r = await Promise.allSettled([...Array(50).keys()].map(i => "
                "tools.square(i))); r.map(x => x.status == 'fulfilled' ? x.value : "
                "x.reason.name + ':' + x.reason.message)")

    out = asyncio.run(main())
    assert out[7] == "PermissionError:seven is private"
    assert out[:7] == [i * i for i in range(7)] and out[49] == 49 * 49


def test_coroutine_tool_in_a_synchronous_eval():
    async def later(x):
        await asyncio.sleep(0)
        return x + 1

    with IsolatedRuntime(language="python") as rt:
        rt.bind_function("later", later)
        assert rt.eval("later(1) + tools.later(2)") == 5

    async def inside_a_loop():
        with IsolatedRuntime() as rt:
            rt.bind_function("later", later)
            return rt.eval("later(41)")  # a sync eval from a coroutine

    assert asyncio.run(inside_a_loop()) == 42


def test_cancelling_eval_async_stops_the_guest_and_closes():
    async def main():
        started = asyncio.Event()
        loop = asyncio.get_running_loop()
        rt = IsolatedRuntime(timeout=3600)
        rt.bind_function("started", lambda: loop.call_soon_threadsafe(started.set) and None)
        task = asyncio.ensure_future(rt.eval_async("started(); for (;;) {}"))
        await asyncio.wait_for(started.wait(), BOUND)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return rt

    # With a 3600 s deadline, only the interrupt can have ended the eval
    # before asyncio.run returns (it waits for the executor's threads).
    rt = asyncio.run(main())
    assert rt.closed and not rt.alive


def test_interrupt_from_another_thread():
    started = threading.Event()
    out = {}
    with IsolatedRuntime(language="python", timeout=3600) as rt:
        rt.bind_function("started", started.set)

        def run():
            try:
                rt.eval("started()\nwhile True: pass")
            except codecage.CodecageError as e:
                out["e"] = e

        t = threading.Thread(target=run)
        t.start()
        assert started.wait(BOUND)
        rt.interrupt()
        t.join(BOUND)
        assert isinstance(out["e"], codecage.WorkerCrashed)
        assert "interrupted by the host" in str(out["e"])
        assert not rt.alive


def test_default_runtime_is_shared_and_thread_safe():
    codecage.configure_default_runtime(isolated=True, sandbox="require")
    results = []
    threads = [threading.Thread(target=lambda i=i: results.append(codecage.eval(f"{i} * 2")))
               for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(BOUND)
    assert sorted(results) == [i * 2 for i in range(8)]
    with pytest.raises(InvalidInputError):
        codecage.configure_default_runtime(isolated=False)
    codecage.configure_default_runtime(language="python")
    assert codecage.eval("sum(range(5))") == 10
    codecage.configure_default_runtime()


def test_tool_promise_left_in_flight_rejects_at_eval_end():
    """Regression (red team, round 2): a JavaScript tool promise still in
    flight when its eval ended never settled, so a later `await` of it hung
    until that eval's deadline. It now rejects with a ToolError at once."""
    async def slow():
        await asyncio.sleep(0.3)
        return 1

    async def main():
        with IsolatedRuntime() as rt:
            rt.bind_function("slow", slow)
            assert await rt.eval_async("globalThis.p = tools.slow(); 1") == 1
            got = await rt.eval_async(
                "try { await globalThis.p; 'settled' } catch (e) { [e.name, e.message] }")
            assert got[0] == "ToolError" and "ended before the host answered" in got[1], got
            # a rejection nobody handles costs the next eval nothing
            assert await rt.eval_async("globalThis.q = tools.slow(); 2") == 2
            assert await rt.eval_async("3") == 3

    asyncio.run(asyncio.wait_for(main(), 20))


# A guest that fans out more coroutine tool calls than the in-flight cap,
# then stops waiting for them (a JavaScript Promise.all rejected by the
# first refused call; Python's atools wait in order, so there the eval
# times out; or the host interrupts the worker). When eval_async returns,
# no host coroutine it started may still be pending, and only the cap's
# worth of calls ever reached the host.
FAN_OUT = {
    "javascript": "await Promise.all([...Array(100).keys()].map(i => tools.slow(i)))",
    "python": "import asyncio\nawait asyncio.gather(*[atools.slow(i) for i in range(100)])",
    # the refused calls caught: the guest keeps waiting for the other 8
    "interrupt": "await Promise.all([...Array(100).keys()].map(i => tools.slow(i).catch(e => 0)))",
}


@pytest.mark.parametrize("lang,how", [("javascript", "error"), ("python", "timeout"),
                                      ("javascript", "interrupt")])
def test_host_coroutines_end_with_their_eval(lang, how):
    async def main():
        started, finished = [], []
        loop = asyncio.get_running_loop()

        async def slow(i):
            started.append(i)
            try:
                await asyncio.sleep(BOUND)
            finally:
                finished.append(i)
            return i

        rt = IsolatedRuntime(language=lang, timeout=2 if how == "timeout" else BOUND,
                             max_pending_calls=8)
        rt.bind_function("slow", slow)
        ev = asyncio.ensure_future(rt.eval_async(FAN_OUT["interrupt" if how == "interrupt"
                                                         else lang]))
        if how == "interrupt":
            while len(started) < 8:
                await asyncio.sleep(0.01)
            rt.interrupt()
        with pytest.raises(codecage.CodecageError) as e:
            await asyncio.wait_for(ev, BOUND)
        pending = [t for t in asyncio.all_tasks(loop) if t is not asyncio.current_task()]
        rt.close()
        return e.value, started, finished, pending

    err, started, finished, pending = asyncio.run(main())
    assert pending == [], pending
    assert len(started) == 8 and sorted(finished) == sorted(started), (started, finished)
    if how == "error":
        assert err.name == "ToolConcurrencyError" and "max_pending_calls" in str(err), err
    elif how == "timeout":
        assert isinstance(err, codecage.TimeoutError), err
    else:
        assert isinstance(err, codecage.WorkerCrashed), err


def test_max_pending_calls_is_checked():
    with pytest.raises(InvalidInputError, match="max_pending_calls"):
        IsolatedRuntime(max_pending_calls=0)
