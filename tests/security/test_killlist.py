"""The kill-list under a signal storm (red team, round 2).

A kill-list call waits in the kernel until the monitor takes it and kills
the worker (src/worker/monitor.c). A signal that reaches the calling thread
before the monitor took the call aborts the wait: the call returns EINTR,
and the monitor may never see it. The property that must hold regardless:
the call never runs. Either the worker is killed (by name, or as SIGSYS
when the monitor saw the call start but lost it to the signal), or it lives
on and every one of its kill-list calls failed."""
import json

import pytest

from conftest import ev

# A 10 µs timer whose SIGALRM handler CPython installs without SA_RESTART,
# while the guest loops memfd_create (on the kill-list) for half a second.
STORM = r'''import ctypes, signal, time, json
libc = ctypes.CDLL(None, use_errno=True)
signal.signal(signal.SIGALRM, lambda s, f: None)
class SE(ctypes.Structure):
    _fields_ = [("val", ctypes.c_long), ("signo", ctypes.c_int), ("notify", ctypes.c_int),
                ("pad", ctypes.c_char * 48)]
class TS(ctypes.Structure):
    _fields_ = [("s", ctypes.c_long), ("ns", ctypes.c_long)]
class ITS(ctypes.Structure):
    _fields_ = [("i", TS), ("v", TS)]
tid = ctypes.c_void_p()
assert libc.timer_create(1, ctypes.byref(SE(0, signal.SIGALRM, 0)), ctypes.byref(tid)) == 0
libc.timer_settime(tid, 0, ctypes.byref(ITS(TS(0, 10000), TS(0, 10000))), None)
res = set()
t0 = time.monotonic()
while time.monotonic() - t0 < 0.5:
    r = libc.syscall(319, b"x", 0)
    res.add((r, ctypes.get_errno()))
libc.timer_settime(tid, 0, ctypes.byref(ITS(TS(0, 0), TS(0, 0))), None)
json.dumps(sorted(res))'''


@pytest.mark.seccomp
@pytest.mark.userns
@pytest.mark.parametrize("attempt", range(3))
def test_kill_list_call_never_runs_under_a_signal_storm(attempt):
    r = ev("python", STORM, "--timeout", "10")
    if r.kind == "worker_crashed":
        msg = r.json["error"]["message"]
        assert ("killed by seccomp for calling memfd_create" in msg
                or "killed by SIGSYS (seccomp)" in msg), r
        return
    assert r.kind == "ok", r
    results = json.loads(r.value)
    # every call failed: -1 with EINTR (interrupted before the monitor
    # took it); never a file descriptor
    assert results and all(ret == -1 for ret, _ in results), results
    assert {err for _, err in results} <= {4}, results  # EINTR


@pytest.mark.seccomp
@pytest.mark.userns
def test_kill_list_call_without_signals_kills_by_name():
    r = ev("python", "import ctypes; ctypes.CDLL(None).syscall(319, b'x', 0)")
    assert r.kind == "worker_crashed", r
    assert "killed by seccomp for calling memfd_create" in r.json["error"]["message"], r
