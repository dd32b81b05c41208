/* Validation of worker frames: every accepted shape, and the ways a lying
 * worker can bend one. Frames are built with msgpack-c. */
#include <criterion/criterion.h>
#include <string.h>

#include "error.h"
#include "message.h"
#include "supervisor.h"
#include "value.h"

static msgpack_sbuffer sb;
static msgpack_packer pk;

static void begin(size_t fields)
{
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, fields);
}

static void str(const char *s)
{
	msgpack_pack_str(&pk, strlen(s));
	msgpack_pack_str_body(&pk, s, strlen(s));
}

static void kv_str(const char *k, const char *v)
{
	str(k);
	str(v);
}

static void kv_int(const char *k, int64_t v)
{
	str(k);
	msgpack_pack_int64(&pk, v);
}

static int parse(struct cc_msg *m, cc_error *err)
{
	int rc = cc_msg_parse(sb.data, sb.size, 16u << 20, m, err);
	msgpack_sbuffer_destroy(&sb);
	return rc;
}

static void expect_violation(const char *why, const char *needle)
{
	struct cc_msg m;
	cc_error err = { 0 };
	cr_assert_eq(parse(&m, &err), -1, "%s: accepted", why);
	cr_assert_eq(err.kind, CC_ERR_PROTOCOL_VIOLATION, "%s", why);
	cr_assert(strstr(err.message, needle), "%s: message '%s'", why, err.message);
	cc_error_clear(&err);
}

/* A result whose value is one array: fill() packs its items. */
static void result_array(size_t n, void (*fill)(void))
{
	begin(4);
	kv_str("t", "result");
	kv_int("id", 7);
	str("ok");
	msgpack_pack_true(&pk);
	str("value");
	msgpack_pack_array(&pk, n);
	fill();
}

static void int_and_float(void)
{
	msgpack_pack_int(&pk, 1);
	msgpack_pack_double(&pk, 2.5);
}

Test(protocol, result_ok_with_value)
{
	result_array(2, int_and_float);
	struct cc_msg m;
	cc_error err = { 0 };
	cr_assert_eq(parse(&m, &err), 0, "%s", err.message);
	cr_assert_eq(m.what, CC_MSG_RESULT);
	cr_assert_eq(m.id, 7);
	cr_assert(m.ok);
	cr_assert_eq(cc_value_type_of(m.value), CC_VALUE_ARRAY);
	cr_assert_eq(m.value->u.array.len, 2);
	cc_msg_free(&m);
}

static void time_values(void)
{
	cc_pack_date(&pk, -719162);
	cc_pack_duration(&pk, -2, 500000000);
	cc_pack_timezone(&pk, -CC_ZONE_MAX_OFFSET_US, "EST", 3);
	cc_pack_zoned_timestamp(&pk, 1700000000, 5000, 19800000000LL, NULL, 0);
	cc_pack_path(&pk, "/tmp/\xc3\xa9", 7);
}

/* Issue 27: the types beyond JSON's reach the host as themselves, through
 * the same validation as every value (a result, and a call's arguments). */
Test(protocol, result_with_dates_durations_zones_and_paths)
{
	result_array(5, time_values);
	struct cc_msg m;
	cc_error err = { 0 };
	cr_assert_eq(parse(&m, &err), 0, "%s", err.message);
	const cc_value *const *v = (const cc_value *const *)m.value->u.array.items;
	cr_assert_eq(v[0]->type, CC_VALUE_DATE);
	cr_assert_eq(v[0]->u.days, -719162);
	cr_assert_eq(v[1]->type, CC_VALUE_DURATION);
	cr_assert(v[1]->u.dur.sec == -2 && v[1]->u.dur.nsec == 500000000);
	cr_assert_eq(v[2]->type, CC_VALUE_TIMEZONE);
	cr_assert(v[2]->u.tz.offset_us == -CC_ZONE_MAX_OFFSET_US);
	cr_assert_str_eq(v[2]->u.tz.name, "EST");
	cr_assert_eq(v[3]->type, CC_VALUE_TIMESTAMP);
	cr_assert(v[3]->u.ts.zone.set && v[3]->u.ts.zone.offset_us == 19800000000LL);
	cr_assert_null(v[3]->u.ts.zone.name);
	cr_assert_eq(v[4]->type, CC_VALUE_PATH);
	cr_assert_str_eq(v[4]->u.str.ptr, "/tmp/\xc3\xa9");
	cc_msg_free(&m);
}

