/* codecage_deps.h: dependencies on demand, the packages a piece of code
 * asks for (cc_options.dependencies), installed by the host from a lock,
 * cached by the lock's hash, granted read-only. Included by codecage.h,
 * inside its extern "C" block and after cc_options, cc_runtime and
 * cc_error; include codecage.h, not this file. */
#ifndef CODECAGE_DEPS_H
#define CODECAGE_DEPS_H
#ifndef CODECAGE_H
#error "include codecage.h, not codecage_deps.h"
#endif

/* ---- how dependencies are installed ----
 *
 * The host resolves them, never the worker, which never gains a network
 * for this: libcodecage runs its helper program (codecage-deps, beside the
 * workers) with the guest's own interpreter, Debian's /usr/bin/python3.11.
 *
 * Python: pip resolves the specs for that interpreter against the guest's
 * package set (the standard library and Debian's dist-packages), wheels
 * only (--only-binary :all:: no package's code runs at install), from
 * pip's configured index (pip.conf, PIP_INDEX_URL) or index_url, and no
 * other network. A package Debian already has is taken from there unless
 * the request needs another version. What is left to install, pinned with
 * each wheel's sha256, is the lock; the lock's hash names the cache folder
 * (py-HASH), filled by pip --no-deps --require-hashes --target. With a
 * lock_file (pip requirements with --hash lines), pip resolves that file
 * under --require-hashes, and every package named in dependencies must
 * be pinned in it.
 *
 * JavaScript: npm resolves a package.json of the specs into a
 * package-lock.json (from npm's configured registry or registry), whose
 * entries and integrity hashes are the lock (js-HASH), filled by npm ci
 * --ignore-scripts: no install script runs. A lock_file is a
 * package-lock.json, used as it is.
 *
 * The cache: a folder per lock, made in a temporary folder and renamed
 * into place under the lock's flock, so two processes installing the same
 * lock at once install it once. A runtime holds a shared flock on its
 * lock's folder for as long as it lives; after an install, the least
 * recently used folders nobody holds are removed until the cache is under
 * max_cache_bytes. A request resolved within refresh_s is not resolved
 * again (in this process, the same request is served from memory, so a
 * second runtime with the same dependencies costs no more than one
 * without: forked from the same fork server template, which the folder
 * keys, as any python_path folder does). The guest sees only its own
 * lock's folder, read-only (a python_path grant at
 * /codecage/python-path/N); a JavaScript guest sees none of it (the host
 * reads the bundles).
 *
 * PEP 723: a "# /// script" block in Python code lists the dependencies
 * it needs (cc_script_dependencies reads it). A front end that starts a
 * runtime for a piece of code adds them to cc_options.dependencies (the
 * CLI, the MCP server); cc_runtime_eval of code whose block names a
 * package the runtime was not started with is invalid_input naming it. */

/* The most specs in cc_options.dependencies. */
#define CC_MAX_DEPENDENCIES 64

typedef struct cc_deps_options {
	/* The cache folder; NULL = cc_deps_default_cache(). Created (0755)
	 * if missing; the worker's user must be able to reach it (the
	 * folders on the way searchable). */
	const char *cache_dir;
	/* The cache's size: after an install, folders nobody uses go, least
	 * recently used first, until the cache holds at most this many
	 * bytes; 4 GiB. */
	uint64_t max_cache_bytes;
	/* One lock's installed files, bytes; more is refused (invalid_input)
	 * and nothing is kept; 1 GiB. */
	uint64_t max_install_bytes;
	/* Resolving and installing, seconds, in (0, CC_MAX_TIMEOUT_S]; past
	 * it pip or npm is killed and the call fails (invalid_input); 300. */
	double timeout_s;
	/* Seconds a resolved request is reused without asking the index
	 * again (an unpinned "polars" stays at the version it resolved to
	 * for that long); 86400; 0 = resolve every time. */
	double refresh_s;
	/* Package names the guest may ask for (NULL/0: any): every name in
	 * dependencies must be in it (pip names compared normalised, PEP
	 * 503); what they need is not checked against it. */
	const char *const *allow;
	size_t n_allow;
	/* Package names never installed, asked for or needed by one (NULL/0:
	 * none). */
	const char *const *deny;
	size_t n_deny;
	/* pip's --index-url (e.g. a mirror, or file:///DIR/simple); NULL =
	 * pip's configuration. */
	const char *index_url;
	/* npm's --registry; NULL = npm's configuration. */
	const char *registry;
	/* A lock file (see above): read by the call that resolves (at most
	 * 1 MiB), its bytes part of the request. NULL = none. */
	const char *lock_file;
} cc_deps_options;

