/* A call's dependencies (issue 33): the tools' `dependencies` argument and
 * a Python call's PEP 723 block, accepted only with --allow-dependencies;
 * what the session's runtime was started with, so that a call naming
 * other packages gets a runtime that has them; and the result's account
 * of the install (structuredContent.dependencies, a "dependencies:"
 * section of the text). The library installs (cc_options.dependencies);
 * this file only decides which specs a runtime gets. */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "deps_flags.h"
#include "error.h"
#include "json_out.h"
#include "mcp_deps.h"

const char *mcp_deps_check_arg(const json_t *v)
{
	if (!json_is_array(v) || json_array_size(v) > CC_MAX_DEPENDENCIES)
		return "arguments.dependencies must be a list of at most 64 package specs "
		       "(strings such as \"polars==1.*\" or \"vega-lite@5\")";
	for (size_t i = 0; i < json_array_size(v); i++)
		if (!json_is_string(json_array_get(v, i)) ||
		    !json_string_length(json_array_get(v, i)))
			return "arguments.dependencies must hold non-empty strings (package specs "
			       "such as \"polars==1.*\" or \"vega-lite@5\")";
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int mcp_deps_of_call(const struct mcp_config *cfg, int lang, const json_t *arg, const char *code,
		     size_t len, struct mcp_call_deps *d, cc_error *err)
{
	memset(d, 0, sizeof(*d));
	size_t n = json_is_array(arg) ? json_array_size(arg) : 0;
	const char *given[CC_MAX_DEPENDENCIES];
	for (size_t i = 0; i < n && i < CC_MAX_DEPENDENCIES; i++)
		given[i] = json_string_value(json_array_get(arg, i));
	/* the block is read even when packages are refused, to say so */
	if (cc_deps_specs(given, n, true, mcp_lang_cc(lang), code, len, &d->specs, &d->n, &d->block,
			  err) < 0)
		return -1;
	if (d->n && !cfg->deps.allowed) {
		cc_error_clear(err);
		cc_fail(err, CC_ERR_INVALID_INPUT,
			"this server installs no packages (its operator did not pass codecage mcp "
			"--allow-dependencies), so %s cannot be had: use what the tool's "
			"description lists",
			n ? "arguments.dependencies" : "the code's '# /// script' dependencies");
		mcp_call_deps_free(d);
		return -1;
	}
	if (!d->n)
		return 0;
	/* the set, order and repeats aside: what a runtime is compared by */
	const char **sorted = malloc(d->n * sizeof(*sorted));
	struct cc_buf b = { 0 };
	for (size_t i = 0; sorted && i < d->n; i++)
		sorted[i] = d->specs[i];
	if (sorted)
		qsort(sorted, d->n, sizeof(*sorted), cmp);
	for (size_t i = 0; sorted && i < d->n; i++)
		if (!i || strcmp(sorted[i], sorted[i - 1]))
			cc_buf_printf(&b, "%s\n", sorted[i]);
	free(sorted);
	d->set = b.data;
	if (!d->set || b.oom) {
		mcp_call_deps_free(d);
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	}
	return 0;
}

void mcp_call_deps_free(struct mcp_call_deps *d)
{
	free(d->specs);
	cc_script_dependencies_free(d->block);
	free(d->set);
	memset(d, 0, sizeof(*d));
}

int mcp_deps_split(const char *set, const char ***specs, size_t *n)
{
	*specs = NULL;
	*n = 0;
	if (!set)
		return 0;
	size_t count = 0;
	for (const char *p = set; *p; p++)
		count += *p == '\n';
	char *copy = strdup(set);
	const char **v = calloc(count + 1, sizeof(*v));
	if (!copy || !v) {
		free(copy);
		free(v);
		return -1;
	}
	/* v[0] owns the copy: free((void *)v[0]) then free(v) */
	size_t i = 0;
	for (char *p = copy, *nl; i < count && (nl = strchr(p, '\n')); p = nl + 1) {
		*nl = 0;
		v[i++] = p;
	}
	*specs = v;
	*n = i;
	return 0;
}

void mcp_deps_result(const cc_runtime *rt, bool started, char **json, char **text)
{
	const cc_deps *d = cc_runtime_deps(rt);
	*json = *text = NULL;
	if (!d)
		return;
	struct cc_buf j = { 0 };
	cc_buf_puts(&j, "{\"key\":");
	cc_json_string(&j, cc_deps_key(d), strlen(cc_deps_key(d)));
	cc_buf_puts(&j, ",\"packages\":");
	cc_json_string(&j, cc_deps_packages(d), strlen(cc_deps_packages(d)));
	cc_buf_printf(&j, ",\"cached\":%s,\"log\":", cc_deps_cached(d) ? "true" : "false");
	/* the log only where the call started the runtime (the install) */
	const char *log = started ? cc_deps_log(d) : "";
	cc_json_string(&j, log, strlen(log));
	cc_buf_puts(&j, "}");
	*json = j.oom ? NULL : j.data;
	if (j.oom)
		free(j.data);
	*text = started ? cc_strprintf("%s\n", log)
			: cc_strprintf("%s (installed when this runtime started)\n",
				       *cc_deps_packages(d) ? cc_deps_packages(d)
							    : "nothing beyond the guest's own");
}
