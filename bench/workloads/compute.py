# Compute micro-benchmarks for bench/all.py, the same file in every Python:
# codecage's guest (`codecage run`), /usr/bin/python3. Each benchmark times
# itself inside the interpreter (time.perf_counter): one warm-up round, then
# ROUNDS rounds of about 250 ms each; prints one JSON line
# {name: [milliseconds per round]}.
# compute.js is the same work in JavaScript.
import json
import time

ROUNDS = 5


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def recursion():
    for _ in range(12):
        fib(27)


def churn():
    # Build and drop many small dicts and lists (allocator and refcounting).
    for _ in range(3):
        batch = []
        for i in range(50000):
            batch.append({"id": i, "name": "item", "tags": [i, i + 1], "score": i * 0.5})
        del batch


DOC = [{"id": i, "name": "user%d" % i, "active": i % 2 == 0, "score": i * 1.5,
        "tags": ["a", "b", "c"], "nested": {"x": i, "y": [1, 2, 3], "s": "text " * 4}}
       for i in range(2000)]


def json_round_trip():
    for _ in range(30):
        assert len(json.loads(json.dumps(DOC))) == 2000


def run_all():
    out = {}
    for name, fn in (("recursion", recursion), ("churn", churn), ("json", json_round_trip)):
        fn()
        times = []
        for _ in range(ROUNDS):
            t = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t) * 1e3)
        out[name] = times
    return out


print(json.dumps(run_all()))
