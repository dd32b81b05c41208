"""The assume-breach sweep (confinement issue, deliverable 7), and the
kernel's own verdicts on the argument-checked rules.

`codecage-worker-X --ppid=<us> --sweep` confines itself (hygiene, rlimits,
namespaces, capabilities, no_new_privs, Landlock: everything but seccomp),
then for every number 0..511 forks a child that installs the sweep variant
of the seccomp filter (default errno 4000 where production has EPERM, so a
denial cannot be confused with a call that ran and failed), fires
syscall(nr, 0, 0, 0, 0, 0, 0) and prints "nr verdict detail", verdict one
of allowed, denied, killed, enosys (error if the child could not even
install the filter).

test_sweep_matches_the_filter computes every number's verdict from the
exported production filter with tests/security/bpf.py (ALLOW -> allowed,
ERRNO(EPERM) -> denied, USER_NOTIF (the monitor kills) or KILL -> killed, ERRNO(ENOSYS) -> enosys)
and requires the two lists to be identical, with one documented exception:

  Recent kernels exempt two x86_64 numbers from every seccomp filter
  (kernel/seccomp.c: seccomp_uprobe_exception(), formerly a uretprobe-only
  check in seccomp_is_const_allow() and __secure_computing()): 335
  `uretprobe` and 336 `uprobe`. No filter can deny them. Outside the kernel's uprobe trampoline
  they do nothing: uretprobe sends SIGILL to the caller, uprobe returns
  ENXIO. On such a kernel the sweep must show exactly those outcomes for
  them; on a kernel without them they are denied like any unknown number.

test_argument_cases_in_the_kernel installs the production filter (EPERM
rewritten to 4000, as the sweep does) in a child of a plain python3 and
makes argument-dependent calls that are harmless even if they ran
(rt_sigaction queries, prlimit64 reads and a no-op write, ioctls on a pipe,
socketpair, clone for a fork, a real thread start through glibc and
Python's threading), then compares each outcome with the interpreter's
verdict on the exact arguments used. The sweep only ever passes zeros;
this is where the kernel confirms the argument checks and the 64-bit
comparisons the interpreter models.
"""
import errno
import json
import os
import signal
import subprocess

import pytest

import bpf
from conftest import BUILD
from test_seccomp_bpf import (ALLOW, CAPS, EAGAIN, ENGINES, ENOSYS, EPERM, EXE, KILL, NOTIFY, NR,
                              allowed_rules, export_filter, export_main, read_policy)

SWEEP_ERRNO = 4000  # src/confine/confine.c, CC_SWEEP_ERRNO
SWEEP_MAX_NR = 512  # CC_SWEEP_MAX_NR

# The kernel's seccomp exemptions on x86_64 (see the module docstring):
# nr -> (name, the sweep's verdict and detail when the kernel has it).
KERNEL_PASSTHROUGH = {
    335: ("uretprobe", "allowed", "signal=%d" % signal.SIGILL),
    336: ("uprobe", "allowed", "ret=-1,errno=6"),  # ENXIO
}

VERDICT = {ALLOW: "allowed", EPERM: "denied", NOTIFY: "killed", KILL: "killed", ENOSYS: "enosys"}


def run_sweep(engine):
    """The sweep's output: (layers, [(nr, verdict, detail)])."""
    proc = subprocess.run([os.path.join(BUILD, EXE[engine]), "--ppid=%d" % os.getpid(), "--sweep"],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=900)
    assert proc.returncode == 0, (proc.returncode, proc.stderr, proc.stdout[-2000:])
    lines = proc.stdout.splitlines()
    assert lines and lines[0].startswith("layers "), proc.stdout[:2000]
    rows = []
    for line in lines[1:]:
        nr, verdict, detail = line.split(" ")
        rows.append((int(nr), verdict, detail))
    assert [r[0] for r in rows] == list(range(SWEEP_MAX_NR)), "the sweep skipped numbers"
    return lines[0][len("layers "):].split(","), rows


