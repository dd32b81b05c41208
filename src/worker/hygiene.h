/* Confinement steps 1 and 2 of DESIGN.md section 3 (process hygiene and
 * resource limits), plus the report of which layers applied. Worker side,
 * raw OS side effects. The namespace/Landlock/seccomp layers and the
 * self-probes have their place in cc_confine() but are not built yet. */
#ifndef CC_WORKER_HYGIENE_H
#define CC_WORKER_HYGIENE_H

#include <sys/types.h>

#include "codecage.h"
#include "worker.h"

/* The channel's fixed descriptor number, set up by the supervisor. */
#define CC_CHANNEL_FD 3

/* Layers as reported to the supervisor (comma-separated names). */
struct cc_confine_report {
	char applied[256];
	char missing[256];
	int landlock_abi;
	int seccomp_allowed;
};

/* Step 1, before reading anything: close every fd but 0-2 (/dev/null from
 * the supervisor) and the channel; parent-death signal and a check that
 * the parent is still expected_ppid; own session; not dumpable; empty
 * environment. Returns 0 or -1 with err filled (kind internal). */
int cc_hygiene(pid_t expected_ppid, cc_error *err);

/* Steps 2..7 in order, for the given mode. Fills *rep. In mode require,
 * fails with sandbox_unavailable naming every missing layer. */
int cc_confine(cc_sandbox_mode mode, const struct cc_worker_limits *lim,
	       struct cc_confine_report *rep, cc_error *err);

#endif
