"""Degraded kernels, simulated: what sandbox modes require, auto and off do
on a host without Landlock, without namespaces or without seccomp.

build/tests/security/cc-degrade (degrade.c) installs a default-allow
seccomp filter that makes the listed features fail the way a kernel without
them does (Landlock: ENOSYS, or EOPNOTSUPP for "landlock-disabled";
namespaces: unshare/clone with CLONE_NEW* EPERM, clone3 ENOSYS; seccomp:
seccomp(2) ENOSYS, prctl(PR_SET/GET_SECCOMP) EINVAL), then runs the CLI
under it; the CLI, the library and the worker inherit the filter.

What is checked, for both engines:
  - the helper does what it says (reverse checks, with controls);
  - require refuses (exit 4, sandbox_unavailable) and names the missing
    layer, the kernel's answer, and what to do;
  - auto either runs and reports exactly what applied and what is missing
    (Landlock ABI 0 without Landlock, allow-list size 0 without seccomp), or
    is refused by the self-probes, which is by design: any probe that gets
    through refuses the start. EXPECTED_REFUSALS says which probes get
    through for each degradation; the refusal names them and the layers
    that did apply. codecage doctor says the same;
  - breach attempts run under each single degradation (and Landlock plus
    namespaces) are still stopped by the remaining layers, nothing leaks;
  - off mode warns and lists every confining layer as missing.

Outcomes of the breach attempts (Python guest, auto mode, host running as
root, kernel 6.18 with Landlock ABI 7; the test prints this table live
with -rP). "start refused" means the self-probes refused the start, so no
guest code ran (EXPECTED_REFUSALS says which probes got through).

| attempt            | no Landlock          | no namespaces       | no seccomp    | no Landlock, no namespaces |
|--------------------|----------------------|---------------------|---------------|----------------------------|
| read /etc/passwd   | ENOENT (mount ns)    | EACCES (Landlock)   | start refused | start refused              |
| list /             | own root only (ns)   | EACCES (Landlock)   | start refused | start refused              |
| write /var/tmp     | ENOENT (mount ns)    | EACCES (Landlock)   | start refused | start refused              |
| os.fork            | EPERM (seccomp)      | EPERM (seccomp)     | start refused | start refused              |
| subprocess         | EPERM (seccomp)      | EPERM (seccomp)     | start refused | start refused              |
| connect 127.0.0.1  | EPERM (seccomp)      | EPERM (seccomp)     | start refused | start refused              |
| kill(host, 0)      | EPERM (seccomp)      | EPERM (seccomp)     | start refused | start refused              |
| /proc/host/environ | ENOENT (mount ns)    | EACCES (Landlock)   | start refused | start refused              |
| canary env var     | absent (hygiene)     | absent (hygiene)    | start refused | start refused              |

JavaScript guest: std, os, process, fetch, print, scriptArgs, require and fs
(no scratch, no grant) are undefined, import() of std/os is refused
wherever the worker starts
(no Landlock; no namespaces; no Landlock and no namespaces); without
seccomp it starts too (RLIMIT_NPROC stops its fork), while Python's start
is refused by the fork probe. A host that is not root also exposes the
supervisor's /proc files to a worker without namespaces and Landlock (see
EXPECTED_REFUSALS)."""
import ast
import json
import os
import socket
import subprocess
import textwrap

import pytest

from conftest import BUILD, CLI, Run

DEGRADE = os.path.join(BUILD, "tests", "security", "cc-degrade")
LAYERS = ("hygiene", "rlimits", "namespaces", "capabilities", "no_new_privs", "landlock",
          "seccomp", "self-probes")
CONFINING = LAYERS[2:]
ROOT_HOST = os.geteuid() == 0
LANGS = ("python", "javascript")

