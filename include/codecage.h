/* codecage: run untrusted Python and JavaScript in a supervised worker.
 *
 * This is the whole public C API of libcodecage. The contract behind it is
 * DESIGN.md (shape, threat model, value mapping, error kinds).
 *
 * Conventions used by every function below:
 *  - Sizes are in bytes, times in seconds (double) unless a name says _ms.
 *  - "borrows": the callee reads the argument during the call only.
 *    "copies": the callee keeps its own copy. "takes ownership": the callee
 *    frees it, also on error. "returns owned": the caller frees it with the
 *    named function.
 *  - Functions that can fail return a negative number and fill a cc_error
 *    (when the caller passes one); they never exit or abort the process.
 *  - Strings are UTF-8. Lengths never count a terminating NUL, but every
 *    string the library hands out is NUL-terminated as a convenience.
 *  - A cc_runtime is not thread-safe: use one from one thread at a time
 *    (cc_runtime_interrupt and answering a cc_tool_call are the exceptions).
 */
#ifndef CODECAGE_H
#define CODECAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CC_BUILDING_LIBRARY)
#define CC_EXPORT __attribute__((visibility("default")))
#else
#define CC_EXPORT
#endif

/* ---- error kinds (DESIGN.md section 6: one closed set everywhere) ---- */

typedef enum cc_error_kind {
	CC_OK = 0,
	CC_ERR_GUEST,		    /* guest raised/threw; runtime usable */
	CC_ERR_SYNTAX,		    /* code did not parse; runtime usable */
	CC_ERR_TIMEOUT,		    /* deadline passed; see cc_runtime_alive */
	CC_ERR_MEMORY_LIMIT,	    /* memory cap hit */
	CC_ERR_OUTPUT_LIMIT,	    /* stdout/stderr or result over its cap */
	CC_ERR_TOOL_BUDGET,	    /* tool call over budget */
	CC_ERR_WORKER_CRASHED,	    /* worker died; runtime unusable */
	CC_ERR_PROTOCOL_VIOLATION,  /* worker sent an invalid frame; runtime unusable */
	CC_ERR_SANDBOX_UNAVAILABLE, /* sandbox "require" could not be met */
	CC_ERR_INVALID_INPUT,	    /* caller's request or config is invalid */
	CC_ERR_INTERNAL,	    /* a bug in codecage */
	CC_ERR_KIND_COUNT
} cc_error_kind;

/* The kind's wire and user-facing name ("guest_error", "timeout", ...).
 * Returns a static string; "internal" for out-of-range values. */
CC_EXPORT const char *cc_error_kind_name(cc_error_kind kind);

/* Parse a kind name; returns -1 when the name is not in the closed set. */
CC_EXPORT int cc_error_kind_from_name(const char *name, size_t len);

/* CLI exit status for a kind (DESIGN.md section 6): 0 for CC_OK, 1 guest and
 * syntax errors and tool_budget, 2 invalid_input, 3 timeout, 4
 * sandbox_unavailable, 5 memory/output limits, crashes and protocol
 * violations, 70 internal. */
CC_EXPORT int cc_error_kind_exit_code(cc_error_kind kind);

/* An error: a kind from the closed set plus a heap message that says what
 * happened and what to do. Zero-initialise before use; cc_error_clear frees
 * the message and resets it, so one cc_error can be reused. */
typedef struct cc_error {
	cc_error_kind kind;
	char *message; /* owned, may be NULL */
} cc_error;

CC_EXPORT void cc_error_clear(cc_error *err);

/* The library's version ("0.1.0"): meson's project version, the one
 * source the CLI's --version, the MCP server's serverInfo and the Python
 * package's __version__ read. Static string. */
CC_EXPORT const char *cc_version(void);

/* The text of WEB_POLYFILLS: the JavaScript a runtime with
 * cc_options.web_polyfills runs first (built into the JavaScript worker)
 * and the Python package's codecage.WEB_POLYFILLS. Static, NUL-terminated
 * UTF-8, never freed; *len (when not NULL) gets its length in bytes,
 * without the NUL. */
CC_EXPORT const char *cc_web_polyfills(size_t *len);

#include "codecage_value.h" /* values: cc_value trees, their types and constructors */

/* ---- runtimes ---- */

typedef enum cc_language {
	CC_LANG_JAVASCRIPT = 1,
	CC_LANG_PYTHON = 2,
} cc_language;

/* A language's name ("javascript", "python": the worker's ready frame,
 * messages, the MCP server's resource URIs). Static string; "unknown" for
 * out-of-range values. */
CC_EXPORT const char *cc_language_name(cc_language lang);

/* Parse a language name into *lang: "javascript" or "js", "python" or
 * "py", in any ASCII case (the CLI's --lang, the Python package's
 * language=, the MCP server's search_tools). Returns 0, or -1 for NULL or
 * any other string (*lang untouched). */
CC_EXPORT int cc_language_parse(const char *name, cc_language *lang);

typedef enum cc_sandbox_mode {
	CC_SANDBOX_REQUIRE = 0, /* default: every layer or refuse */
	CC_SANDBOX_AUTO,	/* apply what exists, report exactly that */
	CC_SANDBOX_OFF,		/* tests and debugging only */
} cc_sandbox_mode;

/* A mode's name ("require", "auto", "off"; the CLI's --sandbox, the
 * protocol's init frame, results). Static string; "require" for
 * out-of-range values. */
CC_EXPORT const char *cc_sandbox_mode_name(cc_sandbox_mode mode);

/* Parse a mode name into *mode. Returns 0, or -1 for any other string. */
CC_EXPORT int cc_sandbox_mode_parse(const char *name, cc_sandbox_mode *mode);

/* The longest deadline any call takes, seconds (one day): limits.timeout_s,
 * cc_runtime_eval's timeout_s, cc_tool_call_hold's approval timeout,
 * cc_pool_checkout's wait, cc_net_options.timeout_s. */
#define CC_MAX_TIMEOUT_S 86400

/* cc_limits.max_memory's range, bytes (cc_options_check refuses others). */
#define CC_MAX_MEMORY_MIN (16ull << 20)
#define CC_MAX_MEMORY_MAX (1ull << 40)
/* cc_options.scratch_bytes' range when it is not 0 (no scratch), bytes. */
#define CC_SCRATCH_MIN 4096ull
#define CC_SCRATCH_MAX (64ull << 30)

