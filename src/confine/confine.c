/* The one confinement function: DESIGN.md section 3, steps 2 to 7, in
 * order, each layer assuming the one before it failed. Step 1 (hygiene)
 * ran before the init frame was read. */
#include "confine.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error.h"
#include "grants.h"
#include "hygiene.h"
#include "landlock.h"
#include "monitor.h"
#include "namespaces.h"
#include <sys/mount.h>
#include "probes.h"
#include "seccomp_filter.h"
#include "seccomp_policy.h"
#include "worker_exit.h"

/* Pending signals and POSIX timers a worker may hold (the engine's stop
 * timer is one). */
#define CC_MAX_SIGPENDING 64

/* Without a user namespace, a worker started by root becomes nobody. */
#define CC_NOBODY 65534

static const char *const layer_names[CC_LAYER_COUNT] = {
	[CC_LAYER_HYGIENE] = "hygiene",		  [CC_LAYER_RLIMITS] = "rlimits",
	[CC_LAYER_NAMESPACES] = "namespaces",	  [CC_LAYER_CAPABILITIES] = "capabilities",
	[CC_LAYER_NO_NEW_PRIVS] = "no_new_privs", [CC_LAYER_LANDLOCK] = "landlock",
	[CC_LAYER_SECCOMP] = "seccomp",		  [CC_LAYER_SELF_PROBES] = "self-probes",
};

const char *cc_layer_name(enum cc_layer layer)
{
	return (unsigned)layer < CC_LAYER_COUNT ? layer_names[layer] : "unknown";
}

/* Add a layer's name to a comma-separated list (a report's applied or
 * missing, or a message's). */
static void append(char *buf, size_t cap, enum cc_layer layer)
{
	size_t n = strlen(buf);
	snprintf(buf + n, cap - n, "%s%s", n ? "," : "", cc_layer_name(layer));
}

/* Later layers that a cheap question to the kernel already shows missing,
 * so a refusal names them all at once rather than one per attempt. */
static void also_missing(enum cc_layer layer, char *buf, size_t n)
{
	cc_error e = { 0 };
	buf[0] = 0;
	if (layer < CC_LAYER_LANDLOCK && cc_landlock_abi() <= 0)
		append(buf, n, CC_LAYER_LANDLOCK);
	if (layer < CC_LAYER_SECCOMP && cc_seccomp_available(&e) < 0)
		append(buf, n, CC_LAYER_SECCOMP);
	cc_error_clear(&e);
}

/* A layer the kernel did not give us: in require mode that ends the start
 * with a message naming it; in auto mode it is reported and we go on. */
static int missing(cc_sandbox_mode mode, struct cc_confine_report *rep, enum cc_layer layer,
		   cc_error *err)
{
	append(rep->missing, sizeof(rep->missing), layer);
	if (mode == CC_SANDBOX_REQUIRE) {
		const char *why = err->message ? err->message : "not available";
		char *msg = NULL, also[64];
		also_missing(layer, also, sizeof(also));
		if (asprintf(&msg,
			     "sandbox mode 'require': layer '%s' could not be applied (%s)%s%s; "
			     "fix the host, or use sandbox mode 'auto' to run without it",
			     cc_layer_name(layer), why, *also ? "; also unavailable: " : "",
			     also) < 0)
			msg = NULL;
		cc_error_clear(err);
		cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE, "%s", msg ? msg : cc_layer_name(layer));
		free(msg);
		return -1;
	}
	cc_error_clear(err);
	return 0;
}

/* Step 4: no capabilities in any set, none that can come back (bounding
 * set, ambient set, locked securebits), and no_new_privs. In a user
 * namespace the worker holds every capability of that namespace until
 * here; without one, a root host's worker first becomes nobody. */
static int drop_privileges(bool in_userns, cc_error *err)
{
	if (!in_userns && geteuid() == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(CC_NOBODY, CC_NOBODY, CC_NOBODY) < 0 ||
		    setresuid(CC_NOBODY, CC_NOBODY, CC_NOBODY) < 0)
			return cc_fail(err, CC_ERR_INTERNAL, "becoming nobody: %s",
				       strerror(errno));
	}
	/* Needs CAP_SETPCAP; a process that never had capabilities (an
	 * unprivileged host without user namespaces) has nothing to lock. */
	prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
					 SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
					 SECBIT_NO_CAP_AMBIENT_RAISE |
					 SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED);
	for (int cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno == EINVAL)
			break; /* past the kernel's last capability */
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "capset: %s", strerror(errno));
	/* Check rather than trust. */
	if (syscall(SYS_capget, &h, d) < 0 || d[0].effective || d[0].permitted ||
	    d[0].inheritable || d[1].effective || d[1].permitted || d[1].inheritable)
		return cc_fail(err, CC_ERR_INTERNAL, "capabilities still held after capset");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "no_new_privs: %s", strerror(errno));
	return 0;
}

