"""Guest values arriving at the host (DESIGN.md section 5), both languages,
seen through `codecage eval --json`. The C library's host->guest->host round
trip of every type is in test_library.py."""
import base64
import math

import pytest

from conftest import ev

# (python code, javascript code, expected JSON value)
CASES = [
    ("None", "null", None),
    ("None", "undefined", None),
    ("True", "true", True),
    ("1 + 1", "1 + 1", 2),
    ("0.5", "0.5", 0.5),
    ("0.1 * 3", "0.1 * 3", 0.30000000000000004),
    ("7.0", "3.5 * 2", 7.0),
    ("'h\u00e9llo \u4e2d \U0001F600'", "'h\u00e9llo \u4e2d \U0001F600'", "h\u00e9llo \u4e2d \U0001F600"),
    ("''", "''", ""),
    ("[1, [2, [3]]]", "[1, [2, [3]]]", [1, [2, [3]]]),
    ("(1, 'a')", "[1, 'a']", [1, "a"]),
    ("{'a': 1, 'b': [None]}", "({a: 1, b: [null]})", {"a": 1, "b": [None]}),
    ("{}", "({})", {}),
]


@pytest.mark.parametrize("py,js,want", CASES)
def test_plain_values(lang, py, js, want):
    r = ev(lang, py if lang == "python" else js)
    assert r.rc == 0, r
    assert r.value == want
    assert type(r.value) is type(want)


def test_float_tag_kept(lang):
    """7.0 stays a float on the wire: the JSON text has a decimal point."""
    r = ev(lang, "7.0" if lang == "python" else "3.5 * 2")
    assert '"value": 7.0' in r.stdout


def test_int64_extremes(lang):
    code = "[2**63 - 1, -2**63]" if lang == "python" else "[2**53, -(2**53)]"
    r = ev(lang, code)
    if lang == "python":
        assert r.value == [2**63 - 1, -2**63]
    else:
        # JavaScript numbers beyond int32 are float64 in QuickJS
        assert r.value == [2.0**53, -2.0**53]


@pytest.mark.parametrize("name,py,js", [
    ("NaN", "float('nan')", "NaN"),
    ("Infinity", "float('inf')", "Infinity"),
    ("-Infinity", "-float('inf')", "-Infinity"),
])
def test_non_finite_floats_are_tagged(lang, name, py, js):
    r = ev(lang, py if lang == "python" else js)
    assert r.value == {"$float": name}


def test_negative_zero(lang):
    r = ev(lang, "-0.0" if lang == "python" else "-0")
    assert '"value": -0.0' in r.stdout
    assert math.copysign(1, r.value) == -1


def test_big_integers(lang):
    r = ev(lang, "-(10**30) - 7" if lang == "python" else "-(10n**30n) - 7n")
    assert r.value == {"$bigint": "-1000000000000000000000000000007"}


def test_bigint_over_digit_cap_refused(lang):
    r = ev(lang, "10**4300" if lang == "python" else "10n**4300n")
    assert r.kind == "guest_error", r
    assert "4300" in r.json["error"]["message"]


def test_lone_surrogates_become_replacement_chars(lang):
    code = "'a\\ud800b\\udfffc'"
    r = ev(lang, code)
    assert r.rc == 0, r
    assert r.value == "a\ufffdb\ufffdc"


def test_bytes(lang):
    code = "b'\\x00\\xffhi'" if lang == "python" else "new Uint8Array([0, 255, 104, 105])"
    r = ev(lang, code)
    assert base64.b64decode(r.value["$bytes"]) == b"\x00\xffhi"
    if lang == "javascript":
        r = ev(lang, "new Uint8Array([1, 2]).buffer")
        assert base64.b64decode(r.value["$bytes"]) == b"\x01\x02"
    else:
        r = ev(lang, "bytearray(b'ab')")
        assert base64.b64decode(r.value["$bytes"]) == b"ab"


