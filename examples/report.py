# A report from a folder of CSVs: run by README's "Files" section with
#   build/codecage run --mount examples/sales:/data --scratch 8 --out DIR examples/report.py
# It reads /data (a read-only grant), writes a summary and a chart (an SVG
# built by hand) into scratch (/tmp), which --out copies to DIR.
import csv
import glob
import os

totals = {}
for path in sorted(glob.glob("/data/*.csv")):
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            totals[row["region"]] = totals.get(row["region"], 0) + int(row["amount"])

os.makedirs("/tmp/report", exist_ok=True)
with open("/tmp/report/summary.txt", "w") as f:
    for region, amount in sorted(totals.items()):
        f.write(f"{region}: {amount}\n")

top = max(totals.values())
bars = "".join(
    f'<rect x="{10 + i * 60}" y="{110 - 100 * v // top}" width="40" height="{100 * v // top}"/>'
    f'<text x="{10 + i * 60}" y="125">{k}</text>'
    for i, (k, v) in enumerate(sorted(totals.items())))
with open("/tmp/report/chart.svg", "w") as f:
    f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="200" height="130">{bars}</svg>\n')

print(f"regions: {len(totals)}")
