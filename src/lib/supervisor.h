/* src/lib/: libcodecage's supervisor, in the host process: runtimes,
 * requests, the protocol's checks, tools, fork servers and pools,
 * libraries, grants, files, dependencies. It may include src/net/,
 * src/common/ and the public headers; the broker and
 * src/polyfills/polyfills.c are linked into the same library. The front
 * ends include only the public headers.
 *
 * Supervisor internals (libcodecage, runs inside the host process).
 * Never exit, abort or print; every failure becomes a cc_error. */
#ifndef CC_LIB_SUPERVISOR_H
#define CC_LIB_SUPERVISOR_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "codecage.h"
#include "frame.h"
#include "value.h"

struct cc_net_policy; /* net.h */

/* ---- grants.c: file grants, resolved once ---- */

struct cc_grant {
	char *host;  /* realpath of the host path (owned) */
	char *guest; /* owned */
	char *name;  /* what messages call it: "mount 0 (HOST:GUEST)" (owned) */
	bool writable;
	/* false: fd is an O_PATH|O_CLOEXEC of host, which the worker binds;
	 * true: a detached, idmapped mount of it (idmap.c), which the worker
	 * attaches */
	bool attach;
	int fd; /* owned */
};

struct cc_grants {
	struct cc_grant *g;
	size_t n;
};

/* Check o->mounts (guest paths absolute, canonical, not over what the
 * engine needs nor scratch, no two on one path or nested) and
 * o->python_path (Python only, at most CC_MAX_PYTHON_PATH absolute
 * directories, mounts and folders together at most CC_MAX_MOUNTS) and
 * resolve each host path (realpath, then O_PATH without following a
 * symlink). Fills *gs (free with cc_grants_free): the mounts in order,
 * then one read-only grant per python_path folder at
 * CC_PYTHON_PATH_GUEST/N. Errors: invalid_input naming the mount or the
 * python_path entry. */
int cc_grants_resolve(const cc_options *o, struct cc_grants *gs, cc_error *err);
void cc_grants_free(struct cc_grants *gs);
/* The objects the grants name (device and inode of each descriptor, in
 * order: two words each, 0 0 for one that cannot be looked up) into ids,
 * room for 2 * CC_MAX_MOUNTS words; returns how many words. */
size_t cc_grants_ids(const struct cc_grants *gs, uint64_t *ids);

/* grants_host.c: whether the resolved host path real (and, with fd >= 0,
 * the object fd opened, whose fstat is st) is one never granted: the
 * host's root, /proc, /sys, /dev or what they hold, by the path's text,
 * the root's identity, the filesystem's type and the device the kernel's
 * filesystems under those paths are mounted from. 0, or -1 with
 * invalid_input naming the path and the rule (the caller adds which
 * grant). */
int cc_grant_check_host(const char *real, int fd, const struct stat *st, cc_error *err);
/* The type of the filesystem holding st (as /proc/self/mountinfo names
 * it, "ext4"; "unknown") into buf of cap bytes. */
void cc_fs_type_name(const struct stat *st, char *buf, size_t cap);

/* idmap.c: when the supervisor runs as root, turn each grant's descriptor
 * into a detached mount idmapped so the guest (host nobody) is its owner
 * (attach true). A grant that cannot be idmapped stays a bind if nobody
 * may use it by its mode bits, else the call fails: invalid_input naming
 * the grant, the cause and the fix. Nothing changes for another user. */
int cc_grants_idmap(struct cc_grants *gs, cc_error *err);

/* A NULL-terminated deep copy of n strings (NULL when n is 0 or out of
 * memory, or a string is NULL); free with cc_strv_free. */
char **cc_strv_copy(const char *const *v, size_t n);
void cc_strv_free(char **v);

/* A deep copy of n mounts (NULL when n is 0 or out of memory); free with
 * cc_mounts_free. */
cc_mount *cc_mounts_copy(const cc_mount *m, size_t n);
void cc_mounts_free(cc_mount *m, size_t n);

/* ---- spawn.c: the worker process ---- */

