/* The value codec: every type both ways, caps at and past their limits,
 * and malformed or hostile MessagePack. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "civil.h"
#include "error.h"
#include "value.h"

struct packed {
	msgpack_sbuffer sb;
	msgpack_packer pk;
};

static void packed_init(struct packed *p)
{
	msgpack_sbuffer_init(&p->sb);
	msgpack_packer_init(&p->pk, &p->sb, msgpack_sbuffer_write);
}

static cc_value *roundtrip(const cc_value *v)
{
	struct packed p;
	packed_init(&p);
	cc_error err = { 0 };
	cc_value_caps caps = cc_value_default_caps();
	cr_assert_eq(cc_value_encode(&p.pk, v, &caps, &err), 0, "encode: %s", err.message);
	cc_value *out = NULL;
	caps = cc_value_default_caps();
	cr_assert_eq(cc_value_decode_all(p.sb.data, p.sb.size, &out, &caps, &err), 0, "decode: %s",
		     err.message);
	msgpack_sbuffer_destroy(&p.sb);
	return out;
}

static int decode_bytes(const char *buf, size_t n, cc_value **out, cc_error *err)
{
	cc_value_caps caps = cc_value_default_caps();
	return cc_value_decode_all(buf, n, out, &caps, err);
}

Test(value, scalars_roundtrip)
{
	cc_value *vals[] = {
		cc_value_new_bool(true),
		cc_value_new_bool(false),
		cc_value_new_int(0),
		cc_value_new_int(-1),
		cc_value_new_int(INT64_MAX),
		cc_value_new_int(INT64_MIN),
		cc_value_new_float(0.1),
		cc_value_new_float(-0.0),
		cc_value_new_float(NAN),
		cc_value_new_float(INFINITY),
		cc_value_new_float(-INFINITY),
		cc_value_new_bigint("123456789012345678901234567890", 30),
		cc_value_new_bigint("-9223372036854775809", 20),
		cc_value_new_string("h\xc3\xa9llo \xf0\x9f\x98\x80", 11),
		cc_value_new_string("", 0),
		cc_value_new_string("a\0b", 3),
		cc_value_new_bytes("\x00\xff\x10", 3),
		cc_value_new_bytes("", 0),
		cc_value_new_timestamp(0, 0),
		cc_value_new_timestamp(-1, 999999999),
		cc_value_new_timestamp(1700000000, 123456000),
		NULL,
	};
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		cc_value *back = roundtrip(vals[i]);
		cr_assert(cc_value_equal(vals[i], back), "value %zu differs after a round trip", i);
		cc_value_free(back);
		cc_value_free(vals[i]);
	}
}

Test(value, equal_distinguishes_negative_zero_and_nan)
{
	cc_value *a = cc_value_new_float(0.0), *b = cc_value_new_float(-0.0);
	cc_value *n1 = cc_value_new_float(NAN), *n2 = cc_value_new_float(NAN);
	cr_assert_not(cc_value_equal(a, b));
	cr_assert(cc_value_equal(n1, n2));
	cc_value_free(a);
	cc_value_free(b);
	cc_value_free(n1);
	cc_value_free(n2);
}

Test(value, containers_roundtrip_in_order)
{
	cc_value *m = cc_value_new_map();
	cc_value *arr = cc_value_new_array();
	cr_assert_eq(cc_value_array_push(arr, cc_value_new_int(1)), 0);
	cr_assert_eq(cc_value_array_push(arr, NULL), 0);
	cr_assert_eq(cc_value_array_push(arr, cc_value_new_string("x", 1)), 0);
	cr_assert_eq(cc_value_map_set(m, "zeta", 4, arr), 0);
	cr_assert_eq(cc_value_map_set(m, "alpha", 5, cc_value_new_float(1.5)), 0);
	cr_assert_eq(cc_value_map_set(m, "__proto__", 9, cc_value_new_bool(true)), 0);
	/* duplicate keys are refused (and the value freed) */
	cr_assert_eq(cc_value_map_set(m, "alpha", 5, cc_value_new_int(3)), -1);
	cc_value *back = roundtrip(m);
	cr_assert(cc_value_equal(m, back));
	cr_assert_str_eq(back->u.map.keys[0], "zeta");
	cr_assert_str_eq(back->u.map.keys[1], "alpha");
	cc_value_free(back);
	cc_value_free(m);
}

