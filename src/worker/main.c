/* The worker process: confine, start one engine, serve requests.
 *
 * Started by the supervisor (src/lib/spawn.c) with the channel on fd 3,
 * /dev/null on 0-2, an empty environment and argv "--ppid=N". It never
 * prints: errors travel to the supervisor as "fail" frames. Only this
 * process may _exit. Protocol: DESIGN.md section 4 and src/lib/protocol.c. */
#include <errno.h>
#include <malloc.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <seccomp.h>

#include "error.h"
#include "frame.h"
#include "confine.h"
#include "defaults.h"
#include "files.h"
#include "forkserver.h"
#include "grants.h"
#include "hygiene.h"
#include "probes.h"
#include "seccomp_filter.h"
#include "seccomp_policy.h"
#include "message.h"
#include "value.h"
#include "worker.h"
#include "worker_internal.h"
#include "worker_exit.h"

/* The init frame is small; later frames are bounded by the source and
 * result caps it announces. */
#define CC_INIT_FRAME_MAX (256 * 1024)

static void send_frame(msgpack_sbuffer *sb)
{
	cc_worker_send_frame(sb->data, sb->size);
}

static __attribute__((noreturn)) void send_fail_and_exit(const cc_error *err)
{
	struct cc_msgbuf m;
	msgpack_packer *pk = &m.pk;
	cc_msgbuf_begin(&m, 3, "fail");
	cc_pack_kv_str(pk, "kind", cc_error_kind_name(err->kind));
	cc_pack_kv_str(pk, "message", err->message ? err->message : "unknown failure");
	/* send(), not sendmsg: this may run under the seccomp
	 * filter (a self-probe got through), whose allow-list has sendto only. */
	cc_worker_send_frame(m.sb.data, m.sb.size);
	_exit(CC_WORKER_EXIT_FAILED);
}

static uint64_t get_u64(const cc_value *m, const char *key, bool *ok)
{
	const cc_value *v = cc_value_map_get(m, key, NULL);
	if (!v || v->type != CC_VALUE_INT || v->u.i < 0) {
		*ok = false;
		return 0;
	}
	return (uint64_t)v->u.i;
}

static const cc_value *get_str(const cc_value *m, const char *key)
{
	const cc_value *v = cc_value_map_get(m, key, NULL);
	return v && v->type == CC_VALUE_STRING ? v : NULL;
}

/* What the init frame asks for besides limits. */
struct init_extra {
	bool template;	     /* be a fork server's template */
	char preload[1024];  /* its preload list */
	uint64_t libraries;  /* "lib" frames that follow init */
	uint64_t library_ms; /* the time all of them may take to load */
};

/* At most this many libraries per runtime (the supervisor's cap, too). */
#define CC_LIBRARIES_MAX 64

static int read_init(cc_sandbox_mode *mode, uint64_t *max_source, struct init_extra *x,
		     cc_error *err)
{
	char *buf = NULL;
	size_t len = 0;
	if (cc_worker_read_frame(&buf, &len, CC_INIT_FRAME_MAX) != 0)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "no init frame");
	cc_value *m = NULL;
	cc_value_caps caps = cc_value_default_caps();
	int rc = cc_value_decode_all(buf, len, &m, &caps, err);
	free(buf);
	if (rc < 0)
		return -1;
	bool ok = true;
	const cc_value *t = get_str(m, "t"), *md = get_str(m, "mode");
	struct cc_init_limits *l = &cc_worker_limits;
#define READ_LIMIT(name) l->name = get_u64(m, #name, &ok);
	CC_INIT_LIMITS(READ_LIMIT)
