/* `codecage mcp`: flags, then the stdio or the streamable HTTP transport. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "auth.h"
#include "flags.h"
#include "route.h"
#include "server.h"
#include "upstream.h"

static const char mcp_usage[] =
	"usage: codecage mcp [--http HOST:PORT] [--timeout SECONDS] [--memory MIB]\n"
	"                    [--sandbox require|auto|off] [--max-sessions N]\n"
	"                    [--idle-timeout SECONDS] [--max-request BYTES] [--max-output BYTES]\n"
	"                    [--web-polyfills] [--library FILE|DIR|NAME]... [--node-modules DIR]\n"
	"                    [--scratch MIB] [--mount HOST:GUEST[:rw]]...\n"
	"                    [--allow-net ENTRY]... [--ca-file PEM] [--pool N]\n"
	"                    [--fork-max-sessions N]\n"
	"                    [--python-path DIR]...\n"
	"                    [--auth-token-file FILE] [--max-result BYTES] [--cpu SECONDS]\n"
	"                    [--max-open-files N] [--max-file-size MIB]\n"
	"                    [--route-self HOST:PORT --route-peers HOST:PORT,...]\n"
	"                    [--upstream 'NAME=COMMAND ARG...'|NAME=URL]... [--max-tool-calls N]\n"
	"                    [--upstream-max-calls NAME=N]...\n"
	"                    [--allow-dependencies] [--deps-cache DIR] [--deps-* ...]\n"
	"\n"
	"Serves the MCP tools run_python and run_javascript (one runtime per language\n"
	"and session; state persists across calls). Without --http: JSON-RPC on\n"
	"stdin/stdout, one session. With --http: streamable HTTP on http://HOST:PORT/mcp\n"
	"(use 127.0.0.1; port 0 picks a free port, printed on stderr).\n"
	"Defaults: --timeout 30 (the largest timeout_s a call may ask for), --memory 128\n"
	"(JavaScript) and 512 (Python),\n"
	"--sandbox require, --max-sessions 64 (HTTP), --idle-timeout 600 (an idle\n"
	"session is closed), --max-request 4194304, --max-output 65536 (stdout and\n"
	"stderr each, per call), --scratch 64 (each session's private /tmp per language,\n"
	"MiB; 0 = none; at most 65536). --mount shows the host file or folder HOST at\n"
	"GUEST (an absolute path, after the last ':') in every session, read-only\n"
	"unless :rw; repeatable.\n"
	"--python-path DIR (repeatable, at most 8): run_python imports the packages in\n"
	"DIR (e.g. a pip install --target DIR), read-only, from /codecage/python-path/N.\n"
	"--web-polyfills: run_javascript runtimes start with\n"
	"WEB_POLYFILLS (timers, URL, Blob, FileReader, TextDecoder, EventTarget,\n"
	"AbortController, crypto, performance).\n"
	"--library (repeatable) loads a browser bundle into every JavaScript runtime\n"
	"before its first call, after the polyfills: a .js file, a package directory,\n"
	"or a package name found in --node-modules DIR (each at most --max-request bytes).\n"
	"No network unless --allow-net HOST, HOST:PORT,\n"
	"*.DOMAIN[:PORT] or https://HOST[:PORT] (repeat it): it lets guest code reach\n"
	"those hosts through the host (fetch, urllib, requests); --ca-file names the\n"
	"CA bundle for https.\n"
	"--pool N (default 2): each language keeps N sessions ready, forked from a\n"
	"fork server started when the server starts, so a new session or a\n"
	"reset costs a checkout; 0 starts a fresh worker for every runtime.\n"
	"--fork-max-sessions N (default 1024, at most 4096, at least --pool): the most\n"
	"runtimes each language's fork server holds at once; past it a call that\n"
	"needs a new runtime gets a tool error naming this flag. The server raises\n"
	"its soft RLIMIT_NOFILE (never past the hard one) to hold four descriptors\n"
	"per runtime of both fork servers full.\n"
	"--auth-token-file FILE: every HTTP request needs Authorization: Bearer TOKEN\n"
	"(the file's one line, at least 16 characters); required to bind a\n"
	"non-loopback address. TLS: put a reverse proxy in front (README).\n"
	"GET /healthz answers 200 \"ok\"; GET /metrics the Prometheus text format.\n"
	"Limits of each runtime: --max-result 1048576 (a result value or an input,\n"
	"encoded, bytes), --cpu 3600 (CPU seconds per runtime), --max-open-files 64,\n"
	"--max-file-size MIB (largest file it may write; default the --scratch size).\n"
	"Every flag that changes what the code has is in the tools' descriptions.\n"
	"Replicas behind nginx (`hash $http_mcp_session_id consistent`): --route-peers\n"
	"lists the upstream servers exactly as nginx's upstream block does, --route-self\n"
	"names this one; each new session gets an id that nginx routes here.\n"
	"Code mode: --upstream 'NAME=COMMAND ARG...' (repeatable; one argument, split\n"
	"as a shell splits words) starts that stdio MCP server once (NAME=http://HOST:PORT/mcp:\n"
	"a streamable HTTP one), and the guest\n"
	"calls its tools as tools.NAME.TOOL(...); the run tools' descriptions declare\n"
	"them. One tools/call may make --max-tool-calls upstream calls in all (default\n"
	"50) and --upstream-max-calls NAME=N of NAME's.\n" CC_DEPS_FLAG_USAGE;

/* Each live runtime holds three or four descriptors here (its socket,
 * pidfd, status pipe; an eventfd with the network or upstream tools), each
 * HTTP connection one: the soft RLIMIT_NOFILE is raised, never past the
 * hard limit, to what both languages' fork servers full and the HTTP
 * sessions need. A runtime past what it allows is refused by name
 * (sandbox_unavailable, "out of descriptors"). */
