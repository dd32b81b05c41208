/* src/confine/: everything that confines a worker, usable by every worker:
 * process hygiene and resource limits (hygiene.c), namespaces and the
 * minimal root (namespaces.c), the worker's side of file grants
 * (grants.c), Landlock (landlock.c), seccomp (seccomp.c,
 * seccomp_filter.h), the monitor that holds the kill-list listener
 * (monitor.c), the self-probes (probes.c) and cc_confine, which applies
 * them in order (confine.c). It may include src/common/ and the public
 * headers only: what it needs of the worker that links it is declared
 * below and defined in src/worker/ and the engines. The worker core and
 * the engines include it.
 *
 * Steps 2..7 of DESIGN.md section 3, in order: resource limits,
 * namespaces and a minimal root, capabilities and no_new_privs, Landlock,
 * seccomp, self-probes (confine.c drives them). Step 1 is
 * hygiene.h. Worker side only; every function here runs before the engine
 * exists, single-threaded. */
#ifndef CC_WORKER_CONFINE_H
#define CC_WORKER_CONFINE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "codecage.h"
#include "init_frame.h"

/* What an engine may see of the filesystem. Paths are absolute host paths;
 * inside the mount namespace they appear at the same place, read-only. */
#define CC_FS_MAX_READ_ONLY 48

struct cc_fs_policy {
	const char *read_only[CC_FS_MAX_READ_ONLY];
	size_t n_read_only;
	const char *devices[4]; /* character devices bound into /dev, read-only */
	size_t n_devices;
	const char *scratch;	/* read-write tmpfs (e.g. "/tmp") or NULL */
	uint64_t scratch_bytes; /* its size cap */
	/* A fork server's template with scratch: its own /tmp is an empty,
	 * read-only tmpfs that each session covers with a private one of
	 * scratch_bytes (cc_session_fork), and the template keeps a procfs
	 * handle (cc_ns_procfd) to write each session's id maps. */
	bool session_scratch;
	bool in_session; /* set in such a session, for cc_landlock_apply */
	/* An empty folder for the engine's libraries (matplotlib's config and
	 * cache folder), or NULL: a tmpfs with no free inode and no Landlock
	 * write rule, so nobody (spawned worker, template or session) can put
	 * anything there, and a folder of a template's mounts shared by its
	 * sessions carries nothing from one to another. matplotlib only needs
	 * a folder that says it is writable (access W_OK); it keeps its font
	 * list in memory (py_helper.c). Needs the mount namespace. */
	const char *cache;
};

/* An engine's confinement policy: the seccomp allow-list (CC_SC_JS or
 * CC_SC_PY from seccomp_policy.h), the threads the engine may run
 * (RLIMIT_NPROC in the user namespace), and the files it may read (NULL:
 * none at all). fs_policy runs before init. */
struct cc_engine_policy {
	unsigned seccomp_engine;
	unsigned max_threads;
	void (*fs_policy)(struct cc_fs_policy *pol);
};

/* ---- what the worker that links the confinement defines ----
 * The confinement reads the worker's state through these (and sets
 * cc_worker_isolated), so it includes nothing of src/worker/. */

/* The policy of the engine this worker runs: its struct cc_engine's
 * policy (src/worker/worker.h), defined beside cc_worker_engine. */
extern const struct cc_engine_policy *const cc_worker_policy;

/* Limits the supervisor sent in the init frame (struct cc_init_limits:
 * the fields of CC_INIT_LIMITS, init_frame.h). */
extern struct cc_init_limits cc_worker_limits;

/* The worker is in its own namespaces: no network interface, the minimal
 * read-only root (confine.c sets it). An engine's error messages may then
 * say "the network is off", "scratch is off"; messages only. */
extern bool cc_worker_isolated;

/* The supervisor's pid as the host sees it (from argv), for the
 * self-probes that try to reach it. */
extern pid_t cc_worker_ppid;

/* The confinement layers, in the order cc_confine applies them (DESIGN.md
 * section 3); cc_layer_name gives the name the report uses. */
enum cc_layer {
	CC_LAYER_HYGIENE,
	CC_LAYER_RLIMITS,
	CC_LAYER_NAMESPACES,
	CC_LAYER_CAPABILITIES,
	CC_LAYER_NO_NEW_PRIVS,
	CC_LAYER_LANDLOCK,
	CC_LAYER_SECCOMP,
	CC_LAYER_SELF_PROBES,
	CC_LAYER_COUNT
};

/* "hygiene", "rlimits", ... "self-probes" (the names of the ready frame's
 * applied and missing lists); static; "unknown" out of range. */
const char *cc_layer_name(enum cc_layer layer);

/* Layers as reported to the supervisor (comma-separated cc_layer_name
 * names, written only by cc_layer_add). */
