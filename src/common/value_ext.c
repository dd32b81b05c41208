/* The value types MessagePack carries as ext types (value.h): bigints,
 * timestamps (with or without the offset they were written in), dates,
 * durations, fixed UTC offsets and POSIX paths. Their constructors,
 * equality and wire form; value.c calls these for every ext item and
 * node. Pure helpers. */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "utf8.h"
#include "value.h"

/* A copy of name[0..len) with a NUL after it into z (NULL name: none).
 * Returns -1 when out of memory or the name is not UTF-8. */
static int zone_init(cc_value_zone *z, int64_t offset_us, const char *name, size_t len)
{
	if (offset_us < -CC_ZONE_MAX_OFFSET_US || offset_us > CC_ZONE_MAX_OFFSET_US ||
	    (name && !cc_utf8_valid(name, len)))
		return -1;
	z->set = true;
	z->offset_us = offset_us;
	if (!name)
		return 0;
	z->name = malloc(len + 1);
	if (!z->name)
		return -1;
	if (len)
		memcpy(z->name, name, len);
	z->name[len] = 0;
	z->name_len = len;
	return 0;
}

CC_EXPORT cc_value *cc_value_new_timestamp(int64_t sec, uint32_t nsec)
{
	if (nsec >= 1000000000u)
		return NULL;
	cc_value *v = cc_value_node(CC_VALUE_TIMESTAMP);
	if (v) {
		v->u.ts.sec = sec;
		v->u.ts.nsec = nsec;
	}
	return v;
}

CC_EXPORT cc_value *cc_value_new_zoned_timestamp(int64_t sec, uint32_t nsec, int64_t offset_us,
						 const char *name, size_t name_len)
{
	cc_value *v = cc_value_new_timestamp(sec, nsec);
	if (v && zone_init(&v->u.ts.zone, offset_us, name, name_len) < 0) {
		free(v);
		return NULL;
	}
	return v;
}

CC_EXPORT cc_value *cc_value_new_date(int32_t days)
{
	cc_value *v = cc_value_node(CC_VALUE_DATE);
	if (v)
		v->u.days = days;
	return v;
}

CC_EXPORT cc_value *cc_value_new_duration(int64_t sec, uint32_t nsec)
{
	if (nsec >= 1000000000u)
		return NULL;
	cc_value *v = cc_value_node(CC_VALUE_DURATION);
	if (v) {
		v->u.dur.sec = sec;
		v->u.dur.nsec = nsec;
	}
	return v;
}

CC_EXPORT cc_value *cc_value_new_timezone(int64_t offset_us, const char *name, size_t name_len)
{
	cc_value *v = cc_value_node(CC_VALUE_TIMEZONE);
	if (v && zone_init(&v->u.tz, offset_us, name, name_len) < 0) {
		free(v);
		return NULL;
	}
	return v;
}

CC_EXPORT cc_value *cc_value_new_path(const char *s, size_t len)
{
	return cc_utf8_valid(s, len) ? cc_value_blob(CC_VALUE_PATH, s, len) : NULL;
}

void cc_value_ext_free(cc_value *v)
{
	if (v->type == CC_VALUE_TIMESTAMP)
		free(v->u.ts.zone.name);
	else if (v->type == CC_VALUE_TIMEZONE)
		free(v->u.tz.name);
	else if (v->type == CC_VALUE_PATH)
		free(v->u.str.ptr);
}

static bool zone_equal(const cc_value_zone *a, const cc_value_zone *b)
{
	if (a->set != b->set)
		return false;
	if (!a->set)
		return true;
	if (a->offset_us != b->offset_us || !a->name != !b->name)
		return false;
	return !a->name || (a->name_len == b->name_len && !memcmp(a->name, b->name, a->name_len));
}

bool cc_value_ext_equal(const cc_value *a, const cc_value *b)
{
	switch (a->type) {
	case CC_VALUE_TIMESTAMP:
		return a->u.ts.sec == b->u.ts.sec && a->u.ts.nsec == b->u.ts.nsec &&
		       zone_equal(&a->u.ts.zone, &b->u.ts.zone);
	case CC_VALUE_DATE:
		return a->u.days == b->u.days;
	case CC_VALUE_DURATION:
		return a->u.dur.sec == b->u.dur.sec && a->u.dur.nsec == b->u.dur.nsec;
	case CC_VALUE_TIMEZONE:
		return zone_equal(&a->u.tz, &b->u.tz);
	case CC_VALUE_PATH:
		return a->u.str.len == b->u.str.len &&
		       !memcmp(a->u.str.ptr, b->u.str.ptr, a->u.str.len);
	default:
		return false;
	}
}

/* ---- the wire ---- */

static uint64_t be(const char *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = (v << 8) | (unsigned char)p[i];
	return v;
}