#undef READ_LIMIT
	const cc_value *mounts = cc_value_map_get(m, "mounts", NULL);
	if (ok && cc_grants_parse(mounts, err) < 0) {
		cc_value_free(m);
		return -1;
	}
	*max_source = l->max_source;
	bool found = false;
	const cc_value *tv = cc_value_map_get(m, "template", &found);
	if (found && (!tv || tv->type != CC_VALUE_BOOL))
		ok = false;
	x->template = found && tv && tv->u.b;
	const cc_value *pl = cc_value_map_get(m, "preload", &found);
	if (found && (!pl || pl->type != CC_VALUE_STRING || pl->u.str.len >= sizeof(x->preload)))
		ok = false;
	else if (found)
		memcpy(x->preload, pl->u.str.ptr, pl->u.str.len + 1);
	/* A template's session cap (forkserver.c); only a template gets it. */
	if (cc_value_map_get(m, "max_sessions", &found), found) {
		uint64_t ms = get_u64(m, "max_sessions", &ok);
		if (!x->template || ms < 1 || ms > CC_FORK_MAX_SESSIONS_LIMIT)
			ok = false;
		else
			cc_worker_max_sessions = (unsigned)ms;
	}
	if (cc_value_map_get(m, "libraries", &found), found) {
		x->libraries = get_u64(m, "libraries", &ok);
		x->library_ms = get_u64(m, "library_timeout_ms", &ok);
	}
	if (x->libraries > CC_LIBRARIES_MAX)
		ok = false;
	const cc_value *wp = cc_value_map_get(m, "web_polyfills", &found);
	if (found && (!wp || wp->type != CC_VALUE_BOOL))
		ok = false;
	cc_worker_web_polyfills = found && wp && wp->u.b;
	if (!ok || !t || strcmp(t->u.str.ptr, "init") || !md)
		ok = false;
	else if (cc_sandbox_mode_parse(md->u.str.ptr, mode) < 0)
		ok = false;
	cc_value_free(m);
	return ok ? 0 : cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "malformed init frame");
}

char cc_worker_preload_skipped[CC_PRELOAD_SKIPPED_MAX][CC_PRELOAD_SKIPPED_LEN];
size_t cc_worker_n_preload_skipped;

static void send_ready(const char *version, const struct cc_confine_report *rep)
{
	struct cc_msgbuf m;
	msgpack_packer *pk = &m.pk;
	size_t ns = cc_worker_n_preload_skipped;
	cc_msgbuf_begin(&m, 7 + (ns ? 1 : 0), "ready");
	if (ns) { /* optional preload modules that did not import, and why */
		cc_pack_cstr(pk, "preload_skipped");
		msgpack_pack_array(pk, ns);
		for (size_t i = 0; i < ns; i++)
			cc_pack_cstr(pk, cc_worker_preload_skipped[i]);
	}
	cc_pack_kv_str(pk, "engine", cc_worker_engine->name);
	cc_pack_kv_str(pk, "version", version);
	cc_pack_kv_str(pk, "applied", rep->applied);
	cc_pack_kv_str(pk, "missing", rep->missing);
	cc_pack_kv_int(pk, "landlock_abi", rep->landlock_abi);
	cc_pack_kv_int(pk, "seccomp_allowed", rep->seccomp_allowed);
	send_frame(&m.sb);
	cc_msgbuf_free(&m);
}

static void send_result(uint64_t id, struct cc_outcome *o)
{
	/* The supervisor refuses a value whose decoded tree would take more
	 * than 3x max_result of its memory (value.c): say so here instead, so
	 * an honest worker's runtime survives a value that is too big. */
	size_t mem = cc_value_mem_budget(cc_worker_limits.max_result) - CC_VALUE_MEM_ENVELOPE;
	cc_worker_display_settle(o);
	size_t disp = cc_worker_display_cost();
	if (o->ok && (o->value.size || disp) &&
	    (disp > mem ||
	     (o->value.size && cc_value_decoded_cost(o->value.data, o->value.size) > mem - disp))) {
		char msg[200];
		snprintf(msg, sizeof(msg),
			 "the result would take more than %zu bytes of host memory once decoded "
			 "(3x max_result); return a smaller value, or raise max_result",
			 cc_value_mem_budget(cc_worker_limits.max_result));
		o->ok = false;
		o->value.size = 0;
		cc_outcome_fail(o, CC_ERR_OUTPUT_LIMIT, "OutputLimitError", msg, NULL);
	}
	struct cc_msgbuf m;
	msgpack_packer *pk = &m.pk;
	cc_msgbuf_begin(&m, (o->ok && o->value_type ? 5 : 4) + (cc_worker_display_count() > 0),
			"result");
	cc_pack_kv_u64(pk, "id", id);
	cc_pack_cstr(pk, "ok");
	if (o->ok) {
		msgpack_pack_true(pk);
		cc_pack_cstr(pk, "value");
		if (o->value.size)
			msgpack_sbuffer_write(&m.sb, o->value.data, o->value.size);
		else
			msgpack_pack_nil(pk);
		if (o->value_type) {
			cc_pack_kv_str(pk, "value_type", o->value_type);
		}
	} else {
		msgpack_pack_false(pk);
		cc_pack_cstr(pk, "error");
		msgpack_pack_map(pk, 4);
		cc_pack_kv_str(pk, "kind", cc_error_kind_name(o->kind));
		cc_pack_kv_str(pk, "type", o->type);
		cc_pack_kv_str(pk, "message", o->message);
		cc_pack_kv_str(pk, "traceback", o->traceback);
	}
	cc_worker_display_pack(pk);
	cc_worker_display_reset();
	send_frame(&m.sb);
	cc_msgbuf_free(&m);
}