static void raise_nofile(const struct mcp_config *cfg)
{
	unsigned fork_max =
		cfg->fork_max_sessions ? cfg->fork_max_sessions : CC_FORK_MAX_SESSIONS_DEFAULT;
	rlim_t need = (rlim_t)2 * 4 * fork_max + cfg->max_sessions + 256; /* two languages */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= need)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

static int usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "codecage mcp: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\ntry 'codecage mcp --help'\n");
	return 2;
}

/* usage() with a flag's heap message (flags.h), which it frees. */
static int usage_free(char *why)
{
	int st = usage("%s", why ? why : "out of memory");
	free(why);
	return st;
}

/* Check the grants once, before serving: a runtime is started with them
 * (the library validates mounts and python_path before any worker
 * starts) and closed.
 * Returns 0, or 2 after printing why. */
static int check_grants(const struct mcp_config *cfg, cc_language lang, const char *flag)
{
	cc_options o;
	cc_runtime *rt = NULL;
	cc_error err = { 0 };
	cc_options_init(&o, lang);
	o.sandbox = cfg->sandbox;
	o.mounts = cfg->mounts;
	o.n_mounts = cfg->n_mounts;
	if (lang == CC_LANG_PYTHON) {
		o.python_path = cfg->python_path;
		o.n_python_path = cfg->n_python_path;
	}
	o.scratch_bytes = cfg->scratch_mib << 20;
	if (cc_runtime_new(&o, &rt, &err) < 0 && err.kind == CC_ERR_INVALID_INPUT) {
		fprintf(stderr, "codecage mcp: %s: %s\n", flag, err.message ? err.message : "");
		cc_error_clear(&err);
		return 2;
	}
	/* Other failures (no sandbox here) are each call's to report. */
	cc_error_clear(&err);
	cc_runtime_close(rt);
	return 0;
}

