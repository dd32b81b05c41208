"""ForkServer and SessionPool: forked and pooled sessions are ordinary
IsolatedRuntimes that share no state; pools hand each session out once;
misuse (closed objects, wrong types, out-of-range values, many threads)
raises codecage's exceptions and never crashes. No timings: the pool
timeout test relies on an ordering (a check out that does not wait cannot
see a session the filler has not finished), not on a duration."""
import asyncio
import gc
import threading

import pytest

import ccpkg  # noqa: F401  (builds the package)

import codecage
from codecage import (WEB_POLYFILLS, ForkServer, InvalidInputError, IsolatedRuntime,
                      RuntimeConfig, SessionPool, ToolBridge)
from codecage import _codecage

BOUND = 60  # seconds: only reached when something is broken
RANDOM = {"python": "import random; random.random()", "javascript": "Math.random()"}


@pytest.fixture(scope="module")
def py_server():
    with ForkServer(language="python", preload="json,math") as fs:
        yield fs


@pytest.fixture(scope="module")
def js_server():
    with ForkServer(language="javascript") as fs:
        yield fs


@pytest.fixture(params=["python", "javascript"])
def server(request, py_server, js_server):
    return py_server if request.param == "python" else js_server


# ---- ForkServer ----

def test_forked_sessions_evaluate_both_languages(py_server, js_server):
    with py_server.session() as py, js_server.session() as js:
        assert isinstance(py, IsolatedRuntime) and py.language == "python"
        assert py.eval("import json; json.dumps({'a': [1, 2]})") == '{"a": [1, 2]}'
        assert js.eval("[1, 2].map(x => x * 21)") == [21, 42]
        assert py.alive and js.alive
        assert py.pid is not None and py.pid != js.pid
    assert py.closed and not py.alive and py.pid is None


def test_sandbox_reports(server):
    report = server.sandbox
    assert report["mode"] == "require" and report["missing"] == ""
    assert "seccomp" in report["applied"] and "landlock" in report["applied"]
    with server.session() as s:
        assert s.sandbox["mode"] == "require"


@pytest.mark.parametrize("lang,set_code,probe", [
    ("python", "secret = 42", "'secret' in globals()"),
    ("javascript", "globalThis.secret = 42", "typeof secret"),
])
def test_state_does_not_cross_forked_sessions(py_server, js_server, lang, set_code, probe):
    fs = py_server if lang == "python" else js_server
    with fs.session() as a:
        a.eval(set_code)
        assert a.eval("secret") == 42
        with fs.session() as b:
            assert b.eval(probe) in (False, "undefined")


def test_random_differs_between_forked_sessions(server):
    # Forks of one template would share its generator state unless each
    # session is reseeded: both draws would then be equal.
    code = RANDOM[server.language]
    with server.session() as a, server.session() as b:
        assert a.eval(code) != b.eval(code)


def test_forked_session_is_a_full_runtime(js_server):
    bridge = ToolBridge({"double": lambda x: x * 2}, max_calls=1)
    with js_server.session() as s:
        bridge.attach(s)
        s.bind_function("lookup", lambda k: {"A1": 3.5}[k])
        assert s.eval("lookup('A1') * double(1)") == 7.0
        with pytest.raises(codecage.ToolBudgetError):
            s.eval("double(2)")
        assert bridge.calls_made == 1
        s.set_global("g", [1, 2])
        assert asyncio.run(s.eval_async("g.length")) == 2


def test_forked_sessions_get_the_config():
    seen = []
    cfg = RuntimeConfig(bootstrap=WEB_POLYFILLS, on_output=lambda s, line: seen.append(line))
    with ForkServer(cfg, language="javascript") as fs, fs.session() as s:
        assert s.config is cfg
        assert s.eval("console.log('hi'); typeof setTimeout") == "function"
    assert seen == ["hi"]


def test_sessions_outlive_their_fork_server():
    fs = ForkServer(language="javascript")
    s = fs.session()
    fs.close()
    fs.close()  # idempotent
    assert fs.closed and fs.sandbox["mode"] == "require"
    assert s.eval("6 * 7") == 42
    with pytest.raises(InvalidInputError, match="closed"):
        fs.session()
    s.close()


def test_fork_server_sessions_write_their_own_scratch():
    """Once refused (no scratch of their own); now each forked session
    mounts a private tmpfs (tests/python/test_pkg_files.py has the rest)."""
    with ForkServer(language="python", max_file_size=1 << 20) as fs:
        with fs.session() as a, fs.session() as b:
            assert a.eval("open('/tmp/x', 'w').write('abc')") == 3
            assert b.eval("import os; os.listdir('/tmp')") == []