/* Files between evals (files.c); malformed requests are never sent. */
static void serve_file(const char *t, const cc_value *m, struct cc_outcome *o)
{
	const cc_value *path = get_str(m, "path");
	if (!path || memchr(path->u.str.ptr, 0, path->u.str.len))
		_exit(CC_WORKER_EXIT_BAD_FRAME);
	if (!strcmp(t, "fwrite")) {
		const cc_value *d = cc_value_map_get(m, "data", NULL);
		if (!d || d->type != CC_VALUE_BYTES)
			_exit(CC_WORKER_EXIT_BAD_FRAME);
		cc_files_write(path->u.str.ptr, d->u.str.ptr, d->u.str.len, o);
	} else if (!strcmp(t, "fread")) {
		bool ok = true;
		uint64_t max = get_u64(m, "max", &ok);
		if (!ok)
			_exit(CC_WORKER_EXIT_BAD_FRAME);
		cc_files_read(path->u.str.ptr, max, o);
	} else {
		cc_files_list(path->u.str.ptr, o);
	}
}

static void serve_one(const cc_value *m, struct cc_outcome *o)
{
	const cc_value *t = get_str(m, "t");
	bool ok = true;
	uint64_t id = get_u64(m, "id", &ok);
	if (!t || !ok)
		_exit(CC_WORKER_EXIT_BAD_FRAME); /* the supervisor never sends this: do not guess */
	if (!strcmp(t->u.str.ptr, "eval")) {
		const cc_value *code = get_str(m, "code");
		uint64_t timeout_ms = get_u64(m, "timeout_ms", &ok);
		if (!code || !ok || memchr(code->u.str.ptr, 0, code->u.str.len))
			_exit(CC_WORKER_EXIT_BAD_FRAME);
		const cc_value *fb = cc_value_map_get(m, "fallback", NULL);
		cc_worker_value_fallback = cc_value_type_of(fb) == CC_VALUE_BOOL && fb->u.b;
		/* codecage's own code names its file (worker.h); kept in a
		 * static buffer: the frame is freed after the eval */
		static char file[CC_EVAL_FILE_MAX + 1];
		const cc_value *fv = get_str(m, "file");
		if (fv && (fv->u.str.len > CC_EVAL_FILE_MAX || fv->u.str.len < 9 ||
			   memcmp(fv->u.str.ptr, "<codecage", 9) ||
			   memchr(fv->u.str.ptr, 0, fv->u.str.len)))
			_exit(CC_WORKER_EXIT_BAD_FRAME);
		if (fv)
			memcpy(file, fv->u.str.ptr, fv->u.str.len + 1);
		cc_worker_eval_file = fv ? file : "<code>";
		cc_worker_begin_eval(id, timeout_ms);
		cc_worker_display_reset();
		cc_worker_tools_begin(id);
		cc_worker_engine->eval(code->u.str.ptr, code->u.str.len, o);
		cc_worker_tools_end();
	} else if (!strcmp(t->u.str.ptr, "set")) {
		const cc_value *name = get_str(m, "name");
		bool found = false;
		const cc_value *v = cc_value_map_get(m, "value", &found);
		if (!name || !found || !cc_identifier_ok(name->u.str.ptr, name->u.str.len))
			_exit(CC_WORKER_EXIT_BAD_FRAME);
		cc_worker_begin_eval(id, 10000);
		cc_worker_engine->set_global(name->u.str.ptr, v, o);
	} else if (!strcmp(t->u.str.ptr, "bind")) {
		const cc_value *name = get_str(m, "name");
		if (!name || !cc_tool_name_ok(name->u.str.ptr, name->u.str.len))
			_exit(CC_WORKER_EXIT_BAD_FRAME);
		cc_worker_begin_eval(id, 10000);
		if (cc_worker_engine->bind_tool)
			cc_worker_engine->bind_tool(name->u.str.ptr, o);
		else
			cc_outcome_fail(o, CC_ERR_GUEST, "TypeError", "this engine has no tools",
					NULL);
	} else if (!strcmp(t->u.str.ptr, "fwrite") || !strcmp(t->u.str.ptr, "fread") ||
		   !strcmp(t->u.str.ptr, "flist")) {
		serve_file(t->u.str.ptr, m, o);
	} else {
		_exit(CC_WORKER_EXIT_BAD_FRAME);
	}
	cc_worker_flush_output();
	send_result(id, o);
	if (cc_worker_engine->after_result)
		cc_worker_engine->after_result();
}

