/* src/cli/: the `codecage` command (main.c, term.c, files.c, displays.c).
 * It may include src/mcp/server/ (to start `codecage mcp`), src/frontend/,
 * src/common/ and the public headers; nothing includes it.
 *
 * The `codecage` command: run, eval, doctor. A thin front end over
 * libcodecage; exit codes per DESIGN.md section 6, usage errors exit 2. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codecage.h"
#include "displays.h"
#include "error.h"
#include "hint.h"
#include "json_out.h"
#include "term.h"
#include "server.h"
#include "files.h"
#include "source.h"
#include "flags.h"
#include "deps_flags.h"
#include "utf8.h"

#define CLI_DEFAULT_MAX_SOURCE (16u << 20)

static const char usage_text[] =
	"usage: codecage run [--lang python|javascript] [--timeout SECONDS] [--memory MIB]\n"
	"                    [--sandbox require|auto|off] [--web-polyfills]\n"
	"                    [--library FILE|DIR|NAME]... [--node-modules DIR]\n"
	"                    [--mount HOST:GUEST[:rw]]... [--scratch MIB] [--out DIR]\n"
	"                    [--allow-net ENTRY]... [--ca-file PEM]\n"
	"                    [--python-path DIR]... [--json|--raw] [--display-dir DIR]\n"
	"                    [--dependency SPEC]... [--allow-dependencies] [--deps-* ...]\n"
	"                    [--] FILE|-\n"
	"       codecage eval --lang python|javascript [--timeout SECONDS] [--memory MIB]\n"
	"                    [--sandbox require|auto|off] [--web-polyfills]\n"
	"                    [--library FILE|DIR|NAME]... [--node-modules DIR]\n"
	"                    [--mount HOST:GUEST[:rw]]... [--scratch MIB] [--out DIR]\n"
	"                    [--allow-net ENTRY]... [--ca-file PEM]\n"
	"                    [--python-path DIR]... [--json|--raw] [--display-dir DIR]\n"
	"                    [--dependency SPEC]... [--allow-dependencies] [--deps-* ...]\n"
	"                    [--] CODE\n"
	"       codecage doctor\n"
	"       codecage --version\n"
	"       codecage mcp [--http HOST:PORT] [options]   (codecage mcp --help)\n"
	"\n"
	"Runs untrusted Python or JavaScript in a confined worker process.\n"
	"run takes the language from a .py or .js file name unless --lang says;\n"
	"py and js are accepted for --lang. Put -- before CODE that starts with '-'\n"
	"(codecage eval --lang js -- -1). --web-polyfills (JavaScript) starts the\n"
	"runtime with WEB_POLYFILLS: timers, URL, Blob, FileReader, TextDecoder,\n"
	"EventTarget, AbortController, crypto, performance.\n"
	"--library (JavaScript, repeatable) loads a browser bundle first (after the\n"
	"polyfills): a .js file, a package directory, or a package name found in\n"
	"--node-modules DIR.\n"
	"--mount shows a host folder or file at GUEST (read-only unless :rw; repeat\n"
	"it for more; GUEST is after the last ':', so HOST may hold ':'); --scratch\n"
	"gives the run a private /tmp of MIB (0: none, the default; at most 65536);\n"
	"--out copies what the run left in /tmp to DIR when it ends (needs --scratch).\n"
	"--python-path (Python, repeatable, at most 8) lets the guest import the\n"
	"packages in DIR (e.g. a pip install --target DIR), read-only, at\n"
	"/codecage/python-path/N on sys.path.\n"
	"On a terminal, control characters in guest text show as ^[ or <U+202E>,\n"
	"and guest lines starting with 'codecage' as '[guest] codecage...';\n"
	"--raw passes them unchanged. Pipes and files always get the bytes as is.\n"
	"--allow-net HOST, HOST:PORT, *.DOMAIN[:PORT] or https://HOST[:PORT] (repeat\n"
	"it) lets the guest reach those hosts through the host (fetch, urllib,\n"
	"requests); none by default. --ca-file names the CA bundle for https.\n"
	"Displays (display(), matplotlib figures, a DataFrame's table) are in\n"
	"--json's \"displays\"; --display-dir DIR saves them as DIR/display-N.png,\n"
	".svg, .html, .json or .txt.\n"
	"--dependency SPEC (repeatable) installs a package first: pip's 'polars==1.*'\n"
	"(Python), npm's 'vega-lite@5' (JavaScript, loaded as --library is).\n" CC_DEPS_FLAG_USAGE
	"Exit status: 0 ok, 1 guest or syntax error, 2 invalid input or usage,\n"
	"3 timeout, 4 sandbox unavailable, 5 limit hit or worker crash, 70 internal.\n";

/* A usage error: its one line and where the help is (the whole help
 * would bury the line). Returns 2, the exit status. */
