/* libFuzzer target: the supervisor's frame decoder and validator
 * (cc_msg_parse: MessagePack reading, value caps, message shapes), fed
 * whatever a hostile worker could put in a frame's payload; the arguments
 * of every call also go through the network request validator
 * (cc_net_req_parse), as those of a "__codecage_net" call do.
 * Build and run with scripts/fuzz; replay.c runs the saved corpus in the
 * normal test suite. */
#include <stddef.h>
#include <stdint.h>

#include <stdlib.h>

#include "error.h"
#include "net.h"
#include "supervisor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cc_msg m;
	cc_error err = { 0 };
	/* A small result cap keeps the node budget small and fuzzing fast. */
	if (cc_msg_parse((const char *)data, size, 64 * 1024, &m, &err) == 0) {
		if (m.what == CC_MSG_CALL) {
			struct cc_net_req r;
			char *why = NULL;
			cc_net_req_parse(m.args, 1024, &r, &why);
			cc_net_req_free(&r);
			free(why);
		}
		cc_msg_free(&m);
	}
	cc_error_clear(&err);
	return 0;
}