/* Evaluate the n "lib" frames ({t, file, code}) the supervisor sent after
 * init, in order, before "ready" (in a fork server's template, once for
 * every session). The code was read by the host; it runs under every
 * layer already, all of it within init's library_timeout_ms. A failure becomes the "fail"
 * frame (invalid_input), its message starting "library N: KIND: " (N from
 * 1; KIND the engine's: guest_error, syntax_error, timeout, memory_limit),
 * which the supervisor turns into that kind and the library's name and
 * file. */
static int load_libraries(const struct init_extra *x, uint64_t max_source, cc_error *err)
{
	struct cc_outcome o;
	int rc = 0;
	uint64_t n = x->libraries;
	cc_outcome_init(&o);
	cc_worker_discard_output(true);
	/* one deadline for them all: the supervisor waits that long plus the
	 * startup time, so this timeout (naming the library) arrives first */
	cc_worker_begin_eval(0, x->library_ms);
	for (uint64_t i = 0; i < n && rc == 0; i++) {
		char *buf = NULL;
		size_t len = 0;
		cc_value *m = NULL;
		cc_value_caps caps = cc_value_default_caps();
		if (cc_worker_read_frame(&buf, &len, max_source + CC_FRAME_ENVELOPE + 4096) != 0 ||
		    cc_value_decode_all(buf, len, &m, &caps, err) < 0) {
			free(buf);
			cc_error_clear(err);
			rc = cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
				     "library %" PRIu64 ": malformed lib frame", i + 1);
			break;
		}
		free(buf);
		const cc_value *t = get_str(m, "t"), *file = get_str(m, "file");
		const cc_value *code = get_str(m, "code");
		if (!t || strcmp(t->u.str.ptr, "lib") || !file || !code ||
		    memchr(code->u.str.ptr, 0, code->u.str.len) ||
		    memchr(file->u.str.ptr, 0, file->u.str.len)) {
			rc = cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
				     "library %" PRIu64 ": malformed lib frame", i + 1);
		} else if (!cc_worker_engine->load_library) {
			rc = cc_fail(err, CC_ERR_INVALID_INPUT,
				     "the %s engine loads no libraries (they are JavaScript)",
				     cc_worker_engine->name);
		} else {
			cc_worker_engine->load_library(file->u.str.ptr, code->u.str.ptr,
						       code->u.str.len, m, &o);
			/* invalid_input, a start-up kind protocol.c accepts; the
			 * supervisor, which sent the libraries, takes the engine's
			 * kind from the message (cc_libset_explain). */
			if (!o.ok)
				rc = cc_fail(err, CC_ERR_INVALID_INPUT,
					     "library %" PRIu64 ": %s: %s: %s%s%s", i + 1,
					     cc_error_kind_name(o.kind), o.type ? o.type : "Error",
					     o.message ? o.message : "", o.traceback ? "\n" : "",
					     o.traceback ? o.traceback : "");
			cc_outcome_reset(&o);
		}
		cc_value_free(m);
	}
	cc_worker_discard_output(false);
	return rc;
}

pid_t cc_worker_ppid;
bool cc_worker_web_polyfills;

