/* One budget of 5 tool calls shared by a Python and a JavaScript runtime
 * calling the same host tool. Run: build/examples/shared_budget */
#include <stdio.h>
#include <string.h>

#include "codecage.h"

static int host_calls;

static int fetch_sales(void *user, const cc_value *args, cc_value **result, cc_tool_error *err)
{
	(void)user;
	(void)args;
	(void)err;
	host_calls++;
	static const struct {
		const char *region;
		int amount;
	} rows[] = {
		{ "East", 1000 },
		{ "West", 900 },
		{ "East", 750 },
	};
	cc_value *list = cc_value_new_array();
	for (size_t i = 0; i < 3; i++) {
		cc_value *row = cc_value_new_map();
		cc_value_map_set(row, "region", 6,
				 cc_value_new_string(rows[i].region, strlen(rows[i].region)));
		cc_value_map_set(row, "amount", 6, cc_value_new_int(rows[i].amount));
		cc_value_array_push(list, row);
	}
	*result = list;
	return 0;
}

static cc_runtime *start(cc_language lang, cc_budget *b)
{
	cc_options o;
	cc_options_init(&o, lang);
	cc_runtime *rt = NULL;
	cc_error err = { 0 };
	if (cc_runtime_new(&o, &rt, &err) < 0 ||
	    cc_runtime_bind_tool(rt, "fetch_sales", fetch_sales, NULL, &err) < 0) {
		fprintf(stderr, "%s: %s\n", cc_error_kind_name(err.kind), err.message);
		return NULL;
	}
	cc_runtime_set_budget(rt, b);
	return rt;
}

static void run(cc_runtime *rt, const char *label, const char *code)
{
	cc_result *r = cc_runtime_eval(rt, code, strlen(code), 0);
	const cc_value *v = cc_result_value(r);
	if (cc_value_type_of(v) == CC_VALUE_STRING)
		printf("%-10s %s\n", label, v->u.str.ptr);
	else
		printf("%-10s %s: %s\n", label, cc_error_kind_name(cc_result_error_kind(r)),
		       cc_result_error_message(r));
	cc_result_free(r);
}

int main(void)
{
	cc_budget *budget = cc_budget_new(5);
	cc_runtime *py = start(CC_LANG_PYTHON, budget), *js = start(CC_LANG_JAVASCRIPT, budget);
	if (!py || !js)
		return 1;
	run(py, "python",
	    "totals = {}\n"
	    "for r in tools.fetch_sales(): totals[r['region']] = totals.get(r['region'], 0) + "
	    "r['amount']\n"
	    "best = max(totals.items(), key=lambda kv: kv[1])\n"
	    "f'{best[0]}: {best[1]}'");
	run(js, "javascript",
	    "const out = [];\n"
	    "for (let i = 0; i < 5; i++) {\n"
	    "  try { out.push((await tools.fetch_sales()).length) } catch (e) { out.push(e.name) "
	    "}\n"
	    "}\n"
	    "out.join(', ')");
	printf("budget: %llu calls made, %llu remaining; the host ran %d\n",
	       (unsigned long long)cc_budget_calls_made(budget),
	       (unsigned long long)cc_budget_calls_remaining(budget), host_calls);
	cc_runtime_close(py);
	cc_runtime_close(js);
	cc_budget_unref(budget);
	return 0;
}
