"""The fork server's operations, seen from outside: what happens to
sessions and the template when either ends, that the template reaps what
it forks, that the supervisor's stops (deadline, interrupt) reach a forked
session, and that per-process state is renewed in each session (numpy's
global generator, which nothing in numpy reseeds after fork). Processes
are looked at through /proc, from the host."""
import os
import signal
import sys
import threading
import time

import pytest

import ccpkg  # noqa: F401  (builds the package)
from conftest import alive, ppid_of

from codecage import ForkServer, SandboxUnavailable, SessionPool, TimeoutError, WorkerCrashed

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "security"))
from checklist_cases import TIMER_BOMB  # noqa: E402  (the checklist's own case)

BOUND = 30  # seconds: only reached when something is broken
# A small max_sessions: the totals the sessions share grow with it (one
# process and one timer per session, plus 256 threads and 256 signals), so
# a small one is reached by a few heavy sessions, and the cap itself by a
# few sessions, whatever the machine has room for.
CAP = 8


def children(pid):
    out = []
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
            out += [int(x) for x in f.read().split()]
    return out


def wait_until(pred, what):
    end = time.monotonic() + BOUND
    while not pred():
        assert time.monotonic() < end, what
        time.sleep(0.01)


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_closing_the_server_keeps_open_sessions(language):
    fs = ForkServer(language=language, preload="" if language == "javascript" else "json")
    s = fs.session()
    template = ppid_of(s.pid)
    fs.close()
    # the session lives in the template's pid namespace: both stay
    assert s.eval("1+1") == 2 and alive(template)
    s.close()
    wait_until(lambda: not alive(template), "the template outlived its last session")


def test_a_dead_template_fails_new_sessions_and_ends_old_ones():
    with ForkServer(language="javascript") as fs:
        s = fs.session()
        template = ppid_of(s.pid)
        os.kill(template, signal.SIGKILL)
        wait_until(lambda: not alive(template), "the template survived SIGKILL")
        # pid 1 of the namespace died: the kernel ended every session in it
        with pytest.raises(WorkerCrashed):
            s.eval("1+1")
        with pytest.raises(WorkerCrashed, match="template"):
            fs.session()
        s.close()


def test_a_pool_replaces_a_dead_template():
    with SessionPool(language="javascript", size=1) as pool:
        s = pool.checkout(timeout=BOUND)
        template = ppid_of(s.pid)
        s.close()
        os.kill(template, signal.SIGKILL)
        wait_until(lambda: not alive(template), "the template survived SIGKILL")
        # the session the pool held died with it; the next comes from a new one
        deadline = time.monotonic() + BOUND
        while True:
            try:
                s = pool.checkout(timeout=BOUND)
                break
            except WorkerCrashed:
                assert time.monotonic() < deadline
        assert s.eval("6*7") == 42 and ppid_of(s.pid) != template
        s.close()


def test_the_template_reaps_its_sessions():
    with ForkServer(language="javascript") as fs:
        first = fs.session()
        template = ppid_of(first.pid)
        for _ in range(20):
            s = fs.session()
            s.eval("1")
            s.close()
        wait_until(lambda: children(template) == [first.pid],
                   "ended sessions stay behind (zombies) in the template")
        first.close()


def test_the_deadline_stops_a_forked_session_and_the_template_lives():
    with ForkServer(language="javascript") as fs:
        s = fs.session()
        with pytest.raises(TimeoutError):
            s.eval("for (;;) {}", timeout=0.3)
        s.close()
        t = fs.session()
        assert t.eval("1+1") == 2
        t.close()


def test_interrupt_reaches_a_forked_session():
    with ForkServer(language="python", preload="") as fs:
        s = fs.session()
        threading.Timer(0.3, s.interrupt).start()
        with pytest.raises(WorkerCrashed, match="interrupted"):
            s.eval("while True: pass", timeout=BOUND)
        s.close()


def test_numpy_global_random_state_differs_between_sessions():
    """numpy's legacy generator is seeded once, at import in the template:
    without the reseed in py_fork.c every session draws the same numbers."""
    with ForkServer(language="python", preload="numpy") as fs:
        draws = []
        for _ in range(2):
            s = fs.session()
            assert s.eval("import sys; 'numpy' in sys.modules") is True
            draws.append(s.eval("import numpy; numpy.random.random()"))
            s.close()
        assert draws[0] != draws[1]


def test_many_live_sessions_from_one_template():
    """Regression (red team): the template kept a pidfd per live session
    under the sessions' RLIMIT_NOFILE (64); the 61st session's request
    lost its descriptor and the template exited, taking every session."""
    with ForkServer(language="javascript") as fs:
        sessions = [fs.session() for _ in range(100)]
        for i, s in enumerate(sessions):
            assert s.eval("%d * 2" % i) == 2 * i
        for s in sessions:
            s.close()