def test_dates(lang):
    code = ("import datetime\ndatetime.datetime(2024, 2, 29, 12, 30, 15, 250000, "
            "tzinfo=datetime.timezone.utc)") if lang == "python" else \
        "new Date(Date.UTC(2024, 1, 29, 12, 30, 15, 250))"
    r = ev(lang, code)
    assert r.value == {"$date": "2024-02-29T12:30:15.250000Z"}, r


# Issue 27: the types beyond JSON's, as the CLI's --json (and MCP's
# structuredContent, the same writer: src/frontend/json_out.c) tags them.
PY_TAGGED = [
    ("datetime.datetime(2024, 2, 29, 12, 30, tzinfo=datetime.timezone("
     "datetime.timedelta(hours=5, minutes=30)))", {"$date": "2024-02-29T12:30:00.000000+05:30"}),
    ("datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone(-datetime.timedelta("
     "hours=23, minutes=59, seconds=59, microseconds=999999)))",
     {"$date": "2024-01-01T00:00:00.000000-23:59:59.999999"}),
    ("datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)",
     {"$date": "2024-01-01T00:00:00.000000Z"}),
    ("datetime.date(2024, 2, 29)", {"$day": "2024-02-29"}),
    ("datetime.date.min", {"$day": "0001-01-01"}),
    ("datetime.date.max", {"$day": "9999-12-31"}),
    ("datetime.timedelta(days=1, hours=2, minutes=3, seconds=4, microseconds=500000)",
     {"$timedelta": "P1DT2H3M4.5S"}),
    ("datetime.timedelta(microseconds=-1)", {"$timedelta": "-PT0.000001S"}),
    ("datetime.timedelta(0)", {"$timedelta": "PT0S"}),
    ("datetime.timedelta(days=-3)", {"$timedelta": "-P3D"}),
    ("datetime.timedelta.max", {"$timedelta": "P999999999DT23H59M59.999999S"}),
    ("datetime.timezone(datetime.timedelta(hours=-5), 'EST')", {"$timezone": "-05:00"}),
    ("datetime.timezone.utc", {"$timezone": "+00:00"}),
    ("pathlib.PurePosixPath('/tmp/\u00e9t\u00e9/a b')", {"$path": "/tmp/\u00e9t\u00e9/a b"}),
    ("pathlib.Path('rel')", {"$path": "rel"}),
]


@pytest.mark.parametrize("code,want", PY_TAGGED)
def test_python_dates_durations_zones_and_paths_are_tagged(code, want):
    r = ev("python", "import datetime, pathlib\n" + code)
    assert r.rc == 0 and r.value == want, r


def test_text_mode_shows_them_as_iso_8601_and_paths_as_text():
    from conftest import cli
    for code, want in (("datetime.date(2024, 2, 29)", "2024-02-29"),
                       ("datetime.timedelta(hours=-1)", "-PT1H"),
                       ("pathlib.PurePosixPath('/a/b')", "/a/b"),
                       ("[pathlib.PurePosixPath('/a')]", '["/a"]')):
        r = cli("eval", "--lang", "python", "--sandbox", "auto",
                "import datetime, pathlib\n" + code)
        assert r.rc == 0 and r.stdout == want + "\n" and not r.stderr, r


def test_map_with_string_keys(lang):
    if lang == "javascript":
        r = ev(lang, "new Map([['k', 1], ['j', [true]]])")
        assert r.value == {"k": 1, "j": [True]}
    else:
        r = ev(lang, "dict(k=1, j=[True])")
        assert r.value == {"k": 1, "j": [True]}


def test_key_order_kept(lang):
    code = "{'z': 1, 'a': 2, 'm': 3}" if lang == "python" else "({z: 1, a: 2, m: 3})"
    r = ev(lang, code)
    assert list(r.value) == ["z", "a", "m"]