def test_missing_preload_module_is_named():
    """Regression: protocol.c refused a 'fail' frame of kind invalid_input,
    so a failed preload came back as a protocol violation."""
    with pytest.raises(InvalidInputError, match="no_such_module_cc"):
        ForkServer(language="python", preload="json,no_such_module_cc")


def test_optional_preload_module_may_be_missing():
    with ForkServer(language="python", preload=["json", "no_such_module_cc?"]) as fs:
        with fs.session() as s:
            assert s.eval("import sys; 'json' in sys.modules") is True


@pytest.mark.parametrize("kwargs,exc", [
    ({"preload": 3}, TypeError),
    ({"preload": ["json", 3]}, TypeError),
    ({"preload": "json,,math"}, InvalidInputError),
    ({"preload": "os; import x"}, InvalidInputError),
    ({"preload": "json\0"}, InvalidInputError),
    ({"language": "javascript", "preload": "json"}, InvalidInputError),
    ({"language": "ruby"}, InvalidInputError),
    ({"sandbox": "maybe"}, InvalidInputError),
    ({"config": "nope"}, TypeError),
    ({"timeout": -1}, InvalidInputError),
])
def test_fork_server_bad_arguments(kwargs, exc):
    kwargs = dict(kwargs)
    config = kwargs.pop("config", None)
    kwargs.setdefault("language", "python")
    with pytest.raises(exc):
        ForkServer(config, **kwargs)


def test_native_objects_survive_misuse():
    fs = _codecage.ForkServer.__new__(_codecage.ForkServer)  # never initialised
    with pytest.raises(InvalidInputError):
        fs.spawn()
    assert fs.sandbox is None and fs.closed
    fs.close()
    p = _codecage.Pool.__new__(_codecage.Pool)
    with pytest.raises(InvalidInputError):
        p.checkout(0)
    assert p.ready == 0
    p.close()
    with pytest.raises(TypeError):
        _codecage.Pool("javascript", "require", [], None, 1)
    with pytest.raises(InvalidInputError):
        _codecage.Pool("javascript", "require", {}, None, 0)
    with pytest.raises(InvalidInputError):
        _codecage.Pool("javascript", "require", {}, None, 2 ** 40)
    p = _codecage.Pool("javascript", "require", {}, None, 1)
    with pytest.raises(TypeError):
        p.checkout("soon")
    p.close()
    p.close()
    with pytest.raises(InvalidInputError, match="closed"):
        p.checkout(0)
    with pytest.raises(InvalidInputError, match="already"):
        p.__init__("javascript", "require", {}, None, 1)


def test_fork_server_from_many_threads(js_server):
    pids, errors = [], []

    def work():
        try:
            with js_server.session() as s:
                pids.append((s.pid, s.eval("1 + 1")))
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(BOUND)
    assert errors == []
    assert len(pids) == 8 and len({p for p, _ in pids}) == 8
    assert {v for _, v in pids} == {2}


# ---- SessionPool ----

@pytest.mark.parametrize("lang,fork_server", [("javascript", True), ("python", True),
                                              ("javascript", False)])
def test_checkout_returns_distinct_live_sessions(lang, fork_server):
    with SessionPool(language=lang, size=3, fork_server=fork_server, preload=None
                     if lang == "javascript" else "json") as pool:
        sessions = [pool.checkout(BOUND) for _ in range(3)]
        try:
            assert len({s.pid for s in sessions}) == 3
            for i, s in enumerate(sessions):
                assert s.alive and s.language == lang
                assert s.eval(f"{i} + 1") == i + 1
        finally:
            for s in sessions:
                s.close()


def test_state_does_not_cross_pooled_sessions():
    with SessionPool(language="python", size=1, preload="") as pool:
        with pool.checkout(BOUND) as a:
            a.eval("secret = 1")
        with pool.checkout(BOUND) as b:
            assert b.eval("'secret' in globals()") is False
            assert b.pid != a.pid or a.pid is None


def test_checkout_without_waiting_times_out_when_the_pool_is_empty():
    # size=1: after a check out the pool is empty until its thread has
    # forked, confined and warmed up a new session (an eval round trip).
    # A check out with timeout=0 right after cannot wait for that; it could
    # only succeed if the filler finished between the two calls, so try a
    # few times in a row: each success leaves the pool empty again.
    with SessionPool(language="javascript", size=1) as pool:
        taken = [pool.checkout(BOUND)]
        try:
            with pytest.raises(codecage.TimeoutError, match="no session became ready") as e:
                for _ in range(50):
                    taken.append(pool.checkout(timeout=0))
            assert e.value.kind == "timeout" and isinstance(e.value, TimeoutError)
            assert all(s.alive for s in taken)
        finally:
            for s in taken:
                s.close()