static cc_value *nested(unsigned depth)
{
	cc_value *v = cc_value_new_int(7);
	for (unsigned i = 0; i < depth; i++) {
		cc_value *a = cc_value_new_array();
		cc_value_array_push(a, v);
		v = a;
	}
	return v;
}

Test(value, depth_cap_at_and_past)
{
	cc_value *ok = nested(CC_VALUE_MAX_DEPTH);
	cc_value *back = roundtrip(ok);
	cr_assert(cc_value_equal(ok, back));
	cc_value_free(back);

	cc_value *deep = nested(CC_VALUE_MAX_DEPTH + 1);
	struct packed p;
	packed_init(&p);
	cc_error err = { 0 };
	cc_value_caps caps = cc_value_default_caps();
	cr_assert_eq(cc_value_encode(&p.pk, deep, &caps, &err), -1);
	cr_assert_eq(err.kind, CC_ERR_INVALID_INPUT);
	cr_assert(strstr(err.message, "deeper than 100"));
	msgpack_sbuffer_destroy(&p.sb);

	/* and the decoder refuses the same depth built by hand */
	char buf[CC_VALUE_MAX_DEPTH + 2];
	memset(buf, 0x91, CC_VALUE_MAX_DEPTH + 1); /* fixarray of 1, nested */
	buf[CC_VALUE_MAX_DEPTH + 1] = 0x07;
	cc_value *out = NULL;
	cr_assert_eq(decode_bytes(buf, sizeof(buf), &out, &err), -1);
	cr_assert_eq(err.kind, CC_ERR_PROTOCOL_VIOLATION);
	cr_assert_null(out);
	cr_assert_eq(decode_bytes(buf + 1, sizeof(buf) - 1, &out, &err), 0);
	cc_value_free(out);
	cc_value_free(ok);
	cc_value_free(deep);
	cc_error_clear(&err);
}

Test(value, node_cap_counts_every_element)
{
	/* array of 3 nils with a node budget of 3: root + 3 > 3 */
	const char buf[] = { (char)0x93, (char)0xc0, (char)0xc0, (char)0xc0 };
	cc_value *out = NULL;
	cc_error err = { 0 };
	cc_value_caps caps = { 10, 3, 0, 0, 0 };
	cr_assert_eq(cc_value_decode_all(buf, sizeof(buf), &out, &caps, &err), -1);
	caps = (cc_value_caps){ 10, 4, 0, 0, 0 };
	cr_assert_eq(cc_value_decode_all(buf, sizeof(buf), &out, &caps, &err), 0);
	cc_value_free(out);
	cc_error_clear(&err);
}

/* The memory cap: decoding succeeds with exactly cc_value_decoded_cost
 * bytes and fails with output_limit one byte short, so the worker's own
 * check (the cost) and the supervisor's (the decoder) always agree. */