static const char *bad_ext;
static size_t bad_len;

static void one_bad_ext(void)
{
	msgpack_pack_ext(&pk, bad_len - 1, (int8_t)bad_ext[0]);
	msgpack_pack_ext_body(&pk, bad_ext + 1, bad_len - 1);
}

Test(protocol, bad_time_and_path_exts_are_violations)
{
	static const struct {
		const char *ext; /* type byte, then the payload */
		size_t len;
		const char *needle;
	} cases[] = {
		{ "\x02\x00\x00\x01", 4, "date of 3 bytes" },
		{ "\x03\x00\x00\x00\x00", 5, "duration of 4 bytes" },
		{ "\x04\x00\x00\x00\x14\x1d\xd7\x60\x00\x00", 10, "24 hours" },
		{ "\x04\x00\x00\x00\x00\x00\x00\x00\x00\x01\xc3", 11, "UTF-8" },
		{ "\x05\x00\x00\x00\x00", 5, "zoned timestamp of 4 bytes" },
		{ "\x06\xff", 2, "path is not valid UTF-8" },
		{ "\x07\x00", 2, "unknown ext type 7" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bad_ext = cases[i].ext;
		bad_len = cases[i].len;
		result_array(1, one_bad_ext);
		expect_violation(cases[i].needle, cases[i].needle);
	}
}

/* A text-form value (issue 16): a string value plus value_type, 1-256
 * bytes without NUL; anything else is a violation. Whether the eval asked
 * for it is runtime.c's check (fake_worker.py's text-unasked). */
static void text_result(const char *value_type, size_t len, bool string_value)
{
	begin(5);
	kv_str("t", "result");
	kv_int("id", 3);
	str("ok");
	msgpack_pack_true(&pk);
	str("value");
	if (string_value)
		str("{1, 2}");
	else
		msgpack_pack_int(&pk, 1);
	str("value_type");
	msgpack_pack_str(&pk, len);
	msgpack_pack_str_body(&pk, value_type, len);
}

Test(protocol, result_text_form_value)
{
	text_result("set", 3, true);
	struct cc_msg m;
	cc_error err = { 0 };
	cr_assert_eq(parse(&m, &err), 0, "%s", err.message);
	cr_assert(m.ok && m.value_type);
	cr_assert_eq(m.value_type->u.str.len, 3);
	cr_assert_eq(cc_value_type_of(m.value), CC_VALUE_STRING);
	cc_msg_free(&m);

	char name[300];
	memset(name, 'a', sizeof(name));
	text_result(name, 256, true);
	cr_assert_eq(parse(&m, &err), 0, "%s", err.message);
	cc_msg_free(&m);

	text_result("set", 3, false);
	expect_violation("a text form that is not a string", "wrong type");
	text_result("", 0, true);
	expect_violation("an empty type name", "value_type");
	text_result(name, 257, true);
	expect_violation("a type name over 256 bytes", "value_type");
	text_result("s\0t", 3, true);
	expect_violation("a type name with a NUL", "value_type");
}

Test(protocol, result_error)
{
	begin(4);
	kv_str("t", "result");
	kv_int("id", 1);
	str("ok");
	msgpack_pack_false(&pk);
	str("error");
	msgpack_pack_map(&pk, 4);
	kv_str("kind", "guest_error");
	kv_str("type", "ValueError");
	kv_str("message", "bad");
	kv_str("traceback", "tb");
	struct cc_msg m;
	cc_error err = { 0 };
	cr_assert_eq(parse(&m, &err), 0, "%s", err.message);
	cr_assert_eq(m.kind, CC_ERR_GUEST);
	cr_assert_str_eq(m.etype->u.str.ptr, "ValueError");
	cc_msg_free(&m);
}

Test(protocol, worker_cannot_claim_supervisor_kinds)
{
	static const char *const kinds[] = { "worker_crashed",
					     "protocol_violation",
					     "sandbox_unavailable",
					     "invalid_input",
					     "internal",
					     "tool_budget",
					     "ok",
					     "no_such_kind" };
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		begin(4);
		kv_str("t", "result");
		kv_int("id", 1);
		str("ok");
		msgpack_pack_false(&pk);
		str("error");
		msgpack_pack_map(&pk, 4);
		kv_str("kind", kinds[i]);
		kv_str("type", "");
		kv_str("message", "");
		kv_str("traceback", "");
		expect_violation(kinds[i], "kind");
	}
}

