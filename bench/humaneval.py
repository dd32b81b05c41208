#!/usr/bin/python3
"""The first real workload: HumanEval-X through codecage, next to the references.

Runs every Python and JavaScript program of HumanEval-X (164 + 164 programs
written by others; a program is prompt + canonical_solution + test) through
`codecage run --json`, each in a fresh runtime, and the same programs under
plain `python3` and `node`. Prints pass/fail counts and total wall time per
runner, the time ratio, and every program whose outcome differs.

A program passes when it ends without error and, for JavaScript, prints no
"Assertion failed" (console.assert's failure text) to stderr.

usage: bench/humaneval.py [--data DIR] [--codecage PATH] [--sandbox MODE]
                          [--lang python|javascript] [--limit N] [--json FILE]
Exit status: 0 when codecage's outcome matches the reference for every
program, 1 otherwise.
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FILES = {"python": "humaneval_python.jsonl.gz", "javascript": "humaneval_js.jsonl.gz"}
EXT = {"python": ".py", "javascript": ".js"}
# Each reference run gets this long; codecage gets the same deadline.
TIMEOUT_S = 30


def load(data_dir, lang):
    """Yield (task_id, program text) for one language."""
    with gzip.open(os.path.join(data_dir, FILES[lang]), "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            yield d["task_id"], d["prompt"] + d["canonical_solution"] + d["test"]


def reference_cmd(lang, path):
    return ["/usr/bin/python3", path] if lang == "python" else ["node", path]


def passed_reference(proc, lang):
    if proc.returncode != 0:
        return False
    return lang != "javascript" or "Assertion failed" not in proc.stderr


def passed_codecage(proc, lang):
    """Returns (passed, error kind or None). Never trusts the exit code alone:
    the JSON object must be there and well-formed."""
    try:
        out = json.loads(proc.stdout)
    except ValueError:
        return False, "no-json(rc=%d)" % proc.returncode
    if not out["ok"]:
        return False, out["error"]["kind"]
    if lang == "javascript" and "Assertion failed" in out["stderr"]:
        return False, "assertion"
    return True, None


def run(cmd):
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S + 10,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        proc = subprocess.CompletedProcess(cmd, -9, e.stdout or "", e.stderr or "")
    return proc, time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data", "humaneval-x"))
    ap.add_argument("--codecage", default=os.path.join(ROOT, "build", "codecage"))
    ap.add_argument("--sandbox", default="require")
    ap.add_argument("--lang", choices=sorted(FILES), action="append")
    ap.add_argument("--limit", type=int, default=0, help="first N programs per language")
    ap.add_argument("--json", help="write per-program outcomes here")
    args = ap.parse_args()

    mismatches = []
    report = {}
    with tempfile.TemporaryDirectory(prefix="codecage-humaneval-") as tmp:
        for lang in args.lang or ["python", "javascript"]:
            counts = {"ref": [0, 0], "cc": [0, 0]}
            times = {"ref": 0.0, "cc": 0.0}
            rows = []
            for i, (task, text) in enumerate(load(args.data, lang)):
                if args.limit and i >= args.limit:
                    break
                path = os.path.join(tmp, "p%d%s" % (i, EXT[lang]))
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
                ref, t_ref = run(reference_cmd(lang, path))
                cc, t_cc = run([args.codecage, "run", "--json", "--sandbox", args.sandbox,
                                "--timeout", str(TIMEOUT_S), path])
                ok_ref = passed_reference(ref, lang)
                ok_cc, kind = passed_codecage(cc, lang)
                counts["ref"][0 if ok_ref else 1] += 1
                counts["cc"][0 if ok_cc else 1] += 1
                times["ref"] += t_ref
                times["cc"] += t_cc
                rows.append({"task": task, "reference": ok_ref, "codecage": ok_cc,
                             "codecage_error": kind})
                if ok_ref != ok_cc:
                    mismatches.append((task, ok_ref, ok_cc, kind, cc.stdout[-400:]))
            ref_name = "python3" if lang == "python" else "node"
            print("%-10s  %-8s %3d passed, %3d failed, %7.2f s" %
                  (lang, ref_name, counts["ref"][0], counts["ref"][1], times["ref"]))
            print("%-10s  %-8s %3d passed, %3d failed, %7.2f s  (%.2fx the reference's time)" %
                  (lang, "codecage", counts["cc"][0], counts["cc"][1], times["cc"],
                   times["cc"] / times["ref"] if times["ref"] else 0))
            failed = [r["task"] + ":" + (r["codecage_error"] or "") for r in rows
                      if not r["codecage"]]
            if failed:
                same = {r["task"] for r in rows if not r["codecage"]} == \
                    {r["task"] for r in rows if not r["reference"]}
                print("            failing under codecage: " + ", ".join(failed) +
                      (" (the same programs fail under %s)" % ref_name if same else ""))
            report[lang] = {"counts": counts, "seconds": times, "programs": rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    for task, ok_ref, ok_cc, kind, tail in mismatches:
        print("MISMATCH %s: reference %s, codecage %s (%s)\n  %s" %
              (task, "pass" if ok_ref else "fail", "pass" if ok_cc else "fail", kind, tail))
    print("%d programs differ from the reference" % len(mismatches))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
