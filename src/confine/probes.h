/* Step 7 of DESIGN.md section 3: self-probes (src/confine/probes.c). */
#ifndef CC_WORKER_PROBES_H
#define CC_WORKER_PROBES_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

/* Run every probe in this process, after confinement; ppid is the
 * supervisor's pid as the host sees it. private_net: the worker is in a
 * network namespace of its own, whose abstract unix names are its own too.
 * with_exec: also try exec (last, and only if nothing else got through;
 * the monitor answers its kill-list call with EPERM until armed). Returns
 * how many got through and writes their comma-separated names into
 * breached[n]. */
int cc_probes_run(pid_t ppid, bool private_net, bool with_exec, char *breached, size_t n);

/* The exec probe alone, for a worker without a monitor, in a child that
 * installed the worker's filter (its kill-list would end the worker).
 * Returns only if exec failed; if it worked, the process became a shell
 * that exits CC_PROBE_EXEC_EXIT. */
void cc_probe_exec(pid_t ppid);

/* Test-only: run each probe in its own forked child and print
 * "<name> breach|blocked" lines to out. Returns the number of breaches,
 * or -1 when a child could not be started. */
int cc_probes_report(pid_t ppid, FILE *out);

/* Test-only (cc_confine_scope_report): listen on the abstract unix name
 * "\0name"; the socket, or -1. */
int cc_probe_abstract_listen(const char *name);

/* Test-only, in a forked session without seccomp: TCP connect (loopback
 * port 9) and bind, and connecting to the abstract names sibling and tmpl,
 * each printed to out as "<attempt> ok|<errno name>" (connect_tcp,
 * bind_tcp, unix_sibling, unix_template). */
void cc_probes_scope_report(const char *sibling, const char *tmpl, FILE *out);

#endif
