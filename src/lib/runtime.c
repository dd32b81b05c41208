/* cc_runtime: one worker, its limits, its start and its public calls.
 * Supervisor side: every limit that matters is enforced here too; the
 * round trip of a request (its frames, output and deadlines) is
 * request.c's. */
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "deps.h"
#include "error.h"
#include "frame.h"
#include "init_frame.h"
#include "message.h"
#include "seccomp_policy.h"
#include "net.h"
#include "source.h"
#include "supervisor.h"
#include "utf8.h"

size_t cc_runtime_recv_cap(const cc_runtime *rt)
{
	return (size_t)rt->opts.limits.max_result + CC_FRAME_ENVELOPE;
}

void cc_runtime_mark_dead(cc_runtime *rt, const char *why, bool wait_exit)
{
	if (!rt->alive)
		return;
	rt->alive = false;
	if (wait_exit && !cc_child_try_reap(&rt->child)) {
		struct pollfd p = { rt->child.pidfd, POLLIN, 0 };
		poll(&p, 1, 200);
	}
	/* Say how the worker died only if it died before we killed it. */
	bool died = cc_child_try_reap(&rt->child);
	pthread_mutex_lock(&rt->kill_lock);
	cc_child_kill(&rt->child);
	pthread_mutex_unlock(&rt->kill_lock);
	char *how = NULL;
	if (__atomic_load_n(&rt->interrupted, __ATOMIC_ACQUIRE))
		how = strdup("was interrupted by the host");
	else if (died)
		how = cc_child_describe(&rt->child);
	else
		how = strdup("was stopped by the supervisor");
	free(rt->death);
	if (asprintf(&rt->death, "%s (the worker %s)", why, how ? how : "ended") < 0)
		rt->death = NULL;
	free(how);
}

/* The init frame: the limits as CC_INIT_LIMITS lists them (init_frame.h),
 * then the other fields (HACKING.md, Protocol). */
static int send_init(cc_runtime *rt, const char *preload, size_t nlibs, const struct cc_grants *gs,
		     int64_t deadline, cc_error *err)
{
	const cc_limits *l = &rt->opts.limits;
	const struct cc_init_limits v = {
		.max_memory = l->max_memory,
		.max_stdout = l->max_stdout,
		.max_stderr = l->max_stderr,
		.max_result = l->max_result,
		.max_source = l->max_source,
		.cpu_s = l->cpu_s,
		.max_open_files = l->max_open_files,
		.max_file_size = cc_file_size_cap(&rt->opts, gs),
		.scratch_bytes = cc_scratch_bytes(&rt->opts),
	};
	size_t n = CC_INIT_LIMITS_COUNT;
	struct cc_msgbuf m;
	bool web = rt->opts.web_polyfills;
	cc_msgbuf_begin(
		&m, 2 + n + (preload ? 3 : 0) + (web ? 1 : 0) + (nlibs ? 2 : 0) + (gs->n ? 1 : 0),
		"init");
	cc_pack_kv_str(&m.pk, "mode", cc_sandbox_mode_name(rt->opts.sandbox));
#define PACK_LIMIT(name) cc_pack_kv_u64(&m.pk, #name, v.name);
	CC_INIT_LIMITS(PACK_LIMIT)
#undef PACK_LIMIT
	if (gs->n) { /* [[guest, host, writable, attach], ...], descriptors from fd 4 */
		cc_pack_cstr(&m.pk, "mounts");
		msgpack_pack_array(&m.pk, gs->n);
		for (size_t i = 0; i < gs->n; i++) {
			msgpack_pack_array(&m.pk, 4);
			cc_pack_cstr(&m.pk, gs->g[i].guest);
			cc_pack_cstr(&m.pk, gs->g[i].host);
			(void)(gs->g[i].writable ? msgpack_pack_true(&m.pk)
						 : msgpack_pack_false(&m.pk));
			(void)(gs->g[i].attach ? msgpack_pack_true(&m.pk)
					       : msgpack_pack_false(&m.pk));
		}
	}
	if (preload) { /* a fork server's template (forkserver.c) */
		cc_pack_kv_bool(&m.pk, "template", true);
		cc_pack_kv_str(&m.pk, "preload", preload);
		/* what it sizes its quotas for */
		cc_pack_kv_u64(&m.pk, "max_sessions", cc_max_sessions(&rt->opts));
	}
	if (nlibs) { /* that many "lib" frames follow (libraries.c) */
		cc_pack_kv_u64(&m.pk, "libraries", nlibs);
		/* all of them load within one eval's timeout (cc_runtime_start
		 * waits that much longer for "ready") */
		cc_pack_kv_u64(&m.pk, "library_timeout_ms", (uint64_t)(l->timeout_s * 1000));
	}
	if (web) { /* run the built-in WEB_POLYFILLS at engine start */
		cc_pack_kv_bool(&m.pk, "web_polyfills", true);
	}
	int rc = cc_msgbuf_check(&m, "init", err);
	if (rc == 0)
		rc = cc_chan_send(&rt->child, m.sb.data, m.sb.size, deadline, err);
	cc_msgbuf_free(&m);
	return rc;
}

