"""Shared fixtures for the integration tests (pytest, Debian's python3).

Tests are tagged by the kernel feature they need (markers in pytest.ini).
CI must not skip: a test whose feature is missing fails. Only a developer
may deselect a tag on a laptop (`-m "not userns"`)."""
import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("CODECAGE_BUILD", os.path.join(ROOT, "build"))
CLI = os.path.join(BUILD, "codecage")
DATA = os.environ.get("CODECAGE_DATA", os.path.join(ROOT, "..", "shared", "data", "humaneval-x"))


class Run:
    """One CLI invocation: exit code, raw streams, and the --json object."""

    def __init__(self, proc):
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.json = None
        if self.stdout.startswith("{"):
            self.json = json.loads(self.stdout)

    @property
    def kind(self):
        err = self.json["error"]
        return err["kind"] if err else "ok"

    @property
    def value(self):
        return self.json["value"]

    def __repr__(self):
        return "Run(rc=%r, stdout=%r, stderr=%r)" % (self.rc, self.stdout[:2000], self.stderr[:2000])



def need(module, why):
    """Import MODULE, a dependency scripts/install-deps installs; its
    absence fails the test (CI never skips) with WHY, never skips it."""
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise AssertionError("%s: %s" % (why, e)) from None

def cli(*args, input=None, timeout=60):
    """Run build/codecage with args; returns a Run."""
    proc = subprocess.run([CLI, *args], input=input, capture_output=True, timeout=timeout,
                          text=isinstance(input, str) or input is None)
    if not isinstance(proc.stdout, str):
        proc = subprocess.CompletedProcess(proc.args, proc.returncode,
                                           proc.stdout.decode("utf-8", "replace"),
                                           proc.stderr.decode("utf-8", "replace"))
    return Run(proc)


def ev(lang, code, *flags, timeout=60):
    """`codecage eval --json` in the default sandbox mode (require: every
    layer, so every test also runs fully confined); returns a Run."""
    return cli("eval", "--lang", lang, "--json", *flags, "--", code, timeout=timeout)


@pytest.fixture(params=["python", "javascript"])
def lang(request):
    return request.param


def live_children():
    """Our own child processes (a leaked worker would show here)."""
    path = "/proc/self/task/%d/children" % os.getpid()
    with open(path) as f:
        return f.read().split()


def ppid_of(pid):
    """The parent of process pid, from /proc."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("PPid:"):
                return int(line.split()[1])
    raise AssertionError("no PPid for %d" % pid)


def alive(pid):
    """Whether process pid exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


# The ASan/UBSan build (scripts/test sets it up): its C test drivers link
# the sanitized libcodecage but spawn the plain build's workers (driver.h's
# driver_options_init reads CC_DRIVER_WORKER_DIR). An ASan worker cannot
# run confined: under seccomp (auto, require) it is killed with SIGSYS
# before it is ready, and even with the sandbox off it exits at start, its
# shadow memory (terabytes of address space) far over the RLIMIT_AS the
# worker sets itself.
ASAN_BUILD = os.environ.get("CODECAGE_ASAN_BUILD", os.path.join(ROOT, "build-asan"))
SANITIZER_ENV = {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0",
                 "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}
SANITIZER_REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


def sanitized_env():
    """The environment a sanitized driver runs in."""
    return dict(os.environ, CC_DRIVER_WORKER_DIR=BUILD, **SANITIZER_ENV)


def assert_no_sanitizer_report(text):
    for needle in SANITIZER_REPORTS:
        assert needle not in text, text[-6000:]


def drive(exe, *args, checks, timeout=300, sanitized=False):
    """Run a C test driver (build/tests/cc-*driver, or build-asan's when
    sanitized); it must print exactly `checks` "ok" lines (a scenario that
    stopped early, or never ran, prints fewer) and no "FAIL", end with
    "0 failed", and a sanitized run must report nothing. Returns its stdout."""
    build = ASAN_BUILD if sanitized else BUILD
    proc = subprocess.run([os.path.join(build, "tests", exe), *args], capture_output=True,
                          text=True, timeout=timeout, env=sanitized_env() if sanitized else None)
    if sanitized:
        assert_no_sanitizer_report(proc.stdout + proc.stderr)
    assert "FAIL" not in proc.stdout, proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.rstrip().endswith("0 failed"), proc.stdout
    ran = sum(line.startswith("ok   ") for line in proc.stdout.splitlines())
    assert ran == checks, "%s %s: %d checks ran, %d expected\n%s" % (
        exe, " ".join(args), ran, checks, proc.stdout)
    return proc.stdout
