/* Python values across the boundary (DESIGN.md section 5), CPython engine.
 *
 * Python -> MessagePack packs straight into the outcome's buffer while
 * walking the object graph, so a result is never held twice, and every
 * byte goes through one write callback that enforces max_result as it
 * grows. A host tool's arguments (a tuple, one array) are packed the
 * same way, under the same caps, into the call's buffer
 * (cc_py_pack_args); only the error messages' wording differs.
 * Rules chosen here (the design leaves them to the engine):
 *  - bool is tested before int (bool is an int subclass);
 *  - ints outside int64 travel as bigint text, at most
 *    CC_BIGINT_MAX_DIGITS digits, else ValueError;
 *  - str with lone surrogates (legal in Python, not in UTF-8) is encoded
 *    with surrogatepass and each surrogate's three bytes are then replaced
 *    by U+FFFD's three (cc_utf8_fix_surrogates): one U+FFFD per surrogate,
 *    where a generic UTF-8 repair would give three.
 *    A dict key with a lone surrogate is refused instead (ValueError),
 *    because two such keys could repair to the same text and the
 *    supervisor rejects duplicate keys as a protocol violation;
 *  - datetime.datetime becomes a timestamp: an aware one is converted to
 *    UTC with its utcoffset() and keeps that offset and its zone's name
 *    (a zoned timestamp, unless it is UTC); a naive one is taken to be
 *    UTC already (the worker has no local time zone worth trusting);
 *  - datetime.date, datetime.timedelta, datetime.timezone and
 *    pathlib.PurePosixPath (a PosixPath too) cross as themselves, as
 *    src/common/py_objects.c takes them apart;
 *  - numpy arrays and scalars (any object whose type lives in a module
 *    named numpy or numpy.*) go through .tolist() once and the result is
 *    converted; numpy is never imported here;
 *  - everything else (set, Decimal, functions, class instances ...)
 *    is a TypeError that names the type and the types that work.
 * Depth counts containers (a flat list is depth 1) exactly as the
 * supervisor's decoder does, so a cycle shows up as "too deep" (TypeError,
 * like any other shape that cannot be returned); too many elements and
 * too many digits are ValueError. */
#include "py_value.h"
#include "py_from_value.h"
#include "py_objects.h"

#include <datetime.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "civil.h"
#include "value.h"
#include "worker.h"

/* Packing is a C loop that runs no bytecode, so the deadline's
 * KeyboardInterrupt cannot land inside it; poll the clock every this
 * many nodes instead (a vDSO read, far below the cost of 64k nodes). */
#define STOP_POLL_MASK 0xffffu

/* 10^4300 < 2^14285: an int with more bits has too many digits, and we
 * refuse it before paying for a quadratic decimal conversion. */
#define BIGINT_MAX_BITS 14285

#define TRUNCATED_NOTE "\n[codecage: truncated]"

/* Words for error messages: a result is returned, tool arguments are
 * passed. */
struct role {
	const char *verb, *verbed, *root, *what;
};
static const struct role ROLE_RESULT = { "return", "returned", "value", "results" };
static const struct role ROLE_ARGS = { "pass", "passed", "args", "tool arguments" };

struct packer {
	msgpack_packer pk;
	const struct role *role;
	msgpack_sbuffer *sb;
	uint64_t max;
	bool too_big; /* a write would pass max */
	bool oom;     /* the buffer could not grow */
	size_t nodes;
	/* How we reached the value at each depth, for error messages:
	 * path[d] is the step from the container at depth d to its child. */
	struct {
		Py_ssize_t index;
		PyObject *key; /* borrowed; NULL for a list index */
	} path[CC_VALUE_MAX_DEPTH + 1];
};

static int pack_value(struct packer *p, PyObject *obj, unsigned depth, bool via_numpy);

/* The single sink for every packed byte: the cap is checked before each
 * write, so an oversized result is refused before the buffer passes max. */
static int sb_write(void *data, const char *buf, size_t len)
{
	struct packer *p = data;

	if (p->too_big || p->oom)
		return -1;
	if (p->max && (len > p->max || p->sb->size > p->max - len)) {
		p->too_big = true;
		return -1;
	}
	if (msgpack_sbuffer_write(p->sb, buf, len) < 0) {
		p->oom = true;
		return -1;
	}
	return 0;
}

