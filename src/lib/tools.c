/* Host tools: binding, budgets, and answering the worker's "call" frames.
 * Supervisor side. The worker can only name a tool; whether the call
 * reaches the host (bound name, budget) is decided here, never in the
 * worker. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "frame.h"
#include "message.h"
#include "net.h"
#include "supervisor.h"
#include "utf8.h"

/* A failing tool's message reaches the guest cut to this many bytes: the
 * reply must fit the frame cap of the smallest allowed max_result (1 KiB
 * plus the envelope). */
#define CC_TOOL_MESSAGE_MAX 4096

/* At most this many builtin base names travel with a tool's failure. */
#define CC_TOOL_BASES_MAX 8

/* ---- budgets ---- */

struct tool_limit {
	char *name;
	uint64_t max, made;
};

struct cc_budget {
	pthread_mutex_t lock;
	int refs;
	uint64_t max, made;
	struct tool_limit *tools;
	size_t ntools;
	char *hint_total, *hint_tool; /* cc_budget_set_hint's, or NULL */
};

CC_EXPORT cc_budget *cc_budget_new(uint64_t max_calls)
{
	cc_budget *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	pthread_mutex_init(&b->lock, NULL);
	b->refs = 1;
	b->max = max_calls;
	return b;
}

CC_EXPORT int cc_budget_limit_tool(cc_budget *b, const char *tool, uint64_t max_calls)
{
	if (!b || !tool)
		return -1;
	pthread_mutex_lock(&b->lock);
	int rc = 0;
	size_t i = 0;
	for (; i < b->ntools && strcmp(b->tools[i].name, tool); i++)
		;
	if (i == b->ntools) {
		struct tool_limit *t = realloc(b->tools, (b->ntools + 1) * sizeof(*t));
		char *name = strdup(tool);
		if (t)
			b->tools = t;
		if (!t || !name) {
			free(name);
			rc = -1;
			goto out;
		}
		b->tools[b->ntools++] = (struct tool_limit){ name, max_calls, 0 };
	} else {
		b->tools[i].max = max_calls;
	}
out:
	pthread_mutex_unlock(&b->lock);
	return rc;
}

static int hint_copy(const char *hint, char **out)
{
	*out = NULL;
	if (!hint)
		return 0;
	size_t n = strlen(hint);
	if (!n || n > CC_BUDGET_HINT_MAX || !cc_utf8_valid(hint, n))
		return -1;
	return (*out = strdup(hint)) ? 0 : -1;
}

CC_EXPORT int cc_budget_set_hint(cc_budget *b, const char *total, const char *per_tool)
{
	char *t = NULL, *p = NULL;
	if (!b || hint_copy(total, &t) < 0 || hint_copy(per_tool, &p) < 0) {
		free(t);
		return -1;
	}
	pthread_mutex_lock(&b->lock);
	free(b->hint_total);
	free(b->hint_tool);
	b->hint_total = t;
	b->hint_tool = p;
	pthread_mutex_unlock(&b->lock);
	return 0;
}

CC_EXPORT uint64_t cc_budget_calls_made(const cc_budget *b)
{
	if (!b)
		return 0;
	pthread_mutex_lock((pthread_mutex_t *)&b->lock);
	uint64_t n = b->made;
	pthread_mutex_unlock((pthread_mutex_t *)&b->lock);
	return n;
}

CC_EXPORT uint64_t cc_budget_calls_remaining(const cc_budget *b)
{
	if (!b)
		return UINT64_MAX;
	pthread_mutex_lock((pthread_mutex_t *)&b->lock);
	uint64_t n = b->max == UINT64_MAX ? UINT64_MAX : b->max - b->made;
	pthread_mutex_unlock((pthread_mutex_t *)&b->lock);
	return n;
}

CC_EXPORT cc_budget *cc_budget_ref(cc_budget *b)
{
	if (b)
		__atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
	return b;
}

