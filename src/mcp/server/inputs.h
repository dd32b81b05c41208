/* arguments.inputs of run_python / run_javascript (inputs.c): an object
 * whose keys become guest globals, values in the tagged JSON of --json. */
#ifndef CC_MCP_INPUTS_H
#define CC_MCP_INPUTS_H

#include <jansson.h>
#include <stddef.h>

#include "codecage.h"

/* At most this many inputs in one call. */
#define MCP_MAX_INPUTS 256

struct mcp_inputs;

/* Convert inputs (a JSON object, borrowed) into *out (owned, free with
 * mcp_inputs_free). Tagged objects, each with exactly one key:
 * {"$bytes": base64}, {"$bigint": "-123"}, {"$float": "NaN" | "Infinity"
 * | "-Infinity"}, {"$date": "YYYY-MM-DDTHH:MM:SS[.ffffff]Z"} (UTC); any
 * other object is a map. Returns 0, or -1 with why (a message naming the
 * key, for a -32602 answer) written to why[0..cap). */
int mcp_inputs_parse(const json_t *inputs, struct mcp_inputs **out, char *why, size_t cap);

/* Bind every input as a global of rt (cc_runtime_set_global, so its caps
 * apply: --memory, the 1 MiB value cap, depth 100). Returns 0, or -1 with
 * err (the message names the key; kinds of cc_runtime_set_global). */
int mcp_inputs_bind(const struct mcp_inputs *in, cc_runtime *rt, cc_error *err);

void mcp_inputs_free(struct mcp_inputs *in);

#endif