Test(value, memory_cap_matches_the_decoded_cost)
{
	static const char *const cases[] = {
		/* [1, "ab", nil, {"k": [true], "j": {"x": 1.5}}] */
		"\x94\x01\xa2\x61\x62\xc0\x82\xa1\x6b\x91\xc3\xa1\x6a\x81\xa1\x78"
		"\xcb\x3f\xf8\x00\x00\x00\x00\x00\x00",
		/* {"a": {"b": {"c": {}}}, "d": 7} */
		"\x82\xa1\x61\x81\xa1\x62\x81\xa1\x63\x80\xa1\x64\x07",
		"\xa5hello",
	};
	static const size_t lens[] = { 25, 13, 6 };
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t cost = cc_value_decoded_cost(cases[i], lens[i]);
		cr_assert(cost > 0 && cost != SIZE_MAX, "case %zu: cost %zu", i, cost);
		cc_value *out = NULL;
		cc_error err = { 0 };
		cc_value_caps caps = { 10, 100, 0, cost, cost };
		cr_assert_eq(cc_value_decode_all(cases[i], lens[i], &out, &caps, &err), 0,
			     "case %zu: %s", i, err.message);
		cc_value_free(out);
		caps = (cc_value_caps){ 10, 100, 0, cost - 1, cost - 1 };
		cr_assert_eq(cc_value_decode_all(cases[i], lens[i], &out, &caps, &err), -1);
		cr_assert_eq(err.kind, CC_ERR_OUTPUT_LIMIT, "case %zu", i);
		cr_assert(strstr(err.message, "host memory") != NULL);
		cc_error_clear(&err);
	}
	cr_assert_eq(cc_value_decoded_cost("\x92\x01", 2), SIZE_MAX, "truncated");
}

/* A map's declared length reserves nothing: a map32 declaring 8 M pairs
 * backed by 16 MiB of bytes fails at its second key, having charged only
 * what it decoded (the table used to be sized from the declared length). */
Test(value, declared_length_reserves_nothing)
{
	size_t n = 8u << 20, len = 5 + 2 * n;
	unsigned char *buf = calloc(1, len);
	buf[0] = 0xdf;
	buf[1] = (unsigned char)(n >> 24), buf[2] = (unsigned char)(n >> 16);
	buf[3] = (unsigned char)(n >> 8), buf[4] = (unsigned char)n;
	memcpy(buf + 5, "\xa1\x61\xc0", 3); /* "a": nil, then zero bytes: 0 is not a key */
	cc_value *out = NULL;
	cc_error err = { 0 };
	cc_value_caps caps = { 10, n + 1, 0, 4096, 4096 };
	cr_assert_eq(cc_value_decode_all(buf, len, &out, &caps, &err), -1);
	cr_assert_eq(err.kind, CC_ERR_PROTOCOL_VIOLATION, "%s", err.message);
	cr_assert(strstr(err.message, "key") != NULL, "%s", err.message);
	cc_error_clear(&err);
	free(buf);
}

struct bad_case {
	const char *name;
	const char *bytes;
	size_t len;
	const char *expect; /* substring of the message */
};

/* Each case is refused as a protocol_violation whose message holds its
 * expect text, and nothing is left allocated. */
static void expect_refused(const struct bad_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cc_value *out = NULL;
		cc_error err = { 0 };
		int rc = decode_bytes(cases[i].bytes, cases[i].len, &out, &err);
		cr_assert_eq(rc, -1, "%s: accepted", cases[i].name);
		cr_assert_null(out, "%s", cases[i].name);
		cr_assert_eq(err.kind, CC_ERR_PROTOCOL_VIOLATION, "%s: kind %d", cases[i].name,
			     err.kind);
		cr_assert(strstr(err.message, cases[i].expect), "%s: message '%s'", cases[i].name,
			  err.message);
		cc_error_clear(&err);
	}
}