def expected_sweep(engine, observed):
    """[(nr, verdict, detail or None)]: every number's verdict per the
    exported filter at zero arguments. For the kernel's exempt numbers the
    kernel's own outcome is expected when the kernel in use has it (then
    with its exact detail), else the filter's."""
    prog = export_filter(engine)
    want = []
    for nr in range(SWEEP_MAX_NR):
        action = prog.run(nr)
        if action == EAGAIN:
            # futex(0, FUTEX_WAIT): a shared wait, answered by the filter
            # without running (the kernel itself would say EFAULT, 14).
            want.append((nr, "allowed", "ret=-1,errno=%d" % errno.EAGAIN))
            continue
        assert action in VERDICT, "nr %d: unexpected action %s" % (nr, bpf.describe(action))
        row = (nr, VERDICT[action], None)
        if nr in KERNEL_PASSTHROUGH:
            assert row[1] == "denied", "exempt number %d is in the policy" % nr
            _, verdict, detail = KERNEL_PASSTHROUGH[nr]
            if observed[nr][0] == verdict:
                row = (nr, verdict, detail)
        want.append(row)
    return want


@pytest.fixture(scope="module")
def sweeps():
    return {e: run_sweep(e) for e in ENGINES}


@pytest.mark.slow
@pytest.mark.seccomp
@pytest.mark.userns
@pytest.mark.landlock
@pytest.mark.parametrize("engine", ENGINES)
def test_sweep_ran_confined(sweeps, engine):
    layers, rows = sweeps[engine]
    for layer in ("hygiene", "rlimits", "namespaces", "capabilities", "no_new_privs", "landlock"):
        assert layer in layers, layers
    assert "seccomp" not in layers  # each child installs it itself
    errors = [r for r in rows if r[1] not in ("allowed", "denied", "killed", "enosys")]
    assert not errors, errors


@pytest.mark.slow
@pytest.mark.seccomp
@pytest.mark.userns
@pytest.mark.landlock
@pytest.mark.parametrize("engine", ENGINES)
def test_sweep_matches_the_filter(sweeps, engine):
    _, rows = sweeps[engine]
    observed = {nr: (v, d) for nr, v, d in rows}
    label = names(engine)
    diff = []
    expected = expected_sweep(engine, observed)
    for (nr, verdict, detail), (_, want, want_detail) in zip(rows, expected):
        if verdict != want or (want_detail is not None and detail != want_detail):
            diff.append("%d (%s): the kernel said %s %s; the filter says %s %s" % (
                nr, label.get(nr, "not in the policy"), verdict, detail, want, want_detail or ""))
    assert not diff, "\n".join(diff)


@pytest.mark.slow
@pytest.mark.seccomp
@pytest.mark.userns
@pytest.mark.landlock
@pytest.mark.parametrize("engine", ENGINES)
def test_only_the_allow_list_ran(sweeps, engine):
    _, rows = sweeps[engine]
    policy = read_policy(engine)
    allow_nrs = {r.nr for r in allowed_rules(engine)}
    ran = {nr for nr, v, _ in rows if v == "allowed"} - set(KERNEL_PASSTHROUGH)
    assert ran <= allow_nrs, sorted(ran - allow_nrs)
    assert 0 < len(ran) <= CAPS[engine], len(ran)
    # everything the policy allows unconditionally did run
    unconditional = {r.nr for r in policy if r.how == "allow"}
    assert unconditional <= ran, sorted(unconditional - ran)
    killed = {nr for nr, v, _ in rows if v == "killed"}
    assert killed == {r.nr for r in policy if r.how == "kill"}
    assert {nr for nr, v, _ in rows if v == "enosys"} == {NR["clone3"]}


def names(engine):
    return {r.nr: r.name for r in read_policy(engine)} | {
        nr: n for nr, (n, _, _) in KERNEL_PASSTHROUGH.items()}


# ---- argument-dependent calls in the kernel ----