struct cc_confine_report {
	char applied[256];
	char missing[256];
	int landlock_abi;
	int seccomp_allowed;
	bool namespaces; /* the worker is in its own namespaces (net included) */
};

/* Steps 2..7 for the given mode and the engine's cc_worker_policy. Fills
 * *rep. In mode require, fails with sandbox_unavailable naming the first
 * missing layer; in auto, applies what the kernel offers and lists the
 * rest in rep->missing; in off, applies resource limits only. Any
 * self-probe that gets through refuses the start in require and auto.
 * With namespaces the calling process becomes a monitor and this returns
 * in its child, pid 1 of the new pid namespace. */
int cc_confine(cc_sandbox_mode mode, const struct cc_init_limits *lim,
	       struct cc_confine_report *rep, cc_error *err);

/* ---- the fork server: a template confines once, sessions fork from it ---- */

struct cc_bpf;

/* Sessions one template may hold at once (the init frame's max_sessions,
 * cc_options.max_sessions: 1..CC_FORK_MAX_SESSIONS_LIMIT); a fork beyond
 * is refused with ENOSPC. The template's RLIMIT_NPROC, RLIMIT_SIGPENDING
 * and RLIMIT_NOFILE are sized from it (cc_confine_template), with
 * CC_FORK_SHARED_THREADS (codecage.h) threads and queued signals beyond
 * one per session that all sessions hold together; each session also has
 * a spawned worker's own allowance, in its own user namespace. */
extern unsigned cc_worker_max_sessions;

/* Steps 2..6 for a template: as cc_confine, but the seccomp filter
 * installed is the engine's list plus CC_SC_FORK (fork, hand out pidfds,
 * add a Landlock domain and a filter), kill-list calls kill outright (no
 * listener for the monitor), and *session_f receives the engine's own
 * filter, compiled, for each session to install (owned by the caller;
 * empty when seccomp did not apply). Self-probes are not run here: see
 * cc_confine_probe_session. Errors as cc_confine. */
int cc_confine_template(cc_sandbox_mode mode, const struct cc_init_limits *lim,
			struct cc_confine_report *rep, struct cc_bpf *session_f, cc_error *err);

/* Fork a session from the template (the probe session too). With
 * namespaces it is one clone into the session's own user and pid
 * namespaces (and mount namespace, with scratch; confine.c says why), so
 * the session is pid 1 of a pid namespace of its own and the template's
 * child; in the child the scratch is mounted and every capability the new
 * user namespace gave dropped before this returns (a failure there is
 * reported by cc_confine_session). Returns 0 in the session, its pid in
 * the template's namespace (> 0) in the template, or -errno (no session:
 * EAGAIN for RLIMIT_NPROC, ENOSPC for the kernel's namespace counts). */
pid_t cc_session_fork(const struct cc_confine_report *rep);

/* In a freshly forked session (cc_session_fork): its own RLIMIT_NOFILE,
 * and with namespaces its own RLIMIT_NPROC and RLIMIT_SIGPENDING (checked
 * to be pid 1 of its own pid namespace first), its own Landlock domain
 * (scoped signals and abstract sockets, no TCP; when the template had
 * Landlock), then the engine's seccomp filter stacked on the template's
 * (no fork, nothing of CC_SC_FORK). Returns 0, or -1 with err
 * (sandbox_unavailable, internal). */
int cc_confine_session(const struct cc_confine_report *rep, const struct cc_bpf *session_f,
		       cc_error *err);

/* Step 7 for a template: fork one session that adds its layers as every
 * session will and runs the self-probes (and signals the template); any
 * breach refuses the start. Adds "self-probes" to rep->applied. Errors:
 * sandbox_unavailable, internal. */
int cc_confine_probe_session(struct cc_confine_report *rep, const struct cc_bpf *session_f,
			     cc_error *err);

/* The seccomp rule set this worker compiles: its engine's, plus
 * CC_SC_FILES when it has scratch or a grant (JavaScript's fs module). */
unsigned cc_confine_seccomp_engine(void);

/* Whether this worker (and every session a template of it forks: scratch
 * and grants are the template's) has scratch or a grant: JavaScript's fs
 * and require exist only then. */
bool cc_confine_has_files(void);

/* Test-only entry points behind worker flags (src/worker/main.c). */
int cc_confine_sweep(const struct cc_init_limits *lim, cc_error *err);
/* Confine as a template whose sessions have scratch (lim->scratch_bytes >
 * 0), without any seccomp filter, then fork two sessions as such a
 * template does: one listens on an abstract unix socket, the other adds
 * its layers (its Landlock domain unless !landlock, the reverse) and
 * prints what TCP and the template's and the sibling's abstract sockets
 * gave it (cc_probes_scope_report), after a "layers ..." line. Returns 0,
 * or -1 with err. */
int cc_confine_scope_report(const struct cc_init_limits *lim, bool landlock, cc_error *err);

#endif