Test(value, hostile_inputs_are_refused_without_allocation)
{
	static const struct bad_case cases[] = {
		{ "empty", "", 0, "truncated" },
		{ "never-used byte", "\xc1", 1, "truncated or malformed" },
		{ "array32 of 4 billion with no elements", "\xdd\xff\xff\xff\xff", 5, "truncated" },
		{ "map32 claims more pairs than bytes", "\xdf\x00\x00\x00\x02\xa1k\x01", 8,
		  "truncated" },
		{ "str32 longer than the buffer",
		  "\xdb\x00\x00\x10\x00"
		  "abc",
		  8, "truncated" },
		{ "uint64 above int64", "\xcf\xff\xff\xff\xff\xff\xff\xff\xff", 9, "bigint" },
		{ "invalid UTF-8 string", "\xa2\xc3\x28", 3, "UTF-8" },
		{ "lone surrogate as CESU", "\xa3\xed\xa0\x80", 4, "UTF-8" },
		{ "int map key", "\x81\x01\x02", 3, "not a string" },
		{ "duplicate key", "\x82\xa1k\x01\xa1k\x02", 7, "duplicate" },
		{ "unknown ext", "\xd4\x7f\x00", 3, "unknown ext" },
		{ "bigint with a leading zero",
		  "\xd5\x01"
		  "01",
		  4, "bigint" },
		{ "bigint minus zero",
		  "\xd5\x01"
		  "-0",
		  4, "bigint" },
		{ "bigint with a letter",
		  "\xd6\x01"
		  "12a4",
		  6, "bigint" },
		{ "timestamp of 5 bytes",
		  "\xc7\x05\xff"
		  "12345",
		  8, "timestamp" },
		{ "timestamp nsec out of range", "\xd7\xff\xff\xff\xff\xff\x00\x00\x00\x00", 10,
		  "nanoseconds" },
		{ "trailing bytes", "\x01\x02", 2, "trailing" },
	};
	expect_refused(cases, sizeof(cases) / sizeof(cases[0]));
}

/* The types beyond JSON's (issue 27): dates, durations, fixed offsets,
 * zoned timestamps and paths, at their edges. */
Test(value, time_and_path_types_roundtrip)
{
	const int64_t max_off = CC_ZONE_MAX_OFFSET_US;
	cc_value *vals[] = {
		cc_value_new_date(0),
		cc_value_new_date(-719162), /* 0001-01-01 */
		cc_value_new_date(2932896), /* 9999-12-31 */
		cc_value_new_date(INT32_MIN),
		cc_value_new_date(INT32_MAX),
		cc_value_new_duration(0, 0),
		cc_value_new_duration(-2, 500000000), /* -1.5 s */
		cc_value_new_duration(-86400LL * 999999999, 0),
		cc_value_new_duration(INT64_MAX, 999999999),
		cc_value_new_duration(INT64_MIN, 0),
		cc_value_new_timezone(0, NULL, 0),
		cc_value_new_timezone(max_off, NULL, 0),
		cc_value_new_timezone(-max_off, "\xc3\xa9t\xc3\xa9", 5),
		cc_value_new_timezone(19800000000LL, "IST", 3),
		cc_value_new_timezone(0, "", 0),
		cc_value_new_zoned_timestamp(0, 0, 0, "", 0),
		cc_value_new_zoned_timestamp(-62135596800LL, 1000, -max_off, NULL, 0),
		cc_value_new_zoned_timestamp(1700000000, 999999999, 3600000000LL, "CET", 3),
		cc_value_new_path("", 0),
		cc_value_new_path("/tmp/\xc3\xa9t\xc3\xa9/a b", 13),
		cc_value_new_path("a\0b", 3),
	};
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		cr_assert_not_null(vals[i], "value %zu was not made", i);
		cc_value *back = roundtrip(vals[i]);
		cr_assert(cc_value_equal(vals[i], back), "value %zu differs after a round trip", i);
		cc_value_free(back);
		cc_value_free(vals[i]);
	}
}

Test(value, zones_compare_by_offset_name_and_presence)
{
	cc_value *a = cc_value_new_timezone(60, NULL, 0), *b = cc_value_new_timezone(60, "", 0);
	cc_value *c = cc_value_new_timezone(61, NULL, 0), *d = cc_value_new_timezone(60, NULL, 0);
	cr_assert(!cc_value_equal(a, b), "no name and an empty name differ");
	cr_assert(!cc_value_equal(a, c));
	cr_assert(cc_value_equal(a, d));
	cc_value *t = cc_value_new_timestamp(5, 0),
		 *z = cc_value_new_zoned_timestamp(5, 0, 0, NULL, 0);
	cr_assert(!cc_value_equal(t, z), "a zoned timestamp is not a plain one");
	cc_value *p = cc_value_new_path("x", 1), *s = cc_value_new_string("x", 1);
	cr_assert(!cc_value_equal(p, s), "a path is not a string");
	cc_value *n = cc_value_new_date(1), *i = cc_value_new_int(1);
	cr_assert(!cc_value_equal(n, i));
	cc_value *vs[] = { a, b, c, d, t, z, p, s, n, i };
	for (size_t k = 0; k < sizeof(vs) / sizeof(vs[0]); k++)
		cc_value_free(vs[k]);
}

