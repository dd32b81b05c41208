#!/usr/bin/python3
"""Start-up and round-trip numbers only: `bench/all.py --only startup`.

Kept so the older command still works; bench/all.py says what each number
means. usage: bench/run.py [--quick] [--cold N] [--warm N]
"""
import os
import sys

ALL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "all.py")
os.execv(sys.executable, [sys.executable, ALL, "--only", "startup"] + sys.argv[1:])
