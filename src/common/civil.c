/* Calendar arithmetic for the timestamp values; see civil.h. One copy for
 * the Python worker (py_value.c) and the Python extension (values.c), so a
 * datetime crosses the same way in both directions. */
#include "civil.h"

#include <stdio.h>

int64_t cc_days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;				       /* 0..399 */
	int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1; /* 0..365 */
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;	       /* 0..146096 */
	return era * 146097 + doe - 719468;
}

void cc_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	*d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
	*m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

void cc_civil_to_timestamp(const struct cc_civil *c, int64_t offset_us, int64_t *sec,
			   uint32_t *nsec)
{
	int64_t days = cc_days_from_civil(c->year, c->month, c->day);
	/* microseconds since the epoch: |t| < 3.2e17 for years 1..9999 and
	 * offsets under a day, far inside int64 */
	int64_t t = ((days * 24 + c->hour) * 60 + c->minute) * 60 + c->second;
	t = t * 1000000 + c->usec - offset_us;
	int64_t s = t / 1000000, us = t % 1000000;
	if (us < 0) {
		us += 1000000;
		s--;
	}
	*sec = s;
	*nsec = (uint32_t)us * 1000;
}

int cc_civil_offset_us(int days, int seconds, int usec, int64_t *us)
{
	if (days < -1 || days > 0 || seconds < 0 || seconds >= 86400 || usec < 0 ||
	    usec >= 1000000 || (days == -1 && seconds == 0 && usec == 0))
		return -1;
	*us = ((int64_t)days * 86400 + seconds) * 1000000 + usec;
	return 0;
}

int cc_civil_from_timestamp(int64_t sec, uint32_t nsec, struct cc_civil *c)
{
	int64_t days = sec / 86400, rem = sec % 86400;
	if (rem < 0) {
		rem += 86400;
		days--;
	}
	if (days < cc_days_from_civil(1, 1, 1) || days > cc_days_from_civil(9999, 12, 31))
		return -1;
	cc_civil_from_days(days, &c->year, &c->month, &c->day);
	c->hour = (unsigned)(rem / 3600);
	c->minute = (unsigned)(rem / 60 % 60);
	c->second = (unsigned)(rem % 60);
	c->usec = nsec / 1000;
	return 0;
}

void cc_civil_offset_text(char *out, size_t n, int64_t us)
{
	char sign = us < 0 ? '-' : '+';
	uint64_t a = us < 0 ? (uint64_t)-us : (uint64_t)us; /* < 24 h: no overflow */
	unsigned s = (unsigned)(a / 1000000), f = (unsigned)(a % 1000000);
	int w = snprintf(out, n, "%c%02u:%02u", sign, s / 3600, s / 60 % 60);
	if ((s % 60 || f) && w > 0 && (size_t)w < n)
		w += snprintf(out + w, n - (size_t)w, ":%02u", s % 60);
	if (f && w > 0 && (size_t)w < n)
		snprintf(out + w, n - (size_t)w, ".%06u", f);
}
