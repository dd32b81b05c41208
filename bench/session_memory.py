#!/usr/bin/python3
"""Private memory of an idle fork-server session, per mapping (issue 23).

usage: /usr/bin/python3 bench/session_memory.py [-n N] [--language python|javascript|both]
                                                 [--preload LIST] [--pages]

For each language: one ForkServer from the Python package (default
preload: json, re, math, datetime, collections, itertools, functools,
numpy?, pandas?), N sessions forked from it and kept open, each after one
eval of `x = 1`. Prints the median and p99 private KiB of those sessions
(`/proc/PID/smaps_rollup`: Private_Clean + Private_Dirty, what one more
session costs beyond what it shares with its template and siblings), the
template's private KiB, and for one session its private KiB per mapping
(`/proc/PID/smaps`) before its first eval (just forked) and after it, the
largest first. `--pages` also lists, for the largest mappings, which
pages are private (pagemap bit 56, "exclusively mapped"), by offset.

idle_private_kib(language, n, preload=None) -> [KiB, ...] is the function
bench/density.py calls: one figure per session, all N open at once.

Needs the Python package: built here into a temporary directory with
setup.py (CODECAGE_MESON_BUILD=build), as tests/python/ccpkg.py does,
unless `import codecage` already works. Not a test; no figure here is
asserted (tests/python/test_pkg_session_memory.py holds the bound).
"""
import argparse
import atexit
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIRST_EVAL = {"python": "x = 1", "javascript": "var x = 1"}
_pkg_dir = None


def _import_codecage():
    """The package, built once into a temporary directory when needed."""
    global _pkg_dir
    try:
        import codecage
        return codecage
    except ImportError:
        pass
    _pkg_dir = tempfile.mkdtemp(prefix="codecage-bench-mem-")
    atexit.register(shutil.rmtree, _pkg_dir, True)
    env = dict(os.environ, CODECAGE_MESON_BUILD=os.path.join(ROOT, "build"))
    subprocess.run([sys.executable, "setup.py", "-q", "build", "--build-lib", _pkg_dir],
                   cwd=ROOT, env=env, check=True, capture_output=True)
    sys.path.insert(0, _pkg_dir)
    import codecage
    return codecage


def private_kib(pid):
    """Private_Clean + Private_Dirty of /proc/PID/smaps_rollup, KiB."""
    total = 0
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith(("Private_Clean:", "Private_Dirty:")):
                total += int(line.split()[1])
    return total


def mappings(pid):
    """[(name, start, end, private KiB)] of /proc/PID/smaps, one per
    mapping; name is the path or [heap]/[stack]/[anon]."""
    out = []
    cur = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and not head[0].endswith(":"):
                lo, hi = (int(x, 16) for x in head[0].split("-"))
                name = head[5] if len(head) > 5 else "[anon]"
                cur = [name, lo, hi, 0]
                out.append(cur)
            elif head[0] in ("Private_Clean:", "Private_Dirty:"):
                cur[3] += int(head[1])
    return [tuple(m) for m in out]


def by_name(maps):
    """Private KiB summed per mapping name (a library's text, data, bss
    ... and anonymous mappings of one kind are added up)."""
    d = {}
    for name, _lo, _hi, kib in maps:
        d[name] = d.get(name, 0) + kib
    return d


def private_pages(pid, lo, hi):
    """Offsets (pages from lo) of the pages of [lo, hi) that are present
    and exclusively mapped in PID (pagemap bits 63 and 56)."""
    pages = []
    with open(f"/proc/{pid}/pagemap", "rb") as f:
        f.seek(lo // 4096 * 8)
        data = f.read((hi - lo) // 4096 * 8)
    for i in range(len(data) // 8):
        (v,) = struct.unpack_from("<Q", data, i * 8)
        if v >> 63 & 1 and v >> 56 & 1:
            pages.append(i)
    return pages


def _server(codecage, language, preload):
    kw = {"preload": preload} if language == "python" and preload is not None else {}
    return codecage.ForkServer(language=language, **kw)


def _template_pid(session_pid):
    """The template (the session's parent: it reaps its sessions)."""
    with open(f"/proc/{session_pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def idle_private_kib(language, n, preload=None):
    """Private KiB of each of n idle sessions of one fork server, all open
    at once, each after one eval (`x = 1`): a list of n ints."""
    codecage = _import_codecage()
    sessions = []
    with _server(codecage, language, preload) as fs:
        try:
            for _ in range(n):
                rt = fs.session()
                sessions.append(rt)
                rt.eval(FIRST_EVAL[language])
            return [private_kib(rt.pid) for rt in sessions]
        finally:
            for rt in sessions:
                rt.close()


def _p99(v):
    s = sorted(v)
    return s[min(len(s) - 1, int(round(0.99 * (len(s) - 1))))]


def report(language, n, preload, pages):
    codecage = _import_codecage()
    with _server(codecage, language, preload) as fs:
        rt = fs.session()
        others = []
        try:
            pid = rt.pid
            before = mappings(pid)
            rt.eval(FIRST_EVAL[language])
            after = mappings(pid)
            template = _template_pid(pid)
            for _ in range(max(0, n - 1)):
                o = fs.session()
                others.append(o)
                o.eval(FIRST_EVAL[language])
            figures = [private_kib(pid)] + [private_kib(o.pid) for o in others]
            tmpl = private_kib(template)
            print(f"## {language}: {n} idle sessions, median {statistics.median(figures):.0f} KiB, "
                  f"p99 {_p99(figures)} KiB private; template {tmpl} KiB private")
            b, a = by_name(before), by_name(after)
            print(f"one session, private KiB per mapping: forked {sum(b.values())}, "
                  f"after `{FIRST_EVAL[language]}` {sum(a.values())}")
            print("| mapping | forked | after first eval |")
            print("|---|---:|---:|")
            for name in sorted(a, key=lambda k: -a[k]):
                if a[name] or b.get(name):
                    print(f"| {name} | {b.get(name, 0)} | {a[name]} |")
            if pages:
                for name, lo, hi, kib in sorted(after, key=lambda m: -m[3])[:8]:
                    if kib:
                        pg = private_pages(pid, lo, hi)
                        print(f"{name} {lo:x}-{hi:x}: {len(pg)} private pages at "
                              f"{_ranges(pg)}")
        finally:
            rt.close()
            for o in others:
                o.close()


def _ranges(pages):
    out, i = [], 0
    while i < len(pages):
        j = i
        while j + 1 < len(pages) and pages[j + 1] == pages[j] + 1:
            j += 1
        out.append(str(pages[i]) if i == j else f"{pages[i]}-{pages[j]}")
        i = j + 1
    return ",".join(out[:40]) + (" ..." if len(out) > 40 else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=20, help="sessions kept open (20)")
    ap.add_argument("--language", default="both", choices=["python", "javascript", "both"])
    ap.add_argument("--preload", default=None, help="Python preload list (default: the "
                    "fork server's own)")
    ap.add_argument("--pages", action="store_true", help="list private pages by offset")
    a = ap.parse_args()
    for lang in (["python", "javascript"] if a.language == "both" else [a.language]):
        report(lang, a.n, a.preload, a.pages)
        print()


if __name__ == "__main__":
    main()
