"""The capability checklist's cases, one line each (test_checklist.py runs them).

Columns: a short id; the language; the guest code; the exact expected outcome;
the layer that decides it (documentation only: "seccomp", "landlock", "mount ns"
for the minimal read-only root, "net ns", "uts ns", "userns" for the guest's
uid (host nobody when the host is root), "rlimit", "hygiene" for what the
worker does before confining itself, "engine" for what QuickJS or CPython
simply lacks).

Expected outcomes:
  value(v)         ok, and the eval's value is exactly v
  guest(t, m)      guest_error of type t with message m
  syntax(m)        syntax_error (SyntaxError) with message m
  killed(call)     worker_crashed: "killed by seccomp for calling <call>", a
                   call on the kill-list of src/common/seccomp_policy.c
  died(signal)     worker_crashed: the worker died of that signal
  exited(status)   worker_crashed: the worker exited with that status

Most Python cases are written with attempt(), whose value is
"<ExceptionType> <ERRNO>" (e.g. "PermissionError EPERM") when an OSError stops
the attempt, and "no error: <repr of out>" when nothing does; syscall() makes a
raw system call through ctypes and evaluates to "<return value> <ERRNO>".

Placeholders, replaced by test_checklist.py before a run: @VARDIR@ and @TMPDIR@
(directories holding canary.txt, outside every path the worker's root holds),
@TAG@ (a random name for files a case tries to create), @HOSTPID@ (the pid of
the process hosting the supervisor: build/codecage or cc-checklist-driver),
@TCPPORT@ and @UDPPORT@ (host listeners on 127.0.0.1), @USOCK@ and @UDGRAM@
(host unix stream and datagram sockets), @ABSTRACT@ (the name of host abstract
unix sockets, stream and datagram)."""
from typing import NamedTuple

PY, JS = "python", "javascript"


class Case(NamedTuple):
    id: str
    lang: str
    code: str
    expect: tuple
    layer: str
    # the outcome in a session forked from a fork server, where it differs
    # (None: the same); see SECURITY.md on what forked sessions share
    forked: tuple = None


# What QuickJS's global object holds in the worker (the js-globals case).
# no SharedArrayBuffer, no Atomics: engine_js.c takes them off; display is
# js_display.c's; no fs, no require: only a session with scratch or a grant
# has them (these cases run with neither)
JS_GLOBALS = (
    "AggregateError Array ArrayBuffer BigInt BigInt64Array BigUint64Array Boolean "
    "DataView Date Error EvalError FinalizationRegistry Float32Array Float64Array Function "
    "Infinity Int16Array Int32Array Int8Array InternalError JSON Map Math NaN Number Object "
    "Promise Proxy RangeError ReferenceError Reflect RegExp Set String "
    "Symbol SyntaxError TypeError URIError Uint16Array Uint32Array Uint8Array "
    "Uint8ClampedArray WeakMap WeakRef WeakSet console decodeURI decodeURIComponent display "
    "encodeURI encodeURIComponent escape eval globalThis isFinite isNaN parseFloat "
    "parseInt undefined unescape"
)


def value(v):
    return ("ok", v)


def guest(type_, message):
    return ("guest_error", type_, message)


def syntax(message):
    return ("syntax_error", "SyntaxError", message)


def killed(call):
    return ("killed", call)


def died(signal):
    return ("died", signal)


def exited(status):
    return ("exited", status)


# How an attempt names its failure: the exception type and the errno's name
# (getaddrinfo's negative codes by their EAI_ name; URLError by its reason).
_ERRNAME = '''def _errname(e):
    import errno, socket
    if e.errno is None and isinstance(getattr(e, "reason", None), OSError):
        return type(e).__name__ + ": " + _errname(e.reason)
    if e.errno is not None and e.errno < 0:
        eai = {v: k for k, v in vars(socket).items() if k.startswith("EAI_")}
        return type(e).__name__ + " " + eai.get(e.errno, str(e.errno))
    return type(e).__name__ + " " + errno.errorcode.get(e.errno, str(e.errno))
'''


