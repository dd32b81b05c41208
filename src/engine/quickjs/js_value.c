/* QuickJS values across the boundary (DESIGN.md section 5): results packed
 * as MessagePack, host values bound as globals, and the console's text.
 * Worker side; see js_value.h for the contract of each entry point. */
#include "js_value.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "civil.h"
#include "utf8.h"
#include "value.h"

struct cc_js_builtins cc_js;

/* Values per result: the budget the supervisor applies too (value.h). */
#define PACK_MAX_NODES cc_value_node_budget(cc_worker_limits.max_result)

/* Number.MAX_SAFE_INTEGER: the largest n with n and n + 1 exact as numbers. */
#define JS_MAX_SAFE_INTEGER (((int64_t)1 << 53) - 1)

#define STR_(x) #x
#define STR(x) STR_(x)

/* Runs once before any guest code, so every name below still means the
 * built-in. The order matches the slot tables in cc_js_builtins_init. */
static const char builtins_src[] =
	"(() => {\n"
	"  const T = 10n ** " STR(
		CC_BIGINT_MAX_DIGITS) "n, P = Object.getPrototypeOf,\n"
				      "    size = (C) => "
				      "Object.getOwnPropertyDescriptor(C.prototype, 'size').get;\n"
				      "  return [Object.prototype,\n"
				      "    Map.prototype.entries, P(new Map().entries()).next, "
				      "size(Map),\n"
				      "    Set.prototype.values, P(new Set().values()).next, "
				      "size(Set),\n"
				      "    Date.prototype.getTime, Date.prototype.toISOString, "
				      "RegExp.prototype.toString,\n"
				      "    BigInt, (x) => x >= T || x <= -T, Promise, "
				      "Promise.resolve, Error, TypeError,\n"
				      "    {}, [], new Error(), new Date(0), new Map(), new Set(), "
				      "new Proxy({}, {}),\n"
				      "    Promise.resolve(), /x/, new ArrayBuffer(0), new "
				      "Uint8Array(0)];\n"
				      "})()";

static const char *const typed_names[11] = {
	"Uint8ClampedArray", "Int8Array",    "Uint8Array",   "Int16Array",
	"Uint16Array",	     "Int32Array",   "Uint32Array",  "BigInt64Array",
	"BigUint64Array",    "Float32Array", "Float64Array",
};

int cc_js_builtins_init(JSContext *ctx)
{
	JSValue *slots[] = {
		&cc_js.object_proto,	 &cc_js.map_entries,	 &cc_js.map_next,
		&cc_js.map_size,	 &cc_js.set_values,	 &cc_js.set_next,
		&cc_js.set_size,	 &cc_js.date_get_time,	 &cc_js.date_to_iso,
		&cc_js.regexp_to_string, &cc_js.bigint,		 &cc_js.bigint_too_big,
		&cc_js.promise,		 &cc_js.promise_resolve, &cc_js.error,
		&cc_js.type_error,
	};
	JSClassID *classes[] = {
		&cc_js.cls_object,	 &cc_js.cls_array,	 &cc_js.cls_error,
		&cc_js.cls_date,	 &cc_js.cls_map,	 &cc_js.cls_set,
		&cc_js.cls_proxy,	 &cc_js.cls_promise,	 &cc_js.cls_regexp,
		&cc_js.cls_array_buffer, &cc_js.cls_uint8_array,
	};
	const size_t ns = sizeof(slots) / sizeof(slots[0]);
	const size_t nc = sizeof(classes) / sizeof(classes[0]);
	JSValue arr = JS_Eval(ctx, builtins_src, sizeof(builtins_src) - 1, "<codecage>",
			      JS_EVAL_TYPE_GLOBAL);
	if (JS_IsException(arr))
		return -1;
	for (size_t i = 0; i < ns + nc; i++) {
		JSValue v = JS_GetPropertyUint32(ctx, arr, (uint32_t)i);
		if (!JS_IsObject(v)) { /* an exception: memory ran out */
			JS_FreeValue(ctx, arr);
			return -1;
		}
		if (i < ns) {
			*slots[i] = v; /* kept for the life of the process */
			continue;
		}
		*classes[i - ns] = JS_GetClassID(v);
		JS_FreeValue(ctx, v);
	}
	JS_FreeValue(ctx, arr);

	JSValue global = JS_GetGlobalObject(ctx);
	for (int i = 0; i < 11; i++) {
		JSValue ctor = JS_GetPropertyStr(ctx, global, typed_names[i]);
		JSValue obj = JS_CallConstructor(ctx, ctor, 0, NULL);
		JS_FreeValue(ctx, ctor);
		if (JS_IsException(obj)) {
			JS_FreeValue(ctx, global);
			return -1;
		}
		cc_js.typed[i].id = JS_GetClassID(obj);
		cc_js.typed[i].name = typed_names[i];
		JS_FreeValue(ctx, obj);
	}
	JS_FreeValue(ctx, global);
	return 0;
}

