#!/usr/bin/python3
"""A lying worker for the supervisor's tests (Debian's python3-msgpack, an
independent MessagePack implementation). Installed by the tests as
codecage-worker-js in a temporary worker_dir; its behaviour is the name of
the directory it sits in (the supervisor passes no environment)."""
import os
import struct
import sys
import time

import msgpack

MODE = os.path.basename(os.path.dirname(os.path.abspath(__file__)))
CH = 3


def send_raw(payload):
    os.write(CH, struct.pack("<I", len(payload)) + payload)


def send(obj):
    send_raw(msgpack.packb(obj, use_bin_type=True))


def recv():
    hdr = b""
    while len(hdr) < 4:
        chunk = os.read(CH, 4 - len(hdr))
        if not chunk:
            sys.exit(0)
        hdr += chunk
    (n,) = struct.unpack("<I", hdr)
    body = b""
    while len(body) < n:
        chunk = os.read(CH, n - len(body))
        if not chunk:
            sys.exit(0)
        body += chunk
    return msgpack.unpackb(body, raw=False)


READY = {"t": "ready", "engine": "javascript", "version": "fake", "applied": "hygiene",
         "missing": "", "landlock_abi": 0, "seccomp_allowed": 0}


def result(req, **kw):
    d = {"t": "result", "id": req["id"], "ok": True, "value": None}
    d.update(kw)
    return d


AMP_VALUE = (16 << 20) - 64  # a value just under the default max_result
AMP_NODES = (16 << 20) // 8 - 8  # the supervisor's node budget, nearly all