/* Set while a fork server's template confines itself. */
static bool confining_template;
/* The file policy confinement applied (a template's sessions with scratch
 * build their Landlock domain from it). */
static struct cc_fs_policy template_pol;

static void engine_policy(const struct cc_init_limits *lim, struct cc_fs_policy *pol)
{
	memset(pol, 0, sizeof(*pol));
	if (cc_worker_policy->fs_policy)
		cc_worker_policy->fs_policy(pol);
	/* Scratch when the host asked for one (cc_options.scratch_bytes, or
	 * max_file_size for compatibility: the supervisor sends the size);
	 * RLIMIT_FSIZE caps each file, the tmpfs size caps them together. */
	if (lim->scratch_bytes > 0) {
		pol->scratch = "/tmp";
		pol->scratch_bytes = lim->scratch_bytes;
		pol->session_scratch = confining_template;
	}
}

/* The engine's seccomp rules, plus file work (CC_SC_FILES) when the
 * session has scratch or a grant: JavaScript's fs module needs it then
 * and never otherwise (Python's file rules carry its own bit). */
bool cc_confine_has_files(void)
{
	return cc_worker_limits.scratch_bytes > 0 || cc_worker_n_grants > 0;
}

unsigned cc_confine_seccomp_engine(void)
{
	return cc_worker_policy->seccomp_engine | (cc_confine_has_files() ? CC_SC_FILES : 0);
}

/* Steps 3 and 4. Returns 1 when namespaces applied, 0 when not, -1. */
static int namespaces_and_privileges(cc_sandbox_mode mode, struct cc_fs_policy *pol,
				     unsigned extra_procs, unsigned extra_sigs,
				     struct cc_confine_report *rep, cc_error *err)
{
	int in_ns = 1;
	/* the engine's threads (main included) and what the caller adds; the
	 * monitor is outside the namespace */
	rlim_t nproc = (rlim_t)cc_worker_policy->max_threads + extra_procs;
	if (cc_ns_enter(pol, nproc, err) < 0) {
		if (err->kind != CC_ERR_SANDBOX_UNAVAILABLE)
			return -1;
		if (missing(mode, rep, CC_LAYER_NAMESPACES, err) < 0)
			return -1;
		in_ns = 0;
		pol->scratch = NULL; /* no private tmpfs to give */
		if (cc_worker_n_grants)
			return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
				       "file grants need the mount namespace, which this host "
				       "does not give; remove the mounts");
		pol->cache = NULL;
	} else {
		append(rep->applied, sizeof(rep->applied), CC_LAYER_NAMESPACES);
		rep->namespaces = true;
		cc_worker_isolated = true;
	}
	/* Queued signals and POSIX timers (each preallocates one) count
	 * against the user that created the namespace as well, across the
	 * host: without a cap of its own, one guest could use up that quota
	 * for every other worker. Set after the clone, so the namespace's
	 * recorded maximum stays the host's. */
	struct rlimit sigq = { CC_MAX_SIGPENDING + extra_sigs, CC_MAX_SIGPENDING + extra_sigs };
	if (setrlimit(RLIMIT_SIGPENDING, &sigq) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "setrlimit(SIGPENDING): %s", strerror(errno));
	if (drop_privileges(in_ns, err) < 0)
		return -1;
	append(rep->applied, sizeof(rep->applied), CC_LAYER_CAPABILITIES);
	append(rep->applied, sizeof(rep->applied), CC_LAYER_NO_NEW_PRIVS);
	return in_ns;
}

/* The exec self-probe for a worker without a monitor, whose kill-list
 * kills outright: a child installs the same filter f (or none, when
 * seccomp is missing) and tries; the worker survives to report. Returns 1
 * when exec got through. */
static int exec_probe_in_child(const struct cc_bpf *f)
{
	pid_t c = fork();
	if (c == 0) {
		cc_error e = { 0 };
		if (f && cc_seccomp_install(f, false, &e) < 0)
			_exit(CC_WORKER_EXIT_PROBE_BLOCKED);
		cc_probe_exec(cc_worker_ppid);
		_exit(CC_WORKER_EXIT_PROBE_BLOCKED);
	}
	int st = 0;
	if (c < 0 || waitpid(c, &st, 0) < 0)
		return 0; /* no process to try with: nor has the guest */
	return WIFEXITED(st) && WEXITSTATUS(st) == CC_PROBE_EXEC_EXIT;
}

