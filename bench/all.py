#!/usr/bin/python3
"""codecage against the alternatives: one command, one run, medians and ratios.

usage: /usr/bin/python3 bench/all.py [--quick]
                                     [--only floor,startup,compute,humaneval,streaming,
                                             files,libraries,net,density,goals]
                                     [--cold N] [--warm N] [--stream-base BUILD]
                                     [--markdown FILE]

Builds what it needs (`ninja -C build`, `ninja -C build bench/qjs`, and
`npm ci --prefix bench` for Pyodide when bench/node_modules is missing),
measures everything below in one run, and prints markdown tables ready to
paste into BENCHMARKS.md. A ratio is always codecage / reference: below 1
means codecage is faster. A row whose runner is missing or fails reads n/a.

Start-up ("new session + first 1+1"): --cold runs of each runner, in 3
passes that take turns (codecage, then every reference, three times); a
number is the median of the passes' medians:
  - codecage, from C through the library (build/cc-bench LANG COLD WARM MODE):
    spawned (cc_runtime_new: spawn, confine, start the engine; mode require,
    and off for limits only), forked (a new session forked from a template,
    mode `fork`; Python also with numpy preloaded, `fork-numpy`) and pooled
    (checkout of a ready session, mode `pool`). cc-bench prints
    "cold_ms warm_us tool_us". A mode that cc-bench's usage line does not
    list, or that exits non-zero, reads n/a (cc-bench takes an unknown mode
    for `require`, so its usage line is the contract).
  - references, each a fresh process doing 1+1, timed from here around
    subprocess.run: `python3 -c`, `python3 -I -S -c`, `node -e`, QuickJS's
    own `qjs -e` (bench/meson.build: same source and libquickjs.a as the
    worker), Pyodide in Node (npm `pyodide`, bench/package.json; loadPyodide
    from node_modules, no network), and python3 under bubblewrap (BWRAP).
Round trips, from the spawned cc-bench runs: a warm `1+1` eval on a live
runtime (--warm evals over the passes), and a synchronous host tool call from a guest loop
of 10,000 calls (median of 9 loops), next to build/cc-pingpong (two bare
processes bouncing 8 bytes over a socketpair).
The default path (issue 19): bench/default_path.py, from Python: the second
and later `IsolatedRuntime()` + `1+1` of one process (the close not
counted), forked from the process-wide fork server, beside
`fork_server=False` (each spawned), each way in processes of its own, the
two taking turns in 3 passes of --cold each, a second apart, the first of
each process dropped.
Memory: private memory of an idle forked Python session with numpy
(`cc-bench python 1 1 fork-mem` prints KiB), when cc-bench has that mode.
Compute: bench/workloads/compute.py and compute.js time themselves inside
the engine (recursion, object churn, JSON round trip; a warm-up round, then
5 rounds each) in codecage (`codecage run --json`, sandbox require),
/usr/bin/python3, bare qjs, `node --jitless` and node; the median over all
rounds of 5 processes (1 with --quick) per runner, the runners taking
turns. /usr/bin/python3 is Debian's python3.11 with libpython linked
statically (PGO and LTO); the worker links the same version's
libpython3.11.a statically too (PGO; the archive keeps no LTO code, see
BENCHMARKS.md "CPython in the worker").
HumanEval-X: bench/humaneval.py (every program as a fresh `codecage run`
process against python3/node); --quick runs its first 20 per language.
Streaming: bench/streaming.py (its docstring): first streamed line latency
through the CLI and the MCP server, and a 100,000-line flood, against
--stream-base's build (the commit before streaming) when given; 20 runs
per row (--quick 5).
Charts: bench/charts.py (a matplotlib chart from plt.plot to PNG bytes on
the host, through the result's displays, against python3 doing the same;
its docstring says how), 30 charts (5 with --quick).
Files (issue 14): a forked session + first 1+1 with a 16 MiB scratch and
one read-only grant (`cc-bench LANG N 0 fork-files`) against a plain
forked one (`fork`), both languages, in PASSES passes taking turns; then
bench/files.py: a whole 100 MiB file read from a read-only grant in a
guest (Python open().read(), JavaScript fs.readFileSync) against
/usr/bin/python3 and node reading it directly (15 rounds of a warm read
each, the runners taking turns, 3 with --quick; each runner's own clock).
Libraries (issue 15): JavaScript sessions with vega + vega-lite (and the
web polyfills) loaded, from tests/libs/node_modules (`npm ci --prefix
tests/libs` when missing): cc-bench's fork and pool modes with
CC_BENCH_LIBRARIES (the template loads the bundles once) against a spawned
runtime that evaluates them per session (cc-bench require with the same
libraries) and against node loading the same files as classic scripts in
a fresh process (bench/workloads/load_bundles.js); the same fork and pool
rows without libraries for scale. PASSES passes taking turns.
Density (issue 23): bench/density.py's tables as it prints them (its
docstring; --quick passes --quick: 100 sessions instead of 1,000).
Network (issue 17): bench/net.py's tables as it prints them (--requests
500, --quick 100; --fanout 100).
Goals (issue 19): one table of issue 19's goals against the figures the
floor, startup and compute sections took in this run, with the machine's
floor beside them and the reference sandboxes' published figures (quoted).
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.join(ROOT, "build")
CC_BENCH = os.path.join(BUILD, "cc-bench")
CODECAGE = os.path.join(BUILD, "codecage")
QJS = os.path.join(BUILD, "bench", "qjs")
PYODIDE = os.path.join(HERE, "node_modules", "pyodide")
PY = "/usr/bin/python3"
# CPython under bubblewrap: every namespace unshared (user, pid, net, ipc,
# uts, cgroup, mount), /usr read-only with the merged-/usr symlinks, fresh
# /proc, a minimal /dev and an empty /tmp; nothing else of the host.
BWRAP = ["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr",
         "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
         "--symlink", "usr/bin", "/bin", "--proc", "/proc", "--dev", "/dev",
         "--tmpfs", "/tmp"]
# Start-up: codecage and the references take turns in this many passes.
PASSES = 3
PYODIDE_JS = ("require(%s).loadPyodide().then((p) => { if (p.runPython('1+1') !== 2) "
              "process.exit(1); })")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def process_ms(cmd, n, cwd=None):
    """Median wall time (ms) of n fresh runs of cmd, or None if it fails."""
    if shutil.which(cmd[0]) is None:
        return None
    times = []
    for _ in range(n):
        t = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
        times.append((time.perf_counter() - t) * 1e3)
        if p.returncode != 0:
            log("  %s: exit status %d" % (" ".join(cmd[:3]), p.returncode))
            return None
    return statistics.median(times)


def cc_bench_modes():
    """The modes cc-bench's usage line lists (it runs an unknown one as require)."""
    p = subprocess.run([CC_BENCH], capture_output=True, text=True)
    usage = p.stderr.split("[", 1)[-1].split("]", 1)[0]
    return set(usage.split("|"))


