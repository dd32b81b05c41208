"""Property tests: values cross the boundary and come back as DESIGN.md
section 5 says, through set_global (host -> guest), eval (guest -> host) and
tool calls (both ways), in both languages."""
import datetime
import math

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


def scalars(lang):
    ints = (st.integers(-2**31, 2**31 - 1) if lang == "javascript"
            else st.integers(-2**63, 2**63 - 1))
    return st.one_of(st.none(), st.booleans(), ints,
                     st.floats(allow_nan=True, allow_infinity=True), text, st.binary(max_size=40),
                     datetimes(lang == "javascript"),
                     st.integers(min_value=2**64, max_value=10**200),
                     st.integers(max_value=-2**64, min_value=-10**200))


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
        return v.replace(tzinfo=UTC) if v.tzinfo is None else v.astimezone(UTC)
    if lang == "javascript" and isinstance(v, float) and v.is_integer() and abs(v) < 2**31 \
            and not (v == 0 and math.copysign(1, v) < 0):
        return v  # compared loosely below: QuickJS may hold it as an int
    return v


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
        assert rt.eval("d.tzinfo is datetime.timezone.utc")
        back = rt.eval("D")
        assert back == want and (back - want).total_seconds() == 0
        assert rt.eval("d") == want
        assert rt.eval("[D, d]") == [want, want]


def test_datetimes_outside_years_1_to_9999_are_refused_both_ways():
    east = datetime.timezone(datetime.timedelta(hours=1))
    d = datetime.datetime(1, 1, 1, 0, 30, tzinfo=east)  # 0000-12-31 23:30 UTC
    with IsolatedRuntime(language="python") as rt:
        with pytest.raises(codecage.GuestError) as ei:
            rt.eval("import datetime\n%r" % d)
        assert ei.value.name == "OverflowError"
        with pytest.raises(codecage.GuestError, match="outside datetime's range"):
            rt.set_global("d", d)
        assert rt.eval("1") == 1


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
