#!/usr/bin/python3
"""Writes the seed corpora: for fuzz_frame.c (corpus/) one valid frame
payload of every message type the worker sends, plus a few hostile ones,
with Debian's python3-msgpack (an independent implementation); for
fuzz_jsonrpc.c (corpus-jsonrpc/) the JSON-RPC messages an MCP client sends
and some it should not. Run once; the fuzzer adds what it finds."""
import json
import os

import msgpack

HERE = os.path.dirname(os.path.abspath(__file__))
P = lambda o: msgpack.packb(o, use_bin_type=True)  # noqa: E731

SEEDS = {
    "ready": P({"t": "ready", "engine": "python", "version": "CPython 3.11", "applied": "hygiene",
                "missing": "", "landlock_abi": 0, "seccomp_allowed": 0}),
    "fail": P({"t": "fail", "kind": "internal", "message": "x"}),
    "out": P({"t": "out", "id": 1, "fd": 1, "data": b"hello\n"}),
    "result-ok": P({"t": "result", "id": 1, "ok": True,
                    "value": {"a": [1, 2.5, None, True, "\u00e9", b"\x00", [[]]]}}),
    "result-ext": P({"t": "result", "id": 1, "ok": True,
                     "value": [msgpack.ExtType(1, b"-123456789012345678901234567890"),
                               msgpack.Timestamp(1700000000, 5)]}),
    # issue 27: dates, durations, fixed offsets, zoned timestamps, paths
    # (value.h's wire form), then each one bent
    "result-time-ext": P({"t": "result", "id": 1, "ok": True, "value": [
        msgpack.ExtType(2, b"\xff\xf5\x06\xf6"),  # date: -719162 (0001-01-01)
        msgpack.ExtType(3, b"\x1d\xcd\x65\x00" + b"\xff" * 7 + b"\xfe"),  # -1.5 s
        msgpack.ExtType(4, (19800000000).to_bytes(8, "big") + b"\x01IST"),
        msgpack.ExtType(5, b"\x00\x00\x13\x88" + (1700000000).to_bytes(8, "big")
                        + (-3600000000).to_bytes(8, "big", signed=True) + b"\x00"),
        msgpack.ExtType(6, "/tmp/\u00e9".encode())]}),
    "result-time-ext-bent": P({"t": "result", "id": 1, "ok": True, "value": [
        msgpack.ExtType(4, (86400000000).to_bytes(8, "big") + b"\x00"),
        msgpack.ExtType(4, b"\x00" * 8 + b"\x02"),
        msgpack.ExtType(5, b"\x00" * 12), msgpack.ExtType(6, b"\xed\xa0\x80"),
        msgpack.ExtType(2, b"\x00\x00\x00")]}),
    "result-err": P({"t": "result", "id": 2, "ok": False,
                     "error": {"kind": "guest_error", "type": "E", "message": "m", "traceback": ""}}),
    "call": P({"t": "call", "id": 3, "call": 7, "name": "lookup", "args": ["A1", 2]}),
    "call-kwargs": P({"t": "call", "id": 3, "call": 10, "name": "lookup", "args": ["A1"],
                      "kwargs": {"sheet": "B", "row": 2}}),
    "call-kwargs-empty": P({"t": "call", "id": 3, "call": 11, "name": "lookup", "args": [],
                            "kwargs": {}}),
    "call-kwargs-int-key": P({"t": "call", "id": 3, "call": 12, "name": "lookup", "args": [],
                              "kwargs": {1: "A"}}),
    "wait": P({"t": "wait", "id": 3}),
    "net": P({"t": "call", "id": 3, "call": 8, "name": "__codecage_net",
              "args": [{"method": "POST", "url": "http://a.test/x",
                        "headers": [["X-A", "v"], ["Content-Type", "text/plain"]],
                        "body": b"hello"}]}),
    "net-crlf": P({"t": "call", "id": 3, "call": 9, "name": "__codecage_net",
                   "args": [{"method": "GET", "url": "http://a.test/",
                             "headers": [["X-A", "v\r\nHost: evil"]], "body": None}]}),
    "result-displays": P({"t": "result", "id": 4, "ok": True, "value": 1,
                          "displays": [{"image/png": b"\x89PNG\r\n\x1a\n\x00", "text/plain": "f"},
                                       {"text/html": "<b>t</b>"}, {"application/json": "[1]"},
                                       {"image/svg+xml": "<svg/>"}]}),
    "result-err-displays": P({"t": "result", "id": 5, "ok": False,
                              "error": {"kind": "guest_error", "type": "E", "message": "m",
                                        "traceback": ""},
                              "displays": [{"text/plain": "before"}]}),
    "deep": b"\x91" * 120 + b"\xc0",
    "huge-array-header": b"\xdd\xff\xff\xff\xff",
    "dup-keys": b"\x82\xa1t\xa3out\xa1t\xa3out",
}

