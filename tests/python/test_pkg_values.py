"""Property tests: values cross the boundary and come back as DESIGN.md
section 5 says, through set_global (host -> guest), eval (guest -> host) and
tool calls (both ways), in both languages."""
import datetime
import math
import pathlib
import zoneinfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccpkg  # noqa: F401  (builds the package)

import codecage
from codecage import IsolatedRuntime

UTC = datetime.timezone.utc
SETTINGS = settings(max_examples=100, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
keys = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


def datetimes(ms_only):
    d = st.datetimes(min_value=datetime.datetime(1, 1, 1),
                     max_value=datetime.datetime(9999, 12, 31, 23, 59, 59))
    if ms_only:
        d = d.map(lambda x: x.replace(microsecond=x.microsecond // 1000 * 1000))
    return d


US = datetime.timedelta(microseconds=1)
# every offset Python allows: strictly within a day, to the microsecond
offsets = st.timedeltas(min_value=-datetime.timedelta(hours=24) + US,
                        max_value=datetime.timedelta(hours=24) - US)
timezones = st.one_of(st.builds(datetime.timezone, offsets),
                      st.builds(datetime.timezone, offsets, text))
paths = st.builds(pathlib.PurePosixPath, text)


def aware_datetimes(lang):
    # JavaScript: its Date holds the instant; keep it in years 1..9999 in UTC
    lo, hi = (datetime.datetime(2, 1, 1), datetime.datetime(9998, 12, 31)) \
        if lang == "javascript" else (datetime.datetime(1, 1, 1), datetime.datetime.max)
    return st.datetimes(min_value=lo, max_value=hi, timezones=timezones)


def scalars(lang):
    ints = (st.integers(-2**31, 2**31 - 1) if lang == "javascript"
            else st.integers(-2**63, 2**63 - 1))
    return st.one_of(st.none(), st.booleans(), ints,
                     st.floats(allow_nan=True, allow_infinity=True), text, st.binary(max_size=40),
                     datetimes(lang == "javascript"),
                     st.integers(min_value=2**64, max_value=10**200),
                     st.integers(max_value=-2**64, min_value=-10**200),
                     # issue 27: these cross as themselves (JavaScript: the
                     # nearest equivalent, expected() below)
                     st.dates(), st.timedeltas(), timezones, aware_datetimes(lang), paths)


def values(lang):
    return st.recursive(scalars(lang),
                        lambda kids: st.one_of(st.lists(kids, max_size=5),
                                               st.dictionaries(keys, kids, max_size=5)),
                        max_leaves=25)


def expected(v, lang):
    """What v comes back as."""
    if isinstance(v, tuple):
        v = list(v)
    if isinstance(v, list):
        return [expected(x, lang) for x in v]
    if isinstance(v, dict):
        return {k: expected(x, lang) for k, x in v.items()}
    if isinstance(v, datetime.datetime):
        if v.tzinfo is None:
            return v.replace(tzinfo=UTC)
        if lang == "javascript":  # a Date: the instant, to the millisecond
            u = v.astimezone(UTC)
            return u.replace(microsecond=u.microsecond // 1000 * 1000)
        if v.utcoffset() == datetime.timedelta(0) and v.tzname() in ("UTC", None):
            return v.astimezone(UTC)
        return v  # its offset and zone name kept
    if lang == "javascript":
        # README's Values table: a date is the Date of its UTC midnight, a
        # timedelta its milliseconds, a timezone its offset's ISO text, a
        # path its text
        if isinstance(v, datetime.date):
            return datetime.datetime(v.year, v.month, v.day, tzinfo=UTC)
        if isinstance(v, datetime.timedelta):
            sec = v.days * 86400 + v.seconds
            return float(sec) * 1000.0 + (v.microseconds * 1000) / 1e6
        if isinstance(v, datetime.timezone):
            return iso_offset(v.utcoffset(None))
        if isinstance(v, pathlib.PurePath):
            return str(v)
    if lang == "javascript" and isinstance(v, float) and v.is_integer() and abs(v) < 2**31 \
            and not (v == 0 and math.copysign(1, v) < 0):
        return v  # compared loosely below: QuickJS may hold it as an int
    return v


def iso_offset(d):
    """A UTC offset as datetime.isoformat() writes it: +HH:MM[:SS[.ffffff]]."""
    text = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone(d)).isoformat()[19:]
    return text or "+00:00"


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a):
            return math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, float) or isinstance(b, float):
        # JavaScript has one number type: an integral float may come back
        # as an int (the engine's tag decides), never with another value.
        return (isinstance(a, (int, float)) and isinstance(b, (int, float)) and
                not isinstance(a, bool) and not isinstance(b, bool) and a == b)
    if type(a) is not type(b):
        return False
    # aware datetimes compare their instants, timezones their offsets:
    # themselves also means the same offset and the same zone name
    if isinstance(a, datetime.datetime) and a.tzinfo is not None:
        return a == b and a.utcoffset() == b.utcoffset() and a.tzname() == b.tzname()
    if isinstance(a, datetime.timezone):
        return a == b and a.tzname(None) == b.tzname(None) and repr(a) == repr(b)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        # JavaScript orders integer-like keys first; Python keeps insertion order.
        return sorted(a) == sorted(b) and all(same(a[k], b[k]) for k in a)
    return a == b


@pytest.fixture(scope="module", params=["javascript", "python"])
def rt(request):
    with IsolatedRuntime(language=request.param, sandbox="require") as r:
        r.bind_function("echo", lambda *a: list(a))
        yield r


@SETTINGS
@given(data=st.data())
def test_set_global_then_eval_round_trip(rt, data):
    v = data.draw(values(rt.language))
    rt.set_global("x", v)
    back = rt.eval("x")
    assert same(expected(v, rt.language), back), (v, back)


@SETTINGS
@given(data=st.data())
def test_tool_arguments_and_results_round_trip(rt, data):
    v = data.draw(values(rt.language))
    rt.set_global("x", v)
    back = rt.eval("echo(x)[0]" if rt.language == "javascript" else "echo(x)[0]")
    assert same(expected(v, rt.language), back), (v, back)


@SETTINGS
@given(s=st.text(max_size=30))
def test_lone_surrogates_become_replacement_characters(rt, s):
    rt.set_global("x", s)
    fixed = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in s)
    assert rt.eval("x") == fixed


