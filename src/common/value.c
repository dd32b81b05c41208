/* cc_value: constructors, equality, and the MessagePack codec. */
#include "value.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "error.h"
#include "utf8.h"

CC_EXPORT cc_value_type cc_value_type_of(const cc_value *v)
{
	return v ? v->type : CC_VALUE_NULL;
}

cc_value *cc_value_node(cc_value_type t)
{
	cc_value *v = calloc(1, sizeof(*v));
	if (v)
		v->type = t;
	return v;
}

CC_EXPORT cc_value *cc_value_new_bool(bool b)
{
	cc_value *v = cc_value_node(CC_VALUE_BOOL);
	if (v)
		v->u.b = b;
	return v;
}

CC_EXPORT cc_value *cc_value_new_int(int64_t i)
{
	cc_value *v = cc_value_node(CC_VALUE_INT);
	if (v)
		v->u.i = i;
	return v;
}

CC_EXPORT cc_value *cc_value_new_float(double f)
{
	cc_value *v = cc_value_node(CC_VALUE_FLOAT);
	if (v)
		v->u.f = f;
	return v;
}

cc_value *cc_value_blob(cc_value_type t, const void *p, size_t len)
{
	cc_value *v = cc_value_node(t);
	if (!v)
		return NULL;
	v->u.str.ptr = malloc(len + 1);
	if (!v->u.str.ptr) {
		free(v);
		return NULL;
	}
	if (len)
		memcpy(v->u.str.ptr, p, len);
	v->u.str.ptr[len] = 0;
	v->u.str.len = len;
	return v;
}