static int usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "codecage: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\ntry 'codecage --help'\n");
	return 2;
}

/* usage() with a flag's heap message (flags.h), which it frees. */
static int usage_free(char *why)
{
	int st = usage("%s", why ? why : "out of memory");
	free(why);
	return st;
}

#define CLI_MAX_ALLOW 256

struct args {
	const char *cmd;
	const char *target; /* FILE, "-" or CODE */
	int lang;	    /* 0 = from the file extension */
	double timeout_s;
	uint64_t memory_mib;
	cc_sandbox_mode sandbox;
	bool json;
	bool raw;	      /* --raw: guest text reaches a terminal unescaped */
	const char *libs[64]; /* --library, in order */
	size_t nlibs;
	const char *node_modules;
	bool web_polyfills;
	cc_mount mounts[CC_MAX_MOUNTS];
	size_t n_mounts;
	const char *python_path[CC_MAX_PYTHON_PATH]; /* --python-path, in order */
	size_t n_python_path;
	uint64_t scratch_mib;
	const char *out_dir;
	const char *allow[CLI_MAX_ALLOW]; /* --allow-net entries */
	size_t nallow;
	const char *ca_file;	 /* --ca-file */
	const char *display_dir; /* --display-dir: where displays are saved */
	struct cc_deps_flags deps;
};

static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "lang", required_argument, NULL, 'l' },
		{ "timeout", required_argument, NULL, 't' },
		{ "memory", required_argument, NULL, 'm' },
		{ "sandbox", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "raw", no_argument, NULL, 'r' },
		{ "library", required_argument, NULL, 'L' },
		{ "node-modules", required_argument, NULL, 'N' },
		{ "web-polyfills", no_argument, NULL, 'w' },
		{ "mount", required_argument, NULL, 'M' },
		{ "python-path", required_argument, NULL, 'P' },
		{ "scratch", required_argument, NULL, 'S' },
		{ "out", required_argument, NULL, 'o' },
		{ "allow-net", required_argument, NULL, 'n' },
		{ "ca-file", required_argument, NULL, 'c' },
		{ "display-dir", required_argument, NULL, 'd' },
		{ "dependency", required_argument, NULL, CC_DF_DEPENDENCY },
		CC_DEPS_FLAG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	a->sandbox = CC_SANDBOX_REQUIRE;
	cc_deps_flags_init(&a->deps);
	optind = 2;
	opterr = 0;
	int c;
	cc_language lang;
	char *why = NULL;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			if (cc_language_parse(optarg, &lang) < 0)
				return usage("unknown language '%s' (use python or javascript)",
					     optarg);
			a->lang = (int)lang;
			break;
		case 't':
			if (cc_flag_timeout(optarg, &a->timeout_s, &why) < 0)
				return usage_free(why);
			break;
		case 'm':
			if (cc_flag_memory(optarg, &a->memory_mib, &why) < 0)
				return usage_free(why);
			break;
		case 's':
			if (cc_flag_sandbox(optarg, &a->sandbox, &why) < 0)
				return usage_free(why);
			break;
		case 'j':
			a->json = true;
			break;
		case 'r':
			a->raw = true;
			break;
		case 'L':
			if (cc_flag_append("--library", optarg, a->libs, &a->nlibs,
					   sizeof(a->libs) / sizeof(a->libs[0]), &why) < 0)
				return usage_free(why);
			break;
		case 'N':
			a->node_modules = optarg;
			break;
		case 'w':
			a->web_polyfills = true;
			break;
		case 'M':
			if (cc_flag_mount(optarg, a->mounts, &a->n_mounts, &why) < 0)
				return usage_free(why);
			break;
		case 'P':
			if (cc_flag_append("--python-path", optarg, a->python_path,
					   &a->n_python_path, CC_MAX_PYTHON_PATH, &why) < 0)
				return usage_free(why);
			break;
		case 'S':
			if (cc_flag_scratch(optarg, &a->scratch_mib, &why) < 0)
				return usage_free(why);
			break;
		case 'o':
			a->out_dir = optarg;
			break;
		case 'n':
			if (a->nallow == CLI_MAX_ALLOW)
				return usage("%s", "at most 256 --allow-net entries");
			a->allow[a->nallow++] = optarg;
			break;
		case 'c':
			a->ca_file = optarg;
			break;
		case 'd':
			if (!*optarg)
				return usage("%s", "--display-dir wants a folder");
			a->display_dir = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		default:
			if (cc_deps_flag(c, optarg, &a->deps, &why) < 0)
				return usage_free(why);
			if (c >= CC_DF_DEPENDENCY && c <= CC_DF_REGISTRY)
				break;
			return usage("unknown or incomplete option '%s' (put -- before code "
				     "that starts with '-')",
				     argv[optind - 1]);
		}
	}
	if (a->json && a->raw)
		return usage("%s", "--json and --raw do not go together: --raw passes guest text "
				   "to a terminal as is, --json prints one JSON object");
	if (a->out_dir && !a->scratch_mib)
		return usage("%s", "--out copies the run's scratch: add --scratch MIB");
	if (optind != argc - 1)
		return usage(strcmp(a->cmd, "run")
				     ? "%s takes exactly one CODE argument"
				     : "%s takes exactly one FILE argument (or - for stdin)",
			     a->cmd);
	a->target = argv[optind];
	return 0;
}