/* Test-only modes, never passed by the supervisor (and unreachable to a
 * guest: exec is on the kill-list):
 *   --export-bpf        the production main seccomp filter, raw, on stdout
 *   --export-bpf-notify the notify filter stacked under it (seccomp.c)
 *   --export-bpf-template  a fork server template's filter (forkserver.c)
 *   --export-bpf-session   the filter each forked session stacks on it
 *   --print-policy      "<name> <nr> allow|args|kill|enosys" per line
 *   --with-files        (before one of the above) as a session with
 *                       scratch or a grant: CC_SC_FILES added
 *   --probe-unconfined  the self-probes, each in a child, unconfined
 *   --sweep             confine, then fire every system call number from
 *                       a fresh child under the filter and say what ran
 *   --scope-report[-off]  (with --with-files) a scratch template's two
 *                       sessions, no seccomp: what TCP and each other's
 *                       abstract sockets give one of them, with its
 *                       Landlock domain (or, -off, without) */
static int test_mode(const char *mode)
{
	cc_error err = { 0 };
	if (!strncmp(mode, "--export-bpf", 12)) {
		struct cc_bpf bpf;
		unsigned which = cc_confine_seccomp_engine();
		enum cc_kill_how kill = CC_KILL_BY_MONITOR;
		if (!strcmp(mode, "--export-bpf-notify"))
			which = CC_SC_NOTIFY_ONLY;
		else if (!strcmp(mode, "--export-bpf-template"))
			which |= CC_SC_FORK |
				 (cc_worker_limits.scratch_bytes ? CC_SC_FORK_SCRATCH : 0),
				kill = CC_KILL_PROCESS;
		else if (!strcmp(mode, "--export-bpf-session"))
			kill = CC_KILL_PROCESS;
		else if (strcmp(mode, "--export-bpf"))
			return 2;
		if (cc_seccomp_compile(which, EPERM, kill, &bpf, &err) < 0)
			return 1;
		size_t n = bpf.prog.len * sizeof(bpf.prog.filter[0]);
		size_t ok = fwrite(bpf.prog.filter, 1, n, stdout);
		cc_bpf_free(&bpf);
		return ok == n ? 0 : 1;
	}
	if (!strcmp(mode, "--print-policy")) {
		for (size_t i = 0; i < cc_sc_allow_len; i++)
			if (cc_sc_allow[i].engines & cc_confine_seccomp_engine())
				printf("%s %d %s\n", cc_sc_allow[i].name,
				       seccomp_syscall_resolve_name(cc_sc_allow[i].name),
				       cc_sc_allow[i].how == CC_SC_ARGS ? "args" : "allow");
		for (size_t i = 0; i < cc_sc_kill_len; i++)
			printf("%s %d kill\n", cc_sc_kill[i],
			       seccomp_syscall_resolve_name(cc_sc_kill[i]));
		printf("clone3 %d enosys\n", seccomp_syscall_resolve_name("clone3"));
		return 0;
	}
	if (!strcmp(mode, "--probe-unconfined"))
		return cc_probes_report(cc_worker_ppid, stdout) < 0 ? 1 : 0;
	if (!strcmp(mode, "--scope-report") || !strcmp(mode, "--scope-report-off")) {
		if (cc_hygiene(cc_worker_ppid, &err) < 0 ||
		    cc_confine_scope_report(&cc_worker_limits, !strcmp(mode, "--scope-report"),
					    &err) < 0) {
			fprintf(stderr, "scope report: %s\n", err.message ? err.message : "failed");
			return 1;
		}
		return 0;
	}
	if (!strcmp(mode, "--sweep")) {
		if (cc_hygiene(cc_worker_ppid, &err) < 0 ||
		    cc_confine_sweep(&cc_worker_limits, &err) < 0) {
			fprintf(stderr, "sweep: %s\n", err.message ? err.message : "failed");
			return 1;
		}
		return 0;
	}
	fprintf(stderr, "unknown worker flag %s\n", mode);
	return 2;
}