def amplifier(req):
    """A result frame built by hand whose value costs the host the most
    memory per byte: huge declared lengths (amp-declared, amp-nested), or
    as many one-byte elements as the node budget allows."""
    pk = msgpack.packb
    head = (b"\x84" + pk("t") + pk("result") + pk("id") + pk(req["id"]) + pk("ok") + pk(True)
            + pk("value"))
    if MODE == "amp-declared":
        # a map declaring every pair the bytes could hold, with one real
        # entry filling them
        n = AMP_VALUE // 2
        v = (b"\xdf" + struct.pack(">I", n) + b"\xa1a" + b"\xc6" + struct.pack(">I", 2 * n - 7)
             + bytes(2 * n - 7))
    elif MODE == "amp-nested":
        # 31 maps inside each other, each declaring as many pairs as the
        # bytes left could hold
        depth, parts = 31, []
        for i in range(depth):
            left = AMP_VALUE - 7 * i - 5
            parts.append(b"\xdf" + struct.pack(">I", left // 2) + b"\xa1a")
        size = AMP_VALUE - 7 * depth - 5
        v = b"".join(parts) + b"\xc6" + struct.pack(">I", size) + bytes(size)
    elif MODE == "amp-ints":
        v = b"\xdd" + struct.pack(">I", AMP_NODES) + b"\x01" * AMP_NODES
    elif MODE == "amp-strings":
        v = b"\xdd" + struct.pack(">I", AMP_NODES) + b"\xa0" * AMP_NODES
    elif MODE == "amp-nils":
        v = b"\xdd" + struct.pack(">I", AMP_NODES) + b"\xc0" * AMP_NODES
    elif MODE == "amp-map":
        n = (AMP_VALUE - 5) // 8  # unique 6-character keys, one-byte values
        v = b"\xdf" + struct.pack(">I", n) + b"".join(b"\xa6%06x\x01" % i for i in range(n))
    return head + v


PNG = b"\x89PNG\r\n\x1a\n"
# Result frames with displays: one honest, the rest lying in one way each.
DISPLAYS = {
    "display-honest": {"value": 1, "displays": [{"image/png": PNG + b"img", "text/plain": "fig"},
                                                {"text/html": "<b>t</b>"}]},
    "display-unknown-mime": {"displays": [{"application/x-sh": "rm -rf /"}]},
    "display-not-png": {"displays": [{"image/png": b"GIF89a......"}]},
    "display-png-as-text": {"displays": [{"image/png": "PNG text"}]},
    "display-too-many": {"displays": [{"text/plain": "x"}] * 65},
    "display-empty": {"displays": []},
    "display-not-a-list": {"displays": {"text/plain": "x"}},
    # the data alone over max_result (16 MiB), the frame under its cap
    "display-bytes-over": {"displays": [{"image/png": PNG + bytes(16 << 20)}]},
    # value and display each under max_result, together over it
    "display-with-value-over": {"value": "v" * (8 << 20),
                                "displays": [{"text/plain": "d" * ((8 << 20) + (32 << 10))}]},
    "display-on-error": {"ok": False, "value": None,
                         "error": {"kind": "guest_error", "type": "E", "message": "m",
                                   "traceback": ""},
                         "displays": [{"text/plain": "before"}]},
}


def main():
    init = recv()
    assert init["t"] == "init"
    if MODE == "huge-frame":
        os.write(CH, struct.pack("<I", 0xFFFFFFFF))
        time.sleep(5)
        return
    if MODE == "bad-ready":
        send(dict(READY, extra=1))
        return
    if MODE == "fail-internal":
        send({"t": "fail", "kind": "internal", "message": "fake start-up failure"})
        return
    if MODE == "fail-library-claim":
        # no libraries were sent: the claim of a library's guest_error is
        # not believed (src/lib/libraries.c, cc_libset_explain)
        send({"t": "fail", "kind": "invalid_input",
              "message": "library 1: guest_error: TypeError: forged"})
        return
    if MODE == "fail-guest-kind":
        send({"t": "fail", "kind": "guest_error", "message": "not a start-up kind"})
        return
    if MODE == "wrong-engine":
        send(dict(READY, engine="python"))
        return
    if MODE == "claims-require":
        send(dict(READY, missing="seccomp"))  # require must still refuse
        time.sleep(5)
        return
    send(READY)
    if MODE.startswith("bind-"):
        req = recv()  # the bind request
        if MODE == "bind-call-in-bind":
            send({"t": "call", "id": req["id"], "call": 1, "name": "x", "args": []})
            time.sleep(5)
            return
        send(result(req))
    if MODE == "no-read":
        time.sleep(30)  # never reads the eval request
        return
    req = recv()
    if MODE == "liar-kind":
        send({"t": "result", "id": req["id"], "ok": False,
              "error": {"kind": "worker_crashed", "type": "", "message": "", "traceback": ""}})
    elif MODE == "text-unasked":
        # a text-form value (value_type) the eval did not ask for
        send(result(req, value="{1}", value_type="set"))
    elif MODE == "text-not-string":
        send(result(req, value=1, value_type="set"))
    elif MODE == "wrong-id":
        send(dict(result(req), id=req["id"] + 1))
    elif MODE == "invalid-utf8":
        p = lambda o: msgpack.packb(o, use_bin_type=True)  # noqa: E731
        send_raw(b"\x84" + p("t") + p("result") + p("id") + p(req["id"]) + p("ok") + p(True)
                 + p("value") + b"\xa2\xc3\x28")  # a 2-byte str that is not UTF-8
    elif MODE == "truncated":
        payload = msgpack.packb(result(req, value="x" * 100), use_bin_type=True)
        os.write(CH, struct.pack("<I", len(payload)) + payload[:20])
        return
    elif MODE == "deep":
        v = 0
        for _ in range(200):
            v = [v]
        send(result(req, value=v))
    elif MODE == "silent":
        time.sleep(30)
    elif MODE == "drip":
        payload = msgpack.packb(result(req, value="x" * 1000), use_bin_type=True)
        data = struct.pack("<I", len(payload)) + payload
        for b in data:
            os.write(CH, bytes([b]))
            time.sleep(0.05)
    elif MODE == "exit":
        os._exit(0)
    elif MODE == "flood-out":
        for _ in range(40):
            send({"t": "out", "id": req["id"], "fd": 1, "data": b"y" * 65536})
        send(result(req, value=1))
    elif MODE == "call-unknown":
        # a guessed tool name gets the same answer as any unbound name
        send({"t": "call", "id": req["id"], "call": 1, "name": "secret_admin", "args": []})
        reply = recv()
        send({"t": "out", "id": req["id"], "fd": 1,
              "data": ("%s:%d" % (reply["error"]["name"], reply["call"])).encode()})
        send(result(req, value=1))
    elif MODE == "call-replay":
        send({"t": "call", "id": req["id"], "call": 5, "name": "x", "args": []})
        recv()
        send({"t": "call", "id": req["id"], "call": 5, "name": "x", "args": []})
    elif MODE == "call-bad-args":
        send({"t": "call", "id": req["id"], "call": 1, "name": "x", "args": {"not": "a list"}})
    elif MODE == "call-other-eval":
        send({"t": "call", "id": req["id"] + 7, "call": 1, "name": "x", "args": []})
    elif MODE == "huge-map":
        send(result(req, value={"k%d" % i: i for i in range(200000)}))
    elif MODE == "unknown-ext":
        send(result(req, value=msgpack.ExtType(42, b"?")))
    elif MODE == "bind-nul-name":
        # "x\0admin" must not reach tool "x"
        send({"t": "call", "id": req["id"], "call": 1, "name": "x\0admin", "args": []})
        reply = recv()
        send({"t": "out", "id": req["id"], "fd": 1, "data": reply["error"]["name"].encode()})
        send(result(req, value=1))
    elif MODE == "bind-replay-twice":
        send({"t": "call", "id": req["id"], "call": 1, "name": "x", "args": []})
        recv()
        send(result(req, value=1))
        req = recv()
        # the same call id in the next eval
        send({"t": "call", "id": req["id"], "call": 1, "name": "x", "args": []})
    elif MODE == "reply-to-nobody":
        send({"t": "reply", "call": 1, "ok": True, "value": 1})
    elif MODE == "flood-tiny":
        frame = msgpack.packb({"t": "out", "id": req["id"], "fd": 1, "data": b"z"},
                              use_bin_type=True)
        one = struct.pack("<I", len(frame)) + frame
        chunk = one * 4096
        for _ in range(300):  # 1,228,800 one-byte frames: over the 1 MiB cap
            os.write(CH, chunk)
        send(result(req, value=1))
    elif MODE == "big-out":
        send({"t": "out", "id": req["id"], "fd": 1, "data": b"y" * (65536 + 1)})
    elif MODE == "result-over-cap":
        # the worker's own cap check is skipped: 16 MiB + 32 KiB of value
        send(result(req, value="x" * ((16 << 20) + (32 << 10))))
    elif MODE.startswith("display-"):
        d = result(req, **DISPLAYS[MODE])
        if not d["ok"]:
            del d["value"]
        send(d)
    elif MODE == "out-bad-fd":
        send({"t": "out", "id": req["id"], "fd": 7, "data": b"x"})
    elif MODE.startswith("amp-"):
        send_raw(amplifier(req))
    elif MODE == "honest":
        send({"t": "out", "id": req["id"], "fd": 1, "data": b"hi\xff\n"})
        send(result(req, value={"a": [1, 2.5, "\u00e9"]}))
    time.sleep(5)


main()