/* Step 6. With a monitor: the notify filter first, its listener handed
 * to the monitor, then the main filter (seccomp.c explains the pair).
 * Without: the main filter alone, killing outright, after the exec probe
 * (*exec_breach) tried it in a child. The monitor is always told, listener
 * or not, so it stops waiting. Returns 0, or -1 with err
 * (sandbox_unavailable when the kernel has no seccomp filters). */
static int install_seccomp(bool monitor, int *allowed, int *exec_breach, cc_error *err)
{
	struct cc_bpf main_f = { 0 }, notify_f = { 0 };
	int r = cc_seccomp_available(err);
	if (r == 0 && monitor) {
		r = cc_seccomp_compile(CC_SC_NOTIFY_ONLY, EPERM, CC_KILL_BY_MONITOR, &notify_f,
				       err);
		int listener = r < 0 ? -1 : cc_seccomp_install(&notify_f, true, err);
		cc_bpf_free(&notify_f);
		if (listener < 0) {
			cc_monitor_give_listener(-1, err);
			return -1;
		}
		r = cc_monitor_give_listener(listener, err);
		close(listener);
	} else if (monitor && cc_monitor_give_listener(-1, err) < 0) {
		return -1;
	}
	if (r < 0) {
		if (!monitor)
			*exec_breach = exec_probe_in_child(NULL);
		return -1;
	}
	if (cc_seccomp_compile(cc_confine_seccomp_engine(), EPERM,
			       monitor ? CC_KILL_BY_MONITOR : CC_KILL_PROCESS, &main_f, err) < 0)
		return -1;
	if (!monitor)
		*exec_breach = exec_probe_in_child(&main_f);
	r = cc_seccomp_install(&main_f, false, err);
	*allowed = main_f.allowed;
	cc_bpf_free(&main_f);
	return r;
}

/* Steps 2 to 5. extra_procs: processes beyond the engine's threads the
 * caller will start inside the namespace (the sweep's children, a fork
 * server's sessions); extra_sigs: pending signals and POSIX timers
 * beyond CC_MAX_SIGPENDING (a fork server's sessions' stop timers). */
static int confine_until_seccomp(cc_sandbox_mode mode, const struct cc_init_limits *lim,
				 unsigned extra_procs, unsigned extra_sigs,
				 struct cc_confine_report *rep, cc_error *err)
{
	memset(rep, 0, sizeof(*rep));
	append(rep->applied, sizeof(rep->applied), CC_LAYER_HYGIENE);

	/* Step 2: kernel-enforced resource limits. */
	if (cc_rlimits(lim, err) < 0)
		return -1;
	append(rep->applied, sizeof(rep->applied), CC_LAYER_RLIMITS);
	if (mode == CC_SANDBOX_OFF) {
		cc_grants_close(); /* mode off binds nothing: tests only */
		for (int l = CC_LAYER_NAMESPACES; l < CC_LAYER_COUNT; l++)
			append(rep->missing, sizeof(rep->missing), (enum cc_layer)l);
		return 0;
	}

	/* Step 3: namespaces and a minimal read-only root; step 4:
	 * capabilities dropped, no_new_privs. */
	struct cc_fs_policy pol;
	engine_policy(lim, &pol);
	if (namespaces_and_privileges(mode, &pol, extra_procs, extra_sigs, rep, err) < 0)
		return -1;

	/* Step 5: Landlock, in case the mount namespace leaks a path. A
	 * template whose sessions get scratch takes no domain of its own: one
	 * that handles file rights forbids every mount (each session mounts
	 * its own tmpfs), and any layer at all, even one handling network
	 * rights only, would deny its sessions REFER (renames between
	 * directories: EXDEV). Each session builds the whole domain itself,
	 * a spawned worker's, before any guest code (cc_confine_session). The
	 * template runs no guest code; its namespaces and its seccomp filter
	 * bound it (SECURITY.md). */
	template_pol = pol;
	int lr = pol.session_scratch ? cc_landlock_defer(&rep->landlock_abi, err)
				     : cc_landlock_apply(&pol, &rep->landlock_abi, err);
	if (lr < 0) {
		if (err->kind != CC_ERR_SANDBOX_UNAVAILABLE ||
		    missing(mode, rep, CC_LAYER_LANDLOCK, err) < 0)
			return -1;
	} else {
		append(rep->applied, sizeof(rep->applied), CC_LAYER_LANDLOCK);
	}
	/* The grants' host descriptors are bound and ruled: a guest holding
	 * one could openat() past the mount namespace. (Such a template keeps
	 * them for its sessions' rules; each session closes them.) */
	if (!pol.session_scratch)
		cc_grants_close();
	return 0;
}

