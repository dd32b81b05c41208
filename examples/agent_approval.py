"""An approval flow: the model's code drafts three emails; each send waits
for a person; the host approves two and denies one; the code reports what
happened. Run it with the package importable:

    python3 examples/agent_approval.py
"""
from codecage import AgentSession

outbox = []


def send_email(to: str, subject: str) -> str:
    """Send an email; returns its message id. Needs approval."""
    outbox.append(to)
    return f"msg-{len(outbox)}"


# What the model wrote: three drafts sent concurrently, each outcome reported.
MODEL_CODE = """
const drafts = [["ann@example.com", "Q3 numbers"], ["bob@example.com", "Lunch?"],
                ["all@example.com", "Reorg"]];
const results = await Promise.allSettled(drafts.map(([to, s]) => tools.send_email(to, s)));
results.map((r, i) => drafts[i][0] + ": " +
  (r.status === "fulfilled" ? "sent " + r.value : r.reason.name + " (" + r.reason.message + ")"))
"""

with AgentSession(language="javascript", tools={"send_email": send_email},
                  approval_required={"send_email"}) as session:
    print(session.describe_tools("javascript"), end="")
    result = session.run(MODEL_CODE)
    while result.paused:
        call = result.pending[0]
        to = call.args[0]
        if to.startswith("all@"):  # the person says no to the mailing list
            print(f"deny    {call.tool}({to!r})")
            result = session.resume(call.id, approve=False, reason="no mail to all@")
        else:
            print(f"approve {call.tool}({to!r})")
            result = session.resume(call.id)
    for line in result.value:
        print(line)
print("outbox:", outbox)
