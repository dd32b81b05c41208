/* The value codec: cc_value trees to and from MessagePack (DESIGN.md
 * section 5). Used by the supervisor (decoding what the worker sends) and
 * by the worker (decoding what the host sends). Pure helpers.
 *
 * Wire form: nil, bool, int (int64), float64, str (UTF-8), bin, array, map
 * (str keys, unique), and ext types (value_ext.c), each payload checked
 * exactly by the decoder (a wrong length, range or UTF-8 is a
 * protocol_violation):
 *   1  bigint: ASCII decimal "-?[1-9][0-9]*" or "0", at most 4300 digits
 *   -1 the standard MessagePack timestamp (32, 64 or 96 bit), in UTC
 *   2  date: days since 1970-01-01, i32 big-endian (4 bytes)
 *   3  duration: nanoseconds u32 (< 1e9) then seconds i64, big-endian, as
 *      the 96-bit timestamp (12 bytes): sec + nsec / 1e9 seconds
 *   4  timezone: offset i64 (microseconds east of UTC, |x| <=
 *      CC_ZONE_MAX_OFFSET_US), then a byte 0 (no name) or 1 and the
 *      name's UTF-8 bytes (9 bytes, or 9 + the name's)
 *   5  zoned timestamp: the 96-bit timestamp (UTC) then a timezone's
 *      payload: the offset (and name) it was written in
 *   6  path: a POSIX path's UTF-8 text */
#ifndef CC_COMMON_VALUE_H
#define CC_COMMON_VALUE_H

#include <msgpack.h>

#include "codecage.h"
#include "mp_reader.h"

#define CC_EXT_BIGINT 1
#define CC_EXT_TIMESTAMP (-1)
#define CC_EXT_DATE 2
#define CC_EXT_DURATION 3
#define CC_EXT_TIMEZONE 4
#define CC_EXT_ZONED_TIMESTAMP 5
#define CC_EXT_PATH 6

/* Caps applied while decoding; callers start from cc_value_default_caps. */
typedef struct cc_value_caps {
	unsigned max_depth; /* containers deep, counting the envelope */
	size_t nodes_left;  /* decremented per node */
	unsigned envelope;  /* levels of protocol message above the value */
	/* Decoding only: bytes of host memory the decoded tree may take, an
	 * upper bound of malloc's real cost per node, payload, container
	 * slot and duplicate-key table (value.c, charge()); 0 = no cap. */
	size_t mem_cap, mem_left;
} cc_value_caps;

static inline cc_value_caps cc_value_default_caps(void)
{
	return (cc_value_caps){ CC_VALUE_MAX_DEPTH, CC_VALUE_MAX_NODES, 0, 0, 0 };
}

/* Nodes one value may hold under a result cap of max_result bytes (see
 * CC_VALUE_MAX_NODES). Both sides use it, so an honest worker never sends
 * what the supervisor refuses. */
static inline size_t cc_value_node_budget(uint64_t max_result)
{
	uint64_t n = max_result / 8;
	return n < CC_VALUE_MAX_NODES ? (size_t)n : CC_VALUE_MAX_NODES;
}

/* Host memory a decoded frame's value may take: 3x max_result (at least
 * 1 MiB), so that with the frame's own buffer the supervisor holds at most
 * 4x the largest frame it accepts (SECURITY.md, "decoder amplification"). */
static inline size_t cc_value_mem_budget(uint64_t max_result)
{
	uint64_t n = 3 * max_result;
	return n < (1u << 20) ? (size_t)(1u << 20) : (size_t)n;
}

/* The host memory (bytes) cc_value_decode would charge for the one value
 * packed in buf[0..len), computed without allocating; SIZE_MAX when the
 * bytes are malformed. The worker checks its results and tool arguments
 * with it (against cc_value_mem_budget less CC_VALUE_MEM_ENVELOPE, for the
 * frame's own fields), so an honest worker never sends a value the
 * supervisor refuses. */
