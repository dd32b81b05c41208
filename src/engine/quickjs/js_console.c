/* The guest's `console`, and the text it prints: a compact form of Node's
 * util.inspect and util.format. Worker side; see js_value.h. Output goes
 * to the supervisor as frames (cc_worker_output), never to a raw fd. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "js_value.h"

/* ---- inspect ----
 *
 * Node's util.inspect, compacted: always one line (Node breaks long ones),
 * containers nested past depth 2 print as [Object] / [Array] / [Foo], at
 * most 100 items each, cycles as [Circular]. Property reads use own data
 * properties, so printing runs no getter (shown as [Getter]) and no Proxy
 * trap (a Proxy prints as [Proxy]: its target is out of reach from C). */

#define INSPECT_DEPTH 2
#define INSPECT_ITEMS 100
/* Array slots looked at per array: new Array(2**32 - 1) is all holes. */
#define INSPECT_SCAN 10000

struct insp {
	JSContext *ctx;
	struct cc_buf *b;
	void *open[INSPECT_DEPTH + 2]; /* objects being printed */
	int n;
};

static int insp_value(struct insp *s, JSValueConst v, int level, bool quote);

/* Append text QuickJS produced, lone surrogates fixed. */
static void add_fixed(struct cc_buf *b, const char *c, size_t n)
{
	size_t start = b->len;
	cc_buf_add(b, c, n);
	if (b->len > start)
		cc_utf8_fix_surrogates(b->data + start, b->len - start);
}

/* Quoted the way Node does: '...' unless the text holds a ' (then "...",
 * then `...`), control characters escaped. */
static void add_quoted(struct cc_buf *b, const char *c, size_t len)
{
	char q = !memchr(c, '\'', len)	? '\''
		 : !memchr(c, '"', len) ? '"'
		 : !memchr(c, '`', len) ? '`'
					: '\'';
	char esc[8];
	size_t from = 0;
	cc_buf_add(b, &q, 1);
	for (size_t i = 0; i < len && !b->full; i++) {
		unsigned char ch = (unsigned char)c[i];
		const char *e = ch == '\n'   ? "\\n"
				: ch == '\t' ? "\\t"
				: ch == '\r' ? "\\r"
				: ch == '\b' ? "\\b"
				: ch == '\f' ? "\\f"
				: ch == '\v' ? "\\v"
				: ch == '\\' ? "\\\\"
					     : NULL;
		if (ch == (unsigned char)q) {
			esc[0] = '\\';
			esc[1] = q;
			esc[2] = 0;
			e = esc;
		} else if (!e && (ch < 0x20 || ch == 0x7f)) {
			snprintf(esc, sizeof(esc), "\\x%02X", ch);
			e = esc;
		}
		if (!e)
			continue;
		add_fixed(b, c + from, i - from);
		cc_buf_puts(b, e);
		from = i + 1;
	}
	add_fixed(b, c + from, len - from);
	cc_buf_add(b, &q, 1);
}

static bool nonempty(JSContext *ctx, JSValueConst v)
{
	size_t len = 0;
	const char *c = JS_IsString(v) ? JS_ToCStringLen(ctx, &len, v) : NULL;
	JS_FreeCString(ctx, c);
	return len > 0;
}

static int add_string(struct insp *s, JSValueConst v, bool quote)
{
	size_t len;
	const char *c = JS_ToCStringLen(s->ctx, &len, v);
	if (!c)
		return -1;
	if (quote)
		add_quoted(s->b, c, len);
	else
		add_fixed(s->b, c, len);
	JS_FreeCString(s->ctx, c);
	return 0;
}

/* A number as JS prints it, but -0 as "-0" (as Node's console does). */
static int add_number(struct insp *s, double d)
{
	if (d == 0 && signbit(d)) {
		cc_buf_puts(s->b, "-0");
		return 0;
	}
	return add_string(s, __JS_NewFloat64(s->ctx, d), false);
}

