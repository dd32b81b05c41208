"""The self-probes tested in reverse (DESIGN.md section 3, step 7).

A confined worker runs each self-probe before any guest code and refuses
to start if one gets through (src/confine/probes.c). A probe that cannot see
a breach would prove nothing, so here every probe runs unconfined
(`codecage-worker-X --ppid=<us> --probe-unconfined`: each in its own child,
no layer applied) and must report "breach", for both workers. Then a normal
confined start must report "self-probes" among the applied layers.

The write_outside_scratch probe creates and removes
/var/tmp/codecage-probe-<ppid>-<pid>; the test checks that nothing of ours
is left there. CI runs this as root, which the probes need for nothing:
every breach they look for is open to any user on an unconfined host.
"""
import os
import subprocess

import pytest

from conftest import BUILD, ev
from test_seccomp_bpf import EXE, allowed_rules

PROBES = ["read_host_file", "list_root", "write_outside_scratch", "exec", "fork", "connect_tcp",
          "connect_unix", "signal_parent", "parent_environ"]
LANGS = {"js": "javascript", "py": "python"}


def our_probe_files():
    prefix = "codecage-probe-%d-" % os.getpid()
    return sorted(n for n in os.listdir("/var/tmp") if n.startswith(prefix))


@pytest.mark.parametrize("engine", sorted(EXE))
def test_every_probe_sees_the_breach_unconfined(engine):
    assert our_probe_files() == []
    proc = subprocess.run([os.path.join(BUILD, EXE[engine]), "--ppid=%d" % os.getpid(),
                           "--probe-unconfined"], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    report = [line.split(" ") for line in proc.stdout.splitlines()]
    assert [r[0] for r in report] == PROBES, proc.stdout
    blind = [name for name, verdict in report if verdict != "breach"]
    assert not blind, "probes that cannot see a breach unconfined: %s\n%s" % (blind, proc.stdout)
    assert our_probe_files() == [], "write_outside_scratch left its file behind"


@pytest.mark.seccomp
@pytest.mark.landlock
@pytest.mark.userns
@pytest.mark.parametrize("engine", sorted(EXE))
def test_confined_start_ran_the_self_probes(engine):
    r = ev(LANGS[engine], "1")
    assert r.rc == 0 and r.kind == "ok" and r.value == 1, r
    sandbox = r.json["sandbox"]
    assert sandbox["mode"] == "require", sandbox
    applied = sandbox["applied"].split(",")
    assert applied[-1] == "self-probes", sandbox  # the last step, after seccomp
    assert "seccomp" in applied and "landlock" in applied and "namespaces" in applied, sandbox
    assert sandbox["missing"] == "", sandbox
    assert sandbox["seccomp_allowed"] == len(allowed_rules(engine)), sandbox
    assert our_probe_files() == []
