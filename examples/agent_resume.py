"""A session dumped after a pause and resumed by a second process: the
first process runs the model's code until it asks to pay, writes the
signed journal to a file and ends; a second process (started here, as a
person approving later would) loads it, approves the payment and gets the
eval's result. The key travels in the environment, never in the journal.

    python3 examples/agent_resume.py
"""
import os
import secrets
import subprocess
import sys
import tempfile

from codecage import AgentSession

paid = []


def get_invoice(number: int) -> dict:
    """An invoice by number."""
    return {"number": number, "amount": 120, "to": "ACME"}


def pay(to: str, amount: int) -> str:
    """Pay an amount; needs approval."""
    paid.append((to, amount))
    return "paid"


TOOLS = {"get_invoice": get_invoice, "pay": pay}
MODEL_CODE = """
inv = get_invoice(42)
status = pay(inv["to"], inv["amount"])
f"invoice {inv['number']}: {status} {inv['amount']} to {inv['to']}"
"""

if len(sys.argv) == 1:  # the first process
    key = secrets.token_bytes(32)
    with AgentSession(language="python", tools=TOOLS, approval_required={"pay"},
                      key=key) as session:
        result = session.run(MODEL_CODE)
        print("first process: paused at", [(c.tool, c.args) for c in result.pending],
              flush=True)
        journal = session.dump()
    with tempfile.NamedTemporaryFile(suffix=".journal", delete=False) as f:
        f.write(journal)
    try:
        subprocess.run([sys.executable, __file__, f.name], check=True,
                       env=dict(os.environ, AGENT_JOURNAL_KEY=key.hex()))
    finally:
        os.unlink(f.name)
    print("first process: paid nothing itself:", paid)
else:  # the second process
    with open(sys.argv[1], "rb") as f:
        journal = f.read()
    key = bytes.fromhex(os.environ["AGENT_JOURNAL_KEY"])
    with AgentSession.load(journal, key=key, tools=TOOLS) as session:
        (call,) = session.pending
        print("second process: approving", call.tool, call.args)
        print("second process:", session.resume(call.id).value)
    print("second process: paid", paid)