int cc_confine(cc_sandbox_mode mode, const struct cc_init_limits *lim,
	       struct cc_confine_report *rep, cc_error *err)
{
	if (confine_until_seccomp(mode, lim, 0, 0, rep, err) < 0)
		return -1;
	if (mode == CC_SANDBOX_OFF)
		return 0;
	/* Guest code starts in its scratch, so relative paths (open("out.csv",
	 * "w"), fs.writeFileSync("out.csv")) land where it may write. */
	if (lim->scratch_bytes > 0 && rep->namespaces && chdir("/tmp") < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "entering the scratch /tmp: %s",
			       strerror(errno));

	/* Step 6: seccomp last, so the steps above may use what it forbids. */
	bool monitor = cc_monitor_present();
	int allowed = 0, exec_breach = 0;
	int r = install_seccomp(monitor, &allowed, &exec_breach, err);
	if (r < 0) {
		if (err->kind != CC_ERR_SANDBOX_UNAVAILABLE ||
		    missing(mode, rep, CC_LAYER_SECCOMP, err) < 0)
			return -1;
	} else {
		rep->seccomp_allowed = allowed;
		append(rep->applied, sizeof(rep->applied), CC_LAYER_SECCOMP);
	}

	/* Step 7: try to get out. Any success refuses the start, in auto
	 * mode too: what applied must at least stop these. */
	char breached[160];
	if (cc_probes_run(cc_worker_ppid, rep->namespaces, monitor, breached, sizeof(breached)) > 0)
		return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
			       "self-probes got through the sandbox (%s) with layers %s; "
			       "refusing to start",
			       breached, rep->applied);
	append(rep->applied, sizeof(rep->applied), CC_LAYER_SELF_PROBES);
	/* From here a kill-list call kills (the probes' calls were refused). */
	if (monitor && cc_monitor_arm(err) < 0)
		return -1;
	return 0;
}

/* ---- the fork server (src/worker/forkserver.c) ---- */

int cc_confine_template(cc_sandbox_mode mode, const struct cc_init_limits *lim,
			struct cc_confine_report *rep, struct cc_bpf *session_f, cc_error *err)
{
	memset(session_f, 0, sizeof(*session_f));
	/* RLIMIT_NPROC and RLIMIT_SIGPENDING count per user in the user
	 * namespace, and every session has the same uid: room for each
	 * session (the probe session too) and its stop timer, plus one shared
	 * allowance of threads for engines that have them. SECURITY.md says
	 * what sharing it means. */
	/* Two beyond the sessions: the probe session, and a session that has
	 * ended and is not reaped yet. */
	unsigned n = cc_worker_max_sessions + 2;
	unsigned extra = n + (cc_worker_policy->max_threads > 1 ? CC_FORK_SHARED_THREADS : 0);
	/* It holds a pidfd and a status pipe per live session, beyond what a
	 * session may open, and a request's two descriptors while it forks. */
	struct cc_init_limits tl = *lim;
	tl.max_open_files += 2 * cc_worker_max_sessions + 16;
	confining_template = true;
	int cr = confine_until_seccomp(mode, &tl, extra, n + CC_FORK_SHARED_THREADS, rep, err);
	confining_template = false;
	if (cr < 0)
		return -1;
	if (lim->scratch_bytes > 0 && !rep->namespaces && mode != CC_SANDBOX_OFF)
		return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
			       "forked sessions' scratch needs namespaces, which this host does "
			       "not give; set scratch to 0 or spawn the sessions");
	if (mode == CC_SANDBOX_OFF)
		return 0;
	/* No listener for the monitor: each session's own filter kills a
	 * kill-list call outright (SECCOMP_RET_KILL_PROCESS outranks every
	 * other action), so there is nothing for the monitor to decide. It
	 * is told, armed (a no-op) and let go. */
	if (cc_monitor_present() &&
	    (cc_monitor_give_listener(-1, err) < 0 || cc_monitor_arm(err) < 0))
		return -1;
	/* Both filters are compiled here, once: forking a session then only
	 * installs one. The template's is the engine's list plus the calls
	 * forking needs (CC_SC_FORK); a session stacks the engine's own. */
	struct cc_bpf tmpl = { 0 };
	unsigned engine = cc_confine_seccomp_engine();
	/* The sessions' scope-only Landlock ruleset needs a rule (REFER; see
	 * landlock.c), which the template's filter cannot add later. If it
	 * cannot be made, each session makes one without (stricter: no
	 * renames between directories) or fails as it did before. */
	if (rep->landlock_abi > 0 && !template_pol.session_scratch &&
	    cc_landlock_session_prepare(err) < 0)
		cc_error_clear(err);
	int r = cc_seccomp_available(err);
	if (r == 0)
		r = cc_seccomp_compile(engine, EPERM, CC_KILL_PROCESS, session_f, err);
	if (r == 0)
		r = cc_seccomp_compile(engine | CC_SC_FORK |
					       (cc_ns_procfd >= 0 ? CC_SC_FORK_SCRATCH : 0),
				       EPERM, CC_KILL_PROCESS, &tmpl, err);
	if (r == 0)
		r = cc_seccomp_install(&tmpl, false, err);
	cc_bpf_free(&tmpl);
	if (r < 0) {
		cc_bpf_free(session_f);
		if (err->kind != CC_ERR_SANDBOX_UNAVAILABLE ||
		    missing(mode, rep, CC_LAYER_SECCOMP, err) < 0)
			return -1;
	} else {
		rep->seccomp_allowed = session_f->allowed;
		append(rep->applied, sizeof(rep->applied), CC_LAYER_SECCOMP);
	}
	return 0;
}