/* Limits. cc_options_init fills the defaults given in each comment. */
typedef struct cc_limits {
	double timeout_s;	    /* per-eval wall-clock deadline, seconds,
				       in (0, CC_MAX_TIMEOUT_S]; 30 */
	double grace_s;		    /* soft stop to SIGKILL; 0.5. A Python eval
				       inside a call that cannot be interrupted
				       ends sooner: its worker ends itself after
				       about 5 ms of CPU past the deadline */
	uint64_t max_memory;	    /* engine heap, bytes; 128 MiB for JavaScript,
				       512 MiB for Python. The kernel
				       rlimit on the worker's data segment is
				       this plus 64 MiB for the engine itself */
	uint64_t max_stdout;	    /* captured stdout per eval; 1 MiB */
	uint64_t max_stderr;	    /* captured stderr per eval; 1 MiB */
	uint64_t max_result;	    /* encoded result value; 16 MiB */
	uint64_t max_source;	    /* code passed to eval; 16 MiB */
	uint32_t cpu_s;		    /* RLIMIT_CPU for the whole session; 3600 */
	uint32_t max_open_files;    /* RLIMIT_NOFILE; 64 */
	uint64_t max_file_size;	    /* RLIMIT_FSIZE, bytes; 0: scratch_bytes, or 1 GiB
				       with only a writable mount, else no file
				       writes (cc_options.scratch_bytes) */
	uint32_t max_pending_calls; /* asynchronous tool calls in flight at once,
				       counted by the supervisor; 64, in
				       [1, 65536] */
} cc_limits;

/* The option each limit's error message names, as the message's last
 * words ("...; raise cc_limits.timeout_s"). A front end with its own name
 * for the option (a CLI flag, a keyword argument) may replace this text in
 * the message with its own. */
#define CC_TIMEOUT_HINT "raise cc_limits.timeout_s (or cc_runtime_eval's timeout_s)"
#define CC_MEMORY_HINT "raise cc_limits.max_memory"
#define CC_RESULT_HINT "raise cc_limits.max_result"

/* A file grant: a host directory or file the guest sees at `guest`.
 * Enforced twice: a mount in the worker's mount namespace (read-only
 * unless writable) and Landlock rules for exactly that tree. The
 * supervisor resolves `host` once (realpath, then an O_PATH descriptor)
 * in cc_runtime_new / cc_forkserver_new / cc_pool_new and hands the
 * worker that object, so swapping the path for a symlink afterwards
 * cannot redirect the grant. Never granted, decided on the object opened
 * (so a symlink or bind mount of one is refused too): the host's root
 * directory, and /proc, /sys, /dev and anything on the kernel's
 * filesystems mounted there (invalid_input). When the supervisor runs as
 * root (and the sandbox is not off), the worker's user is host nobody,
 * so each grant is an idmapped mount (Linux 5.12+, a filesystem that
 * supports them): the guest uses the tree as its owner, and what it
 * creates belongs on disk to the owner of the grant's root; where that
 * is not available and nobody could not use the grant (its mode bits),
 * the call fails with invalid_input naming the cause and the fix.
 * Strings borrowed. */
typedef struct cc_mount {
	const char *host;  /* host path: must exist (directory or file) */
	const char *guest; /* absolute guest path, not under scratch (/tmp)
			      nor over what the engine needs (/, /usr, /proc,
			      /dev, the stdlib, the worker's files) */
	bool writable;	   /* false (default): read-only */
	/* What error messages call the host path: the path as the user gave
	 * it, when host is another spelling of the same object (the Python
	 * package passes /proc/self/fd/N); NULL (default): host. */
	const char *name;
} cc_mount;

/* The most grants one runtime takes. */
#define CC_MAX_MOUNTS 32
/* The most package folders one Python runtime takes (cc_options.python_path). */
#define CC_MAX_PYTHON_PATH 8

struct cc_net_options;	/* below, with the network API */
struct cc_deps_options; /* below, with dependencies */