size_t cc_value_decoded_cost(const void *buf, size_t len);
#define CC_VALUE_MEM_ENVELOPE (64u << 10)

/* Caps for a whole frame whose value sits one map below the top. */
static inline cc_value_caps cc_value_frame_caps(uint64_t max_result)
{
	/* +16 nodes: the frame's own fields are not part of the value. */
	size_t mem = cc_value_mem_budget(max_result);
	return (cc_value_caps){ CC_VALUE_MAX_DEPTH + 1, cc_value_node_budget(max_result) + 16, 1,
				mem, mem };
}

/* Decode one value at r into *out (owned by the caller; NULL for nil).
 * Validates everything: UTF-8 strings, unique str map keys, bigint syntax
 * and size, timestamp layout, known ext types, caps. On failure returns -1
 * with err->kind = protocol_violation and a message naming the problem
 * (output_limit when the tree would take more than caps->mem_cap bytes,
 * internal when out of memory); nothing is leaked and *out is NULL. */
int cc_value_decode(cc_mp_reader *r, cc_value **out, cc_value_caps *caps, cc_error *err);

/* Encode v (borrowed) with msgpack-c. Fails with invalid_input when v breaks
 * the caps or holds invalid UTF-8 / bigint text, internal when out of
 * memory (a write to the packer's buffer failed, or checking a map's keys);
 * after a failure the packer's buffer holds a partial value: drop it. */
int cc_value_encode(msgpack_packer *pk, const cc_value *v, cc_value_caps *caps, cc_error *err);

/* Engine helpers for the ext types. The arguments must satisfy the wire
 * rules above (digits the bigint syntax, nsec < 1e9, an offset within
 * range, UTF-8 names and paths; a NULL name is none): the decoder on the
 * other side checks. Return 0, or -1 when the packer's write failed (out
 * of memory). */
int cc_pack_bigint(msgpack_packer *pk, const char *digits, size_t len);
int cc_pack_timestamp(msgpack_packer *pk, int64_t sec, uint32_t nsec);
int cc_pack_zoned_timestamp(msgpack_packer *pk, int64_t sec, uint32_t nsec, int64_t offset_us,
			    const char *name, size_t len);
int cc_pack_date(msgpack_packer *pk, int32_t days);
int cc_pack_duration(msgpack_packer *pk, int64_t sec, uint32_t nsec);
int cc_pack_timezone(msgpack_packer *pk, int64_t offset_us, const char *name, size_t len);
int cc_pack_path(msgpack_packer *pk, const char *s, size_t len);

/* Internal, for value_ext.c: a zeroed node of type t; one whose str holds
 * a copy of p[0..len) with a NUL after it. NULL when out of memory. */
cc_value *cc_value_node(cc_value_type t);
cc_value *cc_value_blob(cc_value_type t, const void *p, size_t len);

/* value_ext.c, for value.c: an ext item decoded into *out (0, or -1 with
 * err: protocol_violation, internal when out of memory); the ext types'
 * nodes encoded (as cc_value_encode), freed (their own fields only) and
 * compared (a and b of the same type). */
int cc_value_decode_ext(const cc_mp_item *it, cc_value **out, cc_error *err);
int cc_value_encode_ext(msgpack_packer *pk, const cc_value *v, cc_error *err);
void cc_value_ext_free(cc_value *v);
bool cc_value_ext_equal(const cc_value *a, const cc_value *b);

/* True when s[0..len) is a canonical decimal integer within
 * CC_BIGINT_MAX_DIGITS digits. */
bool cc_bigint_text_valid(const char *s, size_t len);

/* Internal: the value under key in a map (borrowed), or NULL when absent
 * (check *found to tell a missing key from a null value). */
const cc_value *cc_value_map_get(const cc_value *map, const char *key, bool *found);

/* Internal: decode a whole buffer as exactly one value (no trailing bytes). */
int cc_value_decode_all(const void *buf, size_t len, cc_value **out, cc_value_caps *caps,
			cc_error *err);

#endif