/* A session's own user and pid namespaces, nested in the template's.
 * User: the kernel counts RLIMIT_NPROC and RLIMIT_SIGPENDING per user
 * *per namespace* and checks every level, so with limits of its own set
 * later a session gets a spawned worker's allowance of threads and queued
 * signals, and the template's totals still bound all sessions together.
 * Pid: the session is pid 1 of a namespace of its own, which sees no
 * sibling, no template, no earlier session (no pid to ask
 * sched_getaffinity, a CPU clock or kill about). What the new user
 * namespace grants (every capability, over nothing it owns) is dropped at
 * once (session_enter). Without scratch no id map is written: the session
 * is the overflow id inside. */

/* Write one line into the new session's own /proc/self/<name> through the
 * template's procfs handle. */
static int write_self(const char *name, const char *text)
{
	char path[64];
	snprintf(path, sizeof(path), "self/%s", name);
	int fd = openat(cc_ns_procfd, path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, text, strlen(text));
	int e = errno;
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -(n < 0 ? e : EIO);
}

/* The session's scratch: in its new user namespace (which owns its new
 * mount namespace) the new session maps its own ids (uid and gid 1000 of
 * the template's namespace, as itself: the one mapping an unprivileged
 * process may write, after denying setgroups), so the tmpfs can hold
 * files (an unmapped owner gets EOVERFLOW), then mounts a tmpfs of its own
 * on /tmp, covering the template's empty read-only one. */
static int session_scratch(void)
{
	char line[64];
	snprintf(line, sizeof(line), "%d %d 1", CC_NS_ID, CC_NS_ID);
	/* A process that is not dumpable has /proc/self files owned by the
	 * host's root: dumpable only while the maps are written, before any
	 * guest code runs, and never again. */
	if (prctl(PR_SET_DUMPABLE, 1) < 0)
		return -errno;
	int r = write_self("setgroups", "deny");
	if (!r)
		r = write_self("uid_map", line);
	if (!r)
		r = write_self("gid_map", line);
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		_exit(CC_WORKER_EXIT_FAILED); /* never run a dumpable session */
	if (r)
		return r;
	char opts[96];
	snprintf(opts, sizeof(opts), "mode=1777,size=%llu,nr_inodes=%u",
		 (unsigned long long)cc_worker_limits.scratch_bytes, CC_SCRATCH_INODES);
	if (mount("scratch", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0)
		return -errno;
	return 0;
}

/* In the new session, first (cc_session_fork's child): its scratch, the
 * template's procfs handle closed, and every capability its new user
 * namespace gave dropped and checked gone. Returns 0 or -errno; the
 * session reports a failure as its start's error (cc_confine_session). */
static int session_enter(void)
{
	bool scratch = cc_ns_procfd >= 0;
	int r = scratch ? session_scratch() : 0;
	if (scratch)
		close(cc_ns_procfd); /* never in a session's hands */
	cc_ns_procfd = -1;
	if (r)
		return r;
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d) < 0 || syscall(SYS_capget, &h, d) < 0 || d[0].effective ||
	    d[0].permitted || d[0].inheritable || d[1].effective || d[1].permitted ||
	    d[1].inheritable)
		return -EPERM;
	return 0;
}

/* What session_enter gave in this session (0: nothing failed). */
static int session_enter_errno;