static int add_symbol(struct insp *s, JSValueConst v)
{
	JSAtom a = JS_ValueToAtom(s->ctx, v);
	JSValue d = a == JS_ATOM_NULL ? JS_EXCEPTION : JS_AtomToString(s->ctx, a);
	JS_FreeAtom(s->ctx, a);
	if (JS_IsException(d))
		return -1;
	cc_buf_puts(s->b, "Symbol(");
	int r = add_string(s, d, false);
	cc_buf_puts(s->b, ")");
	JS_FreeValue(s->ctx, d);
	return r;
}

/* Print the result of a captured built-in called on v (Date, RegExp). */
static int add_call(struct insp *s, JSValueConst fn, JSValueConst v)
{
	JSValue t = JS_Call(s->ctx, fn, v, 0, NULL);
	if (JS_IsException(t))
		return -1;
	int r = add_string(s, t, false);
	JS_FreeValue(s->ctx, t);
	return r;
}

static int add_key(struct insp *s, JSAtom a)
{
	JSValue k = JS_AtomToValue(s->ctx, a);
	size_t len;
	int r = -1;
	if (JS_IsSymbol(k)) {
		cc_buf_puts(s->b, "[");
		r = add_symbol(s, k);
		cc_buf_puts(s->b, "]");
	} else if (!JS_IsException(k)) {
		const char *c = JS_ToCStringLen(s->ctx, &len, k);
		if (c && strlen(c) == len && cc_js_is_ident(c))
			cc_buf_add(s->b, c, len);
		else if (c)
			add_quoted(s->b, c, len);
		r = c ? 0 : -1;
		JS_FreeCString(s->ctx, c);
	}
	JS_FreeValue(s->ctx, k);
	return r;
}

/* An own property: 1 with *out set (data), 2 for an accessor (*out holds
 * "[Getter]" or similar as a C string), 0 when absent, -1 on exception. */
static int own_prop(struct insp *s, JSValueConst v, JSAtom a, JSValue *out, const char **acc)
{
	JSPropertyDescriptor d;
	int r = JS_GetOwnProperty(s->ctx, &d, v, a);
	if (r <= 0)
		return r;
	if (d.flags & JS_PROP_GETSET) {
		bool g = !JS_IsUndefined(d.getter), st = !JS_IsUndefined(d.setter);
		*acc = g && st ? "[Getter/Setter]" : g ? "[Getter]" : "[Setter]";
		JS_FreeValue(s->ctx, d.getter);
		JS_FreeValue(s->ctx, d.setter);
		return 2;
	}
	*out = d.value;
	return 1;
}

static int insp_props(struct insp *s, JSValueConst v, int level)
{
	JSPropertyEnum *tab = NULL;
	uint32_t n = 0, i;
	int r = 0;
	if (JS_GetOwnPropertyNames(s->ctx, &tab, &n, v,
				   JS_GPN_STRING_MASK | JS_GPN_SYMBOL_MASK | JS_GPN_ENUM_ONLY) < 0)
		return -1;
	cc_buf_puts(s->b, n ? "{ " : "{}");
	for (i = 0; i < n && !r && !s->b->full; i++) {
		JSValue val = JS_UNDEFINED;
		const char *acc = NULL;
		if (i == INSPECT_ITEMS) {
			char more[48];
			snprintf(more, sizeof(more), "... %" PRIu32 " more properties", n - i);
			cc_buf_puts(s->b, more);
			break;
		}
		if (i)
			cc_buf_puts(s->b, ", ");
		if ((r = add_key(s, tab[i].atom)))
			break;
		cc_buf_puts(s->b, ": ");
		int k = own_prop(s, v, tab[i].atom, &val, &acc);
		if (k == 2)
			cc_buf_puts(s->b, acc);
		r = k < 0 ? -1 : k == 2 ? 0 : insp_value(s, val, level + 1, true);
		JS_FreeValue(s->ctx, val);
	}
	if (n && !r)
		cc_buf_puts(s->b, " }");
	for (i = 0; i < n; i++)
		JS_FreeAtom(s->ctx, tab[i].atom);
	js_free(s->ctx, tab);
	return r;
}