/* Turn the sink's sticky flags into this file's return codes. */
static int sink_status(struct packer *p)
{
	if (p->too_big)
		return CC_PY_TOO_BIG;
	if (p->oom) {
		PyErr_NoMemory();
		return -1;
	}
	return 0;
}

/* " (at value[2]['name'])" (tool arguments: " (at args[0]...)") for the
 * first depth steps, or "" at the top. A deep path keeps its last
 * PATH_SHOWN steps: that is where the problem is. */
#define PATH_SHOWN 8
static PyObject *path_text(struct packer *p, unsigned depth)
{
	unsigned first = depth > PATH_SHOWN ? depth - PATH_SHOWN : 0;
	PyObject *acc =
		!depth ? PyUnicode_FromString("")
		       : PyUnicode_FromFormat(" (at %s%s", p->role->root, first ? "..." : "");

	for (unsigned d = first; acc && d < depth; d++) {
		PyObject *step, *next;
		PyObject *key = p->path[d].key;

		if (!key) {
			step = PyUnicode_FromFormat("[%zd]", p->path[d].index);
		} else {
			/* str's own repr: a str subclass's __repr__ is guest code */
			PyObject *k = PyUnicode_GET_LENGTH(key) > 40
					      ? PyUnicode_Substring(key, 0, 40)
					      : (Py_INCREF(key), key);
			PyObject *r = k ? PyUnicode_Type.tp_repr(k) : NULL;
			step = r ? PyUnicode_FromFormat("[%U%s]", r, k != key ? "..." : "") : NULL;
			Py_XDECREF(r);
			Py_XDECREF(k);
		}
		next = step ? PyUnicode_Concat(acc, step) : NULL;
		Py_XDECREF(step);
		Py_SETREF(acc, next);
	}
	if (acc && depth) {
		PyObject *close = PyUnicode_FromString(")");
		PyObject *next = close ? PyUnicode_Concat(acc, close) : NULL;
		Py_XDECREF(close);
		Py_SETREF(acc, next);
	}
	return acc;
}

/* Raise exc with a printf-style message plus where in the value it
 * happened. Returns -1. */
static int fail_at(struct packer *p, unsigned depth, PyObject *exc, const char *fmt, ...)
{
	va_list ap;
	PyObject *msg, *where, *full = NULL;

	va_start(ap, fmt);
	msg = PyUnicode_FromFormatV(fmt, ap);
	va_end(ap);
	where = msg ? path_text(p, depth) : NULL;
	if (where)
		full = PyUnicode_Concat(msg, where);
	if (full)
		PyErr_SetObject(exc, full);
	Py_XDECREF(full);
	Py_XDECREF(where);
	Py_XDECREF(msg);
	return -1;
}

static int pack_int(struct packer *p, PyObject *obj, unsigned depth)
{
	int overflow = 0;
	long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);

	if (v == -1 && PyErr_Occurred())
		return -1;
	if (!overflow) {
		msgpack_pack_int64(&p->pk, v);
		return sink_status(p);
	}
	size_t bits = _PyLong_NumBits(obj);
	if (bits == (size_t)-1 && PyErr_Occurred())
		return -1;
	if (bits > BIGINT_MAX_BITS)
		return fail_at(p, depth, PyExc_ValueError,
			       "int too large to %s: about %zu decimal digits, the limit is %d",
			       p->role->verb, (size_t)((double)bits * 0.30103),
			       CC_BIGINT_MAX_DIGITS);
	/* int's own decimal form: an int subclass's __repr__/__str__ is guest
	 * code and could return anything */
	PyObject *text = PyLong_Type.tp_repr(obj);
	if (!text) {
		/* 14285 bits also fit 10**4300, one digit too many, which
		 * trips int_max_str_digits here (or the guest lowered it) */
		if (!PyErr_ExceptionMatches(PyExc_ValueError))
			return -1;
		PyErr_Clear();
		return fail_at(p, depth, PyExc_ValueError,
			       "int too large to %s: the limit is %d decimal digits", p->role->verb,
			       CC_BIGINT_MAX_DIGITS);
	}
	Py_ssize_t len = PyUnicode_GET_LENGTH(text);
	const char *digits = (const char *)PyUnicode_DATA(text);
	size_t ndigits = (size_t)len - (digits[0] == '-');
	if (ndigits > CC_BIGINT_MAX_DIGITS || !cc_bigint_text_valid(digits, (size_t)len)) {
		Py_DECREF(text);
		return fail_at(p, depth, PyExc_ValueError,
			       "int too large to %s: %zu decimal digits, the limit is %d",
			       p->role->verb, ndigits, CC_BIGINT_MAX_DIGITS);
	}
	cc_pack_bigint(&p->pk, digits, (size_t)len);
	Py_DECREF(text);
	return sink_status(p);
}