bool cc_bigint_text_valid(const char *s, size_t len)
{
	size_t i = 0;
	if (len && s[0] == '-')
		i = 1;
	if (i == len || len - i > CC_BIGINT_MAX_DIGITS)
		return false;
	if (s[i] == '0' && len - i > 1)
		return false;
	if (s[i] == '0' && i == 1)
		return false; /* "-0" */
	for (; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

CC_EXPORT cc_value *cc_value_new_bigint(const char *digits, size_t len)
{
	if (!cc_bigint_text_valid(digits, len))
		return NULL;
	return cc_value_blob(CC_VALUE_BIGINT, digits, len);
}

CC_EXPORT cc_value *cc_value_new_string(const char *s, size_t len)
{
	if (!cc_utf8_valid(s, len))
		return NULL;
	return cc_value_blob(CC_VALUE_STRING, s, len);
}

CC_EXPORT cc_value *cc_value_new_bytes(const void *p, size_t len)
{
	return cc_value_blob(CC_VALUE_BYTES, p, len);
}

CC_EXPORT cc_value *cc_value_new_array(void)
{
	return cc_value_node(CC_VALUE_ARRAY);
}

CC_EXPORT cc_value *cc_value_new_map(void)
{
	return cc_value_node(CC_VALUE_MAP);
}

CC_EXPORT int cc_value_array_push(cc_value *arr, cc_value *item)
{
	if (!arr || arr->type != CC_VALUE_ARRAY)
		goto fail;
	if (arr->u.array.len == arr->u.array.cap) {
		size_t cap = arr->u.array.cap ? arr->u.array.cap * 2 : 4;
		cc_value **items = realloc(arr->u.array.items, cap * sizeof(*items));
		if (!items)
			goto fail;
		arr->u.array.items = items;
		arr->u.array.cap = cap;
	}
	arr->u.array.items[arr->u.array.len++] = item;
	return 0;
fail:
	cc_value_free(item);
	return -1;
}

/* Append without the duplicate-key scan; the decoder checks keys itself. */
static int map_append(cc_value *map, char *key, size_t key_len, cc_value *val)
{
	if (map->u.map.len == map->u.map.cap) {
		size_t cap = map->u.map.cap ? map->u.map.cap * 2 : 4;
		char **keys = realloc(map->u.map.keys, cap * sizeof(*keys));
		if (keys)
			map->u.map.keys = keys;
		size_t *lens = realloc(map->u.map.key_lens, cap * sizeof(*lens));
		if (lens)
			map->u.map.key_lens = lens;
		cc_value **vals = realloc(map->u.map.vals, cap * sizeof(*vals));
		if (vals)
			map->u.map.vals = vals;
		if (!keys || !lens || !vals)
			return -1;
		map->u.map.cap = cap;
	}
	map->u.map.keys[map->u.map.len] = key;
	map->u.map.key_lens[map->u.map.len] = key_len;
	map->u.map.vals[map->u.map.len] = val;
	map->u.map.len++;
	return 0;
}

static bool map_has(const cc_value *map, const char *key, size_t key_len)
{
	for (size_t i = 0; i < map->u.map.len; i++)
		if (map->u.map.key_lens[i] == key_len &&
		    memcmp(map->u.map.keys[i], key, key_len) == 0)
			return true;
	return false;
}

CC_EXPORT int cc_value_map_set(cc_value *map, const char *key, size_t key_len, cc_value *val)
{
	char *k = NULL;
	if (!map || map->type != CC_VALUE_MAP || !cc_utf8_valid(key, key_len) ||
	    map_has(map, key, key_len))
		goto fail;
	k = malloc(key_len + 1);
	if (!k)
		goto fail;
	memcpy(k, key, key_len);
	k[key_len] = 0;
	if (map_append(map, k, key_len, val) < 0)
		goto fail;
	return 0;
fail:
	free(k);
	cc_value_free(val);
	return -1;
}

CC_EXPORT void cc_value_free(cc_value *v)
{
	if (!v)
		return;
	switch (v->type) {
	case CC_VALUE_STRING:
	case CC_VALUE_BIGINT:
	case CC_VALUE_BYTES:
		free(v->u.str.ptr);
		break;
	case CC_VALUE_TIMESTAMP:
	case CC_VALUE_TIMEZONE:
	case CC_VALUE_PATH:
		cc_value_ext_free(v);
		break;
	case CC_VALUE_ARRAY:
		for (size_t i = 0; i < v->u.array.len; i++)
			cc_value_free(v->u.array.items[i]);
		free(v->u.array.items);
		break;
	case CC_VALUE_MAP:
		for (size_t i = 0; i < v->u.map.len; i++) {
			free(v->u.map.keys[i]);
			cc_value_free(v->u.map.vals[i]);
		}
		free(v->u.map.keys);
		free(v->u.map.key_lens);
		free(v->u.map.vals);
		break;
	default:
		break;
	}
	free(v);
}

CC_EXPORT bool cc_value_equal(const cc_value *a, const cc_value *b)
{
	if (!a || !b)
		return a == b;
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case CC_VALUE_BOOL:
		return a->u.b == b->u.b;
	case CC_VALUE_INT:
		return a->u.i == b->u.i;
	case CC_VALUE_FLOAT:
		if (isnan(a->u.f) || isnan(b->u.f))
			return isnan(a->u.f) && isnan(b->u.f);
		return a->u.f == b->u.f && signbit(a->u.f) == signbit(b->u.f);
	case CC_VALUE_STRING:
	case CC_VALUE_BIGINT:
	case CC_VALUE_BYTES:
		return a->u.str.len == b->u.str.len &&
		       memcmp(a->u.str.ptr, b->u.str.ptr, a->u.str.len) == 0;
	case CC_VALUE_ARRAY:
		if (a->u.array.len != b->u.array.len)
			return false;
		for (size_t i = 0; i < a->u.array.len; i++)
			if (!cc_value_equal(a->u.array.items[i], b->u.array.items[i]))
				return false;
		return true;
	case CC_VALUE_MAP:
		if (a->u.map.len != b->u.map.len)
			return false;
		for (size_t i = 0; i < a->u.map.len; i++)
			if (a->u.map.key_lens[i] != b->u.map.key_lens[i] ||
			    memcmp(a->u.map.keys[i], b->u.map.keys[i], a->u.map.key_lens[i]) ||
			    !cc_value_equal(a->u.map.vals[i], b->u.map.vals[i]))
				return false;
		return true;
	default: /* the ext types */
		return cc_value_ext_equal(a, b);
	}
}

/* ---- decoding ---- */

/* Duplicate-key detection for maps being decoded: an open-addressing set
 * of key indices, so a hostile map of many keys costs O(n), not O(n^2). */
struct key_set {
	size_t *slots; /* index + 1; 0 = empty */
	size_t mask;
	uint64_t seed;
};

/* A per-process random seed and a final mix, so a worker cannot choose keys
 * that all land in one probe chain. */
static uint64_t hash_seed(void)
{
	static uint64_t seed;
	uint64_t s = __atomic_load_n(&seed, __ATOMIC_RELAXED);
	if (!s) {
		if (getrandom(&s, sizeof(s), 0) != sizeof(s))
			s = (uint64_t)(uintptr_t)&seed ^ 0x9e3779b97f4a7c15ull;
		s |= 1;
		__atomic_store_n(&seed, s, __ATOMIC_RELAXED);
	}
	return s;
}

static uint64_t key_hash(uint64_t seed, const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ seed; /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
	h ^= h >> 33; /* murmur3's finaliser: every bit reaches the low bits */
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

/* What malloc really takes for n bytes, as an upper bound: glibc's chunk
 * (n plus an 8-byte header, rounded up to 16, at least 32) or, for large
 * blocks, n plus a page of rounding. */
static size_t malloc_cost(size_t n)
{
	if (n >= (128u << 10))
		return n + 4096;
	return n < 24 ? 32 : (n + 8 + 15) & ~(size_t)15;
}

/* Bytes charged per element beyond its node: a container slot array that
 * doubles (old and new block both live during realloc: 3 pointers per
 * element at the peak), for maps three such arrays plus the key table. */
#define ARRAY_SLOT_COST (3 * sizeof(void *))
#define MAP_SLOT_COST (3 * (sizeof(char *) + sizeof(size_t) + sizeof(cc_value *)))
#define KEY_SET_COST (6 * sizeof(size_t)) /* table <= 4n slots, 6n while it grows */
#define CONTAINER_BASE_COST 256		  /* the first blocks of each array */

/* Charge n bytes of host memory to the decode; fails with output_limit
 * once the cap is used up. */
static int charge(cc_value_caps *caps, size_t n, cc_error *err)
{
	if (!caps->mem_cap)
		return 0;
	if (n > caps->mem_left)
		return cc_fail(err, CC_ERR_OUTPUT_LIMIT,
			       "the value would take more than %zu bytes of host memory once "
			       "decoded (3x max_result); return a smaller value, or raise "
			       "max_result",
			       caps->mem_cap);
	caps->mem_left -= n;
	return 0;
}

static void refund(cc_value_caps *caps, size_t n)
{
	if (caps->mem_cap)
		caps->mem_left += n;
}

/* The table starts small and doubles as keys arrive (a map's declared
 * length is the worker's word, not a size to reserve). */
static int key_set_init(struct key_set *ks)
{
	ks->slots = calloc(16, sizeof(*ks->slots));
	ks->mask = 15;
	ks->seed = hash_seed();
	return ks->slots ? 0 : -1;
}

/* Returns true when map already holds key; otherwise records index idx
 * (the table must have room: key_set_reserve). */
static bool key_set_seen(struct key_set *ks, const cc_value *map, const char *key, size_t n,
			 size_t idx)
{
	for (size_t i = key_hash(ks->seed, key, n) & ks->mask;; i = (i + 1) & ks->mask) {
		size_t s = ks->slots[i];
		if (!s) {
			ks->slots[i] = idx + 1;
			return false;
		}
		if (map->u.map.key_lens[s - 1] == n && memcmp(map->u.map.keys[s - 1], key, n) == 0)
			return true;
	}
}

static void key_set_put(struct key_set *ks, const cc_value *map, size_t idx)
{
	const char *key = map->u.map.keys[idx];
	size_t n = map->u.map.key_lens[idx];
	size_t i = key_hash(ks->seed, key, n) & ks->mask;
	while (ks->slots[i])
		i = (i + 1) & ks->mask;
	ks->slots[i] = idx + 1;
}

/* Room for one more key (count keys held): doubles the table past half
 * full, re-inserting the map's keys. Returns -1 when out of memory. */
static int key_set_reserve(struct key_set *ks, const cc_value *map, size_t count)
{
	if (2 * (count + 1) <= ks->mask + 1)
		return 0;
	size_t cap = 2 * (ks->mask + 1);
	size_t *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	free(ks->slots);
	ks->slots = slots;
	ks->mask = cap - 1;
	for (size_t k = 0; k < count; k++)
		key_set_put(ks, map, k);
	return 0;
}

/* What one item costs before its elements: every node but nil is a
 * malloc'd cc_value; strings, bytes and bigints add a copy of their
 * payload, containers their base. */
static size_t item_cost(const cc_mp_item *it)
{
	size_t cost = it->kind == CC_MP_NIL ? 0 : malloc_cost(sizeof(cc_value));
	if (it->kind == CC_MP_STR || it->kind == CC_MP_BIN || it->kind == CC_MP_EXT)
		cost += malloc_cost((size_t)it->len + 1);
	if (it->kind == CC_MP_ARRAY || it->kind == CC_MP_MAP)
		cost += CONTAINER_BASE_COST;
	return cost;
}

/* A value that is not a container: *out is NULL for nil. */
static int decode_scalar(const cc_mp_item *it, cc_value **out, cc_error *err)
{
	switch (it->kind) {
	case CC_MP_NIL:
		return 0;
	case CC_MP_BOOL:
		*out = cc_value_new_bool(it->b);
		break;
	case CC_MP_INT:
		*out = cc_value_new_int(it->i);
		break;
	case CC_MP_UINT:
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
			       "integer above int64 not sent as a bigint");
	case CC_MP_FLOAT:
		*out = cc_value_new_float(it->f);
		break;
	case CC_MP_STR:
		if (!cc_utf8_valid(it->ptr, it->len))
			return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "string is not valid UTF-8");
		*out = cc_value_new_string(it->ptr, it->len);
		break;
	case CC_MP_BIN:
		*out = cc_value_new_bytes(it->ptr, it->len);
		break;
	default: /* CC_MP_EXT: every ext type is checked there (value_ext.c) */
		return cc_value_decode_ext(it, out, err);
	}
	return *out ? 0 : cc_fail(err, CC_ERR_INTERNAL, "out of memory");
}