typedef struct cc_options {
	cc_language language;
	cc_sandbox_mode sandbox;
	cc_limits limits;
	/* Directory holding codecage-worker-js / codecage-worker-py; NULL =
	 * the directory of libcodecage itself, then the install libexecdir. */
	const char *worker_dir;
	/* JavaScript libraries every runtime (or fork server template) loads
	 * before it is ready, in order, as classic scripts in the global
	 * scope (a bundle's completion value is ignored): n_libraries
	 * entries, each a .js file, a package directory, or a package name
	 * looked up in node_modules. A package resolves to its browser global
	 * bundle through package.json ("unpkg", "jsdelivr", or a "browser"
	 * string naming a UMD/IIFE script). The host reads the files (each at
	 * most limits.max_source bytes of UTF-8; at most 64 libraries); the
	 * worker never opens them. They load after web_polyfills, all within
	 * limits.timeout_s. Borrowed:
	 * read while the call that takes these options runs (a pool reads
	 * them once, at cc_pool_new, and keeps their bytes until
	 * cc_pool_close for the sessions and templates it starts later).
	 * Console output while a library loads is dropped. Errors of the
	 * call that starts the runtime: invalid_input (a file or package
	 * that cannot be resolved or read, a Python runtime, too many or too
	 * big; the message names the entry and what to do), guest_error,
	 * syntax_error, timeout or memory_limit (a library failed to load:
	 * "loading library 'NAME' (FILE): TypeError: ..."). NULL/0 = none. */
	const char *const *libraries;
	size_t n_libraries;
	/* Directory where package names in libraries are looked up (a
	 * node_modules folder); NULL = names are refused. Borrowed. */
	const char *node_modules;
	/* JavaScript only: run WEB_POLYFILLS (timers, TextEncoder/Decoder,
	 * URL, Blob, FileReader, EventTarget, AbortController, crypto, a Date
	 * on the timers' virtual clock ...; README "Web polyfills"), built into
	 * the worker, when it starts, before any guest code; a fork server's
	 * template runs them once for all its sessions. false. true with
	 * CC_LANG_PYTHON is invalid_input. */
	bool web_polyfills;
	/* File grants (array of n_mounts, at most CC_MAX_MOUNTS); borrowed
	 * until cc_runtime_new / cc_forkserver_new / cc_pool_new returns
	 * (they copy what they keep). NULL/0: none, the default. */
	const cc_mount *mounts;
	size_t n_mounts;
	/* Bytes of the session's private, size-capped tmpfs on /tmp (each
	 * session its own, also forked and pooled ones; both languages);
	 * 0 = none, the default. A file in it or in a writable grant is also
	 * capped by limits.max_file_size when that is set (RLIMIT_FSIZE);
	 * with max_file_size 0 and scratch_bytes > 0 the per-file cap is
	 * scratch_bytes. For compatibility, max_file_size > 0 with
	 * scratch_bytes 0 gives a scratch of max_file_size bytes. */
	uint64_t scratch_bytes;
	/* The network policy (cc_net_options, below) every runtime these
	 * options start gets before it is returned: cc_runtime_new's, and each
	 * session of cc_forkserver_spawn and cc_pool_checkout (never a fork
	 * server's template). NULL = no network, the default. Borrowed until
	 * the call that takes the options returns: cc_runtime_new,
	 * cc_forkserver_new and cc_pool_new copy the policy (entries,
	 * ca_file, test_resolve) and keep the hooks and hook_user as given;
	 * they take hook_user when hook_free is set (it runs once no runtime
	 * started from these options, nor the pool or fork server, uses it,
	 * also when the call fails). A malformed policy is invalid_input from
	 * that call before anything starts. cc_runtime_set_net overrides it
	 * for one runtime. */
	const struct cc_net_options *net;
	/* Python only: host folders of packages the guest may import (a
	 * `pip install --target DIR`, a Python 3.11 venv's site-packages),
	 * an array of n_python_path absolute paths of existing directories,
	 * at most CC_MAX_PYTHON_PATH (with mounts, at most CC_MAX_MOUNTS
	 * grants in all). Each becomes a read-only file grant (as a mounts
	 * entry with writable false: bind mount and Landlock, resolved once)
	 * at /codecage/python-path/N in the guest, N = 0, 1, ... in order,
	 * and is put on sys.path after the standard library, before Debian's
	 * dist-packages; .pth files are not run. mounts may not use
	 * /codecage, and no writable mount may be one of these folders or
	 * be inside or around one (a session could leave a module there
	 * that another imports). Strings borrowed until cc_runtime_new /
	 * cc_forkserver_new / cc_pool_new returns (a pool copies them).
	 * Errors: invalid_input naming the entry (python_path[i]) and, for
	 * an overlap, the mount; a JavaScript runtime. NULL/0: none, the
	 * default. */
	const char *const *python_path;
	size_t n_python_path;
	/* Packages the host installs for the guest before the runtime (or
	 * fork server template, or pool) starts: n_dependencies specs, at
	 * most CC_MAX_DEPENDENCIES. Python: pip requirements, a name with
	 * optional extras and versions ("polars", "polars==1.*",
	 * "pydantic>=2"); JavaScript: npm names with an optional range
	 * ("vega-lite@5"). Never a URL, a path or a git repository. They are
	 * resolved and installed by the host, never the worker
	 * (cc_deps_resolve says how; cc_options.deps is the policy), and
	 * granted read-only: a Python runtime gets the installed folder as
	 * one more python_path entry (so with it at most
	 * CC_MAX_PYTHON_PATH - 1 python_path folders), a JavaScript runtime
	 * loads each named package's browser bundle (after the packages it
	 * names as peerDependencies, before cc_options.libraries) from the
	 * installed node_modules. The runtime keeps the install's account
	 * (cc_runtime_deps). Strings borrowed until the call that takes the
	 * options returns. Errors of that call: invalid_input naming the
	 * package and pip's or npm's reason (no such package, no version
	 * matching, only source distributions, conflicting versions, the
	 * policy refusing it, over a size cap, past the timeout).
	 * NULL/0: none, the default. */
	const char *const *dependencies;
	size_t n_dependencies;
	/* The policy and cache for dependencies (cc_deps_options, below);
	 * NULL = cc_deps_options_init's defaults. Borrowed like
	 * dependencies. Ignored without dependencies. */
	const struct cc_deps_options *deps;
	/* Fork servers only (cc_forkserver_new, cc_pool_new with
	 * fork_server): the most sessions one fork server holds at once, in
	 * [1, CC_FORK_MAX_SESSIONS_LIMIT]; 0 = CC_FORK_MAX_SESSIONS_DEFAULT
	 * (1024, what cc_options_init sets). Every quota the template and its
	 * sessions share is sized for it (SECURITY.md "Density"): RLIMIT_NPROC
	 * and RLIMIT_SIGPENDING of the template's user namespace (one process
	 * and one stop timer per session, plus CC_FORK_SHARED_THREADS threads
	 * that Python sessions share), the template's RLIMIT_NOFILE (two
	 * descriptors per session, so the host's hard RLIMIT_NOFILE must allow
	 * 2 * max_sessions + max_open_files + 16). A session past it is refused
	 * at once with sandbox_unavailable naming max_sessions; the sessions
	 * already running are unaffected. Each session also holds three
	 * descriptors in the host process (its socket, pidfd and status pipe;
	 * a fourth with asynchronous tools or a network policy), counted
	 * against the host's own RLIMIT_NOFILE. Ignored by cc_runtime_new (the
	 * templates of fork_server are always sized for the default). */
	uint32_t max_sessions;
	/* cc_runtime_new only: take the session from a library-wide fork
	 * server (cc_forkserver_new with preload ""), started on the first
	 * such call and shared by later ones with the same template-fixed
	 * options (language, sandbox, limits but timeout_s, grace_s and
	 * max_pending_calls, web_polyfills, the libraries' bytes, the
	 * objects mounts and python_path name, worker_dir), at most 8 at
	 * once (least recently used closed first). The runtime behaves as a
	 * spawned one; what a fork server shares is in SECURITY.md. Never an
	 * error: when the server cannot serve it, the worker is spawned and
	 * report.fork_server says why. scratch_bytes is template-fixed too
	 * (each session mounts a private scratch, as spawned). false (ignored by
	 * cc_forkserver_new and cc_pool_new). See cc_forkserver_shared_close. */
	bool fork_server;
} cc_options;

/* cc_options.max_sessions: the default and the most it may be. */
#define CC_FORK_MAX_SESSIONS_DEFAULT 1024
#define CC_FORK_MAX_SESSIONS_LIMIT 4096
/* Threads beyond one per session that all sessions of one fork server may
 * hold together (Python's; JavaScript sessions have one thread each). */
#define CC_FORK_SHARED_THREADS 256

/* Fill *opts with the defaults for a language (sandbox "require"). */
CC_EXPORT void cc_options_init(cc_options *opts, cc_language language);

/* Check *opts against the documented ranges, as cc_runtime_new,
 * cc_forkserver_new and cc_pool_new do before any worker starts: the one
 * place they are checked, so a front end reports this error (its message
 * names the field, e.g. "timeout must be in (0, 86400] seconds") instead of
 * checking ranges itself. Borrows opts. Returns 0, or -1 with err
 * (invalid_input). */
CC_EXPORT int cc_options_check(const cc_options *opts, cc_error *err);

typedef struct cc_runtime cc_runtime;

/* What confinement a runtime got. Owned by the runtime. */
typedef struct cc_sandbox_report {
	cc_sandbox_mode mode;
	const char *applied; /* comma-separated layer names, e.g. "hygiene,rlimits" */
	const char *missing; /* layers the design lists that did not apply */
	int landlock_abi;    /* 0 when Landlock was not applied */
	int seccomp_allowed; /* allow-list size; 0 when seccomp was not applied */
	/* cc_options.fork_server: "shared" (forked from the library-wide
	 * server), or "spawned: WHY" (it could not serve); NULL without it */
	const char *fork_server;
} cc_sandbox_report;

/* Start a worker for opts->language and wait until it is ready.
 * Borrows opts. On success *out is an owned runtime (free with
 * cc_runtime_close) and 0 is returned. Errors: invalid_input (bad options),
 * sandbox_unavailable (mode "require" cannot be met; the message names the
 * missing layers), worker_crashed (the worker died while starting),
 * protocol_violation, internal (spawn failed; the message says why). */