struct cc_child {
	pid_t pid; /* -1 when none */
	int pidfd; /* -1 when none */
	int sock;  /* supervisor end of the channel, nonblocking; -1 when none */
	bool reaped;
	bool forked;	       /* a fork server's session: not our child (no waitid; the
				  exit status comes from its template, status_fd) */
	int status_fd;	       /* forked: read end of the pipe its template writes the
				  session's wait status to once reaped; -1 when none */
	const char *no_status; /* forked, reaped without a status: why (static) */
	int wstatus_code;      /* from waitid: CLD_EXITED/CLD_KILLED/CLD_DUMPED */
	int wstatus;	       /* exit status or signal number */
	/* channel.c's read-ahead: bytes read from sock, not yet taken */
	size_t ra_len, ra_off;
	char ra[4096];
};

/* Start the worker for opts->language: socketpair, posix_spawn with fd 3 =
 * channel, 0-2 = /dev/null, every other fd closed, default signal
 * dispositions, empty environment; then a pidfd. Errors: internal (the
 * message names the worker path and the failing call). */
int cc_spawn_worker(const cc_options *opts, const struct cc_grants *gs, struct cc_child *c,
		    cc_error *err);

/* The pid (in the caller's pid namespace) a pidfd refers to, or -1 when
 * the kernel cannot say (before Linux 6.13). */
pid_t cc_pidfd_pid(int pidfd);

/* SIGKILL through the pidfd, reap, close everything. Idempotent. */
void cc_child_kill(struct cc_child *c);

/* SIGKILL through the pidfd only (no reap, nothing closed). */
void cc_child_signal_kill(struct cc_child *c);

/* Reap without killing if the worker has exited (non-blocking); returns
 * true when reaped. */
bool cc_child_try_reap(struct cc_child *c);

/* Human description of how the reaped child died ("was killed by
 * SIGSEGV"), whole: a heap string the caller frees, or NULL when out of
 * memory. */
char *cc_child_describe(const struct cc_child *c);

/* ---- channel.c: frames with deadlines ---- */

int64_t cc_now_ns(void);

/* Wait until the socket is ready for poll `events` (POLLIN, POLLOUT),
 * hangs up, or the deadline passes. Returns 0, or -1 with err: timeout,
 * worker_crashed (the process ended), internal. */
int cc_chan_wait(struct cc_child *c, short events, int64_t deadline_ns, cc_error *err);

/* Send one frame before deadline_ns (CLOCK_MONOTONIC). Errors: timeout
 * (the worker stopped reading), worker_crashed (peer gone). */
int cc_chan_send(struct cc_child *c, const void *buf, size_t len, int64_t deadline_ns,
		 cc_error *err);

/* Receive one frame of at most cap bytes before deadline_ns; *buf owned by
 * the caller. The length is checked before anything is buffered. Errors:
 * timeout, worker_crashed (EOF or the worker died), protocol_violation
 * (over the cap). */
int cc_chan_recv(struct cc_child *c, char **buf, size_t *len, size_t cap, int64_t deadline_ns,
		 cc_error *err);

/* Wait until the worker's socket or other_fd is readable, or the deadline
 * passes. Returns 0 (socket; also on EOF, which the read then reports), 1
 * (other_fd), or -1 with err: timeout, worker_crashed, internal. */
int cc_chan_wait_input(struct cc_child *c, int other_fd, int64_t deadline_ns, cc_error *err);

/* ---- protocol.c: validated worker messages ---- */

enum cc_msg_type {
	CC_MSG_READY,
	CC_MSG_FAIL,
	CC_MSG_OUT,
	CC_MSG_RESULT,
	CC_MSG_CALL,
	CC_MSG_WAIT /* the worker blocks for replies (a hint) */
};

/* The longest type name a worker may give for a text-form value. */
#define CC_VALUE_TYPE_MAX 256

