/* A host tool inside a guest expression, in JavaScript and in Python.
 * Run: build/examples/tool_in_expression */
#include <stdio.h>
#include <string.h>

#include "codecage.h"

/* The only thing the guest can call: a price lookup. */
static int lookup(void *user, const cc_value *args, cc_value **result, cc_tool_error *err)
{
	(void)user;
	const cc_value *sku = args->u.array.len ? args->u.array.items[0] : NULL;
	if (cc_value_type_of(sku) == CC_VALUE_STRING && !strcmp(sku->u.str.ptr, "A1")) {
		*result = cc_value_new_float(3.5);
		return 0;
	}
	return cc_tool_fail(err, "KeyError", "unknown sku");
}

int main(void)
{
	for (int lang = CC_LANG_JAVASCRIPT; lang <= CC_LANG_PYTHON; lang++) {
		cc_options o;
		cc_options_init(&o, (cc_language)lang);
		cc_runtime *rt = NULL;
		cc_error err = { 0 };
		if (cc_runtime_new(&o, &rt, &err) < 0 ||
		    cc_runtime_bind_tool(rt, "lookup", lookup, NULL, &err) < 0) {
			fprintf(stderr, "%s: %s\n", cc_error_kind_name(err.kind), err.message);
			return 1;
		}
		const char *code = "lookup('A1') * 2";
		cc_result *r = cc_runtime_eval(rt, code, strlen(code), 0);
		const cc_value *v = cc_result_value(r);
		if (cc_result_ok(r) && cc_value_type_of(v) == CC_VALUE_FLOAT)
			printf("%-10s %s -> %.1f\n",
			       lang == CC_LANG_PYTHON ? "python" : "javascript", code, v->u.f);
		else
			printf("error: %s\n", cc_result_error_message(r));
		cc_result_free(r);
		cc_runtime_close(rt);
	}
	return 0;
}
