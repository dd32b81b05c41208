"""1,000 runtimes created and closed leave no file descriptors, processes or
memory behind; nor do runtimes that are dropped without close(), or that
died (timeout, crash)."""
import gc
import os

import pytest

import ccpkg  # noqa: F401  (builds the package)

import codecage
from codecage import IsolatedRuntime, ToolBridge


def fds():
    return len(os.listdir("/proc/self/fd"))


def children():
    n = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/children") as f:
                n += len(f.read().split())
        except FileNotFoundError:
            pass
    return n


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def cycle(i):
    lang = "python" if i % 10 == 0 else "javascript"
    bridge = ToolBridge({"f": lambda x: x * 2}, max_calls=1)
    with IsolatedRuntime(language=lang) as rt:
        bridge.attach(rt)
        rt.set_global("v", {"i": i, "s": "x" * 100})
        assert rt.eval("f(v['i'])") == i * 2


@pytest.mark.slow
def test_thousand_runtimes_leak_nothing():
    """Through the default path (forked from the process-wide servers):
    once those are let go, nothing of the 1,000 runtimes or the servers
    remains."""
    for i in range(50):  # warm up allocator pools and the spawner thread
        cycle(i)
    codecage.close_fork_servers()
    gc.collect()
    fd0, rss0 = fds(), rss_kib()
    for i in range(1000):
        cycle(i)
    assert len(codecage._codecage.shared_fork_server_pids()) == 2  # one per language
    codecage.close_fork_servers()
    gc.collect()
    assert fds() == fd0
    assert children() == 0
    # 1,000 sessions: a leak of even 16 KiB each would show as 16 MiB.
    assert rss_kib() - rss0 < 8 * 1024, (rss0, rss_kib())


def test_dropped_and_dead_runtimes_are_reaped():
    codecage.close_fork_servers()  # their templates are children too
    fd0 = fds()
    for _ in range(20):
        rt = IsolatedRuntime()
        rt.bind_function("me", lambda: rt)  # a cycle through the tool
        del rt
    gc.collect()
    rt = IsolatedRuntime(timeout=0.2, grace=0.05, max_memory=8 << 30)
    try:
        rt.eval("new Array(2 ** 32 - 1).fill(0)")
    except Exception:
        pass
    assert not rt.alive
    rt.close()
    rt.close()  # idempotent
    codecage.close_fork_servers()
    gc.collect()
    assert fds() == fd0
    assert children() == 0
