/* A bounds-checked MessagePack reader for untrusted bytes.
 *
 * Why not msgpack-c's unpacker: it allocates the element count an array or
 * map header declares before reading any element (a 5-byte header can ask
 * for gigabytes) and caps nesting at a compile-time 32. This reader never
 * allocates: it yields one item header at a time, checks every declared
 * length against the bytes actually left, and leaves depth and element caps
 * to the caller (value.c). msgpack-c is still used for all encoding.
 * Pure helper: no I/O, no allocation. */
#ifndef CC_COMMON_MP_READER_H
#define CC_COMMON_MP_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum cc_mp_kind {
	CC_MP_NIL,
	CC_MP_BOOL,
	CC_MP_INT,   /* fits int64: .i */
	CC_MP_UINT,  /* above INT64_MAX: .u */
	CC_MP_FLOAT, /* float32 or float64, widened: .f */
	CC_MP_STR,   /* .ptr/.len, UTF-8 not yet checked */
	CC_MP_BIN,   /* .ptr/.len */
	CC_MP_ARRAY, /* .len elements follow */
	CC_MP_MAP,   /* .len key/value pairs follow */
	CC_MP_EXT,   /* .ext_type, .ptr/.len */
} cc_mp_kind;

typedef struct cc_mp_item {
	cc_mp_kind kind;
	bool b;
	int8_t ext_type;
	int64_t i;
	uint64_t u;
	double f;
	const char *ptr; /* borrowed from the reader's buffer */
	uint32_t len;
} cc_mp_item;

typedef struct cc_mp_reader {
	const unsigned char *p, *end;
} cc_mp_reader;

static inline void cc_mp_reader_init(cc_mp_reader *r, const void *buf, size_t len)
{
	r->p = buf;
	r->end = r->p + len;
}

static inline size_t cc_mp_left(const cc_mp_reader *r)
{
	return (size_t)(r->end - r->p);
}

/* Read one item header (and, for str/bin/ext, its payload). Returns 0, or -1
 * when the bytes are truncated, use the never-used byte 0xc1, or declare
 * more elements than bytes remain. On -1 *r is unchanged. */
int cc_mp_read(cc_mp_reader *r, cc_mp_item *it);

#endif
