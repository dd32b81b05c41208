"""Density of one fork server through the C API (issue 23),
tests/integration/density_driver.c: the session cap (cc_options.max_sessions)
refused by name at once while the live sessions keep working, through a
fork server and a pool; churn that leaves no process, descriptor, thread,
memory or namespace behind in the host or the template; and a thousand
live sessions (slow). Counts only, no timings."""
import pytest

import conftest


# scenario -> the "ok" lines it prints (conftest.drive checks the count):
# cap: two bad values, four for the fork server, four for the pool; churn:
# the evaluations and ten counts; live: two rounds of three, ten counts.
CHECKS = {"cap": 10, "churn": 11, "live": 16}


def drive(*args, timeout=600):
    return conftest.drive("cc-densitydriver", *args, checks=CHECKS[args[0]], timeout=timeout)


def test_the_session_cap_is_refused_by_name(lang):
    out = drive("cap", lang, "8")
    assert "session 9 is refused naming max_sessions" in out
    assert "the pool reports the full fork server" in out


def test_churn_leaves_nothing_behind(lang):
    out = drive("churn", lang, "500")
    assert "500 sessions opened, evaluated and closed (500 evaluated)" in out


@pytest.mark.slow
def test_a_thousand_live_sessions(lang):
    out = drive("live", lang, "1000", timeout=1200)
    assert "1000 of 1000 sessions live at once" in out
