/* The dependency flags of the CLI and `codecage mcp` (deps_flags.h). */
#include "deps_flags.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "flags.h"

void cc_deps_flags_init(struct cc_deps_flags *f)
{
	memset(f, 0, sizeof(*f));
	cc_deps_options_init(&f->o);
	f->o.allow = f->allow;
	f->o.deny = f->deny;
}

static int append(const char *flag, const char *arg, const char **list, size_t *n, size_t cap,
		  char **why)
{
	if (*n == cap) {
		*why = cc_strprintf("%s: at most %zu, not more (at '%s')", flag, cap, arg);
		return -1;
	}
	list[(*n)++] = arg;
	return 0;
}

/* The library's word on the policy, with the flag in front. */
static int check(const struct cc_deps_flags *f, const char *flag, const char *arg, char **why)
{
	cc_options o;
	cc_options_init(&o, CC_LANG_PYTHON);
	o.deps = &f->o;
	cc_error err = { 0 };
	if (cc_options_check(&o, &err) == 0)
		return 0;
	const char *m = err.message ? err.message : "out of range";
	const char *p = strstr(m, "cc_options.deps: ");
	*why = cc_strprintf("%s: %s, not '%s'", flag, p ? p + 17 : m, arg);
	cc_error_clear(&err);
	return -1;
}

int cc_deps_flag(int c, const char *arg, struct cc_deps_flags *f, char **why)
{
	double d;
	switch (c) {
	case CC_DF_DEPENDENCY:
		if (!*arg) {
			*why = cc_strprintf(
				"--dependency wants a package spec, such as polars==1.*");
			return -1;
		}
		return append("--dependency", arg, f->specs, &f->n_specs, CC_MAX_DEPENDENCIES, why);
	case CC_DF_ALLOW_DEPS:
		f->allowed = true;
		return 0;
	case CC_DF_CACHE:
		f->set = true;
		f->o.cache_dir = arg;
		return check(f, "--deps-cache", arg, why);
	case CC_DF_ALLOW_PKG:
		f->set = true;
		return append("--deps-allow", arg, f->allow, &f->o.n_allow, CC_DEPS_FLAG_LIST_MAX,
			      why);
	case CC_DF_DENY_PKG:
		f->set = true;
		return append("--deps-deny", arg, f->deny, &f->o.n_deny, CC_DEPS_FLAG_LIST_MAX,
			      why);
	case CC_DF_MAX_INSTALL:
	case CC_DF_MAX_CACHE: {
		const char *flag =
			c == CC_DF_MAX_INSTALL ? "--deps-max-install" : "--deps-max-cache";
		uint64_t *to =
			c == CC_DF_MAX_INSTALL ? &f->o.max_install_bytes : &f->o.max_cache_bytes;
		f->set = true;
		if (cc_flag_whole_mib(arg, to) != 0) {
			*why = cc_strprintf("%s wants a whole number of MiB, not '%s'", flag, arg);
			return -1;
		}
		*to <<= 20;
		return 0; /* both are checked together when the runtime starts */
	}
	case CC_DF_TIMEOUT:
	case CC_DF_REFRESH: {
		const char *flag = c == CC_DF_TIMEOUT ? "--deps-timeout" : "--deps-refresh";
		f->set = true;
		if (cc_flag_decimal(arg, &d) < 0) {
			*why = cc_strprintf("%s wants seconds, not '%s'", flag, arg);
			return -1;
		}
		*(c == CC_DF_TIMEOUT ? &f->o.timeout_s : &f->o.refresh_s) = d;
		return check(f, flag, arg, why);
	}
	case CC_DF_LOCK:
		f->set = true;
		f->o.lock_file = arg;
		return 0;
	case CC_DF_INDEX:
		f->set = true;
		f->o.index_url = arg;
		return 0;
	case CC_DF_REGISTRY:
		f->set = true;
		f->o.registry = arg;
		return 0;
	default:
		return 1;
	}
}

int cc_deps_specs(const char *const *given, size_t n_given, bool script, cc_language lang,
		  const char *code, size_t len, const char ***out, size_t *n, char ***block,
		  cc_error *err)
{
	size_t nb = 0;
	*out = NULL;
	*n = 0;
	*block = NULL;
	if (script && lang == CC_LANG_PYTHON &&
	    cc_script_dependencies(code, len, block, &nb, err) < 0)
		return -1;
	if (!n_given && !nb)
		return 0;
	const char **v = calloc(n_given + nb, sizeof(*v));
	if (!v) {
		cc_script_dependencies_free(*block);
		*block = NULL;
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	}
	for (size_t i = 0; i < n_given; i++)
		v[i] = given[i];
	for (size_t i = 0; i < nb; i++)
		v[n_given + i] = (*block)[i];
	*out = v;
	*n = n_given + nb;
	return 0;
}