def cc_bench(lang, cold, warm, mode, modes, env=None):
    """Numbers cc-bench prints for one mode, or None (n/a). env: its
    environment (CC_BENCH_LIBRARIES), None = this one. It runs in the
    checkout's root, which fork-files grants read-only at /data."""
    if mode not in modes:
        log("  cc-bench %s %s: mode not implemented here (n/a)" % (lang, mode))
        return None
    p = subprocess.run([CC_BENCH, lang, str(cold), str(warm), mode], capture_output=True,
                       text=True, env=env, cwd=ROOT)
    if p.returncode != 0:
        log("  cc-bench %s %s: exit status %d (n/a): %s" %
            (lang, mode, p.returncode, p.stderr.strip()[-200:]))
        return None
    return [float(x) for x in p.stdout.split()]


def compute_once(cmd, via_codecage, rounds):
    """Run one compute process; add its rounds to rounds. False if it fails."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    out = p.stdout
    if via_codecage:
        try:
            out = json.loads(out)["stdout"]
        except (ValueError, KeyError):
            out = ""
    if p.returncode != 0 or not out.strip():
        log("  %s: exit status %d: %s" % (" ".join(cmd[:4]), p.returncode,
                                          (p.stderr or p.stdout).strip()[-300:]))
        return False
    for name, times in json.loads(out.strip().splitlines()[-1]).items():
        rounds.setdefault(name, []).extend(times)
    return True


def compute(runners, procs):
    """{runner: {benchmark: median ms} or None}. The runners take turns,
    process by process, so a change in the machine's load hits them alike."""
    rounds = {key: {} for key in runners}
    ok = {key: shutil.which(cmd[0]) is not None for key, (cmd, _) in runners.items()}
    for _ in range(procs):
        for key, (cmd, via_codecage) in runners.items():
            if ok[key]:
                ok[key] = compute_once(cmd, via_codecage, rounds[key])
    return {key: {b: statistics.median(t) for b, t in rounds[key].items()} if ok[key] else None
            for key in runners}


