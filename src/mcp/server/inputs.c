/* arguments.inputs: tagged JSON (the mapping of the CLI's --json and of
 * structuredContent.value, json_out.h) back into cc_value trees, bound as
 * guest globals before the code runs. Bad input names the key. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "files.h"
#include "inputs.h"

struct mcp_inputs {
	size_t n;
	char *names[MCP_MAX_INPUTS];
	cc_value *values[MCP_MAX_INPUTS]; /* NULL = null/None */
};

/* A global name both engines accept (as cc_runtime_set_global checks):
 * [A-Za-z_][A-Za-z0-9_]*, 1..256 bytes. */
static bool name_ok(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > 256 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

/* "YYYY-MM-DDTHH:MM:SS[.f{1,9}]Z" -> seconds and nanoseconds (UTC). */
static int parse_date(const char *s, int64_t *sec, uint32_t *nsec)
{
	struct tm tm = { 0 };
	int n = 0;
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
		   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 ||
	    n != 19)
		return -1;
	if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
	    tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 59)
		return -1;
	const char *p = s + n;
	uint32_t ns = 0, scale = 100000000;
	if (*p == '.') {
		if (p[1] < '0' || p[1] > '9')
			return -1;
		for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10) {
			if (!scale)
				return -1;
			ns += (uint32_t)(*p - '0') * scale;
		}
	}
	if (strcmp(p, "Z"))
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*sec = (int64_t)timegm(&tm);
	*nsec = ns;
	return 0;
}