static void add_more(struct insp *s, uint64_t more)
{
	char t[48];
	snprintf(t, sizeof(t), ", ... %" PRIu64 " more item%s", more, more == 1 ? "" : "s");
	cc_buf_puts(s->b, t);
}

static int insp_array(struct insp *s, JSValueConst v, int level)
{
	int64_t len, i = 0, shown = 0;
	JSValue lv = JS_GetPropertyStr(s->ctx, v, "length");
	int r = JS_ToInt64(s->ctx, &len, lv);
	JS_FreeValue(s->ctx, lv);
	if (r < 0)
		return -1;
	cc_buf_puts(s->b, len ? "[ " : "[]");
	while (i < len && i < INSPECT_SCAN && shown < INSPECT_ITEMS && !s->b->full) {
		JSValue val = JS_UNDEFINED;
		const char *acc = NULL;
		int64_t holes = 0;
		int k;
		do {
			JSAtom a = JS_NewAtomUInt32(s->ctx, (uint32_t)(i + holes));
			k = a == JS_ATOM_NULL ? -1 : own_prop(s, v, a, &val, &acc);
			JS_FreeAtom(s->ctx, a);
		} while (k == 0 && ++holes + i < len && holes + i < INSPECT_SCAN);
		if (k < 0)
			return -1;
		if (shown++)
			cc_buf_puts(s->b, ", ");
		if (holes) {
			char t[48];
			snprintf(t, sizeof(t), "<%" PRId64 " empty item%s>", holes,
				 holes > 1 ? "s" : "");
			cc_buf_puts(s->b, t);
			i += holes;
			if (k == 0)
				continue;
			cc_buf_puts(s->b, ", ");
		}
		r = k == 2 ? (cc_buf_puts(s->b, acc), 0) : insp_value(s, val, level + 1, true);
		JS_FreeValue(s->ctx, val);
		if (r)
			return -1;
		i++;
	}
	if (i < len)
		add_more(s, (uint64_t)(len - i));
	if (len)
		cc_buf_puts(s->b, " ]");
	return 0;
}

static int insp_typed(struct insp *s, JSValueConst v, int level, const char *name)
{
	size_t off, blen = 0, bpe = 1, n, i;
	char t[64];
	JSValue ab = JS_GetTypedArrayBuffer(s->ctx, v, &off, &blen, &bpe);
	if (JS_IsException(ab)) /* detached: print it as empty */
		JS_FreeValue(s->ctx, JS_GetException(s->ctx));
	JS_FreeValue(s->ctx, ab);
	n = blen / bpe;
	snprintf(t, sizeof(t), "%s(%zu) %s", name, n, n ? "[ " : "[]");
	cc_buf_puts(s->b, t);
	for (i = 0; i < n && i < INSPECT_ITEMS && !s->b->full; i++) {
		JSValue el = JS_GetPropertyUint32(s->ctx, v, (uint32_t)i);
		if (i)
			cc_buf_puts(s->b, ", ");
		int r = JS_IsException(el) ? -1 : insp_value(s, el, level + 1, true);
		JS_FreeValue(s->ctx, el);
		if (r)
			return -1;
	}
	if (i < n)
		add_more(s, n - i);
	if (n)
		cc_buf_puts(s->b, " ]");
	return 0;
}