char *cc_dup_str(const cc_value *s)
{
	return strdup(s && s->type == CC_VALUE_STRING ? s->u.str.ptr : "");
}

/* A template's preload_skipped (validated by protocol.c), joined by '\n';
 * only a template's ready frame may carry it. */
static int keep_skipped(cc_runtime *rt, const cc_value *v, cc_error *err)
{
	if (!v)
		return 0;
	if (!rt->is_template)
		return cc_fail(
			err, CC_ERR_PROTOCOL_VIOLATION,
			"ready message: preload_skipped from a worker that preloads nothing");
	size_t len = 0;
	for (size_t i = 0; i < v->u.array.len; i++)
		len += v->u.array.items[i]->u.str.len + 1;
	char *s = malloc(len), *p = s;
	if (!s)
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	for (size_t i = 0; i < v->u.array.len; i++) {
		const cc_value *e = v->u.array.items[i];
		memcpy(p, e->u.str.ptr, e->u.str.len);
		p += e->u.str.len;
		*p++ = i + 1 < v->u.array.len ? '\n' : 0;
	}
	rt->preload_skipped = s;
	return 0;
}

/* The layers the design lists for this kernel that a "require" runtime
 * must have; the supervisor checks the worker's report itself. */
static int check_ready(cc_runtime *rt, const struct cc_msg *m, cc_error *err)
{
	const char *want = cc_language_name(rt->opts.language);
	if (strcmp(m->engine->u.str.ptr, want) != 0)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
			       "worker reports engine '%s', expected '%s'", m->engine->u.str.ptr,
			       want);
	if (rt->opts.sandbox == CC_SANDBOX_REQUIRE && m->missing->u.str.len > 0)
		return cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
			       "sandbox 'require' not met: missing %s", m->missing->u.str.ptr);
	rt->version = cc_dup_str(m->version);
	rt->applied = cc_dup_str(m->applied);
	rt->missing = cc_dup_str(m->missing);
	if (!rt->version || !rt->applied || !rt->missing)
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	rt->report.mode = rt->opts.sandbox;
	rt->report.applied = rt->applied;
	rt->report.missing = rt->missing;
	rt->report.landlock_abi = (int)m->landlock_abi;
	rt->report.seccomp_allowed = (int)m->seccomp_allowed;
	return keep_skipped(rt, m->preload_skipped, err);
}

/* The worker ended before "ready" without a "fail" frame: say how it died,
 * and read the self-probe 'exec' getting through (the worker became a
 * shell that exits CC_PROBE_EXEC_EXIT) as the refusal it is. */