def attempt(body):
    """Guest Python that runs body (statements separated by "; " or newlines;
    it may set `out`) and evaluates to the name of the OSError that stopped
    it, or to "no error: " and repr(out)."""
    lines = "".join("    %s\n" % line for line in body.split("\n"))
    return (_ERRNAME + "out = None\ntry:\n" + lines + "    _r = 'no error: ' + repr(out)\n"
            "except OSError as e:\n    _r = _errname(e)\n_r")


# x86_64 system call numbers (asm/unistd_64.h).
NR = {"ioctl": 16, "clone": 56, "vfork": 58, "execve": 59, "prctl": 157, "ptrace": 101,
      "tgkill": 234, "mount": 165, "chroot": 161, "keyctl": 250, "unshare": 272, "setns": 308,
      "perf_event_open": 298, "prlimit64": 302, "process_vm_readv": 310, "seccomp": 317,
      "memfd_create": 319, "bpf": 321, "execveat": 322, "userfaultfd": 323,
      "io_uring_setup": 425, "clone3": 435, "getpid_x32": 0x40000000 | 39}


def syscall(name, args=""):
    """Guest Python making system call `name` with args (Python source: ints,
    bytes) through ctypes; evaluates to "<return value> <ERRNO or ok>"."""
    return ("import ctypes, errno\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "libc.syscall.restype = ctypes.c_long\n"
            "args = [a if isinstance(a, bytes) else ctypes.c_long(a) for a in (%d, %s)]\n"
            "ret = libc.syscall(*args)\n"
            "'%%d %%s' %% (ret, errno.errorcode[ctypes.get_errno()] if ret == -1 else 'ok')"
            % (NR[name], args))


# Longer guest programs, named here and used in the table below.

KILL_FROM_THREAD = '''import ctypes, signal, threading
libc = ctypes.CDLL(None)
def f():
    signal.pthread_sigmask(signal.SIG_BLOCK, set(signal.Signals))
    libc.syscall(101, 16, 1, 0, 0)
t = threading.Thread(target=f); t.start(); t.join()
"survived"'''


# Every descriptor the guest can see: 0-2 are /dev/null (char 1:3), 3 is the
# channel to the supervisor; nothing of the host's is inherited.
SCAN_FDS = '''import os, stat
fds = []
for fd in range(1024):
    try:
        st = os.fstat(fd)
    except OSError:
        continue
    kind = "socket" if stat.S_ISSOCK(st.st_mode) else "chr %d:%d" % (
        os.major(st.st_rdev), os.minor(st.st_rdev)) if stat.S_ISCHR(st.st_mode) else "other"
    fds.append([fd, kind])
fds'''

# The strings at the top of the worker's initial stack (argv, environment,
# execfn, between AT_PLATFORM/AT_RANDOM and AT_EXECFN): only the worker's own
# argv, none of the host's environment or argv.
INITIAL_STACK = '''import ctypes, os, re
libc = ctypes.CDLL(None)
libc.getauxval.restype = ctypes.c_ulong
execfn, rnd, plat = libc.getauxval(31), libc.getauxval(25), libc.getauxval(15)
lo = max(rnd + 16, plat + len(ctypes.string_at(plat)) + 1)
hi = execfn + len(ctypes.string_at(execfn)) + 1
[re.sub(r"\\d+", "N", os.path.basename(s.decode("latin-1")))
 for s in ctypes.string_at(lo, hi - lo).split(b"\\0") if s]'''

# libc's environ array, read raw (os.environ is only CPython's copy).
LIBC_ENVIRON = '''import ctypes
env = ctypes.POINTER(ctypes.c_char_p).in_dll(ctypes.CDLL(None), "environ")
n, names = 0, []
while env and env[n]:
    names.append(env[n].decode("latin-1"))
    n += 1
names'''

# A glob over the whole visible tree for the canary file's name.
GLOB_CANARY = '''import glob
glob.glob("/**/canary.txt", recursive=True)'''

# Descriptors up to RLIMIT_NOFILE (64): 60 opens after 0-3, then EMFILE.
OPEN_MANY = '''import os
fds = []
try:
    while True:
        fds.append(os.open("/usr/lib/python3.11/os.py", os.O_RDONLY))
except OSError as e:
    out = [len(fds), e.strerror]
for fd in fds:
    os.close(fd)
out'''