struct cc_msg {
	enum cc_msg_type what;
	cc_value *root; /* owned; the fields below borrow from it */
	uint64_t id;	/* out, result */
	/* ready */
	const cc_value *engine, *version, *applied, *missing;
	int64_t landlock_abi, seccomp_allowed;
	const cc_value *preload_skipped; /* array of str, or NULL (protocol.c) */
	/* fail, result error */
	cc_error_kind kind;
	const cc_value *etype, *message, *traceback;
	/* out */
	int fd;
	const cc_value *data;
	/* result */
	bool ok;
	cc_value *value;	    /* owned (stolen from root) */
	const cc_value *value_type; /* string, or NULL: the value is a text form */
	cc_value *displays;	    /* result: owned array of MIME bundles (stolen), or NULL */
	/* call */
	uint64_t call;		     /* the call's id, chosen by the worker */
	const cc_value *tool, *args; /* name (string), arguments (array) */
	const cc_value *kwargs;	     /* keyword arguments (non-empty map) or NULL */
};

/* Decode and fully validate one worker frame: known type, exactly the
 * known fields with the right types, UTF-8, caps, error kinds a worker may
 * report; values within the node budget of max_result. Errors:
 * protocol_violation (the message says what was wrong). */
int cc_msg_parse(const char *buf, size_t len, uint64_t max_result, struct cc_msg *m, cc_error *err);
void cc_msg_free(struct cc_msg *m);

/* ---- runtime.c ---- */

struct cc_tool {
	char *name;
	cc_tool_fn fn;		  /* synchronous, or NULL */
	cc_tool_async_fn afn;	  /* asynchronous, or NULL */
	cc_tool_kw_fn kfn;	  /* synchronous with keyword arguments, or NULL */
	cc_tool_async_kw_fn akfn; /* asynchronous with keyword arguments, or NULL */
	void *user;
	cc_budget *budget; /* a reference, or NULL for the runtime's */
	int redact;	   /* 1, 0, or -1: the runtime's (cc_runtime_set_tool_redaction) */
};

struct cc_runtime {
	cc_options opts;
	struct cc_child child;
	bool alive;
	char *death; /* why the worker is gone, for later evals */
	uint64_t next_id;
	char *version;
	char *applied, *missing;
	char *preload_skipped; /* a template's: entries joined by '\n', or NULL */
	bool is_template;      /* started with a preload list (cc_runtime_start) */
	/* what its grants named when it started (cc_grants_ids) */
	uint64_t grant_ids[2 * CC_MAX_MOUNTS];
	size_t n_grant_ids;
	cc_sandbox_report report;
	/* tools.c */
	struct cc_tool *tools;
	size_t ntools;
	cc_budget *budget; /* a reference, or NULL */
	bool redact;
	bool value_fallback; /* cc_runtime_set_value_fallback */
	bool asked_fallback; /* the running eval's frame asked for it */
	cc_output_fn on_output;
	void *on_output_user;
	void (*on_wait)(void *user); /* cc_runtime_set_wait_handler */
	void *on_wait_user;
	cc_output_fn on_text; /* whole batches of lines (the CLI, MCP) */
	void *on_text_user;
	bool budget_refused;	  /* a call was refused for budget in this request */
	uint64_t last_call;	  /* the highest call id seen; ids must grow */
	bool close_pending;	  /* cc_runtime_close ran inside a tool */
	struct cc_replyq *replyq; /* deferred.c: made by the first async bind */
	struct cc_net *net;	  /* net.c: made by cc_runtime_set_net */
	/* Held around closing the worker's pidfd, so cc_runtime_interrupt
	 * (another thread) never signals a reused descriptor. */
	pthread_mutex_t kill_lock;
	int interrupted;		  /* cc_runtime_interrupt ran (atomic) */
	struct cc_forkserver *forkserver; /* a reference, for a forked session */
	char *fork_note;		  /* report.fork_server (cc_options.fork_server), heap */
	cc_deps *deps;			  /* deps.c: its dependencies (a reference), or NULL */
	/* Set while a request is in flight: a tool (or another thread) calling
	 * into the runtime then gets invalid_input instead of corrupting the
	 * channel. */
	int busy;
};

/* How long a worker (or a forked session) may take to confine itself and
 * start its engine. */
#define CC_STARTUP_TIMEOUT_S 30.0

/* The session's scratch size: scratch_bytes, else (compatibility)
 * limits.max_file_size; 0 = no scratch. */
uint64_t cc_scratch_bytes(const cc_options *o);
/* A fork server's session cap: max_sessions, 0 meaning the default. */
unsigned cc_max_sessions(const cc_options *o);
/* RLIMIT_FSIZE for the worker, in bytes (0: no file writes); options.c. */
uint64_t cc_file_size_cap(const cc_options *o, const struct cc_grants *gs);