/* Read FILE or stdin, up to max+1 bytes so an oversized source is seen. */
static int read_source(const char *path, uint64_t max, char **out, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f)
		return -1;
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (n == cap) {
			if (cap > max)
				break;
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		size_t want = cap - n;
		if (n + want > max + 1)
			want = max + 1 - n;
		if (want == 0)
			break;
		size_t r = fread(buf + n, 1, want, f);
		n += r;
		if (r < want)
			break;
	}
	int bad = !buf || ferror(f);
	if (f != stdin)
		fclose(f);
	if (bad) {
		free(buf);
		return -1;
	}
	*out = buf;
	*len = n;
	return 0;
}

static void json_sandbox(struct cc_buf *b, const cc_runtime *rt, cc_sandbox_mode mode)
{
	const cc_sandbox_report *s = cc_runtime_sandbox(rt);
	cc_buf_printf(b, "{\"mode\": \"%s\"", cc_sandbox_mode_name(mode));
	if (s) {
		cc_buf_puts(b, ", \"applied\": ");
		cc_json_string(b, s->applied, strlen(s->applied));
		cc_buf_puts(b, ", \"missing\": ");
		cc_json_string(b, s->missing, strlen(s->missing));
		cc_buf_printf(b, ", \"landlock_abi\": %d, \"seccomp_allowed\": %d", s->landlock_abi,
			      s->seccomp_allowed);
		cc_buf_puts(b, ", \"engine\": ");
		cc_json_string(b, cc_runtime_engine_version(rt),
			       strlen(cc_runtime_engine_version(rt)));
	}
	cc_buf_puts(b, "}");
}

static void json_str_field(struct cc_buf *b, const char *key, const char *s, size_t n)
{
	cc_buf_printf(b, ", \"%s\": ", key);
	cc_json_string(b, s, n);
}

/* --json's "dependencies": what was installed for the run (none: absent). */
static void json_deps(struct cc_buf *b, const cc_deps *d)
{
	if (!d)
		return;
	cc_buf_puts(b, ", \"dependencies\": {\"key\": ");
	cc_json_string(b, cc_deps_key(d), strlen(cc_deps_key(d)));
	json_str_field(b, "packages", cc_deps_packages(d), strlen(cc_deps_packages(d)));
	cc_buf_printf(b, ", \"cached\": %s", cc_deps_cached(d) ? "true" : "false");
	json_str_field(b, "log", cc_deps_log(d), strlen(cc_deps_log(d)));
	cc_buf_puts(b, "}");
}

/* Emit the --json object. r may be NULL when no eval ran (err says why). */
/* The error message with the library's option names (CC_TIMEOUT_HINT,
 * CC_MEMORY_HINT) swapped for this command's flags. *own gets what the
 * caller frees. */