def ms(v, unit="ms", digits=2):
    return "n/a" if v is None else ("%.*f %s" % (digits, v, unit))


def ratio(a, b):
    """a / b as "1.23x" (two significant digits below 0.1: "0.0017x")."""
    if a is None or b is None or b == 0:
        return "n/a"
    return ("%.2fx" if a / b >= 0.1 else "%.2gx") % (a / b)


def table(header, rows):
    cols = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, cols)) + " |"
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in cols) + "|"] +
                     [line(r) for r in rows])


def machine():
    model = "?"
    for ln in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
        if ln.startswith("Model name:"):
            model = ln.split(":", 1)[1].strip()
    with open("/etc/debian_version") as f:
        debian = f.read().strip()
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    return ("Machine: %s, %d cores, %.0f GiB, Debian %s, kernel %s, %s. Date %s, commit %s, "
            "load average %.2f at the start." %
            (model, os.cpu_count(), mem, debian, platform.release(), platform.machine(),
             datetime.date.today().isoformat(), commit, os.getloadavg()[0]))


def prepare(a):
    subprocess.run(["ninja", "-C", BUILD, "all", "bench/qjs"], check=True,
                   stdout=subprocess.DEVNULL)
    if "startup" in a.only and not os.path.isdir(PYODIDE) and shutil.which("npm"):
        log("installing Pyodide: npm ci --prefix bench")
        subprocess.run(["npm", "ci", "--prefix", HERE, "--no-audit", "--no-fund"],
                       stdout=subprocess.DEVNULL)


def pass_median(values):
    """Median of the passes' medians; None (n/a) if any pass failed."""
    return None if not values or None in values else statistics.median(values)


