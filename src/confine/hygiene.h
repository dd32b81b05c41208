/* Confinement steps 1 and 2 of DESIGN.md section 3 (process hygiene and
 * resource limits). Worker side, raw OS side effects; confine.h drives
 * the rest. */
#ifndef CC_WORKER_HYGIENE_H
#define CC_WORKER_HYGIENE_H

#include <sys/types.h>

#include "codecage.h"
#include "init_frame.h"

/* The channel's fixed descriptor number, set up by the supervisor. */
#define CC_CHANNEL_FD 3

/* Step 1, before reading anything: close every fd but 0-2 (/dev/null from
 * the supervisor) and the channel; parent-death signal and a check that
 * the parent is still expected_ppid; own session; not dumpable; empty
 * environment. Returns 0 or -1 with err filled (kind internal). */
int cc_hygiene(pid_t expected_ppid, cc_error *err);

/* Step 2: kernel resource limits, hard equal to soft. RLIMIT_NPROC is
 * set by the namespace step (it must come after the new user namespace,
 * whose process count it then bounds). Returns 0 or -1 with err. */
int cc_rlimits(const struct cc_init_limits *lim, cc_error *err);

#endif
