/* Upstream tools on a runtime (upstream.h): the guest's arguments become
 * the tool's input object, and a tools/call's per-upstream limit is
 * counted here, in the host, before the call reaches the upstream. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "upstream.h"

/* The counters of the tools/call this thread runs (set around its eval
 * by mcp_upstreams_begin/_end; an upstream tool runs on the eval's
 * thread). NULL = none: no per-upstream limit applies. */
static __thread struct mcp_up_counts *tl_counts;
static __thread struct mcp_upstream *const *tl_ups;
static __thread size_t tl_n;

/* A guest value as JSON (owned), or NULL with *why (static text). Bytes,
 * bigints, dates and non-finite floats have no JSON form and are refused. */
static json_t *to_json(const cc_value *v, int depth, const char **why)
{
	if (depth > 32)
		return *why = "the arguments are nested deeper than 32 levels", NULL;
	if (!v)
		return json_null();
	json_t *j = NULL;
	switch (v->type) {
	case CC_VALUE_BOOL:
		return json_boolean(v->u.b);
	case CC_VALUE_INT:
		return json_integer(v->u.i);
	case CC_VALUE_FLOAT:
		if (!isfinite(v->u.f))
			return *why = "NaN and Infinity have no JSON form", NULL;
		return json_real(v->u.f);
	case CC_VALUE_STRING:
		return json_stringn(v->u.str.ptr, v->u.str.len);
	case CC_VALUE_ARRAY:
		j = json_array();
		for (size_t i = 0; j && i < v->u.array.len; i++) {
			json_t *x = to_json(v->u.array.items[i], depth + 1, why);
			if (!x || json_array_append_new(j, x) < 0) {
				json_decref(j);
				return NULL;
			}
		}
		return j;
	case CC_VALUE_MAP:
		j = json_object();
		for (size_t i = 0; j && i < v->u.map.len; i++) {
			json_t *x = to_json(v->u.map.vals[i], depth + 1, why);
			if (!x || json_object_setn_new(j, v->u.map.keys[i], v->u.map.key_lens[i],
						       x) < 0) {
				json_decref(j);
				return NULL;
			}
		}
		return j;
	default:
		return *why = "bytes, big integers and dates have no JSON form: convert them "
			      "first (to a string or a number)",
		       NULL;
	}
}

/* The input object: tool({..}) or tool(key=value, ...) (Python), or both
 * merged (keywords win); nothing = {}. */
static json_t *input_of(const cc_value *args, const cc_value *kwargs, const char **why)
{
	size_t n = args ? args->u.array.len : 0;
	const cc_value *first = n ? args->u.array.items[0] : NULL;
	if (n > 1 || (n == 1 && (!first || first->type != CC_VALUE_MAP)))
		return *why = "an upstream tool takes one object of named inputs (JavaScript: "
			      "tools.S.T({a: 1}); Python: tools.S.T(a=1) or tools.S.T({'a': 1}))",
		       NULL;
	json_t *in = n ? to_json(first, 0, why) : json_object();
	if (in && kwargs) {
		json_t *kw = to_json(kwargs, 0, why);
		if (!kw || json_object_update(in, kw) < 0) {
			json_decref(in);
			in = NULL;
		}
		json_decref(kw);
	}
	if (!in && !*why)
		*why = "out of memory";
	return in;
}

static void upstream_tool(void *user, const cc_value *args, const cc_value *kwargs,
			  cc_tool_call *call)
{
	const struct mcp_up_tool *t = user;
	for (size_t i = 0; tl_counts && i < tl_n && i < tl_counts->n; i++) {
		if (tl_ups[i] != t->up)
			continue;
		uint64_t max = mcp_upstream_max_calls(t->up);
		if (tl_counts->made[i] >= max) {
			cc_tool_call_fail(
				call, "ToolBudgetError",
				"upstream %s allows %llu calls per run (--upstream-max-calls "
				"%s=N changes it)",
				mcp_upstream_name(t->up), (unsigned long long)max,
				mcp_upstream_name(t->up));
			return;
		}
		tl_counts->made[i]++;
	}
	const char *why = NULL;
	json_t *in = input_of(args, kwargs, &why);
	if (!in) {
		cc_tool_call_fail(call, "TypeError", "%s: %s", t->guest, why);
		return;
	}
	mcp_upstream_call(t, in, call);
	json_decref(in);
}

int mcp_upstreams_bind(struct mcp_upstream *const *ups, size_t n, cc_runtime *rt, cc_error *err)
{
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		const struct mcp_up_tool *tools = mcp_upstream_tools(ups[i], &k);
		for (size_t j = 0; j < k; j++)
			if (cc_runtime_bind_tool_async_kw(rt, tools[j].guest, upstream_tool,
							  (void *)&tools[j], err) < 0 ||
			    cc_runtime_set_tool_redaction(rt, tools[j].guest, 0, err) < 0)
				return -1;
	}
	return 0;
}

void mcp_upstreams_begin_for(struct mcp_up_counts *counts, struct mcp_upstream *const *ups,
			     size_t n)
{
	memset(counts->made, 0, counts->n * sizeof(*counts->made));
	tl_counts = counts;
	tl_ups = ups;
	tl_n = n;
}

void mcp_upstreams_end(void)
{
	tl_counts = NULL;
	tl_ups = NULL;
	tl_n = 0;
}

size_t mcp_upstreams_tool_count(struct mcp_upstream *const *ups, size_t n)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		mcp_upstream_tools(ups[i], &k);
		total += k;
	}
	return total;
}

struct mcp_code_run {
	cc_budget *budget;
	cc_budget *idle; /* the exhausted one for after (made now: no failure then) */
	struct mcp_up_counts counts;
};

/* Between tools/calls the runtime's budget is an exhausted one: guest
 * code that runs then (a thread the previous call left running, while the
 * next call's files are written) makes no upstream call. Before, no
 * budget was in force there, and such a thread made hundreds. */
void mcp_code_idle(cc_runtime *rt, size_t n_upstreams)
{
	cc_budget *b = n_upstreams ? cc_budget_new(0) : NULL;
	if (b)
		cc_runtime_set_budget(rt, b); /* takes its own reference */
	cc_budget_unref(b);
}

struct mcp_code_run *mcp_code_begin(struct mcp_upstream *const *ups, size_t n, uint64_t max_calls,
				    cc_runtime *rt)
{
	if (!n)
		return NULL;
	struct mcp_code_run *run = calloc(1, sizeof(*run));
	if (!run)
		return NULL;
	run->counts.made = calloc(n, sizeof(*run->counts.made));
	run->counts.n = run->counts.made ? n : 0;
	run->budget = cc_budget_new(max_calls);
	run->idle = cc_budget_new(0);
	if (run->budget)
		cc_runtime_set_budget(rt, run->budget); /* takes its own reference */
	mcp_upstreams_begin_for(&run->counts, ups, n);
	return run;
}

void mcp_code_end(struct mcp_code_run *run, cc_runtime *rt)
{
	if (!run)
		return;
	mcp_upstreams_end();
	if (run->idle)
		cc_runtime_set_budget(rt, run->idle);
	cc_budget_unref(run->idle);
	cc_budget_unref(run->budget);
	free(run->counts.made);
	free(run);
}
