/* The dependency flags shared by `codecage run`/`eval` (cli/main.c) and
 * `codecage mcp` (mcp/server/main.c): parsed here, once, into a cc_deps_options
 * whose ranges the library checks (cc_options_check), so a flag means the
 * same in both. `--dependency SPEC` is the CLI's own (the MCP server takes
 * the model's, in each call's `dependencies` argument). */
#ifndef CC_CLI_DEPS_FLAGS_H
#define CC_CLI_DEPS_FLAGS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include "codecage.h"

/* getopt_long values of the flags (above any character). */
enum {
	CC_DF_DEPENDENCY = 0x2000,
	CC_DF_ALLOW_DEPS,
	CC_DF_CACHE,
	CC_DF_ALLOW_PKG,
	CC_DF_DENY_PKG,
	CC_DF_MAX_INSTALL,
	CC_DF_MAX_CACHE,
	CC_DF_TIMEOUT,
	CC_DF_REFRESH,
	CC_DF_LOCK,
	CC_DF_INDEX,
	CC_DF_REGISTRY,
};

/* The getopt_long entries both commands list. */
#define CC_DEPS_FLAG_OPTIONS                                                                       \
	{ "allow-dependencies", no_argument, NULL, CC_DF_ALLOW_DEPS },                             \
		{ "deps-cache", required_argument, NULL, CC_DF_CACHE },                            \
		{ "deps-allow", required_argument, NULL, CC_DF_ALLOW_PKG },                        \
		{ "deps-deny", required_argument, NULL, CC_DF_DENY_PKG },                          \
		{ "deps-max-install", required_argument, NULL, CC_DF_MAX_INSTALL },                \
		{ "deps-max-cache", required_argument, NULL, CC_DF_MAX_CACHE },                    \
		{ "deps-timeout", required_argument, NULL, CC_DF_TIMEOUT },                        \
		{ "deps-refresh", required_argument, NULL, CC_DF_REFRESH },                        \
		{ "deps-lock", required_argument, NULL, CC_DF_LOCK },                              \
		{ "deps-index-url", required_argument, NULL, CC_DF_INDEX },                        \
	{                                                                                          \
		"deps-registry", required_argument, NULL, CC_DF_REGISTRY                           \
	}

/* The usage lines both commands print for them. */
#define CC_DEPS_FLAG_USAGE                                                                         \
	"Dependencies (README \"Dependencies\"): --allow-dependencies lets the code ask for\n"     \
	"packages (a PEP 723 '# /// script' block; in codecage mcp also each call's\n"             \
	"dependencies argument), installed by the host with pip (wheels only) or npm\n"            \
	"(--ignore-scripts), cached in --deps-cache DIR (default ~/.cache/codecage/deps,\n"        \
	"/var/cache/codecage/deps as root) and granted read-only. Policy: --deps-allow NAME\n"     \
	"and --deps-deny NAME (repeatable), --deps-max-install MIB (one install; 1024),\n"         \
	"--deps-max-cache MIB (the cache, least recently used first; 4096), --deps-timeout\n"      \
	"SECONDS (300), --deps-refresh SECONDS (reuse a resolution; 86400), --deps-lock FILE\n"    \
	"(pip requirements with --hash, or a package-lock.json), --deps-index-url URL\n"           \
	"(pip), --deps-registry URL (npm).\n"

#define CC_DEPS_FLAG_LIST_MAX 256

struct cc_deps_flags {
	cc_deps_options o;			/* .allow and .deny point into the arrays below */
	bool allowed;				/* --allow-dependencies */
	bool set;				/* any dependency flag was given */
	const char *specs[CC_MAX_DEPENDENCIES]; /* --dependency, in order */
	size_t n_specs;
	const char *allow[CC_DEPS_FLAG_LIST_MAX], *deny[CC_DEPS_FLAG_LIST_MAX];
};

/* The defaults (cc_deps_options_init). f must stay put afterwards (its
 * options point into it). */
void cc_deps_flags_init(struct cc_deps_flags *f);

/* Flag c (a CC_DF_* value) with argument arg into f. Returns 0, 1 when c
 * is not one of these, or -1 with *why a heap message naming the flag
 * (the caller prints it with its usage and frees it). */
int cc_deps_flag(int c, const char *arg, struct cc_deps_flags *f, char **why);

/* The specs a run installs: the given ones (n_given, borrowed), then,
 * when script is true and lang is Python, those of code's PEP 723 block
 * (cc_script_dependencies). *out is a heap array (free()) of strings
 * borrowed from given and *block (free it with
 * cc_script_dependencies_free); NULL/0 when none. Errors: those of
 * cc_script_dependencies. */
int cc_deps_specs(const char *const *given, size_t n_given, bool script, cc_language lang,
		  const char *code, size_t len, const char ***out, size_t *n, char ***block,
		  cc_error *err);

#endif