# helper feature -> the layer it takes away, the kernel's answer as
# strerror() words it (it must reach the message), the pytest marker of
# the kernel feature
FEATURES = {
    "landlock": ("landlock", "Function not implemented", "landlock"),
    "landlock-disabled": ("landlock", "Operation not supported", "landlock"),
    "namespaces": ("namespaces", "Operation not permitted", "userns"),
    "seccomp": ("seccomp", "Function not implemented", "seccomp"),
}
SINGLE = ("landlock", "landlock-disabled", "namespaces", "seccomp")
COMBOS = ("landlock,namespaces", "namespaces,seccomp", "landlock,seccomp",
          "landlock,namespaces,seccomp")

# Self-probes that get through in auto mode, per degradation and engine
# (None: the worker starts). Without seccomp nothing stops fork but
# RLIMIT_NPROC, which the namespace step sets to the engine's threads:
# that binds a JavaScript worker (one thread), never a Python one (64
# threads). It binds on a root host too, because there the guest's ids
# map to host nobody, never to uid 0 (which the kernel exempts).
# Without a network namespace the host's abstract unix sockets are in
# reach; without a mount namespace and Landlock the host's files are.
_FILES = {"read_host_file", "list_root", "write_outside_scratch"}
EXPECTED_REFUSALS = {
    True: {  # the host runs as root (the guest is host nobody either way)
        "seccomp": {"python": {"fork"}, "javascript": None},
        "landlock,namespaces": {"python": _FILES, "javascript": None},
        "namespaces,seccomp": {"python": {"fork", "connect_unix"},
                               "javascript": {"fork", "connect_unix"}},
        "landlock,seccomp": {"python": {"fork"}, "javascript": None},
        "landlock,namespaces,seccomp": {
            lang: _FILES | {"fork", "connect_tcp", "connect_unix"} for lang in LANGS},
    },
    False: {  # any other user: the supervisor's files and signals are in reach
        "seccomp": {"python": {"fork"}, "javascript": None},
        "landlock,namespaces": {"python": _FILES | {"parent_environ"}, "javascript": None},
        "namespaces,seccomp": {"python": {"fork", "connect_unix"},
                               "javascript": {"fork", "connect_unix"}},
        "landlock,seccomp": {"python": {"fork"}, "javascript": None},
        "landlock,namespaces,seccomp": {
            lang: _FILES | {"fork", "connect_tcp", "connect_unix", "signal_parent",
                            "parent_environ"} for lang in LANGS},
    },
}


def missing_layers(deny):
    gone = {FEATURES[f][0] for f in deny.split(",")}
    return [layer for layer in LAYERS if layer in gone]


def applied_layers(deny):
    gone = missing_layers(deny)
    return [layer for layer in LAYERS if layer not in gone]


def expected_refusal(deny, lang):
    return EXPECTED_REFUSALS[ROOT_HOST].get(deny, {}).get(lang)


def marks(deny):
    """The kernel features a test under `deny` relies on: seccomp always
    (the helper is a seccomp filter), and every feature it leaves alone."""
    gone = {FEATURES[f][0] for f in deny.split(",")}
    names = {"seccomp"} | {m for (layer, _, m) in FEATURES.values() if layer not in gone}
    return [getattr(pytest.mark, n) for n in sorted(names)]


def cases(denies, langs=LANGS):
    return [pytest.param(d, lang, marks=marks(d), id="%s-%s" % (d, lang)) for d in denies
            for lang in langs]


def degraded(deny, *args, timeout=60):
    """build/codecage args under cc-degrade --deny deny; returns a Run."""
    proc = subprocess.run([DEGRADE, "--deny", deny, "--", CLI, *args], capture_output=True,
                          text=True, timeout=timeout)
    return Run(proc)


def degraded_eval(deny, lang, mode, code="6 * 7"):
    return degraded(deny, "eval", "--lang", lang, "--sandbox", mode, "--json", "--", code)


_baseline = {}