def test_a_session_cannot_use_up_its_siblings_quotas():
    """Regression (red team): RLIMIT_SIGPENDING and RLIMIT_NPROC count per
    user, and every session has the same uid, so one session's timers
    stopped new sessions from starting. Each session now has a user
    namespace (and those limits) of its own."""
    with ForkServer(language="python", preload="") as fs:
        hog = fs.session()
        assert hog.eval(TIMER_BOMB) == 63
        other = fs.session()  # its own stop timer still comes
        assert other.eval(TIMER_BOMB) == 63
        other.close()
        hog.close()


def exit_with_template_stopped(stop_s):
    """A session exits (status 7) while its template is stopped for stop_s
    seconds, so the template reaps it only then; returns the error."""
    with ForkServer(language="python", preload="") as fs:
        s = fs.session()
        template = ppid_of(s.pid)
        os.kill(template, signal.SIGSTOP)
        resume = threading.Timer(stop_s, os.kill, (template, signal.SIGCONT))
        resume.start()
        try:
            with pytest.raises(WorkerCrashed) as e:
                s.eval("import os; os._exit(7)", timeout=BOUND)
        finally:
            resume.cancel()
            os.kill(template, signal.SIGCONT)
        s.close()
        return str(e.value)


def test_a_sessions_exit_status_waits_for_its_templates_reap():
    """Regression (issue 12): the status was asked of the pidfd with a
    2 s backoff and lost when the template reaped later. The template now
    writes it down the session's status pipe after the reap, and the
    supervisor waits for that write: a late reap (3 s here) still gives it."""
    assert "the worker exited with status 7" in exit_with_template_stopped(3)


def test_a_wedged_template_gives_a_whole_message_within_the_bound():
    """Never a hang: a template that does not reap in 10 s gets a message
    that says so, whole (it was cut at 128 bytes)."""
    msg = exit_with_template_stopped(14)
    assert ("(the worker ended (its template did not report the exit status within 10 s))"
            in msg), msg


# 63 threads that stay (small stacks, so memory is not what runs out)
HOLD_THREADS = """import threading
threading.stack_size(65536)
ev = threading.Event()
n = 0
try:
    for i in range(63):
        threading.Thread(target=ev.wait, daemon=True).start()
        n += 1
except RuntimeError:
    pass
n"""
# what each bomb uses up: RLIMIT_NPROC (processes and threads) or
# RLIMIT_SIGPENDING (queued signals and POSIX timers), one total per server
BOMBS = {"threads": (HOLD_THREADS, "RLIMIT_NPROC"), "timers": (TIMER_BOMB, "RLIMIT_SIGPENDING")}


def fill_with_heavy_sessions(new_session, code):
    """Heavy sessions until a new one is refused; returns (the refusal,
    the heavy sessions)."""
    heavy = []
    for _ in range(CAP):  # each holds 63; the server's total (CAP=8) is under 300
        try:
            s = new_session()
        except SandboxUnavailable as e:
            return e, heavy
        heavy.append(s)
        s.eval(code, timeout=BOUND)
    for s in heavy:
        s.close()
    raise AssertionError("%d heavy sessions and no refusal" % CAP)


def first_session_after_close(new_session):
    """Closed sessions stop counting once their template has reaped them."""
    end = time.monotonic() + BOUND
    while True:
        try:
            return new_session()
        except SandboxUnavailable:
            assert time.monotonic() < end, "the quota never came back"
            time.sleep(0.05)


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_heavy_sessions_get_new_ones_refused_by_name(bomb):
    """Issue 13: sessions holding many threads or timers use up the fork
    server's totals; a new session is refused at once, as
    sandbox_unavailable naming the quota (it was an internal error, or a
    template killed over a reply it had answered correctly), and works
    again once they close."""
    code, quota = BOMBS[bomb]
    with ForkServer(language="python", preload="", max_sessions=CAP) as fs:
        refused, heavy = fill_with_heavy_sessions(fs.session, code)
        try:
            assert quota in str(refused) and "start another fork server" in str(refused)
            with pytest.raises(SandboxUnavailable, match=quota):
                fs.session()
        finally:
            for s in heavy:
                s.close()
        with first_session_after_close(fs.session) as s:
            assert s.eval("1+1") == 2


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_a_pool_reports_a_full_fork_server(bomb):
    """The pool's thread meets the same refusal; a checkout with none
    ready says so at once (not a timeout), and the pool recovers."""
    code, quota = BOMBS[bomb]
    with SessionPool(language="python", size=1, preload="", max_sessions=CAP) as pool:
        refused, heavy = fill_with_heavy_sessions(lambda: pool.checkout(timeout=BOUND), code)
        try:
            assert quota in str(refused) and "the pool cannot start sessions" in str(refused)
        finally:
            for s in heavy:
                s.close()
        with first_session_after_close(lambda: pool.checkout(timeout=BOUND)) as s:
            assert s.eval("1+1") == 2


