/* libFuzzer target: the supervisor's frame decoder and validator
 * (cc_msg_parse: MessagePack reading, value caps, message shapes), fed
 * whatever a hostile worker could put in a frame's payload.
 * Build and run with scripts/fuzz; replay.c runs the saved corpus in the
 * normal test suite. */
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "supervisor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cc_msg m;
	cc_error err = { 0 };
	/* A small result cap keeps the node budget small and fuzzing fast. */
	if (cc_msg_parse((const char *)data, size, 64 * 1024, &m, &err) == 0)
		cc_msg_free(&m);
	cc_error_clear(&err);
	return 0;
}
