/* Step 6 of DESIGN.md section 3: compile and install the seccomp filters
 * (src/confine/seccomp.c: the main filter and the notify filter whose
 * listener the monitor holds). Worker side only. */
#ifndef CC_WORKER_SECCOMP_FILTER_H
#define CC_WORKER_SECCOMP_FILTER_H

#include <linux/filter.h>
#include <stdbool.h>

#include "codecage.h"

/* A compiled filter. prog.filter is heap memory owned by the struct. */
struct cc_bpf {
	struct sock_fprog prog;
	int allowed; /* allow-list entries compiled in (argument-checked count once) */
};

/* What the main filter does with a kill-list call. */
enum cc_kill_how {
	CC_KILL_BY_MONITOR, /* SECCOMP_RET_TRACE: the notify filter's USER_NOTIF
			       outranks it and the monitor kills; alone, ENOSYS */
	CC_KILL_PROCESS,    /* SECCOMP_RET_KILL_PROCESS: no monitor to name it */
};

/* The engine value that compiles the notify filter instead: kill-list ->
 * SECCOMP_RET_USER_NOTIF, foreign architectures killed, all else allowed. */
#define CC_SC_NOTIFY_ONLY 0x100u

/* Compile the policy for engine (CC_SC_JS, CC_SC_PY or CC_SC_NOTIFY_ONLY).
 * deny_errno is the errno of the default action: EPERM in production; the
 * assume-breach sweep uses a value no system call returns, to tell a
 * denial from a call that ran and failed. Returns 0, or -1 with err (kind
 * internal). */
int cc_seccomp_compile(unsigned engine, int deny_errno, enum cc_kill_how kill, struct cc_bpf *bpf,
		       cc_error *err);

void cc_bpf_free(struct cc_bpf *bpf);

/* Whether the kernel takes seccomp filters at all. Asked before compiling:
 * libseccomp refuses SCMP_ACT_KILL_PROCESS when it cannot find seccomp(2).
 * Returns 0, or -1 with err (sandbox_unavailable). */
int cc_seccomp_available(cc_error *err);

/* Install the filter on the calling thread (the worker is single-threaded
 * here). Needs no_new_privs or CAP_SYS_ADMIN. With listener, the kernel
 * makes a user-notification listener: its fd is returned (the caller
 * owns it). Returns 0 (or the fd), or -1 with err (sandbox_unavailable
 * when the kernel refuses the filter). */
int cc_seccomp_install(const struct cc_bpf *bpf, bool listener, cc_error *err);

#endif