CC_EXPORT int cc_runtime_new(const cc_options *opts, cc_runtime **out, cc_error *err);

/* Borrowed view of the runtime's confinement. */
CC_EXPORT const cc_sandbox_report *cc_runtime_sandbox(const cc_runtime *rt);

/* Engine name and version, e.g. "QuickJS 2025-04-26", "CPython 3.11.2". */
CC_EXPORT const char *cc_runtime_engine_version(const cc_runtime *rt);

/* Whether the runtime can run more code. False once the worker has died
 * or was killed: after worker_crashed, protocol_violation, or a timeout or
 * memory_limit that ended the worker. A timeout leaves it true, with the
 * guest's state, when the engine stopped the code at the deadline (the
 * soft stop: between bytecodes, in a sleep or wait); false when the stop
 * found the code inside a call that cannot be interrupted (a long C
 * builtin: the Python worker ends itself about 5 ms of CPU time past the
 * deadline, a JavaScript one is killed after limits.grace_s) or the code
 * ignored the stop for the whole grace. The result's message says which.
 * Further evals on a dead runtime return worker_crashed at once. */
CC_EXPORT bool cc_runtime_alive(const cc_runtime *rt);

/* Kill and reap the worker, close its socket and free everything.
 * NULL is fine. Never blocks for longer than it takes to reap. Called from
 * inside one of the runtime's own tools, it stops the worker at once and
 * frees the runtime when the running eval returns (do not use rt after). */
CC_EXPORT void cc_runtime_close(cc_runtime *rt);

/* Stop a runtime's worker now (SIGKILL) while another thread runs a
 * request on it: that request returns worker_crashed ("interrupted by the
 * host") and the runtime is dead afterwards (close it as usual). The one
 * function that may be called on a runtime in use by another thread; the
 * caller must still ensure rt is not being closed concurrently. Does
 * nothing on a dead runtime or NULL. */
CC_EXPORT void cc_runtime_interrupt(cc_runtime *rt);

/* ---- evaluation ---- */

typedef struct cc_result cc_result;

/* Run code (UTF-8, no NUL, at most limits.max_source bytes) in the runtime.
 * Borrows code. timeout_s <= 0 uses limits.timeout_s. Globals persist
 * across evals. The value is that of the last expression statement
 * (Python, as in the REPL) or the completion value (JavaScript); Promises
 * and top-level await are awaited. Returns an owned result (free with
 * cc_result_free) that carries success or any error kind; returns NULL only
 * when the result itself cannot be allocated. */
CC_EXPORT cc_result *cc_runtime_eval(cc_runtime *rt, const char *code, size_t len,
				     double timeout_s);

/* Bind a global variable in the guest to a copy of value (NULL = null/None).
 * Borrows name and value. Errors: invalid_input (name is not an identifier;
 * the value breaks the caps or is malformed: invalid UTF-8, duplicate map
 * keys, bad bigint text, nanoseconds >= 1e9), guest_error (the engine
 * cannot hold the value: a timestamp outside Python's years 1-9999 or
 * JavaScript's +-8.64e15 ms, or a JavaScript `const` of that name),
 * timeout, worker_crashed, protocol_violation. */
CC_EXPORT int cc_runtime_set_global(cc_runtime *rt, const char *name, const cc_value *value,
				    cc_error *err);

/* Values that cannot cross. Off (the default): an eval whose last value
 * has no mapping (a set, a date, a Decimal, a pandas DataFrame, a
 * JavaScript function or Symbol...) fails with guest_error, TypeError, as
 * DESIGN.md says. On: it succeeds and its value is that value's text form
 * as a string (Python repr(), a repr that raises giving "<T object>";
 * JavaScript's console.log form), cut to stay under limits.max_result
 * with a "[codecage: text shortened]" marker, and cc_result_value_type
 * names the type. Only type errors fall back: a value over the caps
 * still fails. The text is made inside the worker, under the eval's
 * deadline (a __repr__ is guest code). The CLI and the MCP server turn it
 * on. Applies to the evals started after the call (each eval's frame
 * carries the choice; a worker's text-form value for an eval that did not
 * ask is a protocol_violation). */
CC_EXPORT void cc_runtime_set_value_fallback(cc_runtime *rt, bool on);

CC_EXPORT bool cc_result_ok(const cc_result *r);
/* The value (borrowed from r; NULL for null/None or on error). */
CC_EXPORT const cc_value *cc_result_value(const cc_result *r);
/* With cc_runtime_set_value_fallback on, when the last value could not be
 * converted: the name of its type ("DataFrame", "set", "function"; borrowed
 * from r), and the value is a string, its text form. NULL otherwise. */
CC_EXPORT const char *cc_result_value_type(const cc_result *r);
/* Captured output (borrowed, valid UTF-8: invalid bytes become U+FFFD).
 * When a cap was hit the text ends with a "[codecage: ... truncated ...]"
 * marker line. len may be NULL. */
CC_EXPORT const char *cc_result_stdout(const cc_result *r, size_t *len);
CC_EXPORT const char *cc_result_stderr(const cc_result *r, size_t *len);
CC_EXPORT cc_error_kind cc_result_error_kind(const cc_result *r);
/* Error details (borrowed; "" when absent): the guest exception's type
 * (e.g. "ZeroDivisionError", "TypeError"), its message, and a traceback of
 * guest frames only. */
CC_EXPORT const char *cc_result_error_type(const cc_result *r);
CC_EXPORT const char *cc_result_error_message(const cc_result *r);
CC_EXPORT const char *cc_result_error_traceback(const cc_result *r);
/* ---- displays: rich output of an eval, in the order it was made ----
 *
 * Each display is a small MIME bundle: a map (borrowed from r) whose keys
 * are among "image/png" (BYTES, a PNG file: the supervisor checks the
 * signature), "image/svg+xml", "text/html", "text/plain" and
 * "application/json" (STRING; JSON text for the last). A Python guest
 * makes them with display(obj) (objects with _repr_png_, _repr_svg_,
 * _repr_html_ or _repr_json_, Pillow images, matplotlib figures), with
 * matplotlib figures still open when the eval ends or passed to
 * plt.show() (PNG, Agg backend), and with a last value that is a pandas
 * DataFrame or Series (text/html); a JavaScript guest with
 * display(value, mimeType). A result carries at most CC_MAX_DISPLAYS of
 * them, and their bytes count toward limits.max_result together with the
 * value: more displays, or more bytes, end the eval as output_limit (the
 * result then keeps the displays that fitted). Error results carry the
 * displays made before the error. */
#define CC_MAX_DISPLAYS 64
/* How many displays r carries (0 for NULL). */
CC_EXPORT size_t cc_result_display_count(const cc_result *r);
/* Display i (0-based) as a map of MIME type to data, borrowed from r;
 * NULL when i >= cc_result_display_count(r). */