static void put_be(unsigned char *b, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		b[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
}

/* The 96-bit layout of the standard timestamp: nanoseconds (u32), then
 * seconds (i64), both big-endian; durations use it too. */
static void put_ts96(unsigned char *b, int64_t sec, uint32_t nsec)
{
	put_be(b, nsec, 4);
	put_be(b + 4, (uint64_t)sec, 8);
}

static int ts96(const char *p, int64_t *sec, uint32_t *nsec, const char *what, cc_error *err)
{
	*nsec = (uint32_t)be(p, 4);
	*sec = (int64_t)be(p + 4, 8);
	if (*nsec >= 1000000000u)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "%s nanoseconds out of range", what);
	return 0;
}

static int decode_timestamp(const cc_mp_item *it, cc_value **out, cc_error *err)
{
	int64_t sec;
	uint32_t nsec;
	if (it->len == 4) {
		sec = (int64_t)be(it->ptr, 4);
		nsec = 0;
	} else if (it->len == 8) {
		uint64_t d = be(it->ptr, 8);
		nsec = (uint32_t)(d >> 34);
		sec = (int64_t)(d & 0x3ffffffffull);
		if (nsec >= 1000000000u)
			return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
				       "timestamp nanoseconds out of range");
	} else if (it->len == 12) {
		if (ts96(it->ptr, &sec, &nsec, "timestamp", err) < 0)
			return -1;
	} else {
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "timestamp of %u bytes", it->len);
	}
	*out = cc_value_new_timestamp(sec, nsec);
	return *out ? 0 : cc_fail(err, CC_ERR_INTERNAL, "out of memory");
}

/* A zone's wire form: the offset (i64, microseconds east of UTC), then a
 * byte 0 (no name) or 1 followed by the name's UTF-8 bytes. */
#define ZONE_HEAD 9

static int decode_zone(const char *p, size_t n, int64_t *off, const char **name, size_t *len,
		       cc_error *err)
{
	if (n < ZONE_HEAD)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "zone of %zu bytes", n);
	*off = (int64_t)be(p, 8);
	if (*off < -CC_ZONE_MAX_OFFSET_US || *off > CC_ZONE_MAX_OFFSET_US)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
			       "zone offset not strictly within 24 hours");
	unsigned char named = (unsigned char)p[8];
	if (named > 1 || (!named && n != ZONE_HEAD))
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "zone name flag is not 0 or 1");
	*name = named ? p + ZONE_HEAD : NULL;
	*len = n - ZONE_HEAD;
	if (named && !cc_utf8_valid(*name, *len))
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "zone name is not valid UTF-8");
	return 0;
}

int cc_value_decode_ext(const cc_mp_item *it, cc_value **out, cc_error *err)
{
	int64_t sec, off;
	uint32_t nsec;
	const char *name;
	size_t len;
	switch (it->ext_type) {
	case CC_EXT_TIMESTAMP:
		return decode_timestamp(it, out, err);
	case CC_EXT_BIGINT:
		if (!cc_bigint_text_valid(it->ptr, it->len))
			return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
				       "bigint is not a decimal integer of at most %d digits",
				       CC_BIGINT_MAX_DIGITS);
		*out = cc_value_new_bigint(it->ptr, it->len);
		break;
	case CC_EXT_DATE:
		if (it->len != 4)
			return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "date of %u bytes", it->len);
		*out = cc_value_new_date((int32_t)(uint32_t)be(it->ptr, 4));
		break;
	case CC_EXT_DURATION:
		if (it->len != 12)
			return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "duration of %u bytes",
				       it->len);
		if (ts96(it->ptr, &sec, &nsec, "duration", err) < 0)
			return -1;
		*out = cc_value_new_duration(sec, nsec);
		break;
	case CC_EXT_TIMEZONE:
		if (decode_zone(it->ptr, it->len, &off, &name, &len, err) < 0)
			return -1;
		*out = cc_value_new_timezone(off, name, len);
		break;
	case CC_EXT_ZONED_TIMESTAMP:
		if (it->len < 12 + ZONE_HEAD)
			return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
				       "zoned timestamp of %u bytes", it->len);
		if (ts96(it->ptr, &sec, &nsec, "timestamp", err) < 0 ||
		    decode_zone(it->ptr + 12, it->len - 12, &off, &name, &len, err) < 0)
			return -1;
		*out = cc_value_new_zoned_timestamp(sec, nsec, off, name, len);
		break;
	case CC_EXT_PATH:
		if (!cc_utf8_valid(it->ptr, it->len))
			return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "path is not valid UTF-8");
		*out = cc_value_new_path(it->ptr, it->len);
		break;
	default:
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "unknown ext type %d", it->ext_type);
	}
	return *out ? 0 : cc_fail(err, CC_ERR_INTERNAL, "out of memory");
}

static int pack_ext(msgpack_packer *pk, int8_t type, const void *p, size_t n)
{
	if (msgpack_pack_ext(pk, n, type) < 0)
		return -1;
	return msgpack_pack_ext_body(pk, p, n);
}