def baseline(lang):
    """The sandbox report of an undegraded runtime in auto mode: what a
    degraded one must match for the layers it still has."""
    if lang not in _baseline:
        r = subprocess.run([CLI, "eval", "--lang", lang, "--sandbox", "auto", "--json", "--",
                            "1"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        _baseline[lang] = json.loads(r.stdout)["sandbox"]
    return _baseline[lang]


def check_refusal(r, deny, lang, want):
    """A start refused by the self-probes: exit 4, sandbox_unavailable."""
    assert r.rc == 4 and r.kind == "sandbox_unavailable", r
    check_refusal_message(r.json["error"]["message"], deny, lang, want)


def check_refusal_message(msg, deny, lang, want):
    """The probes that got through named exactly, and the layers that did
    apply."""
    head = "self-probes got through the sandbox ("
    assert head in msg and "refusing to start" in msg, msg
    got = set(msg.split(head, 1)[1].split(")", 1)[0].split(","))
    assert got == want, "%s/%s: probes %s, expected %s" % (deny, lang, got, want)
    layers = [x for x in applied_layers(deny) if x != "self-probes"]
    assert "with layers %s;" % ",".join(layers) in msg, msg


# ---- the helper itself, in reverse: each feature really fails, and only it ----

CHECKER = textwrap.dedent(r"""
    import ctypes, json, os, subprocess, threading
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.restype = ctypes.c_int
    NEWUSER, NEWNET, SIGCHLD = 0x10000000, 0x40000000, 17

    def call(fn, *args):
        ctypes.set_errno(0)
        r = fn(*[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
        return [r, ctypes.get_errno() if r < 0 else 0]

    def in_child(fn):
        # fn runs in a forked child (namespaces and filters stay there)
        rd, wr = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.write(wr, json.dumps(fn()).encode())
            os._exit(0)
        os.close(wr)
        out = os.read(rd, 4096)
        os.waitpid(pid, 0)
        return json.loads(out)

    def raw_clone_newuser():
        r = call(libc.syscall, 56, NEWUSER | SIGCHLD, 0, 0, 0, 0)
        if r[0] == 0:
            os._exit(0)
        if r[0] > 0:
            os.waitpid(r[0], 0)
            r[0] = 1
        return r

    def thread_runs():
        box = []
        t = threading.Thread(target=box.append, args=(1,))
        t.start()
        t.join()
        return box == [1]

    action = ctypes.c_uint32(0x80000000)  # SECCOMP_RET_KILL_PROCESS
    status = dict(l.split(":\t", 1) for l in open("/proc/self/status").read().splitlines()
                  if l.startswith(("Seccomp:", "NoNewPrivs:")))
    unshare_cmd = subprocess.run(["unshare", "-Ur", "true"], capture_output=True)
    print(json.dumps({
        "landlock_create_ruleset": call(libc.syscall, 444, None, 0, 1),
        "landlock_add_rule": call(libc.syscall, 445, -1, 1, None, 0),
        "landlock_restrict_self": call(libc.syscall, 446, -1, 0),
        "unshare": in_child(lambda: call(libc.syscall, 272, NEWUSER | NEWNET)),
        "unshare_cmd": unshare_cmd.returncode,
        "clone_newuser": in_child(raw_clone_newuser),
        "clone3": call(libc.syscall, 435, None, 0),
        "fork": in_child(lambda: [0, 0]),
        "thread": thread_runs(),
        "seccomp": call(libc.syscall, 317, 2, 0, ctypes.byref(action)),
        "prctl_get_seccomp": call(libc.prctl, 21, 0, 0, 0, 0),
        "prctl_set_seccomp": call(libc.prctl, 22, 2, None, 0, 0),
        "status": {k: v.strip() for k, v in status.items()},
    }))
""")


def run_checker(deny):
    proc = subprocess.run([DEGRADE, "--deny", deny, "--", "/usr/bin/python3", "-c", CHECKER],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


ENOSYS, EPERM, EINVAL, EFAULT, EOPNOTSUPP, EBADF = 38, 1, 22, 14, 95, 9


@pytest.mark.landlock
@pytest.mark.seccomp
@pytest.mark.parametrize("deny,err", [("landlock", ENOSYS), ("landlock-disabled", EOPNOTSUPP)])
def test_helper_denies_landlock(deny, err):
    c = run_checker(deny)
    for call in ("landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"):
        assert c[call] == [-1, err], (call, c)
    # the rest of the kernel is untouched
    assert c["unshare"] == [0, 0] and c["unshare_cmd"] == 0 and c["clone_newuser"][0] == 1, c
    assert c["seccomp"] == [0, 0] and c["prctl_get_seccomp"] == [2, 0], c
    assert c["status"] == {"Seccomp": "2", "NoNewPrivs": "1"}, c


@pytest.mark.userns
@pytest.mark.seccomp
def test_helper_denies_namespaces():
    c = run_checker("namespaces")
    assert c["unshare"] == [-1, EPERM], c
    assert c["unshare_cmd"] != 0, c
    assert c["clone_newuser"] == [-1, EPERM], c
    assert c["clone3"] == [-1, ENOSYS], c
    # processes and threads still start (glibc's fork is a plain clone)
    assert c["fork"] == [0, 0] and c["thread"] is True, c
    assert c["landlock_create_ruleset"][0] >= 1, c
    assert c["seccomp"] == [0, 0], c


@pytest.mark.landlock
@pytest.mark.seccomp
def test_helper_denies_seccomp():
    c = run_checker("seccomp")
    assert c["seccomp"] == [-1, ENOSYS], c
    assert c["prctl_get_seccomp"] == [-1, EINVAL], c
    assert c["prctl_set_seccomp"] == [-1, EINVAL], c
    assert c["landlock_create_ruleset"][0] >= 1, c
    assert c["unshare"] == [0, 0] and c["fork"] == [0, 0] and c["thread"] is True, c
    # the helper's own filter went in before the door closed
    assert c["status"] == {"Seccomp": "2", "NoNewPrivs": "1"}, c


@pytest.mark.landlock
@pytest.mark.userns
@pytest.mark.seccomp
def test_helper_controls_without_it():
    """The same checks outside the helper: every call works, so the
    failures above are the helper's doing."""
    proc = subprocess.run(["/usr/bin/python3", "-c", CHECKER], capture_output=True, text=True,
                          timeout=60)
    c = json.loads(proc.stdout)
    assert c["landlock_create_ruleset"][0] >= 1, c
    assert c["landlock_add_rule"] == [-1, EBADF], c
    assert c["unshare"] == [0, 0] and c["unshare_cmd"] == 0 and c["clone_newuser"][0] == 1, c
    assert c["clone3"] == [-1, EINVAL], c  # a real clone3, refusing a size of 0
    assert c["seccomp"] == [0, 0] and c["prctl_get_seccomp"] == [0, 0], c
    assert c["prctl_set_seccomp"] == [-1, EFAULT], c


@pytest.mark.landlock
@pytest.mark.userns
@pytest.mark.seccomp
def test_helper_combines_denials():
    c = run_checker("landlock,namespaces,seccomp")
    assert c["landlock_create_ruleset"] == [-1, ENOSYS], c
    assert c["unshare"] == [-1, EPERM] and c["clone3"] == [-1, ENOSYS], c
    assert c["seccomp"] == [-1, ENOSYS] and c["prctl_get_seccomp"] == [-1, EINVAL], c
    assert c["fork"] == [0, 0] and c["thread"] is True, c


@pytest.mark.seccomp
@pytest.mark.parametrize("args,rc", [
    ([], 2),
    (["--deny", "landlock"], 2),
    (["--deny", "landlock,bogus", "--", "true"], 2),
    (["--deny", "", "--", "true"], 2),
    (["--deny", "landlock,landlock-disabled", "--", "true"], 2),
    (["--deny", "landlock", "--", "/nonexistent/cmd"], 127),
    (["--deny=seccomp", "--", "true"], 0),
    (["--deny", "namespaces", "false"], 1),
])
def test_helper_usage(args, rc):
    proc = subprocess.run([DEGRADE, *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == rc, proc.stderr


# ---- require: refuse, name the layer, say what to do ----

@pytest.mark.parametrize("deny,lang", cases(SINGLE + COMBOS))
def test_require_refuses(deny, lang):
    r = degraded_eval(deny, lang, "require")
    assert r.rc == 4 and r.kind == "sandbox_unavailable", r
    msg = r.json["error"]["message"]
    # the first missing layer in DESIGN.md order is the one that stops it
    first = missing_layers(deny)[0]
    assert "layer '%s' could not be applied" % first in msg, msg
    feature = next(f for f in deny.split(",") if FEATURES[f][0] == first)
    assert FEATURES[feature][1] in msg, msg  # the kernel's answer
    assert "fix the host, or use sandbox mode 'auto'" in msg, msg
    assert r.json["value"] is None and r.json["sandbox"]["mode"] == "require", r
    # later layers the kernel visibly lacks are named in the same refusal
    later = [m for m in missing_layers(deny)[1:] if m in ("landlock", "seccomp")]
    if later:
        assert "also unavailable: " + ",".join(later) in msg, msg
    else:
        assert "also unavailable" not in msg, msg


# ---- auto: run with what exists and say exactly that, or refuse by probe ----

@pytest.mark.parametrize("deny,lang", cases(SINGLE + COMBOS))
def test_auto_reports_honestly(deny, lang):
    r = degraded_eval(deny, lang, "auto")
    want = expected_refusal(deny, lang)
    if want is not None:
        check_refusal(r, deny, lang, want)
        return
    assert r.rc == 0 and r.kind == "ok" and r.value == 42, r
    sb = r.json["sandbox"]
    assert sb["mode"] == "auto", sb
    assert sb["missing"] == ",".join(missing_layers(deny)), sb
    assert sb["applied"] == ",".join(applied_layers(deny)), sb
    base = baseline(lang)
    gone = missing_layers(deny)
    assert sb["landlock_abi"] == (0 if "landlock" in gone else base["landlock_abi"]), sb
    assert sb["seccomp_allowed"] == (0 if "seccomp" in gone else base["seccomp_allowed"]), sb
    assert sb["engine"] == base["engine"], sb


def parse_doctor(text):
    """codecage doctor's report -> {language: {field: text}}."""
    out, cur = {}, None
    for line in text.splitlines():
        if line and not line[0].isspace():
            lang, rest = line.split(None, 1)
            cur = out.setdefault(lang, {})
            if rest.startswith("cannot start: "):
                cur["cannot start"] = rest[len("cannot start: "):]
            else:
                cur["engine"] = rest
        elif ": " in line:
            key, val = line.strip().split(": ", 1)
            cur[key] = val
    return out


@pytest.mark.parametrize("deny", [pytest.param(d, marks=marks(d)) for d in SINGLE + COMBOS])
def test_doctor_says_the_same(deny):
    r = degraded(deny, "doctor")
    doc = parse_doctor(r.stdout)
    assert set(doc) == set(LANGS), r
    refused = False
    for lang in LANGS:
        d = doc[lang]
        want = expected_refusal(deny, lang)
        if want is not None:
            refused = True
            assert d["cannot start"].startswith("sandbox_unavailable: "), d
            check_refusal_message(d["cannot start"], deny, lang, want)
            continue
        ev = degraded_eval(deny, lang, "auto").json["sandbox"]
        assert d["engine"] == ev["engine"], d
        assert d["applied"] == ev["applied"] == ",".join(applied_layers(deny)), (d, ev)
        assert d["missing"] == ev["missing"] == ",".join(missing_layers(deny)), (d, ev)
        assert d["landlock ABI"] == "%d, seccomp allow-list: %d syscalls" % (
            ev["landlock_abi"], ev["seccomp_allowed"]), d
        assert d["sandbox 'require'"] == "refused (layers missing)", d
    assert r.rc == (1 if refused else 0), r


@pytest.mark.landlock
@pytest.mark.userns
@pytest.mark.seccomp
def test_doctor_undegraded_has_every_layer():
    """The control: without the helper, doctor lists every layer and the
    sizes a runtime reports."""
    r = subprocess.run([CLI, "doctor"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = parse_doctor(r.stdout)
    for lang in LANGS:
        base = baseline(lang)
        assert doc[lang]["applied"] == ",".join(LAYERS), doc
        assert doc[lang]["missing"] == "(none)", doc
        assert doc[lang]["landlock ABI"] == "%d, seccomp allow-list: %d syscalls" % (
            base["landlock_abi"], base["seccomp_allowed"]), doc
        assert base["landlock_abi"] >= 1 and base["seccomp_allowed"] > 0, base


# ---- off: loud, and honest that nothing confines ----

@pytest.mark.parametrize("deny,lang", cases(("landlock", "namespaces", "seccomp",
                                              "landlock,namespaces,seccomp")))
def test_off_mode_is_loud(deny, lang):
    r = degraded_eval(deny, lang, "off")
    assert r.rc == 0 and r.value == 42, r
    assert "WARNING" in r.stderr and "--sandbox off" in r.stderr, r
    sb = r.json["sandbox"]
    assert sb["mode"] == "off", sb
    assert sb["missing"] == ",".join(CONFINING), sb
    assert sb["applied"] == "hygiene,rlimits", sb
    assert sb["landlock_abi"] == 0 and sb["seccomp_allowed"] == 0, sb


# ---- the breach suite under each degradation ----

CANARY = "cc-degraded-canary-5b1f0e"
# what the minimal roots hold (run: the Python engine's empty cache folder, /run/codecage)
OWN_ROOT = {"usr", "lib", "etc", "dev", "tmp", "run"}

PY_BREACH = r"""
import errno as _errno
import os

HOST_PID, PORT, CANARY, VAR_TMP = {host_pid}, {port}, {canary!r}, {var_tmp!r}


def _try(fn):
    try:
        return "ALLOWED " + repr(fn())[:300]
    except BaseException as e:
        code = getattr(e, "errno", None)
        name = _errno.errorcode.get(code, "") if isinstance(code, int) else ""
        return ("blocked %s %s" % (type(e).__name__, name)).strip()


def _read_passwd():
    with open("/etc/passwd") as f:
        return f.read(64)


def _write_var_tmp():
    with open(VAR_TMP, "w") as f:
        f.write("breach")
    return VAR_TMP


def _fork():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def _subprocess():
    import subprocess
    return subprocess.run(["/bin/sh", "-c", "echo breach"], capture_output=True).stdout


def _connect():
    import socket
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(("127.0.0.1", PORT))
    s.sendall(b"breach")
    return PORT


def _host_environ():
    with open("/proc/%d/environ" % HOST_PID, "rb") as f:
        return f.read()


def _canary():
    hits = [k for k, v in os.environ.items() if CANARY in v]
    if not hits:
        raise LookupError("absent")
    return hits


{{
    "read /etc/passwd": _try(_read_passwd),
    "list /": _try(lambda: sorted(os.listdir("/"))),
    "write /var/tmp": _try(_write_var_tmp),
    "os.fork": _try(_fork),
    "subprocess": _try(_subprocess),
    "connect 127.0.0.1": _try(_connect),
    "kill(host, 0)": _try(lambda: os.kill(HOST_PID, 0)),
    "/proc/host/environ": _try(_host_environ),
    "canary env var": _try(_canary),
}}
"""

JS_BREACH = r"""
const r = {};
for (const n of ["std", "os", "process", "fetch", "print", "scriptArgs", "require", "fs"])
  r["typeof " + n] = typeof globalThis[n];
for (const m of ["std", "os"]) {
  try { await import(m); r["import " + m] = "ALLOWED"; }
  catch (e) { r["import " + m] = "blocked " + e.name; }
}
// require exists only with scratch or a grant (none here: a ReferenceError,
// "blocked undefined"); where it exists it hands out the fs module only
// (js_fs.c) and refuses anything else by name
for (const m of ["child_process", "os", "net"]) {
  try { require(m); r["require " + m] = "ALLOWED"; }
  catch (e) { r["require " + m] = "blocked " + e.code; }
}
r
"""

SUITE_DENIES = ("landlock", "namespaces", "seccomp", "landlock,namespaces")

# What an outcome says about the layer that stopped it.
STOPPED_BY = {
    "ENOENT": "mount namespace (not in the minimal root)",
    "EROFS": "mount namespace (read-only root)",
    "EACCES": "Landlock",
    "EPERM": "seccomp",
    "ENETUNREACH": "network namespace (no interfaces)",
    "ESRCH": "pid namespace",
    "EAGAIN": "RLIMIT_NPROC",
    "LookupError": "hygiene (empty environment)",
    "TypeError": "engine (no module loader)",
    "MODULE_NOT_FOUND": "engine (require hands out fs only)",
    "undefined": "engine (no host globals)",
}


def run_breach(deny, lang, tmp_path):
    """The breach code under the degradation, with a listening socket the
    guest must not reach and the CLI's pid as the host to signal and read.
    Returns (Run, what leaked)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.setblocking(False)
    var_tmp = "/var/tmp/codecage-degraded-%d-%s" % (os.getpid(), tmp_path.name)
    env = dict(os.environ, CODECAGE_CANARY=CANARY)
    proc = subprocess.Popen([DEGRADE, "--deny", deny, "--", CLI, "run", "--lang", lang,
                             "--sandbox", "auto", "--json", "-"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    # cc-degrade execs the CLI: same pid, and its environment holds the canary
    code = JS_BREACH if lang == "javascript" else PY_BREACH.format(
        host_pid=proc.pid, port=srv.getsockname()[1], canary=CANARY, var_tmp=var_tmp)
    out, err = proc.communicate(code, timeout=60)
    r = Run(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    leaks = []
    try:
        conn, _ = srv.accept()
        leaks.append("a connection reached the host's listener")
        conn.close()
    except BlockingIOError:
        pass
    srv.close()
    if os.path.exists(var_tmp):
        os.unlink(var_tmp)
        leaks.append("the guest created " + var_tmp)
    if CANARY in out:
        leaks.append("the canary reached the output")
    return r, leaks


def blocked(attempt, outcome):
    if attempt == "list /" and outcome.startswith("ALLOWED "):
        # a listing of the worker's own minimal root is no leak
        return set(ast.literal_eval(outcome[len("ALLOWED "):])) <= OWN_ROOT
    if attempt.startswith("typeof "):
        return outcome == "undefined"
    return outcome.startswith("blocked")


def stopped_by(deny, attempt, outcome):
    if attempt == "list /" and outcome.startswith("ALLOWED"):
        return "mount namespace (lists its own root)" if blocked(attempt, outcome) else "NOTHING"
    if not blocked(attempt, outcome):
        return "NOTHING"
    why = outcome.split()[-1]
    if why == "EPERM" and "seccomp" in missing_layers(deny):
        return "Landlock (signal scope) or file permissions"
    return STOPPED_BY.get(why, "?")


def render_table(deny, lang, outcomes):
    """The outcome table of one degradation (printed; pytest -rP shows it)."""
    lines = ["%s guest, auto mode, no %s:" % (lang, deny),
             "| attempt | outcome | stopped by |", "|---|---|---|"]
    lines += ["| %s | %s | %s |" % (a, o, stopped_by(deny, a, o)) for a, o in outcomes.items()]
    return "\n".join(lines)


@pytest.mark.parametrize("deny,lang", cases(SUITE_DENIES))
def test_breach_suite_still_blocked(deny, lang, tmp_path):
    r, leaks = run_breach(deny, lang, tmp_path)
    assert not leaks, (leaks, r)
    want = expected_refusal(deny, lang)
    if want is not None:
        check_refusal(r, deny, lang, want)
        print("%s guest, auto mode, no %s: start refused by the self-probes (%s got "
              "through); no guest code ran" % (lang, deny, ",".join(sorted(want))))
        return
    assert r.rc == 0 and r.kind == "ok", r
    assert r.json["sandbox"]["missing"] == ",".join(missing_layers(deny)), r
    outcomes = r.value
    table = render_table(deny, lang, outcomes)
    print(table)
    assert len(outcomes) == (13 if lang == "javascript" else 9), outcomes
    through = {a: o for a, o in outcomes.items() if not blocked(a, o)}
    assert not through, "%s/%s got through: %s\n%s" % (deny, lang, through, table)