@pytest.mark.parametrize("s, fixed", [
    ("\ud83d\ude00", "\ufffd\ufffd"),  # a high then a low: two code points, two U+FFFD
    ("a\udc00\ud800b", "a\ufffd\ufffdb"),  # a low then a high
    ("\u4e2d\ud800\u20ac", "\u4e2d\ufffd\u20ac"),  # after 3-byte characters
])
def test_surrogates_in_a_row_are_each_replaced_both_ways(rt, s, fixed):
    """The host's str and the guest's str are repaired alike (one helper,
    issue 22): set_global (host -> guest), then back, then a Python guest's
    own str (guest -> host)."""
    rt.set_global("x", s)
    assert rt.eval("x") == fixed
    assert rt.eval("echo(x)[0]") == fixed
    if rt.language == "python":
        assert rt.eval(repr(s)) == fixed


_WEST = datetime.timezone(-datetime.timedelta(hours=5, microseconds=250000))
_EAST = datetime.timezone(datetime.timedelta(hours=9, minutes=30, microseconds=500001))


@pytest.mark.parametrize("d", [
    datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=_WEST),
    datetime.datetime(1970, 1, 1, 0, 0, 0, 250000, tzinfo=_EAST),
    datetime.datetime(1900, 2, 28, 12, 0, 0, 1, tzinfo=_WEST),
    datetime.datetime(1, 1, 1, 12, 0, 0, 999999, tzinfo=_EAST),
    datetime.datetime(1960, 6, 1, 0, 0, 0, 123456),  # naive: taken as UTC
])
def test_datetimes_cross_alike_both_ways(d):
    """The host's conversion and the Python guest's agree to the
    microsecond, offsets' microseconds included (issue 22: the host
    truncated utcoffset().total_seconds()): host -> guest is checked by the
    guest against the same datetime it builds itself, guest -> host
    against the host's own."""
    want = d.replace(tzinfo=UTC) if d.tzinfo is None else d
    with IsolatedRuntime(language="python") as rt:
        rt.set_global("d", d)
        rt.eval("import datetime\nD = %r\nif D.tzinfo is None:\n"
                "    D = D.replace(tzinfo=datetime.timezone.utc)" % d)
        assert rt.eval("(d - D) // datetime.timedelta(microseconds=1)") == 0
        # issue 27: an aware datetime keeps its offset (it came back in UTC)
        assert rt.eval("d.tzinfo == D.tzinfo and d.utcoffset() == D.utcoffset()")
        back = rt.eval("D")
        assert back == want and (back - want).total_seconds() == 0
        assert back.utcoffset() == want.utcoffset() and back.tzinfo == want.tzinfo
        assert rt.eval("d") == want
        assert rt.eval("[D, d]") == [want, want]


