#!/usr/bin/python3
"""Side-by-side start-up and round-trip numbers, one run, as ratios.

Measures on this machine, in one run:
  - a new codecage runtime plus its first `1+1` (library, cc-bench), per
    language, against starting `python3 -c 1+1`, `python3 -I -S -c 1+1` and
    `node -e 1+1` as fresh processes (the cost an agent pays for a plain
    interpreter without any sandbox);
  - a warm `1+1` eval round trip on a live runtime;
  - a synchronous host tool call round trip (guest -> host -> guest);
  - what confinement costs: the same new session in sandbox mode off
    (resource limits only) next to the default, require (every layer).
Prints medians and ratios; paste the table into BENCHMARKS.md.

usage: bench/run.py [--cold N] [--warm N]
"""
import argparse
import os
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "build", "cc-bench")


def process_start_ms(cmd, n):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cold", type=int, default=50)
    ap.add_argument("--warm", type=int, default=5000)
    a = ap.parse_args()
    rows = []
    cc = {}
    off = {}
    for lang in ("javascript", "python"):
        out = subprocess.run([BENCH, lang, str(a.cold), str(a.warm)], check=True,
                             capture_output=True, text=True).stdout.split()
        cc[lang] = (float(out[0]), float(out[1]), float(out[2]))
        out = subprocess.run([BENCH, lang, str(a.cold), "1", "off"], check=True,
                             capture_output=True, text=True).stdout.split()
        off[lang] = float(out[0])
    refs = {
        "python3 -c": process_start_ms(["/usr/bin/python3", "-c", "1+1"], a.cold),
        "python3 -I -S -c": process_start_ms(["/usr/bin/python3", "-I", "-S", "-c", "1+1"], a.cold),
        "node -e": process_start_ms(["node", "-e", "1+1"], a.cold),
    }
    print("new session + first 1+1 (median of %d)" % a.cold)
    for lang, ref in (("javascript", "node -e"), ("python", "python3 -c")):
        print("  codecage %-10s %8.2f ms   %-18s %8.2f ms   ratio %.2fx" %
              (lang, cc[lang][0], ref, refs[ref], cc[lang][0] / refs[ref]))
    print("  %-19s %8.2f ms" % ("python3 -I -S -c", refs["python3 -I -S -c"]))
    print("what confinement costs: new session + first 1+1, sandbox require vs off")
    for lang in ("javascript", "python"):
        print("  codecage %-10s %8.2f ms   off %8.2f ms   +%.2f ms" %
              (lang, cc[lang][0], off[lang], cc[lang][0] - off[lang]))
    print("warm eval round trip 1+1 (median of %d)" % a.warm)
    for lang in ("javascript", "python"):
        print("  codecage %-10s %8.1f us" % (lang, cc[lang][1]))
    floor = float(subprocess.run([os.path.join(ROOT, "build", "cc-pingpong"), "100000"],
                                 check=True, capture_output=True, text=True).stdout)
    print("synchronous tool call round trip, guest -> host -> guest (median of 9 loops of 10,000)")
    for lang in ("javascript", "python"):
        print("  codecage %-10s %8.1f us   bare socketpair ping-pong %6.1f us   ratio %.2fx" %
              (lang, cc[lang][2], floor, cc[lang][2] / floor))


if __name__ == "__main__":
    main()
