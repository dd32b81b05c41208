#!/usr/bin/python3
"""Density of one fork server (issue 23): live sessions, memory, bursts, churn.

usage: /usr/bin/python3 bench/density.py [--quick] [--lang python,javascript]
                                         [--sessions N] [--spawned M]
                                         [--threads T] [--churn C]

Everything through the Python package (`codecage.ForkServer`, default
preload, sandbox require), built into a temporary directory as bench/net.py
does (setup.py, CODECAGE_MESON_BUILD=build). For each language:

  - live: one fork server asked for N sessions (1,000; max_sessions N),
    each evaluating one statement and kept open; prints how many it reached
    (and the first refusal, if one came);
  - memory: private memory of each idle live session after its first eval,
    from /proc/PID/smaps_rollup (Private_Clean + Private_Dirty), median and
    p99, and the template's (the sessions' parent);
  - burst: the N sessions of "live", started by T threads (8) as fast as
    they can ask (session() then a first eval of one statement each): the
    wall time from the first request to the last session's first result,
    and the p50/p99 of one session's start (its session() + first eval);
    the same burst with M spawned runtimes (IsolatedRuntime, 50), whose
    wall time is extrapolated to N (M's time * N / M: a spawned worker's
    start does not depend on how many run, but the machine's two cores
    do; the row says so);
  - both: N/2 sessions of each language at once, from T threads each;
  - churn: C sessions (10,000) opened, evaluated and closed through one
    fork server, ten live at a time, with the counts before and after:
    the host's descriptors, threads and VmRSS, the template's descriptors,
    threads and VmRSS, the processes below this one and their distinct
    user and pid namespaces (only our own descendants are looked at).

The burst and live counts come from one run (the burst is how the live
sessions were started). Reference, quoted and not measured here: the 2026
microVM-fork paper reports 1,000 concurrent forks in 815 ms and about
265 KB per sandbox. Goals (issue 23): burst at most 1 s JavaScript, 3 s
Python, on this 2-core machine. --quick: N 100, M 10, C 500.
"""
import argparse
import os
import resource
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import net  # noqa: E402  (build_package)

REF_BURST_MS = 815
REF_KIB = 265 * 1000 / 1024


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def private_kib(pid):
    """Private_Clean + Private_Dirty of /proc/PID/smaps_rollup, KiB."""
    total = 0
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            if line.startswith(("Private_Clean:", "Private_Dirty:")):
                total += int(line.split()[1])
    return total


