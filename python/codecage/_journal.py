"""The agent session's journal: values, signing and the checks on load.

A dump is ``MAGIC`` (8 bytes, which also carry the format version), an
HMAC-SHA256 tag (32 bytes) over ``MAGIC + body`` under the host's key, and
the body: UTF-8 JSON. Nothing in the body is trusted before the tag
checks, and it is checked field by field after (``check``), so a journal
made by a buggy or older writer is refused as ``InvalidInputError`` rather
than half replayed.

Values (tool arguments and results) are stored tagged, so that every value
that crosses the boundary (DESIGN.md section 5) comes back as the same
value: every dict is ``{"$map": {...}}``, bytes are ``{"$bytes": base64}``,
datetimes ``{"$datetime": isoformat}`` (naive ones as UTC; an aware one at
its own offset, and ``[isoformat, name]`` when its zone has a name), dates
``{"$date": isoformat}``, timedeltas ``{"$timedelta": [days, seconds,
microseconds]}``, timezones ``{"$timezone": [offset microseconds, name or
null]}``, PurePosixPaths ``{"$path": text}``, floats that JSON lacks (NaN,
+-Infinity) ``{"$float": "nan"}``; lists and tuples are lists.

The journal is capped (``AgentSession(max_journal_bytes=,
max_journal_calls=)``): ``size`` and the ``*_cost`` functions measure
what each eval, call and outcome adds to the dump, as upper bounds. An
eval whose calls were refused for the cap records how many (``refused``,
the calls after its recorded ones), so that replay refuses them again.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import json
import math
import pathlib
from typing import Any, Dict, List

from .errors import InvalidInputError

MAGIC = b"CCAGENT1"
VERSION = 1
TAG_LEN = 32

#: The journal's caps by default (``AgentSession(max_journal_bytes=,
#: max_journal_calls=)``): the bytes of :meth:`AgentSession.dump` and the
#: tool calls it records, over the session's life.
DEFAULT_MAX_BYTES = 64 << 20
DEFAULT_MAX_CALLS = 10_000
#: The least max_journal_bytes: a journal's header and an eval or two.
MIN_MAX_BYTES = 4096
#: Room kept with each call for an outcome that replaces one over the cap
#: (JournalFullError's, a few hundred bytes).
OUTCOME_RESERVE = 1024


class NotJournalable(Exception):
    """A value the journal (and so the guest) cannot take."""


def encode(v: Any, depth: int = 0) -> Any:
    """A JSON-ready copy of ``v``; raises NotJournalable."""
    if depth > 64:
        raise NotJournalable("values nest deeper than 64 levels")
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        if math.isfinite(v):
            return float(v)
        return {"$float": repr(float(v))}
    if isinstance(v, (bytes, bytearray, memoryview)):
        return {"$bytes": base64.b64encode(bytes(v)).decode("ascii")}
    if isinstance(v, datetime.datetime):
        # what the host and guest see: the offset kept (and the zone's
        # name), a naive datetime as UTC
        if v.tzinfo is None or v.utcoffset() is None:
            return {"$datetime": v.replace(tzinfo=datetime.timezone.utc).isoformat()}
        # the name that crosses (src/common/py_objects.c): a timezone's
        # own, or another tzinfo's tzname()
        tz = v.tzinfo
        name = ((tz.__getinitargs__() + (None,))[1] if isinstance(tz, datetime.timezone)
                else v.tzname())
        off = v.utcoffset()
        if off == datetime.timedelta(0) and name in (None, "UTC"):
            return {"$datetime": v.astimezone(datetime.timezone.utc).isoformat()}
        return {"$datetime": [v.isoformat(), name] if isinstance(name, str) else v.isoformat()}
    if isinstance(v, datetime.date):
        return {"$date": v.isoformat()}
    if isinstance(v, datetime.timedelta):
        return {"$timedelta": [v.days, v.seconds, v.microseconds]}
    if isinstance(v, datetime.timezone):
        args = v.__getinitargs__()
        return {"$timezone": [args[0] // datetime.timedelta(microseconds=1),
                              args[1] if len(args) > 1 else None]}
    if isinstance(v, pathlib.PurePosixPath):
        return {"$path": str(v)}
    if isinstance(v, (list, tuple)):
        return [encode(x, depth + 1) for x in v]
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if not isinstance(k, str):
                raise NotJournalable(f"a dict key of type {type(k).__name__} (keys must be str)")
            out[k] = encode(x, depth + 1)
        return {"$map": out}
    raise NotJournalable(f"a value of type {type(v).__name__}")


def decode(v: Any, depth: int = 0) -> Any:
    """The value ``encode`` stored; raises InvalidInputError for anything
    ``encode`` never writes."""
    if depth > 66:
        raise InvalidInputError("the journal's values nest too deeply")
    if v is None or isinstance(v, (bool, str, int, float)):
        return v
    if isinstance(v, list):
        return [decode(x, depth + 1) for x in v]
    if isinstance(v, dict) and len(v) == 1:
        (tag, x), = v.items()
        try:
            if tag == "$map" and isinstance(x, dict):
                return {k: decode(y, depth + 1) for k, y in x.items()}
            if tag == "$bytes" and isinstance(x, str):
                return base64.b64decode(x.encode("ascii"), validate=True)
            if tag == "$datetime" and isinstance(x, str):
                return datetime.datetime.fromisoformat(x)
            if (tag == "$datetime" and isinstance(x, list) and len(x) == 2 and
                    all(isinstance(y, str) for y in x)):
                d = datetime.datetime.fromisoformat(x[0])
                if d.tzinfo is not None:
                    return d.replace(tzinfo=datetime.timezone(d.utcoffset(), x[1]))
            if tag == "$date" and isinstance(x, str):
                return datetime.date.fromisoformat(x)
            if (tag == "$timedelta" and isinstance(x, list) and len(x) == 3 and
                    all(type(y) is int for y in x)):
                return datetime.timedelta(days=x[0], seconds=x[1], microseconds=x[2])
            if (tag == "$timezone" and isinstance(x, list) and len(x) == 2 and
                    type(x[0]) is int and (x[1] is None or isinstance(x[1], str))):
                off = datetime.timedelta(microseconds=x[0])
                return datetime.timezone(off) if x[1] is None else datetime.timezone(off, x[1])
            if tag == "$path" and isinstance(x, str):
                return pathlib.PurePosixPath(x)
            if tag == "$float" and x in ("nan", "inf", "-inf"):
                return float(x)
        except (ValueError, OverflowError, TypeError):
            pass
    raise InvalidInputError("the journal holds a value codecage does not write")


def canonical(v: Any) -> str:
    """Encoded value as comparable text (arguments on replay)."""
    return json.dumps(v, sort_keys=True, separators=(",", ":"), allow_nan=False)


def check_key(key: Any) -> bytes:
    if isinstance(key, str):
        key = key.encode("utf-8")
    if not isinstance(key, (bytes, bytearray)) or len(key) < 16:
        raise InvalidInputError("the journal key must be bytes (or str) of at least 16 bytes: "
                                "pass key= to AgentSession and AgentSession.load")
    return bytes(key)


def _text(v: Any) -> bytes:
    return json.dumps(v, sort_keys=True, separators=(",", ":"), allow_nan=False,
                      ensure_ascii=False).encode("utf-8")


def size(v: Any) -> int:
    """Bytes ``v`` takes in a dump's body (``sign``'s JSON)."""
    return len(_text(v))


def dump_size(body: Dict[str, Any]) -> int:
    """Bytes of ``sign(body, key)``."""
    return len(MAGIC) + TAG_LEN + size(body)


def call_cost(call: Dict[str, Any], idx: int) -> int:
    """What recording ``call`` (its outcome still None) as call ``idx`` of
    an eval adds to the dump at most, its answer's index in ``order``
    included: an upper bound, so that a dump never passes its cap."""
    return size(call) + 1 + len(str(idx)) + 1


def outcome_cost(outcome: Dict[str, Any]) -> int:
    """What replacing a call's ``"outcome":null`` by ``outcome`` adds."""
    return size(outcome) - len("null")


