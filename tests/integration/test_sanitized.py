"""The C test drivers again, built with ASan and UBSan (build-asan, set up
by scripts/test): the supervisor library they link is the sanitized one, so
every scenario of libdriver.c, tools_driver.c, async_tools_driver.c,
net_driver.c and net_options_driver.c, and every lying worker of
test_library.py, also runs with memory errors, leaks (LeakSanitizer, at
each driver's exit) and undefined behaviour reported; a report fails the
test. The workers are the plain build's (conftest.ASAN_BUILD says why), so
what is checked here is the host side. The "many" scenarios run with small
counts: their resident-set checks mean nothing under ASan's quarantine
(driver.h's DRIVER_ASAN), LeakSanitizer checks instead.
"""
import os
import re
import subprocess

import pytest

import conftest
import netsrv
import test_async_tools
import test_library
import test_net_c
import test_tools
from conftest import ASAN_BUILD

LANGS = ["javascript", "python"]

# driver -> (its test module, [(scenario args, per language?)]); the checks
# each makes are the module's CHECKS, less the resident-set check a "many"
# skips under ASan
SCENARIOS = {
    "cc-libdriver": (test_library, [(("roundtrip",), True), (("state",), True),
                                    (("afterstop",), True), (("dead",), True),
                                    (("thread",), True), (("stream",), True),
                                    (("badopts",), False), (("many", "{lang}", "10"), True),
                                    (("subreaper", "{lang}", "2"), True)]),
    "cc-toolsdriver": (test_tools, [(("basics",), True), (("budget",), False),
                                    (("reenter",), True), (("output",), True),
                                    (("many", "{lang}", "300"), True)]),
    "cc-asyncdriver": (test_async_tools, [(("fanout",), True), (("late",), True),
                                          (("budget",), False), (("interrupt",), True),
                                          (("cap",), True), (("approval",), True),
                                          (("keywords",), False), (("unhold",), True), (("cancelrace",), False)]),
}


def cases():
    for exe, (module, scenarios) in sorted(SCENARIOS.items()):
        for args, per_lang in scenarios:
            for lang in (LANGS if per_lang else [None]):
                if "{lang}" in args:
                    argv = tuple(a.format(lang=lang) for a in args)
                else:
                    argv = args + ((lang,) if lang else ())
                n = module.checks(args[0], lang) - (args[0] == "many")
                yield pytest.param(exe, argv, n, id="-".join((exe[3:],) + argv))


@pytest.mark.parametrize("exe,argv,checks", cases())
def test_driver_under_asan(exe, argv, checks):
    conftest.drive(exe, *argv, checks=checks, sanitized=True)


def test_network_drivers_under_asan():
    s = netsrv.Server("127.0.0.1")
    try:
        out = conftest.drive("cc-netdriver", str(s.port), checks=test_net_c.NET_CHECKS,
                             timeout=180, sanitized=True)
        assert "javascript fetch with the hook's header" in out
        out = conftest.drive("cc-netoptdriver", str(s.port), checks=test_net_c.NETOPT_CHECKS,
                             timeout=300, sanitized=True)
        assert "a fork server's session reaches the server" in out
    finally:
        s.close()


@pytest.mark.parametrize("mode", sorted(test_library.FAKES) + sorted(test_library.AMPLIFIERS))
def test_lying_worker_under_asan(tmp_path, mode):
    """test_library's lying workers against the sanitized supervisor: the
    same outcome, and no report (the amplifiers' memory bounds are
    test_library's: ASan's own bookkeeping would blur them)."""
    d = test_library.fake_worker_dir(tmp_path, mode)
    size = "4000000" if mode == "no-read" else "1"
    if mode in test_library.AMPLIFIERS:
        want, needle = test_library.AMPLIFIERS[mode], "children=0"
    else:
        want, needle = test_library.FAKES[mode]
    # the sanitized host is slower: a deadline only where the outcome is one
    timeout_s = "1" if "timeout" in want else "20"
    proc = subprocess.run([os.path.join(ASAN_BUILD, "tests", "cc-libdriver"), "fake", str(d),
                           timeout_s, size], capture_output=True, text=True, timeout=180,
                          env=conftest.sanitized_env())
    conftest.assert_no_sanitizer_report(proc.stdout + proc.stderr)
    assert re.search(want, proc.stdout), proc.stdout[-2000:] + proc.stderr[-4000:]
    assert needle in proc.stdout, proc.stdout



@pytest.mark.userns
@pytest.mark.landlock
def test_files_from_c_under_asan():
    test_library.files_from_c(sanitized=True)


def test_grant_rules_from_c_under_asan():
    test_library.grants_from_c(sanitized=True)