static void startup_death(cc_runtime *rt, cc_error *err)
{
	if (err->kind != CC_ERR_WORKER_CRASHED)
		return;
	if (!cc_child_try_reap(&rt->child)) {
		struct pollfd p = { rt->child.pidfd, POLLIN, 0 };
		poll(&p, 1, 200);
		if (!cc_child_try_reap(&rt->child))
			return;
	}
	if (rt->child.wstatus_code == CLD_EXITED && rt->child.wstatus == CC_PROBE_EXEC_EXIT) {
		cc_error_clear(err);
		cc_fail(err, CC_ERR_SANDBOX_UNAVAILABLE,
			"self-probes got through the sandbox (exec: the worker was replaced by "
			"/bin/sh); refusing to start");
		return;
	}
	char *how = cc_child_describe(&rt->child);
	char *msg = NULL;
	int r = asprintf(&msg, "%s (the worker %s)", err->message ? err->message : "",
			 how ? how : "ended");
	free(how);
	if (r < 0)
		return;
	cc_error_kind kind = err->kind;
	cc_error_clear(err);
	cc_fail(err, kind, "%s", msg);
	free(msg);
}

cc_runtime *cc_runtime_alloc(const cc_options *opts, cc_error *err)
{
	cc_runtime *rt = calloc(1, sizeof(*rt));
	if (!rt) {
		cc_fail(err, CC_ERR_INTERNAL, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&rt->kill_lock, NULL);
	rt->opts = *opts;
	rt->opts.worker_dir = NULL; /* borrowed: only used while spawning */
	rt->opts.libraries = NULL;  /* borrowed: read before the worker starts */
	rt->opts.n_libraries = 0;
	rt->opts.node_modules = NULL;
	rt->opts.mounts = NULL; /* borrowed too: resolved while starting */
	rt->opts.n_mounts = 0;
	rt->opts.net = NULL;	     /* borrowed: made into rt->net's policy */
	rt->opts.python_path = NULL; /* borrowed too: grants, resolved while starting */
	rt->opts.n_python_path = 0;
	rt->opts.dependencies = NULL; /* borrowed: applied before the start (deps.c) */
	rt->opts.n_dependencies = 0;
	rt->opts.deps = NULL;
	rt->next_id = 1;
	rt->child.pid = -1;
	rt->child.pidfd = -1;
	rt->child.sock = -1;
	rt->child.status_fd = -1;
	return rt;
}

int cc_runtime_await_ready(cc_runtime *rt, int64_t deadline, cc_error *err)
{
	char *buf = NULL;
	size_t len = 0;
	struct cc_msg m;
	if (cc_chan_recv(&rt->child, &buf, &len, cc_runtime_recv_cap(rt), deadline, err) < 0 ||
	    cc_msg_parse(buf, len, rt->opts.limits.max_result, &m, err) < 0) {
		free(buf);
		startup_death(rt, err);
		return cc_fail_wrap(err, "starting the %s worker",
				    cc_language_name(rt->opts.language));
	}
	free(buf);
	int rc;
	if (m.what == CC_MSG_FAIL)
		rc = cc_fail(err, m.kind, "%s", m.message->u.str.ptr);
	else if (m.what != CC_MSG_READY)
		rc = cc_fail(err, CC_ERR_PROTOCOL_VIOLATION, "expected a ready message");
	else
		rc = check_ready(rt, &m, err);
	cc_msg_free(&m);
	return rc;
}

int cc_runtime_start(const cc_options *opts, const char *preload, const struct cc_libset *libs,
		     cc_runtime **out, cc_error *err)
{
	*out = NULL;
	if (!opts)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "options are required");
	if (cc_options_check(opts, err) < 0)
		return -1;
	/* Grants are checked and resolved before any worker exists. */
	struct cc_grants gs;
	if (cc_grants_resolve(opts, &gs, err) < 0)
		return -1;
	cc_runtime *rt = cc_runtime_alloc(opts, err);
	if (!rt) {
		cc_grants_free(&gs);
		return -1;
	}
	rt->n_grant_ids = cc_grants_ids(&gs, rt->grant_ids);
	int rc = cc_spawn_worker(opts, &gs, &rt->child, err);
	if (rc < 0) {
		cc_grants_free(&gs);
		cc_runtime_close(rt);
		return -1;
	}
	rt->is_template = preload != NULL;
	rt->alive = true;
	int64_t deadline = cc_now_ns() + cc_secs_to_ns(CC_STARTUP_TIMEOUT_S);
	if (cc_libset_count(libs))
		deadline += cc_secs_to_ns(opts->limits.timeout_s);
	rc = send_init(rt, preload, cc_libset_count(libs), &gs, deadline, err);
	cc_grants_free(&gs); /* the worker holds its own descriptors */
	if (rc < 0) {
		startup_death(rt, err);
		cc_fail_wrap(err, "starting the %s worker", cc_language_name(opts->language));
		cc_runtime_close(rt);
		return -1;
	}
	/* A worker that refuses to start stops reading: its "fail" frame,
	 * already sent, says why better than the broken send does. */
	if (cc_libset_send(&rt->child, libs, deadline, err) < 0)
		cc_error_clear(err);
	if (cc_runtime_await_ready(rt, deadline, err) < 0) {
		cc_libset_explain(libs, opts->web_polyfills, err);
		cc_runtime_close(rt);
		return -1;
	}
	*out = rt;
	return 0;
}

