"""Python for the data, JavaScript for the chart: the model's Python sums
the sales, the model's JavaScript draws them with Vega-Lite to sales.svg.

Both sandboxes call the host's one tool through one ToolBridge, so they
share its call budget; each also tries to read /etc/passwd and to call
fetch, and is refused. Run from the repository root after
`npm ci --prefix tests/libs` (the pinned vega and vega-lite):

    python3 examples/sales_chart.py [OUT_DIR] [NODE_MODULES]    (OUT_DIR is made when missing)
"""
import os
import sys

from codecage import WEB_POLYFILLS, IsolatedRuntime, ToolBridge

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
NODE_MODULES = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "..", "tests", "libs",
                                                                  "node_modules")


def fetch_sales():
    """The host's data: the one thing either sandbox may ask for."""
    return [{"region": "East", "month": "Jan", "amount": 1000},
            {"region": "West", "month": "Jan", "amount": 900},
            {"region": "East", "month": "Feb", "amount": 750},
            {"region": "North", "month": "Feb", "amount": 1200}]


# What the model wrote, in each language.
MODEL_PY = """
rows = tools.fetch_sales()
totals = {}
for r in rows:
    totals[r["region"]] = totals.get(r["region"], 0) + r["amount"]
try:
    open("/etc/passwd").read()
    refused = "read /etc/passwd: NOT refused"
except OSError as e:
    refused = "read /etc/passwd: refused (" + type(e).__name__ + ")"
try:
    import urllib.request
    urllib.request.urlopen("http://example.com", timeout=2)
    refused += "; fetch: NOT refused"
except Exception as e:
    refused += "; fetch: refused (" + type(e).__name__ + ")"
print(refused)
[{"region": k, "amount": v} for k, v in sorted(totals.items())]
"""

MODEL_JS = """
const refusals = [];
try { await fetch('http://example.com'); refusals.push('fetch: NOT refused'); }
catch (e) { refusals.push('fetch: refused (' + e.name + ')'); }
try { require('fs').readFileSync('/etc/passwd'); refusals.push('read /etc/passwd: NOT refused'); }
catch (e) { refusals.push('read /etc/passwd: refused (' + e.name + ')'); }
console.log(refusals.join('; '));
const rows = await tools.fetch_sales();  // the same budget as Python's call
const spec = vegaLite.compile({
  data: {values: summary}, mark: 'bar', width: 300, height: 200,
  title: rows.length + ' sales by region',
  encoding: {x: {field: 'region', type: 'nominal'},
             y: {field: 'amount', type: 'quantitative'}}}).spec;
await new vega.View(vega.parse(spec), {renderer: 'none'}).toSVG();
"""


def main():
    os.makedirs(OUT, exist_ok=True)  # before the sandboxes run: a bad OUT fails first
    bridge = ToolBridge({"fetch_sales": fetch_sales}, max_calls=2)
    with IsolatedRuntime(language="python") as py:
        bridge.attach(py)
        r = py.run(MODEL_PY)
        summary = r.value
        print("python:", r.stdout.strip())
    with IsolatedRuntime(bootstrap=WEB_POLYFILLS, libraries=["vega", "vega-lite"],
                         node_modules=NODE_MODULES) as js:
        bridge.attach(js)
        js.set_global("summary", summary)
        r = js.run(MODEL_JS)
        print("javascript:", r.stdout.strip())
    path = os.path.join(OUT, "sales.svg")
    with open(path, "w", encoding="utf-8") as f:
        f.write(r.value)
    print(f"wrote {path}; tool calls: {bridge.calls_made} of 2")


if __name__ == "__main__":
    main()