static int pack_str(struct packer *p, PyObject *s)
{
	if (PyUnicode_READY(s) < 0)
		return -1;
	/* Every character is at least one byte: refuse early, before an
	 * encoded copy of a huge string is made. */
	if (p->max && (uint64_t)PyUnicode_GET_LENGTH(s) > p->max) {
		p->too_big = true;
		return CC_PY_TOO_BIG;
	}
	if (PyUnicode_IS_ASCII(s)) {
		size_t n = (size_t)PyUnicode_GET_LENGTH(s);
		msgpack_pack_str(&p->pk, n);
		msgpack_pack_str_body(&p->pk, PyUnicode_DATA(s), n);
		return sink_status(p);
	}
	PyObject *b = PyUnicode_AsEncodedString(s, "utf-8", "surrogatepass");
	if (!b)
		return -1;
	/* Only 2- and 4-byte-kind strings can hold surrogates. b is ours
	 * alone, fresh from the codec, so editing it in place is safe. */
	if (PyUnicode_KIND(s) != PyUnicode_1BYTE_KIND)
		cc_utf8_fix_surrogates(PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b));
	msgpack_pack_str(&p->pk, (size_t)PyBytes_GET_SIZE(b));
	msgpack_pack_str_body(&p->pk, PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b));
	Py_DECREF(b);
	return sink_status(p);
}

/* Map keys must be str and must survive as-is (see the header comment). */
static int pack_key(struct packer *p, PyObject *key, unsigned depth)
{
	if (!PyUnicode_Check(key))
		return fail_at(p, depth, PyExc_TypeError,
			       "cannot %s a dict with a key of type '%s': dict keys must be str",
			       p->role->verb, Py_TYPE(key)->tp_name);
	if (PyUnicode_READY(key) < 0)
		return -1;
	if (PyUnicode_IS_ASCII(key)) {
		size_t n = (size_t)PyUnicode_GET_LENGTH(key);
		msgpack_pack_str(&p->pk, n);
		msgpack_pack_str_body(&p->pk, PyUnicode_DATA(key), n);
		return sink_status(p);
	}
	PyObject *b = PyUnicode_AsUTF8String(key);
	if (!b) {
		if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
			return -1;
		PyErr_Clear();
		return fail_at(p, depth, PyExc_ValueError,
			       "cannot %s a dict key that contains a lone surrogate",
			       p->role->verb);
	}
	msgpack_pack_str(&p->pk, (size_t)PyBytes_GET_SIZE(b));
	msgpack_pack_str_body(&p->pk, PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b));
	Py_DECREF(b);
	return sink_status(p);
}

static int pack_bin(struct packer *p, const void *d, size_t n)
{
	msgpack_pack_bin(&p->pk, n);
	msgpack_pack_bin_body(&p->pk, d, n);
	return sink_status(p);
}

static int container_ok(struct packer *p, unsigned depth, Py_ssize_t n)
{
	if (depth >= CC_VALUE_MAX_DEPTH)
		return fail_at(p, depth, PyExc_TypeError,
			       "cannot %s a value nested deeper than %d levels, or one that "
			       "contains a cycle",
			       p->role->verb, CC_VALUE_MAX_DEPTH);
	if ((size_t)n > cc_value_node_budget(cc_worker_limits.max_result) - p->nodes)
		return CC_PY_TOO_MANY;
	return 0;
}

/* Lists can change under us if guest code runs mid-conversion (a tzinfo,
 * a numpy override): hold each item while converting it and check the
 * length against the array header already written. */