def eval_cost(entry: Dict[str, Any]) -> int:
    """What a new eval entry (no calls yet, not ended) adds at most: its
    end ("ok", "timeout", ...: at most 32 bytes) and a "refused" count
    included."""
    return size(entry) + 1 + 32 + len(',"refused":') + 20


def sign(body: Dict[str, Any], key: bytes) -> bytes:
    text = _text(body)
    tag = hmac.new(key, MAGIC + text, hashlib.sha256).digest()
    return MAGIC + tag + text


def verify(data: Any, key: bytes) -> Dict[str, Any]:
    """The body of a dump, after its tag checked; InvalidInputError for
    anything else (wrong type, another format, truncated, tampered, wrong
    key, malformed body)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InvalidInputError("a journal is the bytes AgentSession.dump() returned")
    data = bytes(data)
    if len(data) < len(MAGIC) + TAG_LEN or data[:len(MAGIC) - 1] != MAGIC[:-1]:
        raise InvalidInputError("this is not an agent session journal (or it is truncated)")
    if data[:len(MAGIC)] != MAGIC:
        raise InvalidInputError("this journal's format version is not one this codecage reads "
                                f"(it reads version {VERSION})")
    tag, text = data[len(MAGIC):len(MAGIC) + TAG_LEN], data[len(MAGIC) + TAG_LEN:]
    want = hmac.new(key, MAGIC + text, hashlib.sha256).digest()
    if not hmac.compare_digest(tag, want):
        raise InvalidInputError("the journal's signature does not match: it was changed or "
                                "truncated, or signed with another key; nothing was run")
    try:
        body = json.loads(text.decode("utf-8"))
    except ValueError:
        raise InvalidInputError("the journal's body is not valid JSON") from None
    check(body)
    return body


def _need(cond: bool, what: str) -> None:
    if not cond:
        raise InvalidInputError(f"malformed journal: {what}")


def _is_int(v: Any, lo: int = 0) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= lo


def check(b: Any) -> None:
    """Every field of a journal body, or InvalidInputError."""
    _need(isinstance(b, dict), "the body is not an object")
    _need(b.get("v") == VERSION, "unknown version")
    _need(b.get("language") in ("javascript", "python"), "language")
    _need(isinstance(b.get("seed"), str) and len(b["seed"]) == 64, "seed")
    try:
        bytes.fromhex(b["seed"])
    except ValueError:
        _need(False, "seed")
    _need(b.get("bootstrap") is None or isinstance(b["bootstrap"], str), "bootstrap")
    _need(isinstance(b.get("approval_required"), list) and
          all(isinstance(n, str) for n in b["approval_required"]), "approval_required")
    _need(b.get("max_calls") is None or _is_int(b["max_calls"]), "max_calls")
    _need(isinstance(b.get("per_tool"), dict) and
          all(_is_int(n) for n in b["per_tool"].values()), "per_tool")
    _need(isinstance(b.get("evals"), list), "evals")
    ids = 0
    for i, e in enumerate(b["evals"]):
        _need(isinstance(e, dict) and isinstance(e.get("code"), str), f"eval {i}")
        _need(isinstance(e.get("clock"), (int, float)) and not isinstance(e["clock"], bool),
              f"eval {i}: clock")
        _need(e.get("end") is None or isinstance(e["end"], str), f"eval {i}: end")
        _need(i == len(b["evals"]) - 1 or e.get("end") is not None,
              f"eval {i} is unfinished but not the last")
        calls = e.get("calls")
        _need(isinstance(calls, list), f"eval {i}: calls")
        for c in calls:
            _need(isinstance(c, dict) and _is_int(c.get("id"), ids + 1) and
                  isinstance(c.get("tool"), str) and isinstance(c.get("args"), list) and
                  isinstance(c.get("kwargs"), dict), f"eval {i}: a call")
            ids = c["id"]
            o = c.get("outcome")
            _need(o is None or (isinstance(o, dict) and (
                ("value" in o and len(o) == 1) or
                (isinstance(o.get("error"), list) and len(o["error"]) == 3 and len(o) == 1 and
                 all(isinstance(x, str) for x in o["error"])))), f"eval {i}: an outcome")
        _need("refused" not in e or _is_int(e["refused"], 1), f"eval {i}: refused")
        order = e.get("order")
        _need(isinstance(order, list) and all(_is_int(k) and k < len(calls) for k in order)
              and len(set(order)) == len(order), f"eval {i}: answer order")
        _need(sorted(order) == [k for k, c in enumerate(calls) if c.get("outcome") is not None],
              f"eval {i}: answers and outcomes disagree")


def value_list(v: List[Any]) -> List[Any]:
    return [decode(x) for x in v]