/* cc_runtime_new once the dependencies are applied (opts has none left). */
static int runtime_new(const cc_options *opts, const cc_deps *deps, struct cc_net_policy *net,
		       cc_runtime **out, cc_error *err)
{
	struct cc_libset *libs = NULL;
	int rc = -1;
	char *note = NULL;
	if (cc_libset_load(opts, deps, &libs, err) < 0) {
		cc_net_policy_unref(net);
		return -1;
	}
	/* cc_options.fork_server: a session of the shared server; when it
	 * cannot serve, a spawned worker as without the option, noted. */
	if (opts->fork_server &&
	    cc_shared_session(opts, libs, cc_net_policy_ref(net), out, &note) == 0) {
		cc_libset_free(libs);
		cc_net_policy_unref(net);
		(*out)->fork_note = strdup("shared");
		(*out)->report.fork_server = (*out)->fork_note;
		return 0;
	}
	rc = cc_runtime_start(opts, NULL, libs, out, err);
	cc_libset_free(libs);
	if (rc == 0 && cc_net_install(*out, net, err) < 0) {
		cc_runtime_close(*out);
		*out = NULL;
		free(note);
		return -1;
	}
	if (rc < 0) {
		cc_net_policy_unref(net);
		free(note);
		return rc;
	}
	if (opts->fork_server) {
		if (!note || asprintf(&(*out)->fork_note, "spawned: %s", note) < 0)
			(*out)->fork_note = NULL;
		(*out)->report.fork_server = (*out)->fork_note ? (*out)->fork_note : "spawned";
	}
	free(note);
	return 0;
}

CC_EXPORT int cc_runtime_new(const cc_options *opts, cc_runtime **out, cc_error *err)
{
	struct cc_net_policy *net = NULL;
	*out = NULL;
	if (!opts)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "options are required");
	if (cc_net_from_options(opts, &net, err) < 0)
		return -1;
	/* Dependencies are installed (or found in the cache) before any
	 * worker starts; a Python runtime gets their folder as a grant. */
	struct cc_deps_opts dop;
	if (cc_options_check(opts, err) < 0 || cc_deps_apply(opts, &dop, err) < 0) {
		cc_net_policy_unref(net);
		return -1;
	}
	int rc = runtime_new(&dop.o, dop.d, net, out, err);
	if (rc == 0 && !(*out)->deps)
		(*out)->deps = cc_deps_ref(dop.d);
	cc_deps_opts_done(&dop);
	return rc;
}

CC_EXPORT const cc_sandbox_report *cc_runtime_sandbox(const cc_runtime *rt)
{
	return rt ? &rt->report : NULL;
}

CC_EXPORT const char *cc_runtime_engine_version(const cc_runtime *rt)
{
	return rt && rt->version ? rt->version : "";
}

CC_EXPORT int cc_runtime_pid(const cc_runtime *rt)
{
	return rt && rt->alive ? (int)rt->child.pid : -1;
}