os.makedirs(os.path.join(HERE, "corpus"), exist_ok=True)
for name, data in SEEDS.items():
    with open(os.path.join(HERE, "corpus", "seed-" + name), "wb") as f:
        f.write(data)

J = lambda o: json.dumps(o, separators=(",", ":")).encode()  # noqa: E731

JSONRPC_SEEDS = {
    "initialize": J({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "seed", "version": "1"}}}),
    "initialized": J({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    "tools-list": J({"jsonrpc": "2.0", "id": "a-1", "method": "tools/list", "params": {}}),
    "tools-call": J({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                     "params": {"name": "run_code", "_meta": {"progressToken": 3},
                                "arguments": {"language": "python", "code": "print(1)\n"}}}),
    "params-array": J({"jsonrpc": "2.0", "id": -9007199254740993, "method": "x",
                       "params": [1, 2.5e300, None, True, "\u00e9\ud83d\ude00"]}),
    "response": J({"jsonrpc": "2.0", "id": 3, "result": {"roots": []}}),
    "response-error": J({"jsonrpc": "2.0", "id": "s", "error": {"code": -1, "message": "m"}}),
    "cancelled": J({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": 7, "reason": "r"}}),
    "batch": J([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]),
    "scalar": b"42",
    "version-1": J({"jsonrpc": "1.0", "id": 1, "method": "ping"}),
    "id-null": J({"jsonrpc": "2.0", "id": None, "method": "ping"}),
    "id-float": J({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}),
    "method-number": J({"jsonrpc": "2.0", "id": 1, "method": 5}),
    "params-string": J({"jsonrpc": "2.0", "id": 1, "method": "m", "params": "p"}),
    "no-method-no-answer": J({"jsonrpc": "2.0", "id": 1}),
    "answer-no-id": J({"jsonrpc": "2.0", "result": 1}),
    "dup-keys": b'{"jsonrpc":"2.0","id":1,"id":"two","method":"a","method":"b"}',
    "nul-escape": b'{"jsonrpc":"2.0","id":1,"method":"a\\u0000b"}',
    "lone-surrogate": b'{"jsonrpc":"2.0","id":1,"method":"\\ud800"}',
    "bad-utf8": b'{"jsonrpc":"2.0","id":1,"method":"\xff\xfe"}',
    "trailing": b'{"jsonrpc":"2.0","id":1,"method":"a"} {}',
    "truncated": b'{"jsonrpc":"2.0","id":1,"method":"a',
    "deep": b"[" * 3000 + b"]" * 3000,
    "long-method": J({"jsonrpc": "2.0", "id": 1, "method": "\u00e9" * 700}),
    "big-int": b'{"jsonrpc":"2.0","id":99999999999999999999,"method":"a"}',
}

os.makedirs(os.path.join(HERE, "corpus-jsonrpc"), exist_ok=True)
for name, data in JSONRPC_SEEDS.items():
    with open(os.path.join(HERE, "corpus-jsonrpc", "seed-" + name), "wb") as f:
        f.write(data)