static int check_mounts(const struct mcp_config *cfg)
{
	if (cfg->n_python_path)
		return check_grants(cfg, CC_LANG_PYTHON, "--mount/--python-path");
	return cfg->n_mounts ? check_grants(cfg, CC_LANG_JAVASCRIPT, "--mount") : 0;
}

static int number(const char *s, double lo, double hi, double *out)
{
	char *end = NULL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi))
		return -1;
	*out = v;
	return 0;
}

/* --upstream-max-calls NAME=N for upstreams given. Returns 0 or 2. */
static int upstream_limits(struct mcp_config *cfg, const char *const *lim, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(lim[i], '=');
		double v;
		size_t k = 0;
		while (eq && k < cfg->n_upstreams &&
		       (strlen(mcp_upstream_name(cfg->upstreams[k])) != (size_t)(eq - lim[i]) ||
			strncmp(mcp_upstream_name(cfg->upstreams[k]), lim[i],
				(size_t)(eq - lim[i]))))
			k++;
		if (!eq || k == cfg->n_upstreams || number(eq + 1, 0, 1e9, &v) < 0 ||
		    v != (double)(uint64_t)v)
			return usage("--upstream-max-calls wants NAME=N for an --upstream NAME "
				     "and a count from 0 to 1000000000, not '%s'",
				     lim[i]);
		mcp_upstream_set_max_calls(cfg->upstreams[k], (uint64_t)v);
	}
	return 0;
}

/* Start every upstream before serving (their tools go into tools/list).
 * Returns 0, or 1 after printing why. */
static int start_upstreams(struct mcp_config *cfg)
{
	for (size_t i = 0; i < cfg->n_upstreams; i++) {
		char *why = NULL;
		if (mcp_upstream_start(cfg->upstreams[i], &why) < 0) {
			fprintf(stderr, "codecage mcp: --upstream: %s\n",
				why ? why : "cannot start");
			free(why);
			return 1;
		}
	}
	return 0;
}

/* What the flags say besides mcp_config: for the checks after parsing. */
struct flags_extra {
	const char *token_file, *route_self, *route_peers;
	const char *up_limits[64]; /* --upstream-max-calls, checked once all are in */
	size_t n_up_limits;
};

/* The flags of every runtime (most shared with the CLI: flags.h). Returns 0, 2 after printing a
 * usage error, or -1: not one of these. */
static int runtime_flag(int c, char *arg, struct mcp_config *cfg)
{
	char *why = NULL;
	switch (c) {
	case 't':
		if (cc_flag_timeout(arg, &cfg->timeout_s, &why) < 0)
			return usage_free(why);
		break;
	case 'm':
		if (cc_flag_memory(arg, &cfg->memory_mib, &why) < 0)
			return usage_free(why);
		break;
	case 's':
		if (cc_flag_sandbox(arg, &cfg->sandbox, &why) < 0)
			return usage_free(why);
		break;
	case 'L':
		if (cc_flag_append("--library", arg, cfg->libraries, &cfg->n_libraries,
				   sizeof(cfg->libraries) / sizeof(cfg->libraries[0]), &why) < 0)
			return usage_free(why);
		break;
	case 'N':
		cfg->node_modules = arg;
		break;
	case 'w':
		cfg->web_polyfills = true;
		break;
	case 'T':
		if (cc_flag_scratch(arg, &cfg->scratch_mib, &why) < 0)
			return usage_free(why);
		break;
	case 'M':
		if (cc_flag_mount(arg, cfg->mounts, &cfg->n_mounts, &why) < 0)
			return usage_free(why);
		break;
	case 'y':
		if (cc_flag_append("--python-path", arg, cfg->python_path, &cfg->n_python_path,
				   CC_MAX_PYTHON_PATH, &why) < 0)
			return usage_free(why);
		break;
	case 'n': {
		const char **l = realloc(cfg->allow_net, (cfg->n_allow_net + 1) * sizeof(*l));
		if (!l)
			return usage("%s", "out of memory");
		cfg->allow_net = l;
		l[cfg->n_allow_net++] = arg;
		break;
	}
	case 'c':
		cfg->ca_file = arg;
		break;
	default:
		return -1;
	}
	return 0;
}

