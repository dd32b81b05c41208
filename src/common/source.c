/* The checks every eval's source passes, in the library and the CLI. */
#include "source.h"

#include <string.h>

#include "error.h"
#include "utf8.h"

int cc_check_source(const char *code, size_t len, uint64_t max, cc_error *err)
{
	if (len > max)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "the code is over the %llu-byte source cap; send less code or raise "
			       "the cap (limits.max_source)",
			       (unsigned long long)max);
	const char *nul = memchr(code, 0, len);
	if (nul)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "the code contains a NUL byte at offset %zu; remove it",
			       (size_t)(nul - code));
	size_t off = cc_utf8_valid_prefix(code, len);
	if (off < len)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "the code is not valid UTF-8 (first bad byte at offset %zu); "
			       "re-encode it as UTF-8",
			       off);
	return 0;
}