static const char *cli_message(const cc_result *r, const cc_error *err, char **own)
{
	static const struct cc_hints hints = { "raise --timeout SECONDS", "raise --memory MIB",
					       NULL };
	const char *msg = r ? cc_result_error_message(r) : (err->message ? err->message : "");

	*own = cc_hint_rewrite(msg, &hints);
	return *own ? *own : msg;
}

static void emit_json(const cc_result *r, const cc_error *err, const cc_runtime *rt,
		      cc_sandbox_mode mode)
{
	struct cc_buf b = { 0 };
	cc_error_kind kind = r ? cc_result_error_kind(r) : err->kind;
	cc_buf_printf(&b, "{\"ok\": %s, \"value\": ", kind == CC_OK ? "true" : "false");
	cc_json_value(&b, r ? cc_result_value(r) : NULL);
	size_t n = 0;
	const char *s = r ? cc_result_stdout(r, &n) : "";
	json_str_field(&b, "stdout", s, r ? n : 0);
	s = r ? cc_result_stderr(r, &n) : "";
	json_str_field(&b, "stderr", s, r ? n : 0);
	if (kind == CC_OK) {
		cc_buf_puts(&b, ", \"error\": null");
	} else {
		const char *type = r ? cc_result_error_type(r) : "";
		char *own = NULL;
		const char *msg = cli_message(r, err, &own);
		const char *tb = r ? cc_result_error_traceback(r) : "";
		cc_buf_printf(&b, ", \"error\": {\"kind\": \"%s\"", cc_error_kind_name(kind));
		json_str_field(&b, "type", type, strlen(type));
		json_str_field(&b, "message", msg, strlen(msg));
		free(own);
		json_str_field(&b, "traceback", tb, strlen(tb));
		cc_buf_puts(&b, "}");
	}
	cli_json_displays(&b, r);
	cc_buf_printf(&b, ", \"duration_ms\": %.3f, \"sandbox\": ",
		      r ? cc_result_duration(r) * 1000 : 0.0);
	json_sandbox(&b, rt, mode);
	json_deps(&b, cc_runtime_deps(rt));
	cc_buf_puts(&b, "}\n");
	if (b.oom)
		fputs("{\"ok\": false, \"value\": null, \"stdout\": \"\", \"stderr\": \"\", "
		      "\"error\": {\"kind\": \"internal\", \"type\": \"\", \"message\": "
		      "\"out of memory rendering the result\", \"traceback\": \"\"}, \"displays\": "
		      "[], "
		      "\"duration_ms\": 0, \"sandbox\": {}}\n",
		      stdout);
	else
		fwrite(b.data, 1, b.len, stdout);
	free(b.data);
}

/* Text mode passes guest output through while the eval runs: each batch
 * of lines the worker sends goes to our stdout or stderr at once. */
struct live {
	struct cc_term term[3]; /* [1] stdout, [2] stderr */
	size_t passed[3];	/* bytes written per stream */
};

static void live_output(void *user, int fd, const char *text, size_t len)
{
	struct live *l = user;
	cc_term_guest(&l->term[fd], text, len);
	fflush(l->term[fd].f);
	l->passed[fd] += len;
}

/* Text mode: guest output (passed through live; here only what it did not
 * see: the truncation marker), the value (stdout) and errors (stderr). On
 * a terminal, guest text is made inert and cannot forge codecage's own
 * lines (term.h), unless raw. */