Test(protocol, out_frames)
{
	begin(4);
	kv_str("t", "out");
	kv_int("id", 3);
	kv_int("fd", 2);
	str("data");
	msgpack_pack_bin(&pk, 2);
	msgpack_pack_bin_body(&pk, "\xff\n", 2);
	struct cc_msg m;
	cc_error err = { 0 };
	cr_assert_eq(parse(&m, &err), 0, "%s", err.message);
	cr_assert_eq(m.fd, 2);
	cc_msg_free(&m);

	begin(4);
	kv_str("t", "out");
	kv_int("id", 3);
	kv_int("fd", 3);
	str("data");
	msgpack_pack_bin(&pk, 0);
	expect_violation("fd 3", "fd 3");

	begin(4);
	kv_str("t", "out");
	kv_int("id", 3);
	kv_int("fd", 1);
	kv_str("data", "text instead of bin");
	expect_violation("str data", "wrong type");
}

Test(protocol, shape_violations)
{
	begin(1);
	kv_str("t", "bogus");
	expect_violation("unknown type", "unknown message type");

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, 0);
	expect_violation("not a map", "not a map");

	begin(5);
	kv_str("t", "out");
	kv_int("id", 3);
	kv_int("fd", 1);
	str("data");
	msgpack_pack_bin(&pk, 0);
	kv_int("extra", 1);
	expect_violation("extra field", "unknown fields");

	begin(2);
	kv_str("t", "fail");
	kv_str("kind", "internal");
	expect_violation("missing message", "lacks 'message'");

	begin(3);
	kv_str("t", "fail");
	kv_str("kind", "guest_error");
	kv_str("message", "x");
	expect_violation("fail with an eval kind", "kind");
}

Test(protocol, ready)
{
	begin(7);
	kv_str("t", "ready");
	kv_str("engine", "python");
	kv_str("version", "CPython 3.11");
	kv_str("applied", "hygiene,rlimits");
	kv_str("missing", "seccomp");
	kv_int("landlock_abi", 0);
	kv_int("seccomp_allowed", 0);
	struct cc_msg m;
	cc_error err = { 0 };
	cr_assert_eq(parse(&m, &err), 0, "%s", err.message);
	cr_assert_eq(m.what, CC_MSG_READY);
	cr_assert_str_eq(m.missing->u.str.ptr, "seccomp");
	cc_msg_free(&m);
}

Test(protocol, wait_frames)
{
	begin(2);
	kv_str("t", "wait");
	kv_int("id", 9);
	struct cc_msg m;
	cc_error err = { 0 };
	cr_assert_eq(parse(&m, &err), 0, "%s", err.message);
	cr_assert_eq(m.what, CC_MSG_WAIT);
	cr_assert_eq(m.id, 9);
	cc_msg_free(&m);

	begin(3);
	kv_str("t", "wait");
	kv_int("id", 9);
	kv_int("call", 1);
	expect_violation("wait with a call", "unknown fields");

	begin(2);
	kv_str("t", "wait");
	kv_str("id", "9");
	expect_violation("wait with a str id", "wrong type");
}

/* A call frame with the four fixed fields, a one-element args array, and
 * room for `extra` more fields (kwargs). */
static void call_begin(size_t extra)
{
	begin(5 + extra);
	kv_str("t", "call");
	kv_int("id", 1);
	kv_int("call", 1);
	kv_str("name", "lookup");
	str("args");
	msgpack_pack_array(&pk, 1);
	msgpack_pack_int64(&pk, 5);
}