/* Fill *o with the defaults given above. */
CC_EXPORT void cc_deps_options_init(cc_deps_options *o);

/* The default cache folder, as a heap string the caller frees:
 * $XDG_CACHE_HOME/codecage/deps, else $HOME/.cache/codecage/deps; for
 * root, /var/cache/codecage/deps (a root home is closed to the worker's
 * user, nobody). NULL when none can be named (no HOME) or out of memory. */
CC_EXPORT char *cc_deps_default_cache(void);

/* An installed lock, reference-counted: a runtime holds one. */
typedef struct cc_deps cc_deps;

/* Resolve and install opts->dependencies for opts->language under
 * opts->deps (NULL: the defaults), as cc_runtime_new does before a
 * worker starts; blocks for up to the policy's timeout_s on a miss.
 * Borrows opts. On success *out is owned (cc_deps_free); it holds the
 * lock's folder in the cache (shared flock) until freed. No dependencies
 * is not an error: *out then installs nothing (cc_deps_path NULL).
 * Errors: invalid_input (a bad spec or policy, a refused or failed
 * install: the message names the package and pip's or npm's reason),
 * internal (the helper is missing or broke). */
CC_EXPORT int cc_deps_resolve(const cc_options *opts, cc_deps **out, cc_error *err);

/* The lock's cache key ("py-" or "js-" and 64 hex digits; "" when nothing
 * was installed: Debian had all of it). Borrowed; valid until the free. */
CC_EXPORT const char *cc_deps_key(const cc_deps *d);
/* The installed folder on the host (Python: what the guest imports from;
 * JavaScript: the node_modules the bundles are read from), or NULL when
 * nothing was installed. Borrowed. */
CC_EXPORT const char *cc_deps_path(const cc_deps *d);
/* What resolving and installing said (pip's or npm's output, what came
 * from Debian, the time it took, or "cached (KEY): ..."), UTF-8.
 * Borrowed. */
CC_EXPORT const char *cc_deps_log(const cc_deps *d);
/* The packages of the lock, "name==version" (Python) or "name@version",
 * comma-separated ("" for none). Borrowed. */
CC_EXPORT const char *cc_deps_packages(const cc_deps *d);
/* Whether no install was needed (the lock was in the cache). */
CC_EXPORT bool cc_deps_cached(const cc_deps *d);
/* Drop the caller's reference (NULL is fine). */
CC_EXPORT void cc_deps_free(cc_deps *d);

/* The dependencies a runtime was started with (its own, or for a forked
 * session its fork server's); NULL without any. Borrowed from rt. */
CC_EXPORT const cc_deps *cc_runtime_deps(const cc_runtime *rt);

/* The dependencies of the PEP 723 "# /// script" block of Python code
 * (len bytes, borrowed): *specs an owned NULL-terminated array of its
 * strings (free with cc_script_dependencies_free), *n their count; both
 * NULL/0 when the code has no block or the block lists none. Errors:
 * invalid_input (two blocks, bad TOML, a dependencies value that is not
 * a list of strings, a requires-python the guest's 3.11 does not meet),
 * internal (the helper is missing). Runs the helper only when the code
 * has a line "# /// script". */
CC_EXPORT int cc_script_dependencies(const char *code, size_t len, char ***specs, size_t *n,
				     cc_error *err);
CC_EXPORT void cc_script_dependencies_free(char **specs);

#endif /* CODECAGE_DEPS_H */