# Run by a plain python3 (not pytest) so forking it is safe. argv: the
# filter file, the cases (JSON). Each case runs in its own child: core
# dumps off, no_new_privs, the filter, one call, a JSON report on a pipe.
# Arguments name what the child supplies: "buf" (a zeroed 4 KiB buffer),
# "rlim" (the child's current RLIMIT_AS, so writing it back changes
# nothing), "pipe" (a pipe's read end), "ppid" (the child's parent).
CHILD = r'''
import ctypes, json, os, resource, signal, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
data = open(sys.argv[1], "rb").read()
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
fbuf = ctypes.create_string_buffer(data, len(data))
prog = Prog(len(data) // 8, ctypes.cast(fbuf, ctypes.c_void_p))
for i, (nr, args) in enumerate(json.loads(sys.argv[2])):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        buf = ctypes.create_string_buffer(4096)
        rlim = ctypes.create_string_buffer(16)
        pr, pw = os.pipe()
        libc.prlimit64(0, resource.RLIMIT_AS, None, rlim)
        subst = {"buf": ctypes.addressof(buf), "rlim": ctypes.addressof(rlim), "pipe": pr,
                 "ppid": os.getppid()}
        real = [subst.get(a, a) if isinstance(a, str) else a for a in args]
        thread_started = None
        if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.syscall(317, 1, 0, ctypes.byref(prog)) != 0:
            os._exit(90)
        if nr == "thread":
            try:
                t = threading.Thread(target=lambda: None)
                t.start()
                t.join()
                ret, err = 0, 0
            except RuntimeError:
                ret, err = -1, -1
        else:
            ret = libc.syscall(ctypes.c_long(nr), *[ctypes.c_ulong(a & (2**64 - 1)) for a in real])
            err = ctypes.get_errno()
            if nr == 56 and ret == 0:
                os._exit(0)  # a fork that should never have happened: the child says nothing
        os.write(w, json.dumps({"args": real, "ret": ret, "errno": err}).encode())
        os._exit(0)
    os.close(w)
    out = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        out += chunk
    os.close(r)
    _, st = os.waitpid(pid, 0)
    rep = json.loads(out) if out else {}
    rep["i"] = i
    rep["signal"] = os.WTERMSIG(st) if os.WIFSIGNALED(st) else None
    rep["exit"] = os.WEXITSTATUS(st) if os.WIFEXITED(st) else None
    print(json.dumps(rep))
'''

SIGCHLD, SIGINT, SIGSYS = 17, 2, 31
THREAD_NEWUSER = 0x100 | 0x800 | 0x10000 | 0x10000000
TCGETS, TIOCSTI, FIONBIO, RLIMIT_AS = 0x5401, 0x5412, 0x5421, 9
AF_UNIX, AF_INET, SOCK_STREAM = 1, 2, 1
HI = 1 << 32

# (name, nr or "thread", args)
KERNEL_CASES = [
    ("rt_sigaction SIGINT query", NR["rt_sigaction"], [SIGINT, 0, "buf", 8]),
    ("rt_sigaction SIGRTMIN query", NR["rt_sigaction"], [34, 0, "buf", 8]),
    ("rt_sigaction 64 query", NR["rt_sigaction"], [64, 0, "buf", 8]),
    ("rt_sigaction SIGSYS query", NR["rt_sigaction"], [SIGSYS, 0, "buf", 8]),
    ("rt_sigaction SIGSYS|1<<32", NR["rt_sigaction"], [SIGSYS | HI, 0, "buf", 8]),
    ("rt_sigaction SIGINT|1<<32", NR["rt_sigaction"], [SIGINT | HI, 0, "buf", 8]),
    ("prlimit64 read own", NR["prlimit64"], [0, RLIMIT_AS, 0, "buf"]),
    ("prlimit64 write own (same value)", NR["prlimit64"], [0, RLIMIT_AS, "rlim", "buf"]),
    ("prlimit64 new = 1<<32", NR["prlimit64"], [0, RLIMIT_AS, HI, "buf"]),
    ("prlimit64 read parent", NR["prlimit64"], ["ppid", RLIMIT_AS, 0, "buf"]),
    ("ioctl TCGETS", NR["ioctl"], ["pipe", TCGETS, "buf"]),
    ("ioctl FIONBIO", NR["ioctl"], ["pipe", FIONBIO, "buf"]),
    ("ioctl TIOCSTI", NR["ioctl"], ["pipe", TIOCSTI, "buf"]),
    ("ioctl TCGETS upper garbage", NR["ioctl"], ["pipe", TCGETS | (0xDEADBEEF << 32), "buf"]),
    ("socketpair AF_UNIX", NR["socketpair"], [AF_UNIX, SOCK_STREAM, 0, "buf"]),
    ("socketpair AF_INET", NR["socketpair"], [AF_INET, SOCK_STREAM, 0, "buf"]),
    ("socketpair AF_UNIX|1<<32", NR["socketpair"], [AF_UNIX | HI, SOCK_STREAM, 0, "buf"]),
    ("socket AF_UNIX", NR["socket"], [AF_UNIX, SOCK_STREAM, 0]),
    ("clone as fork", NR["clone"], [SIGCHLD, 0, 0, 0, 0]),
    ("clone thread + CLONE_NEWUSER", NR["clone"], [THREAD_NEWUSER, 0, 0, 0, 0]),
    ("clone3", NR["clone3"], ["buf", 88]),
    ("kill parent, signal 0", NR["kill"], ["ppid", 0]),
    ("openat of \"\"", NR["openat"], [-100, "buf", 0]),  # ENOENT when it runs
    ("memfd_create (kill-list)", NR["memfd_create"], ["buf", 0]),
    ("getpid", 39, []),
    ("getpid with the x32 bit", bpf.X32_SYSCALL_BIT | 39, []),
    ("a thread through glibc and threading", "thread", []),
]


