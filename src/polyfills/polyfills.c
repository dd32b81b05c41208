/* cc_web_polyfills (codecage.h): the joined pieces built into libcodecage,
 * the same text the JavaScript worker has built in. */
#include "codecage.h"
#include "polyfills.h"

CC_EXPORT const char *cc_web_polyfills(size_t *len)
{
	if (len)
		*len = cc_web_polyfills_js_len;
	return cc_web_polyfills_js;
}
