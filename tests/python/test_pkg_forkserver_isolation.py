"""Sessions of one fork server cannot see each other or their template.

Each session is pid 1 of a pid namespace of its own, and seccomp lets the
pid- and clock-taking calls name only the caller (sched_getaffinity pid 0;
clock_gettime, clock_nanosleep and timer_create only the fixed clocks, never
the CPU clock of another pid, ((~pid) << 3) | 2). Every probe here runs in
reverse too: the same guest code, run by this (unconfined) interpreter
beside a sibling process in the same pid namespace, must see the sibling.
"""
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import ccpkg  # noqa: F401  (builds the package)
from conftest import alive, ppid_of

from codecage import ForkServer

BOUND = 30  # seconds: only reached when something is broken

# What a session can learn about other pids: which calls succeed for each.
# `pids` is filled in: every pid of the template's namespace a session
# could name (sessions' pids count up from 2), or the host sibling's pid.
SIBLING_PROBE = '''import os, signal, time
me = os.getpid()
own = {me}
try:
    own |= {int(t) for t in os.listdir("/proc/self/task")}
except OSError:
    pass
seen = {}
for pid in PIDS:
    if pid in own:
        continue
    hits = []
    try:
        os.sched_getaffinity(pid)
        hits.append("affinity")
    except OSError:
        pass
    try:
        if time.clock_gettime(((~pid) << 3) | 2) >= 0:
            hits.append("cpu_clock")
    except OSError:
        pass
    try:
        os.kill(pid, 0)
        hits.append("signal")
    except OSError:
        pass
    if hits:
        seen[str(pid)] = hits
try:
    os.kill(-1, 0)
    seen["-1"] = ["signal"]
except OSError:
    pass
[me, seen]'''

SPIN = "import time\nend = time.monotonic() + 3\nwhile time.monotonic() < end: pass\n1"


def guest_probe(pids):
    return SIBLING_PROBE.replace("PIDS", pids)


def test_sessions_see_no_sibling_and_no_template():
    with ForkServer(language="python", preload="") as fs:
        busy, probe = fs.session(), fs.session()
        spinning = threading.Thread(target=busy.eval, args=(SPIN,), kwargs={"timeout": BOUND})
        spinning.start()
        try:
            time.sleep(0.2)  # the sibling is running (not a bound: it spins 3 s)
            me, seen = probe.eval(guest_probe("range(1, 600)"), timeout=BOUND)
        finally:
            spinning.join()
        # each session is pid 1 of its own namespace (two live pid-1s),
        # and no other pid answers any of the probe's calls
        assert (me, busy.eval("import os; os.getpid()"), seen) == (1, 1, {})
        busy.close()
        probe.close()


def test_the_probe_sees_a_sibling_in_a_shared_pid_namespace():
    """Reverse: the same guest code, unconfined, beside a spinning sibling
    in this namespace, sees it by every route."""
    sib = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.2)
        ns = {}
        exec(compile(guest_probe("[%d]" % sib.pid), "probe", "exec"), ns)
        me, seen = ns["me"], ns["seen"]
    finally:
        sib.kill()
        sib.wait()
    assert me == os.getpid()
    assert seen.get(str(sib.pid)) == ["affinity", "cpu_clock", "signal"]
    assert seen.get("-1") == ["signal"]


def open_fds(rt):
    return rt.eval('''import os
out = []
for fd in range(1024):
    try:
        os.fstat(fd)
        out.append(fd)
    except OSError:
        pass
out''')


@pytest.mark.parametrize("language", ["python"])
def test_a_session_holds_only_its_own_descriptors(language):
    """The template holds a pidfd and a status pipe per live session; a
    session forked while others live inherits none of them."""
    with ForkServer(language=language, preload="") as fs:
        first = [fs.session() for _ in range(3)]
        last = fs.session()
        assert open_fds(last) == [0, 1, 2, 3]
        for s in first + [last]:
            s.close()


HOST = '''import os, sys, time
sys.path.insert(0, %r)
from codecage import ForkServer
fs = ForkServer(language="javascript")
ss = [fs.session() for _ in range(2)]
print(" ".join(str(s.pid) for s in ss), flush=True)
time.sleep(1000)'''


def test_host_death_leaves_no_worker_template_or_session():
    host = subprocess.Popen([sys.executable, "-c", HOST % ccpkg.PKG_DIR],
                            stdout=subprocess.PIPE, text=True)
    try:
        sessions = [int(p) for p in host.stdout.readline().split()]
        assert len(sessions) == 2
        template = ppid_of(sessions[0])
        monitor = ppid_of(template)
        assert ppid_of(sessions[1]) == template and ppid_of(monitor) == host.pid
        procs = sessions + [template, monitor]
        assert all(alive(p) for p in procs)
    finally:
        host.send_signal(signal.SIGKILL)
        host.wait()
    end = time.monotonic() + BOUND
    while any(alive(p) for p in procs):
        assert time.monotonic() < end, [p for p in procs if alive(p)]
        time.sleep(0.01)