/* With namespaces, a session is one clone from the template with
 * CLONE_NEWUSER | CLONE_NEWPID (| CLONE_NEWNS with scratch): the child is
 * pid 1 of a pid namespace of its own, in a user namespace of its own
 * (which owns the new mount namespace), and the template's child, which
 * reaps it; it cannot be reaped by anyone else meanwhile, so the pid stays
 * its own for pidfd_open. (It was two forks, through an intermediate that
 * unshared the namespaces and forked the session: each copied the
 * template's page tables, the intermediate's exit tore them down again,
 * and the template waited for both; issue 23.)
 *
 * A raw clone, not glibc's fork(): fork() cannot make namespaces. What
 * glibc's fork does besides the system call is not needed here: the
 * template is single-threaded, so no lock of malloc's, stdio's or the
 * dynamic linker's is held by another thread at the clone; the engine's
 * own fork hooks run around it (before_fork, after_fork_*); and the
 * thread id glibc keeps in the thread's descriptor is right in the child
 * without CLONE_CHILD_SETTID, because the template is pid 1 of its pid
 * namespace (cc_confine) and the child pid 1 of its own (checked in
 * cc_confine_session). The seccomp filter lets the template clone with
 * exactly these flags (seccomp_policy.c) and no longer unshare. */
pid_t cc_session_fork(const struct cc_confine_report *rep)
{
	if (!rep->namespaces) {
		pid_t pid = fork();
		return pid < 0 ? -errno : pid;
	}
	unsigned long flags =
		SIGCHLD | CLONE_NEWUSER | CLONE_NEWPID | (cc_ns_procfd >= 0 ? CLONE_NEWNS : 0);
	long pid = syscall(SYS_clone, flags, NULL, NULL, NULL, 0L);
	if (pid < 0)
		return -errno;
	if (pid == 0)
		session_enter_errno = session_enter();
	return (pid_t)pid;
}

/* A session's own limits, lowered from the template's (SYS_setrlimit: the
 * template's filter has no prlimit64 writes). */
static int session_limits(const struct cc_init_limits *lim, bool own_userns, cc_error *err)
{
	struct {
		int res;
		rlim_t v;
	} l[] = {
		{ RLIMIT_NOFILE, lim->max_open_files },
		{ RLIMIT_NPROC, cc_worker_policy->max_threads },
		{ RLIMIT_SIGPENDING, CC_MAX_SIGPENDING },
	};
	for (size_t i = 0; i < (own_userns ? 3 : 1); i++) {
		struct rlimit r = { l[i].v, l[i].v };
		if (syscall(SYS_setrlimit, l[i].res, &r) < 0)
			return cc_fail(err, CC_ERR_INTERNAL, "the session's limits: %s",
				       strerror(errno));
	}
	return 0;
}

int cc_confine_session(const struct cc_confine_report *rep, const struct cc_bpf *session_f,
		       cc_error *err)
{
	int abi = 0;
	if (session_enter_errno)
		return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
			       "a forked session could not enter its own namespaces (scratch, "
			       "capabilities): %s",
			       strerror(-session_enter_errno));
	if (rep->namespaces && (getpid() != 1 || syscall(SYS_gettid) != 1))
		return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
			       "a forked session is not pid 1 of its own pid namespace");
	if (session_limits(&cc_worker_limits, rep->namespaces, err) < 0)
		return -1;
	if (rep->landlock_abi > 0 && template_pol.session_scratch) {
		/* Its own tmpfs is mounted (cc_session_fork): now the whole
		 * domain, a spawned worker's (files, TCP, scopes; its template
		 * has none, cc_landlock_defer), grants by the template's
		 * descriptors, which go. */
		template_pol.in_session = true;
		int r = cc_landlock_apply(&template_pol, &abi, err);
		cc_grants_close();
		if (r < 0)
			return -1;
	} else if (rep->landlock_abi > 0 && cc_landlock_session(&abi, err) < 0) {
		return -1;
	}
	cc_grants_close();
	/* Its own scratch is mounted over the template's /tmp: enter that one
	 * (the template's working directory is the root). */
	if (template_pol.session_scratch && chdir("/tmp") < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "entering the scratch /tmp: %s",
			       strerror(errno));
	if (session_f->prog.filter && cc_seccomp_install(session_f, false, err) < 0)
		return -1;
	return 0;
}

