/* cc_runtime: one worker, its limits, and the eval round trip.
 * Supervisor side: every limit that matters is enforced here too. */
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "error.h"
#include "frame.h"
#include "init_frame.h"
#include "message.h"
#include "seccomp_policy.h"
#include "net.h"
#include "source.h"
#include "supervisor.h"
#include "utf8.h"

/* Bytes of a successful result frame besides its value: {"t": "result",
 * "id": u64, "ok": true, "value": ...} takes 32. */
#define CC_RESULT_ENVELOPE 64
/* ... and of its displays besides their data (protocol.c counts that
 * against max_result): headers and MIME names, under 128 bytes each. */
#define CC_DISPLAYS_ENVELOPE (CC_MAX_DISPLAYS * 128)

static int64_t secs_to_ns(double s)
{
	return (int64_t)(s * 1e9);
}

/* The largest frame the worker may send: a result of max_result bytes or
 * an output chunk, plus the envelope. */
static size_t recv_cap(const cc_runtime *rt)
{
	return (size_t)rt->opts.limits.max_result + CC_FRAME_ENVELOPE;
}

/* The worker is done for. When it closed the channel itself (wait_exit),
 * give it a moment to finish dying so the message can say how it died: a
 * crashing process closes its fds before it becomes reapable. */
static void mark_dead(cc_runtime *rt, const char *why, bool wait_exit)
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
	cc_pack_cstr(&m.pk, "mode");
	cc_pack_cstr(&m.pk, cc_sandbox_mode_name(rt->opts.sandbox));
#define PACK_LIMIT(name)                                                                           \
	cc_pack_cstr(&m.pk, #name);                                                                \
	msgpack_pack_uint64(&m.pk, v.name);
	CC_INIT_LIMITS(PACK_LIMIT)
#undef PACK_LIMIT
	if (gs->n) { /* [[guest, host, writable], ...], descriptors from fd 4 */
		cc_pack_cstr(&m.pk, "mounts");
		msgpack_pack_array(&m.pk, gs->n);
		for (size_t i = 0; i < gs->n; i++) {
			msgpack_pack_array(&m.pk, 3);
			cc_pack_cstr(&m.pk, gs->g[i].guest);
			cc_pack_cstr(&m.pk, gs->g[i].host);
			if (gs->g[i].writable)
				msgpack_pack_true(&m.pk);
			else
				msgpack_pack_false(&m.pk);
		}
	}
	if (preload) { /* a fork server's template (forkserver.c) */
		cc_pack_cstr(&m.pk, "template");
		msgpack_pack_true(&m.pk);
		cc_pack_cstr(&m.pk, "preload");
		cc_pack_cstr(&m.pk, preload);
		cc_pack_cstr(&m.pk, "max_sessions"); /* what it sizes its quotas for */
		msgpack_pack_uint32(&m.pk, cc_max_sessions(&rt->opts));
	}
	if (nlibs) { /* that many "lib" frames follow (libraries.c) */
		cc_pack_cstr(&m.pk, "libraries");
		msgpack_pack_uint64(&m.pk, nlibs);
		/* all of them load within one eval's timeout (cc_runtime_start
		 * waits that much longer for "ready") */
		cc_pack_cstr(&m.pk, "library_timeout_ms");
		msgpack_pack_uint64(&m.pk, (uint64_t)(l->timeout_s * 1000));
	}
	if (web) { /* run the built-in WEB_POLYFILLS at engine start */
		cc_pack_cstr(&m.pk, "web_polyfills");
		msgpack_pack_true(&m.pk);
	}
	int rc = cc_msgbuf_check(&m, "init", err);
	if (rc == 0)
		rc = cc_chan_send(&rt->child, m.sb.data, m.sb.size, deadline, err);
	cc_msgbuf_free(&m);
	return rc;
}