/* A runtime with no worker yet (child fields -1). Errors: internal. */
cc_runtime *cc_runtime_alloc(const cc_options *opts, cc_error *err);

/* ---- libraries.c: cc_options.libraries, resolved and read in the host ---- */

#define CC_LIBRARIES_MAX 64 /* as the worker's main.c */
struct cc_libset;
/* Resolve and read opts->libraries, after the packages deps says to load
 * from its node_modules (cc_deps_load; deps may be NULL); *out NULL when
 * there are none. Errors: invalid_input (the message names the entry),
 * internal. */
int cc_libset_load(const cc_options *opts, const cc_deps *deps, struct cc_libset **out,
		   cc_error *err);
void cc_libset_free(struct cc_libset *s);
size_t cc_libset_count(const struct cc_libset *s);
/* Feed what the libraries are (each one's file name and bytes, in order)
 * to add: the shared fork servers' key (forkserver_shared.c). */
void cc_libset_digest(const struct cc_libset *s, void (*add)(void *u, const void *p, size_t n),
		      void *u);
/* Send one "lib" frame per library. Errors: those of cc_chan_send. */
int cc_libset_send(struct cc_child *c, const struct cc_libset *s, int64_t deadline, cc_error *err);
/* A worker's invalid_input "library N: KIND: ..." failure (main.c's
 * load_libraries), reworded to name the library and its file, with KIND
 * (guest_error, syntax_error, timeout, memory_limit) as err->kind. A
 * ReferenceError without polyfills (cc_options.web_polyfills false) also
 * names the option that adds the browser basics. */
void cc_libset_explain(const struct cc_libset *s, bool polyfills, cc_error *err);

/* Spawn a worker, send init (and the libraries, borrowed; may be NULL)
 * and wait for "ready": cc_runtime_new, or a fork server's template when
 * preload is not NULL (the init frame then says template and carries the
 * list). Same errors as cc_runtime_new. */
int cc_runtime_start(const cc_options *opts, const char *preload, const struct cc_libset *libs,
		     cc_runtime **out, cc_error *err);
/* cc_forkserver_new with libraries already read (borrowed; may be NULL)
 * and cc_options.net's policy made (borrowed: the server takes its own
 * reference for its sessions; NULL = none). */
int cc_forkserver_start(const cc_options *opts, const char *preload, const struct cc_libset *libs,
			struct cc_net_policy *net, cc_forkserver **out, cc_error *err);

/* Receive and check the worker's "ready" (or "fail") before deadline.
 * Errors: as cc_runtime_new. */
int cc_runtime_await_ready(cc_runtime *rt, int64_t deadline, cc_error *err);

/* forkserver.c: drop one reference (a session, or the owner's close). */
void cc_forkserver_unref(struct cc_forkserver *fs);
/* Give the template (so each session it forks) a reference to d (NULL:
 * none); forkserver.c. */
void cc_forkserver_hold_deps(struct cc_forkserver *fs, cc_deps *d);
/* Whether the template still runs (a pool restarts a dead one). */
bool cc_forkserver_alive(struct cc_forkserver *fs);
/* Whether the template's grants named exactly the n words of ids
 * (cc_grants_ids) when it started. */
bool cc_forkserver_grants_are(const struct cc_forkserver *fs, const uint64_t *ids, size_t n);
/* cc_forkserver_spawn with the session's own options o (borrowed: their
 * template-fixed fields must be the server's; timeout_s, grace_s and
 * max_pending_calls are the session's) and network policy net (the
 * session takes this reference, also on failure; NULL: none). */
int cc_forkserver_spawn_as(struct cc_forkserver *fs, const cc_options *o, struct cc_net_policy *net,
			   cc_runtime **out, cc_error *err);
/* The template's pid, -1 once it is gone. */
int cc_forkserver_pid(struct cc_forkserver *fs);
/* In a child of fork(): close this process's copies of the template's
 * descriptors without signalling it (it is the parent's), and mark it
 * gone here. The memory stays (what references it may be half-made). */
