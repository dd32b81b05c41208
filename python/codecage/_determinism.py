"""What makes an agent session's guest reproducible on replay: its random
sources and its clock come from the journal.

The guest's randomness and time come from the engine: Python's ``random``
(seeded from ``os.urandom`` at import), ``os.urandom`` itself (the
``getrandom`` system call; ``secrets``, ``uuid.uuid4``,
``random.SystemRandom`` use it), ``time.time``/``time.time_ns`` and
``datetime``'s ``now``/``today``/``utcnow``; JavaScript's ``Math.random``
(QuickJS seeds it from the time) and ``Date``. The session runs the code
below once, at start, before any code of the caller's: each source is
replaced by a deterministic one, seeded from the journal's 32-byte
``seed``, and the clock is virtual. Before each eval the session sets the
guest global ``__cc_clock`` to the eval's start time (milliseconds since
the epoch, host wall clock when first run, the journal's on replay); each
read of the clock returns that plus 1 ms per read so far in the eval, so
time moves forward and the same reads give the same times.

Not reproduced (a replay that depends on them may diverge, which load
reports as ``ReplayDivergenceError``): ``time.monotonic``,
``time.perf_counter``, ``time.process_time`` (real, for measuring);
Python's string hash seed (so the iteration order of a set of strings);
object ids; sources the guest reaches around these (``_random`` directly,
``getrandom`` through ctypes; a fresh ``random.Random()`` seeds from the
patched ``os.urandom``, so it is covered); anything timing-dependent, except the order in which concurrent
tool calls were answered, which the replay keeps.
"""

from __future__ import annotations

PY = r'''
def __cc_determinism(seed_hex):
    import datetime as _dt, hashlib as _hl, os as _os, random as _random, time as _time
    seed = bytes.fromhex(seed_hex)
    g = globals()
    st = {"n": 0, "last": None, "now": 0.0}

    def urandom(n):
        n = int(n)
        if n < 0:
            raise ValueError("negative argument not allowed")
        out = bytearray()
        while len(out) < n:
            st["n"] += 1
            out += _hl.sha256(seed + b"urandom" + st["n"].to_bytes(8, "little")).digest()
        return bytes(out[:n])

    def vnow():
        c = g.get("__cc_clock")
        if c != st["last"]:
            st["last"] = c
            st["now"] = float(c or 0) / 1000.0
        st["now"] += 0.001
        return st["now"]

    _os.urandom = urandom
    _random._urandom = urandom
    real_seed = _random.Random.seed

    def seed_(self, a=None, version=2):
        if a is None:  # random.Random(): the C code would read the kernel's
            a = int.from_bytes(urandom(32), "big")
        return real_seed(self, a, version)

    _random.Random.seed = seed_
    _random.seed(seed)
    _time.time = vnow
    _time.time_ns = lambda: int(round(vnow() * 1000)) * 1000000

    class datetime(_dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return cls.fromtimestamp(vnow(), tz)

        @classmethod
        def utcnow(cls):
            return cls.fromtimestamp(vnow(), _dt.timezone.utc).replace(tzinfo=None)

        @classmethod
        def today(cls):
            return cls.fromtimestamp(vnow())

    class date(_dt.date):
        @classmethod
        def today(cls):
            return cls.fromtimestamp(vnow())

    datetime.__name__ = datetime.__qualname__ = "datetime"
    datetime.__module__ = date.__module__ = "datetime"
    _dt.datetime = datetime
    _dt.date = date


__cc_determinism(%r)
del __cc_determinism
'''

JS = r'''
(() => {
  const s = %s;
  let a = s[0] | 0, b = s[1] | 0, c = s[2] | 0, d = s[3] | 0;
  // sfc32, seeded from the journal
  const next = () => {
    a |= 0; b |= 0; c |= 0; d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 16; i++) next();
  Math.random = function random() { return (next() * 2097152 + (next() >>> 11)) / 9007199254740992; };
  const RealDate = Date;
  let last, now = 0;
  const vnow = () => {
    const c = globalThis.__cc_clock;
    if (c !== last) { last = c; now = +c || 0; }
    now += 1;
    return now;
  };
  const VDate = function Date(...args) {
    if (!new.target) return new RealDate(vnow()).toString();
    return args.length ? new RealDate(...args) : new RealDate(vnow());
  };
  Object.defineProperty(VDate, 'prototype', { value: RealDate.prototype });
  VDate.now = function now() { return vnow(); };
  VDate.parse = RealDate.parse;
  VDate.UTC = RealDate.UTC;
  globalThis.Date = VDate;
})();
undefined
'''


def bootstrap(language: str, seed_hex: str) -> str:
    """The code that seeds ``language``'s guest from ``seed_hex`` (64 hex
    digits) and gives it the virtual clock."""
    if language == "python":
        return PY % seed_hex
    words = [int(seed_hex[i:i + 8], 16) for i in range(0, 32, 8)]
    return JS % (words,)