def startup(a, out):
    """Codecage and the references take turns: PASSES passes, each running
    every cc-bench mode and every reference for its share of --cold, so a
    change in the machine's load hits them alike; a number is the median of
    the passes' medians."""
    modes = cc_bench_modes()
    n = max(1, -(-a.cold // PASSES))
    n_pyo = 1 if a.quick else 2
    pyo_js = PYODIDE_JS % json.dumps(PYODIDE)
    have_pyo = os.path.isdir(PYODIDE)
    ref_cmds = {
        "js": [("`node -e 1+1`", ["node", "-e", "1+1"], n),
               ("`qjs -e 1+1` (bare QuickJS)", [QJS, "-e", "1+1"], n)],
        "py": [("`python3 -c 1+1`", [PY, "-c", "1+1"], n),
               ("`python3 -I -S -c 1+1`", [PY, "-I", "-S", "-c", "1+1"], n),
               ("`python3 -c 1+1` under bubblewrap", BWRAP + [PY, "-c", "1+1"], n),
               ("Pyodide in Node (median of %d)" % (n_pyo * PASSES),
                ["node", "-e", pyo_js] if have_pyo else ["/nonexistent"], n_pyo)],
    }
    runs = {}
    for p in range(PASSES):
        for lang in ("javascript", "python"):
            for mode in ("require", "off", "fork", "pool") + (
                    ("fork-numpy",) if lang == "python" else ()):
                log("pass %d: cc-bench %s %s" % (p + 1, lang, mode))
                warm = max(1, a.warm // PASSES) if mode == "require" else 1
                runs.setdefault((lang, mode), []).append(cc_bench(lang, n, warm, mode, modes))
        log("pass %d: references, fresh processes" % (p + 1))
        for key, refs in ref_cmds.items():
            for name, cmd, k in refs:
                runs.setdefault(name, []).append(process_ms(cmd, k))
    cc = {}
    for key, vals in runs.items():
        if isinstance(key, tuple):
            cc[key] = None if None in vals else [pass_median([v[i] for v in vals])
                                                 for i in range(3)]
    refs = {key: [(name, pass_median(runs[name])) for name, _, _ in lst]
            for key, lst in ref_cmds.items()}
    mem = cc_bench("python", 1, 1, "fork-mem", modes)
    first = lambda lang, mode: cc[lang, mode] and cc[lang, mode][0]
    SEEN["spawned python"] = first("python", "require")
    SEEN["python3 -I -S"] = dict(refs["py"]).get("`python3 -I -S -c 1+1`")
    SEEN["fork-numpy"] = first("python", "fork-numpy")
    for lang, key, name, extra in (("javascript", "js", "JavaScript", ()),
                                   ("python", "py", "Python",
                                    (("forked, numpy preloaded", "fork-numpy", "≤ 2.5 ms"),))):
        own = [("spawned, sandbox require", "require", "≤ 12 ms" if lang == "python" else ""),
               ("spawned, sandbox off (limits only)", "off", ""),
               ("forked", "fork", "≤ 2 ms" if lang == "javascript" else ""),
               *extra, ("pooled", "pool", "≤ 0.3 ms")]
        rows = [["codecage, " + label, ms(first(lang, mode)), "", "", "", target]
                for label, mode, target in own]
        rows += [[ref, ms(v), ratio(first(lang, "require"), v), ratio(first(lang, "fork"), v),
                  ratio(first(lang, "pool"), v), ""] for ref, v in refs[key]]
        out.append("New session + first `1+1`, %s (median of %d passes' medians of %d; "
                   "ratio = codecage / that)\n" % (name, PASSES, n))
        out.append(table(["runner", "median", "spawned ÷", "forked ÷", "pooled ÷", "target"],
                         rows) + "\n")
    floor = float(subprocess.run([os.path.join(BUILD, "cc-pingpong"), "100000"], check=True,
                                 capture_output=True, text=True).stdout)
    rows = []
    for lang, name in (("javascript", "JavaScript"), ("python", "Python")):
        r = cc["javascript" if lang == "javascript" else "python", "require"]
        SEEN["warm " + lang] = r and r[1]
        rows.append(["warm eval round trip `1+1`, " + name, ms(r and r[1], "µs", 1), "", "",
                     "≤ 10 µs" if lang == "javascript" else "≤ 15 µs"])
    for lang, name in (("javascript", "JavaScript"), ("python", "Python")):
        r = cc[lang, "require"]
        SEEN["tool " + lang] = r and r[2]
        rows.append(["tool call round trip, %s guest" % name, ms(r and r[2], "µs", 1),
                     "socketpair ping-pong: %.1f µs" % floor, ratio(r and r[2], floor),
                     "≤ 8 µs"])
    SEEN["pingpong"] = floor
    rows.append(["idle forked Python session with numpy, private memory",
                 "n/a" if mem is None else "%.1f MiB" % (mem[0] / 1024), "", "", "≤ 8 MiB"])
    out.append("Round trips (spawned session, sandbox require; warm: median of %d passes' "
               "medians of %d) and memory\n" % (PASSES, max(1, a.warm // PASSES)))
    out.append(table(["what", "codecage", "reference", "ratio", "target"], rows) + "\n")
    default_path_section(a, out)


#: What the sections above saw, for goals_section (key -> ms, µs or a ratio).
SEEN = {}

#: Issue 19's goals: (what, SEEN key, unit, goal). Units: ms, µs, x (a ratio).
GOALS = [
    ("Python compute against /usr/bin/python3, recursion", "compute recursion", "x", 1.03),
    ("Python compute against /usr/bin/python3, churn", "compute churn", "x", 1.03),
    ("Python compute against /usr/bin/python3, json", "compute json", "x", 1.03),
    ("spawned Python session + first eval", "spawned python", "ms", 12),
    ("`IsolatedRuntime()` + first eval, second and later, Python", "default python", "ms", 2),
    ("`IsolatedRuntime()` + first eval, second and later, JavaScript", "default javascript",
     "ms", 0.6),
    ("forked Python session with numpy preloaded", "fork-numpy", "ms", 2.5),
    ("warm eval round trip `1+1`, Python", "warm python", "µs", 15),
    ("warm eval round trip `1+1`, JavaScript", "warm javascript", "µs", 10),
    ("tool call round trip, Python guest", "tool python", "µs", 8),
    ("tool call round trip, JavaScript guest", "tool javascript", "µs", 8),
]

#: The reference sandboxes' own published figures, quoted for scale (not
#: measured here; each on its authors' machine).
PUBLISHED = [
    ("pydeno", "about 50 ms cold start, 0.04 ms pool checkout, 30 µs warm eval"),
    ("Monty", "4.5 ms cold start, 0.08 ms warm checkout"),
    ("`docker run`", "about 195 ms"),
]


def goals_section(a, out):
    """Issue 19's goals against this run's figures (the sections that
    measure them must have run: floor,startup,compute), the machine's
    floor beside them, and the references' published figures."""
    rows = []
    for what, key, unit, goal in GOALS:
        v = SEEN.get(key)
        shown = "n/a" if v is None else ("%.2fx" % v if unit == "x" else
                                          "%.*f %s" % (1 if unit == "µs" else 2, v, unit))
        met = "" if v is None else ("yes" if v <= goal else "no")
        rows.append([what, shown, "≤ %g%s" % (goal, unit if unit == "x" else " " + unit), met])
    note = []
    if SEEN.get("python3 -I -S") is not None:
        note.append("`python3 -I -S -c 1+1` in this run: %.2f ms" % SEEN["python3 -I -S"])
    if SEEN.get("pingpong") is not None:
        note.append("a socketpair ping-pong round trip: %.1f µs" % SEEN["pingpong"])
    out.append("Issue 19's goals against this run (the floor: %s; the machine's floor "
               "table above)\n" % ("; ".join(note) or "n/a"))
    out.append(table(["what", "this run", "goal", "met"], rows) + "\n")
    out.append("The reference sandboxes' published figures, for scale (theirs, not "
               "measured here)\n")
    out.append(table(["sandbox", "published"], [list(p) for p in PUBLISHED]) + "\n")


def default_path_section(a, out):
    """Issue 19: the Python package's default path, bench/default_path.py:
    the second and later `IsolatedRuntime()` + `1+1` of a process
    (forked from the process-wide fork server) beside `fork_server=False`."""
    sys.path.insert(0, HERE)
    import default_path
    log("default path: %d IsolatedRuntime() per language and way" % a.cold)
    try:
        r = default_path.measure(a.cold)
    except (subprocess.CalledProcessError, OSError, ValueError) as e:
        log("default path failed: %s" % e)
        r = {}
    rows = []
    for lang, name, target in (("javascript", "JavaScript", "≤ 0.6 ms"),
                               ("python", "Python", "≤ 2 ms")):
        v = r.get(lang, {})
        SEEN["default " + lang] = v.get("default")
        rows.append([name, ms(v.get("default")), ms(v.get("spawned")),
                     ratio(v.get("default"), v.get("spawned")), target])
    out.append("The default path: `IsolatedRuntime()` + first `1+1`, the second and "
               "later in one process (bench/default_path.py; median of 3 passes' medians "
               "of %d)\n" % a.cold)
    out.append(table(["language", "default (forked, shared server)",
                      "`fork_server=False` (spawned)", "ratio", "target"], rows) + "\n")


def compute_section(a, out):
    procs = 1 if a.quick else 5
    py = os.path.join(HERE, "workloads", "compute.py")
    js = os.path.join(HERE, "workloads", "compute.js")
    run = lambda lang, path: [CODECAGE, "run", "--json", "--timeout", "600", "--lang", lang,
                              path]
    log("compute: codecage, python3, qjs, node --jitless, node (%d process(es) each)" % procs)
    r = compute({"cc-py": (run("python", py), True), "py": ([PY, py], False),
                 "cc-js": (run("javascript", js), True), "qjs": ([QJS, js], False),
                 "jitless": (["node", "--jitless", js], False), "node": (["node", js], False)},
                procs)
    rows = []
    get = lambda key, b: r[key] and r[key].get(b)
    for b in ("recursion", "churn", "json"):
        SEEN["compute " + b] = get("cc-py", b) and get("py", b) and get("cc-py", b) / get("py", b)
        rows.append(["%s, Python" % b, ms(get("cc-py", b), digits=1),
                     "python3: " + ms(get("py", b), digits=1),
                     ratio(get("cc-py", b), get("py", b)), "≤ 1.03x"])
    for b in ("recursion", "churn", "json"):
        c = get("cc-js", b)
        rows.append(["%s, JavaScript" % b, ms(c, digits=1), "qjs: " + ms(get("qjs", b), digits=1),
                     ratio(c, get("qjs", b)), "≤ 1.05x"])
        for key, name in (("jitless", "node --jitless"), ("node", "node")):
            rows.append(["", "", "%s: %s" % (name, ms(get(key, b), digits=1)),
                         ratio(c, get(key, b)), ""])
    out.append("Compute inside the engine (bench/workloads/compute.*; median of %d rounds; "
               "ratio = codecage / that)\n" % (5 * procs))
    out.append(table(["benchmark", "codecage", "reference", "ratio", "target"], rows) + "\n")


def humaneval_section(a, out):
    cmd = [PY, os.path.join(HERE, "humaneval.py")] + (["--limit", "20"] if a.quick else [])
    log("HumanEval-X: " + " ".join(cmd[1:]))
    p = subprocess.run(cmd, capture_output=True, text=True)
    out.append("HumanEval-X end to end (`bench/humaneval.py%s`, exit status %d)\n" %
               (" --limit 20" if a.quick else "", p.returncode))
    out.append("```\n" + (p.stdout + p.stderr[-500:]).strip() + "\n```\n")


def charts_section(a, out):
    cmd = [PY, os.path.join(HERE, "charts.py"), "--n", "5" if a.quick else "30"]
    log("charts: " + " ".join(cmd[1:]))
    p = subprocess.run(cmd, capture_output=True, text=True)
    out.append("A matplotlib chart, plt.plot to PNG bytes on the host (`bench/charts.py`)\n")
    out.append((p.stdout if p.returncode == 0 else "n/a: " + p.stderr[-500:]) + "\n")


def density_section(a, out):
    """bench/density.py (issue 23): live sessions per fork server, their
    memory, bursts against spawned runtimes, churn counts."""
    cmd = [PY, os.path.join(HERE, "density.py")] + (["--quick"] if a.quick else [])
    log("density: " + " ".join(cmd[1:]))
    p = subprocess.run(cmd, capture_output=True, text=True)
    out.append((p.stdout if p.returncode == 0 else "n/a: " + p.stderr[-500:]) + "\n")


def floor_section(a, out):
    """What this machine charges for the operations a session is made of
    (bench/floor.c, cc-floor): the floor under the start-up rows."""
    p = subprocess.run([os.path.join(BUILD, "cc-floor")], capture_output=True, text=True,
                       timeout=300)
    vals = dict(ln.split() for ln in p.stdout.splitlines() if len(ln.split()) == 2)
    what = [("fork_us", "fork() of a small process until the child ran"),
            ("fault_us", "one first-touch page fault"),
            ("cow_us", "one copy-on-write fault in a forked child"),
            ("seccomp_us", "installing a 128-instruction seccomp filter"),
            ("wake_us", "socketpair round trip to a peer that slept 5 ms"),
            ("hot_us", "socketpair round trip, back to back")]
    rows = [[text, "%s µs" % vals.get(k, "n/a")] for k, text in what]
    out.append("The machine's floor (`build/cc-floor`)\n")
    out.append(table(["operation", "cost"], rows) + "\n")


def streaming_section(a, out):
    sys.path.insert(0, HERE)
    import streaming
    runs = 5 if a.quick else 20
    out.append("First streamed line (`bench/streaming.py`), ms from the guest's print "
               "to the host\n")
    out.append(streaming.table(("path", "first: median", "first: worst",
                                "later lines: median", "later lines: worst"),
                               streaming.latency_rows(runs)) + "\n")
    out.append("Flood of 100,000 lines (Python)\n")
    out.append(streaming.table(("build", "CLI mode", "guest loop", "wall"),
                               streaming.flood_rows(runs, 100000, a.stream_base)) + "\n")


def turns(a, runs):
    """runs: {key: (cc-bench argv tail, env or None)}, each run PASSES times
    in turns with --cold // PASSES sessions; {key: median of the passes'
    cold medians (ms), or None}."""
    modes = cc_bench_modes()
    n = max(1, -(-a.cold // PASSES))
    got = {}
    for p in range(PASSES):
        for key, ((lang, mode), env) in runs.items():
            log("pass %d: cc-bench %s %s%s" % (p + 1, lang, mode, " (libraries)" if env else ""))
            v = cc_bench(lang, n, 0, mode, modes, env)
            got.setdefault(key, []).append(v and v[0])
    return {key: pass_median(v) for key, v in got.items()}


def files_section(a, out):
    """Issue 14: a forked session with a 16 MiB scratch and one read-only
    grant against a plain one (cc-bench fork-files / fork), and a whole
    100 MiB file read from a read-only grant (bench/files.py)."""
    sys.path.insert(0, HERE)
    import files
    runs = {(lang, m): ((lang, m), None) for lang in ("javascript", "python")
            for m in ("fork", "fork-files")}
    r = turns(a, runs)
    rows = []
    for lang, name in (("javascript", "JavaScript"), ("python", "Python")):
        rows.append([name, ms(r[lang, "fork"]), ms(r[lang, "fork-files"]),
                     ratio(r[lang, "fork-files"], r[lang, "fork"]), "≤ 1.5x"])
    out.append("Forked session + first `1+1`, with scratch and a read-only grant against "
               "without (cc-bench fork-files / fork; median of %d passes' medians of %d)\n" %
               (PASSES, max(1, -(-a.cold // PASSES))))
    out.append(table(["language", "forked", "forked, scratch + grant", "ratio", "target"],
                     rows) + "\n")
    n = 3 if a.quick else 15
    log("files: a 100 MiB read, %d rounds of the runners in turn" % n)
    t = files.read_times(100, n)
    rows = [["codecage Python, guest `open().read()` of /data", ms(t["codecage Python"], digits=1),
             "python3: " + ms(t["python3"], digits=1), ratio(t["codecage Python"], t["python3"])],
            ["codecage JavaScript, guest `fs.readFileSync` of /data",
             ms(t["codecage JavaScript"], digits=1), "node: " + ms(t["node"], digits=1),
             ratio(t["codecage JavaScript"], t["node"])]]
    out.append("Reading a 100 MiB file from a read-only grant (bench/files.py; median of %d "
               "warm reads, the runners taking turns; ratio = codecage / that)\n" % n)
    out.append(table(["runner", "median", "reference", "ratio"], rows) + "\n")


LIBS_NM = os.path.join(ROOT, "tests", "libs", "node_modules")
NODE_LOAD = os.path.join(HERE, "workloads", "load_bundles.js")


def bundle_files(names):
    """The files codecage resolves for package names (package.json's unpkg,
    jsdelivr, then browser), as node is given them."""
    out = []
    for name in names:
        with open(os.path.join(LIBS_NM, name, "package.json")) as f:
            pj = json.load(f)
        rel = pj.get("unpkg") or pj.get("jsdelivr") or pj["browser"]
        out.append(os.path.normpath(os.path.join(LIBS_NM, name, rel)))
    return out


def libraries_section(a, out):
    """Issue 15: JavaScript sessions with vega + vega-lite loaded (and the
    web polyfills): forked from a template that loaded them, checked out of
    a pool of such, against spawning a runtime that evaluates them again and
    against node loading the same bundles in a fresh process."""
    if not os.path.isdir(os.path.join(LIBS_NM, "vega-lite")) and shutil.which("npm"):
        log("installing the library packages: npm ci --prefix tests/libs")
        subprocess.run(["npm", "ci", "--prefix", os.path.dirname(LIBS_NM), "--no-audit",
                        "--no-fund"], stdout=subprocess.DEVNULL)
    libs = ["vega", "vega-lite"]
    if "CC_BENCH_LIBRARIES" not in subprocess.run([CC_BENCH], capture_output=True,
                                                  text=True).stderr:
        log("  cc-bench does not take CC_BENCH_LIBRARIES here: the libraries rows read n/a")
        libs = ["/nonexistent/cc-bench-takes-no-libraries.js"]
    env = dict(os.environ, CC_BENCH_LIBRARIES=",".join(libs), CC_BENCH_NODE_MODULES=LIBS_NM)
    r = turns(a, {"fork": (("javascript", "fork"), None),
                  "fork-libs": (("javascript", "fork"), env),
                  "pool": (("javascript", "pool"), None),
                  "pool-libs": (("javascript", "pool"), env)})
    k = 1 if a.quick else 3
    spawned, node = [], []
    have = os.path.isdir(os.path.join(LIBS_NM, "vega-lite"))
    node_cmd = ["node", NODE_LOAD] + (bundle_files(["vega", "vega-lite"]) if have else [])
    for p in range(PASSES):
        log("pass %d: spawned with the libraries, node loading them" % (p + 1))
        v = cc_bench("javascript", k, 0, "require", cc_bench_modes(), env) if have else None
        spawned.append(v and v[0])
        node.append(process_ms(node_cmd, k) if have else None)
    sp, nd = pass_median(spawned), pass_median(node)
    rows = [["codecage, forked, libraries in the template", ms(r["fork-libs"]), ratio(
        r["fork-libs"], sp), ratio(r["fork-libs"], nd), "≤ 3 ms"],
            ["codecage, pooled checkout, libraries in the template", ms(r["pool-libs"]),
             ratio(r["pool-libs"], sp), ratio(r["pool-libs"], nd), "≤ 0.5 ms"],
            ["codecage, spawned, the bundles evaluated per session (median of %d)" %
             (k * PASSES), ms(sp), "", "", ""],
            ["node, a fresh process loading the same bundles (median of %d)" %
             (k * PASSES), ms(nd), "", "", ""],
            ["for scale: codecage, forked, no libraries", ms(r["fork"]), "", "", ""],
            ["for scale: codecage, pooled checkout, no libraries", ms(r["pool"]), "", "", ""]]
    out.append("New JavaScript session with vega %s + vega-lite %s loaded (web polyfills on) "
               "+ first `1+1` (median of %d passes' medians of %d; ratio = codecage / that)\n" %
               (pkg_version("vega"), pkg_version("vega-lite"), PASSES,
                max(1, -(-a.cold // PASSES))))
    out.append(table(["runner", "median", "spawned ÷", "node ÷", "target"], rows) + "\n")


def pkg_version(name):
    try:
        with open(os.path.join(LIBS_NM, name, "package.json")) as f:
            return json.load(f)["version"]
    except OSError:
        return "(not installed)"


def net_section(a, out):
    """Issue 17: bench/net.py's tables, as it prints them."""
    cmd = [PY, os.path.join(HERE, "net.py"), "--requests", "100" if a.quick else "500",
           "--fanout", "100"]
    log("network: " + " ".join(cmd[1:]))
    p = subprocess.run(cmd, capture_output=True, text=True)
    out.append("Network broker (`bench/%s`, exit status %d)\n" % (" ".join(
        [os.path.basename(cmd[1])] + cmd[2:]), p.returncode))
    out.append((p.stdout.strip() or p.stderr[-500:]) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer runs, HumanEval-X subsampled")
    ap.add_argument("--only", default="floor,startup,compute,humaneval,streaming,charts,files,"
                    "libraries,net,density,goals")
    ap.add_argument("--stream-base", help="build dir of the commit before streaming")
    ap.add_argument("--cold", type=int, help="runs per start-up median (30; --quick 10)")
    ap.add_argument("--warm", type=int, help="warm evals (3000; --quick 1000)")
    ap.add_argument("--markdown", help="also write the tables to this file")
    a = ap.parse_args()
    a.only = a.only.split(",")
    a.cold = a.cold or (10 if a.quick else 30)
    a.warm = a.warm or (1000 if a.quick else 3000)
    prepare(a)
    out = [machine() + "\n", "Command: `%s`\n" % " ".join(["bench/all.py"] + sys.argv[1:])]
    for name, fn in (("floor", floor_section), ("startup", startup),
                     ("compute", compute_section),
                     ("humaneval", humaneval_section),
                     ("streaming", streaming_section), ("charts", charts_section),
                     ("files", files_section), ("libraries", libraries_section),
                     ("net", net_section), ("density", density_section),
                     ("goals", goals_section)):
        if name in a.only:
            fn(a, out)
    text = "\n".join(out)
    print(text)
    if a.markdown:
        with open(a.markdown, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
