/* Swapping the C library's option names in error messages for a front
 * end's (hint.h). */
#include <stdlib.h>
#include <string.h>

#include "codecage.h"
#include "hint.h"

char *cc_hint_rewrite(const char *msg, const struct cc_hints *h)
{
	const char *from[] = { CC_TIMEOUT_HINT, CC_MEMORY_HINT, CC_RESULT_HINT };
	const char *to[] = { h->timeout, h->memory, h->result };

	if (!msg)
		return NULL;
	for (size_t i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
		const char *at = to[i] ? strstr(msg, from[i]) : NULL;
		if (!at)
			continue;
		size_t head = (size_t)(at - msg), tail = strlen(at + strlen(from[i]));
		size_t n = head + strlen(to[i]) + tail;
		char *out = malloc(n + 1);
		if (!out)
			return NULL;
		memcpy(out, msg, head);
		memcpy(out + head, to[i], strlen(to[i]));
		memcpy(out + head + strlen(to[i]), at + strlen(from[i]), tail + 1);
		return out; /* one hint per message */
	}
	return NULL;
}
