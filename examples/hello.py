# A small agent-style script: data in, a value out.
import statistics

rows = [{"region": "East", "amount": 1000}, {"region": "West", "amount": 900},
        {"region": "East", "amount": 750}]
totals = {}
for r in rows:
    totals[r["region"]] = totals.get(r["region"], 0) + r["amount"]
print("mean amount:", statistics.mean(r["amount"] for r in rows))
max(totals.items(), key=lambda kv: kv[1])
