/* Process hygiene and resource limits for the worker. Each step says why. */
#include "hygiene.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error.h"
#include "grants.h"

/* Headroom above the engine's own heap cap for the interpreter's code,
 * stacks and allocator slack, so the engine's cap trips first and most
 * overruns end as a catchable error instead of a failed malloc deep in C. */
#define CC_RLIMIT_DATA_HEADROOM (64ull << 20)

/* Headroom for the whole address space: shared libraries and thread-stack
 * reservations (a Python worker with numpy imported maps about 50 MiB).
 * RLIMIT_AS is what bounds shared anonymous mappings, which RLIMIT_DATA
 * does not count. */
#define CC_RLIMIT_AS_HEADROOM (256ull << 20)

int cc_hygiene(pid_t expected_ppid, cc_error *err)
{
	/* Only the channel (and 0-2, which the supervisor pointed at
	 * /dev/null so a stray write can never land in a file we opened) and
	 * the grants' descriptors (closed once confined, grants.h) may stay
	 * open: anything else the host leaked would be guest authority. */
	if (syscall(SYS_close_range, CC_GRANT_FD0 + (unsigned)cc_worker_grant_fds, ~0U, 0) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "close_range: %s", strerror(errno));

	/* Die with the supervisor; then check it did not die before the
	 * prctl took effect (we would have been reparented already). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "PR_SET_PDEATHSIG: %s", strerror(errno));
	if (getppid() != expected_ppid)
		return cc_fail(err, CC_ERR_INTERNAL, "supervisor is gone");

	/* Own session: no controlling terminal to inject into (TIOCSTI), and
	 * signals sent to the host's process group do not reach us. */
	if (setsid() < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "setsid: %s", strerror(errno));

	/* If the machine runs short of memory anyway, the kernel's OOM killer
	 * takes a worker before anything of the host's. Raising one's own score
	 * needs no privilege. */
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "1000", 4) != 4) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return cc_fail(err, CC_ERR_INTERNAL, "setting oom_score_adj: %s", strerror(e));
	}
	close(fd);

	/* Not dumpable: no core files, no ptrace attach by same-uid processes,
	 * /proc/self owned by root. */
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "PR_SET_DUMPABLE: %s", strerror(errno));

	/* The supervisor passes an empty environment; make sure of it. Engines
	 * set the few variables they need themselves. */
	if (clearenv() != 0)
		return cc_fail(err, CC_ERR_INTERNAL, "clearenv failed");

	/* A dead peer gives EPIPE, not a silent death; RLIMIT_FSIZE gives
	 * EFBIG, not SIGXFSZ. */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	return 0;
}

static int set_limit(int res, const char *name, rlim_t v, cc_error *err)
{
	struct rlimit rl = { v, v };
	if (setrlimit(res, &rl) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "setrlimit(%s): %s", name, strerror(errno));
	return 0;
}

int cc_rlimits(const struct cc_init_limits *lim, cc_error *err)
{
	/* Hard and soft equal, so the guest cannot raise them. RLIMIT_DATA
	 * counts brk and private mappings: the kernel's backstop under the
	 * engine's own heap cap. */
	if (set_limit(RLIMIT_CORE, "CORE", 0, err) < 0 ||
	    set_limit(RLIMIT_DATA, "DATA", lim->max_memory + CC_RLIMIT_DATA_HEADROOM, err) < 0 ||
	    set_limit(RLIMIT_AS, "AS", lim->max_memory + CC_RLIMIT_AS_HEADROOM, err) < 0 ||
	    set_limit(RLIMIT_CPU, "CPU", lim->cpu_s, err) < 0 ||
	    set_limit(RLIMIT_FSIZE, "FSIZE", lim->max_file_size, err) < 0 ||
	    set_limit(RLIMIT_NOFILE, "NOFILE", lim->max_open_files, err) < 0 ||
	    set_limit(RLIMIT_MEMLOCK, "MEMLOCK", 0, err) < 0 ||
	    set_limit(RLIMIT_MSGQUEUE, "MSGQUEUE", 0, err) < 0)
		return cc_fail_wrap(err, "resource limits");
	return 0;
}