def status(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def ppid(pid):
    return status(pid, "PPid")


def cpu_s(pid):
    """utime + stime + cutime + cstime of pid, s: a template's own CPU and
    that of the children it reaped (the intermediates and sessions)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def host_cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def below_us():
    """(processes below this one, their distinct user namespaces, pid
    namespaces)."""
    me, procs, users, pids = os.getpid(), 0, set(), set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        p, seen = int(d), 0
        try:
            while p > 1 and seen < 64:
                p, seen = ppid(p), seen + 1
                if p == me:
                    break
            if p != me:
                continue
            procs += 1
            users.add(os.stat("/proc/%s/ns/user" % d).st_ino)
            pids.add(os.stat("/proc/%s/ns/pid" % d).st_ino)
        except OSError:
            continue
    return procs, len(users), len(pids)


def code_for(lang, i):
    return "x = %d; x + 1" % i if lang == "python" else "let x = %d; x + 1" % i


def burst(start_one, n, threads):
    """n starts from `threads` threads; returns (wall s, [each start s],
    [results], [errors])."""
    lock = threading.Lock()
    nxt = [0]
    starts, out, errors = [], [], []

    def worker():
        while True:
            with lock:
                i = nxt[0]
                nxt[0] += 1
            if i >= n:
                return
            t = time.perf_counter()
            try:
                rt = start_one(i)
            except Exception as e:  # noqa: BLE001  (counted and shown)
                with lock:
                    errors.append("%s: %s" % (type(e).__name__, e))
                continue
            dt = time.perf_counter() - t
            with lock:
                starts.append(dt)
                out.append(rt)

    ts = [threading.Thread(target=worker) for _ in range(threads)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return time.perf_counter() - t0, starts, out, errors


def forked_starter(fs, lang):
    def start(i):
        s = fs.session()
        assert s.eval(code_for(lang, i)) == i + 1
        return s
    return start


def spawned_starter(codecage, lang):
    def start(i):
        rt = codecage.IsolatedRuntime(language=lang)
        assert rt.eval(code_for(lang, i)) == i + 1
        return rt
    return start


def ms(s):
    return "%.0f ms" % (s * 1e3)


def report_burst(label, n, wall, starts, errors):
    print("| %s | %d | %s | %.1f ms | %.1f ms | %s |" % (
        label, len(starts), ms(wall), pct(starts, 50) * 1e3, pct(starts, 99) * 1e3,
        ("%d refused: %s" % (len(errors), errors[0][:160])) if errors else ""))


def one_language(codecage, lang, a):
    print("\n### %s\n" % lang)
    t = time.perf_counter()
    fs = codecage.ForkServer(language=lang, max_sessions=max(a.sessions, 8))
    print("template started in %s" % ms(time.perf_counter() - t))
    # a few first sessions, so the burst measures steady forks
    first = [fs.session() for _ in range(3)]
    tmpl = ppid(first[0].pid)
    for s in first:
        s.eval("1")
        s.close()
    marker = fs.session()  # answered once the first three are reaped
    marker.close()
    time.sleep(0.2)
    tmpl_alone_kib = private_kib(tmpl)
    print("\n| burst | sessions | to the last first result | start p50 | start p99 | |")
    print("|---|---|---|---|---|---|")
    cpu0, host0 = cpu_s(tmpl), host_cpu_s()
    wall, starts, live, errors = burst(forked_starter(fs, lang), a.sessions, a.threads)
    host1 = host_cpu_s()
    report_burst("forked, %d threads" % a.threads, a.sessions, wall, starts, errors)
    # memory of the idle live sessions, each after its first eval
    time.sleep(0.5)
    mem = [private_kib(s.pid) for s in live]
    tmpl_kib = private_kib(tmpl)
    for s in live:
        s.close()
    marker = fs.session()  # answered once every closed session is reaped
    marker.close()
    cpu = (cpu_s(tmpl) - cpu0) / max(len(live), 1)
    fs.close()
    wall_s, starts_s, spawned, errors_s = burst(spawned_starter(codecage, lang), a.spawned,
                                                a.threads)
    for rt in spawned:
        rt.close()
    report_burst("spawned, %d threads (%d runtimes)" % (a.threads, a.spawned), a.spawned,
                 wall_s, starts_s, errors_s)
    if starts_s:
        print("| spawned, extrapolated to %d | - | %s | | | %d x the %d-runtime wall time |" % (
            a.sessions, ms(wall_s * a.sessions / a.spawned), a.sessions // a.spawned,
            a.spawned))
    print("| reference (microVM forks, quoted) | 1000 | %d ms | | | |" % REF_BURST_MS)
    print("\nCPU per forked session (clock ticks, so coarse): %.2f ms in the fork server "
          "(the template and the session, from its fork to its reap), "
          "%.2f ms in this process (the supervisor's side, start and first eval)"
          % (cpu * 1e3, (host1 - host0) / max(len(live), 1) * 1e3))
    print("\nlive sessions reached: %d of %d asked%s" % (
        len(live), a.sessions, (" (first refusal: %s)" % errors[0][:200]) if errors else ""))
    print("\n| private memory | median | p99 | |")
    print("|---|---|---|---|")
    print("| idle session after its first eval | %d KiB | %d KiB | %d sessions |" % (
        pct(mem, 50), pct(mem, 99), len(mem)))
    print("| the template, alone | %d KiB | | before the burst |" % tmpl_alone_kib)
    print("| the template, beside its live sessions | %d KiB | | pages it shares with "
          "them are no longer private |" % tmpl_kib)
    print("| reference (microVM fork, quoted) | %d KiB | | 265 KB |" % REF_KIB)
    return wall


def both_languages(codecage, a):
    half = max(a.sessions // 2, 1)
    print("\n### both languages at once (%d each)\n" % half)
    fss = {lang: codecage.ForkServer(language=lang, max_sessions=max(half, 8))
           for lang in ("javascript", "python")}
    res = {}

    def run(lang):
        res[lang] = burst(forked_starter(fss[lang], lang), half, a.threads)

    ts = [threading.Thread(target=run, args=(lang,)) for lang in fss]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    print("| burst | sessions | to the last first result | start p50 | start p99 | |")
    print("|---|---|---|---|---|---|")
    for lang, (w, starts, live, errors) in res.items():
        report_burst("%s, %d threads" % (lang, a.threads), half, w, starts, errors)
        for s in live:
            s.close()
    print("| both | %d | %s | | | |" % (2 * half, ms(wall)))
    for fs in fss.values():
        fs.close()


def counts(fs, tmpl):
    """Counted with one marker session live (the template answers only
    after it has reaped every session that ended before)."""
    marker = fs.session()
    c = {
        "host descriptors": len(os.listdir("/proc/self/fd")),
        "host threads": status(os.getpid(), "Threads"),
        "host VmRSS KiB": status(os.getpid(), "VmRSS"),
        "template descriptors": len(os.listdir("/proc/%d/fd" % tmpl)),
        "template threads": status(tmpl, "Threads"),
        "template VmRSS KiB": status(tmpl, "VmRSS"),
    }
    c["processes below us"], c["their user namespaces"], c["their pid namespaces"] = below_us()
    marker.close()
    return c


def churn(codecage, lang, n):
    fs = codecage.ForkServer(language=lang)
    s = fs.session()
    tmpl = ppid(s.pid)
    s.close()

    def round_(k):
        done = 0
        while done < k:
            batch = [fs.session() for _ in range(min(10, k - done))]
            for i, s in enumerate(batch):
                assert s.eval(code_for(lang, done + i)) == done + i + 1
                s.close()
            done += len(batch)

    round_(20)
    before = counts(fs, tmpl)
    t = time.perf_counter()
    round_(n)
    wall = time.perf_counter() - t
    after = counts(fs, tmpl)
    fs.close()
    print("\n#### churn, %s: %d sessions opened, evaluated, closed in %.1f s (%.2f ms each)\n"
          % (lang, n, wall, wall / n * 1e3))
    print("| count | before | after |")
    print("|---|---|---|")
    for k in before:
        print("| %s | %d | %d |" % (k, before[k], after[k]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--lang", default="javascript,python")
    ap.add_argument("--sessions", type=int)
    ap.add_argument("--spawned", type=int)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--churn", type=int)
    ap.add_argument("--no-both", action="store_true")
    a = ap.parse_args()
    a.sessions = a.sessions or (100 if a.quick else 1000)
    a.spawned = a.spawned or (10 if a.quick else 50)
    a.churn = a.churn if a.churn is not None else (500 if a.quick else 10000)
    net.build_package()
    import codecage
    langs = [x for x in a.lang.split(",") if x]
    print("## Density (issue 23): %d sessions, %d threads; %d cores, load %.1f" % (
        a.sessions, a.threads, os.cpu_count(), os.getloadavg()[0]))
    for lang in langs:
        one_language(codecage, lang, a)
    if len(langs) == 2 and not a.no_both:
        both_languages(codecage, a)
    for lang in langs:
        if a.churn:
            churn(codecage, lang, a.churn)


if __name__ == "__main__":
    main()
