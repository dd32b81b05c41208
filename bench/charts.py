#!/usr/bin/python3
"""A matplotlib chart's time from plt.plot to PNG bytes on the host.

usage: /usr/bin/python3 bench/charts.py [--n N] [--markdown]

codecage: a Python runtime (sandbox require) through the C library
(build/libcodecage.so, by ctypes: nothing of the Python package), one eval
per chart that plots 1,000 points on a 4x3 in, 100 dpi figure and leaves it
open; the worker saves it as PNG (Agg, bbox_inches='tight', as its capture
does) into the result's displays, and the clock stops when the host holds
the bytes (cc_result_display_data). The runtime is warm: pyplot was
imported by an earlier eval. Reference: /usr/bin/python3 doing the same
plot and savefig into a BytesIO in one process, timed around the same
lines. Medians of N charts (30). "first chart" is a new runtime's first
eval (importing pyplot included) against a fresh python3 process that
imports pyplot and draws one, both timed from outside.
"""
import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.environ.get("CODECAGE_BUILD", os.path.join(ROOT, "build"))
PY = "/usr/bin/python3"
PLOT = ("fig, ax = plt.subplots(figsize=(4, 3), dpi=100)\n"
        "_ = ax.plot([i * i % 97 for i in range(1000)])\n")
REF = """
import io, statistics, sys, time
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
out = []
for _ in range(int(sys.argv[1])):
    t0 = time.perf_counter()
%s    f = io.BytesIO()
    fig.savefig(f, format='png', bbox_inches='tight')
    png = f.getvalue()
    plt.close(fig)
    out.append(time.perf_counter() - t0)
assert png[:4] == b'\\x89PNG'
print(statistics.median(out) * 1000)
""" % "".join("    " + ln + "\n" for ln in PLOT.splitlines())


class Lib:
    def __init__(self):
        self.c = ctypes.CDLL(os.path.join(BUILD, "libcodecage.so"))
        self.c.cc_runtime_eval.restype = ctypes.c_void_p
        self.c.cc_runtime_eval.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                           ctypes.c_double]
        self.c.cc_result_display_data.restype = ctypes.c_void_p
        self.c.cc_result_display_data.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                                  ctypes.c_char_p,
                                                  ctypes.POINTER(ctypes.c_size_t)]
        self.c.cc_result_display_count.argtypes = [ctypes.c_void_p]
        self.c.cc_result_ok.argtypes = [ctypes.c_void_p]
        self.c.cc_result_free.argtypes = [ctypes.c_void_p]
        self.c.cc_runtime_close.argtypes = [ctypes.c_void_p]

    def new(self):
        opts = ctypes.create_string_buffer(4096)  # cc_options, filled by cc_options_init
        self.c.cc_options_init(opts, 2)  # CC_LANG_PYTHON
        rt = ctypes.c_void_p()
        err = ctypes.create_string_buffer(64)
        if self.c.cc_runtime_new(opts, ctypes.byref(rt), err) < 0:
            raise RuntimeError("cc_runtime_new failed")
        return rt

    def png(self, rt, code):
        """Eval code; return the first display's PNG bytes."""
        b = code.encode()
        r = self.c.cc_runtime_eval(rt, b, len(b), 0.0)
        try:
            n = ctypes.c_size_t()
            p = self.c.cc_result_display_data(r, 0, b"image/png", ctypes.byref(n))
            if not self.c.cc_result_ok(r) or not p:
                raise RuntimeError("the eval gave no PNG")
            return ctypes.string_at(p, n.value)
        finally:
            self.c.cc_result_free(r)


def codecage(n):
    lib = Lib()
    t0 = time.perf_counter()
    rt = lib.new()
    lib.png(rt, "import matplotlib.pyplot as plt\n" + PLOT)
    first = time.perf_counter() - t0
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        png = lib.png(rt, PLOT)
        out.append(time.perf_counter() - t0)
    assert png[:4] == b"\x89PNG"
    lib.c.cc_runtime_close(rt)
    return first * 1000, statistics.median(out) * 1000


def reference(n):
    t0 = time.perf_counter()
    p = subprocess.run([PY, "-c", REF, "1"], capture_output=True, text=True, check=True)
    first = time.perf_counter() - t0
    p = subprocess.run([PY, "-c", REF, str(n)], capture_output=True, text=True, check=True)
    return first * 1000, float(p.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30)
    a = ap.parse_args()
    cf, cw = codecage(a.n)
    rf, rw = reference(a.n)
    print("| chart (plt.plot to PNG bytes on the host) | codecage | python3 | ratio |")
    print("|---|---|---|---|")
    print("| warm: one more chart (median of %d) | %.1f ms | %.1f ms | %.2fx |"
          % (a.n, cw, rw, cw / rw))
    print("| first chart: new runtime / new process, pyplot imported | %.0f ms | %.0f ms | %.2fx |"
          % (cf, rf, cf / rf))


if __name__ == "__main__":
    sys.exit(main())