static int decode_in(cc_mp_reader *r, cc_value **out, cc_value_caps *caps, unsigned depth,
		     cc_error *err);

/* One key and its value into map (a str key, UTF-8, not seen before);
 * *temp grows by what the key table was charged (refunded after the map). */
static int decode_map_entry(cc_mp_reader *r, cc_value *map, struct key_set *ks, cc_value_caps *caps,
			    unsigned depth, size_t *temp, cc_error *err)
{
	cc_mp_item key;
	cc_value *child = NULL;
	if (cc_mp_read(r, &key) < 0 || key.kind != CC_MP_STR)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "map key is not a string");
	if (!cc_utf8_valid(key.ptr, key.len))
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "map key is not valid UTF-8");
	if (charge(caps, malloc_cost((size_t)key.len + 1) + KEY_SET_COST, err) < 0)
		return -1;
	*temp += KEY_SET_COST;
	if (key_set_reserve(ks, map, map->u.map.len) < 0)
		return -1;
	if (key_set_seen(ks, map, key.ptr, key.len, map->u.map.len))
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "duplicate map key");
	if (decode_in(r, &child, caps, depth + 1, err) < 0)
		return -1;
	char *kc = malloc(key.len + 1);
	if (!kc || (memcpy(kc, key.ptr, key.len), kc[key.len] = 0,
		    map_append(map, kc, key.len, child) < 0)) {
		free(kc);
		cc_value_free(child);
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	}
	return 0;
}