# Thread bombs: RLIMIT_NPROC in the worker's user namespace ends them at 64
# tasks, the main thread included, or the address-space limit first (default
# 8 MiB stacks under a smaller max_memory: how soon varies, so the value
# says "at most 64"; threads share one malloc arena, so their stacks are
# all they cost). Either way a clean RuntimeError, never a hang.
THREAD_BOMB = '''import threading
ev = threading.Event()
ts = []
try:
    while True:
        t = threading.Thread(target=ev.wait); t.start(); ts.append(t)
except RuntimeError as e:
    out = [len(ts) + 1 <= 64, str(e)]
ev.set()
for t in ts:
    t.join()
out'''
# POSIX timers count against RLIMIT_SIGPENDING (64: the engine's stop timer
# plus 63), which also keeps one guest from using up the quota its host user
# shares with every other worker.
TIMER_BOMB = '''import ctypes
libc = ctypes.CDLL(None)
class sigevent(ctypes.Structure):
    _fields_ = [("value", ctypes.c_long), ("signo", ctypes.c_int), ("notify", ctypes.c_int),
                ("pad", ctypes.c_char * 48)]
n = 0
for i in range(100000):
    t = ctypes.c_void_p()
    ev = sigevent(0, 40, 0)
    if libc.timer_create(1, ctypes.byref(ev), ctypes.byref(t)) != 0:
        break
    n += 1
n'''

THREAD_BOMB_SMALL = '''import threading
threading.stack_size(65536)
ev = threading.Event()
ts = []
try:
    while True:
        t = threading.Thread(target=ev.wait); t.start(); ts.append(t)
except RuntimeError as e:
    out = [len(ts) + 1, str(e)]
ev.set()
for t in ts:
    t.join()
out'''
THREAD_BOMB_UNCAUGHT = '''import threading, time
while True:
    threading.Thread(target=time.sleep, args=(1000,), daemon=True).start()'''
FORK_BOMB = attempt('''import os
while True:
    os.fork()''')

SOCKETPAIR = "import socket; a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)"
UNLIMITED = "(resource.RLIM_INFINITY, resource.RLIM_INFINITY)"
NOT_ALLOWED = guest("ValueError", "not allowed to raise maximum limit")
NOT_DEFINED = "'%s' is not defined"
# what a missing fetch adds (engine_js.c): the network is off, and what turns it on
NO_FETCH = (" (the network is off: the host lets the guest reach listed hosts with allow_net: "
            "--allow-net ENTRY in the CLI and codecage mcp, RuntimeConfig(allow_net=[...]) in "
            "Python, cc_options.net in C)")
STATIC_IMPORT = ("import declarations are not available but for fs (import fs from 'fs'): modules "
                 "are not available in the sandbox (dynamic import() is refused too): use the "
                 "built-in globals, the global fs, or a host tool for what the host has")
NO_MODULES_TEXT = ("modules are not available in the sandbox (fs is, in a session with a "
                   "scratch or a mount)")
NO_MODULES = guest("TypeError", NO_MODULES_TEXT)
# what a missing fs or require adds (engine_js.c): they exist only with files
NO_FILES = (" (fs and require exist only in a session with files: the host gives it a scratch "
            "(--scratch MIB in the CLI and codecage mcp, RuntimeConfig(scratch=BYTES) in "
            "Python, cc_options.scratch_bytes in C) or a mount (--mount HOST:GUEST, "
            "Mount(host, guest), cc_options.mounts))")

