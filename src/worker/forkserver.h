/* The fork server's template, worker side (src/worker/forkserver.c). */
#ifndef CC_WORKER_FORKSERVER_H
#define CC_WORKER_FORKSERVER_H

#include "codecage.h"
#include "confine.h"

/* Confine as a template (cc_confine_template), start the engine, import
 * `preload` (comma-separated module names, '?' = optional; engines
 * without modules ignore it), then run the self-probes in a probe
 * session. Fills *rep and *version as for a plain worker. Returns 0, or
 * -1 with err (sandbox_unavailable, invalid_input for a preload that
 * failed, internal, memory_limit). */
int cc_template_start(cc_sandbox_mode mode, const char *preload, struct cc_confine_report *rep,
		      const char **version, cc_error *err);

/* Serve fork requests on fd 3. Never returns in the template (it exits
 * when the supervisor closes the channel); returns in each new session:
 * 0 when its layers are on and its engine renewed (fd 3 is then its own
 * channel), -1 with err (the session must send "fail" and exit). */
int cc_template_serve(cc_error *err);

#endif