/* The wire layout HACKING.md and value.h give, byte for byte. */
Test(value, time_and_path_types_wire_layout)
{
	struct {
		cc_value *v;
		const char *bytes;
		size_t len;
	} cases[] = {
		{ cc_value_new_date(-1), "\xd6\x02\xff\xff\xff\xff", 6 },
		{ cc_value_new_duration(-2, 500000000),
		  "\xc7\x0c\x03\x1d\xcd\x65\x00\xff\xff\xff\xff\xff\xff\xff\xfe", 15 },
		{ cc_value_new_timezone(-1, NULL, 0),
		  "\xc7\x09\x04\xff\xff\xff\xff\xff\xff\xff\xff\x00", 12 },
		{ cc_value_new_timezone(1, "Z", 1),
		  "\xc7\x0a\x04\x00\x00\x00\x00\x00\x00\x00\x01\x01Z", 13 },
		{ cc_value_new_zoned_timestamp(1, 2, 3, NULL, 0),
		  "\xc7\x15\x05\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x01"
		  "\x00\x00\x00\x00\x00\x00\x00\x03\x00",
		  24 },
		{ cc_value_new_path("/a", 2), "\xd5\x06/a", 4 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct packed p;
		packed_init(&p);
		cc_error err = { 0 };
		cc_value_caps caps = cc_value_default_caps();
		cr_assert_eq(cc_value_encode(&p.pk, cases[i].v, &caps, &err), 0);
		cr_assert_eq(p.sb.size, cases[i].len, "case %zu: %zu bytes", i, p.sb.size);
		cr_assert(!memcmp(p.sb.data, cases[i].bytes, cases[i].len), "case %zu's bytes", i);
		msgpack_sbuffer_destroy(&p.sb);
		cc_value_free(cases[i].v);
	}
}

Test(value, hostile_time_and_path_exts_are_refused)
{
	static const struct bad_case cases[] = {
		{ "date of 3 bytes", "\xc7\x03\x02\x00\x00\x00", 6, "date of 3 bytes" },
		{ "date of 8 bytes", "\xd7\x02\x00\x00\x00\x00\x00\x00\x00\x00", 10, "date" },
		{ "duration of 8 bytes", "\xd7\x03\x00\x00\x00\x00\x00\x00\x00\x00", 10,
		  "duration of 8" },
		{ "duration nsec out of range",
		  "\xc7\x0c\x03\x3b\x9a\xca\x00\x00\x00\x00\x00\x00\x00\x00\x00", 15,
		  "duration nanoseconds" },
		{ "timezone of 8 bytes", "\xd7\x04\x00\x00\x00\x00\x00\x00\x00\x00", 10,
		  "zone of 8" },
		{ "timezone of a day", "\xc7\x09\x04\x00\x00\x00\x14\x1d\xd7\x60\x00\x00", 12,
		  "24 hours" },
		{ "timezone of minus a day", "\xc7\x09\x04\xff\xff\xff\xeb\xe2\x28\xa0\x00\x00", 12,
		  "24 hours" },
		{ "timezone name flag 2", "\xc7\x09\x04\x00\x00\x00\x00\x00\x00\x00\x00\x02", 12,
		  "flag" },
		{ "timezone without a name but bytes after",
		  "\xc7\x0a\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00x", 13, "flag" },
		{ "timezone name not UTF-8", "\xc7\x0a\x04\x00\x00\x00\x00\x00\x00\x00\x00\x01\xff",
		  13, "UTF-8" },
		{ "zoned timestamp of 12 bytes",
		  "\xc7\x0c\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", 15,
		  "zoned timestamp of 12" },
		{ "zoned timestamp nsec out of range",
		  "\xc7\x15\x05\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00"
		  "\x00\x00\x00\x00\x00\x00\x00\x00\x00",
		  24, "timestamp nanoseconds" },
		{ "zoned timestamp of a day's offset",
		  "\xc7\x15\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
		  "\x00\x00\x00\x14\x1d\xd7\x60\x00\x00",
		  24, "24 hours" },
		{ "path not UTF-8", "\xd5\x06\xc3\x28", 4, "path is not valid UTF-8" },
		{ "path with a lone surrogate", "\xc7\x03\x06\xed\xa0\x80", 6, "UTF-8" },
	};
	expect_refused(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(value, timestamp_forms_decode)
{
	/* timestamp 32: 1 s; timestamp 64: 1 s + 5 ns */
	const char t32[] = "\xd6\xff\x00\x00\x00\x01";
	const char t64[] = "\xd7\xff\x00\x00\x00\x14\x00\x00\x00\x01";
	cc_value *v = NULL;
	cc_error err = { 0 };
	cr_assert_eq(decode_bytes(t32, 6, &v, &err), 0);
	cr_assert_eq(v->u.ts.sec, 1);
	cr_assert_eq(v->u.ts.nsec, 0);
	cc_value_free(v);
	cr_assert_eq(decode_bytes(t64, 10, &v, &err), 0);
	cr_assert_eq(v->u.ts.sec, 1);
	cr_assert_eq(v->u.ts.nsec, 5);
	cc_value_free(v);
}

Test(value, constructors_validate)
{
	cr_assert_null(cc_value_new_string("\xff", 1));
	cr_assert_null(cc_value_new_bigint("", 0));
	cr_assert_null(cc_value_new_bigint("+5", 2));
	cr_assert_null(cc_value_new_timestamp(0, 1000000000u));
	cr_assert_null(cc_value_new_duration(0, 1000000000u));
	cr_assert_null(cc_value_new_zoned_timestamp(0, 1000000000u, 0, NULL, 0));
	cr_assert_null(cc_value_new_timezone(CC_ZONE_MAX_OFFSET_US + 1, NULL, 0));
	cr_assert_null(cc_value_new_timezone(-CC_ZONE_MAX_OFFSET_US - 1, NULL, 0));
	cr_assert_null(cc_value_new_timezone(0, "\xff", 1));
	cr_assert_null(cc_value_new_zoned_timestamp(0, 0, 86400000000LL, NULL, 0));
	cr_assert_null(cc_value_new_path("\xc3", 1));
	char digits[CC_BIGINT_MAX_DIGITS + 2];
	memset(digits, '9', sizeof(digits));
	cr_assert_null(cc_value_new_bigint(digits, CC_BIGINT_MAX_DIGITS + 1));
	cc_value *v = cc_value_new_bigint(digits, CC_BIGINT_MAX_DIGITS);
	cr_assert_not_null(v);
	cc_value_free(v);
}

Test(value, encoder_refuses_hand_built_breakage)
{
	/* Fields of the public struct can be set by hand: the encoder checks
	 * what the constructors would have refused. */
	cc_value *m = cc_value_new_map();
	cr_assert_eq(cc_value_map_set(m, "k", 1, cc_value_new_int(1)), 0);
	cr_assert_eq(cc_value_map_set(m, "j", 1, cc_value_new_int(2)), 0);
	m->u.map.keys[1][0] = 'k';
	struct packed p;
	packed_init(&p);
	cc_error err = { 0 };
	cc_value_caps caps = cc_value_default_caps();
	cr_assert_eq(cc_value_encode(&p.pk, m, &caps, &err), -1);
	cr_assert_eq(err.kind, CC_ERR_INVALID_INPUT);
	cr_assert(strstr(err.message, "duplicate key"), "%s", err.message);
	cc_value *ts = cc_value_new_timestamp(0, 0);
	ts->u.ts.nsec = 1000000000u;
	caps = cc_value_default_caps();
	cr_assert_eq(cc_value_encode(&p.pk, ts, &caps, &err), -1);
	cr_assert(strstr(err.message, "nanoseconds"), "%s", err.message);
	cc_value *bi = cc_value_new_bigint("12", 2);
	bi->u.str.ptr[0] = 'x';
	caps = cc_value_default_caps();
	cr_assert_eq(cc_value_encode(&p.pk, bi, &caps, &err), -1);
	cc_value *tz = cc_value_new_timezone(0, "a", 1);
	tz->u.tz.offset_us = 86400000000LL;
	caps = cc_value_default_caps();
	cr_assert_eq(cc_value_encode(&p.pk, tz, &caps, &err), -1);
	cr_assert(strstr(err.message, "24 hours"), "%s", err.message);
	tz->u.tz.offset_us = 0;
	tz->u.tz.name[0] = (char)0xff;
	caps = cc_value_default_caps();
	cr_assert_eq(cc_value_encode(&p.pk, tz, &caps, &err), -1);
	cr_assert(strstr(err.message, "name is not valid UTF-8"), "%s", err.message);
	cc_value *zt = cc_value_new_zoned_timestamp(0, 0, 0, NULL, 0);
	zt->u.ts.zone.offset_us = -86400000000LL;
	caps = cc_value_default_caps();
	cr_assert_eq(cc_value_encode(&p.pk, zt, &caps, &err), -1);
	cc_value *pa = cc_value_new_path("ab", 2);
	pa->u.str.ptr[0] = (char)0xc3;
	caps = cc_value_default_caps();
	cr_assert_eq(cc_value_encode(&p.pk, pa, &caps, &err), -1);
	cr_assert(strstr(err.message, "path"), "%s", err.message);
	msgpack_sbuffer_destroy(&p.sb);
	cc_value_free(m);
	cc_value_free(ts);
	cc_value_free(bi);
	cc_value_free(tz);
	cc_value_free(zt);
	cc_value_free(pa);
	cc_error_clear(&err);
}

Test(value, many_keys_decode_in_linear_time, .timeout = 60)
{
	/* Regression: duplicate detection was a linear scan per key, so a
	 * worker's map of many keys stalled the host (quadratic: 200k keys is
	 * 2e10 key comparisons, minutes). Not a benchmark: the timeout is a hang
	 * guard a thousand times above the expected run. */
	struct packed p;
	packed_init(&p);
	msgpack_pack_map(&p.pk, 200000);
	char key[16];
	for (int i = 0; i < 200000; i++) {
		int n = snprintf(key, sizeof(key), "k%d", i);
		msgpack_pack_str(&p.pk, (size_t)n);
		msgpack_pack_str_body(&p.pk, key, (size_t)n);
		msgpack_pack_nil(&p.pk);
	}
	cc_value *out = NULL;
	cc_error err = { 0 };
	cr_assert_eq(decode_bytes(p.sb.data, p.sb.size, &out, &err), 0, "%s", err.message);
	cr_assert_eq(out->u.map.len, 200000);
	cc_value_free(out);
	msgpack_sbuffer_destroy(&p.sb);
}

/* ---- civil.c: the calendar both Python sides share ---- */

Test(civil, days_from_civil_known_dates)
{
	cr_assert_eq(cc_days_from_civil(1970, 1, 1), 0);
	cr_assert_eq(cc_days_from_civil(1969, 12, 31), -1);
	cr_assert_eq(cc_days_from_civil(2000, 3, 1), 11017);
	cr_assert_eq(cc_days_from_civil(1, 1, 1), -719162); /* date(1, 1, 1).toordinal() - 719163 */
	cr_assert_eq(cc_days_from_civil(9999, 12, 31), 2932896);
	cr_assert_eq(cc_days_from_civil(1600, 2, 29), -135081);
}

Test(civil, civil_from_days_inverts_every_day_of_a_span)
{
	/* 1599-01-01 .. 2401-12-31: leap centuries, 1970 and negatives. */
	for (int64_t z = cc_days_from_civil(1599, 1, 1); z <= cc_days_from_civil(2401, 12, 31);
	     z++) {
		int64_t y;
		unsigned m, d;
		cc_civil_from_days(z, &y, &m, &d);
		cr_assert(m >= 1 && m <= 12 && d >= 1 && d <= 31);
		cr_assert_eq(cc_days_from_civil(y, m, d), z, "day %lld", (long long)z);
	}
}

Test(civil, timestamps_round_down_before_1970_and_take_offsets_to_the_microsecond)
{
	struct cc_civil c = { 1969, 12, 31, 23, 59, 59, 999999 }, back;
	int64_t sec;
	uint32_t nsec;
	cc_civil_to_timestamp(&c, 0, &sec, &nsec);
	cr_assert_eq(sec, -1);
	cr_assert_eq(nsec, 999999000);
	/* At UTC-05:00:00.25 the instant is 5 h 0.25 s later. */
	cc_civil_to_timestamp(&c, -(5 * 3600 * 1000000LL + 250000), &sec, &nsec);
	cr_assert_eq(sec, 5 * 3600);
	cr_assert_eq(nsec, 249999000);
	cr_assert_eq(cc_civil_from_timestamp(sec, nsec, &back), 0);
	cr_assert(back.year == 1970 && back.month == 1 && back.day == 1 && back.hour == 5 &&
		  back.minute == 0 && back.second == 0 && back.usec == 249999);
	/* At UTC+00:00:00.5, 00:00:00.25 is 0.25 s before the epoch. */
	struct cc_civil e = { 1970, 1, 1, 0, 0, 0, 250000 };
	cc_civil_to_timestamp(&e, 500000, &sec, &nsec);
	cr_assert_eq(sec, -1);
	cr_assert_eq(nsec, 750000000);
	cr_assert_eq(cc_civil_from_timestamp(-1, 750000999, &back), 0);
	cr_assert(back.year == 1969 && back.second == 59 && back.usec == 750000);
}

Test(civil, from_timestamp_refuses_what_datetime_cannot_hold)
{
	struct cc_civil c;
	int64_t first = cc_days_from_civil(1, 1, 1) * 86400;
	int64_t last = cc_days_from_civil(9999, 12, 31) * 86400 + 86399;
	cr_assert_eq(cc_civil_from_timestamp(first, 0, &c), 0);
	cr_assert(c.year == 1 && c.month == 1 && c.day == 1 && c.hour == 0);
	cr_assert_eq(cc_civil_from_timestamp(first - 1, 999999999, &c), -1);
	cr_assert_eq(cc_civil_from_timestamp(last, 999999999, &c), 0);
	cr_assert(c.year == 9999 && c.month == 12 && c.day == 31 && c.second == 59 &&
		  c.usec == 999999);
	cr_assert_eq(cc_civil_from_timestamp(last + 1, 0, &c), -1);
	cr_assert_eq(cc_civil_from_timestamp(INT64_MIN, 0, &c), -1);
	cr_assert_eq(cc_civil_from_timestamp(INT64_MAX, 0, &c), -1);
}

Test(civil, offsets_as_iso_8601_text)
{
	char t[32];
	static const struct {
		int64_t us;
		const char *text;
	} cases[] = {
		{ 0, "+00:00" },
		{ 19800000000LL, "+05:30" },
		{ -CC_ZONE_MAX_OFFSET_US, "-23:59:59.999999" },
		{ -1500000, "-00:00:01.500000" },
		{ 3661000000LL, "+01:01:01" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cc_civil_offset_text(t, sizeof(t), cases[i].us);
		cr_assert_str_eq(t, cases[i].text);
	}
}