static void emit_text(const cc_result *r, const cc_error *err, const struct live *l, bool raw)
{
	struct cc_term out, errs;
	cc_term_init(&out, stdout, raw);
	cc_term_init(&errs, stderr, raw);
	size_t n = 0;
	if (r) {
		const char *s = cc_result_stdout(r, &n);
		if (n > l->passed[1])
			cc_term_guest(&out, s + l->passed[1], n - l->passed[1]);
		s = cc_result_stderr(r, &n);
		fflush(stdout);
		if (n > l->passed[2])
			cc_term_guest(&errs, s + l->passed[2], n - l->passed[2]);
		fflush(stderr);
	}
	cc_error_kind kind = r ? cc_result_error_kind(r) : err->kind;
	if (kind == CC_OK) {
		const cc_value *v = cc_result_value(r);
		if (v) {
			struct cc_buf b = { 0 };
			cc_readable_value(&b, v);
			cc_buf_printf(&b, "\n");
			if (b.data)
				cc_term_guest(&out, b.data, b.len);
			free(b.data);
		}
		const char *vt = cc_result_value_type(r);
		if (vt) {
			fflush(stdout);
			fputs("codecage: note: the value (type ", stderr);
			cc_term_inline(&errs, vt);
			fputs(") has no JSON form; shown as its text\n", stderr);
		}
		return;
	}
	fflush(stdout);
	const char *tb = r ? cc_result_error_traceback(r) : "";
	if (*tb && (kind == CC_ERR_GUEST || kind == CC_ERR_SYNTAX)) {
		cc_term_guest(&errs, tb, strlen(tb));
		if (!errs.escape && tb[strlen(tb) - 1] != '\n')
			fputc('\n', stderr);
		return;
	}
	const char *type = r ? cc_result_error_type(r) : "";
	char *own = NULL;
	fprintf(stderr, "codecage: %s: ", cc_error_kind_name(kind));
	cc_term_inline(&errs, type);
	fputs(*type ? ": " : "", stderr);
	cc_term_inline(&errs, cli_message(r, err, &own));
	fputc('\n', stderr);
	free(own);
}

static int lang_from_path(const char *path)
{
	const char *dot = strrchr(path, '.');
	if (!dot)
		return -1;
	if (!strcmp(dot, ".py"))
		return CC_LANG_PYTHON;
	if (!strcmp(dot, ".js") || !strcmp(dot, ".mjs") || !strcmp(dot, ".cjs"))
		return CC_LANG_JAVASCRIPT;
	return -1;
}

static int run_code(const struct args *a, const char *code, size_t len)
{
	cc_options o;
	cc_options_init(&o, (cc_language)a->lang);
	o.sandbox = a->sandbox;
	o.web_polyfills = a->web_polyfills;
	if (a->timeout_s > 0)
		o.limits.timeout_s = a->timeout_s;
	if (a->memory_mib)
		o.limits.max_memory = a->memory_mib << 20;
	o.libraries = a->libs;
	o.n_libraries = a->nlibs;
	o.node_modules = a->node_modules;
	o.mounts = a->mounts;
	o.n_mounts = a->n_mounts;
	o.python_path = a->python_path;
	o.n_python_path = a->n_python_path;
	o.scratch_bytes = a->scratch_mib << 20;
	o.deps = &a->deps.o;
	if (a->sandbox == CC_SANDBOX_OFF)
		fprintf(stderr, "codecage: WARNING: --sandbox off: guest code runs with "
				"process hygiene and limits only, for tests and debugging\n");

	cc_error err = { 0 };
	cc_result *r = NULL;
	cc_runtime *rt = NULL;
	bool out_failed = false;
	cc_net_options net;
	cc_net_options_init(&net);
	net.allow = a->allow;
	net.n_allow = a->nallow;
	net.ca_file = a->ca_file;
	struct live live = { 0 };
	cc_term_init(&live.term[1], stdout, a->raw);
	cc_term_init(&live.term[2], stderr, a->raw);
	o.net = a->nallow ? &net : NULL;
	/* --dependency, and with --allow-dependencies the code's PEP 723
	 * block, installed before the runtime starts */
	char **block = NULL;
	const char **specs = NULL;
	/* A bad entry is invalid_input before anything starts (checked here
	 * for the message without cc_runtime_new's "cc_options.net: "). */
	if (cc_check_source(code, len, o.limits.max_source, &err) == 0 &&
	    cc_net_check(&net, &err) == 0 &&
	    cc_deps_specs(a->deps.specs, a->deps.n_specs, a->deps.allowed, o.language, code, len,
			  &specs, &o.n_dependencies, &block, &err) == 0 &&
	    ((o.dependencies = specs), cc_runtime_new(&o, &rt, &err) == 0)) {
		const cc_deps *d = cc_runtime_deps(rt);
		if (!a->json && d && !cc_deps_cached(d))
			fprintf(stderr, "codecage: installed the dependencies (%s): %.300s\n",
				cc_deps_key(d), cc_deps_packages(d));
		/* Text mode is for people: output live, and a value with no
		 * JSON form as its text. --json keeps the strict value rule. */
		if (!a->json) {
			cc_runtime_set_output_text_handler(rt, live_output, &live);
			cc_runtime_set_value_fallback(rt, true);
		}
		r = cc_runtime_eval(rt, code, len, 0);
		if (!r)
			cc_fail(&err, CC_ERR_INTERNAL, "out of memory");
		/* The run's result stands; a copy that fails is said on stderr
		 * and turns a success into invalid_input. */
		cc_error cerr = { 0 };
		struct cc_term diag; /* the messages name guest files */
		cc_term_init(&diag, stderr, a->raw);
		if (r && a->out_dir && cc_runtime_alive(rt) &&
		    cc_cli_copy_out(rt, a->out_dir, a->scratch_mib << 20, &diag, &cerr) < 0) {
			fputs("codecage: --out: ", stderr);
			cc_term_inline(&diag, cerr.message ? cerr.message : "failed");
			fputc('\n', stderr);
			if (cc_result_ok(r))
				out_failed = true;
			cc_error_clear(&cerr);
		}
	}
	if (a->json)
		emit_json(r, &err, rt, a->sandbox);
	else
		emit_text(r, &err, &live, a->raw);
	cc_error_kind kind = r ? cc_result_error_kind(r) : err.kind;
	if (out_failed)
		kind = CC_ERR_INVALID_INPUT;
	if (a->display_dir && cli_save_displays(r, a->display_dir) < 0 && kind == CC_OK)
		kind = CC_ERR_INVALID_INPUT;
	else if (!a->display_dir && !a->json)
		cli_note_displays(r);
	cc_result_free(r);
	cc_runtime_close(rt);
	cc_error_clear(&err);
	free(specs);
	cc_script_dependencies_free(block);
	return cc_error_kind_exit_code(kind);
}