CC_EXPORT const cc_value *cc_result_display(const cc_result *r, size_t i);
/* The data of one MIME type of display i (borrowed; not NUL-terminated
 * for image/png, NUL-terminated UTF-8 for the text types), its length in
 * bytes in *len (len may be NULL); NULL when display i or that type is
 * absent. */
CC_EXPORT const char *cc_result_display_data(const cc_result *r, size_t i, const char *mime,
					     size_t *len);
/* Wall-clock time of the eval as seen by the supervisor, seconds. */
CC_EXPORT double cc_result_duration(const cc_result *r);
CC_EXPORT void cc_result_free(cc_result *r);

/* ---- host tools ----
 *
 * A tool is a host function the guest may call by name: as a global
 * function (`lookup('A1')`, synchronous in both languages) and through the
 * `tools` namespace (JavaScript: `await tools.lookup('A1')` returns a
 * Promise, so Promise.all runs calls concurrently; Python: `tools.lookup()`
 * is synchronous and `await atools.lookup()` is the awaitable form for
 * asyncio.gather). `tools`/`atools` exist once a tool is bound; an
 * unbound name is a TypeError (JavaScript) or AttributeError (Python) in
 * the guest, and ToolNotFoundError if a worker asks the supervisor for it.
 * Arguments arrive as one array value; results and
 * arguments follow the value rules and caps above. A tool has host
 * authority: it runs in the host process, on the thread that called
 * cc_runtime_eval, while that eval waits; the eval's deadline covers it
 * (except while an asynchronous call is held for approval:
 * cc_tool_call_hold). */

/* A tool's failure, reported to the guest as an Error (JavaScript) or
 * exception (Python) named `name` with `message`. Set with cc_tool_fail
 * or cc_tool_fail_bases; the library allocates it (never declare one). */
typedef struct cc_tool_error {
	char *name;    /* owned by the library */
	char *message; /* owned by the library */
	char *bases;   /* owned by the library; comma-separated, or NULL */
} cc_tool_error;

/* Fill err with a name (e.g. "PermissionError"; NULL = "Error") and a
 * printf-formatted message. Returns -1, so a tool can `return
 * cc_tool_fail(err, ...)`. */
