"""Two sandboxes cannot signal each other through a shared futex.

A non-private futex on a word of a read-only file mapping (here libpython's
text, which every Python worker maps from the same file) is keyed by the
file and offset, not by the process: without the seccomp rule that every
futex operation carry FUTEX_PRIVATE_FLAG, one sandbox waiting there is woken
by another sandbox's FUTEX_WAKE on the same word, a covert channel between
trust units. The receiver waits up to 8 s; the sender wakes every
millisecond until it woke someone or 8 s passed.

Reverse: with the sandbox off (no seccomp) the same pair of programs must
see the wake-up, so the test can see the breach. Threads (and a raw
pthread_join, whose wait on the tid glibc makes shared) keep working."""
import os
import subprocess

import pytest

from conftest import BUILD, CLI

DRIVER = os.path.join(BUILD, "tests", "security", "cc-checklist-driver")

# The futex word: the first aligned word of Py_GetVersion's code, the same
# file offset in every process that maps this libpython.
WORD = '''import ctypes, errno, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
addr = ctypes.cast(ctypes.pythonapi.Py_GetVersion, ctypes.c_void_p).value & ~3
def futex(op, val, timeout=None):
    ret = libc.syscall(ctypes.c_long(202), ctypes.c_void_p(addr), ctypes.c_long(op),
                       ctypes.c_long(val), timeout, ctypes.c_long(0), ctypes.c_long(0))
    return ret, errno.errorcode[ctypes.get_errno()] if ret == -1 else "ok"
'''

RECEIVE = WORD + '''class ts(ctypes.Structure):
    _fields_ = [("s", ctypes.c_long), ("ns", ctypes.c_long)]
print("wait %d %s" % futex(0, ctypes.c_uint.from_address(addr).value,
                           ctypes.byref(ts(8, 0))))
'''

SEND = WORD + '''end, woken, how = time.monotonic() + 8, 0, "ok"
while time.monotonic() < end and not woken and how == "ok":
    n, how = futex(1, 1)
    woken += max(n, 0)
    time.sleep(0.001)
print("wake %d %s" % (woken, how))
'''


def cli_proc(mode, code):
    return subprocess.Popen([CLI, "eval", "--lang", "python", "--sandbox", mode,
                             "--timeout", "30", "--", code],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def pair(receiver_argv_mode, sender):
    """Start the receiver (a CLI worker in the given sandbox mode), then the
    sender (a Popen factory taking the code); returns both outputs."""
    recv = cli_proc(receiver_argv_mode, RECEIVE)
    send = sender(SEND)
    out_s, err_s = send.communicate(timeout=60)
    out_r, err_r = recv.communicate(timeout=60)
    return out_r + err_r, out_s + err_s


@pytest.mark.seccomp
@pytest.mark.userns
def test_spawned_sandboxes_cannot_wake_each_other():
    got_r, got_s = pair("require", lambda code: cli_proc("require", code))
    # The shared wait is refused before it sleeps; the shared wake is refused.
    assert "wait -1 EAGAIN" in got_r, got_r
    assert "wake 0 EPERM" in got_s, got_s


@pytest.mark.seccomp
@pytest.mark.userns
def test_forked_session_cannot_wake_a_spawned_sandbox():
    def forked(code):
        return subprocess.Popen([DRIVER, "--fork", "python", code], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    got_r, got_s = pair("require", forked)
    assert "wait -1 EAGAIN" in got_r, got_r
    assert "wake 0 EPERM" in got_s, got_s


def test_reverse_unconfined_sandboxes_do_wake_each_other():
    got_r, got_s = pair("off", lambda code: cli_proc("off", code))
    assert "wait 0 ok" in got_r, got_r
    assert "wake 1 ok" in got_s, got_s


THREADS = r'''import ctypes, queue, threading
from concurrent.futures import ThreadPoolExecutor
lock, cond, q, seen = threading.Lock(), threading.Condition(), queue.Queue(), []
def work(i):
    with cond:
        seen.append(i)
        cond.notify_all()
    q.put(i * i)
    with lock:
        return i
ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
[t.start() for t in ts]
with cond:
    cond.wait_for(lambda: len(seen) == 8, timeout=20)
[t.join() for t in ts]
with ThreadPoolExecutor(4) as ex:
    pooled = sum(ex.map(work, range(16)))
# A raw pthread_join: glibc waits for the tid with a shared futex, which
# answers EAGAIN, so the join re-reads the tid until the thread is gone.
libc = ctypes.CDLL(None)
ran = []
CB = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
cb = CB(lambda arg: ran.append(1) or 0)
tid = ctypes.c_ulong()
rc_create = libc.pthread_create(ctypes.byref(tid), None, cb, None)
rc_join = libc.pthread_join(tid, None)
print(sorted(q.get() for _ in range(24))[:3], len(seen), pooled, rc_create, rc_join, ran)
'''


@pytest.mark.seccomp
@pytest.mark.userns
def test_python_threads_still_work():
    r = subprocess.run([CLI, "eval", "--lang", "python", "--timeout", "60", "--", THREADS],
                       capture_output=True, text=True, timeout=90)
    assert r.returncode == 0, r
    assert "[0, 0, 1] 24 120 0 0 [1]" in r.stdout, r


@pytest.mark.seccomp
@pytest.mark.userns
def test_javascript_still_works():
    # QuickJS is single-threaded; its allocator's and the worker's locks
    # are glibc's private ones. A busy eval that allocates, then a
    # deadline (the soft stop), must behave as before.
    code = "let a = []; for (let i = 0; i < 200000; i++) a.push({i}); a.length"
    r = subprocess.run([CLI, "eval", "--lang", "js", "--", code], capture_output=True,
                       text=True, timeout=60)
    assert (r.returncode, r.stdout.strip()) == (0, "200000"), r
    r = subprocess.run([CLI, "eval", "--lang", "js", "--timeout", "1", "--", "for(;;);"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 3, r
