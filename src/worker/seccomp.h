/* Step 6 of DESIGN.md section 3: compile and install the seccomp filter
 * (src/worker/seccomp.c), and the self-probes' way of surviving a trapped
 * kill-list call. Worker side only. */
#ifndef CC_WORKER_SECCOMP_H
#define CC_WORKER_SECCOMP_H

#include <linux/filter.h>
#include <stdbool.h>

#include "codecage.h"

/* A compiled filter. prog.filter is heap memory owned by the struct. */
struct cc_bpf {
	struct sock_fprog prog;
	int allowed; /* allow-list entries compiled in (argument-checked count once) */
};

/* Compile the policy for engine (CC_SC_JS or CC_SC_PY). deny_errno is the
 * errno of the default action: EPERM in production; the assume-breach
 * sweep uses a value no system call returns, to tell a denial from a call
 * that ran and failed. Returns 0, or -1 with err (kind internal). */
int cc_seccomp_compile(unsigned engine, int deny_errno, struct cc_bpf *bpf, cc_error *err);

void cc_bpf_free(struct cc_bpf *bpf);

/* Whether the kernel takes seccomp filters at all. Asked before compiling:
 * libseccomp refuses SCMP_ACT_KILL_PROCESS when it cannot find seccomp(2).
 * Returns 0, or -1 with err (sandbox_unavailable). */
int cc_seccomp_available(cc_error *err);

/* Install the SIGSYS handler for the kill-list, then the filter, on the
 * calling thread (the worker is single-threaded here). Needs no_new_privs
 * or CAP_SYS_ADMIN. Returns 0, or -1 with err (sandbox_unavailable when
 * the kernel refuses the filter). */
int cc_seccomp_install(const struct cc_bpf *bpf, cc_error *err);

/* Run fn(arg) with the SIGSYS handler in probe mode: a kill-list call in
 * fn sets *trapped and returns 0 here instead of ending the worker. */
int cc_seccomp_probe(int (*fn)(void *), void *arg, bool *trapped);

#endif
