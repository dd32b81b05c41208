/* A runtime's network: the policy handed to the broker (src/net/net.c),
 * the reserved tool bound and the guest's network APIs run the first time
 * a policy allows any host, and the public cc_runtime_set_net. Supervisor
 * side. */
#include <stdbool.h>
#include <string.h>

#include "error.h"
#include "net.h"
#include "supervisor.h"

static int bootstrap(cc_runtime *rt, cc_error *err)
{
	const char *code = cc_net_bootstrap(rt->opts.language);
	cc_result *r = cc_runtime_eval_file(rt, code, strlen(code), 0, "<codecage:net>");
	if (!r)
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	int rc = 0;
	if (!cc_result_ok(r))
		rc = cc_fail(err, cc_result_error_kind(r), "giving the guest its network APIs: %s",
			     cc_result_error_message(r));
	cc_result_free(r);
	return rc;
}

int cc_net_install(cc_runtime *rt, struct cc_net_policy *p, cc_error *err)
{
	if (!p)
		return 0;
	int bind = cc_net_set_policy(&rt->net, p, err);
	if (bind <= 0)
		return bind;
	if (cc_tools_bind_net(rt, err) < 0 || bootstrap(rt, err) < 0)
		return -1;
	cc_net_set_bound(rt->net);
	return 0;
}

CC_EXPORT int cc_runtime_set_net(cc_runtime *rt, const cc_net_options *n, cc_error *err)
{
	struct cc_net_policy *p;
	int rc = !rt ? cc_fail(err, CC_ERR_INVALID_INPUT, "no runtime")
		 : __atomic_load_n(&rt->busy, __ATOMIC_ACQUIRE)
			 ? cc_fail(err, CC_ERR_INVALID_INPUT,
				   "cannot change the network policy while the runtime runs a "
				   "request")
			 : cc_net_policy_new(n, rt->opts.limits.max_result, &p, err);
	if (rc < 0) {
		if (n && n->hook_free)
			n->hook_free(n->hook_user);
		return -1;
	}
	return cc_net_install(rt, p, err);
}