/* Map(n) { k => v, ... } or Set(n) { v, ... }, with the captured iterators. */
static int insp_collection(struct insp *s, JSValueConst v, int level, bool map)
{
	JSContext *ctx = s->ctx;
	int64_t size = 0;
	int r = 0;
	char t[48];
	JSValue sz = JS_Call(ctx, map ? cc_js.map_size : cc_js.set_size, v, 0, NULL);
	JSValue it = JS_Call(ctx, map ? cc_js.map_entries : cc_js.set_values, v, 0, NULL);
	if (JS_IsException(sz) || JS_IsException(it) || JS_ToInt64(ctx, &size, sz) < 0)
		r = -1;
	snprintf(t, sizeof(t), "%s(%" PRId64 ") %s", map ? "Map" : "Set", size, size ? "{ " : "{}");
	cc_buf_puts(s->b, t);
	for (int64_t i = 0; !r && i < size && !s->b->full; i++) {
		if (i == INSPECT_ITEMS) {
			add_more(s, (uint64_t)(size - i));
			break;
		}
		JSValue res = JS_Call(ctx, map ? cc_js.map_next : cc_js.set_next, it, 0, NULL);
		JSValue el =
			JS_IsException(res) ? JS_EXCEPTION : JS_GetPropertyStr(ctx, res, "value");
		JS_FreeValue(ctx, res);
		if (JS_IsException(el))
			r = -1;
		if (!r && i)
			cc_buf_puts(s->b, ", ");
		if (!r && map) {
			JSValue k = JS_GetPropertyUint32(ctx, el, 0);
			JSValue val = JS_GetPropertyUint32(ctx, el, 1);
			r = insp_value(s, k, level + 1, true);
			cc_buf_puts(s->b, " => ");
			r = r ? r : insp_value(s, val, level + 1, true);
			JS_FreeValue(ctx, k);
			JS_FreeValue(ctx, val);
		} else if (!r) {
			r = insp_value(s, el, level + 1, true);
		}
		JS_FreeValue(ctx, el);
	}
	if (size && !r)
		cc_buf_puts(s->b, " }");
	JS_FreeValue(ctx, sz);
	JS_FreeValue(ctx, it);
	return r;
}

/* "Name: message" plus the stack at top level (as Node prints an uncaught
 * error), "[Name: message]" nested. name/message may be getters: console
 * is guest code already, and Node reads them too. */
static int insp_error(struct insp *s, JSValueConst v, int level)
{
	JSValue name = JS_GetPropertyStr(s->ctx, v, "name");
	JSValue msg = JS_GetPropertyStr(s->ctx, v, "message");
	JSValue stack = cc_js_own_data(s->ctx, v, "stack");
	int r = JS_IsException(name) || JS_IsException(msg) ? -1 : 0;
	if (level)
		cc_buf_puts(s->b, "[");
	if (!r && JS_IsString(name))
		r = add_string(s, name, false);
	else if (!r)
		cc_buf_puts(s->b, "Error");
	if (!r && nonempty(s->ctx, msg)) {
		cc_buf_puts(s->b, ": ");
		r = add_string(s, msg, false);
	}
	if (!r && !level && JS_IsString(stack)) {
		cc_buf_puts(s->b, "\n");
		r = add_string(s, stack, false);
		while (s->b->len && s->b->data[s->b->len - 1] == '\n')
			s->b->data[--s->b->len] = 0;
	}
	if (level)
		cc_buf_puts(s->b, "]");
	JS_FreeValue(s->ctx, name);
	JS_FreeValue(s->ctx, msg);
	JS_FreeValue(s->ctx, stack);
	return r;
}