/* An array or map of it->len elements into *out. */
static int decode_container(cc_mp_reader *r, const cc_mp_item *it, cc_value **out,
			    cc_value_caps *caps, unsigned depth, cc_error *err)
{
	bool array = it->kind == CC_MP_ARRAY;
	if (depth >= caps->max_depth)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "value nested deeper than %u levels",
			       caps->max_depth - caps->envelope);
	*out = array ? cc_value_new_array() : cc_value_new_map();
	if (!*out)
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	struct key_set ks = { NULL, 0, 0 };
	size_t temp = 0; /* charged for the key table, refunded after */
	int rc = !array && key_set_init(&ks) < 0 ? -1 : 0;
	for (uint32_t k = 0; rc == 0 && k < it->len; k++) {
		cc_value *child = NULL;
		rc = charge(caps, array ? ARRAY_SLOT_COST : MAP_SLOT_COST, err);
		if (rc == 0 && array) {
			rc = decode_in(r, &child, caps, depth + 1, err);
			if (rc == 0 && cc_value_array_push(*out, child) < 0)
				rc = -1; /* the push freed child */
		} else if (rc == 0) {
			rc = decode_map_entry(r, *out, &ks, caps, depth, &temp, err);
		}
	}
	free(ks.slots);
	refund(caps, temp);
	if (rc == 0)
		return 0;
	if (err && err->kind == CC_OK)
		cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	cc_value_free(*out);
	*out = NULL;
	return -1;
}