void cc_forkserver_forget(struct cc_forkserver *fs);

/* forkserver_shared.c: cc_options.fork_server. A session of the
 * library-wide fork server for opts' template-fixed options (started on
 * first use), with opts' per-session ones and the reference net (taken,
 * also when not served). Returns 0 with *out, or 1 when it could not
 * serve (then *why is a heap note saying why, or NULL): the caller
 * spawns. libs: opts->libraries, read (borrowed; may be NULL). */
int cc_shared_session(const cc_options *opts, const struct cc_libset *libs,
		      struct cc_net_policy *net, cc_runtime **out, char **why);

/* runtime.c, for request.c: */
/* The worker is done for: kill it and say why in rt->death (why: copied).
 * When it closed the channel itself (wait_exit), give it a moment to
 * finish dying so the message can say how it died: a crashing process
 * closes its fds before it becomes reapable. */
void cc_runtime_mark_dead(cc_runtime *rt, const char *why, bool wait_exit);
/* The largest frame the worker may send, bytes: a result of max_result
 * bytes or an output chunk, plus the envelope. */
size_t cc_runtime_recv_cap(const cc_runtime *rt);
/* A string value's text as a new heap string ("" for anything else;
 * NULL only when out of memory). */
char *cc_dup_str(const cc_value *s);

static inline int64_t cc_secs_to_ns(double s)
{
	return (int64_t)(s * 1e9);
}

/* cc_runtime_eval for codecage's own guest-side code (net.c's network
 * shim): the code is compiled under file (borrowed; starting "<codecage",
 * at most CC_EVAL_FILE_MAX bytes; NULL: the guest's "<code>"), whose
 * frames every traceback leaves out. Same result and errors. */
cc_result *cc_runtime_eval_file(cc_runtime *rt, const char *code, size_t len, double timeout_s,
				const char *file);

/* Take the runtime for one request; false (and err = invalid_input) when
 * a request is already in flight. */
bool cc_runtime_enter(cc_runtime *rt, cc_error *err);
void cc_runtime_leave(cc_runtime *rt);

/* ---- request.c ---- */

/* Send one request (req: the whole encoded message, borrowed; its "id"
 * field is id) and take the worker's frames until its result, within
 * timeout_s seconds plus the grace. is_eval: tool calls and waits may come
 * (answered here), and asynchronous answers are accepted for this id only.
 * Fills r (borrowed): the value or error, the captured output of both
 * streams, the duration. A worker that breaks the protocol, dies or
 * misses the hard deadline is killed and rt marked dead; r says why
 * (timeout, worker_crashed, protocol_violation, output_limit, internal). */
void cc_round_trip(cc_runtime *rt, uint64_t id, const msgpack_sbuffer *req, double timeout_s,
		   bool is_eval, cc_result *r);

/* Send a request other than eval (m: the whole message, its "id" field
 * being id = rt->next_id++), wait for its result. Returns 0, or -1 with err
 * filled from the result's kind and message. Takes the runtime. */
struct cc_msgbuf;
int cc_runtime_request(cc_runtime *rt, uint64_t id, const struct cc_msgbuf *m, cc_error *err);
/* The same, handing the result's value to *value (owned; NULL for null)
 * when value is not NULL. */
int cc_runtime_request_value(cc_runtime *rt, uint64_t id, const struct cc_msgbuf *m,
			     cc_value **value, cc_error *err);

/* ---- tools.c ---- */

/* Answer one validated "call" message: look the tool up, charge the
 * budget, run the host function, send the reply before deadline_ns. A call
 * that arrives after the eval's soft deadline (soft_ns) never reaches the
 * host.
 * Errors (the eval must end): the reply could not be sent (timeout,
 * worker_crashed). A failing or unknown tool is not an error here: the
 * guest gets it as a reply. */
int cc_tool_dispatch(cc_runtime *rt, const struct cc_msg *m, int64_t soft_ns, int64_t deadline_ns,
		     cc_error *err);
void cc_tools_free(cc_runtime *rt);
/* Bind the reserved network tool (net.h), which user tools may not name.
 * Errors: those of cc_runtime_bind_tool_async. */
int cc_tools_bind_net(cc_runtime *rt, cc_error *err);