static int insp_object(struct insp *s, JSValueConst v, int level)
{
	JSContext *ctx = s->ctx;
	JSClassID c = JS_GetClassID(v);
	const char *typed = NULL;
	int r = 0;
	for (int i = 0; i < s->n; i++)
		if (s->open[i] == JS_VALUE_GET_PTR(v))
			return cc_buf_puts(s->b, "[Circular]"), 0;
	if (c == cc_js.cls_proxy)
		return cc_buf_puts(s->b, "[Proxy]"), 0;
	if (JS_IsFunction(ctx, v)) {
		JSValue name = cc_js_own_data(ctx, v, "name");
		bool named = nonempty(ctx, name); /* "" is anonymous, as in Node */
		cc_buf_puts(s->b, named ? "[Function: " : "[Function (anonymous)]");
		if (named) {
			r = add_string(s, name, false);
			cc_buf_puts(s->b, "]");
		}
		JS_FreeValue(ctx, name);
		return r;
	}
	if (c == cc_js.cls_error)
		return insp_error(s, v, level);
	if (c == cc_js.cls_regexp)
		return add_call(s, cc_js.regexp_to_string, v);
	if (c == cc_js.cls_date) {
		double ms = NAN;
		JSValue t = JS_Call(ctx, cc_js.date_get_time, v, 0, NULL);
		r = JS_IsException(t) || JS_ToFloat64(ctx, &ms, t) < 0 ? -1 : 0;
		JS_FreeValue(ctx, t);
		if (!r && isnan(ms))
			cc_buf_puts(s->b, "Invalid Date");
		return r || isnan(ms) ? r : add_call(s, cc_js.date_to_iso, v);
	}
	for (int i = 0; i < 11; i++)
		if (c == cc_js.typed[i].id)
			typed = cc_js.typed[i].name;
	const char *name = cc_js_ctor_name(ctx, v);
	if (level > INSPECT_DEPTH) {
		cc_buf_puts(s->b, "[");
		cc_buf_puts(s->b, c == cc_js.cls_array ? "Array" : name ? name : "Object");
		cc_buf_puts(s->b, "]");
		JS_FreeCString(ctx, name);
		return 0;
	}
	s->open[s->n++] = JS_VALUE_GET_PTR(v);
	if (c == cc_js.cls_array) {
		r = insp_array(s, v, level);
	} else if (typed) {
		r = insp_typed(s, v, level, typed);
	} else if (c == cc_js.cls_array_buffer) {
		size_t size;
		char t[64];
		if (!JS_GetArrayBuffer(ctx, &size, v))
			JS_FreeValue(ctx, JS_GetException(ctx)); /* detached: size 0 */
		snprintf(t, sizeof(t), "ArrayBuffer { byteLength: %zu }", size);
		cc_buf_puts(s->b, t);
	} else if (c == cc_js.cls_map || c == cc_js.cls_set) {
		r = insp_collection(s, v, level, c == cc_js.cls_map);
	} else if (c == cc_js.cls_promise) {
		JSPromiseStateEnum st = JS_PromiseState(ctx, (JSValue)v);
		cc_buf_puts(s->b, st == JS_PROMISE_PENDING    ? "Promise { <pending>"
				  : st == JS_PROMISE_REJECTED ? "Promise { <rejected> "
							      : "Promise { ");
		if (st != JS_PROMISE_PENDING) {
			JSValue res = JS_PromiseResult(ctx, (JSValue)v);
			r = insp_value(s, res, level + 1, true);
			JS_FreeValue(ctx, res);
		}
		cc_buf_puts(s->b, " }");
	} else {
		JSValue proto = cc_js_proto_of(ctx, v);
		if (JS_IsNull(proto))
			cc_buf_puts(s->b, "[Object: null prototype] ");
		else if (name && !cc_js_same_object(proto, cc_js.object_proto))
			cc_buf_puts(s->b, name), cc_buf_puts(s->b, " ");
		JS_FreeValue(ctx, proto);
		r = insp_props(s, v, level);
	}
	s->n--;
	JS_FreeCString(ctx, name);
	return r;
}

