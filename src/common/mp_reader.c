/* Bounds-checked MessagePack reader; see mp_reader.h for why it exists.
 * Format: https://github.com/msgpack/msgpack/blob/master/spec.md */
#include "mp_reader.h"

#include <stdbool.h>
#include <string.h>

static uint64_t be(const unsigned char *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = (v << 8) | p[i];
	return v;
}

/* Payload of `n` bytes after a header of `h` bytes. */
static int take_payload(const unsigned char *p, const unsigned char *end, unsigned h, uint64_t n,
			cc_mp_item *it, const unsigned char **next)
{
	if ((uint64_t)(end - p) < h || (uint64_t)(end - p - h) < n)
		return -1;
	it->ptr = (const char *)p + h;
	it->len = (uint32_t)n;
	*next = p + h + n;
	return 0;
}

/* Container of `n` elements, each needing at least `per` bytes. */
static int take_count(const unsigned char *p, const unsigned char *end, unsigned h, uint64_t n,
		      unsigned per, cc_mp_item *it, const unsigned char **next)
{
	if ((uint64_t)(end - p) < h || (uint64_t)(end - p - h) / per < n)
		return -1;
	it->len = (uint32_t)n;
	*next = p + h;
	return 0;
}

/* Integers and floats with a fixed-width body (0xca..0xd3), p at the
 * header byte c, left bytes from p. */
static int read_number(const unsigned char *p, size_t left, unsigned c, cc_mp_item *it,
		       const unsigned char **next)
{
	if (c == 0xca || c == 0xcb) {
		unsigned w = c == 0xca ? 4 : 8;
		if (left < 1 + w)
			return -1;
		uint64_t bits = be(p + 1, w);
		if (w == 4) {
			uint32_t b32 = (uint32_t)bits;
			float f;
			memcpy(&f, &b32, 4);
			it->f = f;
		} else {
			memcpy(&it->f, &bits, 8);
		}
		it->kind = CC_MP_FLOAT;
		*next = p + 1 + w;
		return 0;
	}
	unsigned w = 1u << ((c - 0xcc) & 3); /* 0xcc..0xcf unsigned, 0xd0..0xd3 signed */
	if (left < 1 + w)
		return -1;
	uint64_t u = be(p + 1, w);
	if (c >= 0xd0) { /* sign-extend from w bytes */
		unsigned shift = 64 - 8 * w;
		it->kind = CC_MP_INT;
		it->i = (int64_t)(u << shift) >> shift;
	} else if (u > INT64_MAX) {
		it->kind = CC_MP_UINT;
		it->u = u;
	} else {
		it->kind = CC_MP_INT;
		it->i = (int64_t)u;
	}
	*next = p + 1 + w;
	return 0;
}

/* str, bin and ext with a length field (0xc4..0xc9, 0xd4..0xdb). */
static int read_blob(const unsigned char *p, const unsigned char *end, unsigned c, cc_mp_item *it,
		     const unsigned char **next)
{
	size_t left = (size_t)(end - p);
	if (c >= 0xd4 && c <= 0xd8) { /* fixext 1..16 */
		if (left < 2)
			return -1;
		it->kind = CC_MP_EXT;
		it->ext_type = (int8_t)p[1];
		return take_payload(p, end, 2, 1u << (c - 0xd4), it, next);
	}
	/* str 8/16/32, bin 8/16/32, or ext 8/16/32 (its type byte follows
	 * the length) */
	bool str = c >= 0xd9, bin = c <= 0xc6;
	unsigned w = 1u << (c - (str ? 0xd9 : bin ? 0xc4 : 0xc7));
	unsigned h = (str || bin ? 1 : 2) + w;
	if (left < h)
		return -1;
	it->kind = str ? CC_MP_STR : bin ? CC_MP_BIN : CC_MP_EXT;
	if (!str && !bin)
		it->ext_type = (int8_t)p[1 + w];
	return take_payload(p, end, h, be(p + 1, w), it, next);
}

/* array 16/32 and map 16/32 (0xdc..0xdf). */
static int read_container(const unsigned char *p, const unsigned char *end, unsigned c,
			  cc_mp_item *it, const unsigned char **next)
{
	unsigned w = (c & 1) ? 4 : 2;
	if ((size_t)(end - p) < 1 + w)
		return -1;
	bool map = c >= 0xde;
	it->kind = map ? CC_MP_MAP : CC_MP_ARRAY;
	return take_count(p, end, 1 + w, be(p + 1, w), map ? 2 : 1, it, next);
}

/* Everything that is not a fixint, fixmap, fixarray or fixstr. */
static int read_other(const unsigned char *p, const unsigned char *end, unsigned c, cc_mp_item *it,
		      const unsigned char **next)
{
	if (c == 0xc0 || c == 0xc2 || c == 0xc3) {
		it->kind = c == 0xc0 ? CC_MP_NIL : CC_MP_BOOL;
		it->b = c == 0xc3;
		*next = p + 1;
		return 0;
	}
	if (c >= 0xca && c <= 0xd3)
		return read_number(p, (size_t)(end - p), c, it, next);
	if (c >= 0xdc)
		return read_container(p, end, c, it, next);
	if (c >= 0xc4)
		return read_blob(p, end, c, it, next);
	return -1; /* 0xc1: never used */
}

int cc_mp_read(cc_mp_reader *r, cc_mp_item *it)
{
	const unsigned char *p = r->p, *end = r->end, *next = NULL;
	memset(it, 0, sizeof(*it));
	if (p >= end)
		return -1;
	unsigned c = *p;
	int rc = 0;
	if (c <= 0x7f || c >= 0xe0) { /* positive and negative fixint */
		it->kind = CC_MP_INT;
		it->i = c <= 0x7f ? (int64_t)c : (int8_t)c;
		next = p + 1;
	} else if (c <= 0x9f) { /* fixmap 0x80..0x8f, fixarray 0x90..0x9f */
		bool map = c <= 0x8f;
		it->kind = map ? CC_MP_MAP : CC_MP_ARRAY;
		rc = take_count(p, end, 1, c & 0x0f, map ? 2 : 1, it, &next);
	} else if (c <= 0xbf) { /* fixstr */
		it->kind = CC_MP_STR;
		rc = take_payload(p, end, 1, c & 0x1f, it, &next);
	} else {
		rc = read_other(p, end, c, it, &next);
	}
	if (rc < 0)
		return -1;
	r->p = next;
	return 0;
}
