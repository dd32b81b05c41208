/* Step 5 of DESIGN.md section 3: Landlock (src/confine/landlock.c). */
#ifndef CC_WORKER_LANDLOCK_H
#define CC_WORKER_LANDLOCK_H

#include "confine.h"

/* The kernel's Landlock ABI version, or -errno (ENOSYS: not built in;
 * EOPNOTSUPP: disabled at boot). */
int cc_landlock_abi(void);

/* Restrict the calling thread and its future children: read-only access
 * beneath pol->read_only, read-write beneath pol->scratch (if set),
 * nothing else; TCP bind/connect denied (ABI 4+); abstract unix sockets
 * and signals scoped to the sandbox (ABI 6+). Sets no_new_privs. Paths
 * that do not exist are skipped. *abi_applied gets the ABI whose rights
 * were handled. Returns 0, or -1 with err (sandbox_unavailable when the
 * kernel has no Landlock or refuses it; internal otherwise). */
int cc_landlock_apply(const struct cc_fs_policy *pol, int *abi_applied, cc_error *err);

/* A forked session's own Landlock domain, nested in its template's: TCP
 * bind/connect denied (ABI 4+), and abstract unix sockets and signals
 * scoped to this session (ABI 6+), so it cannot signal its template or a
 * sibling. Files stay as the template's domain decided (a nested domain
 * only narrows). Needs no_new_privs already set. Uses the ruleset
 * cc_landlock_session_prepare made, if any (closing it: it grants REFER
 * everywhere, so renames between directories are the file domain's to
 * decide), else makes one without (stricter: no renames between
 * directories). Returns 0, or -1 with err (sandbox_unavailable). */
int cc_landlock_session(int *abi_applied, cc_error *err);

/* A template whose sessions get scratch: no layer of its own (the kernel
 * forbids mounts to a domain that handles a file right, and denies REFER
 * in every layer of a domain that handles one, so any layer here would
 * either forbid the sessions' tmpfs mounts or refuse their renames
 * between directories). Each session applies the whole domain, exactly a
 * spawned worker's (cc_landlock_apply with pol->in_session), after
 * mounting its scratch and before any guest code. *abi_applied gets the
 * ABI those domains will handle. Returns 0, or -1 with err
 * (sandbox_unavailable, as cc_landlock_apply, when the kernel has none). */
int cc_landlock_defer(int *abi_applied, cc_error *err);

/* In a template, before its seccomp filter: make the sessions' scope-only
 * ruleset now (its rule needs landlock_add_rule, which the template's
 * filter does not allow). Returns 0, or -1 with err. */
int cc_landlock_session_prepare(cc_error *err);

#endif