static int insp_value(struct insp *s, JSValueConst v, int level, bool quote)
{
	if (s->b->full)
		return 0; /* past the output cap: the rest would be dropped */
	switch (JS_VALUE_GET_NORM_TAG(v)) {
	case JS_TAG_INT:
		return add_number(s, JS_VALUE_GET_INT(v));
	case JS_TAG_FLOAT64:
		return add_number(s, JS_VALUE_GET_FLOAT64(v));
	case JS_TAG_SHORT_BIG_INT:
	case JS_TAG_BIG_INT:
		if (add_string(s, v, false))
			return -1;
		cc_buf_puts(s->b, "n");
		return 0;
	case JS_TAG_STRING:
	case JS_TAG_STRING_ROPE:
		return add_string(s, v, quote);
	case JS_TAG_SYMBOL:
		return add_symbol(s, v);
	case JS_TAG_OBJECT:
		return insp_object(s, v, level);
	case JS_TAG_BOOL:
		cc_buf_puts(s->b, JS_VALUE_GET_BOOL(v) ? "true" : "false");
		return 0;
	case JS_TAG_NULL:
		cc_buf_puts(s->b, "null");
		return 0;
	default:
		cc_buf_puts(s->b, "undefined");
		return 0;
	}
}

int cc_js_inspect(JSContext *ctx, struct cc_buf *b, JSValueConst v)
{
	struct insp s = { .ctx = ctx, .b = b };
	return insp_value(&s, v, 0, false);
}

/* One %-directive of a format string (Node's util.format). */
static int format_one(struct insp *s, char c, JSValueConst v)
{
	JSContext *ctx = s->ctx;
	double d;
	int tag = JS_VALUE_GET_NORM_TAG(v);
	bool big = tag == JS_TAG_BIG_INT || tag == JS_TAG_SHORT_BIG_INT;
	switch (c) {
	case 's':
		return insp_value(s, v, 0, false);
	case 'o':
	case 'O':
		return insp_value(s, v, 0, true);
	case 'd':
	case 'i':
	case 'f':
		if (big && c != 'f')
			return insp_value(s, v, 0, false);
		if (tag == JS_TAG_SYMBOL || big)
			d = NAN;
		else if (JS_ToFloat64(ctx, &d, v) < 0) /* Number(v), as Node */
			return -1;
		return add_number(s, c == 'i' ? trunc(d) : d);
	case 'j': {
		JSValue j = JS_JSONStringify(ctx, v, JS_UNDEFINED, JS_UNDEFINED);
		if (JS_IsException(j)) {
			/* Node prints a cycle as [Circular]; any other error
			 * (an interrupt included) goes on up. */
			JSValue e = JS_GetException(ctx);
			JSValue m = JS_GetPropertyStr(ctx, e, "message");
			const char *ms = JS_IsString(m) ? JS_ToCString(ctx, m) : NULL;
			bool cyc = ms && strstr(ms, "circular");
			JS_FreeCString(ctx, ms);
			JS_FreeValue(ctx, m);
			if (!cyc)
				return JS_Throw(ctx, e), -1;
			JS_FreeValue(ctx, e);
			cc_buf_puts(s->b, "[Circular]");
			return 0;
		}
		int r = insp_value(s, j, 0, false);
		JS_FreeValue(ctx, j);
		return r;
	}
	default: /* %c: CSS, ignored */
		return 0;
	}
}

int cc_js_format(JSContext *ctx, struct cc_buf *b, int argc, JSValueConst *argv)
{
	struct insp s = { .ctx = ctx, .b = b };
	int i = 0;
	/* As Node: a lone string is printed as is, "%%" included. */
	if (argc > 1 && JS_IsString(argv[0])) {
		size_t len, from = 0;
		const char *f = JS_ToCStringLen(ctx, &len, argv[0]);
		if (!f)
			return -1;
		for (i = 1; from < len;) {
			const char *pc = memchr(f + from, '%', len - from);
			size_t k = pc ? (size_t)(pc - f) : len;
			char c = k + 1 < len ? f[k + 1] : 0;
			if (!pc || k + 1 >= len) {
				add_fixed(b, f + from, len - from);
				break;
			}
			if (!c || !strchr("sdifjoOc%", c) || (c != '%' && i >= argc)) {
				add_fixed(b, f + from, k + 1 - from);
				from = k + 1;
				continue;
			}
			add_fixed(b, f + from, k - from);
			from = k + 2;
			if (c == '%')
				cc_buf_puts(b, "%");
			else if (format_one(&s, c, argv[i++]) < 0) {
				JS_FreeCString(ctx, f);
				return -1;
			}
		}
		JS_FreeCString(ctx, f);
	}
	for (; i < argc; i++) {
		if (i)
			cc_buf_puts(b, " ");
		if (insp_value(&s, argv[i], 0, false) < 0)
			return -1;
	}
	return 0;
}