int cc_pack_bigint(msgpack_packer *pk, const char *digits, size_t len)
{
	return pack_ext(pk, CC_EXT_BIGINT, digits, len);
}

int cc_pack_timestamp(msgpack_packer *pk, int64_t sec, uint32_t nsec)
{
	unsigned char b[12];
	put_ts96(b, sec, nsec);
	return pack_ext(pk, CC_EXT_TIMESTAMP, b, 12);
}

int cc_pack_date(msgpack_packer *pk, int32_t days)
{
	unsigned char b[4];
	put_be(b, (uint32_t)days, 4);
	return pack_ext(pk, CC_EXT_DATE, b, 4);
}

int cc_pack_duration(msgpack_packer *pk, int64_t sec, uint32_t nsec)
{
	unsigned char b[12];
	put_ts96(b, sec, nsec);
	return pack_ext(pk, CC_EXT_DURATION, b, 12);
}

/* A zone after head (n bytes of it): one ext of type, in two writes. */
static int pack_zoned(msgpack_packer *pk, int8_t type, const unsigned char *head, size_t n,
		      int64_t offset_us, const char *name, size_t len)
{
	unsigned char b[12 + ZONE_HEAD];
	if (n)
		memcpy(b, head, n);
	put_be(b + n, (uint64_t)offset_us, 8);
	b[n + 8] = name != NULL;
	if (msgpack_pack_ext(pk, n + ZONE_HEAD + (name ? len : 0), type) < 0 ||
	    msgpack_pack_ext_body(pk, b, n + ZONE_HEAD) < 0)
		return -1;
	return name && len ? msgpack_pack_ext_body(pk, name, len) : 0;
}

int cc_pack_timezone(msgpack_packer *pk, int64_t offset_us, const char *name, size_t len)
{
	return pack_zoned(pk, CC_EXT_TIMEZONE, NULL, 0, offset_us, name, len);
}

int cc_pack_zoned_timestamp(msgpack_packer *pk, int64_t sec, uint32_t nsec, int64_t offset_us,
			    const char *name, size_t len)
{
	unsigned char head[12];
	put_ts96(head, sec, nsec);
	return pack_zoned(pk, CC_EXT_ZONED_TIMESTAMP, head, 12, offset_us, name, len);
}

int cc_pack_path(msgpack_packer *pk, const char *s, size_t len)
{
	return pack_ext(pk, CC_EXT_PATH, s, len);
}

static int zone_ok(const cc_value_zone *z, cc_error *err)
{
	if (z->offset_us < -CC_ZONE_MAX_OFFSET_US || z->offset_us > CC_ZONE_MAX_OFFSET_US)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "a zone's offset must be strictly within 24 hours");
	if (z->name && !cc_utf8_valid(z->name, z->name_len))
		return cc_fail(err, CC_ERR_INVALID_INPUT, "a zone's name is not valid UTF-8");
	return 0;
}

static int packed(int rc, cc_error *err)
{
	return rc < 0 ? cc_fail(err, CC_ERR_INTERNAL, "out of memory encoding a value") : 0;
}

int cc_value_encode_ext(msgpack_packer *pk, const cc_value *v, cc_error *err)
{
	const cc_value_zone *z = &v->u.ts.zone;
	switch (v->type) {
	case CC_VALUE_TIMESTAMP:
		if (v->u.ts.nsec >= 1000000000u)
			return cc_fail(err, CC_ERR_INVALID_INPUT,
				       "timestamp nanoseconds must be below 1000000000");
		if (!z->set)
			return packed(cc_pack_timestamp(pk, v->u.ts.sec, v->u.ts.nsec), err);
		if (zone_ok(z, err) < 0)
			return -1;
		return packed(cc_pack_zoned_timestamp(pk, v->u.ts.sec, v->u.ts.nsec, z->offset_us,
						      z->name, z->name_len),
			      err);
	case CC_VALUE_DATE:
		return packed(cc_pack_date(pk, v->u.days), err);
	case CC_VALUE_DURATION:
		if (v->u.dur.nsec >= 1000000000u)
			return cc_fail(err, CC_ERR_INVALID_INPUT,
				       "duration nanoseconds must be below 1000000000");
		return packed(cc_pack_duration(pk, v->u.dur.sec, v->u.dur.nsec), err);
	case CC_VALUE_TIMEZONE:
		if (zone_ok(&v->u.tz, err) < 0)
			return -1;
		return packed(
			cc_pack_timezone(pk, v->u.tz.offset_us, v->u.tz.name, v->u.tz.name_len),
			err);
	case CC_VALUE_PATH:
		if (!cc_utf8_valid(v->u.str.ptr, v->u.str.len))
			return cc_fail(err, CC_ERR_INVALID_INPUT, "path is not valid UTF-8");
		return packed(cc_pack_path(pk, v->u.str.ptr, v->u.str.len), err);
	default:
		return cc_fail(err, CC_ERR_INVALID_INPUT, "unknown value type %d", (int)v->type);
	}
}
