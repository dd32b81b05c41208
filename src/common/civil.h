/* Calendar arithmetic for the timestamp values (civil.c). Pure: no other
 * file of the tree is needed (the Python extension compiles it too). */
#ifndef CC_COMMON_CIVIL_H
#define CC_COMMON_CIVIL_H

#include <stddef.h>
#include <stdint.h>

/* A broken-down proleptic Gregorian date and time, in UTC unless said. */
struct cc_civil {
	int64_t year;		       /* any; Python's datetime holds 1..9999 */
	unsigned month, day;	       /* 1..12, 1..31 */
	unsigned hour, minute, second; /* 0..23, 0..59, 0..59 */
	unsigned usec;		       /* microseconds, 0..999999 */
};

/* Days from 1970-01-01 to y-m-d (Howard Hinnant's days_from_civil);
 * negative before 1970. m is 1..12, d 1..31; exact for |y| < 2^50. */
int64_t cc_days_from_civil(int64_t y, unsigned m, unsigned d);

/* The inverse: the date z days after 1970-01-01 (z < 0: before). */
void cc_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);

/* The instant c shows at UTC offset offset_us (microseconds east of UTC,
 * what Python's utcoffset() gives; 0 for UTC), as seconds since the epoch
 * and nanoseconds 0..999999999 after them (rounded down: 1969-12-31
 * 23:59:59.5 is -1 s + 5e8 ns). c's fields must be in their ranges and its
 * year within 1..9999 (so nothing overflows). */
void cc_civil_to_timestamp(const struct cc_civil *c, int64_t offset_us, int64_t *sec,
			   uint32_t *nsec);

/* A UTC offset given as a normalized timedelta (days, seconds 0..86399,
 * microseconds 0..999999: what PyDateTime_DELTA_GET_* read) in
 * microseconds into *us. Returns 0, or -1 unless it is strictly between
 * -1 and +1 day, the range Python's own utcoffset() allows (a datetime
 * subclass may return any timedelta; nothing is computed then, so nothing
 * overflows). */
int cc_civil_offset_us(int days, int seconds, int usec, int64_t *us);

/* What a caller says when cc_civil_offset_us refuses. */
#define CC_CIVIL_OFFSET_ERROR                                                                      \
	"datetime.utcoffset() must be strictly between -timedelta(hours=24) and "                  \
	"timedelta(hours=24)"

/* The UTC date and time of sec + nsec (nsec < 1e9; the nanoseconds below
 * a microsecond are dropped). Returns 0, or -1 when the instant is outside
 * Python's datetime range, 0001-01-01 to 9999-12-31 (c is then unset). */
int cc_civil_from_timestamp(int64_t sec, uint32_t nsec, struct cc_civil *c);

/* A UTC offset (microseconds east, |us| < 24 h) as ISO 8601 and Python's
 * isoformat() write it: +HH:MM, then :SS and .ffffff only when they are
 * not zero ("+05:30", "-00:00:01.500000"). Into out[0..n), n >= 20. */
void cc_civil_offset_text(char *out, size_t n, int64_t us);

#endif