def test_closing_the_pool_leaves_checked_out_sessions_usable():
    pool = SessionPool(language="javascript", size=2)
    s = pool.checkout(BOUND)
    pool.close()
    pool.close()  # idempotent
    assert pool.closed and pool.ready == 0
    assert s.eval("'still ' + 'here'") == "still here"
    with pytest.raises(InvalidInputError, match="closed"):
        pool.checkout(0)
    s.close()


@pytest.mark.parametrize("timeout,exc", [(-1, InvalidInputError),
                                         (float("nan"), InvalidInputError),
                                         (float("inf"), InvalidInputError),
                                         (86401, InvalidInputError),
                                         ("1", TypeError), (None, TypeError),
                                         (True, TypeError)])
def test_checkout_timeout_out_of_range(timeout, exc):
    with SessionPool(language="javascript", size=1) as pool:
        with pytest.raises(exc):
            pool.checkout(timeout)


@pytest.mark.parametrize("kwargs,exc", [({"size": 0}, InvalidInputError),
                                        ({"size": 1025}, InvalidInputError),
                                        ({"size": -1}, InvalidInputError),
                                        ({"size": 2.0}, TypeError),
                                        ({"size": True}, TypeError),
                                        ({"fork_server": "yes"}, TypeError)])
def test_pool_bad_arguments(kwargs, exc):
    with pytest.raises(exc):
        SessionPool(language="javascript", **kwargs)


def test_file_writing_pool_sessions_have_scratch():
    with SessionPool(language="python", size=2, max_file_size=1 << 20) as pool:
        with pool.checkout(BOUND) as s, pool.checkout(BOUND) as t:
            assert s.eval("open('/tmp/x', 'w').write('abc')") == 3
            assert t.eval("import os; os.listdir('/tmp')") == []


def test_pool_from_many_threads():
    results, errors = [], []

    def work(i):
        try:
            with pool.checkout(BOUND) as s:
                results.append((s.pid, s.eval(f"{i} * 2")))
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    with SessionPool(language="javascript", size=4) as pool:
        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(BOUND)
    assert errors == []
    assert sorted(v for _, v in results) == [i * 2 for i in range(8)]
    assert len({p for p, _ in results}) == 8


def test_close_while_threads_check_out():
    # Every check out either gets a live session or, once the pool is
    # closed, InvalidInputError; nothing crashes or hangs.
    outcomes, errors = [], []
    pool = SessionPool(language="javascript", size=2)
    go = threading.Barrier(9)

    def work():
        go.wait(BOUND)
        for _ in range(5):
            try:
                with pool.checkout(BOUND) as s:
                    outcomes.append(s.eval("1"))
            except InvalidInputError:
                outcomes.append("closed")
            except BaseException as e:  # noqa: BLE001
                errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    go.wait(BOUND)
    pool.close()
    for t in threads:
        t.join(BOUND)
    assert errors == []
    assert len(outcomes) == 40 and set(outcomes) <= {1, "closed"}
    assert pool.closed


def test_checkout_async():
    async def main():
        with SessionPool(language="python", size=2, preload="") as pool:
            a, b = await asyncio.gather(pool.checkout_async(BOUND), pool.checkout_async(BOUND))
            try:
                assert a.pid != b.pid
                assert await a.eval_async("6 * 7") == 42
                assert await b.eval_async(RANDOM["python"]) != a.eval(RANDOM["python"])
            finally:
                a.close()
                b.close()
        with pytest.raises(InvalidInputError, match="closed"):
            await pool.checkout_async(0)

    asyncio.run(main())


def test_pool_random_differs_between_sessions():
    with SessionPool(language="javascript", size=2) as pool:
        with pool.checkout(BOUND) as a, pool.checkout(BOUND) as b:
            assert a.eval(RANDOM["javascript"]) != b.eval(RANDOM["javascript"])


def test_pools_and_servers_leave_nothing_behind():
    from test_pkg_lifecycle import children, fds
    gc.collect()
    before = (fds(), children())
    for i in range(10):
        with SessionPool(language="javascript", size=2) as pool:
            with pool.checkout(BOUND) as s:
                s.eval("1")
            kept = pool.checkout(BOUND)
        kept.eval("2")  # outlives its pool
        kept.close()
        fs = ForkServer(language="javascript")
        s = fs.session()
        fs.close()
        s.close()
        ForkServer(language="javascript")  # dropped without close()
    gc.collect()
    assert (fds(), children()) == before


def test_pool_is_an_async_context_manager():
    """From the fresh-clone user: `async with SessionPool(...)` raised
    TypeError although checkout_async exists."""
    async def main():
        async with SessionPool(language="javascript", size=1) as pool:
            s = await pool.checkout_async(timeout=BOUND)
            with s:
                return s.eval("6 * 7"), pool
    value, pool = asyncio.run(main())
    assert value == 42 and pool.closed