static int cmd_doctor(void)
{
	int status = 0;
	for (int lang = CC_LANG_JAVASCRIPT; lang <= CC_LANG_PYTHON; lang++) {
		cc_options o;
		cc_options_init(&o, (cc_language)lang);
		o.sandbox = CC_SANDBOX_AUTO;
		cc_runtime *rt = NULL;
		cc_error err = { 0 };
		if (cc_runtime_new(&o, &rt, &err) < 0) {
			printf("%-10s  cannot start: %s: %s\n", cc_language_name((cc_language)lang),
			       cc_error_kind_name(err.kind), err.message ? err.message : "");
			cc_error_clear(&err);
			status = 1;
			continue;
		}
		const cc_sandbox_report *s = cc_runtime_sandbox(rt);
		printf("%-10s  %s\n", cc_language_name((cc_language)lang),
		       cc_runtime_engine_version(rt));
		printf("            applied: %s\n", s->applied);
		printf("            missing: %s\n", *s->missing ? s->missing : "(none)");
		printf("            landlock ABI: %d, seccomp allow-list: %d syscalls\n",
		       s->landlock_abi, s->seccomp_allowed);
		printf("            sandbox 'require': %s\n",
		       *s->missing ? "refused (layers missing)" : "available");
		cc_runtime_close(rt);
	}
	return status;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage("%s", "missing command (run, eval, doctor or mcp)");
	struct args a = { .cmd = argv[1] };
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		if (argc != 2)
			return usage("%s", "--version takes no arguments");
		printf("codecage %s\n", cc_version());
		return 0;
	}
	if (!strcmp(argv[1], "mcp"))
		return cc_mcp_main(argc, argv);
	if (!strcmp(argv[1], "doctor"))
		return argc == 2 ? cmd_doctor() : usage("%s", "doctor takes no arguments");
	if (strcmp(argv[1], "run") && strcmp(argv[1], "eval"))
		return usage("unknown command '%s'", argv[1]);
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc;
	if (!strcmp(a.cmd, "eval")) {
		if (!a.lang)
			return usage("%s", "eval needs --lang python|javascript");
		return run_code(&a, a.target, strlen(a.target));
	}
	if (!a.lang) {
		a.lang = lang_from_path(a.target);
		if (a.lang < 0)
			return usage("cannot tell the language of '%s'; pass --lang", a.target);
	}
	char *code = NULL;
	size_t len = 0;
	if (read_source(a.target, CLI_DEFAULT_MAX_SOURCE, &code, &len) < 0) {
		char *why = cc_strprintf("cannot read '%s': %s", a.target, strerror(errno));
		return usage_free(why);
	}
	rc = run_code(&a, code, len);
	free(code);
	return rc;
}