static int decode_in(cc_mp_reader *r, cc_value **out, cc_value_caps *caps, unsigned depth,
		     cc_error *err)
{
	cc_mp_item it;
	*out = NULL;
	if (caps->nodes_left == 0)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
			       "value has more elements than its cap allows");
	caps->nodes_left--;
	if (cc_mp_read(r, &it) < 0)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
			       "truncated or malformed MessagePack");
	if (charge(caps, item_cost(&it), err) < 0)
		return -1;
	if (it.kind == CC_MP_ARRAY || it.kind == CC_MP_MAP)
		return decode_container(r, &it, out, caps, depth, err);
	return decode_scalar(&it, out, err);
}

int cc_value_decode(cc_mp_reader *r, cc_value **out, cc_value_caps *caps, cc_error *err)
{
	return decode_in(r, out, caps, 0, err);
}

/* What decode_in charges, in the same order, without allocating: the peak
 * of the running total (key tables are refunded after their map). */
struct cost {
	size_t used, peak;
};

static void cost_add(struct cost *c, size_t n)
{
	c->used += n;
	if (c->used > c->peak)
		c->peak = c->used;
}

static int cost_in(cc_mp_reader *r, struct cost *c, unsigned depth)
{
	cc_mp_item it;
	if (depth > 2 * CC_VALUE_MAX_DEPTH || cc_mp_read(r, &it) < 0)
		return -1;
	size_t n = it.kind == CC_MP_NIL ? 0 : malloc_cost(sizeof(cc_value));
	if (it.kind == CC_MP_STR || it.kind == CC_MP_BIN || it.kind == CC_MP_EXT)
		n += malloc_cost((size_t)it.len + 1);
	if (it.kind == CC_MP_ARRAY || it.kind == CC_MP_MAP)
		n += CONTAINER_BASE_COST;
	cost_add(c, n);
	size_t temp = 0;
	for (uint32_t k = 0; (it.kind == CC_MP_ARRAY || it.kind == CC_MP_MAP) && k < it.len; k++) {
		if (it.kind == CC_MP_ARRAY) {
			cost_add(c, ARRAY_SLOT_COST);
			if (cost_in(r, c, depth + 1) < 0)
				return -1;
			continue;
		}
		cc_mp_item key;
		cost_add(c, MAP_SLOT_COST);
		if (cc_mp_read(r, &key) < 0 || key.kind != CC_MP_STR)
			return -1;
		cost_add(c, malloc_cost((size_t)key.len + 1) + KEY_SET_COST);
		temp += KEY_SET_COST;
		if (cost_in(r, c, depth + 1) < 0)
			return -1;
	}
	c->used -= temp;
	return 0;
}

size_t cc_value_decoded_cost(const void *buf, size_t len)
{
	cc_mp_reader r;
	struct cost c = { 0, 0 };
	cc_mp_reader_init(&r, buf, len);
	return cost_in(&r, &c, 0) < 0 ? SIZE_MAX : c.peak;
}

/* ---- encoding ---- */

/* 1 when a hand-built map's keys are unique, 0 when not, -1 out of memory. */
static int map_keys_unique(const cc_value *map)
{
	struct key_set ks;
	if (key_set_init(&ks) < 0)
		return -1;
	int unique = 1;
	for (size_t i = 0; i < map->u.map.len && unique; i++) {
		if (key_set_reserve(&ks, map, i) < 0) {
			unique = -1;
			break;
		}
		if (key_set_seen(&ks, map, map->u.map.keys[i], map->u.map.key_lens[i], i))
			unique = 0;
	}
	free(ks.slots);
	return unique;
}

/* A msgpack-c write's result: they fail only when the buffer cannot grow
 * (and a later, smaller write may work again: stop at the first). */
static int packed(int rc, cc_error *err)
{
	return rc < 0 ? cc_fail(err, CC_ERR_INTERNAL, "out of memory encoding a value") : 0;
}

/* A str or bin header and its body. */
static int pack_blob(msgpack_packer *pk, bool str, const char *p, size_t len, cc_error *err)
{
	int rc = str ? msgpack_pack_str(pk, len) : msgpack_pack_bin(pk, len);
	if (rc == 0)
		rc = str ? msgpack_pack_str_body(pk, p, len) : msgpack_pack_bin_body(pk, p, len);
	return packed(rc, err);
}

static int encode_in(msgpack_packer *pk, const cc_value *v, cc_value_caps *caps, unsigned depth,
		     cc_error *err);

