"""A fork server whose sessions have scratch applies no Landlock layer of
its own (any layer there would deny its sessions' renames between
directories, or their tmpfs mounts): each session builds the whole domain,
a spawned worker's, itself. This checks that the session's domain alone
(no seccomp filter, which would refuse these calls first) covers the
network and the scopes: a session cannot connect or bind TCP, nor reach
the template's or a sibling session's abstract unix socket. In reverse,
the same sessions without their domain get through (TCP connect then
meets the empty network namespace: ENETUNREACH). Signals have no route to
probe: a session is alone in its pid namespace (test_pkg_forkserver_isolation).

`codecage-worker-X --ppid=<us> --with-files --scope-report[-off]` is a
test-only mode (src/confine/confine.c, cc_confine_scope_report)."""
import os
import subprocess

import pytest

from conftest import BUILD
from test_seccomp_bpf import EXE

pytestmark = [pytest.mark.userns, pytest.mark.landlock]


def report(engine, flag):
    proc = subprocess.run([os.path.join(BUILD, EXE[engine]), "--ppid=%d" % os.getpid(),
                           "--with-files", flag], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    first, *rest = proc.stdout.splitlines()
    return first, dict(line.split(" ") for line in rest)


@pytest.mark.parametrize("engine", sorted(EXE))
def test_a_scratch_sessions_own_domain_covers_network_and_scopes(engine):
    first, got = report(engine, "--scope-report")
    assert "namespaces" in first and not first.endswith("landlock 0"), first
    assert got == {"connect_tcp": "EACCES", "bind_tcp": "EACCES",
                   "unix_sibling": "EPERM", "unix_template": "EPERM"}, got


@pytest.mark.parametrize("engine", sorted(EXE))
def test_a_scratch_sessions_network_and_scopes_reverse_without_its_domain(engine):
    first, got = report(engine, "--scope-report-off")
    assert first.endswith("landlock 0"), first
    assert got == {"connect_tcp": "ENETUNREACH", "bind_tcp": "ok",
                   "unix_sibling": "ok", "unix_template": "ok"}, got