Test(protocol, call_kwargs)
{
	struct cc_msg m;
	cc_error err = { 0 };

	call_begin(0);
	cr_assert_eq(parse(&m, &err), 0, "a call without kwargs: %s", err.message);
	cr_assert_eq(m.what, CC_MSG_CALL);
	cr_assert_null(m.kwargs, "no kwargs field: no kwargs");
	cc_msg_free(&m);

	call_begin(1);
	str("kwargs");
	msgpack_pack_map(&pk, 2);
	kv_str("sheet", "A");
	kv_int("row", 3);
	cr_assert_eq(parse(&m, &err), 0, "a good kwargs map: %s", err.message);
	cr_assert_not_null(m.kwargs);
	cr_assert_eq(m.kwargs->u.map.len, 2);
	bool found = false;
	const cc_value *row = cc_value_map_get(m.kwargs, "row", &found);
	cr_assert(found && row->type == CC_VALUE_INT && row->u.i == 3);
	cc_msg_free(&m);

	call_begin(1);
	str("kwargs");
	msgpack_pack_map(&pk, 0);
	expect_violation("an empty kwargs map", "empty 'kwargs'");

	call_begin(1);
	str("kwargs");
	msgpack_pack_array(&pk, 1);
	str("sheet");
	expect_violation("kwargs as an array", "'kwargs'");

	call_begin(1);
	kv_str("kwargs", "sheet=A");
	expect_violation("kwargs as a string", "'kwargs'");

	call_begin(1);
	str("kwargs");
	msgpack_pack_nil(&pk);
	expect_violation("kwargs as nil", "'kwargs'");

	call_begin(1);
	str("kwargs");
	msgpack_pack_map(&pk, 1);
	msgpack_pack_int64(&pk, 1);
	str("A");
	expect_violation("a kwargs key that is not a string", "key");

	call_begin(1);
	str("kwargs");
	msgpack_pack_map(&pk, 1);
	msgpack_pack_bin(&pk, 1);
	msgpack_pack_bin_body(&pk, "k", 1);
	str("A");
	expect_violation("a kwargs key that is bytes", "key");
}

/* A template's ready frame with the optional preload modules it dropped. */
static void ready_with_skipped(size_t n, const char *entry, bool as_string)
{
	begin(8);
	kv_str("t", "ready");
	kv_str("engine", "python");
	kv_str("version", "CPython 3.11");
	kv_str("applied", "hygiene");
	kv_str("missing", "");
	kv_int("landlock_abi", 0);
	kv_int("seccomp_allowed", 0);
	str("preload_skipped");
	if (as_string) {
		str(entry);
		return;
	}
	msgpack_pack_array(&pk, n);
	for (size_t i = 0; i < n; i++)
		str(entry);
}

Test(protocol, ready_preload_skipped)
{
	ready_with_skipped(2, "matplotlib: ModuleNotFoundError: No module named 'matplotlib'",
			   false);
	struct cc_msg m;
	cc_error err = { 0 };
	cr_assert_eq(parse(&m, &err), 0, "%s", err.message);
	cr_assert_eq(m.preload_skipped->u.array.len, 2);
	cc_msg_free(&m);
}

Test(protocol, ready_preload_skipped_bad_shapes)
{
	ready_with_skipped(0, "x", false);
	expect_violation("empty preload_skipped", "preload_skipped");
	ready_with_skipped(CC_PRELOAD_SKIPPED_MAX + 1, "x", false);
	expect_violation("too many entries", "preload_skipped");
	ready_with_skipped(1, "", false);
	expect_violation("an empty entry", "preload_skipped");
	char big[CC_PRELOAD_SKIPPED_LEN + 1];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	ready_with_skipped(1, big, false);
	expect_violation("an entry too long", "preload_skipped");
	ready_with_skipped(1, "matplotlib: why", true);
	expect_violation("a string, not an array", "preload_skipped");
}

/* ---- displays in result frames ---- */

static const char png_sig[] = "\x89PNG\r\n\x1a\n";

