/* The guest's network APIs: the bootstraps cc_runtime_set_net runs once in
 * a runtime given a policy (src/net/net_fetch.js for JavaScript,
 * src/net/net_urllib.py for Python), embedded at build time by
 * scripts/embed-text. */
#include "net.h"
#include "net_guest_src.h"

const char *cc_net_bootstrap(cc_language lang)
{
	return lang == CC_LANG_PYTHON ? cc_net_urllib_py : cc_net_fetch_js;
}