static char *dup_str(const cc_value *s)
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
	rt->version = dup_str(m->version);
	rt->applied = dup_str(m->applied);
	rt->missing = dup_str(m->missing);
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
	if (cc_chan_recv(&rt->child, &buf, &len, recv_cap(rt), deadline, err) < 0 ||
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
	int64_t deadline = cc_now_ns() + secs_to_ns(CC_STARTUP_TIMEOUT_S);
	if (cc_libset_count(libs))
		deadline += secs_to_ns(opts->limits.timeout_s);
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

CC_EXPORT int cc_runtime_new(const cc_options *opts, cc_runtime **out, cc_error *err)
{
	struct cc_libset *libs = NULL;
	struct cc_net_policy *net = NULL;
	*out = NULL;
	if (!opts)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "options are required");
	if (cc_net_from_options(opts, &net, err) < 0)
		return -1;
	int rc = -1;
	char *note = NULL;
	if (cc_options_check(opts, err) < 0 || cc_libset_load(opts, &libs, err) < 0) {
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
	pthread_mutex_destroy(&rt->kill_lock);
	cc_tools_free(rt);
	cc_net_free(rt);
	free(rt->death);
	free(rt->version);
	free(rt->applied);
	free(rt->preload_skipped);
	free(rt->missing);
	free(rt->fork_note);
	free(rt);
}

/* Captured output of one eval: at most cap bytes kept per stream. */
struct capture {
	char *buf;
	size_t len, cap;
	uint64_t total;
	size_t line_start; /* where the output handler's next line begins */
};

/* Hand complete lines of the kept text to the runtime's output handlers
 * (all of what is left when `final`): the text handler once with all of
 * them, newlines kept, then the line handler once per line. Both see
 * repaired UTF-8. */
static void emit_lines(cc_runtime *rt, struct capture *c, int fd, bool final)
{
	if ((!rt->on_output && !rt->on_text) || !c->buf || c->line_start >= c->len)
		return;
	const char *from = c->buf + c->line_start;
	size_t end = c->len;
	if (!final) {
		const char *nl = memrchr(from, '\n', c->len - c->line_start);
		if (!nl)
			return;
		end = (size_t)(nl - c->buf) + 1;
	}
	size_t n = 0;
	char *text = cc_utf8_repair(from, end - c->line_start, &n);
	c->line_start = end;
	if (!text)
		return;
	if (rt->on_text)
		rt->on_text(rt->on_text_user, fd, text, n);
	for (char *p = text; rt->on_output && p < text + n;) {
		char *nl = memchr(p, '\n', (size_t)(text + n - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(text + n - p);
		rt->on_output(rt->on_output_user, fd, p, len);
		p += len + (nl ? 1 : 0);
	}
	free(text);
}

static int capture_add(struct capture *c, const char *p, size_t n)
{
	c->total += n;
	size_t room = c->cap - c->len;
	if (n > room)
		n = room;
	if (!n)
		return 0;
	char *b = realloc(c->buf, c->len + n + 1);
	if (!b)
		return -1;
	c->buf = b;
	memcpy(c->buf + c->len, p, n);
	c->len += n;
	return 0;
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

/* Hand the capture to the result as repaired UTF-8, with a marker when
 * the stream went over its cap. */
static void capture_finish(struct capture *c, cc_result *r, int fd)
{
	size_t n = 0;
	char *text = cc_utf8_repair(c->buf ? c->buf : "", c->len, &n);
	free(c->buf);
	c->buf = NULL;
	if (!text && r->kind == CC_OK) /* never an ok result with its output lost */
		cc_result_set_error(r, CC_ERR_INTERNAL, NULL, "out of memory keeping the eval's %s",
				    fd == 1 ? "stdout" : "stderr");
	if (text && c->total > c->cap) {
		char *marked = NULL;
		if (asprintf(&marked, "%s%s[codecage: %s truncated at %zu bytes]\n", text,
			     n && text[n - 1] != '\n' ? "\n" : "", fd == 1 ? "stdout" : "stderr",
			     c->cap) >= 0) {
			free(text);
			text = marked;
			n = strlen(text);
		}
	}
	r->out[fd] = text;
	r->out_len[fd] = text ? n : 0;
}

static void set_from_error(cc_result *r, const cc_error *e)
{
	cc_result_set_error(r, e->kind, NULL, "%s", e->message ? e->message : "");
}

/* Approval waits (cc_tool_call_hold): while a call of the eval is held,
 * the eval's deadline clock stops and the earliest held call's approval
 * timeout bounds the wait instead; when none is held any more, the
 * deadline moves later by the time spent waiting. The worker's own
 * deadline follows through "clock" frames (HACKING.md, "Protocol"), but
 * the one that counts is this one. An approval that times out starts the
 * clock again with nothing left: the eval ends as a timeout that says so,
 * and no call of that eval is held again. */
struct hold {
	int64_t start;	   /* cc_now_ns() when the wait began; 0 = not waiting */
	int64_t until;	   /* the approval deadline the worker was last told of */
	bool expired;	   /* an approval timed out */
	double waited_s;   /* how long that wait was */
	double approval_s; /* the approval timeout of the earliest held call */
};

static int send_clock(cc_runtime *rt, int64_t left_ns, int64_t limit, cc_error *err)
{
	struct cc_msgbuf m;
	cc_msgbuf_begin(&m, 2, "clock");
	cc_pack_cstr(&m.pk, "timeout_ms");
	msgpack_pack_uint64(&m.pk, left_ns > 0 ? (uint64_t)(left_ns + 999999) / 1000000 : 0);
	int rc = cc_msgbuf_check(&m, "clock", err);
	if (rc == 0)
		rc = cc_chan_send(&rt->child, m.sb.data, m.sb.size, limit, err);
	cc_msgbuf_free(&m);
	return rc;
}

/* Update the hold state; *deadline and *hard move when a wait ends. Sets
 * *now_deadline (the deadline as it stands now, for calls that arrive
 * during a wait) and *limit (when this wait must end). While waiting, the
 * worker's deadline is what the eval had left when the wait began, after
 * the earliest approval deadline (told again whenever that one changes). */
static int track_hold(cc_runtime *rt, struct hold *h, int64_t *deadline, int64_t *hard,
		      int64_t *now_deadline, int64_t *limit, cc_error *err)
{
	int64_t until, now = cc_now_ns();
	double approval_s;
	size_t n = h->expired ? 0 : cc_replyq_held(rt->replyq, &until, &approval_s);
	if (n && !h->start) {
		h->start = now;
		h->until = 0;
	} else if (!n && h->start) {
		*deadline += now - h->start;
		*hard += now - h->start;
		h->start = 0;
		if (send_clock(rt, *deadline - now, *hard, err) < 0)
			return -1;
	}
	if (h->start && now >= until) {
		/* Nobody answered in time: the clock runs again, at zero. */
		h->expired = true;
		h->waited_s = (double)(now - h->start) / 1e9;
		h->approval_s = approval_s;
		h->start = 0;
		*deadline = now;
		*hard = now + secs_to_ns(rt->opts.limits.grace_s);
		if (send_clock(rt, 0, *hard, err) < 0)
			return -1;
	} else if (h->start && until != h->until) {
		h->until = until;
		if (send_clock(rt, (*deadline - h->start) + (until - now), *hard, err) < 0)
			return -1;
	}
	*now_deadline = h->start ? *deadline + (now - h->start) : *deadline;
	*limit = h->start ? until : *hard;
	return 0;
}

static void approval_timeout_error(cc_result *r, const struct hold *h)
{
	char *tb = r->traceback;
	r->traceback = NULL;
	cc_result_set_error(
		r, CC_ERR_TIMEOUT, "TimeoutError",
		"a tool call waited %.3g s for approval and was not answered within its "
		"approval timeout of %.3g s, so the eval was stopped; answer sooner, or "
		"raise cc_tool_call_hold's approval_timeout_s",
		h->waited_s, h->approval_s);
	r->traceback = tb;
}

/* Send one request and collect frames until its result. Fills r. */
static void round_trip(cc_runtime *rt, uint64_t id, const msgpack_sbuffer *req, double timeout_s,
		       bool is_eval, cc_result *r)
{
	const cc_limits *l = &rt->opts.limits;
	int64_t start = cc_now_ns();
	int64_t deadline = start + secs_to_ns(timeout_s);
	int64_t hard = deadline + secs_to_ns(l->grace_s);
	struct capture cap[3] = { { 0 },
				  { NULL, 0, l->max_stdout, 0, 0 },
				  { NULL, 0, l->max_stderr, 0, 0 } };
	cc_error err = { 0 };
	bool done = false;
	struct hold hold = { 0 };
	int64_t now_deadline = deadline, limit = hard;
	rt->budget_refused = false;
	/* Answers of asynchronous tools are accepted for this eval only. */
	if (is_eval)
		cc_replyq_open(rt->replyq, id);

	if (cc_chan_send(&rt->child, req->data, req->size, hard, &err) < 0)
		goto failed;
	while (!done) {
		char *buf = NULL;
		size_t len = 0;
		struct cc_msg m;
		/* Frames already queued are read without waiting: check the
		 * clock here too, or a worker that keeps writing keeps us. */
		if (is_eval && rt->replyq &&
		    track_hold(rt, &hold, &deadline, &hard, &now_deadline, &limit, &err) < 0)
			goto failed;
		if (cc_now_ns() >= limit) {
			cc_fail(&err, CC_ERR_TIMEOUT, "deadline passed");
			goto failed;
		}
		if (is_eval && rt->replyq) {
			/* Send what asynchronous tools answered, then wait for
			 * the worker or the next answer, whichever is first. */
			if (cc_replyq_flush(rt, limit, &err) < 0)
				goto failed;
			int which = cc_chan_wait_input(&rt->child, cc_replyq_fd(rt->replyq), limit,
						       &err);
			if (which < 0 && hold.start && err.kind == CC_ERR_TIMEOUT) {
				cc_error_clear(&err); /* the approval timeout: track_hold */
				continue;
			}
			if (which < 0)
				goto failed;
			if (which == 1)
				continue;
		}
		if (cc_chan_recv(&rt->child, &buf, &len, recv_cap(rt), limit, &err) < 0)
			goto failed;
		int rc = cc_msg_parse(buf, len, l->max_result, &m, &err);
		free(buf);
		if (rc < 0) {
			/* A value too big for host memory (value.c's cap) is
			 * reported as such; the worker is still stopped. */
			cc_fail_wrap(&err, err.kind == CC_ERR_OUTPUT_LIMIT
						   ? "the worker's frame was refused"
						   : "the worker sent an invalid frame");
			goto failed;
		}
		if ((m.what != CC_MSG_OUT && m.what != CC_MSG_RESULT && m.what != CC_MSG_CALL &&
		     m.what != CC_MSG_WAIT) ||
		    m.id != id ||
		    ((m.what == CC_MSG_CALL || m.what == CC_MSG_WAIT) &&
		     (!is_eval || (m.what == CC_MSG_CALL && m.call <= rt->last_call)))) {
			cc_msg_free(&m);
			cc_fail(&err, CC_ERR_PROTOCOL_VIOLATION,
				"unexpected message during an eval (type or id mismatch)");
			goto failed;
		}
		if (m.what == CC_MSG_CALL) {
			/* Call ids grow over the session: a worker cannot replay
			 * or guess its way to a reply meant for another call.
			 * Calls happen only in evals. */
			rt->last_call = m.call;
			rc = cc_tool_dispatch(rt, &m, now_deadline, limit, &err);
			cc_msg_free(&m);
			if (rc < 0)
				goto failed;
			continue;
		}
		if (m.what == CC_MSG_WAIT) {
			cc_msg_free(&m);
			if (rt->on_wait)
				rt->on_wait(rt->on_wait_user);
			continue;
		}
		if (m.what == CC_MSG_OUT) {
			if (capture_add(&cap[m.fd], m.data->u.str.ptr, m.data->u.str.len) < 0) {
				cc_msg_free(&m);
				cc_fail(&err, CC_ERR_INTERNAL, "out of memory for output");
				goto failed;
			}
			emit_lines(rt, &cap[m.fd], m.fd, false);
			cc_msg_free(&m);
			continue;
		}
		done = true;
		r->kind = m.kind;
		if (m.ok && len > l->max_result + CC_RESULT_ENVELOPE +
					    (m.displays ? CC_DISPLAYS_ENVELOPE : 0)) {
			/* The worker checks the cap too; this is the check that
			 * counts. Displays travel in the same frame, so their
			 * bytes count with the value's. */
			bool disp = m.displays != NULL;
			cc_msg_free(&m);
			cc_result_set_error(r, CC_ERR_OUTPUT_LIMIT, "OutputLimitError",
					    "the result%s is larger than the limit of %llu bytes; "
					    "return less or " CC_RESULT_HINT,
					    disp ? " with its displays" : "",
					    (unsigned long long)l->max_result);
			break;
		}
		if (m.ok && m.value_type && !(is_eval && rt->asked_fallback)) {
			cc_msg_free(&m);
			cc_fail(&err, CC_ERR_PROTOCOL_VIOLATION,
				"the worker gave a text-form value that was not asked for");
			goto failed;
		}
		r->displays = m.displays;
		m.displays = NULL;
		if (m.ok) {
			r->value = m.value;
			m.value = NULL;
			r->value_type = m.value_type ? dup_str(m.value_type) : NULL;
		} else {
			r->type = dup_str(m.etype);
			r->message = dup_str(m.message);
			r->traceback = dup_str(m.traceback);
		}
		cc_msg_free(&m);
	}
	/* The supervisor's words for a soft stop or the heap cap, whatever
	 * the worker said: the limit, what is left, and the option. */
	if (r->kind == CC_ERR_TIMEOUT && hold.expired) {
		approval_timeout_error(r, &hold);
	} else if (r->kind == CC_ERR_TIMEOUT) {
		char *tb = r->traceback;
		r->traceback = NULL;
		cc_result_set_error(
			r, CC_ERR_TIMEOUT, "TimeoutError",
			"the code ran past its time limit of %.3g s and was stopped; the "
			"runtime is still usable, with its state; " CC_TIMEOUT_HINT,
			timeout_s);
		r->traceback = tb;
	} else if (r->kind == CC_ERR_MEMORY_LIMIT) {
		char *tb = r->traceback, *type = r->type;
		r->traceback = r->type = NULL;
		cc_result_set_error(
			r, CC_ERR_MEMORY_LIMIT, NULL,
			"out of memory: the engine heap limit is %llu bytes (%.4g MiB); "
			"" CC_MEMORY_HINT,
			(unsigned long long)l->max_memory, (double)l->max_memory / (1024 * 1024));
		r->traceback = tb;
		r->type = type;
	}
	/* A ToolBudgetError the guest did not catch surfaces to the host as
	 * its own kind (DESIGN.md section 6) when this request really was
	 * refused a call: the worker cannot claim it on its own. */
	if (r->kind == CC_ERR_GUEST && rt->budget_refused && r->type &&
	    !strcmp(r->type, "ToolBudgetError"))
		r->kind = CC_ERR_TOOL_BUDGET;
	/* Output over a cap ends the eval as output_limit even when the worker
	 * claims success: the supervisor counted the bytes itself, and its
	 * message names the stream. */
	for (int fd = 1; fd <= 2; fd++)
		if (cap[fd].total > cap[fd].cap &&
		    (r->kind == CC_OK || r->kind == CC_ERR_OUTPUT_LIMIT))
			cc_result_set_error(r, CC_ERR_OUTPUT_LIMIT, "OutputLimitError",
					    "%s exceeded its cap of %zu bytes; print less or raise "
					    "the cap",
					    fd == 1 ? "stdout" : "stderr", cap[fd].cap);
	goto finish;

failed:
	if (err.kind == CC_ERR_TIMEOUT && hold.expired) {
		mark_dead(rt, "killed after an approval timeout", false);
		approval_timeout_error(r, &hold);
	} else if (err.kind == CC_ERR_TIMEOUT) {
		mark_dead(rt, "killed after its deadline", false);
		cc_result_set_error(
			r, CC_ERR_TIMEOUT, "TimeoutError",
			"the code ran past its time limit of %.3g s and did not stop "
			"within the %.3g s grace; the worker was killed and the runtime "
			"is dead: create a new one; " CC_TIMEOUT_HINT,
			timeout_s, l->grace_s);
	} else if (err.kind == CC_ERR_WORKER_CRASHED && is_eval && cc_now_ns() >= deadline) {
		/* Ended past the deadline, before its result: the Python worker
		 * ends itself when the stop lands in a long C call that cannot
		 * be interrupted (engine_py.c, the soft stop). Whatever ended
		 * it, the deadline had passed: the eval timed out. */
		mark_dead(rt, "past the deadline", true);
		cc_result_set_error(r, CC_ERR_TIMEOUT, "TimeoutError",
				    "the code ran past its time limit of %.3g s inside a call that "
				    "cannot be interrupted (a long C builtin), so the worker was "
				    "ended, %s, and the runtime is dead: create a "
				    "new one; " CC_TIMEOUT_HINT,
				    timeout_s, rt->death ? rt->death : "");
	} else {
		mark_dead(rt, err.message ? err.message : "worker failure",
			  err.kind == CC_ERR_WORKER_CRASHED);
		if (err.kind == CC_ERR_WORKER_CRASHED)
			cc_result_set_error(r, CC_ERR_WORKER_CRASHED, NULL,
					    "%s; create a new runtime", rt->death ? rt->death : "");
		else
			set_from_error(r, &err);
	}
	cc_error_clear(&err);
finish:
	if (is_eval)
		cc_replyq_open(rt->replyq, 0);
	emit_lines(rt, &cap[1], 1, true);
	emit_lines(rt, &cap[2], 2, true);
	capture_finish(&cap[1], r, 1);
	capture_finish(&cap[2], r, 2);
	r->duration = (double)(cc_now_ns() - start) / 1e9;
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
	if (!cc_runtime_enter(rt, &err)) {
		set_from_error(r, &err);
		cc_error_clear(&err);
		return r;
	}
	uint64_t id = rt->next_id++;
	struct cc_msgbuf m;
	msgpack_packer *pk = &m.pk;
	rt->asked_fallback = rt->value_fallback;
	cc_msgbuf_begin(&m, rt->asked_fallback ? 5 : 4, "eval");
	cc_pack_cstr(pk, "id");
	msgpack_pack_uint64(pk, id);
	cc_pack_cstr(pk, "code");
	msgpack_pack_str(pk, len);
	msgpack_pack_str_body(pk, code, len);
	cc_pack_cstr(pk, "timeout_ms");
	msgpack_pack_uint64(pk, (uint64_t)ceil(timeout_s * 1000));
	if (rt->asked_fallback) {
		cc_pack_cstr(pk, "fallback");
		msgpack_pack_true(pk);
	}
	if (cc_msgbuf_check(&m, "eval", &err) < 0) { /* nothing sent: still alive */
		set_from_error(r, &err);
		cc_error_clear(&err);
	} else {
		round_trip(rt, id, &m.sb, timeout_s, true, r);
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
	cc_pack_cstr(pk, "id");
	msgpack_pack_uint64(pk, id);
	cc_pack_cstr(pk, "name");
	cc_pack_cstr(pk, name);
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
		mark_dead(rt, "closed from inside a tool", false);
		rt->close_pending = true;
		return;
	}
	runtime_free(rt);
}

int cc_runtime_request(cc_runtime *rt, uint64_t id, const struct cc_msgbuf *m, cc_error *err)
{
	return cc_runtime_request_value(rt, id, m, NULL, err);
}

int cc_runtime_request_value(cc_runtime *rt, uint64_t id, const struct cc_msgbuf *m,
			     cc_value **value, cc_error *err)
{
	if (!rt->alive)
		return cc_fail(err, CC_ERR_WORKER_CRASHED, "this runtime's worker is gone: %s",
			       rt->death ? rt->death : "it was closed");
	if (cc_msgbuf_check(m, "request", err) < 0)
		return -1;
	if (!cc_runtime_enter(rt, err))
		return -1;
	cc_result *r = cc_result_alloc();
	if (!r) {
		cc_runtime_leave(rt);
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	}
	round_trip(rt, id, &m->sb, rt->opts.limits.timeout_s, false, r);
	cc_runtime_leave(rt);
	int rc = 0;
	if (r->kind != CC_OK) {
		rc = cc_fail(err, r->kind, "%s%s%s", r->type ? r->type : "",
			     r->type && *r->type ? ": " : "", r->message ? r->message : "");
	} else if (value) {
		*value = r->value;
		r->value = NULL;
	}
	cc_result_free(r);
	return rc;
}
