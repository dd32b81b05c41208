/* The seccomp policy as data: which system calls each engine's worker may
 * make, which ones kill it, and why. DESIGN.md section 3, step 6.
 *
 * Shared by the worker (src/confine/seccomp.c compiles it with libseccomp)
 * and the supervisor (which turns a kill exit status back into a system
 * call name). Names are the kernel's x86_64 names as libseccomp spells
 * them. Everything in neither list answers EPERM; clone3 answers ENOSYS
 * so glibc falls back to clone, whose flags the filter can inspect. */
#ifndef CC_SECCOMP_POLICY_H
#define CC_SECCOMP_POLICY_H

#include <stddef.h>

/* Which workers a rule applies to (bit mask). */
#define CC_SC_JS 1u
#define CC_SC_PY 2u
/* Rules only the fork server's template gets, on top of its engine's
 * (compiled as CC_SC_JS | CC_SC_FORK or CC_SC_PY | CC_SC_FORK). */
#define CC_SC_FORK 4u
/* File work: Python's rules carry CC_SC_PY too; JavaScript's filter adds
 * this bit when the session has scratch or a grant (confine.c). */
#define CC_SC_FILES 8u
/* Rules a template whose sessions get scratch adds to CC_SC_FORK: each
 * session's intermediate mounts a tmpfs of its own (confine.c). */
#define CC_SC_FORK_SCRATCH 16u

/* How a rule is allowed. ARGS rules are allowed only when their argument
 * check passes (the check lives next to the filter compiler in
 * src/confine/seccomp.c, keyed by name); otherwise the call answers EPERM. */
enum cc_sc_how {
	CC_SC_ALLOW,
	CC_SC_ARGS
};

struct cc_sc_rule {
	const char *name;   /* x86_64 system call name */
	unsigned engines;   /* CC_SC_JS | CC_SC_PY */
	enum cc_sc_how how; /* unconditional or argument-checked */
	const char *why;    /* one line: who needs it */
};

/* The allow-list, both engines' rules in one table. */
extern const struct cc_sc_rule cc_sc_allow[];
extern const size_t cc_sc_allow_len;

/* Never legitimate for a guest: the worker is killed on the spot and the
 * supervisor reports the name. Same list for both engines. */
extern const char *const cc_sc_kill[];
extern const size_t cc_sc_kill_len;

/* A worker killed by the kill-list exits with CC_SC_KILL_EXIT_BASE plus
 * the call's index in cc_sc_kill (the SIGSYS handler does this; a 256-value
 * exit status cannot carry a raw system call number). The supervisor maps
 * it back with cc_sc_kill_name(). Guest code could exit with such a status
 * itself; that only mislabels its own death. */
#define CC_SC_KILL_EXIT_BASE 160

/* The self-probe 'exec' runs /bin/sh -c 'exit 11' in the worker itself:
 * if that works the worker is gone before it can say so, and the
 * supervisor reads this exit status before "ready" as the breach. */
#define CC_PROBE_EXEC_EXIT 11

/* The kill-list name for a worker exit status, or NULL when the status is
 * not a kill report. */
const char *cc_sc_kill_name(int exit_status);

#endif