static void kv_bin(const char *k, const char *v, size_t n)
{
	str(k);
	msgpack_pack_bin(&pk, n);
	msgpack_pack_bin_body(&pk, v, n);
}

/* An ok result whose "displays" field is written by fn. */
static void result_with(void (*fn)(void))
{
	begin(5);
	kv_str("t", "result");
	kv_int("id", 3);
	str("ok");
	msgpack_pack_true(&pk);
	str("value");
	msgpack_pack_nil(&pk);
	str("displays");
	fn();
}

static void two_displays(void)
{
	msgpack_pack_array(&pk, 2);
	msgpack_pack_map(&pk, 2);
	kv_bin("image/png", png_sig, 8);
	kv_str("text/plain", "<Figure>");
	msgpack_pack_map(&pk, 1);
	kv_str("image/svg+xml", "<svg/>");
}

Test(protocol, result_with_displays)
{
	result_with(two_displays);
	struct cc_msg m;
	cc_error err = { 0 };
	cr_assert_eq(parse(&m, &err), 0, "%s", err.message);
	cr_assert_eq(cc_value_type_of(m.displays), CC_VALUE_ARRAY);
	cr_assert_eq(m.displays->u.array.len, 2);
	cc_msg_free(&m);
}

Test(protocol, error_result_with_displays)
{
	begin(5);
	kv_str("t", "result");
	kv_int("id", 1);
	str("ok");
	msgpack_pack_false(&pk);
	str("error");
	msgpack_pack_map(&pk, 4);
	kv_str("kind", "guest_error");
	kv_str("type", "ValueError");
	kv_str("message", "m");
	kv_str("traceback", "");
	str("displays");
	two_displays();
	struct cc_msg m;
	cc_error err = { 0 };
	cr_assert_eq(parse(&m, &err), 0, "%s", err.message);
	cr_assert_eq(m.displays->u.array.len, 2);
	cc_msg_free(&m);
}

static void not_array(void)
{
	msgpack_pack_map(&pk, 0);
}
static void empty(void)
{
	msgpack_pack_array(&pk, 0);
}
static void too_many(void)
{
	msgpack_pack_array(&pk, CC_MAX_DISPLAYS + 1);
	for (int i = 0; i <= CC_MAX_DISPLAYS; i++) {
		msgpack_pack_map(&pk, 1);
		kv_str("text/plain", "x");
	}
}
static void item_not_map(void)
{
	msgpack_pack_array(&pk, 1);
	str("text/plain");
}
static void empty_bundle(void)
{
	msgpack_pack_array(&pk, 1);
	msgpack_pack_map(&pk, 0);
}
static void unknown_mime(void)
{
	msgpack_pack_array(&pk, 1);
	msgpack_pack_map(&pk, 1);
	kv_str("application/javascript", "alert(1)");
}
static void png_as_text(void)
{
	msgpack_pack_array(&pk, 1);
	msgpack_pack_map(&pk, 1);
	kv_str("image/png", "PNG text");
}
static void png_without_signature(void)
{
	msgpack_pack_array(&pk, 1);
	msgpack_pack_map(&pk, 1);
	kv_bin("image/png", "GIF89a..", 8);
}
static void svg_as_bytes(void)
{
	msgpack_pack_array(&pk, 1);
	msgpack_pack_map(&pk, 1);
	kv_bin("image/svg+xml", "<svg/>", 6);
}

