"""The agent session examples run as a user runs them and print what their
docstrings promise: the approval flow (two approved, one denied, the code
reports it) and the journal resumed by a second process."""
import os
import subprocess
import sys

import ccpkg
from conftest import ROOT


def run_example(name):
    env = dict(os.environ, PYTHONPATH=ccpkg.PKG_DIR)
    p = subprocess.run([sys.executable, os.path.join(ROOT, "examples", name)], env=env,
                       capture_output=True, text=True, timeout=120, cwd="/")
    assert p.returncode == 0, p.stderr
    return p.stdout.splitlines()


def test_approval_flow():
    out = run_example("agent_approval.py")
    assert "declare const tools: {" in out
    assert out[-7:] == [
        "approve send_email('ann@example.com')",
        "approve send_email('bob@example.com')",
        "deny    send_email('all@example.com')",
        "ann@example.com: sent msg-1",
        "bob@example.com: sent msg-2",
        "all@example.com: ToolDeniedError (no mail to all@)",
        "outbox: ['ann@example.com', 'bob@example.com']",
    ]


def test_resume_in_a_second_process():
    assert run_example("agent_resume.py") == [
        "first process: paused at [('pay', ['ACME', 120])]",
        "second process: approving pay ['ACME', 120]",
        "second process: invoice 42: paid 120 to ACME",
        "second process: paid [('ACME', 120)]",
        "first process: paid nothing itself: []",
    ]