static bool bigint_text(const char *s, size_t n)
{
	size_t i = n && s[0] == '-';
	if (i == n || n - i > CC_BIGINT_MAX_DIGITS)
		return false;
	for (; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* One tagged object {"$tag": text}; *bad says why it is wrong. */
static cc_value *from_tag(const char *tag, const json_t *v, const char **bad)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	if (!s) {
		*bad = "a tagged value ($bytes, $bigint, $float, $date) wants a string";
		return NULL;
	}
	if (!strcmp(tag, "$bytes")) {
		unsigned char *b = NULL;
		size_t len = 0;
		if (mcp_b64_decode(s, n, &b, &len) < 0) {
			*bad = "$bytes is not base64";
			return NULL;
		}
		cc_value *r = cc_value_new_bytes(b, len);
		free(b);
		return r;
	}
	if (!strcmp(tag, "$bigint")) {
		if (!bigint_text(s, n)) {
			*bad = "$bigint wants decimal digits, optionally after '-' (at most 4300)";
			return NULL;
		}
		return cc_value_new_bigint(s, n);
	}
	if (!strcmp(tag, "$float")) {
		double f = !strcmp(s, "NaN")	     ? NAN
			   : !strcmp(s, "Infinity")  ? INFINITY
			   : !strcmp(s, "-Infinity") ? -INFINITY
						     : 0;
		if (f == 0) {
			*bad = "$float wants \"NaN\", \"Infinity\" or \"-Infinity\"";
			return NULL;
		}
		return cc_value_new_float(f);
	}
	int64_t sec = 0;
	uint32_t nsec = 0;
	if (parse_date(s, &sec, &nsec) < 0) {
		*bad = "$date wants UTC ISO 8601: YYYY-MM-DDTHH:MM:SS[.ffffff]Z";
		return NULL;
	}
	return cc_value_new_timestamp(sec, nsec);
}

static bool is_tag(const char *k)
{
	return !strcmp(k, "$bytes") || !strcmp(k, "$bigint") || !strcmp(k, "$float") ||
	       !strcmp(k, "$date");
}

/* *ok false when v cannot be converted (*bad says why). */
static cc_value *from_json(const json_t *v, int depth, bool *ok, const char **bad)
{
	*ok = false;
	if (depth > CC_VALUE_MAX_DEPTH) {
		*bad = "nested deeper than 100 levels";
		return NULL;
	}
	switch (json_typeof(v)) {
	case JSON_NULL:
		*ok = true;
		return NULL;
	case JSON_TRUE:
	case JSON_FALSE: {
		cc_value *r = cc_value_new_bool(json_is_true(v));
		*ok = r != NULL;
		return r;
	}
	case JSON_INTEGER: {
		cc_value *r = cc_value_new_int(json_integer_value(v));
		*ok = r != NULL;
		return r;
	}
	case JSON_REAL: {
		cc_value *r = cc_value_new_float(json_real_value(v));
		*ok = r != NULL;
		return r;
	}
	case JSON_STRING: {
		cc_value *r = cc_value_new_string(json_string_value(v), json_string_length(v));
		*ok = r != NULL;
		return r;
	}
	case JSON_ARRAY: {
		cc_value *arr = cc_value_new_array();
		size_t i;
		json_t *item;
		if (!arr)
			return NULL;
		json_array_foreach((json_t *)v, i, item)
		{
			cc_value *e = from_json(item, depth + 1, ok, bad);
			if (!*ok || cc_value_array_push(arr, e) < 0) {
				*ok = false;
				cc_value_free(arr);
				return NULL;
			}
		}
		*ok = true;
		return arr;
	}
	case JSON_OBJECT:
		break;
	}
	const char *key;
	json_t *val;
	if (json_object_size(v) == 1) {
		json_object_foreach((json_t *)v, key, val)
		{
			if (is_tag(key)) {
				cc_value *r = from_tag(key, val, bad);
				*ok = r != NULL;
				return r;
			}
		}
	}
	cc_value *map = cc_value_new_map();
	if (!map)
		return NULL;
	json_object_foreach((json_t *)v, key, val)
	{
		cc_value *e = from_json(val, depth + 1, ok, bad);
		if (!*ok || cc_value_map_set(map, key, strlen(key), e) < 0) {
			*ok = false;
			cc_value_free(map);
			return NULL;
		}
	}
	*ok = true;
	return map;
}

void mcp_inputs_free(struct mcp_inputs *in)
{
	if (!in)
		return;
	for (size_t i = 0; i < in->n; i++) {
		free(in->names[i]);
		cc_value_free(in->values[i]);
	}
	free(in);
}

int mcp_inputs_parse(const json_t *inputs, struct mcp_inputs **out, char *why, size_t cap)
{
	*out = NULL;
	if (!json_is_object(inputs)) {
		snprintf(why, cap, "arguments.inputs must be an object {name: value}");
		return -1;
	}
	if (json_object_size(inputs) > MCP_MAX_INPUTS) {
		snprintf(why, cap, "arguments.inputs has more than %d keys", MCP_MAX_INPUTS);
		return -1;
	}
	struct mcp_inputs *in = calloc(1, sizeof(*in));
	if (!in) {
		snprintf(why, cap, "out of memory reading arguments.inputs");
		return -1;
	}
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)inputs, key, val)
	{
		const char *bad = "out of memory";
		bool ok = false;
		if (!name_ok(key)) {
			snprintf(why, cap,
				 "arguments.inputs: key '%.100s' is not a global name: use an "
				 "ASCII identifier ([A-Za-z_][A-Za-z0-9_]*)",
				 key);
			mcp_inputs_free(in);
			return -1;
		}
		cc_value *v = from_json(val, 1, &ok, &bad);
		if (!ok) {
			snprintf(why, cap, "arguments.inputs.%.100s: %s", key, bad);
			mcp_inputs_free(in);
			return -1;
		}
		in->names[in->n] = strdup(key);
		in->values[in->n++] = v;
		if (!in->names[in->n - 1]) {
			snprintf(why, cap, "out of memory reading arguments.inputs");
			mcp_inputs_free(in);
			return -1;
		}
	}
	*out = in;
	return 0;
}

int mcp_inputs_bind(const struct mcp_inputs *in, cc_runtime *rt, cc_error *err)
{
	for (size_t i = 0; in && i < in->n; i++)
		if (cc_runtime_set_global(rt, in->names[i], in->values[i], err) < 0)
			return cc_fail_wrap(err, "inputs.%s", in->names[i]);
	return 0;
}
