"""With allow_net the worker's own network stays exactly as closed as
without it: the guest's requests are frames the host performs, and a raw
socket from the guest still fails. In reverse (sandbox off) the same raw
connection reaches the host's listener, so the probe can see a breach."""
import os
import socket
import sys
import threading

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "python"))
import ccpkg  # noqa: E402,F401  (builds the package)

from codecage import GuestError, IsolatedRuntime, RuntimeConfig  # noqa: E402

PROBE = """
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.settimeout(5)
s.connect(('127.0.0.1', {port}))
s.sendall(b'breach')
'connected'
"""


@pytest.fixture
def listener():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    got = []

    def accept():
        try:
            c, _ = srv.accept()
            got.append(c.recv(16))
            c.close()
        except OSError:
            pass
    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield srv.getsockname()[1], got
    srv.close()


def test_allow_net_leaves_the_worker_without_a_network(listener):
    port, got = listener
    cfg = RuntimeConfig(allow_net=[f"127.0.0.1:{port}", "*.example.test"])
    with IsolatedRuntime(cfg, language="python") as rt:
        with pytest.raises(GuestError, match="PermissionError.*Operation not permitted"):
            rt.eval(PROBE.format(port=port))
        # The broker's tool is the only way out, and it is the host's.
        assert rt.eval("'__codecage_net' in globals() or hasattr(tools, '__codecage_net') "
                       "or hasattr(atools, '__codecage_net')") is False
    assert got == []


def test_reverse_unconfined_worker_reaches_the_listener(listener):
    port, got = listener
    with IsolatedRuntime(RuntimeConfig(), language="python", sandbox="off") as rt:
        assert rt.eval(PROBE.format(port=port)) == "connected"
    for _ in range(100):
        if got:
            break
        threading.Event().wait(0.05)
    assert got == [b"breach"]