/* ---- small helpers ---- */

static const char *js_typeof(JSContext *ctx, JSValueConst v)
{
	switch (JS_VALUE_GET_NORM_TAG(v)) {
	case JS_TAG_INT:
	case JS_TAG_FLOAT64:
		return "number";
	case JS_TAG_SHORT_BIG_INT:
	case JS_TAG_BIG_INT:
		return "bigint";
	case JS_TAG_STRING:
	case JS_TAG_STRING_ROPE:
		return "string";
	case JS_TAG_SYMBOL:
		return "symbol";
	case JS_TAG_BOOL:
		return "boolean";
	case JS_TAG_UNDEFINED:
		return "undefined";
	case JS_TAG_NULL:
		return "null";
	default:
		return JS_IsFunction(ctx, v) ? "function" : "object";
	}
}

/* An own data property, read without running getters or Proxy traps (so
 * describing a value for an error message or the console cannot run guest
 * code). Returns the value, or undefined. */
JSValue cc_js_own_data(JSContext *ctx, JSValueConst obj, const char *prop)
{
	JSPropertyDescriptor d;
	if (!JS_IsObject(obj) || JS_GetClassID(obj) == cc_js.cls_proxy)
		return JS_UNDEFINED;
	JSAtom a = JS_NewAtom(ctx, prop);
	int r = a == JS_ATOM_NULL ? -1 : JS_GetOwnProperty(ctx, &d, obj, a);
	JS_FreeAtom(ctx, a);
	if (r < 0)
		JS_FreeValue(ctx, JS_GetException(ctx));
	if (r <= 0)
		return JS_UNDEFINED;
	JS_FreeValue(ctx, d.getter);
	JS_FreeValue(ctx, d.setter);
	return d.value;
}

/* obj's prototype, or null; no Proxy trap runs (Proxies answer undefined). */
JSValue cc_js_proto_of(JSContext *ctx, JSValueConst obj)
{
	if (JS_GetClassID(obj) == cc_js.cls_proxy)
		return JS_UNDEFINED;
	return JS_GetPrototype(ctx, obj);
}

bool cc_js_same_object(JSValueConst a, JSValueConst b)
{
	return JS_IsObject(a) && JS_IsObject(b) && JS_VALUE_GET_PTR(a) == JS_VALUE_GET_PTR(b);
}

/* The name of obj's constructor (prototype.constructor.name, own data
 * properties only), as a JS C string to free with JS_FreeCString; NULL when
 * there is none. */
const char *cc_js_ctor_name(JSContext *ctx, JSValueConst obj)
{
	JSValue proto = cc_js_proto_of(ctx, obj);
	JSValue ctor = cc_js_own_data(ctx, proto, "constructor");
	JSValue name = cc_js_own_data(ctx, ctor, "name");
	const char *s = NULL;
	if (JS_IsString(name)) {
		s = JS_ToCString(ctx, name);
		if (!s)
			JS_FreeValue(ctx, JS_GetException(ctx));
		else if (!*s) {
			JS_FreeCString(ctx, s);
			s = NULL;
		}
	}
	JS_FreeValue(ctx, name);
	JS_FreeValue(ctx, ctor);
	JS_FreeValue(ctx, proto);
	return s;
}