def test_an_aware_datetime_keeps_its_local_time_at_the_edge_of_year_1():
    """0001-01-01 00:30 at +01:00 is 0000-12-31 23:30 in UTC, which no
    datetime holds: converted to UTC it was refused both ways; kept at its
    offset (issue 27) it crosses. A JavaScript Date before year 1 still
    cannot cross."""
    east = datetime.timezone(datetime.timedelta(hours=1))
    d = datetime.datetime(1, 1, 1, 0, 30, tzinfo=east)
    with IsolatedRuntime(language="python") as rt:
        back = rt.eval("import datetime\n%r" % d)
        assert back == d and back.utcoffset() == d.utcoffset()
        rt.set_global("d", d)
        assert rt.eval("repr(d)") == repr(d)
    with IsolatedRuntime() as rt:
        with pytest.raises(codecage.GuestError) as ei:
            rt.eval("new Date(-62135596800001)")  # 0000-12-31T23:59:59.999Z
        assert ei.value.name == "OverflowError", ei.value


# Issue 27: the edges of each type beyond JSON's, both ways between host
# Python and guest Python, by every route: set_global, a tool's argument
# and result, and the last value the guest builds itself.
EDGES = [
    datetime.date.min, datetime.date.max, datetime.date(2024, 2, 29),
    datetime.timedelta.min, datetime.timedelta.max, datetime.timedelta(0),
    datetime.timedelta(microseconds=1), datetime.timedelta(microseconds=-1),
    datetime.timedelta(days=-1, seconds=3),
    datetime.timezone.utc, datetime.timezone(datetime.timedelta(hours=23, minutes=59)),
    datetime.timezone(-datetime.timedelta(hours=23, minutes=59)),
    datetime.timezone(datetime.timedelta(hours=24) - US),
    datetime.timezone(-datetime.timedelta(hours=24) + US, "\u6771\u4eac"),
    datetime.timezone(datetime.timedelta(0), ""), datetime.timezone(datetime.timedelta(0), "GMT"),
    datetime.datetime(9999, 12, 31, 23, 59, 59, 999999,
                      tzinfo=datetime.timezone(-datetime.timedelta(hours=23, minutes=59))),
    datetime.datetime(1, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=23, minutes=59),
                                                         "far east")),
    datetime.datetime(2024, 6, 1, 12, tzinfo=datetime.timezone(datetime.timedelta(0), "GMT")),
    pathlib.PurePosixPath("/tmp/\u00e9t\u00e9/\u6587\u4ef6 \U0001F600.txt"),
    pathlib.PurePosixPath("relative/../x"), pathlib.PurePosixPath(""),
]


GIVEN = {}


@pytest.fixture(scope="module")
def py_rt():
    with IsolatedRuntime(language="python") as r:
        r.bind_function("echo", lambda *a: list(a))
        r.bind_function("give", lambda: GIVEN["v"])
        yield r


@pytest.mark.parametrize("v", EDGES, ids=repr)
def test_edge_values_cross_as_themselves_every_way(py_rt, v):
    rt = py_rt
    rt.set_global("x", v)
    assert rt.eval("type(x).__name__") == type(v).__name__
    assert rt.eval("repr(x)") == repr(v)  # host -> guest, exactly
    assert same(v, rt.eval("x"))  # guest -> host (the last value)
    assert same(v, rt.eval("echo(x)[0]"))  # a tool's argument and result
    GIVEN["v"] = v
    assert rt.eval("repr(give())") == repr(v)  # a tool's result, in the guest
    built = rt.eval("import datetime\nfrom pathlib import PurePosixPath\n" + repr(v))
    assert same(v, built)  # a value the guest made


def test_a_posix_path_arrives_pure_and_a_zoneinfo_keeps_its_offset_and_name():
    """A guest PosixPath names a file of the sandbox, not of the host: it
    arrives as a PurePosixPath (so does the host's, in the guest). A
    datetime in a tzinfo that is not a datetime.timezone keeps its offset
    at that instant and its tzname()."""
    paris = zoneinfo.ZoneInfo("Europe/Paris")
    with IsolatedRuntime(language="python") as rt:
        back = rt.eval("import pathlib\npathlib.Path('/tmp/x')")
        assert type(back) is pathlib.PurePosixPath and str(back) == "/tmp/x"
        rt.set_global("p", pathlib.Path("/etc"))
        assert rt.eval("type(p).__name__") == "PurePosixPath"
        rt.set_global("d", datetime.datetime(2024, 7, 1, 12, tzinfo=paris))
        assert rt.eval("d.isoformat(), d.tzname()") == ["2024-07-01T12:00:00+02:00", "CEST"]
        with pytest.raises(codecage.InvalidInputError, match="ZoneInfo"):
            rt.set_global("z", paris)  # a tzinfo other than timezone is not a value


