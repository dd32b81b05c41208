"""The seccomp policy's source table (src/common/seccomp_policy.c) checked
against itself, the kernel and the workers: a reason of its own for every
allow-list entry; every name an x86_64 system call of the kernel's own
header, at the number each worker compiled; no call both allowed and
killed outside the fork server's template; the allow-list size each worker
reports in its ready frame (that one test confines a worker); the table and
each worker's compiled policy the same list. The filter's behaviour is
test_seccomp_bpf.py's."""
import functools
import os
import re

import pytest

from conftest import ROOT
from test_seccomp_bpf import ENGINES, allowed_rules, read_policy


def policy_source_rules():
    """The allow-list table of src/common/seccomp_policy.c, parsed:
    [(name, engines, how, reason)]. Every '{ "' entry must parse."""
    m = re.search(r"cc_sc_allow\[\]\s*=\s*\{(.*?)\n\};", policy_source(), re.S)
    assert m, "the allow-list table was not found"
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    entry = re.compile(r'\{\s*"(\w+)"\s*,\s*(JS|PY|BOTH|FORK_SCRATCH|FORK|FILES)\s*,\s*CC_SC_(ALLOW|ARGS)\s*,'
                       r'\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\}')
    rules = [(e.group(1), e.group(2), e.group(3).lower(),
              "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', e.group(4))))
             for e in entry.finditer(body)]
    assert len(rules) == body.count("{"), "an allow-list entry this parser does not understand"
    return rules


def policy_source():
    with open(os.path.join(ROOT, "src", "common", "seccomp_policy.c")) as f:
        return f.read()


def policy_source_kill():
    """The kill-list of src/common/seccomp_policy.c, parsed."""
    m = re.search(r"cc_sc_kill\[\]\s*=\s*\{(.*?)\n\};", policy_source(), re.S)
    assert m, "the kill-list was not found"
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    names = re.findall(r'"(\w+)"', body)
    assert len(names) == body.count('"') // 2 and names
    return names


# The kernel's own x86_64 numbers (linux-libc-dev, through libc6-dev): a
# source independent of libseccomp, which resolves the names for the worker.
UNISTD_64 = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"


@functools.lru_cache(maxsize=None)
def kernel_numbers():
    with open(UNISTD_64) as f:
        nrs = {m.group(1): int(m.group(2))
               for m in re.finditer(r"^#define __NR_(\w+)\s+(\d+)$", f.read(), re.M)}
    assert len(nrs) > 300 and nrs["read"] == 0 and nrs["clone3"] == 435
    return nrs


# Groups of the table (seccomp_policy.h): the fork server's template gets
# FORK and FORK_SCRATCH rules on top of its engine's, and each session's
# own filter refuses them again (test_session_takes_back_everything_the_template_added).
TEMPLATE_ONLY = ("FORK", "FORK_SCRATCH")


def test_every_allow_entry_has_a_reason():
    """Each entry says in words of its own what the call is for: more than
    the call's name, and no two entries share a reason (a copied reason is
    a rule nobody looked at); no call twice in a group."""
    rules = policy_source_rules()
    assert rules
    seen = {}
    for name, group, _, why in rules:
        assert len(why.strip()) >= 8 and why.strip() != name, "no reason for %s: %r" % (name, why)
        assert why not in seen, "%s and %s give the same reason %r" % (seen[why], name, why)
        seen[why] = name
    groups = [(name, group) for name, group, _, _ in rules]
    assert len(set(groups)) == len(groups), "an entry listed twice in its group"


def test_every_named_call_is_an_x86_64_system_call():
    """Every name in both tables is a system call of the kernel's x86_64
    table (a misspelt name would fail to resolve, or resolve to another
    architecture's call), and the number each worker compiled agrees with
    the kernel's header."""
    nrs = kernel_numbers()
    names = [r[0] for r in policy_source_rules()] + policy_source_kill()
    unknown = sorted({n for n in names if n not in nrs})
    assert not unknown, "not x86_64 system calls: %r" % unknown
    for engine in ENGINES:
        for r in read_policy(engine):
            assert r.name in nrs and r.nr == nrs[r.name], (engine, r)


def test_no_call_is_both_allowed_and_killed():
    """Outside the fork server's template (whose rules its sessions take
    back), no call is both on an allow-list and on the kill-list, in the
    source table and in each worker's compiled policy."""
    kill = set(policy_source_kill())
    both = sorted({name for name, group, _, _ in policy_source_rules()
                   if name in kill and group not in TEMPLATE_ONLY})
    assert not both, "allowed and killed: %r" % both
    for engine in ENGINES:
        policy = read_policy(engine)
        allowed = {r.name for r in policy if r.how in ("allow", "args")}
        killed = {r.name for r in policy if r.how == "kill"}
        assert killed and not allowed & killed, (engine, sorted(allowed & killed))
        assert killed <= kill and len({r.name for r in policy}) == len(policy), engine


@pytest.mark.userns
@pytest.mark.landlock
@pytest.mark.seccomp
@pytest.mark.parametrize("engine,flags,groups", [
    ("py", (), ("PY", "BOTH", "FILES")), ("js", (), ("JS", "BOTH")),
    ("js", ("--scratch", "4"), ("JS", "BOTH", "FILES"))])
def test_ready_frame_reports_the_allow_list(engine, flags, groups):
    """The allow-list size a worker reports in its ready frame (the
    sandbox report's seccomp_allowed) is the number of table entries its
    engine gets: the JavaScript worker's file calls only with scratch."""
    from conftest import ev
    lang = {"py": "python", "js": "javascript"}[engine]
    r = ev(lang, "1", *flags)
    assert r.rc == 0, r
    want = sum(group in groups for _, group, _, _ in policy_source_rules())
    assert r.json["sandbox"]["seccomp_allowed"] == want, (r.json["sandbox"], want)
    if not flags:
        assert want == len(allowed_rules(engine))


@pytest.mark.parametrize("engine", ENGINES)
def test_source_table_matches_the_worker(engine):
    mask = {"js": ("JS", "BOTH"), "py": ("PY", "BOTH", "FILES")}[engine]
    src = [(name, how) for name, engines, how, _ in policy_source_rules() if engines in mask]
    assert src == [(r.name, r.how) for r in allowed_rules(engine)]
