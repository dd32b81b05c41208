// A small agent-style script: data in, a value out.
const rows = [
  { region: "East", amount: 1000 },
  { region: "West", amount: 900 },
  { region: "East", amount: 750 },
];
const totals = {};
for (const r of rows) totals[r.region] = (totals[r.region] ?? 0) + r.amount;
console.log("regions:", Object.keys(totals).length);
await Promise.resolve(); // top-level await works
totals