def test_javascript_gets_the_nearest_equivalents():
    """README's Values table: a date is the Date of its UTC midnight, a
    timedelta its milliseconds (what subtracting two Dates gives), a
    timezone its offset's ISO 8601 text, a path its text, an aware
    datetime the Date of its instant."""
    with IsolatedRuntime() as rt:
        rt.set_global("v", [datetime.date(2024, 2, 29), datetime.timedelta(days=1, microseconds=1),
                            datetime.timezone(datetime.timedelta(hours=5, minutes=30), "IST"),
                            pathlib.PurePosixPath("/a/\u00e9"),
                            datetime.datetime(2024, 1, 1, 12, tzinfo=datetime.timezone(
                                datetime.timedelta(hours=-5)))])
        got = rt.eval("[v[0].toISOString(), v[1], typeof v[1], v[2], v[3], v[4].toISOString(),"
                      " new Date('2024-01-01T00:00:00' + v[2]).toISOString()]")
        assert got == ["2024-02-29T00:00:00.000Z", 86400000.001, "number", "+05:30", "/a/\u00e9",
                       "2024-01-01T17:00:00.000Z", "2023-12-31T18:30:00.000Z"]


def test_host_python_shapes():
    with IsolatedRuntime(language="python") as rt:
        assert rt.eval("(1, 2)") == [1, 2]
        assert rt.eval("bytearray(b'ab')") == b"ab"
        assert rt.eval("import datetime; datetime.datetime(2020, 5, 17, 1, 2, 3, 4)") == \
            datetime.datetime(2020, 5, 17, 1, 2, 3, 4, tzinfo=UTC)
        assert rt.eval("2 ** 100") == 2 ** 100
    with IsolatedRuntime() as rt:
        assert rt.eval("123n ** 5n") == 123 ** 5
        assert rt.eval("new Map([['a', 1]])") == {"a": 1}
        assert rt.eval("undefined") is None
        assert rt.eval("new Uint8Array([1, 2])") == b"\x01\x02"
        aware = datetime.datetime(2001, 2, 3, 4, 5, 6, tzinfo=datetime.timezone(
            datetime.timedelta(hours=2)))
        rt.set_global("d", aware)
        assert rt.eval("d.toISOString()") == "2001-02-03T02:05:06.000Z"


def test_guest_values_python_cannot_hold():
    from codecage import GuestError
    with IsolatedRuntime() as rt:
        with pytest.raises(GuestError) as ei:
            rt.eval("new Date(8.64e15)")
        assert ei.value.name == "OverflowError"
        with pytest.raises(GuestError, match="TypeError"):
            rt.eval("[function f() {}]")
        assert rt.eval("(function f() {})") is None  # a completion value, not a result
        assert rt.eval("1") == 1


def test_tool_result_that_cannot_cross_fails_the_call():
    with IsolatedRuntime() as rt:
        rt.bind_function("bad", lambda: object())
        assert rt.eval("try { bad() } catch (e) { e.name }") == "ToolResultError"
        rt.bind_function("deep", lambda: [[[[]]]] * 2)
        assert rt.eval("deep().length") == 2


def test_python_code_run_during_conversion_cannot_break_it():
    # A tzinfo's utcoffset() runs while the value is converted; it empties
    # the containers being walked. The conversion works on copies.
    victim, table = [], {}

    class Evil(datetime.tzinfo):
        def utcoffset(self, dt):
            victim.clear()
            table.clear()
            return datetime.timedelta(0)

    d = datetime.datetime(2020, 1, 1, tzinfo=Evil())
    victim.extend([d, "a", "b" * 1000])
    with IsolatedRuntime(language="python") as rt:
        rt.set_global("v", victim)
        assert rt.eval("v[1:]") == ["a", "b" * 1000]
        table.update({"d": d, "x": "y" * 1000})
        rt.set_global("t", table)
        assert rt.eval("t['x']") == "y" * 1000


def test_a_result_too_big_for_host_memory_keeps_the_runtime():
    """An honest worker refuses a value whose decoded tree would take more
    than 3x max_result of host memory (the supervisor's cap) before sending
    it: OutputLimitError, and the runtime lives on."""
    for lang, code in (("python", "[0] * 1000000"), ("javascript", "new Array(1e6).fill(0)")):
        with codecage.IsolatedRuntime(language=lang) as rt:
            with pytest.raises(codecage.OutputLimitError, match="3x max_result"):
                rt.eval(code)
            assert rt.alive and rt.eval("1 + 1") == 2