int cc_confine_probe_session(struct cc_confine_report *rep, const struct cc_bpf *session_f,
			     cc_error *err)
{
	pid_t c = cc_session_fork(rep);
	if (c < 0)
		return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
			       "forking the probe session (its own user and pid namespaces): %s; "
			       "refusing to start the fork server",
			       strerror((int)-c));
	if (c == 0) {
		/* Exactly what a session does, then the probes; exec in a
		 * child of its own (the filter kills the caller). */
		cc_error e = { 0 };
		int exec_breach = session_f->prog.filter ? exec_probe_in_child(session_f) : 0;
		char breached[160];
		if (cc_confine_session(rep, session_f, &e) < 0)
			_exit(CC_WORKER_EXIT_SESSION_UNCONFINED);
		int n = cc_probes_run(cc_worker_ppid, rep->namespaces, false, breached,
				      sizeof(breached));
		/* Nothing else may be reachable: not the template, not a
		 * sibling (its own pid namespace holds only itself). */
		if (syscall(SYS_kill, -1, 0) == 0) {
			size_t len = strlen(breached);
			snprintf(breached + len, sizeof(breached) - len, "%ssignal_others",
				 n ? "," : "");
			n++;
		}
		if (exec_breach)
			n++;
		_exit(n ? CC_WORKER_EXIT_SESSION_BREACHED : CC_WORKER_EXIT_PROBES_HELD);
	}
	int st = 0;
	while (waitpid(c, &st, 0) < 0)
		if (errno != EINTR)
			return cc_fail(err, CC_ERR_INTERNAL, "waiting for the probe session: %s",
				       strerror(errno));
	if (WIFEXITED(st) && WEXITSTATUS(st) == CC_WORKER_EXIT_PROBES_HELD) {
		append(rep->applied, sizeof(rep->applied), CC_LAYER_SELF_PROBES);
		return 0;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == CC_WORKER_EXIT_SESSION_UNCONFINED)
		return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
			       "a forked session could not add its own layers (Landlock domain, "
			       "seccomp filter); refusing to start the fork server");
	return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
		       "self-probes got through a forked session's sandbox with layers %s "
		       "(status %d); refusing to start the fork server",
		       rep->applied, st);
}

/* ---- the assume-breach sweep (test-only; worker flag --sweep) ---- */

/* An errno no system call returns (the kernel caps errno at 4095): the
 * sweep's filter answers it where production answers EPERM, so a denied
 * call cannot be mistaken for one that ran and failed with EPERM. */
#define CC_SWEEP_ERRNO 4000
#define CC_SWEEP_MAX_NR 512

/* The sweep's stand-in for the monitor: take a notification from the
 * child's listener and kill the child, as the monitor would. Returns 1 if
 * one came within timeout_ms. */
static int sweep_notified(int listener, pid_t child, int timeout_ms)
{
	struct pollfd pf = { .fd = listener, .events = POLLIN };
	if (listener < 0 || poll(&pf, 1, timeout_ms) != 1 || !(pf.revents & POLLIN))
		return 0;
	struct seccomp_notif nt;
	memset(&nt, 0, sizeof(nt));
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &nt) < 0)
		return 0;
	kill(child, SIGKILL);
	return 1;
}

/* One child: install the production pair of filters (the notify filter's
 * listener goes to us, standing in for the monitor), fire nr with zero
 * arguments, report. */