/* The limits of every runtime the server starts, checked by the library
 * (flags.h). Returns 0, 2 after printing a usage error, or -1: not one of
 * these. */
static int runtime_limit_flag(int c, char *arg, struct mcp_config *cfg)
{
	static const char *const names[] = {
		['R'] = "--max-result", ['C'] = "--cpu", ['F'] = "--max-open-files"
	};
	char *why = NULL;
	uint64_t v;
	double d;
	if (c == 'Z') {
		if (number(arg, 1, 1 << 20, &d) < 0 || d != (double)(uint64_t)d)
			return usage("--max-file-size wants MiB from 1 to 1048576, not '%s'", arg);
		cfg->max_file_size_mib = (uint64_t)d;
		return 0;
	}
	if (c != 'R' && c != 'C' && c != 'F')
		return -1;
	if (cc_flag_limit(names[c], arg, &v, &why) < 0)
		return usage_free(why);
	if (c == 'R')
		cfg->max_result = v;
	else if (c == 'C')
		cfg->cpu_s = (uint32_t)v;
	else
		cfg->max_open_files = (uint32_t)v;
	return 0;
}

/* Counts and sizes of the server itself. Returns 0, 2 after printing a
 * usage error, or -1: not one of these. */
static int limit_flag(int c, char *arg, struct mcp_config *cfg)
{
	double v;
	switch (c) {
	case 'P':
		if (number(arg, 0, 64, &v) < 0 || v != (double)(unsigned)v)
			return usage("--pool wants a count of ready sessions from 0 to 64, "
				     "not '%s'",
				     arg);
		cfg->pool_size = (unsigned)v;
		break;
	case 'X':
		if (number(arg, 1, CC_FORK_MAX_SESSIONS_LIMIT, &v) < 0 || v != (double)(unsigned)v)
			return usage("--fork-max-sessions wants a count from 1 to 4096, not '%s'",
				     arg);
		cfg->fork_max_sessions = (unsigned)v;
		break;
	case 'S':
		if (number(arg, 1, 100000, &v) < 0 || v != (double)(unsigned)v)
			return usage("--max-sessions wants a count from 1 to 100000, not '%s'",
				     arg);
		cfg->max_sessions = (unsigned)v;
		break;
	case 'i':
		if (number(arg, 0.1, 31536000, &v) < 0)
			return usage("--idle-timeout wants seconds (at least 0.1), not '%s'", arg);
		cfg->idle_timeout_s = v;
		break;
	case 'r':
		if (number(arg, 1024, 1 << 30, &v) < 0 || v != (double)(size_t)v)
			return usage("--max-request wants bytes from 1024 to 1073741824, not "
				     "'%s'",
				     arg);
		cfg->max_request = (size_t)v;
		break;
	case 'o':
		if (number(arg, 1024, 1 << 30, &v) < 0 || v != (double)(uint64_t)v)
			return usage("--max-output wants bytes from 1024 to 1073741824, not "
				     "'%s'",
				     arg);
		cfg->max_output = (uint64_t)v;
		break;
	case 'B':
		if (number(arg, 0, 1e9, &v) < 0 || v != (double)(uint64_t)v)
			return usage("--max-tool-calls wants a count from 0 to 1000000000, "
				     "not '%s'",
				     arg);
		cfg->max_tool_calls = (uint64_t)v;
		break;
	default:
		return -1;
	}
	return 0;
}

/* Transport, authentication, routing and code mode's upstreams. Returns 0, 2 after printing a usage
 * error, or -1: not one of these. */
