/* codecage_value.h: the values half of the public API (DESIGN.md
 * section 5): cc_value trees, their types, caps and constructors. Included
 * by codecage.h, inside its extern "C" block and after CC_EXPORT; include
 * codecage.h, not this file. */
#ifndef CODECAGE_VALUE_H
#define CODECAGE_VALUE_H
#ifndef CODECAGE_H
#error "include codecage.h, not codecage_value.h"
#endif

/* ---- values (DESIGN.md section 5) ----
 *
 * A value is a tree of cc_value nodes. JavaScript null/undefined and Python
 * None are a NULL pointer: no node has a "null" type. Values returned inside
 * a cc_result are owned by that result; values built with cc_value_new_* are
 * owned by the caller until handed to a container (which takes ownership) or
 * freed with cc_value_free. */

typedef enum cc_value_type {
	CC_VALUE_NULL = 0, /* only reported by cc_value_type_of(NULL) */
	CC_VALUE_BOOL,
	CC_VALUE_INT,	 /* int64 */
	CC_VALUE_FLOAT,	 /* double; NaN, +-Infinity and -0.0 kept */
	CC_VALUE_BIGINT, /* integer outside int64: decimal digits, "-" sign */
	CC_VALUE_STRING, /* valid UTF-8 (lone surrogates arrive as U+FFFD) */
	CC_VALUE_BYTES,
	CC_VALUE_ARRAY,
	CC_VALUE_MAP,	    /* string keys, insertion order kept, unique keys */
	CC_VALUE_TIMESTAMP, /* an instant: seconds since the Unix epoch (UTC) +
			       nanoseconds; with ts.zone.set, also the UTC offset
			       (and zone name) it was written in */
	CC_VALUE_DATE,	    /* a calendar date: days since 1970-01-01 */
	CC_VALUE_DURATION,  /* a signed length of time: dur.sec + dur.nsec / 1e9 */
	CC_VALUE_TIMEZONE,  /* a fixed UTC offset, maybe named (tz) */
	CC_VALUE_PATH,	    /* a POSIX path: valid UTF-8 text (str) */
} cc_value_type;

/* A fixed UTC offset (Python's datetime.timezone): a CC_VALUE_TIMEZONE, or
 * the zone of a timestamp that keeps one (set). */
typedef struct cc_value_zone {
	bool set;	   /* a timestamp's: false = none kept (UTC) */
	int64_t offset_us; /* microseconds east of UTC, strictly within +-24 h */
	char *name;	   /* the zone's name, owned UTF-8 with a NUL after it
			      (name_len bytes), or NULL: none */
	size_t name_len;
} cc_value_zone;

/* The largest |offset_us| of a zone: 24 h less a microsecond. */
#define CC_ZONE_MAX_OFFSET_US (86400ll * 1000000 - 1)

typedef struct cc_value cc_value;
struct cc_value {
	cc_value_type type;
	union {
		bool b;
		int64_t i;
		double f;
		struct {
			char *ptr;
			size_t len;
		} str; /* STRING, BIGINT, BYTES, PATH */
		struct {
			cc_value **items;
			size_t len, cap;
		} array;
		struct {
			char **keys;
			size_t *key_lens;
			cc_value **vals;
			size_t len, cap;
		} map;
		struct {
			int64_t sec;
			uint32_t nsec;
			cc_value_zone zone;
		} ts;
		int32_t days; /* DATE */
		struct {
			int64_t sec;   /* floor of the duration in seconds */
			uint32_t nsec; /* 0..999999999 after it */
		} dur;
		cc_value_zone tz; /* TIMEZONE (set is true) */
	} u;
};

/* Structural caps applied to every value crossing the boundary, both ways.
 * Depth counts containers: a flat list has depth 1. */
#define CC_VALUE_MAX_DEPTH 100
/* Total nodes in one value (containers plus scalars): at most one per 8
 * bytes of the result cap (limits.max_result; 2,097,152 for the default
 * 16 MiB), and never more than this. The ratio bounds what decoding a value
 * can cost the host to about nine times the cap. */
#define CC_VALUE_MAX_NODES 10000000u
/* Largest bigint, in decimal digits: CPython 3.11's default
 * int-to-str limit (sys.get_int_max_str_digits() == 4300). */
#define CC_BIGINT_MAX_DIGITS 4300

CC_EXPORT cc_value_type cc_value_type_of(const cc_value *v);

/* Constructors: return owned values, or NULL when out of memory (or, for
 * string/bigint, when the text is not valid UTF-8 / not an integer). */
CC_EXPORT cc_value *cc_value_new_bool(bool b);
CC_EXPORT cc_value *cc_value_new_int(int64_t i);
CC_EXPORT cc_value *cc_value_new_float(double f);
CC_EXPORT cc_value *cc_value_new_bigint(const char *digits, size_t len); /* copies */
CC_EXPORT cc_value *cc_value_new_string(const char *s, size_t len);	 /* copies */
CC_EXPORT cc_value *cc_value_new_bytes(const void *p, size_t len);	 /* copies */
CC_EXPORT cc_value *cc_value_new_array(void);
CC_EXPORT cc_value *cc_value_new_map(void);
CC_EXPORT cc_value *cc_value_new_timestamp(int64_t sec, uint32_t nsec);
/* A timestamp that keeps the offset (microseconds east of UTC, |offset_us|
 * <= CC_ZONE_MAX_OFFSET_US) and zone name (copied; NULL: none) it was
 * written in; sec/nsec are still the instant in UTC. NULL when out of
 * memory, nsec >= 1e9, the offset is out of range or name not UTF-8. */
CC_EXPORT cc_value *cc_value_new_zoned_timestamp(int64_t sec, uint32_t nsec, int64_t offset_us,
						 const char *name, size_t name_len);
CC_EXPORT cc_value *cc_value_new_date(int32_t days); /* days since 1970-01-01 */
/* sec + nsec / 1e9 seconds, nsec 0..999999999 (-1.5 s is sec -2, nsec 5e8);
 * NULL when nsec is out of range. */
CC_EXPORT cc_value *cc_value_new_duration(int64_t sec, uint32_t nsec);
/* A fixed offset, as cc_value_new_zoned_timestamp takes it. */
CC_EXPORT cc_value *cc_value_new_timezone(int64_t offset_us, const char *name, size_t name_len);
CC_EXPORT cc_value *cc_value_new_path(const char *s, size_t len); /* copies; UTF-8 */

/* Append item (may be NULL for null) to an array; takes ownership of item
 * even on failure. Returns 0, or -1 when out of memory or arr is not an
 * array. */
CC_EXPORT int cc_value_array_push(cc_value *arr, cc_value *item);

/* Add key -> val to a map; copies key, takes ownership of val even on
 * failure. Returns -1 when out of memory, key is not UTF-8, the key exists
 * already or map is not a map. */
CC_EXPORT int cc_value_map_set(cc_value *map, const char *key, size_t key_len, cc_value *val);

/* Frees a value tree (NULL is fine). */
CC_EXPORT void cc_value_free(cc_value *v);

/* Deep equality; NaN equals NaN, -0.0 differs from 0.0. */
CC_EXPORT bool cc_value_equal(const cc_value *a, const cc_value *b);

#endif