def test_depth_at_cap_passes_past_cap_refused(lang):
    if lang == "python":
        at = "v = 0\nfor _ in range(100): v = [v]\nv"
        past = "v = 0\nfor _ in range(101): v = [v]\nv"
    else:
        at = "let v = 0; for (let i = 0; i < 100; i++) v = [v]; v"
        past = "let w = 0; for (let i = 0; i < 101; i++) w = [w]; w"
    r = ev(lang, at)
    assert r.rc == 0, r
    depth, v = 0, r.value
    while isinstance(v, list):
        depth, v = depth + 1, v[0]
    assert depth == 100
    r = ev(lang, past)
    assert r.kind == "guest_error" and "100" in r.json["error"]["message"], r


def test_cycle_refused(lang):
    code = "a = []\na.append(a)\na" if lang == "python" else "const a = []; a.push(a); a"
    r = ev(lang, code)
    assert r.kind == "guest_error", r
    assert r.json["error"]["type"] == "TypeError"


@pytest.mark.parametrize("py,js", [
    ("lambda: 1", "[() => 1]"),
    ("{1, 2}", "Symbol('s')"),
    ("object()", "new (class Foo {})()"),
    ("{1: 2}", "new Map([[1, 2]])"),
])
def test_unconvertible_values_refused_clearly(lang, py, js):
    r = ev(lang, py if lang == "python" else js)
    assert r.rc == 1 and r.kind == "guest_error", r
    assert r.json["error"]["type"] == "TypeError"
    assert r.json["error"]["message"], "the message says what can be returned"


@pytest.mark.parametrize("js", [
    "(function f() {})",
    "() => 1",
    "(async function () {})",
    "(class Foo {})",
    "(function* g() {})",
    "Math.max.bind(null)",
    "new Proxy(function () {}, {})",
    # a UMD bundle's shape: the library is defined, the last value is a function
    "var lib = {answer: 42}; (function (root, factory) { root.lib2 = factory(); })(this, "
    "function () { return lib; }); lib2.answer; (function () { return lib2; })",
])
def test_function_completion_value_is_null(js):
    """A script whose completion value is a function succeeds with null:
    the bundle loaded (before, "cannot return a function" failed the eval)."""
    r = ev("javascript", js)
    assert r.rc == 0 and r.kind == "ok", r
    assert r.value is None


def test_function_inside_a_value_still_refused():
    for js in ("[() => 1]", "({f() {}})", "new Map([['f', () => 1]])"):
        r = ev("javascript", js)
        assert r.kind == "guest_error" and r.json["error"]["type"] == "TypeError", r
        assert "function" in r.json["error"]["message"], r


def test_result_over_cap_is_output_limit(lang):
    code = "'x' * (17 * 1024 * 1024)" if lang == "python" else "'x'.repeat(17 * 1024 * 1024)"
    r = ev(lang, code)
    assert r.kind == "output_limit", r
    assert r.rc == 5


def test_too_many_values_is_output_limit(lang):
    """The node budget is one per 8 bytes of the 16 MiB cap: 2,097,152. The
    decoded tree may also take at most 3x max_result of host memory (about
    88 bytes per small number: some 570,000 of them); the worker checks
    that itself and reports it as output_limit."""
    code = "[0] * 3000000" if lang == "python" else "new Array(3000000).fill(0)"
    r = ev(lang, code)
    assert r.kind == "output_limit", r
    assert "2097152" in r.json["error"]["message"]
    code = "[0] * 1000000" if lang == "python" else "new Array(1000000).fill(0)"
    r = ev(lang, code)
    assert r.kind == "output_limit", r
    assert "host memory" in r.json["error"]["message"] and "3x max_result" in \
        r.json["error"]["message"], r
    code = "[0] * 500000" if lang == "python" else "new Array(500000).fill(0)"
    r = ev(lang, code)
    assert r.rc == 0 and len(r.value) == 500000


def test_floats_print_like_python_repr():
    floats = "[1000.0, 0.1, 123.456, 1e-05, 1e+16, -0.0, 2.5e-300, 0.30000000000000004, " \
             "1000000000000000.0, 1.2345678901234568e+17, 5e-324]"
    r = ev("python", floats)
    assert '"value": %s' % floats in r.stdout
