/* JSON and readable rendering of values for the CLI and the MCP server. A
 * small writer instead of jansson here: jansson prints doubles with a fixed
 * 17 digits (0.1 becomes 0.10000000000000001) and cannot emit tagged or raw
 * numbers. */
#include "json_out.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "civil.h"

void cc_json_string(struct cc_buf *b, const char *s, size_t n)
{
	cc_buf_add(b, "\"", 1);
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = NULL;
		char tmp[8];
		if (c == '"')
			esc = "\\\"";
		else if (c == '\\')
			esc = "\\\\";
		else if (c == '\n')
			esc = "\\n";
		else if (c == '\r')
			esc = "\\r";
		else if (c == '\t')
			esc = "\\t";
		else if (c < 0x20 || c == 0x7f) {
			snprintf(tmp, sizeof(tmp), "\\u%04x", c);
			esc = tmp;
		}
		if (!esc)
			continue;
		cc_buf_add(b, s + run, i - run);
		cc_buf_puts(b, esc);
		run = i + 1;
	}
	cc_buf_add(b, s + run, n - run);
	cc_buf_add(b, "\"", 1);
}

/* The shortest decimal that reads back to exactly d, laid out as Python's
 * repr() does: positional for exponents in [-4, 16), else scientific; a
 * float always shows a '.' or an exponent so it stays a float. */
static void shortest_double(char *out, size_t n, double d)
{
	int prec = 1;
	for (; prec < 17; prec++) {
		snprintf(out, n, "%.*e", prec - 1, d);
		if (strtod(out, NULL) == d)
			break;
	}
	int exp = atoi(strchr(out, 'e') + 1);
	if (exp >= -4 && exp < 16) {
		int decimals = prec - 1 - exp;
		snprintf(out, n, "%.*f", decimals > 0 ? decimals : 0, d);
		if (!strchr(out, '.'))
			strncat(out, ".0", n - strlen(out) - 1);
	} else {
		snprintf(out, n, "%.*e", prec - 1, d);
	}
}

void cc_base64(struct cc_buf *b, const unsigned char *p, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		char q[4] = { tab[v >> 18 & 63], tab[v >> 12 & 63],
			      i + 1 < n ? tab[v >> 6 & 63] : '=', i + 2 < n ? tab[v & 63] : '=' };
		cc_buf_add(b, q, 4);
	}
}

/* An instant as ISO 8601 to the microsecond: in UTC ("...Z"), or, when it
 * keeps the offset it was written in, that local time and the offset. */
static void iso_date(char *out, size_t n, const cc_value *v)
{
	int64_t sec = v->u.ts.sec, off = v->u.ts.zone.set ? v->u.ts.zone.offset_us : 0;
	int64_t usec = v->u.ts.nsec / 1000 + off % 1000000;
	/* the local time: the offset's whole seconds, then its microseconds */
	bool bad = __builtin_add_overflow(sec, off / 1000000, &sec);
	if (usec < 0) {
		usec += 1000000;
		bad |= __builtin_sub_overflow(sec, 1, &sec);
	} else if (usec >= 1000000) {
		usec -= 1000000;
		bad |= __builtin_add_overflow(sec, 1, &sec);
	}
	time_t t = (time_t)sec;
	struct tm tm;
	if (bad || !gmtime_r(&t, &tm)) {
		snprintf(out, n, "%lld.%09u", (long long)v->u.ts.sec, v->u.ts.nsec);
		return;
	}
	char day[48], zone[24] = "Z";
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	if (v->u.ts.zone.set)
		cc_civil_offset_text(zone, sizeof(zone), off);
	snprintf(out, n, "%s.%06u%s", day, (unsigned)usec, zone);
}

/* A date (days since 1970-01-01) as ISO 8601's YYYY-MM-DD. */
static void iso_day(char *out, size_t n, int32_t days)
{
	int64_t y;
	unsigned m, d;
	cc_civil_from_days(days, &y, &m, &d);
	snprintf(out, n, "%04lld-%02u-%02u", (long long)y, m, d);
}

/* A duration as ISO 8601's PnDTnHnMnS (days of 24 hours, no months or
 * years), a leading '-' when negative, seconds' fraction without trailing
 * zeros: "P1DT2H", "-PT0.000001S", "PT0S". */
static void iso_duration(char *out, size_t n, int64_t sec, uint32_t nsec)
{
	bool neg = sec < 0;
	/* the magnitude: -(sec + nsec/1e9) */
	uint64_t s = neg ? (uint64_t) - (sec + 1) + (nsec ? 0 : 1) : (uint64_t)sec;
	uint32_t f = neg && nsec ? 1000000000u - nsec : nsec;
	uint64_t days = s / 86400;
	unsigned h = (unsigned)(s / 3600 % 24), mi = (unsigned)(s / 60 % 60);
	unsigned se = (unsigned)(s % 60);
	int w = snprintf(out, n, "%sP", neg ? "-" : "");
	char frac[16] = "";
	if (f) {
		snprintf(frac, sizeof(frac), ".%09u", f);
		for (size_t k = strlen(frac); frac[k - 1] == '0'; k--)
			frac[k - 1] = 0;
	}
	if (days)
		w += snprintf(out + w, n - (size_t)w, "%lluD", (unsigned long long)days);
	if (h || mi || se || f || !days)
		w += snprintf(out + w, n - (size_t)w, "T");
	if (h)
		w += snprintf(out + w, n - (size_t)w, "%uH", h);
	if (mi)
		w += snprintf(out + w, n - (size_t)w, "%uM", mi);
	if (se || f || (!days && !h && !mi))
		snprintf(out + w, n - (size_t)w, "%u%sS", se, frac);
}

