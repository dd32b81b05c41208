/* cc-checklist-driver: runs one piece of guest code through the public C
 * API (include/codecage.h) with the default options, sandbox "require"
 * included, and prints one JSON line shaped like the CLI's --json object:
 *
 *   {"kind": "ok" | <error kind>, "type": ..., "message": ..., "value": <JSON>,
 *    "stdout": ..., "stderr": ..., "exit": <the CLI's exit status for kind>}
 *
 * The capability checklist (tests/security/test_checklist.py) runs every
 * case through this driver and through build/codecage and expects the same
 * outcome from both.
 *
 * usage: cc-checklist-driver python|javascript CODE [ANYTHING...]
 * Arguments after CODE are ignored: the checklist plants a canary secret
 * there, in the argv of the process that hosts the supervisor. */
#include <stdio.h>
#include <string.h>

#include "codecage.h"

static void json_string(const char *s, size_t n)
{
	putchar('"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c == '\n')
			fputs("\\n", stdout);
		else if (c < 0x20 || c == 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void json_cstring(const char *s)
{
	json_string(s ? s : "", s ? strlen(s) : 0);
}

static void base64(const unsigned char *p, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		printf("%c%c%c%c", tab[v >> 18 & 63], tab[v >> 12 & 63],
		       i + 1 < n ? tab[v >> 6 & 63] : '=', i + 2 < n ? tab[v & 63] : '=');
	}
}

/* The CLI's conventions: JSON where JSON can say it, tagged objects for
 * the rest ({"$float": "NaN"}, {"$bigint": ...}, {"$bytes": <base64>},
 * {"$date": <seconds>}). */
static void json_value(const cc_value *v)
{
	switch (cc_value_type_of(v)) {
	case CC_VALUE_NULL:
		fputs("null", stdout);
		break;
	case CC_VALUE_BOOL:
		fputs(v->u.b ? "true" : "false", stdout);
		break;
	case CC_VALUE_INT:
		printf("%lld", (long long)v->u.i);
		break;
	case CC_VALUE_FLOAT:
		if (v->u.f == v->u.f && v->u.f - v->u.f == 0)
			printf("%.17g", v->u.f);
		else
			printf("{\"$float\": \"%s\"}", v->u.f != v->u.f ? "NaN"
						       : v->u.f > 0	? "Infinity"
									: "-Infinity");
		break;
	case CC_VALUE_BIGINT:
		printf("{\"$bigint\": \"%s\"}", v->u.str.ptr);
		break;
	case CC_VALUE_STRING:
		json_string(v->u.str.ptr, v->u.str.len);
		break;
	case CC_VALUE_BYTES:
		fputs("{\"$bytes\": \"", stdout);
		base64((const unsigned char *)v->u.str.ptr, v->u.str.len);
		fputs("\"}", stdout);
		break;
	case CC_VALUE_TIMESTAMP:
		printf("{\"$date\": \"%lld.%09u\"}", (long long)v->u.ts.sec, v->u.ts.nsec);
		break;
	case CC_VALUE_ARRAY:
		putchar('[');
		for (size_t i = 0; i < v->u.array.len; i++) {
			fputs(i ? ", " : "", stdout);
			json_value(v->u.array.items[i]);
		}
		putchar(']');
		break;
	case CC_VALUE_MAP:
		putchar('{');
		for (size_t i = 0; i < v->u.map.len; i++) {
			fputs(i ? ", " : "", stdout);
			json_string(v->u.map.keys[i], v->u.map.key_lens[i]);
			fputs(": ", stdout);
			json_value(v->u.map.vals[i]);
		}
		putchar('}');
		break;
	}
}

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "python") && strcmp(argv[1], "javascript"))) {
		fprintf(stderr, "usage: cc-checklist-driver python|javascript CODE [IGNORED...]\n");
		return 2;
	}
	cc_options o;
	cc_options_init(&o, !strcmp(argv[1], "python") ? CC_LANG_PYTHON : CC_LANG_JAVASCRIPT);
	cc_runtime *rt = NULL;
	cc_result *r = NULL;
	cc_error err = { 0 };
	if (cc_runtime_new(&o, &rt, &err) == 0)
		r = cc_runtime_eval(rt, argv[2], strlen(argv[2]), 0);
	cc_error_kind kind = r ? cc_result_error_kind(r) : err.kind;
	size_t out_len = 0, err_len = 0;
	const char *out = r ? cc_result_stdout(r, &out_len) : "";
	const char *serr = r ? cc_result_stderr(r, &err_len) : "";

	fputs("{\"kind\": ", stdout);
	json_cstring(kind == CC_OK ? "ok" : cc_error_kind_name(kind));
	fputs(", \"type\": ", stdout);
	json_cstring(r ? cc_result_error_type(r) : "");
	fputs(", \"message\": ", stdout);
	json_cstring(r ? cc_result_error_message(r) : err.message);
	fputs(", \"value\": ", stdout);
	json_value(r ? cc_result_value(r) : NULL);
	fputs(", \"stdout\": ", stdout);
	json_string(out, out_len);
	fputs(", \"stderr\": ", stdout);
	json_string(serr, err_len);
	printf(", \"exit\": %d}\n", cc_error_kind_exit_code(kind));

	cc_result_free(r);
	cc_runtime_close(rt);
	cc_error_clear(&err);
	return 0;
}