CC_EXPORT bool cc_runtime_alive(const cc_runtime *rt)
{
	return rt && rt->alive;
}

CC_EXPORT void cc_runtime_interrupt(cc_runtime *rt)
{
	if (!rt)
		return;
	__atomic_store_n(&rt->interrupted, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&rt->kill_lock);
	cc_child_signal_kill(&rt->child);
	pthread_mutex_unlock(&rt->kill_lock);
}

static void runtime_free(cc_runtime *rt)
{
	pthread_mutex_lock(&rt->kill_lock);
	cc_child_kill(&rt->child);
	pthread_mutex_unlock(&rt->kill_lock);
	if (rt->forkserver)
		cc_forkserver_unref(rt->forkserver);
	cc_deps_free(rt->deps);
	pthread_mutex_destroy(&rt->kill_lock);
	cc_tools_free(rt);
	cc_net_free(rt->net);
	rt->net = NULL;
	free(rt->death);
	free(rt->version);
	free(rt->applied);
	free(rt->preload_skipped);
	free(rt->missing);
	free(rt->fork_note);
	free(rt);
}

CC_EXPORT void cc_runtime_set_wait_handler(cc_runtime *rt, void (*fn)(void *user), void *user)
{
	if (!rt)
		return;
	rt->on_wait = fn;
	rt->on_wait_user = user;
}

CC_EXPORT void cc_runtime_set_output_handler(cc_runtime *rt, cc_output_fn fn, void *user)
{
	if (!rt)
		return;
	rt->on_output = fn;
	rt->on_output_user = user;
}

CC_EXPORT void cc_runtime_set_value_fallback(cc_runtime *rt, bool on)
{
	if (rt)
		rt->value_fallback = on;
}

CC_EXPORT void cc_runtime_set_output_text_handler(cc_runtime *rt, cc_output_fn fn, void *user)
{
	if (!rt)
		return;
	rt->on_text = fn;
	rt->on_text_user = user;
}

static void set_from_error(cc_result *r, const cc_error *e)
{
	cc_result_set_error(r, e->kind, NULL, "%s", e->message ? e->message : "");
}

static cc_result *dead_result(cc_runtime *rt)
{
	cc_result *r = cc_result_alloc();
	if (r)
		cc_result_set_error(r, CC_ERR_WORKER_CRASHED, NULL,
				    "this runtime's worker is gone: %s; create a new runtime",
				    rt && rt->death ? rt->death : "it was closed");
	return r;
}

CC_EXPORT cc_result *cc_runtime_eval(cc_runtime *rt, const char *code, size_t len, double timeout_s)
{
	return cc_runtime_eval_file(rt, code, len, timeout_s, NULL);
}

cc_result *cc_runtime_eval_file(cc_runtime *rt, const char *code, size_t len, double timeout_s,
				const char *file)
{
	if (!rt || !rt->alive)
		return dead_result(rt);
	cc_result *r = cc_result_alloc();
	if (!r)
		return NULL;
	const cc_limits *l = &rt->opts.limits;
	if (timeout_s <= 0)
		timeout_s = l->timeout_s;
	if (!code)
		code = "";
	cc_error err = { 0 };
	if (cc_check_source(code, len, l->max_source, &err) < 0) {
		set_from_error(r, &err);
		cc_error_clear(&err);
		return r;
	}
	if (!isfinite(timeout_s) || timeout_s > CC_MAX_TIMEOUT_S) {
		cc_result_set_error(r, CC_ERR_INVALID_INPUT, NULL,
				    "timeout must be in (0, %d] seconds", CC_MAX_TIMEOUT_S);
		return r;
	}
	/* A PEP 723 block asking for what this runtime lacks says so. */
	if (cc_deps_check_script(rt, code, len, &err) < 0) {
		set_from_error(r, &err);
		cc_error_clear(&err);
		return r;
	}
	if (!cc_runtime_enter(rt, &err)) {
		set_from_error(r, &err);
		cc_error_clear(&err);
		return r;
	}
	uint64_t id = rt->next_id++;
	struct cc_msgbuf m;
	msgpack_packer *pk = &m.pk;
	rt->asked_fallback = rt->value_fallback;
	cc_msgbuf_begin(&m, 4 + rt->asked_fallback + (file != NULL), "eval");
	cc_pack_kv_u64(pk, "id", id);
	cc_pack_kv_strn(pk, "code", code, len);
	cc_pack_kv_u64(pk, "timeout_ms", (uint64_t)ceil(timeout_s * 1000));
	if (rt->asked_fallback) {
		cc_pack_kv_bool(pk, "fallback", true);
	}
	if (file)
		cc_pack_kv_str(pk, "file", file);
	if (cc_msgbuf_check(&m, "eval", &err) < 0) { /* nothing sent: still alive */
		set_from_error(r, &err);
		cc_error_clear(&err);
	} else {
		cc_round_trip(rt, id, &m.sb, timeout_s, true, r);
	}
	cc_runtime_leave(rt);
	cc_msgbuf_free(&m);
	return r;
}

