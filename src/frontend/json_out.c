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

static void iso_date(char *out, size_t n, const cc_value *v)
{
	time_t t = (time_t)v->u.ts.sec;
	struct tm tm;
	if (!gmtime_r(&t, &tm)) {
		snprintf(out, n, "%lld.%09u", (long long)v->u.ts.sec, v->u.ts.nsec);
		return;
	}
	char day[32];
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, n, "%s.%06uZ", day, v->u.ts.nsec / 1000);
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
		if (json)
			cc_buf_printf(b, "{\"$date\": \"%s\"}", tmp);
		else
			cc_buf_puts(b, tmp);
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
	if (cc_value_type_of(v) == CC_VALUE_STRING)
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