static int pack_seq(struct packer *p, PyObject *obj, unsigned depth)
{
	Py_ssize_t n = Py_SIZE(obj);

	int crc = container_ok(p, depth, n);
	if (crc < 0)
		return crc;
	msgpack_pack_array(&p->pk, (uint32_t)n);
	for (Py_ssize_t i = 0; i < n; i++) {
		if (i >= Py_SIZE(obj))
			break;
		PyObject *item =
			PyList_Check(obj) ? PyList_GET_ITEM(obj, i) : PyTuple_GET_ITEM(obj, i);
		Py_INCREF(item);
		p->path[depth].index = i;
		p->path[depth].key = NULL;
		int rc = pack_value(p, item, depth + 1, false);
		Py_DECREF(item);
		if (rc < 0)
			return rc;
	}
	if (Py_SIZE(obj) != n)
		return fail_at(p, depth, PyExc_RuntimeError,
			       "list changed size while it was being %s", p->role->verbed);
	return 0;
}

static int pack_dict(struct packer *p, PyObject *obj, unsigned depth)
{
	Py_ssize_t n = PyDict_GET_SIZE(obj), pos = 0, done = 0;
	PyObject *k, *v;

	int crc = container_ok(p, depth, n);
	if (crc < 0)
		return crc;
	msgpack_pack_map(&p->pk, (uint32_t)n);
	while (done < n && PyDict_Next(obj, &pos, &k, &v)) {
		int rc;

		Py_INCREF(k);
		Py_INCREF(v);
		p->path[depth].key = k;
		rc = pack_key(p, k, depth);
		if (rc == 0)
			rc = pack_value(p, v, depth + 1, false);
		Py_DECREF(k);
		Py_DECREF(v);
		if (rc < 0)
			return rc;
		done++;
	}
	if (done != n || PyDict_GET_SIZE(obj) != n)
		return fail_at(p, depth, PyExc_RuntimeError,
			       "dict changed size while it was being %s", p->role->verbed);
	return 0;
}

/* A datetime, date, timedelta, timezone or PurePosixPath (kind, from
 * cc_py_object_kind) as its ext type (py_objects.c takes it apart). */
static int pack_object(struct packer *p, PyObject *obj, cc_value_type kind)
{
	struct cc_py_parts x;
	if (cc_py_object_parts(obj, kind, &x) < 0)
		return -1;
	const char *t = x.text ? PyBytes_AS_STRING(x.text) : NULL;
	size_t n = x.text ? (size_t)PyBytes_GET_SIZE(x.text) : 0;
	switch (kind) {
	case CC_VALUE_TIMESTAMP:
		if (x.zoned)
			cc_pack_zoned_timestamp(&p->pk, x.sec, x.nsec, x.offset_us, t, n);
		else
			cc_pack_timestamp(&p->pk, x.sec, x.nsec);
		break;
	case CC_VALUE_DATE:
		cc_pack_date(&p->pk, x.days);
		break;
	case CC_VALUE_DURATION:
		cc_pack_duration(&p->pk, x.sec, x.nsec);
		break;
	case CC_VALUE_TIMEZONE:
		cc_pack_timezone(&p->pk, x.offset_us, t, n);
		break;
	default: /* CC_VALUE_PATH */
		cc_pack_path(&p->pk, t, n);
		break;
	}
	Py_XDECREF(x.text);
	return sink_status(p);
}

/* Does obj's type come from numpy? Reads the type's name or __module__
 * entry directly, so no guest code (a metaclass property) runs. */
static bool is_numpy(PyObject *obj)
{
	PyTypeObject *t = Py_TYPE(obj);
	const char *mod = t->tp_name;
	Py_ssize_t len = -1;

	if (t->tp_flags & Py_TPFLAGS_HEAPTYPE) {
		PyObject *m = t->tp_dict ? PyDict_GetItemString(t->tp_dict, "__module__") : NULL;
		if (!m || !PyUnicode_Check(m))
			return false;
		mod = PyUnicode_AsUTF8AndSize(m, &len);
		if (!mod) {
			PyErr_Clear();
			return false;
		}
		return strncmp(mod, "numpy", 5) == 0 && (mod[5] == 0 || mod[5] == '.');
	}
	return strncmp(mod, "numpy.", 6) == 0;
}