static const char *sweep_one(const struct cc_bpf *notify_f, const struct cc_bpf *main_f, int nr,
			     char *detail, size_t n)
{
	int p[2], sv[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return "error";
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		close(p[0]);
		close(p[1]);
		return "error";
	}
	pid_t c = fork();
	if (c == 0) {
		close(p[0]);
		close(sv[0]);
		cc_error e = { 0 };
		int l = cc_seccomp_install(notify_f, true, &e);
		if (l < 0 || cc_send_fd(sv[1], l) < 0 || cc_seccomp_install(main_f, false, &e) < 0)
			_exit(CC_WORKER_EXIT_SWEEP_SETUP);
		long r = syscall(nr, 0L, 0L, 0L, 0L, 0L, 0L);
		long out[2] = { r, r < 0 ? errno : 0 };
		if (write(p[1], out, sizeof(out)) != sizeof(out))
			_exit(CC_WORKER_EXIT_SWEEP_REPORT);
		_exit(0);
	}
	close(p[1]);
	close(sv[1]);
	if (c < 0) {
		close(p[0]);
		close(sv[0]);
		return "error";
	}
	int listener = cc_recv_fd(sv[0]);
	close(sv[0]);
	struct pollfd pf[2] = { { p[0], POLLIN, 0 }, { listener, POLLIN, 0 } };
	long out[2];
	ssize_t got = -1;
	bool notified = false;
	if (poll(pf, 2, 2000) > 0) {
		if (pf[1].revents & POLLIN)
			notified = sweep_notified(listener, c, 0);
		else
			got = read(p[0], out, sizeof(out));
	}
	close(p[0]);
	if (listener >= 0)
		close(listener);
	if (got < 0 && !notified)
		kill(c, SIGKILL); /* hung: the call ran and blocked */
	int st = 0;
	waitpid(c, &st, 0);
	snprintf(detail, n, "-");
	if (notified)
		return "killed";
	if (got == (ssize_t)sizeof(out)) {
		snprintf(detail, n, "ret=%ld,errno=%ld", out[0], out[1]);
		if (out[0] == -1 && out[1] == CC_SWEEP_ERRNO)
			return "denied";
		if (out[0] == -1 && out[1] == ENOSYS && nr == SYS_clone3)
			return "enosys";
		return "allowed";
	}
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
		return "killed";
	if (WIFEXITED(st) && WEXITSTATUS(st) == 90)
		return "error";
	snprintf(detail, n, "%s%d", WIFSIGNALED(st) ? "signal=" : "exit=",
		 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	return "allowed"; /* it ran: exited, crashed or blocked */
}

int cc_confine_sweep(const struct cc_init_limits *lim, cc_error *err)
{
	struct cc_confine_report rep;
	if (confine_until_seccomp(CC_SANDBOX_REQUIRE, lim, 1, 0, &rep, err) < 0)
		return -1;
	if (cc_monitor_present() && cc_monitor_give_listener(-1, err) < 0)
		return -1;
	struct cc_bpf notify_f, main_f;
	if (cc_seccomp_compile(CC_SC_NOTIFY_ONLY, EPERM, CC_KILL_BY_MONITOR, &notify_f, err) < 0)
		return -1;
	if (cc_seccomp_compile(cc_confine_seccomp_engine(), CC_SWEEP_ERRNO, CC_KILL_BY_MONITOR,
			       &main_f, err) < 0)
		return -1;
	printf("layers %s\n", rep.applied);
	for (int nr = 0; nr < CC_SWEEP_MAX_NR; nr++) {
		char detail[64];
		const char *v = sweep_one(&notify_f, &main_f, nr, detail, sizeof(detail));
		printf("%d %s %s\n", nr, v, detail);
		fflush(stdout);
	}
	cc_bpf_free(&notify_f);
	cc_bpf_free(&main_f);
	return 0;
}

/* ---- a scratch template's sessions' Landlock domain, alone (test-only;
 * worker flags --scope-report and --scope-report-off) ---- */

/* Session b's side: its layers as any session adds them (no seccomp
 * filter: this is about what Landlock alone stops), then the attempts. */
static void scope_session(const struct cc_confine_report *rep)
{
	struct cc_bpf none = { 0 };
	cc_error e = { 0 };
	if (cc_confine_session(rep, &none, &e) < 0)
		_exit(2);
	cc_probes_scope_report("codecage-scope-sibling", "codecage-scope-template", stdout);
	_exit(0);
}

int cc_confine_scope_report(const struct cc_init_limits *lim, bool landlock, cc_error *err)
{
	struct cc_confine_report rep;
	confining_template = true;
	int r = confine_until_seccomp(CC_SANDBOX_REQUIRE, lim, 4, 4, &rep, err);
	confining_template = false;
	if (r < 0)
		return -1;
	if (!template_pol.session_scratch)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "--scope-report needs --with-files");
	if (cc_monitor_present() &&
	    (cc_monitor_give_listener(-1, err) < 0 || cc_monitor_arm(err) < 0))
		return -1;
	if (!landlock)
		rep.landlock_abi = 0; /* the reverse: sessions skip their domain */
	printf("layers %s landlock %d\n", rep.applied, rep.landlock_abi);
	fflush(stdout);
	int tmpl = cc_probe_abstract_listen("codecage-scope-template");
	int ready[2], done[2];
	if (tmpl < 0 || pipe(ready) < 0 || pipe(done) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "scope report: %s", strerror(errno));
	/* Sibling a listens, in a domain of its own, until b is done. */
	pid_t a = cc_session_fork(&rep);
	if (a == 0) {
		struct cc_bpf none = { 0 };
		cc_error e = { 0 };
		if (cc_confine_session(&rep, &none, &e) < 0)
			_exit(2);
		char c = cc_probe_abstract_listen("codecage-scope-sibling") < 0 ? 'n' : 'y';
		close(done[1]); /* so that the template's close ends the read */
		if (write(ready[1], &c, 1) != 1 || read(done[0], &c, 1) < 0)
			_exit(3);
		_exit(0);
	}
	char c = 0;
	if (a < 0 || read(ready[0], &c, 1) != 1 || c != 'y')
		return cc_fail(err, CC_ERR_INTERNAL, "scope report: the sibling did not listen");
	pid_t b = cc_session_fork(&rep);
	if (b == 0) {
		close(done[1]);
		scope_session(&rep);
	}
	int st_b = -1, st_a = -1;
	if (b > 0)
		waitpid(b, &st_b, 0);
	close(done[1]); /* a's read ends */
	waitpid(a, &st_a, 0);
	close(tmpl);
	if (st_a != 0 || st_b != 0)
		return cc_fail(err, CC_ERR_INTERNAL, "scope report: sessions ended %d and %d", st_a,
			       st_b);
	return 0;
}