CC_EXPORT int cc_tool_fail(cc_tool_error *err, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* cc_tool_fail, and the guest's class for `name` also derives from the
 * builtin exception classes named in bases (borrowed, copied): a
 * comma-separated list such as "OSError,ValueError" (a host's
 * io.UnsupportedOperation), so `except OSError` and `except ValueError`
 * both catch it. Python guests only (JavaScript has one base: Error);
 * names that are not identifiers, past the 8th, or that the guest's
 * builtins lack as an Exception class are dropped, and bases that cannot
 * be combined (instance layout conflict) are dropped from the end. Has
 * no effect when `name` is itself a builtin class. NULL = none. */
CC_EXPORT int cc_tool_fail_bases(cc_tool_error *err, const char *name, const char *bases,
				 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A tool. args: the guest's arguments, an array value (borrowed, valid for
 * the call). On success return 0 and set *result to an owned value (the
 * library takes it; NULL = null). On failure return -1 after cc_tool_fail
 * (a tool that returns -1 without it fails as "Error"; the message reaches
 * the guest cut to 4 KiB). Must not call cc_runtime_eval, set_global or
 * bind_tool on the same runtime (refused as invalid_input). A call that
 * arrives after the eval's deadline never reaches the tool. */
typedef int (*cc_tool_fn)(void *user, const cc_value *args, cc_value **result, cc_tool_error *err);

/* Make tool `name` (an identifier: [A-Za-z_][A-Za-z0-9_]*) callable by the
 * runtime's guest. Borrows name; user is passed to fn as is. Binding a name
 * again replaces the function. Errors: invalid_input (bad name, NULL fn,
 * called from inside a tool), guest_error (the name clashes with something
 * the guest has, e.g. a JavaScript `const`), worker_crashed. */
CC_EXPORT int cc_runtime_bind_tool(cc_runtime *rt, const char *name, cc_tool_fn fn, void *user,
				   cc_error *err);

/* Keyword arguments. A Python guest may call a tool with keywords
 * (`lookup(sku="A1")`); JavaScript passes positional arguments only. A
 * tool bound with cc_runtime_bind_tool or cc_runtime_bind_tool_async takes
 * positional arguments only: a call with keywords never reaches it (the
 * guest gets a TypeError; the call is not counted against a budget). A
 * tool bound with a _kw function below gets them as kwargs: a map value
 * (string keys, values under the same rules and caps as args; borrowed,
 * valid for the call) or NULL when the guest passed none. */
typedef int (*cc_tool_kw_fn)(void *user, const cc_value *args, const cc_value *kwargs,
			     cc_value **result, cc_tool_error *err);

/* cc_runtime_bind_tool for a tool that takes keyword arguments (same name
 * rules, errors, replacement and guest functions). */
CC_EXPORT int cc_runtime_bind_tool_kw(cc_runtime *rt, const char *name, cc_tool_kw_fn fn,
				      void *user, cc_error *err);

/* ---- deferred (asynchronous) tool replies ----
 *
 * A synchronous tool blocks the eval's thread until it returns, so calls the
 * guest makes concurrently (Promise.all, asyncio.gather) still run one after
 * another on the host. An asynchronous tool answers later instead: it is
 * handed a pending call and returns at once; the supervisor keeps reading
 * the worker's frames (more calls, output) and sends each answer as it
 * comes, in any order. The worker already sends every call of a fan-out
 * before it waits, so the host functions run concurrently.
 *
 * A pending call is owned by the host from the moment fn receives it until
 * it is answered, exactly once, with cc_tool_call_return or
 * cc_tool_call_fail, which free it. Answering is thread-safe and may happen
 * inside fn, on another thread, after the eval ended or after the runtime
 * was closed (the answer is then dropped). A call never answered is leaked
 * and its eval waits for it until its deadline (timeout). When the eval
 * ends, its unanswered calls are cancelled (cc_tool_call_on_cancel).
 *
 * At most limits.max_pending_calls (64 by default) asynchronous calls of
 * one runtime are unanswered at a time, counted by the supervisor: a call
 * beyond that fails in the guest at once with a "ToolConcurrencyError"
 * naming the cap, without reaching the host or its budget (the guest may
 * catch it and call again after some answers came). Budgets, the
 * deadline check before the host is reached, redaction and the result caps
 * apply exactly as for synchronous tools. */
typedef struct cc_tool_call cc_tool_call;

/* An asynchronous tool. args: the guest's arguments, an array value,
 * borrowed for the duration of this call only (copy what is needed later).
 * Runs on the eval's thread like a synchronous tool; must not call into the
 * same runtime. */
typedef void (*cc_tool_async_fn)(void *user, const cc_value *args, cc_tool_call *call);

/* Bind an asynchronous tool: like cc_runtime_bind_tool (same name rules,
 * same errors, same guest functions), but fn answers through the pending
 * call. Binding a name again replaces the tool, of either kind. */
CC_EXPORT int cc_runtime_bind_tool_async(cc_runtime *rt, const char *name, cc_tool_async_fn fn,
					 void *user, cc_error *err);

/* An asynchronous tool that takes keyword arguments: kwargs as for
 * cc_tool_kw_fn (NULL = none), borrowed for the duration of this call
 * only, like args. */
typedef void (*cc_tool_async_kw_fn)(void *user, const cc_value *args, const cc_value *kwargs,
				    cc_tool_call *call);
CC_EXPORT int cc_runtime_bind_tool_async_kw(cc_runtime *rt, const char *name,
					    cc_tool_async_kw_fn fn, void *user, cc_error *err);

/* Answer a pending call with value (takes ownership; NULL = null). Frees
 * call. Returns 0 when the answer was queued for the eval, 1 when it was
 * dropped because the eval it belongs to is over (or the runtime is
 * closed), -1 when call is NULL. A value that cannot cross the boundary
 * reaches the guest as a "ToolResultError", as for synchronous tools. */
CC_EXPORT int cc_tool_call_return(cc_tool_call *call, cc_value *value);

/* Answer a pending call with a failure named `name` (NULL = "Error") and a
 * printf-formatted message, as cc_tool_fail does. Frees call. Returns as
 * cc_tool_call_return. */
CC_EXPORT int cc_tool_call_fail(cc_tool_call *call, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* cc_tool_call_fail with builtin base names, as cc_tool_fail_bases. */
CC_EXPORT int cc_tool_call_fail_bases(cc_tool_call *call, const char *name, const char *bases,
				      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Ask to be told when the call's eval ends before the call is answered:
 * fn(data) then runs exactly once, on the eval's thread, as the eval ends
 * for any reason (result, guest error, timeout, worker crash, interrupt,
 * cc_runtime_close). Use it to stop the host work behind the call. The
 * call must still be answered afterwards (the answer is dropped), or from
 * inside fn. Call it from the tool function itself (the eval's thread),
 * before answering; borrows data, which must stay valid until fn ran or
 * the call was answered: an answer given on another thread while fn runs
 * returns only once fn has returned, so data may be freed right after
 * answering. fn must therefore not wait for a thread that may be
 * answering one of the eval's calls, and must not call into the runtime.
 * NULL fn clears it. */
CC_EXPORT void cc_tool_call_on_cancel(cc_tool_call *call, void (*fn)(void *data), void *data);

/* Hold a pending call for approval: the call waits for a person (send an
 * email, pay), so the time it waits must not count toward the eval's
 * deadline. While at least one call of the eval is held, the eval's
 * deadline clock is stopped (in the supervisor, and the worker's own
 * copy follows) and the wait is bounded instead by approval_timeout_s
 * (seconds, in (0, CC_MAX_TIMEOUT_S]) from now, the earliest of the held calls'
 * if several are held; when no held call is left unanswered the clock
 * runs again with the time it had left. When an approval timeout passes
 * first, the clock runs again with no time left: the eval ends as
 * timeout, with a message that names the approval timeout (the runtime
 * stays usable when the engine stopped the code, as for any timeout);
 * later holds in that eval have no effect, and the calls are cancelled as
 * the eval ends. The guest is not frozen while it waits: code that does
 * not await the call at once keeps running, bounded by the approval
 * timeout, limits.cpu_s and its own copy of the deadline. Call it from
 * the tool function (the eval's thread), before answering; answer the
 * call as usual (cc_tool_call_return/_fail), from any thread. Returns 0,
 * or -1 when call is NULL, already answered or not of the open eval, or
 * approval_timeout_s is out of range (nothing changes). */
CC_EXPORT int cc_tool_call_hold(cc_tool_call *call, double approval_timeout_s);

/* The host has decided on a held call (to run its tool, to deny it, to
 * answer it some other way): it stops waiting for approval, so its
 * approval timeout no longer applies and the eval's clock runs again
 * (once no other call is held); the tool's own time then counts toward
 * the eval's deadline, as for any call. Call it before doing the work,
 * from any thread; answer the call afterwards as usual. Returns 0, or -1
 * when the call's approval timeout has passed, by its own deadline and
 * this call's reading of the clock (the eval is then being stopped with
 * the approval timeout's TimeoutError: do not run the tool; an answer is
 * dropped), or call is NULL, not held, answered or not of the open eval.
 * The supervisor's check of the approval timeout and this one are made
 * under one lock: exactly one of them wins. */
CC_EXPORT int cc_tool_call_unhold(cc_tool_call *call);

/* A call budget: how many tool calls may reach the host, in total and per
 * tool. One budget can be shared by several runtimes (of either language);
 * it is thread-safe and reference-counted. A call over budget never
 * reaches the host: the guest gets a catchable error named
 * "ToolBudgetError". */
typedef struct cc_budget cc_budget;

/* A new budget of max_calls calls in total (UINT64_MAX = no total limit).
 * Returns an owned reference (release with cc_budget_unref), or NULL when
 * out of memory. */
CC_EXPORT cc_budget *cc_budget_new(uint64_t max_calls);
/* Also limit calls of one tool (copies the name). Returns 0, or -1 when
 * out of memory. */
CC_EXPORT int cc_budget_limit_tool(cc_budget *b, const char *tool, uint64_t max_calls);
/* The longest hint cc_budget_set_hint takes, bytes. */
#define CC_BUDGET_HINT_MAX 200
/* What the guest's ToolBudgetError message tells it to raise, after "the
 * total tool call budget of N calls is used up; " (total) or "the
 * per-tool tool call budget of N calls is used up for TOOL; " (per_tool):
 * the host's own option, e.g. "raise ToolBridge(max_calls=N)" (the Python
 * package) or "raise --max-tool-calls". That message is also the one an
 * uncaught ToolBudgetError brings back to the host (tool_budget). Each is
 * copied; NULL for none (the message then ends after "used up"), which is
 * the default; a later call replaces both. Returns 0, or -1 when b is
 * NULL, a hint is empty, longer than CC_BUDGET_HINT_MAX or not UTF-8, or
 * out of memory (nothing changes). Thread-safe. */
CC_EXPORT int cc_budget_set_hint(cc_budget *b, const char *total, const char *per_tool);
CC_EXPORT uint64_t cc_budget_calls_made(const cc_budget *b);
/* Calls left in the total (UINT64_MAX when unlimited). */
CC_EXPORT uint64_t cc_budget_calls_remaining(const cc_budget *b);
CC_EXPORT cc_budget *cc_budget_ref(cc_budget *b);
CC_EXPORT void cc_budget_unref(cc_budget *b);

/* Count the runtime's tool calls against b (takes a reference; NULL = no
 * budget, the default). Replaces a previous budget. */
CC_EXPORT void cc_runtime_set_budget(cc_runtime *rt, cc_budget *b);

/* Count the calls of tool `name`, bound on rt, against b instead of the
 * runtime's budget (takes a reference; NULL = the runtime's budget again),
 * so that tools from different owners sharing a runtime keep separate
 * budgets (the Python package's ToolBridge). Survives rebinding the name.
 * Borrows name. Errors: invalid_input (no tool of that name is bound, or
 * called while the runtime runs a request). */
CC_EXPORT int cc_runtime_set_tool_budget(cc_runtime *rt, const char *name, cc_budget *b,
					 cc_error *err);

/* What the guest sees instead of a failing tool's message when the call
 * is redacted (the error's name still reaches it). */
#define CC_REDACTED_MESSAGE "the host tool failed (details are not shown to guest code)"

/* Redaction: when on, a failing tool's message never reaches the guest,
 * only its name and CC_REDACTED_MESSAGE; a tool's own setting
 * (cc_runtime_set_tool_redaction) wins over this one. The supervisor
 * decides it as the call fails, also for a value that cannot cross (a
 * ToolResultError). Off by default in the library; the MCP server turns it
 * on for every runtime and off for the tools of its --upstream servers,
 * whose errors the guest needs to see. */
CC_EXPORT void cc_runtime_set_redaction(cc_runtime *rt, bool redact);

/* Redaction of one tool `name` bound on rt, beside its budget
 * (cc_runtime_set_tool_budget): redact 1 hides a failing call's message
 * from the guest, 0 shows it whatever cc_runtime_set_redaction says, -1
 * (the default) follows cc_runtime_set_redaction. Survives rebinding the
 * name; a call already made keeps the setting it had. Borrows name.
 * Errors: invalid_input (redact is not -1, 0 or 1, no tool of that name
 * is bound, or called while the runtime runs a request). */
CC_EXPORT int cc_runtime_set_tool_redaction(cc_runtime *rt, const char *name, int redact,
					    cc_error *err);

/* Guest output, line by line, as it arrives during an eval (in addition to
 * the captured text in the result). fd is 1 or 2; line is borrowed, without
 * its newline, at most the stream's cap in total per eval (the captured
 * text's cap applies). A last line without a newline is delivered when the
 * eval ends. Output streams: the worker sends what the guest wrote at each
 * newline or explicit flush (Python's flush(), print(flush=True)), within
 * about 20 ms even while the guest then sleeps or computes, and at most
 * one frame per 20 ms plus one per 64 KiB, so a flood arrives as a few
 * large batches of lines. fn runs on the eval's thread, inside
 * cc_runtime_eval; to stop the eval from it, call cc_runtime_interrupt
 * (the eval then ends with worker_crashed, the runtime dead). NULL fn
 * turns it off. */
typedef void (*cc_output_fn)(void *user, int fd, const char *line, size_t len);
CC_EXPORT void cc_runtime_set_output_handler(cc_runtime *rt, cc_output_fn fn, void *user);

/* Told when the worker is about to block until a tool call is answered:
 * fn(user) runs on the eval's thread each time a "wait" frame arrives,
 * after the call frames the worker sent before it (so a host that shows
 * a guest's pending calls to a person knows the fan-out is complete, e.g.
 * Promise.all). A hint from the worker, which may lie or stay silent (a
 * guest still computing sends none): never base a limit on it. NULL fn
 * turns it off. fn must not call into the runtime. */
CC_EXPORT void cc_runtime_set_wait_handler(cc_runtime *rt, void (*fn)(void *user), void *user);

/* The same stream in batches, for a front end that passes output through
 * (the CLI, the MCP server): fn(user, fd, text, len) gets every complete
 * line the worker sent in one frame at once, newlines kept, and at the
 * eval's end what is left (a last line without its newline, as written).
 * text is borrowed, repaired UTF-8. So a flood costs one call per frame,
 * not per line, and the bytes passed through add up to the captured text
 * (less the truncation marker). Runs before the line handler for the
 * same lines, on the eval's thread. NULL fn turns it off. */
CC_EXPORT void cc_runtime_set_output_text_handler(cc_runtime *rt, cc_output_fn fn, void *user);

/* A process id in the caller's pid namespace, for monitoring from
 * outside (memory, CPU): for a forked session, the process running the
 * guest; for a spawned worker, the process the library started (with
 * namespaces, the guest runs in its child). Signal it only through the
 * library. -1 when the worker is gone. */
CC_EXPORT int cc_runtime_pid(const cc_runtime *rt);

/* ---- files between evals ----
 *
 * The host moves files in and out of a session between evals (never while
 * an eval runs on the runtime). The worker serves them inside its confined
 * view, so the same mount, Landlock and seccomp rules bind them. A path is
 * an absolute guest path under scratch (/tmp) or a grant: writable ones for
 * writes, any for reads and listings; a path with a ".." component, or
 * one that leaves those trees (also through a symlink), is refused. */

/* Create or replace the file guest_path with len bytes of data (borrowed).
 * Parent directories must exist. Errors: invalid_input (path not absolute,
 * has "..", not under scratch or a writable grant: the message names
 * RuntimeConfig(scratch=...)/cc_options.scratch_bytes or a writable mount;
 * len over the per-file cap; no space left), worker_crashed,
 * protocol_violation, timeout (limits.timeout_s). */
CC_EXPORT int cc_runtime_write_file(cc_runtime *rt, const char *guest_path, const void *data,
				    size_t len, cc_error *err);

/* Read the file guest_path (under scratch or any grant). At most max_bytes
 * (0 = limits.max_result) are read; a longer file is refused as
 * output_limit. On success *data is malloc'd (the caller frees it; one
 * extra NUL byte follows, not counted in *len). Errors: invalid_input (bad
 * path, no such file, a directory), output_limit, worker_crashed,
 * protocol_violation, timeout. */
CC_EXPORT int cc_runtime_read_file(cc_runtime *rt, const char *guest_path, uint64_t max_bytes,
				   void **data, size_t *len, cc_error *err);

/* List guest_dir recursively (symlinks not followed; by name within each
 * directory, a directory before what it holds): *listing is an owned
 * array value (free with cc_value_free) of maps {path: string (guest
 * path), size: int (bytes), mtime: float (seconds since the epoch), dir:
 * bool}, at most 10,000 entries (more: output_limit). Errors as
 * cc_runtime_read_file. */
CC_EXPORT int cc_runtime_list_files(cc_runtime *rt, const char *guest_dir, cc_value **listing,
				    cc_error *err);

/* ---- fork server and pools: fast sessions ----
 *
 * A fork server is one template worker, confined once (every layer of
 * cc_runtime_new, with a seccomp filter that also lets it fork) with its
 * engine started and, for Python, modules imported. Each session is a
 * fork of it that adds its own layers before any guest code runs: a
 * Landlock domain of its own (signals and abstract sockets scoped to the
 * session, so it cannot reach the template or a sibling) and the
 * engine's seccomp filter (no fork, nothing the template needed); the
 * supervisor signals it through a pidfd. Sessions share no writable
 * state; they do share the template's address-space layout and Python's
 * hash secret (SECURITY.md). Random generators are reseeded per session.
 * A forked session is an ordinary cc_runtime: evaluate, bind tools and
 * close it as any other. Its start-up cost is fork() plus those two
 * layers instead of an exec, confinement and engine start. */
typedef struct cc_forkserver cc_forkserver;

/* Start a fork server for opts (language, sandbox mode, limits; every
 * session gets these). preload: Python modules the template imports,
 * comma-separated, a trailing '?' marking one that may be missing; NULL
 * gives "json,re,math,datetime,collections,itertools,functools,numpy?,
 * pandas?" ("" for none; JavaScript ignores it); "matplotlib" imports
 * matplotlib.pyplot (Agg) too. An optional module that does not import is
 * dropped and listed, with why, by cc_forkserver_preload_skipped. Takes as
 * long as cc_runtime_new plus the imports. *out is owned by the caller
 * (close with cc_forkserver_close). opts->mounts and opts->python_path are
 * resolved and bound once, in the template: every session sees them. With scratch (scratch_bytes or
 * max_file_size), each session mounts a private tmpfs of that size on
 * /tmp in a mount namespace of its own, before any guest code; no session
 * sees another's. Errors: those of cc_runtime_new; invalid_input for a
 * preload module that fails to import (the message names it);
 * sandbox_unavailable for scratch on a host without namespaces, and for
 * an opts->max_sessions whose descriptors the process's hard
 * RLIMIT_NOFILE cannot hold (the message names both); invalid_input for
 * max_sessions out of range. */
CC_EXPORT int cc_forkserver_new(const cc_options *opts, const char *preload, cc_forkserver **out,
				cc_error *err);

/* A new session forked from the template; *out is an owned runtime (close
 * with cc_runtime_close). Thread-safe, also against a cc_forkserver_close
 * in another thread (the call holds its own reference): concurrent calls
 * take turns on the template's channel. err may be NULL. Errors:
 * worker_crashed (the template is gone; start a new fork server),
 * sandbox_unavailable (the session could not add its layers, or a quota
 * the server's sessions share is full, named in the message: max_sessions
 * live sessions (cc_options.max_sessions), RLIMIT_NPROC for their
 * processes and threads, RLIMIT_SIGPENDING for their queued signals and
 * timers, the template's or the host's RLIMIT_NOFILE; refused at once,
 * the live sessions unaffected; close sessions, raise max_sessions or
 * start another fork server), internal, timeout, protocol_violation (a
 * malformed reply: the template is closed). */
CC_EXPORT int cc_forkserver_spawn(cc_forkserver *fs, cc_runtime **out, cc_error *err);

/* The confinement report every session has (with scratch, "landlock" is each session's own domain:
 * its template enters none, SECURITY.md). Borrowed; valid until the close. */
CC_EXPORT const cc_sandbox_report *cc_forkserver_sandbox(const cc_forkserver *fs);

/* The optional preload modules ("name?") the template dropped because they
 * did not import, one a line: "name: Type: message" (e.g. "matplotlib:
 * ModuleNotFoundError: No module named 'matplotlib'"), at most 32 lines;
 * NULL when none was dropped (or fs is NULL). Borrowed; valid until the
 * close. Python only (JavaScript templates preload nothing). */
CC_EXPORT const char *cc_forkserver_preload_skipped(const cc_forkserver *fs);

/* Let go of the fork server. Sessions still open keep its template alive
 * (they live in its pid namespace) until the last of them is closed. */
CC_EXPORT void cc_forkserver_close(cc_forkserver *fs);

/* Let go of the library-wide fork servers of cc_options.fork_server (their
 * live sessions keep them until closed); the next such cc_runtime_new
 * starts a new one, also for a key whose template had failed. Thread-safe;
 * call it before exit to end the templates at once (they also end when
 * the process does). After fork() a child never uses its parent's. */
CC_EXPORT void cc_forkserver_shared_close(void);

/* The library-wide templates running now: their count, with up to max of
 * their pids (host pid namespace) in pids (may be NULL). For tests and
 * monitoring. */
CC_EXPORT size_t cc_forkserver_shared_pids(int *pids, size_t max);

/* A pool: up to `size` ready sessions (1..1024), kept full by a thread of
 * the pool's own, from a fork server (fork_server true, preload as for
 * cc_forkserver_new) or by cc_runtime_new. A checked-out session belongs
 * to the caller and never returns to the pool: close it with
 * cc_runtime_close, and the pool makes a fresh one, so no state crosses
 * between users. Each session has its own scratch, forked or spawned.
 * opts->mounts are copied (and resolved by each start). *out is owned
 * (close with cc_pool_close). With fork_server, the ready sessions and
 * the checked-out ones still open together count against the fork
 * server's opts->max_sessions: past it the filler's refusal
 * (sandbox_unavailable naming max_sessions) is what cc_pool_checkout
 * reports, at once, until a session is closed. Errors: those of
 * cc_forkserver_new (started here, so a host that cannot confine says so
 * now); invalid_input (size out of range or, with fork_server, over
 * max_sessions; bad mounts); internal. */
typedef struct cc_pool cc_pool;
CC_EXPORT int cc_pool_new(const cc_options *opts, unsigned size, bool fork_server,
			  const char *preload, cc_pool **out, cc_error *err);

/* Take a ready session, waiting up to timeout_s seconds (0: only if one
 * is ready now) for the pool's thread to make one. Thread-safe. A session
 * that died while waiting in the pool is never handed out; a template
 * that died is replaced by a new fork server. Errors: timeout (none
 * became ready in time); the kind of the pool thread's last failure when
 * it kept failing until the timeout, or at once for a lasting one
 * (sandbox_unavailable, protocol_violation); invalid_input (bad timeout,
 * or the pool was closed meanwhile by another thread). */
CC_EXPORT int cc_pool_checkout(cc_pool *p, double timeout_s, cc_runtime **out, cc_error *err);

/* Sessions ready to check out right now. */
CC_EXPORT unsigned cc_pool_ready(cc_pool *p);

/* Stop the pool's thread and close the sessions it holds; waits for
 * checkouts in other threads to return (with invalid_input). Checked-out
 * sessions stay usable until their own close. */
CC_EXPORT void cc_pool_close(cc_pool *p);

#include "codecage_deps.h" /* dependencies: cc_deps_options, cc_deps_resolve */
#include "codecage_net.h"  /* the network API: allow-list, hooks, cc_runtime_set_net */

#ifdef __cplusplus
}
#endif
#endif /* CODECAGE_H */
