/* Step 3 of DESIGN.md section 3 (src/confine/namespaces.c). */
#ifndef CC_WORKER_NAMESPACES_H
#define CC_WORKER_NAMESPACES_H

#include <sys/resource.h>

#include "confine.h"

/* Clone a child into new user, mount, pid, net, ipc, uts and cgroup
 * namespaces and map its uid and gid 1000 to the caller's (to nobody,
 * 65534, when the caller is root). The parent becomes a monitor that waits
 * for the child and ends as it ended (never returns). The child, pid 1 of
 * the new pid namespace, builds a read-only root holding only pol's paths
 * (tmpfs, bind mounts, pivot_root; no /proc, no /sys), becomes uid 1000,
 * sets RLIMIT_NPROC to nproc (its threads, main included), and returns 0.
 * Returns -1 with err: sandbox_unavailable when the kernel refuses the
 * namespaces (nothing has changed then), internal when a later step
 * fails. */
/* A template with session scratch: an O_PATH handle of a procfs instance
 * of the worker's pid namespace, mounted only long enough to open it
 * (detached: no path leads to it); -1 otherwise. Never reaches a session:
 * each session closes it as it starts (confine.c, session_enter). */
extern int cc_ns_procfd;

/* Inside the namespace the guest is an ordinary user (not 0): library
 * code that changes behaviour for root never sees root. A forked
 * session's own user namespace maps the same id to itself. */
#define CC_NS_ID 1000

int cc_ns_enter(const struct cc_fs_policy *pol, rlim_t nproc, cc_error *err);

/* Create every directory above the last component of path (absolute),
 * mode 0755; those already there are kept. path is written to while it
 * runs and restored. Returns 0, or -1 with errno from mkdir. Used for the
 * mount points of the minimal root and of the file grants. */
int cc_ns_mkparents(char *path);

/* Files and directories one scratch tmpfs may hold (spawned and forked). */
#define CC_SCRATCH_INODES 4096

#endif