def kernel_outcome(rep):
    if rep.get("exit") == 90:
        return "could not install the filter"
    if rep["signal"] == signal.SIGSYS and "ret" not in rep:
        return "killed"
    if "ret" not in rep:
        return "no report (signal %s, exit %s)" % (rep["signal"], rep["exit"])
    if rep["ret"] == -1 and rep["errno"] in (SWEEP_ERRNO, -1):
        return "denied"  # -1: threading could not start the thread
    if rep["ret"] == -1 and rep["errno"] == 38:
        return "enosys"
    return "ran"


def interpreter_outcome(prog, nr, args):
    if nr == "thread":
        # glibc tries clone3 (ENOSYS, falls back) then clone with its
        # pthread flags; the thread then needs set_robust_list and rseq.
        flags = 0x3D0F00
        ok = (prog.run(NR["clone3"], args=[1, 88]) == ENOSYS
              and prog.run(NR["clone"], args=[flags, 1, 1, 1, 1]) == ALLOW)
        return "ran" if ok else "denied"
    action = prog.run(nr, args=[a & (2**64 - 1) for a in args])
    if action & bpf.SECCOMP_RET_ACTION_FULL == bpf.SECCOMP_RET_TRACE:
        return "enosys"  # the main filter alone: the kill-list with no tracer
    return {ALLOW: "ran", EPERM: "denied", ENOSYS: "enosys", KILL: "killed"}[action]


@pytest.mark.seccomp
@pytest.mark.parametrize("engine", ENGINES)
def test_argument_cases_in_the_kernel(engine, tmp_path):
    # The main filter alone (no monitor here to hold a listener): its
    # kill-list answers ENOSYS, the x32 and foreign numbers still kill.
    prog = export_main(engine)
    # The sweep's variant: the default EPERM answers 4000 instead.
    variant = bpf.Program([(c, jt, jf, bpf.errno_action(SWEEP_ERRNO)
                            if (c == bpf.BPF_RET | bpf.BPF_K and k == EPERM) else k)
                           for c, jt, jf, k in prog.insns])
    path = tmp_path / "filter.bpf"
    path.write_bytes(variant.to_bytes())
    cases = [[nr, args] for _, nr, args in KERNEL_CASES]
    proc = subprocess.run(["/usr/bin/python3", "-I", "-c", CHILD, str(path), json.dumps(cases)],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    reps = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["i"] for r in reps] == list(range(len(KERNEL_CASES)))
    wrong = []
    for (what, nr, _), rep in zip(KERNEL_CASES, reps):
        got = kernel_outcome(rep)
        want = interpreter_outcome(prog, nr, rep.get("args", []))
        if got != want:
            wrong.append("%s: kernel %s (%r), interpreter %s" % (what, got, rep, want))
    assert not wrong, "\n".join(wrong)
    # and the cases mean something: each engine sees some of each
    outcomes = [kernel_outcome(r) for r in reps]
    assert {"ran", "denied", "killed", "enosys"} <= set(outcomes), outcomes
    if engine == "py":
        thread = [c[0] for c in KERNEL_CASES].index("a thread through glibc and threading")
        assert outcomes[thread] == "ran", reps[thread]