Test(protocol, display_violations)
{
	static const struct {
		void (*fn)(void);
		const char *why, *needle;
	} cases[] = {
		{ not_array, "not an array", "'displays' has the wrong type" },
		{ empty, "empty", "0 displays" },
		{ too_many, "over the count", "65 displays" },
		{ item_not_map, "item not a map", "not a map" },
		{ empty_bundle, "empty bundle", "not a map of 1 to" },
		{ unknown_mime, "unknown MIME type", "unknown MIME type" },
		{ png_as_text, "PNG as str", "not a PNG file" },
		{ png_without_signature, "PNG without signature", "not a PNG file" },
		{ svg_as_bytes, "SVG as bin", "not a string" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		result_with(cases[i].fn);
		expect_violation(cases[i].why, cases[i].needle);
	}
}

Test(protocol, display_bytes_count_toward_max_result)
{
	static char big[2048];
	memcpy(big, png_sig, 8);
	begin(5);
	kv_str("t", "result");
	kv_int("id", 3);
	str("ok");
	msgpack_pack_true(&pk);
	str("value");
	msgpack_pack_nil(&pk);
	str("displays");
	msgpack_pack_array(&pk, 1);
	msgpack_pack_map(&pk, 1);
	kv_bin("image/png", big, sizeof(big));
	struct cc_msg m;
	cc_error err = { 0 };
	cr_assert_eq(cc_msg_parse(sb.data, sb.size, 1024, &m, &err), -1);
	cr_assert_eq(err.kind, CC_ERR_PROTOCOL_VIOLATION);
	cr_assert(strstr(err.message, "2048 bytes of displays"), "%s", err.message);
	cc_error_clear(&err);
	cr_assert_eq(cc_msg_parse(sb.data, sb.size, 4096, &m, &err), 0, "%s", err.message);
	cc_msg_free(&m);
	msgpack_sbuffer_destroy(&sb);
}

/* message.c's field helpers (issue 22), the way both sides build frames:
 * the bytes are what the hand-rolled packing wrote, and the validator
 * reads every kind back. */
Test(message, kv_helpers)
{
	struct cc_msgbuf m;
	cc_msgbuf_begin(&m, 4, "out");
	cc_pack_kv_u64(&m.pk, "id", 3);
	cc_pack_kv_int(&m.pk, "fd", 2);
	cc_pack_kv_bin(&m.pk, "data", "\xff\n", 2);
	begin(4);
	kv_str("t", "out");
	kv_int("id", 3);
	kv_int("fd", 2);
	str("data");
	msgpack_pack_bin(&pk, 2);
	msgpack_pack_bin_body(&pk, "\xff\n", 2);
	cr_assert_eq(m.sb.size, sb.size);
	cr_assert_eq(memcmp(m.sb.data, sb.data, sb.size), 0);
	msgpack_sbuffer_destroy(&sb);
	struct cc_msg msg;
	cc_error err = { 0 };
	cr_assert_eq(cc_msg_parse(m.sb.data, m.sb.size, 16u << 20, &msg, &err), 0, "%s",
		     err.message);
	cr_assert_eq(msg.what, CC_MSG_OUT);
	cr_assert_eq(msg.id, 3);
	cr_assert_eq(msg.fd, 2);
	cr_assert_eq(msg.data->u.str.len, 2);
	cc_msg_free(&msg);
	cc_msgbuf_free(&m);

	cc_msgbuf_begin(&m, 5, "result");
	cc_pack_kv_u64(&m.pk, "id", 9);
	cc_pack_kv_bool(&m.pk, "ok", true);
	cc_pack_kv_strn(&m.pk, "value", "abc", 2);
	cc_pack_kv_str(&m.pk, "value_type", "Thing");
	cr_assert_eq(cc_msg_parse(m.sb.data, m.sb.size, 16u << 20, &msg, &err), 0, "%s",
		     err.message);
	cr_assert(msg.ok);
	cr_assert_eq(cc_value_type_of(msg.value), CC_VALUE_STRING);
	cr_assert_eq(msg.value->u.str.len, 2);
	cr_assert_str_eq(msg.value_type->u.str.ptr, "Thing");
	cc_msg_free(&msg);
	cc_msgbuf_free(&m);

	/* false and NULL strings */
	cc_msgbuf_begin(&m, 1, "x");
	size_t at = m.sb.size;
	cc_pack_kv_bool(&m.pk, "b", false);
	cc_pack_kv_str(&m.pk, "s", NULL);
	cr_assert_eq(m.sb.size, at + 6);
	cr_assert_eq(memcmp(m.sb.data + at,
			    "\xa1"
			    "b"
			    "\xc2"
			    "\xa1"
			    "s"
			    "\xa0",
			    6),
		     0);
	cc_msgbuf_free(&m);
}