CASES = [
    # ---- host files: read, list, write (canaries planted outside the root) ----
    Case("py-read-canary", PY, attempt("out = open('@VARDIR@/canary.txt').read()"), value("FileNotFoundError ENOENT"), "mount ns"),
    Case("py-read-canary-tmp", PY, attempt("out = open('@TMPDIR@/canary.txt').read()"), value("FileNotFoundError ENOENT"), "mount ns"),
    Case("py-read-passwd", PY, attempt("out = open('/etc/passwd').read()"), value("FileNotFoundError ENOENT"), "mount ns"),
    Case("py-stat-canary", PY, attempt("import os; out = os.stat('@VARDIR@/canary.txt')"), value("FileNotFoundError ENOENT"), "mount ns"),
    Case("py-glob-canary", PY, GLOB_CANARY, value([]), "landlock"),
    # the devices the Python root holds: usable as files, never as devices
    Case("py-dev-null-write", PY, attempt("out = open('/dev/null', 'w').write('x')"), value("no error: 1"), "landlock"),
    Case("py-dev-urandom-read", PY, attempt("out = len(open('/dev/urandom', 'rb').read(8))"), value("no error: 8"), "landlock"),
    Case("py-dev-zero-write", PY, attempt("out = open('/dev/zero', 'wb')"), value("PermissionError EACCES"), "landlock"),
    Case("py-dev-null-ioctl", PY, attempt("import fcntl, termios; out = fcntl.ioctl(open('/dev/null'), termios.FIONREAD, b'0000')"), value("PermissionError EPERM"), "seccomp"),
    Case("py-list-root", PY, attempt("import os; out = os.listdir('/')"), value("PermissionError EACCES"), "landlock"),
    Case("py-list-etc", PY, attempt("import os; out = os.listdir('/etc')"), value("PermissionError EACCES"), "landlock"),
    Case("py-list-canary-dir", PY, attempt("import os; out = os.listdir('@VARDIR@')"), value("FileNotFoundError ENOENT"), "mount ns"),
    Case("py-write-canary-dir", PY, attempt("out = open('@VARDIR@/@TAG@', 'w')"), value("FileNotFoundError ENOENT"), "mount ns"),
    Case("py-write-host-tmp", PY, attempt("out = open('/tmp/@TAG@', 'w')"), value("FileNotFoundError ENOENT"), "mount ns"),
    Case("py-write-stdlib", PY, attempt("out = open('/usr/lib/python3.11/@TAG@.py', 'w')"), value("OSError EROFS"), "mount ns"),
    Case("py-append-stdlib", PY, attempt("out = open('/usr/lib/python3.11/os.py', 'a')"), value("PermissionError EACCES"), "userns"),
    Case("py-write-root", PY, attempt("out = open('/@TAG@', 'w')"), value("OSError EROFS"), "mount ns"),
    Case("py-unlink-stdlib", PY, attempt("import os; os.unlink('/usr/lib/python3.11/os.py')"), value("OSError EROFS"), "mount ns"),
    Case("py-rename-stdlib", PY, attempt("import os; os.rename('/usr/lib/python3.11/os.py', '/usr/lib/python3.11/@TAG@.py')"), value("OSError EROFS"), "mount ns"),
    # symlink and chmod are allowed for scratch and writable grants (issue
    # 14): on the read-only root the mount refuses them
    Case("py-symlink", PY, attempt("import os; os.symlink('@VARDIR@', '/usr/lib/python3.11/@TAG@')"), value("OSError EROFS"), "mount ns"),
    Case("py-chmod", PY, attempt("import os; os.chmod('/usr/lib/python3.11/os.py', 0o777)"), value("OSError EROFS"), "mount ns"),
    # ---- /proc and /sys: not in the root ----
    Case("py-proc-self", PY, attempt("out = open('/proc/self/status').read()"), value("FileNotFoundError ENOENT"), "mount ns"),
    Case("py-proc-host-environ", PY, attempt("out = open('/proc/@HOSTPID@/environ').read()"), value("FileNotFoundError ENOENT"), "mount ns"),
    Case("py-proc-host-cmdline", PY, attempt("out = open('/proc/@HOSTPID@/cmdline').read()"), value("FileNotFoundError ENOENT"), "mount ns"),
    Case("py-sys", PY, attempt("import os; out = os.listdir('/sys')"), value("FileNotFoundError ENOENT"), "mount ns"),
    # ---- the host's environment and argv ----
    Case("py-environ", PY, "import os; dict(os.environ)", value({}), "hygiene"),
    Case("py-argv", PY, "import sys; [sys.argv, sys.orig_argv, sys.executable]", value([[""], [], ""]), "engine"),
    Case("py-libc-environ", PY, LIBC_ENVIRON, value([]), "hygiene"),
    Case("py-initial-stack", PY, INITIAL_STACK, value(["codecage-worker-py", "--ppid=N", "codecage-worker-py"]), "hygiene"),
    Case("py-hostname", PY, "import os, socket; [socket.gethostname(), os.uname().nodename]", value(["codecage", "codecage"]), "uts ns"),
    # ---- the network ----
    Case("py-tcp-socket", PY, attempt("import socket; out = socket.socket(socket.AF_INET, socket.SOCK_STREAM)"), value("PermissionError EPERM"), "seccomp"),
    Case("py-tcp-connect", PY, attempt("import socket; out = socket.create_connection(('127.0.0.1', @TCPPORT@), timeout=5)"), value("PermissionError EPERM"), "seccomp"),
    Case("py-udp-sendto", PY, attempt("import socket; out = socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', @UDPPORT@))"), value("PermissionError EPERM"), "seccomp"),
    Case("py-inet6", PY, attempt("import socket; out = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)"), value("PermissionError EPERM"), "seccomp"),
    Case("py-netlink", PY, attempt("import socket; out = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)"), value("PermissionError EPERM"), "seccomp"),
    Case("py-inet-socketpair", PY, attempt("import socket; out = socket.socketpair(socket.AF_INET)"), value("PermissionError EPERM"), "seccomp"),
    Case("py-unix-socket", PY, attempt("import socket; out = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)"), value("PermissionError EPERM"), "seccomp"),
    Case("py-unix-connect", PY, attempt(SOCKETPAIR + "; a.connect('@USOCK@')"), value("PermissionError EPERM"), "seccomp"),
    Case("py-unix-sendto-path", PY, attempt(SOCKETPAIR + "; out = a.sendto(b'x', '@UDGRAM@')"), value("PermissionError EPERM"), "seccomp"),
    Case("py-abstract-sendto", PY, attempt(SOCKETPAIR + "; out = a.sendto(b'x', '\\0@ABSTRACT@')"), value("PermissionError EPERM"), "seccomp"),
    Case("py-abstract-sendmsg", PY, attempt(SOCKETPAIR + "; out = a.sendmsg([b'x'], [], 0, '\\0@ABSTRACT@')"), value("PermissionError EPERM"), "seccomp"),
    Case("py-abstract-bind", PY, attempt(SOCKETPAIR + "; a.bind('\\0@ABSTRACT@-guest')"), value("PermissionError EPERM"), "seccomp"),
    Case("py-dns", PY, attempt("import socket; out = socket.getaddrinfo('example.com', 80)"), value("gaierror EAI_AGAIN"), "net ns"),
    Case("py-dns-localhost", PY, attempt("import socket; out = socket.gethostbyname('localhost')"), value("gaierror EAI_NONAME"), "mount ns"),
    Case("py-http", PY, attempt("import urllib.request; out = urllib.request.urlopen('http://127.0.0.1:@TCPPORT@/', timeout=5)"), value("URLError: PermissionError EPERM"), "seccomp"),
    # ---- processes ----
    Case("py-subprocess", PY, attempt("import subprocess; out = subprocess.run(['/bin/sh', '-c', 'id'])"), value("PermissionError EPERM"), "seccomp"),
    Case("py-fork", PY, attempt("import os; out = os.fork()"), value("PermissionError EPERM"), "seccomp"),
    Case("py-os-system", PY, "import os; os.system('id > /tmp/@TAG@')", value(127 << 8), "seccomp"),
    Case("py-popen", PY, attempt("import os; out = os.popen('id').read()"), value("PermissionError EPERM"), "seccomp"),
    Case("py-ctypes-system", PY, "import ctypes; ctypes.CDLL(None).system(b'id > /tmp/@TAG@')", value(127 << 8), "seccomp"),
    Case("py-posix-spawn", PY, attempt("import os; out = os.posix_spawn('/bin/sh', ['sh', '-c', 'id'], {})"), value("PermissionError EPERM"), "seccomp"),
    Case("py-multiprocessing", PY, attempt("import multiprocessing; multiprocessing.Process(target=print).start()"), value("PermissionError EPERM"), "seccomp"),
    Case("py-execv", PY, "import os; os.execv('/bin/sh', ['sh', '-c', 'id'])", killed("execve"), "seccomp"),
    Case("py-ctypes-execve", PY, syscall("execve", "b'/bin/sh', 0, 0"), killed("execve"), "seccomp"),
    Case("py-execveat", PY, syscall("execveat", "-100, b'/bin/sh', 0, 0, 0"), killed("execveat"), "seccomp"),
    Case("py-vfork", PY, syscall("vfork"), value("-1 EPERM"), "seccomp"),
    Case("py-clone-process", PY, syscall("clone", "17, 0, 0, 0, 0"), value("-1 EPERM"), "seccomp"),
    Case("py-clone-thread-newns", PY, syscall("clone", "0x10000 | 0x100 | 0x800 | 0x20000, 0, 0, 0, 0"), value("-1 EPERM"), "seccomp"),
    Case("py-clone3", PY, syscall("clone3", "0, 0"), value("-1 ENOSYS"), "seccomp"),
    Case("py-fork-bomb", PY, FORK_BOMB, value("PermissionError EPERM"), "seccomp"),
    Case("py-thread-bomb", PY, THREAD_BOMB, value([True, "can't start new thread"]), "rlimit"),
    Case("py-timer-bomb", PY, TIMER_BOMB, value(63), "rlimit"),
    Case("py-thread-bomb-small-stacks", PY, THREAD_BOMB_SMALL, value([64, "can't start new thread"]), "rlimit"),
    Case("py-thread-bomb-uncaught", PY, THREAD_BOMB_UNCAUGHT, guest("RuntimeError", "can't start new thread"), "rlimit"),
    # ---- signalling or tracing the host ----
    Case("py-kill-init", PY, attempt("import os; os.kill(1, 9)"), value("PermissionError EPERM"), "seccomp"),
    Case("py-kill-everyone", PY, attempt("import os; os.kill(-1, 9)"), value("PermissionError EPERM"), "seccomp"),
    Case("py-kill-host", PY, attempt("import os; os.kill(@HOSTPID@, 9)"), value("PermissionError EPERM"), "seccomp"),
    Case("py-kill-parent", PY, attempt("import os; os.kill(os.getppid(), 15)"), value("PermissionError EPERM"), "seccomp"),
    Case("py-tgkill-host", PY, syscall("tgkill", "@HOSTPID@, @HOSTPID@, 9"), value("-1 EPERM"), "seccomp"),
    Case("py-pidfd-host", PY, attempt("import os; out = os.pidfd_open(@HOSTPID@)"), value("PermissionError EPERM"), "seccomp"),
    # the kill is the monitor's: a thread with every signal blocked dies
    # too, and nothing in the worker can catch or patch it (red team: a
    # SIGSYS handler in the worker could be rewritten to return)
    Case("py-kill-from-thread-signals-blocked", PY, KILL_FROM_THREAD, killed("ptrace"), "seccomp"),
    # an exit status that would name a kill-list call is not the guest's to
    # give: it arrives as 159, never as "killed by seccomp"
    # (forked: no monitor, and no status is read as a kill-list report)
    Case("py-fake-kill-status", PY, "import ctypes; ctypes.CDLL(None).syscall(231, 160)", exited(159), "monitor",
         exited(160)),
    Case("py-ptrace-host", PY, syscall("ptrace", "16, @HOSTPID@, 0, 0"), killed("ptrace"), "seccomp"),
    Case("py-process-vm-readv", PY, syscall("process_vm_readv", "@HOSTPID@, 0, 0, 0, 0, 0"), killed("process_vm_readv"), "seccomp"),
    # ---- TIOCSTI: typing into the host's terminal ----
    Case("py-tiocsti", PY, attempt("import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b'x')"), value("PermissionError EPERM"), "seccomp"),
    Case("py-tiocsti-high-bits", PY, syscall("ioctl", "0, (1 << 32) | 0x5412, b'x'"), value("-1 EPERM"), "seccomp"),
    # ---- kernel attack surface: the kill-list ----
    Case("py-io-uring", PY, syscall("io_uring_setup", "8, bytes(120)"), killed("io_uring_setup"), "seccomp"),
    Case("py-userfaultfd", PY, syscall("userfaultfd", "0"), killed("userfaultfd"), "seccomp"),
    Case("py-memfd-exec", PY, "import os; fd = os.memfd_create('x'); os.execv('/proc/self/fd/%d' % fd, ['x'])", killed("memfd_create"), "seccomp"),
    Case("py-memfd-raw", PY, syscall("memfd_create", "b'x', 0"), killed("memfd_create"), "seccomp"),
    Case("py-bpf", PY, syscall("bpf", "0, bytes(128), 128"), killed("bpf"), "seccomp"),
    Case("py-perf-event-open", PY, syscall("perf_event_open", "bytes(128), 0, -1, -1, 0"), killed("perf_event_open"), "seccomp"),
    Case("py-keyctl", PY, syscall("keyctl", "0, 0"), killed("keyctl"), "seccomp"),
    Case("py-x32-abi", PY, syscall("getpid_x32"), died("SIGSYS"), "seccomp"),
    # ---- namespaces, mounts, privileges ----
    Case("py-setns", PY, syscall("setns", "0, 0"), killed("setns"), "seccomp"),
    Case("py-unshare", PY, syscall("unshare", "0x10000000"), killed("unshare"), "seccomp"),
    Case("py-mount", PY, syscall("mount", "b'none', b'/tmp', b'tmpfs', 0, 0"), killed("mount"), "seccomp"),
    Case("py-chroot", PY, "import os; os.chroot('/')", killed("chroot"), "seccomp"),
    Case("py-seccomp-filter", PY, syscall("seccomp", "1, 0, 0"), value("-1 EPERM"), "seccomp"),
    Case("py-setuid", PY, attempt("import os; os.setuid(0)"), value("PermissionError EPERM"), "seccomp"),
    # ---- inherited file descriptors ----
    Case("py-fds", PY, SCAN_FDS, value([[0, "chr 1:3"], [1, "chr 1:3"], [2, "chr 1:3"], [3, "socket"]]), "hygiene"),
    Case("py-fd-limit", PY, OPEN_MANY, value([60, "Too many open files"]), "rlimit"),
    # ---- core dumps and raising rlimits ----
    Case("py-abort", PY, "import os; os.abort()", died("SIGSEGV"), "seccomp"),
    Case("py-segfault", PY, "import ctypes; ctypes.string_at(0)", died("SIGSEGV"), "hygiene"),
    Case("py-core-limit", PY, "import resource; resource.getrlimit(resource.RLIMIT_CORE)", value([0, 0]), "hygiene"),
    Case("py-dumpable", PY, syscall("prctl", "4, 1, 0, 0, 0"), value("-1 EPERM"), "seccomp"),
    Case("py-rlimit-core", PY, "import resource; resource.setrlimit(resource.RLIMIT_CORE, %s)" % UNLIMITED, NOT_ALLOWED, "seccomp"),
    Case("py-rlimit-as", PY, "import resource; resource.setrlimit(resource.RLIMIT_AS, %s)" % UNLIMITED, NOT_ALLOWED, "seccomp"),
    Case("py-rlimit-nofile", PY, "import resource; resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))", NOT_ALLOWED, "seccomp"),
    Case("py-rlimit-cpu", PY, "import resource; resource.setrlimit(resource.RLIMIT_CPU, %s)" % UNLIMITED, NOT_ALLOWED, "seccomp"),
    Case("py-rlimit-nproc", PY, "import resource; resource.setrlimit(resource.RLIMIT_NPROC, (4096, 4096))", NOT_ALLOWED, "seccomp"),
    Case("py-prlimit-raw", PY, syscall("prlimit64", "0, 9, b'\\xff' * 16, 0"), value("-1 EPERM"), "seccomp"),
    Case("py-prlimit-host", PY, attempt("import resource; out = resource.prlimit(@HOSTPID@, resource.RLIMIT_NOFILE)"), value("PermissionError EPERM"), "seccomp"),
    # ---- QuickJS: no std/os, no modules, no bytecode, nothing of the host's ----
    Case("js-std", JS, "std.loadFile('@VARDIR@/canary.txt')", guest("ReferenceError", NOT_DEFINED % "std"), "engine"),
    Case("js-os-exec", JS, "os.exec(['/bin/sh', '-c', 'id'])", guest("ReferenceError", NOT_DEFINED % "os"), "engine"),
    # fs and require (js_fs.c) exist only with scratch or a grant (README, "Files"); with
    # them, a host file is still out of reach (test_pkg_js_fs.py)
    Case("js-require", JS, "typeof require + ' ' + typeof fs", value("undefined undefined"), "engine"),
    Case("js-require-fs", JS, "require('fs').readFileSync('@VARDIR@/canary.txt', 'utf8')", guest("ReferenceError", NOT_DEFINED % "require" + NO_FILES), "engine"),
    Case("js-process-env", JS, "process.env", guest("ReferenceError", NOT_DEFINED % "process"), "engine"),
    Case("js-scriptargs", JS, "scriptArgs", guest("ReferenceError", NOT_DEFINED % "scriptArgs"), "engine"),
    Case("js-fetch", JS, "fetch('http://127.0.0.1:@TCPPORT@/')", guest("ReferenceError", NOT_DEFINED % "fetch" + NO_FETCH), "engine"),
    Case("js-websocket", JS, "new WebSocket('ws://127.0.0.1:@TCPPORT@/')", guest("ReferenceError", NOT_DEFINED % "WebSocket"), "engine"),
    Case("js-worker", JS, "new Worker('x.js')", guest("ReferenceError", NOT_DEFINED % "Worker"), "engine"),
    Case("js-settimeout", JS, "setTimeout(() => 0, 0)", guest("ReferenceError", NOT_DEFINED % "setTimeout"), "engine"),
    Case("js-import-file", JS, "await import('@VARDIR@/canary.txt')", NO_MODULES, "engine"),
    Case("js-import-os", JS, "await import('os')", NO_MODULES, "engine"),
    Case("js-import-qjs-std", JS, "await import('qjs:std')", NO_MODULES, "engine"),
    Case("js-import-rejects", JS, "import('/etc/passwd').then(() => 'loaded', e => e.name + ': ' + e.message)", value("TypeError: " + NO_MODULES_TEXT), "engine"),
    Case("js-static-import", JS, "import * as std from 'std'", syntax(STATIC_IMPORT), "engine"),
    Case("js-export", JS, "export default 1", syntax("unsupported keyword: export"), "engine"),
    Case("js-bytecode", JS, "[typeof bjson, typeof readObject, typeof evalScript, typeof loadScript, typeof WebAssembly].join()", value("undefined,undefined,undefined,undefined,undefined"), "engine"),
    Case("js-eval-confined", JS, "eval('typeof std + typeof os + typeof require')", value("undefinedundefinedundefined"), "engine"),
    Case("js-function-ctor", JS, "[].constructor.constructor('return typeof os + typeof process')()", value("undefinedundefined"), "engine"),
    # nothing shares memory with a guest: no SharedArrayBuffer, no Atomics (engine_js.c)
    Case("js-no-sharedarraybuffer", JS, "new SharedArrayBuffer(8)", guest("ReferenceError", NOT_DEFINED % "SharedArrayBuffer"), "engine"),
    Case("js-no-atomics", JS, "Atomics.wait(new Int32Array(8), 0, 0, 10)", guest("ReferenceError", NOT_DEFINED % "Atomics"), "engine"),
    Case("js-no-shared-anywhere", JS, "[typeof SharedArrayBuffer, typeof Atomics, 'SharedArrayBuffer' in globalThis, Object.getOwnPropertyNames(globalThis).filter(n => /shared|atomic/i.test(n)).length].join()", value("undefined,undefined,false,0"), "engine"),
    Case("js-stack-no-paths", JS, "new Error('x').stack", value("    at <eval> (<code>:1:10)\n"), "engine"),
    # (forked: the session has tools bound, so tools and the two tool names
    # are globals too)
    Case("js-globals", JS, "Object.getOwnPropertyNames(globalThis).sort().join(' ')",
         value(JS_GLOBALS), "engine",
         value(" ".join(sorted(JS_GLOBALS.split() + ["aecho", "echo", "tools"])))),
]