CC_EXPORT void cc_budget_unref(cc_budget *b)
{
	if (!b || __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	for (size_t i = 0; i < b->ntools; i++)
		free(b->tools[i].name);
	free(b->tools);
	free(b->hint_total);
	free(b->hint_tool);
	pthread_mutex_destroy(&b->lock);
	free(b);
}

/* Charge one call of `tool`. Returns false when it fits (and counts it);
 * true when it broke a limit, with the guest's message in msg (the one
 * text of a ToolBudgetError, caught or not: the uncaught one is this
 * message coming back), naming the option cc_budget_set_hint gave. */
static bool budget_take(cc_budget *b, const char *tool, char *msg, size_t size)
{
	bool broke = true;
	pthread_mutex_lock(&b->lock);
	struct tool_limit *t = NULL;
	for (size_t i = 0; i < b->ntools; i++)
		if (!strcmp(b->tools[i].name, tool))
			t = &b->tools[i];
	if (b->max != UINT64_MAX && b->made >= b->max) {
		snprintf(msg, size, "the total tool call budget of %llu calls is used up%s%s",
			 (unsigned long long)b->max, b->hint_total ? "; " : "",
			 b->hint_total ? b->hint_total : "");
	} else if (t && t->made >= t->max) {
		snprintf(msg, size,
			 "the per-tool tool call budget of %llu calls is used up for %s%s%s",
			 (unsigned long long)t->max, tool, b->hint_tool ? "; " : "",
			 b->hint_tool ? b->hint_tool : "");
	} else {
		broke = false;
		b->made++;
		if (t)
			t->made++;
	}
	pthread_mutex_unlock(&b->lock);
	return broke;
}

/* ---- binding ---- */

static void tool_vfail(cc_tool_error *err, const char *name, const char *bases, const char *fmt,
		       va_list ap)
{
	free(err->name);
	free(err->message);
	free(err->bases);
	err->name = strdup(name ? name : "Error");
	err->bases = bases ? strdup(bases) : NULL;
	err->message = cc_vstrprintf(fmt ? fmt : "", ap);
}

CC_EXPORT int cc_tool_fail(cc_tool_error *err, const char *name, const char *fmt, ...)
{
	if (!err)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	tool_vfail(err, name, NULL, fmt, ap);
	va_end(ap);
	return -1;
}

CC_EXPORT int cc_tool_fail_bases(cc_tool_error *err, const char *name, const char *bases,
				 const char *fmt, ...)
{
	if (!err)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	tool_vfail(err, name, bases, fmt, ap);
	va_end(ap);
	return -1;
}

static struct cc_tool *find_tool(cc_runtime *rt, const char *name)
{
	for (size_t i = 0; i < rt->ntools; i++)
		if (!strcmp(rt->tools[i].name, name))
			return &rt->tools[i];
	return NULL;
}

/* The one function of a tool, of any of its four kinds. */
struct tool_fns {
	cc_tool_fn fn;
	cc_tool_async_fn afn;
	cc_tool_kw_fn kfn;
	cc_tool_async_kw_fn akfn;
};

static int bind_tool(cc_runtime *rt, const char *name, struct tool_fns f, void *user, cc_error *err)
{
	if (!rt || (!f.fn && !f.afn && !f.kfn && !f.akfn) || !name ||
	    !cc_tool_name_ok(name, strlen(name)))
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "a tool needs a function and a name that is an ASCII identifier "
			       "([A-Za-z_][A-Za-z0-9_]*) or two joined by one dot (SERVER.TOOL), "
			       "at most 256 characters");
	if (!strcmp(name, CC_NET_TOOL) && user != (void *)&rt->net)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "the tool name '%s' is reserved for the network broker "
			       "(cc_runtime_set_net)",
			       name);
	if (__atomic_load_n(&rt->busy, __ATOMIC_ACQUIRE))
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "cannot bind a tool while the runtime runs a request (from inside "
			       "a tool, or from another thread)");
	struct cc_tool *t = find_tool(rt, name);
	if ((f.afn || f.akfn) && cc_replyq_ensure(rt, err) < 0)
		return -1;
	if (t) {
		t->fn = f.fn;
		t->afn = f.afn;
		t->kfn = f.kfn;
		t->akfn = f.akfn;
		t->user = user;
		return 0;
	}
	uint64_t id = rt->next_id++;
	struct cc_msgbuf m;
	cc_msgbuf_begin(&m, 3, "bind");
	cc_pack_kv_u64(&m.pk, "id", id);
	cc_pack_kv_str(&m.pk, "name", name);
	int rc = cc_runtime_request(rt, id, &m, err);
	cc_msgbuf_free(&m);
	if (rc < 0)
		return cc_fail_wrap(err, "binding tool '%s'", name);
	struct cc_tool *tools = realloc(rt->tools, (rt->ntools + 1) * sizeof(*tools));
	char *copy = strdup(name);
	if (tools)
		rt->tools = tools;
	if (!tools || !copy) {
		free(copy);
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	}
	rt->tools[rt->ntools++] =
		(struct cc_tool){ copy, f.fn, f.afn, f.kfn, f.akfn, user, NULL, -1 };
	return 0;
}