static int refuse(struct packer *p, PyObject *obj, unsigned depth)
{
	const char *hint = "";

	if (PyAnySet_Check(obj))
		hint = " (convert it with list() or sorted())";
	else if (PyCoro_CheckExact(obj))
		hint = " (did you forget to await it?)";
	return fail_at(p, depth, PyExc_TypeError,
		       "cannot %s a value of type '%s'%s: %s can be None, bool, int, "
		       "float, str, bytes, list, tuple, dict with str keys, datetime.datetime, "
		       "datetime.date, datetime.timedelta, datetime.timezone, "
		       "pathlib.PurePosixPath, or a numpy array or scalar",
		       p->role->verb, Py_TYPE(obj)->tp_name, hint, p->role->what);
}

static int pack_value(struct packer *p, PyObject *obj, unsigned depth, bool via_numpy)
{
	if (++p->nodes > cc_value_node_budget(cc_worker_limits.max_result))
		return CC_PY_TOO_MANY;
	if ((p->nodes & STOP_POLL_MASK) == 0 && cc_worker_should_stop()) {
		PyErr_SetNone(PyExc_KeyboardInterrupt);
		return -1;
	}
	if (obj == Py_None) {
		msgpack_pack_nil(&p->pk);
		return sink_status(p);
	}
	if (PyBool_Check(obj)) {
		if (obj == Py_True)
			msgpack_pack_true(&p->pk);
		else
			msgpack_pack_false(&p->pk);
		return sink_status(p);
	}
	if (PyLong_Check(obj))
		return pack_int(p, obj, depth);
	if (PyFloat_Check(obj)) {
		msgpack_pack_double(&p->pk, PyFloat_AS_DOUBLE(obj));
		return sink_status(p);
	}
	if (PyUnicode_Check(obj))
		return pack_str(p, obj);
	if (PyBytes_Check(obj))
		return pack_bin(p, PyBytes_AS_STRING(obj), (size_t)PyBytes_GET_SIZE(obj));
	if (PyByteArray_Check(obj))
		return pack_bin(p, PyByteArray_AS_STRING(obj), (size_t)PyByteArray_GET_SIZE(obj));
	if (PyMemoryView_Check(obj)) {
		/* bytes() copes with every layout (strided, multi-dimensional) */
		PyObject *b = PyBytes_FromObject(obj);
		if (!b)
			return -1;
		int rc = pack_bin(p, PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b));
		Py_DECREF(b);
		return rc;
	}
	if (PyList_Check(obj) || PyTuple_Check(obj))
		return pack_seq(p, obj, depth);
	if (PyDict_Check(obj))
		return pack_dict(p, obj, depth);
	if (PyDateTime_Check(obj))
		return pack_object(p, obj, CC_VALUE_TIMESTAMP);
	if (!via_numpy && is_numpy(obj)) {
		/* ndarray.tolist() and generic.tolist() give plain Python
		 * objects; a second numpy type in the answer is refused, so
		 * this cannot loop. The node is counted once. */
		PyObject *size = PyObject_GetAttrString(obj, "size");
		Py_ssize_t n = size && PyLong_Check(size) ? PyLong_AsSsize_t(size) : 0;
		Py_XDECREF(size);
		PyErr_Clear();
		/* refuse a huge array before tolist() builds it as objects */
		if (n > 0 &&
		    (size_t)n > cc_value_node_budget(cc_worker_limits.max_result) - p->nodes)
			return CC_PY_TOO_MANY;
		PyObject *plain = PyObject_CallMethod(obj, "tolist", NULL);
		if (!plain)
			return -1;
		p->nodes--;
		int rc = pack_value(p, plain, depth, true);
		Py_DECREF(plain);
		return rc;
	}
	cc_value_type kind = cc_py_object_kind(obj);
	if (kind != CC_VALUE_NULL)
		return pack_object(p, obj, kind);
	return refuse(p, obj, depth);
}

/* The C API of _datetime, the C module, not of datetime (PyDateTime_IMPORT
 * would import datetime.py, whose pure-Python classes it then replaces
 * with _datetime's: a few milliseconds of every start). The types are the
 * same objects the guest's `import datetime` gives. */
int cc_py_value_init(void)
{
	PyObject *mod = PyImport_ImportModule("_datetime");
	PyObject *capi = mod ? PyObject_GetAttrString(mod, "datetime_CAPI") : NULL;

	Py_XDECREF(mod);
	/* capi is kept for the worker's life: whatever the guest does to
	 * sys.modules, the API it points to stays */
	PyDateTimeAPI = capi ? PyCapsule_GetPointer(capi, PyDateTime_CAPSULE_NAME) : NULL;
	cc_py_objects_init(PyDateTimeAPI);
	return PyDateTimeAPI ? 0 : -1;
}