bool cc_js_is_ident(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!(*s == '_' || *s == '$' || (*s >= 'a' && *s <= 'z') ||
		      (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

/* ---- JS -> MessagePack ---- */

struct pack {
	JSContext *ctx;
	struct cc_outcome *o;
	msgpack_packer pk;
	size_t nodes;	/* values packed so far (keys not counted, as value.c) */
	unsigned depth; /* containers open */
	bool at_key;	/* packing a map key: the path ends at its container */
	bool args;	/* tool-call arguments, not a result: says so in errors */
	/* The key or index taken at each open container, for error messages. */
	struct {
		const char *key;
		uint32_t idx;
	} path[CC_VALUE_MAX_DEPTH];
};

#define WHAT_FITS                                                                                  \
	" can be null/undefined, booleans, numbers, BigInts, strings, "                            \
	"Uint8Array/ArrayBuffer, Arrays, plain objects, Maps with string keys and Dates"

/* The words errors use: a result is returned, tool arguments are passed. */
#define VERB(p) ((p)->args ? "pass" : "return")
#define NOUN(p) ((p)->args ? "the arguments" : "the result")

static const char *what_fits(const struct pack *p)
{
	return p->args ? "tool arguments" WHAT_FITS : "results" WHAT_FITS;
}

static int refuse(struct pack *p, cc_error_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Fail the outcome with "result.a[2]: <what>" ("args[0].a: <what>" for
 * tool arguments, packed as one array). */
static int refuse(struct pack *p, cc_error_kind kind, const char *fmt, ...)
{
	struct cc_buf b = { .limit = 4096 };
	char *what = NULL, num[16];
	va_list ap;
	cc_buf_puts(&b, p->args ? "args" : "result");
	for (unsigned i = 0; i + p->at_key < p->depth && b.len < 200; i++) {
		if (!p->path[i].key) {
			snprintf(num, sizeof(num), "[%" PRIu32 "]", p->path[i].idx);
			cc_buf_puts(&b, num);
		} else if (cc_js_is_ident(p->path[i].key) && strlen(p->path[i].key) < 64) {
			cc_buf_puts(&b, ".");
			cc_buf_puts(&b, p->path[i].key);
		} else {
			cc_buf_puts(&b, "[\"");
			cc_buf_add(&b, p->path[i].key, strnlen(p->path[i].key, 64));
			cc_buf_puts(&b, "\"]");
		}
	}
	if (b.len >= 200)
		cc_buf_puts(&b, "...");
	va_start(ap, fmt);
	what = cc_vstrprintf(fmt, ap);
	va_end(ap);
	cc_buf_puts(&b, ": ");
	cc_buf_puts(&b, what ? what : "cannot be converted");
	free(what);
	cc_outcome_fail(p->o, kind, kind == CC_ERR_GUEST ? "TypeError" : "OutputLimitError",
			b.data ? b.data : "value cannot be converted", NULL);
	cc_buf_free(&b);
	return -1;
}

static int refuse_size(struct pack *p)
{
	return refuse(p, CC_ERR_OUTPUT_LIMIT,
		      "%s over the %" PRIu64 "-byte cap (limits.max_result)",
		      p->args ? "the arguments are" : "the result is", cc_worker_limits.max_result);
}

static int refuse_type(struct pack *p, const char *what)
{
	p->o->unconvertible = true;
	return refuse(p, CC_ERR_GUEST, "cannot %s %s; %s", VERB(p), what, what_fits(p));
}

static int pack_oom(struct pack *p)
{
	return refuse(p, CC_ERR_MEMORY_LIMIT, "out of memory while packing %s", NOUN(p));
}

/* True when n more bytes would take the packed result over max_result.
 * Checked before every write, so a huge value never gets copied. */
static bool over(struct pack *p, size_t n)
{
	uint64_t max = cc_worker_limits.max_result;
	return p->o->value.size > max || n > max - p->o->value.size;
}

/* Make room for n bytes up front, for the value.h helpers that cannot
 * report a failed write (a silently short buffer would be a malformed frame
 * that kills the worker). */
static int reserve(struct pack *p, size_t n)
{
	msgpack_sbuffer *sb = &p->o->value;
	if (sb->alloc - sb->size >= n)
		return 0;
	size_t want = sb->alloc * 2 > sb->size + n ? sb->alloc * 2 : sb->size + n;
	char *d = realloc(sb->data, want);
	if (!d)
		return pack_oom(p);
	sb->data = d;
	sb->alloc = want;
	return 0;
}

static int count_node(struct pack *p)
{
	if (++p->nodes > PACK_MAX_NODES)
		return refuse(p, CC_ERR_OUTPUT_LIMIT, "%s %s more than %zu values", NOUN(p),
			      p->args ? "hold" : "has", PACK_MAX_NODES);
	/* Conversion is C code the interrupt handler never sees: poll the
	 * deadline ourselves now and then. The engine reports the stop. */
	if ((p->nodes & 0xffff) == 0 && cc_worker_should_stop()) {
		JS_ThrowInternalError(p->ctx, "interrupted");
		return CC_JS_EXCEPTION;
	}
	return 0;
}

static int enter(struct pack *p)
{
	if (p->depth >= CC_VALUE_MAX_DEPTH) {
		p->o->unconvertible = true;
		return refuse(p, CC_ERR_GUEST,
			      "the value is nested deeper than %d levels (or a cycle); %s",
			      CC_VALUE_MAX_DEPTH, what_fits(p));
	}
	p->depth++;
	return 0;
}

static int pack_value(struct pack *p, JSValueConst v);

/* Pack a JS string s as str. For a map key (is_key), a lone surrogate is
 * refused: two different keys could both become "\uFFFD" and a duplicate
 * key would make the supervisor reject the whole frame. *out gets the C
 * string (free with JS_FreeCString) for the error path, when asked. */
static int pack_str(struct pack *p, JSValueConst s, bool is_key, const char **out)
{
	size_t len;
	int r = 0;
	const char *c = JS_ToCStringLen(p->ctx, &len, s);
	if (!c)
		return CC_JS_EXCEPTION;
	p->at_key = is_key;
	if (over(p, len + 5)) {
		r = refuse_size(p);
	} else if (msgpack_pack_str(&p->pk, len) || msgpack_pack_str_body(&p->pk, c, len)) {
		r = pack_oom(p);
	} else {
		char *w = p->o->value.data + p->o->value.size - len;
		size_t fixed = cc_utf8_fix_surrogates(w, len);
		if (fixed && is_key)
			r = refuse(p, CC_ERR_GUEST,
				   "cannot %s an object key holding a lone "
				   "UTF-16 surrogate (not valid Unicode)",
				   VERB(p));
		else if (!cc_utf8_valid(w, len)) /* QuickJS never does this */
			r = refuse(p, CC_ERR_INTERNAL, "string is not valid UTF-8");
	}
	p->at_key = false;
	if (r || !out)
		JS_FreeCString(p->ctx, c);
	else
		*out = c;
	return r;
}

static int pack_bigint(struct pack *p, JSValueConst v)
{
	JSContext *ctx = p->ctx;
	size_t len;
	int r = 0;
	if (JS_VALUE_GET_TAG(v) == JS_TAG_BIG_INT) {
		/* Decide by magnitude first: printing a million-bit BigInt takes
		 * about a second of C code no interrupt reaches. */
		JSValue t = JS_Call(ctx, cc_js.bigint_too_big, JS_UNDEFINED, 1, &v);
		if (JS_IsException(t))
			return CC_JS_EXCEPTION;
		int big = JS_ToBool(ctx, t);
		JS_FreeValue(ctx, t);
		if (big)
			return refuse(p, CC_ERR_GUEST,
				      "cannot %s a BigInt of more than %d decimal digits", VERB(p),
				      CC_BIGINT_MAX_DIGITS);
	}
	const char *s = JS_ToCStringLen(ctx, &len, v);
	char *end = NULL;
	if (!s)
		return CC_JS_EXCEPTION;
	/* The wire's bigint is an integer outside int64 (codecage.h): one
	 * that fits goes as an int, as a Python int does. */
	errno = 0;
	long long i = strtoll(s, &end, 10);
	bool fits = !errno && end == s + len;
	if (!cc_bigint_text_valid(s, len))
		r = refuse(p, CC_ERR_GUEST, "cannot %s a BigInt of more than %d decimal digits",
			   VERB(p), CC_BIGINT_MAX_DIGITS);
	else if (fits)
		r = msgpack_pack_int64(&p->pk, i) ? pack_oom(p) : over(p, 0) ? refuse_size(p) : 0;
	else if (over(p, len + 6))
		r = refuse_size(p);
	else if (!(r = reserve(p, len + 6)))
		cc_pack_bigint(&p->pk, s, len);
	JS_FreeCString(ctx, s);
	return r;
}

static int pack_date(struct pack *p, JSValueConst v)
{
	double ms;
	JSValue t = JS_Call(p->ctx, cc_js.date_get_time, v, 0, NULL);
	if (JS_IsException(t) || JS_ToFloat64(p->ctx, &ms, t) < 0) {
		JS_FreeValue(p->ctx, t);
		return CC_JS_EXCEPTION;
	}
	JS_FreeValue(p->ctx, t);
	if (!isfinite(ms))
		return refuse(p, CC_ERR_GUEST, "cannot %s an invalid Date", VERB(p));
	/* A time value is a whole number of ms within +-8.64e15: exact in
	 * int64. Floor division, so 1969 stays in 1969. */
	int64_t m = (int64_t)ms, sec = m / 1000, rem = m % 1000;
	if (rem < 0) {
		sec--;
		rem += 1000;
	}
	if (over(p, 15))
		return refuse_size(p);
	if (reserve(p, 15))
		return -1;
	cc_pack_timestamp(&p->pk, sec, (uint32_t)rem * 1000000u);
	return 0;
}

/* Uint8Array (typed) or ArrayBuffer as bin. */
static int pack_bytes(struct pack *p, JSValueConst v, bool typed)
{
	JSContext *ctx = p->ctx;
	size_t off = 0, len = 0, bpe, size;
	int r = 0;
	JSValue buf =
		typed ? JS_GetTypedArrayBuffer(ctx, v, &off, &len, &bpe) : JS_DupValue(ctx, v);
	if (JS_IsException(buf))
		return CC_JS_EXCEPTION;
	uint8_t *data = JS_GetArrayBuffer(ctx, &size, buf);
	if (!data && JS_HasException(ctx)) {
		r = CC_JS_EXCEPTION; /* detached */
	} else {
		if (!typed)
			len = size;
		if (off > size || len > size - off)
			r = refuse(p, CC_ERR_GUEST, "cannot %s a Uint8Array past its buffer",
				   VERB(p));
		else if (over(p, len + 5))
			r = refuse_size(p);
		else if (msgpack_pack_bin(&p->pk, len) ||
			 msgpack_pack_bin_body(&p->pk, len ? data + off : (uint8_t *)"", len))
			r = pack_oom(p);
	}
	JS_FreeValue(ctx, buf);
	return r;
}

static int pack_array(struct pack *p, JSValueConst v)
{
	JSContext *ctx = p->ctx;
	int64_t len;
	int r;
	JSValue lv = JS_GetPropertyStr(ctx, v, "length");
	r = JS_ToInt64(ctx, &len, lv);
	JS_FreeValue(ctx, lv);
	if (r < 0)
		return CC_JS_EXCEPTION;
	/* Refuse before walking: new Array(2**32 - 1) is all holes. */
	if ((uint64_t)len > PACK_MAX_NODES - p->nodes)
		return refuse(p, CC_ERR_OUTPUT_LIMIT, "%s %s more than %zu values", NOUN(p),
			      p->args ? "hold" : "has", PACK_MAX_NODES);
	if (over(p, (size_t)len + 5))
		return refuse_size(p);
	if ((r = enter(p)))
		return r;
	if (msgpack_pack_array(&p->pk, (size_t)len))
		return pack_oom(p);
	for (int64_t i = 0; i < len; i++) {
		JSPropertyDescriptor d;
		JSAtom a = JS_NewAtomUInt32(ctx, (uint32_t)i);
		if (a == JS_ATOM_NULL)
			return CC_JS_EXCEPTION;
		/* Own properties only: a hole is null, whatever
		 * Array.prototype holds at that index. */
		int own = JS_GetOwnProperty(ctx, &d, v, a);
		JSValue el = JS_UNDEFINED;
		if (own > 0 && (d.flags & JS_PROP_GETSET)) {
			JS_FreeValue(ctx, d.getter);
			JS_FreeValue(ctx, d.setter);
			el = JS_GetProperty(ctx, v, a);
		} else if (own > 0) {
			el = d.value;
		}
		JS_FreeAtom(ctx, a);
		if (own < 0 || JS_IsException(el))
			return CC_JS_EXCEPTION;
		p->path[p->depth - 1].key = NULL;
		p->path[p->depth - 1].idx = (uint32_t)i;
		r = pack_value(p, el);
		JS_FreeValue(ctx, el);
		if (r)
			return r;
	}
	p->depth--;
	return 0;
}

/* Own enumerable string keys, in JS order (integer keys first, then
 * insertion order); getters run, as they do for JSON.stringify. */
static int pack_plain(struct pack *p, JSValueConst v)
{
	JSContext *ctx = p->ctx;
	JSPropertyEnum *tab = NULL;
	uint32_t n = 0, i;
	int r;
	if (JS_GetOwnPropertyNames(ctx, &tab, &n, v, JS_GPN_STRING_MASK | JS_GPN_ENUM_ONLY) < 0)
		return CC_JS_EXCEPTION;
	if (n > PACK_MAX_NODES - p->nodes)
		r = refuse(p, CC_ERR_OUTPUT_LIMIT, "%s %s more than %zu values", NOUN(p),
			   p->args ? "hold" : "has", PACK_MAX_NODES);
	else if (!(r = enter(p)) && msgpack_pack_map(&p->pk, n))
		r = pack_oom(p);
	for (i = 0; i < n && !r; i++) {
		const char *key = NULL;
		JSValue ks = JS_AtomToString(ctx, tab[i].atom);
		r = JS_IsException(ks) ? CC_JS_EXCEPTION : pack_str(p, ks, true, &key);
		JS_FreeValue(ctx, ks);
		if (r)
			break;
		JSValue el = JS_GetProperty(ctx, v, tab[i].atom);
		p->path[p->depth - 1].key = key;
		r = JS_IsException(el) ? CC_JS_EXCEPTION : pack_value(p, el);
		JS_FreeValue(ctx, el);
		JS_FreeCString(ctx, key);
	}
	for (i = 0; i < n; i++)
		JS_FreeAtom(ctx, tab[i].atom);
	js_free(ctx, tab);
	if (!r)
		p->depth--;
	return r;
}

/* A Map whose keys are all strings. The entries are copied out first,
 * with the built-in iterator captured at init: converting a value may run
 * a getter that changes the Map, and the header already holds the count. */
static int pack_map(struct pack *p, JSValueConst v)
{
	JSContext *ctx = p->ctx;
	JSValue *kv = NULL; /* key, value, key, value ... */
	size_t n = 0, cap = 0, i;
	int r = 0;
	JSValue it = JS_Call(ctx, cc_js.map_entries, v, 0, NULL);
	if (JS_IsException(it))
		return CC_JS_EXCEPTION;
	for (;;) {
		JSValue res = JS_Call(ctx, cc_js.map_next, it, 0, NULL);
		if (JS_IsException(res)) {
			r = CC_JS_EXCEPTION;
			break;
		}
		JSValue done = JS_GetPropertyStr(ctx, res, "done");
		JSValue pair = JS_GetPropertyStr(ctx, res, "value");
		bool end = JS_ToBool(ctx, done) != 0;
		JS_FreeValue(ctx, done);
		JS_FreeValue(ctx, res);
		if (end) {
			JS_FreeValue(ctx, pair);
			break;
		}
		JSValue k = JS_GetPropertyUint32(ctx, pair, 0);
		JSValue val = JS_GetPropertyUint32(ctx, pair, 1);
		JS_FreeValue(ctx, pair);
		if (!JS_IsString(k))
			r = refuse(p, CC_ERR_GUEST,
				   "cannot %s a Map with a non-string key "
				   "(a %s); %s",
				   VERB(p), js_typeof(ctx, k), what_fits(p));
		else if (n / 2 >= PACK_MAX_NODES - p->nodes)
			r = refuse(p, CC_ERR_OUTPUT_LIMIT, "%s %s more than %zu values", NOUN(p),
				   p->args ? "hold" : "has", PACK_MAX_NODES);
		if (!r && n == cap) {
			JSValue *grown = realloc(kv, (cap ? cap * 2 : 16) * sizeof(*kv));
			if (grown) {
				kv = grown;
				cap = cap ? cap * 2 : 16;
			} else {
				r = pack_oom(p);
			}
		}
		if (r) {
			JS_FreeValue(ctx, k);
			JS_FreeValue(ctx, val);
			break;
		}
		kv[n++] = k;
		kv[n++] = val;
	}
	JS_FreeValue(ctx, it);
	if (!r && !(r = enter(p)) && msgpack_pack_map(&p->pk, n / 2))
		r = pack_oom(p);
	for (i = 0; i < n && !r; i += 2) {
		const char *key = NULL;
		if ((r = pack_str(p, kv[i], true, &key)))
			break;
		p->path[p->depth - 1].key = key;
		r = pack_value(p, kv[i + 1]);
		JS_FreeCString(ctx, key);
	}
	for (i = 0; i < n; i++)
		JS_FreeValue(ctx, kv[i]);
	free(kv);
	if (!r)
		p->depth--;
	return r;
}

/* Refuse an object that has no mapping, naming what it is. */
static int refuse_object(struct pack *p, JSValueConst v)
{
	char what[160];
	JSClassID c = JS_GetClassID(v);
	if (c == cc_js.cls_proxy) {
		snprintf(what, sizeof(what), "a Proxy");
	} else if (JS_IsFunction(p->ctx, v)) {
		snprintf(what, sizeof(what), "a function");
	} else {
		const char *name = cc_js_ctor_name(p->ctx, v);
		if (name && strlen(name) < 100)
			snprintf(what, sizeof(what), "%s %s object",
				 strchr("AEIO", name[0]) ? "an" : "a", name);
		else
			snprintf(what, sizeof(what), "an object with a non-Object prototype");
		JS_FreeCString(p->ctx, name);
	}
	return refuse_type(p, what);
}

static int pack_object(struct pack *p, JSValueConst v)
{
	JSClassID c = JS_GetClassID(v);
	if (c == cc_js.cls_array)
		return pack_array(p, v);
	if (c == cc_js.cls_uint8_array || c == cc_js.cls_array_buffer)
		return pack_bytes(p, v, c == cc_js.cls_uint8_array);
	if (c == cc_js.cls_date)
		return pack_date(p, v);
	if (c == cc_js.cls_map)
		return pack_map(p, v);
	if (c == cc_js.cls_object) {
		JSValue proto = JS_GetPrototype(p->ctx, v);
		bool plain = JS_IsNull(proto) || cc_js_same_object(proto, cc_js.object_proto);
		JS_FreeValue(p->ctx, proto);
		if (plain)
			return pack_plain(p, v);
	}
	return refuse_object(p, v);
}

static int pack_value(struct pack *p, JSValueConst v)
{
	int r = count_node(p);
	if (r)
		return r;
	switch (JS_VALUE_GET_NORM_TAG(v)) {
	case JS_TAG_UNDEFINED:
	case JS_TAG_NULL:
		r = msgpack_pack_nil(&p->pk);
		break;
	case JS_TAG_BOOL:
		r = JS_VALUE_GET_BOOL(v) ? msgpack_pack_true(&p->pk) : msgpack_pack_false(&p->pk);
		break;
	case JS_TAG_INT: /* the engine's integer tag decides (DESIGN.md 5) */
		r = msgpack_pack_int64(&p->pk, JS_VALUE_GET_INT(v));
		break;
	case JS_TAG_FLOAT64: /* always float64: 7.0, NaN, -0 kept */
		r = msgpack_pack_double(&p->pk, JS_VALUE_GET_FLOAT64(v));
		break;
	case JS_TAG_SHORT_BIG_INT:
	case JS_TAG_BIG_INT:
		return pack_bigint(p, v);
	case JS_TAG_STRING:
	case JS_TAG_STRING_ROPE:
		return pack_str(p, v, false, NULL);
	case JS_TAG_SYMBOL:
		return refuse_type(p, "a Symbol");
	case JS_TAG_OBJECT:
		return pack_object(p, v);
	default:
		return refuse_type(p, "an internal engine value");
	}
	if (r)
		return pack_oom(p);
	return over(p, 0) ? refuse_size(p) : 0;
}

static int pack_root(JSContext *ctx, JSValueConst v, struct cc_outcome *o, bool args)
{
	struct pack *p = calloc(1, sizeof(*p)); /* the path is 1.6 KiB: not on the stack */
	int r;
	if (!p)
		return cc_outcome_fail(o, CC_ERR_MEMORY_LIMIT, "MemoryError",
				       "out of memory while packing a value", NULL);
	p->ctx = ctx;
	p->o = o;
	p->args = args;
	msgpack_packer_init(&p->pk, &o->value, msgpack_sbuffer_write);
	r = pack_value(p, v);
	if (r)
		msgpack_sbuffer_clear(&o->value);
	free(p);
	return r;
}

int cc_js_pack(JSContext *ctx, JSValueConst v, struct cc_outcome *o)
{
	return pack_root(ctx, v, o, false);
}

int cc_js_pack_args(JSContext *ctx, JSValueConst args, struct cc_outcome *o)
{
	return pack_root(ctx, args, o, true);
}

/* ---- cc_value -> JS ---- */

/* A Date of ms since the epoch, floored to whole ms (a Date holds no
 * more). A Date spans +-8.64e15 ms (ECMA-262 21.4.1.1); refuse what it
 * cannot hold rather than make an invalid Date the guest cannot return. */
static JSValue new_date(JSContext *ctx, double ms)
{
	if (ms > 8.64e15 || ms < -8.64e15)
		return JS_ThrowRangeError(ctx, "timestamp outside the range a Date can hold "
					       "(+-8.64e15 ms around 1970)");
	return JS_NewDate(ctx, ms);
}

static JSValue from_value(JSContext *ctx, const cc_value *v, unsigned depth)
{
	JSValue obj, item, tmp;
	size_t i;
	if (!v)
		return JS_NULL;
	if (depth > CC_VALUE_MAX_DEPTH)
		return JS_ThrowRangeError(ctx, "value nested deeper than %d levels",
					  CC_VALUE_MAX_DEPTH);
	switch (v->type) {
	case CC_VALUE_NULL:
		return JS_NULL;
	case CC_VALUE_BOOL:
		return JS_NewBool(ctx, v->u.b);
	case CC_VALUE_INT:
		/* A number when it is exact as one; beyond 2**53 a BigInt, so
		 * the value is kept (and comes back an int). */
		if (v->u.i > JS_MAX_SAFE_INTEGER || v->u.i < -JS_MAX_SAFE_INTEGER)
			return JS_NewBigInt64(ctx, v->u.i);
		return JS_NewInt64(ctx, v->u.i);
	case CC_VALUE_FLOAT:
		/* Keep the float tag (JS_NewFloat64 would make 7.0 an int), so a
		 * float the host sends comes back a float. */
		return __JS_NewFloat64(ctx, v->u.f);
	case CC_VALUE_BIGINT:
		tmp = JS_NewStringLen(ctx, v->u.str.ptr, v->u.str.len);
		if (JS_IsException(tmp))
			return tmp;
		obj = JS_Call(ctx, cc_js.bigint, JS_UNDEFINED, 1, &tmp);
		JS_FreeValue(ctx, tmp);
		return obj;
	case CC_VALUE_STRING:
		return JS_NewStringLen(ctx, v->u.str.ptr, v->u.str.len);
	case CC_VALUE_BYTES: {
		/* JS_NewTypedArray reads argv[1] and argv[2] (offset, length)
		 * whatever argc says: pass all three. */
		JSValue args[3] = { JS_UNDEFINED, JS_UNDEFINED, JS_UNDEFINED };
		args[0] = JS_NewArrayBufferCopy(ctx, (const uint8_t *)v->u.str.ptr, v->u.str.len);
		if (JS_IsException(args[0]))
			return args[0];
		obj = JS_NewTypedArray(ctx, 3, args, JS_TYPED_ARRAY_UINT8);
		JS_FreeValue(ctx, args[0]);
		return obj;
	}
	case CC_VALUE_ARRAY:
		obj = JS_NewArray(ctx);
		for (i = 0; i < v->u.array.len && !JS_IsException(obj); i++) {
			item = from_value(ctx, v->u.array.items[i], depth + 1);
			if (JS_IsException(item) ||
			    JS_DefinePropertyValueUint32(ctx, obj, (uint32_t)i, item,
							 JS_PROP_C_W_E | JS_PROP_THROW) < 0) {
				JS_FreeValue(ctx, obj);
				obj = JS_EXCEPTION;
			}
		}
		return obj;
	case CC_VALUE_MAP:
		obj = JS_NewObject(ctx);
		for (i = 0; i < v->u.map.len && !JS_IsException(obj); i++) {
			JSAtom a = JS_NewAtomLen(ctx, v->u.map.keys[i], v->u.map.key_lens[i]);
			item = a == JS_ATOM_NULL ? JS_EXCEPTION
						 : from_value(ctx, v->u.map.vals[i], depth + 1);
			if (JS_IsException(item) ||
			    JS_DefinePropertyValue(ctx, obj, a, item,
						   JS_PROP_C_W_E | JS_PROP_THROW) < 0) {
				JS_FreeValue(ctx, obj);
				obj = JS_EXCEPTION;
			}
			JS_FreeAtom(ctx, a);
		}
		return obj;
	case CC_VALUE_TIMESTAMP:
		/* the instant; an offset it keeps has no place in a Date */
		return new_date(ctx,
				(double)v->u.ts.sec * 1000.0 + (double)(v->u.ts.nsec / 1000000));
	case CC_VALUE_DATE:
		/* a date: the Date of its UTC midnight */
		return new_date(ctx, (double)v->u.days * 86400000.0);
	case CC_VALUE_DURATION:
		/* a duration: milliseconds, what subtracting two Dates gives
		 * (a fraction for what is below a millisecond) */
		return __JS_NewFloat64(ctx,
				       (double)v->u.dur.sec * 1000.0 + (double)v->u.dur.nsec / 1e6);
	case CC_VALUE_TIMEZONE: {
		/* a fixed offset: its ISO 8601 text, "+05:30", what a Date
		 * string takes after the time */
		char t[32];
		cc_civil_offset_text(t, sizeof(t), v->u.tz.offset_us);
		return JS_NewString(ctx, t);
	}
	case CC_VALUE_PATH:
		/* a path: its text */
		return JS_NewStringLen(ctx, v->u.str.ptr, v->u.str.len);
	}
	return JS_ThrowTypeError(ctx, "unknown value type %d", (int)v->type);
}

JSValue cc_js_from_value(JSContext *ctx, const cc_value *v)
{
	return from_value(ctx, v, 0);
}
