/* Bounds-checked MessagePack reader; see mp_reader.h for why it exists.
 * Format: https://github.com/msgpack/msgpack/blob/master/spec.md */
#include "mp_reader.h"

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

int cc_mp_read(cc_mp_reader *r, cc_mp_item *it)
{
	const unsigned char *p = r->p, *end = r->end, *next = NULL;
	memset(it, 0, sizeof(*it));
	if (p >= end)
		return -1;
	unsigned c = *p;
	size_t left = (size_t)(end - p);
#define NEED(n)                                                                                    \
	do {                                                                                       \
		if (left < (n))                                                                    \
			return -1;                                                                 \
	} while (0)
	if (c <= 0x7f) {
		it->kind = CC_MP_INT;
		it->i = c;
		next = p + 1;
	} else if (c >= 0xe0) {
		it->kind = CC_MP_INT;
		it->i = (int8_t)c;
		next = p + 1;
	} else if ((c & 0xf0) == 0x80) {
		it->kind = CC_MP_MAP;
		if (take_count(p, end, 1, c & 0x0f, 2, it, &next) < 0)
			return -1;
	} else if ((c & 0xf0) == 0x90) {
		it->kind = CC_MP_ARRAY;
		if (take_count(p, end, 1, c & 0x0f, 1, it, &next) < 0)
			return -1;
	} else if ((c & 0xe0) == 0xa0) {
		it->kind = CC_MP_STR;
		if (take_payload(p, end, 1, c & 0x1f, it, &next) < 0)
			return -1;
	} else {
		switch (c) {
		case 0xc0:
			it->kind = CC_MP_NIL;
			next = p + 1;
			break;
		case 0xc2:
		case 0xc3:
			it->kind = CC_MP_BOOL;
			it->b = c == 0xc3;
			next = p + 1;
			break;
		case 0xc4:
		case 0xc5:
		case 0xc6: {
			unsigned w = 1u << (c - 0xc4);
			NEED(1 + w);
			it->kind = CC_MP_BIN;
			if (take_payload(p, end, 1 + w, be(p + 1, w), it, &next) < 0)
				return -1;
			break;
		}
		case 0xc7:
		case 0xc8:
		case 0xc9: {
			unsigned w = 1u << (c - 0xc7);
			NEED(2 + w);
			it->kind = CC_MP_EXT;
			it->ext_type = (int8_t)p[1 + w];
			if (take_payload(p, end, 2 + w, be(p + 1, w), it, &next) < 0)
				return -1;
			break;
		}
		case 0xca: {
			NEED(5);
			uint32_t bits = (uint32_t)be(p + 1, 4);
			float f;
			memcpy(&f, &bits, 4);
			it->kind = CC_MP_FLOAT;
			it->f = f;
			next = p + 5;
			break;
		}
		case 0xcb: {
			NEED(9);
			uint64_t bits = be(p + 1, 8);
			memcpy(&it->f, &bits, 8);
			it->kind = CC_MP_FLOAT;
			next = p + 9;
			break;
		}
		case 0xcc:
		case 0xcd:
		case 0xce:
		case 0xcf: {
			unsigned w = 1u << (c - 0xcc);
			NEED(1 + w);
			uint64_t u = be(p + 1, w);
			if (u > INT64_MAX) {
				it->kind = CC_MP_UINT;
				it->u = u;
			} else {
				it->kind = CC_MP_INT;
				it->i = (int64_t)u;
			}
			next = p + 1 + w;
			break;
		}
		case 0xd0:
		case 0xd1:
		case 0xd2:
		case 0xd3: {
			unsigned w = 1u << (c - 0xd0);
			NEED(1 + w);
			uint64_t u = be(p + 1, w);
			/* sign-extend from w bytes */
			unsigned shift = 64 - 8 * w;
			it->kind = CC_MP_INT;
			it->i = (int64_t)(u << shift) >> shift;
			next = p + 1 + w;
			break;
		}
		case 0xd4:
		case 0xd5:
		case 0xd6:
		case 0xd7:
		case 0xd8: {
			unsigned n = 1u << (c - 0xd4);
			NEED(2);
			it->kind = CC_MP_EXT;
			it->ext_type = (int8_t)p[1];
			if (take_payload(p, end, 2, n, it, &next) < 0)
				return -1;
			break;
		}
		case 0xd9:
		case 0xda:
		case 0xdb: {
			unsigned w = 1u << (c - 0xd9);
			NEED(1 + w);
			it->kind = CC_MP_STR;
			if (take_payload(p, end, 1 + w, be(p + 1, w), it, &next) < 0)
				return -1;
			break;
		}
		case 0xdc:
		case 0xdd: {
			unsigned w = c == 0xdc ? 2 : 4;
			NEED(1 + w);
			it->kind = CC_MP_ARRAY;
			if (take_count(p, end, 1 + w, be(p + 1, w), 1, it, &next) < 0)
				return -1;
			break;
		}
		case 0xde:
		case 0xdf: {
			unsigned w = c == 0xde ? 2 : 4;
			NEED(1 + w);
			it->kind = CC_MP_MAP;
			if (take_count(p, end, 1 + w, be(p + 1, w), 2, it, &next) < 0)
				return -1;
			break;
		}
		default: /* 0xc1: never used */
			return -1;
		}
	}
#undef NEED
	r->p = next;
	return 0;
}
