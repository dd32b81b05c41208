/* The worker's own exit statuses, by name: the worker _exits with these,
 * and the supervisor (src/lib/spawn.c, cc_child_describe) says what they
 * mean. A status is only the worker's word: guest code can exit with any
 * status it likes (os._exit(4)), so a description is what the worker
 * would have meant, never proof of what happened. Statuses from
 * CC_SC_KILL_EXIT_BASE up are the monitor's kill-list reports
 * (seccomp_policy.h). */
#ifndef CC_COMMON_WORKER_EXIT_H
#define CC_COMMON_WORKER_EXIT_H

/* ---- seen by the supervisor ---- */

/* The supervisor closed the channel: the runtime was closed. */
#define CC_WORKER_EXIT_CLOSED 0
/* Start-up failed; a "fail" frame said why first (or a forked session
 * that could not stop being dumpable). */
#define CC_WORKER_EXIT_FAILED 1
/* The channel broke: the supervisor went away or an I/O error. */
#define CC_WORKER_EXIT_CHANNEL 3
/* The supervisor sent a frame the protocol does not allow there: the
 * worker stops rather than guess. */
#define CC_WORKER_EXIT_BAD_FRAME 4
/* The worker's first process lost its monitor while the namespaces were
 * set up (src/confine/namespaces.c). */
#define CC_WORKER_EXIT_NO_MONITOR 70
/* The Python worker ended itself: the deadline's stop landed in a long C
 * call that cannot be interrupted (src/engine/cpython/engine_py.c). */
#define CC_WORKER_EXIT_STUCK 124

/* ---- between the worker's own processes ---- */

/* A self-probe's child: the probe was blocked / got through
 * (src/confine/probes.c, confine.c); also a probe child whose filter would
 * not install. */
#define CC_WORKER_EXIT_PROBE_BLOCKED 10
#define CC_WORKER_EXIT_PROBE_BREACH 11
/* The fork server's probe session (src/confine/confine.c): every
 * self-probe was blocked / a probe got through / it could not add its
 * own layers. */
#define CC_WORKER_EXIT_PROBES_HELD 0
#define CC_WORKER_EXIT_SESSION_UNCONFINED 2
#define CC_WORKER_EXIT_SESSION_BREACHED 3
/* --sweep (a test mode): the child could not install the filters / could
 * not report what its call did (src/confine/confine.c). */
#define CC_WORKER_EXIT_SWEEP_SETUP 90
#define CC_WORKER_EXIT_SWEEP_REPORT 91

/* What an exit status of the worker means, for a message, or NULL for
 * one it does not use. */
static inline const char *cc_worker_exit_meaning(int status)
{
	switch (status) {
	case CC_WORKER_EXIT_CLOSED:
		return "the worker's status for a closed channel";
	case CC_WORKER_EXIT_FAILED:
		return "the worker's status for a failed start";
	case CC_WORKER_EXIT_CHANNEL:
		return "the worker's status for a broken channel to the supervisor";
	case CC_WORKER_EXIT_BAD_FRAME:
		return "the worker's status for a frame from the supervisor it refused";
	case CC_WORKER_EXIT_NO_MONITOR:
		return "the worker's status for a monitor that went away during start-up";
	case CC_WORKER_EXIT_STUCK:
		return "the Python worker's status for a stop that landed in a long C call";
	default:
		return NULL;
	}
}

#endif