int main(int argc, char **argv)
{
	cc_error err = { 0 };
	pid_t ppid = -1;
	const char *mode_flag = NULL;
	bool with_files = false;
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--ppid=", 7))
			ppid = (pid_t)atol(argv[i] + 7);
		else if (!strncmp(argv[i], "--grants=", 9))
			cc_worker_grant_fds = (size_t)atol(argv[i] + 9) % (CC_MAX_MOUNTS + 1);
		else if (!strcmp(argv[i], "--with-files"))
			with_files = true;
		else
			mode_flag = argv[i];
	}
	cc_worker_ppid = ppid;
	/* A send that would block files what comes in meanwhile (tools.c). */
	cc_worker_channel_init(cc_worker_file_incoming);
	if (mode_flag) {
		/* the limits a default runtime of this engine gets
		 * (defaults.h), with a 1 MiB scratch for --with-files */
		cc_language lang = CC_LANG_JAVASCRIPT;
		cc_language_parse(cc_worker_engine->name, &lang);
		cc_worker_limits =
			(struct cc_init_limits){ .max_memory = cc_default_max_memory(lang),
						 .max_stdout = CC_DEFAULT_MAX_OUTPUT,
						 .max_stderr = CC_DEFAULT_MAX_OUTPUT,
						 .max_result = CC_DEFAULT_MAX_RESULT,
						 .cpu_s = CC_DEFAULT_CPU_S,
						 .max_open_files = CC_DEFAULT_MAX_OPEN_FILES,
						 .scratch_bytes = with_files ? 1 << 20 : 0 };
		return test_mode(mode_flag);
	}
	if (ppid <= 0) {
		cc_fail(&err, CC_ERR_INTERNAL, "worker started without --ppid");
		send_fail_and_exit(&err);
	}

	/* One malloc arena for every thread: glibc gives each new thread an
	 * arena of its own (up to 8 per core), each reserving 64 MiB of
	 * address space, so under RLIMIT_AS a few dozen threads that use
	 * almost no memory exhausted the session's limit (and a thread whose
	 * start then failed could leave CPython waiting for it). */
	mallopt(M_ARENA_MAX, 1);

	/* Confinement first, engine after: DESIGN.md section 3. */
	if (cc_hygiene(ppid, &err) < 0)
		send_fail_and_exit(&err);
	cc_sandbox_mode mode = CC_SANDBOX_REQUIRE;
	uint64_t max_source = 0;
	struct init_extra x = { 0 };
	if (read_init(&mode, &max_source, &x, &err) < 0)
		send_fail_and_exit(&err);
	struct cc_confine_report rep;
	const char *version = NULL;
	if (x.template) {
		/* A fork server: "ready" for the template, then fork requests;
		 * what returns here is a new session, which says "ready" on
		 * its own channel and serves frames like any worker. */
		if (cc_template_start(mode, x.preload, &rep, &version, &err) < 0 ||
		    load_libraries(&x, max_source, &err) < 0)
			send_fail_and_exit(&err);
		send_ready(version, &rep);
		if (cc_template_serve(&err) < 0)
			send_fail_and_exit(&err);
		send_ready(version, &rep);
	} else {
		if (cc_confine(mode, &cc_worker_limits, &rep, &err) < 0)
			send_fail_and_exit(&err);
		if (cc_worker_engine->init(&version, &err) < 0 ||
		    load_libraries(&x, max_source, &err) < 0)
			send_fail_and_exit(&err);
		send_ready(version, &rep);
	}

	size_t cap = (max_source > cc_worker_limits.max_result ? max_source
							       : cc_worker_limits.max_result) +
		     CC_FRAME_ENVELOPE;
	struct cc_outcome o;
	cc_outcome_init(&o);
	for (;;) {
		char *buf = NULL;
		size_t len = 0;
		cc_worker_spin_for_input();
		int rc = cc_worker_read_frame(&buf, &len, cap);
		if (rc == -1)
			_exit(CC_WORKER_EXIT_CLOSED); /* runtime closed */
		if (rc < 0)
			_exit(CC_WORKER_EXIT_BAD_FRAME);
		cc_value *m = NULL;
		cc_value_caps caps = cc_value_frame_caps(cc_worker_limits.max_result);
		caps.mem_cap = 0; /* the worker's own memory: its rlimits bound it */
		cc_error derr = { 0 };
		if (cc_value_decode_all(buf, len, &m, &caps, &derr) < 0)
			_exit(CC_WORKER_EXIT_BAD_FRAME);
		free(buf);
		const cc_value *t = get_str(m, "t");
		if (t && !strcmp(t->u.str.ptr, "reply")) {
			/* a late reply to a call of an eval that has ended */
			cc_worker_take_reply(m);
			cc_value_free(m);
			continue;
		}
		if (t && !strcmp(t->u.str.ptr, "clock")) {
			/* a clock change that crossed the end of its eval */
			cc_value_free(m);
			continue;
		}
		serve_one(m, &o);
		cc_value_free(m);
		cc_outcome_reset(&o);
	}
}