/* ---- runtime_net.c: a runtime's network (the broker is src/net/) ---- */

/* Give rt the policy p (takes the caller's reference, also on failure):
 * cc_runtime_set_net after its checks. NULL p does nothing. The first
 * policy that allows a host also binds the network tool and runs the
 * guest's network APIs. */
int cc_net_install(cc_runtime *rt, struct cc_net_policy *p, cc_error *err);

/* Send one reply frame for `call` (tools.c): a value (ename NULL), or a
 * failure name + message (cut to 4 KiB; redaction applied by the caller)
 * + ebases (comma-separated builtin base names or NULL; checked here, see
 * cc_tool_fail_bases). A value that cannot cross becomes a
 * ToolResultError. Errors: timeout, worker_crashed. */
int cc_tool_send_reply(cc_runtime *rt, uint64_t call, const cc_value *value, const char *ename,
		       const char *ebases, const char *emsg, int64_t deadline_ns, cc_error *err);
/* The guest-visible name and message of a failed call (redaction, decided
 * for the call's tool as it was made; identifier and UTF-8 checks). Both
 * borrowed from the arguments or static. */
void cc_tool_failure_text(bool redact, const char *name, const char *msg, const char **ename,
			  const char **emsg);

/* ---- deferred.c: answers of asynchronous tools ----
 *
 * One queue per runtime, reference-counted (each pending call holds one),
 * so a call answered after the runtime is gone is dropped safely. An
 * eventfd wakes the eval's thread when an answer is queued, or when the
 * last held call stops waiting (cc_tool_call_unhold). */
struct cc_replyq;

/* The runtime's queue, made on first use. Errors: internal. */
int cc_replyq_ensure(cc_runtime *rt, cc_error *err);
/* Accept answers for eval `eval_id` from now on (0: accept none and drop
 * everything queued). Every call of the previous eval still unanswered is
 * cancelled first: its cancel function runs here, on this thread. */
void cc_replyq_open(struct cc_replyq *q, uint64_t eval_id);
/* How many calls of the open eval are unanswered (0 for NULL). */
size_t cc_replyq_in_flight(struct cc_replyq *q);
/* How many of them are held for approval (cc_tool_call_hold; 0 for NULL),
 * in *until the earliest cc_now_ns() at which one's approval timeout
 * passes (INT64_MAX when none) and in *timeout_s that call's approval
 * timeout. */
size_t cc_replyq_held(struct cc_replyq *q, int64_t *until, double *timeout_s);
/* Whether a held call's approval timeout has passed, by the clock read
 * under the queue's lock (or the host found so, cc_tool_call_unhold):
 * then every held call of the eval is expired (never to run, its answer
 * dropped, no longer held) and *timeout_s is the approval timeout of the
 * earliest. false for NULL. */
bool cc_replyq_expire(struct cc_replyq *q, double *timeout_s);
/* A pending call for `call` of the current eval, whose failure the guest
 * sees redacted when redact (cc_tool_failure_text). NULL when out of
 * memory. */
cc_tool_call *cc_replyq_new_call(struct cc_replyq *q, uint64_t call, bool redact);
/* The eventfd to poll. */
int cc_replyq_fd(const struct cc_replyq *q);
/* Send every queued answer of the current eval. Returns 0 or -1 (err from
 * cc_tool_send_reply). */
int cc_replyq_flush(cc_runtime *rt, int64_t deadline_ns, cc_error *err);
/* The runtime lets go of its queue (pending calls keep it alive). */
void cc_replyq_release(struct cc_replyq *q);

/* ---- result.c ---- */

struct cc_result {
	cc_error_kind kind;
	cc_value *value;
	cc_value *displays; /* array of MIME bundles (protocol.c checked), or NULL */
	char *out[3];	    /* index 1 stdout, 2 stderr; NUL-terminated UTF-8 */
	size_t out_len[3];
	char *type, *message, *traceback;
	char *value_type; /* the value is the text form of a value of this type */
	double duration;
};

cc_result *cc_result_alloc(void);
/* Set an error on r with a formatted message (type stays as given). */
void cc_result_set_error(cc_result *r, cc_error_kind kind, const char *type, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