static int pack_as(PyObject *obj, msgpack_sbuffer *sb, uint64_t max_bytes, const struct role *role)
{
	/* libc, not the counted Python heap: this is the engine's memory */
	struct packer *p = calloc(1, sizeof(*p));
	size_t entry = sb->size;
	int rc;

	if (!p) {
		PyErr_NoMemory();
		return -1;
	}
	p->role = role;
	p->sb = sb;
	p->max = max_bytes;
	msgpack_packer_init(&p->pk, p, sb_write);
	rc = pack_value(p, obj, 0, false);
	if (rc < 0)
		sb->size = entry;
	free(p);
	return rc;
}

int cc_py_pack(PyObject *obj, msgpack_sbuffer *sb, uint64_t max_bytes)
{
	return pack_as(obj, sb, max_bytes, &ROLE_RESULT);
}

int cc_py_pack_args(PyObject *args, msgpack_sbuffer *sb, uint64_t max_bytes)
{
	if (!PyTuple_Check(args)) {
		PyErr_SetString(PyExc_TypeError, "tool arguments must be a tuple");
		return -1;
	}
	return pack_as(args, sb, max_bytes, &ROLE_ARGS);
}

int cc_py_pack_kwargs(PyObject *kwargs, msgpack_sbuffer *sb, uint64_t max_bytes)
{
	if (!PyDict_Check(kwargs)) {
		PyErr_SetString(PyExc_TypeError, "tool keyword arguments must be a dict");
		return -1;
	}
	return pack_as(kwargs, sb, max_bytes, &ROLE_ARGS);
}

PyObject *cc_py_from_value(const cc_value *v)
{
	return cc_py_object_from_value(v);
}

char *cc_py_utf8(PyObject *s, size_t max)
{
	if (!s || !PyUnicode_Check(s))
		return NULL;
	PyObject *b = PyUnicode_AsEncodedString(s, "utf-8", "surrogatepass");
	if (!b) {
		PyErr_Clear();
		return NULL;
	}
	char *d = PyBytes_AS_STRING(b);
	size_t n = (size_t)PyBytes_GET_SIZE(b);
	bool cut = false;

	cc_utf8_fix_surrogates(d, n);
	if (max && n > max) {
		/* back up to the start of a character */
		n = max;
		while (n > 0 && ((unsigned char)d[n] & 0xc0) == 0x80)
			n--;
		cut = true;
	}
	char *r = malloc(n + (cut ? sizeof(TRUNCATED_NOTE) : 1));
	if (r) {
		memcpy(r, d, n);
		if (cut)
			memcpy(r + n, TRUNCATED_NOTE, sizeof(TRUNCATED_NOTE));
		else
			r[n] = 0;
	}
	Py_DECREF(b);
	return r;
}

/* See py_value.h. The value could not be converted (the TypeError
 * cc_py_pack raised is pending): give its repr() instead, named by its type, when the eval
 * asked for that. A repr that raises gives "<T object>". Returns whether
 * it did; false leaves the TypeError pending. Guest code may run (repr). */
bool cc_py_fallback(PyObject *value, struct cc_outcome *o)
{
	if (!PyErr_ExceptionMatches(PyExc_TypeError))
		return false;
	PyErr_Clear();
	const char *type = Py_TYPE(value)->tp_name;
	PyObject *r = PyObject_Repr(value);
	PyObject *text = r ? PyUnicode_AsEncodedString(r, "utf-8", "surrogatepass") : NULL;
	Py_XDECREF(r);
	if (text) /* fresh from the codec: ours to edit */
		cc_utf8_fix_surrogates(PyBytes_AS_STRING(text), (size_t)PyBytes_GET_SIZE(text));
	if (!text) {
		PyErr_Clear();
		text = PyBytes_FromFormat("<%s object>", type);
	}
	if (!text) {
		PyErr_SetString(PyExc_TypeError, "the value's text form could not be made");
		return false;
	}
	cc_outcome_fallback(o, type, PyBytes_AS_STRING(text), (size_t)PyBytes_GET_SIZE(text));
	Py_DECREF(text);
	return true;
}