CC_EXPORT int cc_runtime_bind_tool(cc_runtime *rt, const char *name, cc_tool_fn fn, void *user,
				   cc_error *err)
{
	return bind_tool(rt, name, (struct tool_fns){ .fn = fn }, user, err);
}

CC_EXPORT int cc_runtime_bind_tool_kw(cc_runtime *rt, const char *name, cc_tool_kw_fn fn,
				      void *user, cc_error *err)
{
	return bind_tool(rt, name, (struct tool_fns){ .kfn = fn }, user, err);
}

CC_EXPORT int cc_runtime_bind_tool_async_kw(cc_runtime *rt, const char *name,
					    cc_tool_async_kw_fn fn, void *user, cc_error *err)
{
	return bind_tool(rt, name, (struct tool_fns){ .akfn = fn }, user, err);
}

/* Never called: net calls go to cc_net_dispatch (cc_tool_dispatch). */
static void net_placeholder(void *user, const cc_value *args, cc_tool_call *call)
{
	(void)user;
	(void)args;
	cc_tool_call_fail(call, "Error", "the network broker is not running");
}

int cc_tools_bind_net(cc_runtime *rt, cc_error *err)
{
	return bind_tool(rt, CC_NET_TOOL, (struct tool_fns){ .afn = net_placeholder }, &rt->net,
			 err);
}

CC_EXPORT int cc_runtime_bind_tool_async(cc_runtime *rt, const char *name, cc_tool_async_fn fn,
					 void *user, cc_error *err)
{
	return bind_tool(rt, name, (struct tool_fns){ .afn = fn }, user, err);
}

CC_EXPORT void cc_runtime_set_budget(cc_runtime *rt, cc_budget *b)
{
	if (!rt)
		return;
	cc_budget_ref(b);
	cc_budget_unref(rt->budget);
	rt->budget = b;
}

/* The bound tool NAME of an idle runtime, whose WHAT is about to change;
 * NULL with invalid_input when there is none or the runtime is busy. */
static struct cc_tool *tool_to_change(cc_runtime *rt, const char *name, const char *what,
				      cc_error *err)
{
	struct cc_tool *t = rt && name ? find_tool(rt, name) : NULL;
	if (!t)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "no tool named '%s' is bound",
			       name ? name : "(null)"),
		       NULL;
	if (__atomic_load_n(&rt->busy, __ATOMIC_ACQUIRE))
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "cannot change %s while the runtime runs a request", what),
		       NULL;
	return t;
}

CC_EXPORT int cc_runtime_set_tool_budget(cc_runtime *rt, const char *name, cc_budget *b,
					 cc_error *err)
{
	struct cc_tool *t = tool_to_change(rt, name, "a budget", err);
	if (!t)
		return -1;
	cc_budget_ref(b);
	cc_budget_unref(t->budget);
	t->budget = b;
	return 0;
}

CC_EXPORT void cc_runtime_set_redaction(cc_runtime *rt, bool redact)
{
	if (rt)
		rt->redact = redact;
}

CC_EXPORT int cc_runtime_set_tool_redaction(cc_runtime *rt, const char *name, int redact,
					    cc_error *err)
{
	if (redact < -1 || redact > 1)
		return cc_fail(
			err, CC_ERR_INVALID_INPUT,
			"a tool's redaction is 1 (on), 0 (off) or -1 (the runtime's), not %d",
			redact);
	struct cc_tool *t = tool_to_change(rt, name, "a tool's redaction", err);
	if (!t)
		return -1;
	t->redact = redact;
	return 0;
}

/* Whether a failing call of t shows the guest CC_REDACTED_MESSAGE. */
static bool tool_redacts(const cc_runtime *rt, const struct cc_tool *t)
{
	return t->redact >= 0 ? t->redact == 1 : rt->redact;
}

