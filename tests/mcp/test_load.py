"""A bounded load on `codecage mcp --http` (bench/mcp_load.py's rounds): 50
concurrent sessions of 100 calls each, mixed languages, on loopback. No call
may fail, and after the round (every session deleted, the pools full again)
the server holds no more descriptors than after a warm-up round, and its
resident memory has not grown by more than a bound far below what keeping
anything per call would add (5000 calls)."""
import importlib.util
import os
import time

from conftest import ROOT

# bench/mcp_load.py by its path: bench/ on sys.path would put bench/mcp.py
# in front of the real `mcp` package for every later test (FastMCP's client
# failed to import in tests/python/test_int_fastmcp.py).
_spec = importlib.util.spec_from_file_location("mcp_load", os.path.join(ROOT, "bench", "mcp_load.py"))
mcp_load = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mcp_load)

SESSIONS, CALLS = 50, 100


def test_fifty_sessions_of_a_hundred_calls_fail_nothing_and_leak_nothing():
    srv = mcp_load.HttpServer("--pool", "2", "--max-sessions", str(SESSIONS + 8))
    try:
        opener = lambda: mcp_load.HttpSession("127.0.0.1", srv.port)  # noqa: E731
        lat, failures, _ = mcp_load.run_round(opener, SESSIONS, CALLS)
        assert failures == [] and len(lat) == SESSIONS * CALLS, failures[:5]
        srv.settle(2)
        rss0, fds0 = srv.usage()
        for _ in range(2):
            lat, failures, _ = mcp_load.run_round(opener, SESSIONS, CALLS)
            assert failures == [] and len(lat) == SESSIONS * CALLS, failures[:5]
        srv.settle(2)
        m = srv.metrics()
        ok = m['codecage_mcp_calls_total{tool="run_python",outcome="ok"}'] + \
            m['codecage_mcp_calls_total{tool="run_javascript",outcome="ok"}']
        assert ok == 3 * SESSIONS * (CALLS + 2), m
        # connections and threads wind down on their own: wait for them
        for _ in range(100):
            rss, fds = srv.usage()
            if fds <= fds0:
                break
            time.sleep(0.1)
        assert fds <= fds0, (fds0, fds, sorted(os.listdir("/proc/%d/fd" % srv.p.pid)))
        assert rss - rss0 < 4096, (rss0, rss)  # KiB; 10000 calls ran in between
    finally:
        assert srv.stop() == 0