static int encode_container(msgpack_packer *pk, const cc_value *v, cc_value_caps *caps,
			    unsigned depth, cc_error *err)
{
	if (depth >= caps->max_depth)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "value nested deeper than %u levels",
			       caps->max_depth);
	if (v->type == CC_VALUE_ARRAY) {
		if (packed(msgpack_pack_array(pk, v->u.array.len), err) < 0)
			return -1;
		for (size_t i = 0; i < v->u.array.len; i++)
			if (encode_in(pk, v->u.array.items[i], caps, depth + 1, err) < 0)
				return -1;
		return 0;
	}
	int unique = map_keys_unique(v);
	if (unique < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory checking a map's keys");
	if (!unique)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "map has a duplicate key");
	if (packed(msgpack_pack_map(pk, v->u.map.len), err) < 0)
		return -1;
	for (size_t i = 0; i < v->u.map.len; i++) {
		if (!cc_utf8_valid(v->u.map.keys[i], v->u.map.key_lens[i]))
			return cc_fail(err, CC_ERR_INVALID_INPUT, "map key is not valid UTF-8");
		if (pack_blob(pk, true, v->u.map.keys[i], v->u.map.key_lens[i], err) < 0 ||
		    encode_in(pk, v->u.map.vals[i], caps, depth + 1, err) < 0)
			return -1;
	}
	return 0;
}

static int encode_in(msgpack_packer *pk, const cc_value *v, cc_value_caps *caps, unsigned depth,
		     cc_error *err)
{
	if (caps->nodes_left == 0)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "value has more elements than its cap allows (one per 8 bytes of "
			       "max_result, at most %u)",
			       CC_VALUE_MAX_NODES);
	caps->nodes_left--;
	if (!v)
		return packed(msgpack_pack_nil(pk), err);
	switch (v->type) {
	case CC_VALUE_BOOL:
		return packed(v->u.b ? msgpack_pack_true(pk) : msgpack_pack_false(pk), err);
	case CC_VALUE_INT:
		return packed(msgpack_pack_int64(pk, v->u.i), err);
	case CC_VALUE_FLOAT:
		return packed(msgpack_pack_double(pk, v->u.f), err);
	case CC_VALUE_BIGINT:
		if (!cc_bigint_text_valid(v->u.str.ptr, v->u.str.len))
			return cc_fail(err, CC_ERR_INVALID_INPUT,
				       "bigint is not a decimal integer");
		return packed(cc_pack_bigint(pk, v->u.str.ptr, v->u.str.len), err);
	case CC_VALUE_STRING:
		if (!cc_utf8_valid(v->u.str.ptr, v->u.str.len))
			return cc_fail(err, CC_ERR_INVALID_INPUT, "string is not valid UTF-8");
		return pack_blob(pk, true, v->u.str.ptr, v->u.str.len, err);
	case CC_VALUE_BYTES:
		return pack_blob(pk, false, v->u.str.ptr, v->u.str.len, err);
	case CC_VALUE_ARRAY:
	case CC_VALUE_MAP:
		return encode_container(pk, v, caps, depth, err);
	default: /* the ext types, and any other type is refused there */
		return cc_value_encode_ext(pk, v, err);
	}
}

int cc_value_encode(msgpack_packer *pk, const cc_value *v, cc_value_caps *caps, cc_error *err)
{
	return encode_in(pk, v, caps, 0, err) < 0 ? -1 : 0;
}

const cc_value *cc_value_map_get(const cc_value *map, const char *key, bool *found)
{
	size_t n = strlen(key);
	if (found)
		*found = false;
	if (!map || map->type != CC_VALUE_MAP)
		return NULL;
	for (size_t i = 0; i < map->u.map.len; i++)
		if (map->u.map.key_lens[i] == n && memcmp(map->u.map.keys[i], key, n) == 0) {
			if (found)
				*found = true;
			return map->u.map.vals[i];
		}
	return NULL;
}

int cc_value_decode_all(const void *buf, size_t len, cc_value **out, cc_value_caps *caps,
			cc_error *err)
{
	cc_mp_reader r;
	cc_mp_reader_init(&r, buf, len);
	if (cc_value_decode(&r, out, caps, err) < 0)
		return -1;
	if (cc_mp_left(&r) != 0) {
		cc_value_free(*out);
		*out = NULL;
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
			       "%zu trailing bytes after the message", cc_mp_left(&r));
	}
	return 0;
}