void cc_tools_free(cc_runtime *rt)
{
	for (size_t i = 0; i < rt->ntools; i++) {
		free(rt->tools[i].name);
		cc_budget_unref(rt->tools[i].budget);
	}
	free(rt->tools);
	rt->tools = NULL;
	rt->ntools = 0;
	cc_budget_unref(rt->budget);
	rt->budget = NULL;
	cc_replyq_release(rt->replyq);
	rt->replyq = NULL;
}

/* ---- answering calls ---- */

/* The base names of a comma-separated list the host gave (borrowed
 * pieces of it): identifiers of at most 128 bytes, at most
 * CC_TOOL_BASES_MAX of them; anything else in the list is dropped. */
static size_t split_bases(const char *list, const char **base, size_t *len)
{
	size_t n = 0;
	while (list && *list && n < CC_TOOL_BASES_MAX) {
		const char *end = strchr(list, ',');
		size_t k = end ? (size_t)(end - list) : strlen(list);
		if (k && k <= 128 && cc_identifier_ok(list, k)) {
			base[n] = list;
			len[n++] = k;
		}
		list += k + (end ? 1 : 0);
	}
	return n;
}

int cc_tool_send_reply(cc_runtime *rt, uint64_t call, const cc_value *value, const char *ename,
		       const char *ebases, const char *emsg, int64_t deadline_ns, cc_error *err)
{
	struct cc_msgbuf m;
	cc_msgbuf_begin(&m, 4, "reply");
	cc_pack_kv_u64(&m.pk, "call", call);
	cc_pack_cstr(&m.pk, "ok");
	if (!ename) {
		msgpack_pack_true(&m.pk);
		cc_pack_cstr(&m.pk, "value");
		cc_value_caps caps = { CC_VALUE_MAX_DEPTH,
				       cc_value_node_budget(rt->opts.limits.max_result), 0, 0, 0 };
		cc_error enc = { 0 };
		if (cc_value_encode(&m.pk, value, &caps, &enc) < 0 ||
		    m.sb.size > rt->opts.limits.max_result) {
			/* The host's value cannot cross: the guest gets an error
			 * instead, and the frame is rebuilt from scratch. */
			char msg[512];
			snprintf(msg, sizeof(msg),
				 "the host tool returned a value that cannot cross the sandbox "
				 "boundary: %s",
				 enc.message ? enc.message : "larger than the result cap");
			cc_error_clear(&enc);
			cc_msgbuf_free(&m);
			return cc_tool_send_reply(rt, call, NULL, "ToolResultError", NULL, msg,
						  deadline_ns, err);
		}
	} else {
		/* A host message can be any size: keep it well inside the
		 * frame the worker accepts, cut at a character boundary. */
		size_t n = strlen(emsg), max = CC_TOOL_MESSAGE_MAX;
		if (n > max) {
			n = max;
			while (n > 0 && ((unsigned char)emsg[n] & 0xc0) == 0x80)
				n--;
		}
		const char *base[CC_TOOL_BASES_MAX];
		size_t blen[CC_TOOL_BASES_MAX];
		size_t nb = split_bases(ebases, base, blen);
		msgpack_pack_false(&m.pk);
		cc_pack_cstr(&m.pk, "error");
		msgpack_pack_map(&m.pk, nb ? 3 : 2);
		cc_pack_kv_str(&m.pk, "name", ename);
		cc_pack_kv_strn(&m.pk, "message", emsg, n);
		if (nb) {
			cc_pack_cstr(&m.pk, "bases");
			msgpack_pack_array(&m.pk, nb);
			for (size_t i = 0; i < nb; i++) {
				msgpack_pack_str(&m.pk, blen[i]);
				msgpack_pack_str_body(&m.pk, base[i], blen[i]);
			}
		}
	}
	int rc = cc_msgbuf_check(&m, "reply", err);
	if (rc == 0)
		rc = cc_chan_send(&rt->child, m.sb.data, m.sb.size, deadline_ns, err);
	cc_msgbuf_free(&m);
	return rc;
}

/* A name the guest sees must be UTF-8 and short; anything else becomes
 * "Error". */
static const char *safe_name(const char *n)
{
	if (!n || !*n || strlen(n) > 128 || !cc_identifier_ok(n, strlen(n)))
		return "Error";
	return n;
}