CC_EXPORT int cc_runtime_set_global(cc_runtime *rt, const char *name, const cc_value *value,
				    cc_error *err)
{
	if (!rt || !rt->alive)
		return cc_fail(err, CC_ERR_WORKER_CRASHED, "this runtime's worker is gone: %s",
			       rt && rt->death ? rt->death : "it was closed");
	if (!name || !cc_identifier_ok(name, strlen(name)))
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "global name must be an ASCII identifier ([A-Za-z_][A-Za-z0-9_]*, "
			       "at most 256 characters)");
	uint64_t id = rt->next_id++;
	struct cc_msgbuf m;
	msgpack_packer *pk = &m.pk;
	cc_msgbuf_begin(&m, 4, "set");
	cc_pack_kv_u64(pk, "id", id);
	cc_pack_kv_str(pk, "name", name);
	cc_pack_cstr(pk, "value");
	cc_value_caps caps = { CC_VALUE_MAX_DEPTH, cc_value_node_budget(rt->opts.limits.max_result),
			       0, 0, 0 };
	if (cc_value_encode(pk, value, &caps, err) < 0) {
		cc_msgbuf_free(&m);
		return cc_fail_wrap(err, "global '%s'", name);
	}
	if (cc_msgbuf_check(&m, "set", err) < 0) {
		cc_msgbuf_free(&m);
		return cc_fail_wrap(err, "global '%s'", name);
	}
	if (m.sb.size > rt->opts.limits.max_result + CC_FRAME_ENVELOPE) {
		cc_msgbuf_free(&m);
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "global '%s' encodes to %zu bytes, over the %llu-byte value cap",
			       name, m.sb.size, (unsigned long long)rt->opts.limits.max_result);
	}
	int rc = cc_runtime_request(rt, id, &m, err);
	cc_msgbuf_free(&m);
	return rc < 0 ? cc_fail_wrap(err, "setting global '%s'", name) : 0;
}

bool cc_runtime_enter(cc_runtime *rt, cc_error *err)
{
	if (__atomic_exchange_n(&rt->busy, 1, __ATOMIC_ACQUIRE)) {
		cc_fail(err, CC_ERR_INVALID_INPUT,
			"this runtime is already running a request: a tool called back into its "
			"own runtime, or two threads used one runtime at once");
		return false;
	}
	return true;
}

void cc_runtime_leave(cc_runtime *rt)
{
	__atomic_store_n(&rt->busy, 0, __ATOMIC_RELEASE);
	if (rt->close_pending)
		runtime_free(rt);
}

CC_EXPORT void cc_runtime_close(cc_runtime *rt)
{
	if (!rt)
		return;
	if (__atomic_load_n(&rt->busy, __ATOMIC_ACQUIRE)) {
		/* Called from inside one of its tools: the request still holds
		 * the runtime. Stop the worker now, free when the request ends. */
		cc_runtime_mark_dead(rt, "closed from inside a tool", false);
		rt->close_pending = true;
		return;
	}
	runtime_free(rt);
}