static int server_flag(int c, char *arg, struct mcp_config *cfg, struct flags_extra *x)
{
	switch (c) {
	case 'H':
		cfg->http = arg;
		break;
	case 'A':
		x->token_file = arg;
		break;
	case 'e':
		x->route_self = arg;
		break;
	case 'p':
		x->route_peers = arg;
		break;
	case 'U': {
		const char *why = NULL;
		struct mcp_upstream *u = mcp_upstream_parse(arg, &why);
		struct mcp_upstream **l =
			u ? realloc(cfg->upstreams, (cfg->n_upstreams + 1) * sizeof(*l)) : NULL;
		if (!l) {
			mcp_upstream_free(u);
			return usage("%s", why ? why : "out of memory");
		}
		cfg->upstreams = l;
		for (size_t i = 0; i < cfg->n_upstreams; i++)
			if (!strcmp(mcp_upstream_name(l[i]), mcp_upstream_name(u))) {
				mcp_upstream_free(u);
				return usage("--upstream: the name '%s' is given twice",
					     mcp_upstream_name(l[i]));
			}
		l[cfg->n_upstreams++] = u;
		break;
	}
	case 'u':
		if (x->n_up_limits == 64)
			return usage("--upstream-max-calls given more than 64 times (at '%s')",
				     arg);
		x->up_limits[x->n_up_limits++] = arg;
		break;
	default:
		return -1;
	}
	return 0;
}

/* Every flag into cfg and x. Returns -1 (go on), or the exit status: 0
 * after --help, 2 after printing a usage error. */
static int parse_flags(int argc, char **argv, struct mcp_config *cfg, struct flags_extra *x)
{
	static const struct option opts[] = {
		{ "http", required_argument, NULL, 'H' },
		{ "timeout", required_argument, NULL, 't' },
		{ "memory", required_argument, NULL, 'm' },
		{ "sandbox", required_argument, NULL, 's' },
		{ "max-sessions", required_argument, NULL, 'S' },
		{ "idle-timeout", required_argument, NULL, 'i' },
		{ "max-request", required_argument, NULL, 'r' },
		{ "max-output", required_argument, NULL, 'o' },
		{ "library", required_argument, NULL, 'L' },
		{ "node-modules", required_argument, NULL, 'N' },
		{ "web-polyfills", no_argument, NULL, 'w' },
		{ "scratch", required_argument, NULL, 'T' },
		{ "mount", required_argument, NULL, 'M' },
		{ "allow-net", required_argument, NULL, 'n' },
		{ "ca-file", required_argument, NULL, 'c' },
		{ "python-path", required_argument, NULL, 'y' },
		{ "pool", required_argument, NULL, 'P' },
		{ "fork-max-sessions", required_argument, NULL, 'X' },
		{ "max-result", required_argument, NULL, 'R' },
		{ "route-self", required_argument, NULL, 'e' },
		{ "route-peers", required_argument, NULL, 'p' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "max-open-files", required_argument, NULL, 'F' },
		{ "max-file-size", required_argument, NULL, 'Z' },
		{ "auth-token-file", required_argument, NULL, 'A' },
		{ "upstream", required_argument, NULL, 'U' },
		{ "max-tool-calls", required_argument, NULL, 'B' },
		{ "upstream-max-calls", required_argument, NULL, 'u' },
		CC_DEPS_FLAG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	optind = 2;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		int st = runtime_flag(c, optarg, cfg);
		if (st < 0)
			st = runtime_limit_flag(c, optarg, cfg);
		if (st < 0)
			st = limit_flag(c, optarg, cfg);
		if (st < 0)
			st = server_flag(c, optarg, cfg, x);
		char *why = NULL;
		if (st < 0 && c >= CC_DF_ALLOW_DEPS && c <= CC_DF_REGISTRY)
			st = cc_deps_flag(c, optarg, &cfg->deps, &why) < 0 ? usage_free(why) : 0;
		if (st > 0)
			return st;
		if (st == 0)
			continue;
		if (c == 'h') {
			fputs(mcp_usage, stdout);
			return 0;
		}
		return usage("unknown or incomplete option '%s'", argv[optind - 1]);
	}
	if (optind != argc)
		return usage("unexpected argument '%s'", argv[optind]);
	return -1;
}