void cc_tool_failure_text(bool redact, const char *name, const char *msg, const char **ename,
			  const char **emsg)
{
	*ename = safe_name(name);
	*emsg = redact ? CC_REDACTED_MESSAGE : msg && cc_utf8_valid(msg, strlen(msg)) ? msg : "";
}

int cc_tool_dispatch(cc_runtime *rt, const struct cc_msg *m, int64_t soft_ns, int64_t deadline_ns,
		     cc_error *err)
{
	const char *name = m->tool->u.str.ptr;
	/* By length too: "x\0admin" is not "x". */
	struct cc_tool *t = strlen(name) == m->tool->u.str.len ? find_tool(rt, name) : NULL;
	char msg[256 + 256 + CC_BUDGET_HINT_MAX]; /* a budget's names a tool and its hint */
	if (cc_now_ns() >= soft_ns)
		return cc_tool_send_reply(rt, m->call, NULL, "TimeoutError", NULL,
					  "the eval's deadline passed; the tool was not called",
					  deadline_ns, err);
	if (!t) {
		/* Uniform for every name that is not bound, whatever it is. */
		return cc_tool_send_reply(rt, m->call, NULL, "ToolNotFoundError", NULL,
					  "no tool of that name is bound to this runtime",
					  deadline_ns, err);
	}
	if (m->kwargs && !t->kfn && !t->akfn) {
		/* Bound without keyword support: refused before the budget and
		 * the host, like an argument the tool cannot take. */
		snprintf(msg, sizeof(msg),
			 "%s() takes positional arguments only: the host bound it without "
			 "keyword arguments",
			 name);
		return cc_tool_send_reply(rt, m->call, NULL, "TypeError", NULL, msg, deadline_ns,
					  err);
	}
	uint32_t cap = rt->opts.limits.max_pending_calls;
	if ((t->afn || t->akfn) && cc_replyq_in_flight(rt->replyq) >= cap) {
		/* Counted here, not in the worker: a guest that fans out
		 * cannot make the host hold more than cap calls at once. */
		snprintf(msg, sizeof(msg),
			 "%u host tool calls are already in flight, the runtime's cap "
			 "(max_pending_calls); await some before making more",
			 cap);
		return cc_tool_send_reply(rt, m->call, NULL, "ToolConcurrencyError", NULL, msg,
					  deadline_ns, err);
	}
	bool net = t->afn == net_placeholder && rt->net;
	cc_budget *budget = net ? NULL : t->budget ? t->budget : rt->budget;
	if (budget && budget_take(budget, name, msg, sizeof(msg))) {
		rt->budget_refused = true;
		return cc_tool_send_reply(rt, m->call, NULL, "ToolBudgetError", NULL, msg,
					  deadline_ns, err);
	}
	if (t->afn || t->akfn) {
		/* Answered later through the runtime's reply queue, flushed by
		 * the eval's loop (runtime.c). */
		cc_tool_call *pending =
			cc_replyq_new_call(rt->replyq, m->call, tool_redacts(rt, t));
		if (!pending)
			return cc_tool_send_reply(rt, m->call, NULL, "MemoryError", NULL,
						  "the host is out of memory", deadline_ns, err);
		if (net)
			cc_net_dispatch(rt->net, m->id, m->args, soft_ns, pending);
		else if (t->akfn)
			t->akfn(t->user, m->args, m->kwargs, pending);
		else
			t->afn(t->user, m->args, pending);
		return 0;
	}
	cc_value *result = NULL;
	cc_tool_error te = { NULL, NULL, NULL };
	int rc = t->kfn ? t->kfn(t->user, m->args, m->kwargs, &result, &te)
			: t->fn(t->user, m->args, &result, &te);
	if (rc == 0) {
		rc = cc_tool_send_reply(rt, m->call, result, NULL, NULL, NULL, deadline_ns, err);
	} else {
		const char *ename, *message;
		cc_tool_failure_text(tool_redacts(rt, t), te.name, te.message, &ename, &message);
		rc = cc_tool_send_reply(rt, m->call, NULL, ename, te.bases, message, deadline_ns,
					err);
	}
	cc_value_free(result);
	free(te.name);
	free(te.message);
	free(te.bases);
	return rc;
}