/* ---- the console object ---- */

enum {
	CON_STDOUT,
	CON_STDERR,
	CON_ASSERT
};

int cc_js_capped_fd;

/* Thrown once output is over its cap. Uncatchable (the flag QuickJS uses
 * for its own interrupts), so no try/catch in the guest keeps it printing;
 * the interrupt handler stops anything after that, as should_stop is now
 * true. */
static JSValue throw_output_cap(JSContext *ctx)
{
	JSValue e = JS_NewError(ctx);
	if (JS_IsException(e))
		return e;
	JS_DefinePropertyValueStr(ctx, e, "message",
				  JS_NewString(ctx, "output over the per-eval cap"),
				  JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
	JS_SetUncatchableError(ctx, e, 1);
	return JS_Throw(ctx, e);
}

static JSValue console_write(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv,
			     int magic)
{
	int fd = magic == CON_STDOUT ? 1 : 2;
	uint64_t cap = fd == 1 ? cc_worker_limits.max_stdout : cc_worker_limits.max_stderr;
	/* One byte over the cap is enough for cc_worker_output to report it. */
	struct cc_buf b = { .limit = (size_t)(cap < (1u << 30) ? cap : (1u << 30)) + 1 };
	int r;
	(void)this_val;
	if (magic == CON_ASSERT) {
		if (argc > 0 && JS_ToBool(ctx, argv[0]) > 0)
			return JS_UNDEFINED;
		cc_buf_puts(&b, argc > 1 ? "Assertion failed: " : "Assertion failed");
		r = argc > 1 ? cc_js_format(ctx, &b, argc - 1, argv + 1) : 0;
	} else {
		r = cc_js_format(ctx, &b, argc, argv);
	}
	cc_buf_puts(&b, "\n");
	if (!r && b.oom)
		r = (JS_ThrowOutOfMemory(ctx), -1);
	if (!r && cc_worker_output(fd, b.data, b.len) < 0) {
		if (!cc_js_capped_fd)
			cc_js_capped_fd = fd;
		r = (throw_output_cap(ctx), -1);
	}
	cc_buf_free(&b);
	return r ? JS_EXCEPTION : JS_UNDEFINED;
}

int cc_js_console_install(JSContext *ctx)
{
	static const struct {
		const char *name;
		int magic;
	} fns[] = {
		{ "log", CON_STDOUT },	{ "info", CON_STDOUT },	 { "debug", CON_STDOUT },
		{ "warn", CON_STDERR }, { "error", CON_STDERR }, { "assert", CON_ASSERT },
	};
	JSValue con = JS_NewObject(ctx);
	if (JS_IsException(con))
		return -1;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		JSValue f = JS_NewCFunctionMagic(ctx, console_write, fns[i].name, 0,
						 JS_CFUNC_generic_magic, fns[i].magic);
		if (JS_IsException(f) ||
		    JS_DefinePropertyValueStr(ctx, con, fns[i].name, f, JS_PROP_C_W_E) < 0) {
			JS_FreeValue(ctx, con);
			return -1;
		}
	}
	JSValue global = JS_GetGlobalObject(ctx);
	int r = JS_DefinePropertyValueStr(ctx, global, "console", con,
					  JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
	JS_FreeValue(ctx, global);
	return r < 0 ? -1 : 0;
}