def test_the_session_cap_is_refused_by_name(lang):
    """Issue 23: one fork server held at most 256 live sessions (257th
    refused through RLIMIT_NPROC, then "256 live sessions"), whatever the
    host had room for. The cap is now max_sessions: past it a session is
    refused at once as sandbox_unavailable naming max_sessions, the live
    sessions still evaluate, and a close makes room."""
    with ForkServer(language=lang, preload="" if lang == "python" else None,
                    max_sessions=CAP) as fs:
        assert fs.max_sessions == CAP
        live = []
        try:
            for _ in range(CAP):
                live.append(fs.session())
            with pytest.raises(SandboxUnavailable, match="holds %d live sessions, its "
                               "max_sessions" % CAP):
                fs.session()
            assert [s.eval("%d + 1" % i) for i, s in enumerate(live)] == \
                list(range(1, CAP + 1))
            live.pop().close()
            live.append(fs.session())
            assert live[-1].eval("40 + 2") == 42
        finally:
            for s in live:
                s.close()


def test_a_pool_reports_its_fork_servers_session_cap(lang):
    """A pool's checkout past max_sessions raises the refusal naming it
    (before its own timeout, which is far longer), the checked-out sessions
    still evaluate, and one close lets the next checkout through (it was
    refused with the stale failure until the filler's next retry)."""
    with SessionPool(language=lang, size=2, max_sessions=CAP,
                     preload="" if lang == "python" else None) as pool:
        out = []
        try:
            for _ in range(CAP):
                out.append(pool.checkout(timeout=BOUND))
            with pytest.raises(SandboxUnavailable, match="max_sessions"):
                pool.checkout(timeout=10 * BOUND)
            assert all(s.eval("2 + 2") == 4 for s in out)
            out.pop().close()
            out.append(pool.checkout(timeout=BOUND))
            assert out[-1].eval("1 + 1") == 2
        finally:
            for s in out:
                s.close()


@pytest.mark.parametrize("bad", [0, -1, 4097])
def test_max_sessions_out_of_range_is_invalid_input(bad):
    from codecage import InvalidInputError
    with pytest.raises(InvalidInputError, match="max_sessions"):
        ForkServer(language="javascript", max_sessions=bad)
    with pytest.raises(InvalidInputError, match="max_sessions"):
        SessionPool(language="javascript", size=4, max_sessions=bad if bad else 2)


def _counts(fs, template):
    """Host descriptors and threads, the template's descriptors and
    threads, and the processes below this one with their distinct user and
    pid namespaces; counted with a marker session live (the template
    answers only after it has reaped every session that ended before)."""
    marker = fs.session()
    me, below, users, pids = os.getpid(), 0, set(), set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        p = int(d)
        try:
            while p > 1 and p != me:
                p = ppid_of(p)
            if p != me:
                continue
            below += 1
            users.add(os.stat("/proc/%s/ns/user" % d).st_ino)
            pids.add(os.stat("/proc/%s/ns/pid" % d).st_ino)
        except (OSError, AssertionError):
            continue
    c = (len(os.listdir("/proc/self/fd")), threading.active_count(),
         len(os.listdir("/proc/%d/fd" % template)),
         len(os.listdir("/proc/%d/task" % template)), below, len(users), len(pids))
    marker.close()
    return c


def test_churn_through_the_package_leaves_nothing_behind(lang):
    """Issue 23: 300 sessions opened, evaluated and closed (ten live at a
    time) through the package leave the host's descriptors and threads, the
    template's descriptors and threads, and the processes, user and pid
    namespaces below the host as they were (tests/integration/
    test_density.py counts the same, and memory, through the C API)."""
    with ForkServer(language=lang, preload="" if lang == "python" else None) as fs:
        s = fs.session()
        template = ppid_of(s.pid)
        s.close()
        before = None
        for rnd in range(31):  # the first round warms up, then 300 sessions
            batch = [fs.session() for _ in range(10)]
            assert [b.eval("%d + 1" % i) for i, b in enumerate(batch)] == list(range(1, 11))
            for b in batch:
                b.close()
            if rnd == 0:
                before = _counts(fs, template)
        assert _counts(fs, template) == before


def test_a_fork_server_raises_the_hosts_soft_descriptor_limit():
    """Each open session holds three descriptors in the host: with a soft
    RLIMIT_NOFILE of 256 a fork server of 100 would run out at about 80
    sessions. ForkServer raises the soft limit to 4 * max_sessions + 256,
    never past the hard limit (a process of its own, so this one's stays)."""
    import resource
    import subprocess
    code = ("import resource, codecage\n"
            "fs = codecage.ForkServer(language='javascript', max_sessions=%d)\n"
            "live = [fs.session() for _ in range(%d)]\n"
            "print(resource.getrlimit(resource.RLIMIT_NOFILE)[0], live[-1].eval('1 + 1'))\n")
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]

    def run(limits, n, live):
        def low():
            resource.setrlimit(resource.RLIMIT_NOFILE, limits)
        p = subprocess.run([sys.executable, "-c", code % (n, live)], capture_output=True,
                           text=True, timeout=300, preexec_fn=low,
                           env=dict(os.environ, PYTHONPATH=ccpkg.PKG_DIR))
        assert p.returncode == 0, p.stderr
        return p.stdout.split()

    assert run((256, hard), 100, 100) == [str(min(hard, 4 * 100 + 256)), "2"]
    assert run((256, 300), 100, 1)[0] == "300"  # never past the hard limit