/* The checks that need every flag, and what they make (the route, the
 * token, the upstreams started). Returns 0, or the exit status after
 * printing why. */
static int finish_flags(struct mcp_config *cfg, const struct flags_extra *x)
{
	char why[512];
	if (cfg->fork_max_sessions && cfg->fork_max_sessions < cfg->pool_size)
		return usage("%s", "--fork-max-sessions must be at least --pool (the ready "
				   "sessions count against it)");
	if (!x->route_self != !x->route_peers || (x->route_self && !cfg->http))
		return usage("%s", "--route-self and --route-peers go together, with --http");
	if (x->route_self &&
	    !(cfg->route = mcp_route_new(x->route_peers, x->route_self, why, sizeof(why))))
		return usage("%s", why);
	if (x->token_file && !cfg->http)
		return usage("%s", "--auth-token-file is for --http (stdio has no requests to "
				   "authenticate)");
	cc_net_options net;
	cc_net_options_init(&net);
	net.allow = cfg->allow_net;
	net.n_allow = cfg->n_allow_net;
	net.ca_file = cfg->ca_file;
	cc_error nerr = { 0 };
	if (cc_net_check(&net, &nerr) < 0) {
		int st = usage("%s", nerr.message ? nerr.message : "bad --allow-net");
		cc_error_clear(&nerr);
		return st;
	}
	if (cfg->sandbox == CC_SANDBOX_OFF)
		fprintf(stderr,
			"codecage mcp: WARNING: --sandbox off: guest code runs with process "
			"hygiene and limits only, for tests and debugging\n");
	if (check_mounts(cfg))
		return 2;
	if (x->token_file &&
	    !(cfg->auth_token = mcp_auth_read_token(x->token_file, why, sizeof(why))))
		return usage("%s", why);
	int st = upstream_limits(cfg, x->up_limits, x->n_up_limits);
	return st ? st : start_upstreams(cfg);
}

static void config_free(struct mcp_config *cfg)
{
	free(cfg->allow_net);
	free(cfg->auth_token);
	mcp_route_free(cfg->route);
	for (size_t i = 0; i < cfg->n_upstreams; i++)
		mcp_upstream_free(cfg->upstreams[i]);
	free(cfg->upstreams);
}

int cc_mcp_main(int argc, char **argv)
{
	struct mcp_config cfg = {
		.timeout_s = 30,
		.sandbox = CC_SANDBOX_REQUIRE,
		.max_sessions = 64,
		.idle_timeout_s = 600,
		.max_request = 4u << 20,
		.max_output = 64u << 10,
		.scratch_mib = 64,
		.pool_size = 2,
		.max_result = 1u << 20,
		.max_tool_calls = 50,
	};
	struct flags_extra x = { 0 };
	/* A client that goes away, or an upstream that exits while it
	 * starts (finish_flags starts them), must not kill us through a
	 * write. */
	signal(SIGPIPE, SIG_IGN);
	cc_deps_flags_init(&cfg.deps);
	int st = parse_flags(argc, argv, &cfg, &x);
	if (st < 0)
		st = finish_flags(&cfg, &x);
	else if (st == 0)
		st = -2; /* --help: done */
	if (st != 0) {
		config_free(&cfg);
		return st == -2 ? 0 : st;
	}
	raise_nofile(&cfg);
	struct mcp_server *srv = mcp_server_new(&cfg);
	int rc = 1;
	if (srv) {
		rc = cfg.http ? mcp_serve_http(srv) : mcp_serve_stdio(srv);
		mcp_server_free(srv);
	} else {
		fprintf(stderr, "codecage mcp: cannot start the server (out of memory)\n");
	}
	config_free(&cfg);
	return rc;
}