/* A tagged scalar: {"$tag": "text"} in JSON, the bare text otherwise. */
static void tagged(struct cc_buf *b, bool json, const char *tag, const char *text)
{
	if (json)
		cc_buf_printf(b, "{\"%s\": \"%s\"}", tag, text);
	else
		cc_buf_puts(b, text);
}

static void render(struct cc_buf *b, const cc_value *v, bool json)
{
	char tmp[96];
	switch (cc_value_type_of(v)) {
	case CC_VALUE_NULL:
		cc_buf_puts(b, "null");
		return;
	case CC_VALUE_BOOL:
		cc_buf_puts(b, v->u.b ? "true" : "false");
		return;
	case CC_VALUE_INT:
		cc_buf_printf(b, "%lld", (long long)v->u.i);
		return;
	case CC_VALUE_FLOAT:
		if (isfinite(v->u.f)) {
			shortest_double(tmp, sizeof(tmp), v->u.f);
			cc_buf_puts(b, tmp);
			return;
		}
		snprintf(tmp, sizeof(tmp), "%s",
			 isnan(v->u.f) ? "NaN"
			 : v->u.f > 0  ? "Infinity"
				       : "-Infinity");
		if (json)
			cc_buf_printf(b, "{\"$float\": \"%s\"}", tmp);
		else
			cc_buf_puts(b, tmp);
		return;
	case CC_VALUE_BIGINT:
		if (json)
			cc_buf_printf(b, "{\"$bigint\": \"%s\"}", v->u.str.ptr);
		else
			cc_buf_puts(b, v->u.str.ptr);
		return;
	case CC_VALUE_STRING:
		cc_json_string(b, v->u.str.ptr, v->u.str.len);
		return;
	case CC_VALUE_BYTES:
		if (json) {
			cc_buf_puts(b, "{\"$bytes\": \"");
			cc_base64(b, (const unsigned char *)v->u.str.ptr, v->u.str.len);
			cc_buf_puts(b, "\"}");
		} else {
			cc_buf_puts(b, "b'");
			for (size_t i = 0; i < v->u.str.len; i++) {
				unsigned char c = (unsigned char)v->u.str.ptr[i];
				if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\')
					cc_buf_add(b, (const char *)&c, 1);
				else
					cc_buf_printf(b, "\\x%02x", c);
			}
			cc_buf_puts(b, "'");
		}
		return;
	case CC_VALUE_TIMESTAMP:
		iso_date(tmp, sizeof(tmp), v);
		tagged(b, json, "$date", tmp);
		return;
	case CC_VALUE_DATE:
		iso_day(tmp, sizeof(tmp), v->u.days);
		tagged(b, json, "$day", tmp);
		return;
	case CC_VALUE_DURATION:
		iso_duration(tmp, sizeof(tmp), v->u.dur.sec, v->u.dur.nsec);
		tagged(b, json, "$timedelta", tmp);
		return;
	case CC_VALUE_TIMEZONE:
		cc_civil_offset_text(tmp, sizeof(tmp), v->u.tz.offset_us);
		tagged(b, json, "$timezone", tmp);
		return;
	case CC_VALUE_PATH:
		if (json) {
			cc_buf_puts(b, "{\"$path\": ");
			cc_json_string(b, v->u.str.ptr, v->u.str.len);
			cc_buf_puts(b, "}");
		} else {
			cc_json_string(b, v->u.str.ptr, v->u.str.len);
		}
		return;
	case CC_VALUE_ARRAY:
		cc_buf_puts(b, "[");
		for (size_t i = 0; i < v->u.array.len; i++) {
			if (i)
				cc_buf_puts(b, ", ");
			render(b, v->u.array.items[i], json);
		}
		cc_buf_puts(b, "]");
		return;
	case CC_VALUE_MAP:
		cc_buf_puts(b, "{");
		for (size_t i = 0; i < v->u.map.len; i++) {
			if (i)
				cc_buf_puts(b, ", ");
			cc_json_string(b, v->u.map.keys[i], v->u.map.key_lens[i]);
			cc_buf_puts(b, ": ");
			render(b, v->u.map.vals[i], json);
		}
		cc_buf_puts(b, "}");
		return;
	}
}

void cc_json_value(struct cc_buf *b, const cc_value *v)
{
	render(b, v, true);
}

void cc_readable_value(struct cc_buf *b, const cc_value *v)
{
	if (cc_value_type_of(v) == CC_VALUE_STRING || cc_value_type_of(v) == CC_VALUE_PATH)
		cc_buf_add(b, v->u.str.ptr, v->u.str.len);
	else
		render(b, v, false);
}

void cc_json_display(struct cc_buf *b, const cc_value *bundle)
{
	cc_buf_puts(b, "{");
	for (size_t i = 0; cc_value_type_of(bundle) == CC_VALUE_MAP && i < bundle->u.map.len; i++) {
		const cc_value *v = bundle->u.map.vals[i];
		if (i)
			cc_buf_puts(b, ", ");
		cc_json_string(b, bundle->u.map.keys[i], bundle->u.map.key_lens[i]);
		cc_buf_puts(b, ": ");
		if (cc_value_type_of(v) == CC_VALUE_BYTES) {
			cc_buf_puts(b, "\"");
			cc_base64(b, (const unsigned char *)v->u.str.ptr, v->u.str.len);
			cc_buf_puts(b, "\"");
		} else {
			cc_json_string(b, v ? v->u.str.ptr : "", v ? v->u.str.len : 0);
		}
	}
	cc_buf_puts(b, "}");
}
