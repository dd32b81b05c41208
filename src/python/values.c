/* Python objects <-> cc_value trees for codecage._codecage (DESIGN.md
 * section 5, "host Python" column). Host side: the caps that matter are
 * applied again by libcodecage's encoder; the depth cap here keeps the C
 * stack safe from deep or cyclic containers. */
#include <string.h>

#include "ext.h"
#include "py_from_value.h"
#include "py_objects.h"
#include "utf8.h"
/* After Python.h (ext.h), which it needs. */
#include <datetime.h>

int cc_py_values_init(void)
{
	PyDateTime_IMPORT;
	cc_py_objects_init(PyDateTimeAPI);
	return PyDateTimeAPI ? 0 : -1;
}

/* A datetime, date, timedelta, timezone or PurePosixPath (kind, from
 * cc_py_object_kind) as its node: py_objects.c takes it apart, as the
 * Python worker does. */
static cc_value *from_object(PyObject *o, cc_value_type kind)
{
	struct cc_py_parts x;
	if (cc_py_object_parts(o, kind, &x) < 0)
		return NULL;
	const char *t = x.text ? PyBytes_AS_STRING(x.text) : NULL;
	size_t n = x.text ? (size_t)PyBytes_GET_SIZE(x.text) : 0;
	cc_value *v = NULL;
	switch (kind) {
	case CC_VALUE_TIMESTAMP:
		v = x.zoned ? cc_value_new_zoned_timestamp(x.sec, x.nsec, x.offset_us, t, n)
			    : cc_value_new_timestamp(x.sec, x.nsec);
		break;
	case CC_VALUE_DATE:
		v = cc_value_new_date(x.days);
		break;
	case CC_VALUE_DURATION:
		v = cc_value_new_duration(x.sec, x.nsec);
		break;
	case CC_VALUE_TIMEZONE:
		v = cc_value_new_timezone(x.offset_us, t, n);
		break;
	default: /* CC_VALUE_PATH */
		v = cc_value_new_path(t, n);
		break;
	}
	Py_XDECREF(x.text);
	return v ? v : (cc_value *)PyErr_NoMemory();
}

/* str as UTF-8; lone surrogates become U+FFFD, as they do in the guests. */
static cc_value *from_str(PyObject *o)
{
	Py_ssize_t n;
	const char *s = PyUnicode_AsUTF8AndSize(o, &n);
	if (s) {
		cc_value *v = cc_value_new_string(s, (size_t)n);
		return v ? v : (cc_value *)PyErr_NoMemory();
	}
	if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
		return NULL;
	PyErr_Clear();
	/* Each surrogate code point on its own, a high one before a low one
	 * too: two U+FFFD, as the guest's cc_py_pack makes them. b is fresh
	 * from the codec, ours to edit. */
	PyObject *b = PyUnicode_AsEncodedString(o, "utf-8", "surrogatepass");
	if (!b)
		return NULL;
	cc_utf8_fix_surrogates(PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b));
	cc_value *v = cc_value_new_string(PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b));
	Py_DECREF(b);
	return v ? v : (cc_value *)PyErr_NoMemory();
}

static cc_value *from_int(PyObject *o)
{
	int overflow = 0;
	long long i = PyLong_AsLongLongAndOverflow(o, &overflow);
	if (!overflow) {
		if (i == -1 && PyErr_Occurred())
			return NULL;
		cc_value *v = cc_value_new_int(i);
		return v ? v : (cc_value *)PyErr_NoMemory();
	}
	/* Beyond int64: a bigint in decimal, at most 4300 digits (str() of
	 * a longer int raises ValueError itself). */
	PyObject *s = PyObject_Str(o);
	if (!s)
		return NULL;
	Py_ssize_t n;
	const char *d = PyUnicode_AsUTF8AndSize(s, &n);
	cc_value *v = NULL;
	if (d && (size_t)n - (d[0] == '-') > CC_BIGINT_MAX_DIGITS)
		PyErr_Format(PyExc_ValueError, "an int of more than %d digits cannot cross",
			     CC_BIGINT_MAX_DIGITS);
	else if (d && !(v = cc_value_new_bigint(d, (size_t)n)))
		PyErr_NoMemory();
	Py_DECREF(s);
	return v;
}

static int convert(PyObject *o, int depth, cc_value **out);

static cc_value *from_sequence(PyObject *o, int depth)
{
	/* A copy: a tzinfo's utcoffset() or a numpy tolist() met on the way
	 * runs Python code that could change the list under us. */
	PyObject *seq = PySequence_Tuple(o);
	if (!seq)
		return NULL;
	cc_value *arr = cc_value_new_array();
	if (!arr) {
		Py_DECREF(seq);
		return (cc_value *)PyErr_NoMemory();
	}
	Py_ssize_t n = PyTuple_GET_SIZE(seq);
	for (Py_ssize_t i = 0; i < n; i++) {
		cc_value *item = NULL;
		if (convert(PyTuple_GET_ITEM(seq, i), depth + 1, &item) < 0 ||
		    (cc_value_array_push(arr, item) < 0 && !PyErr_NoMemory())) {
			cc_value_free(arr);
			Py_DECREF(seq);
			return NULL;
		}
	}
	Py_DECREF(seq);
	return arr;
}

static cc_value *from_dict(PyObject *orig, int depth)
{
	/* A copy holds the keys and values for the walk (see from_sequence). */
	PyObject *o = PyDict_Copy(orig);
	if (!o)
		return NULL;
	cc_value *map = cc_value_new_map();
	if (!map) {
		Py_DECREF(o);
		return (cc_value *)PyErr_NoMemory();
	}
	PyObject *k, *val;
	Py_ssize_t pos = 0;
	while (PyDict_Next(o, &pos, &k, &val)) {
		if (!PyUnicode_Check(k)) {
			PyErr_Format(
				PyExc_TypeError,
				"dict keys must be str to cross the sandbox boundary, not %.100s",
				Py_TYPE(k)->tp_name);
			goto fail;
		}
		cc_value *key = from_str(k), *item = NULL;
		if (!key)
			goto fail;
		if (convert(val, depth + 1, &item) < 0) {
			cc_value_free(key);
			goto fail;
		}
		int rc = cc_value_map_set(map, key->u.str.ptr, key->u.str.len, item);
		cc_value_free(key);
		if (rc < 0) {
			PyErr_SetString(PyExc_ValueError,
					"duplicate dict key after lone surrogates became U+FFFD");
			goto fail;
		}
	}
	Py_DECREF(o);
	return map;
fail:
	Py_DECREF(o);
	cc_value_free(map);
	return NULL;
}

static cc_value *from_buffer(PyObject *o)
{
	Py_buffer b;
	if (PyObject_GetBuffer(o, &b, PyBUF_C_CONTIGUOUS) < 0)
		return NULL;
	cc_value *v = cc_value_new_bytes(b.buf, (size_t)b.len);
	PyBuffer_Release(&b);
	return v ? v : (cc_value *)PyErr_NoMemory();
}

/* numpy arrays and scalars cross as what tolist() gives. */
static int from_numpy(PyObject *o, int depth, cc_value **out)
{
	PyObject *l = PyObject_CallMethod(o, "tolist", NULL);
	if (!l)
		return -1;
	int rc = -1;
	if (Py_TYPE(l)->tp_name && !strncmp(Py_TYPE(l)->tp_name, "numpy.", 6))
		PyErr_SetString(PyExc_TypeError, "numpy value whose tolist() is not plain");
	else
		rc = convert(l, depth, out);
	Py_DECREF(l);
	return rc;
}

static int convert(PyObject *o, int depth, cc_value **out)
{
	cc_value *v = NULL;
	cc_value_type kind;
	*out = NULL;
	if (depth > CC_VALUE_MAX_DEPTH) {
		PyErr_Format(PyExc_ValueError,
			     "the value is nested deeper than %d levels (or contains itself)",
			     CC_VALUE_MAX_DEPTH);
		return -1;
	}
	if (o == Py_None)
		return 0;
	if (PyBool_Check(o))
		v = cc_value_new_bool(o == Py_True);
	else if (PyLong_Check(o))
		return (*out = from_int(o)) ? 0 : -1;
	else if (PyFloat_Check(o))
		v = cc_value_new_float(PyFloat_AS_DOUBLE(o));
	else if (PyUnicode_Check(o))
		return (*out = from_str(o)) ? 0 : -1;
	else if (PyBytes_Check(o) || PyByteArray_Check(o) || PyMemoryView_Check(o))
		return (*out = from_buffer(o)) ? 0 : -1;
	else if (PyList_Check(o) || PyTuple_Check(o))
		return (*out = from_sequence(o, depth)) ? 0 : -1;
	else if (PyDict_Check(o))
		return (*out = from_dict(o, depth)) ? 0 : -1;
	else if ((kind = cc_py_object_kind(o)) != CC_VALUE_NULL)
		return (*out = from_object(o, kind)) ? 0 : -1;
	else if (!strncmp(Py_TYPE(o)->tp_name, "numpy.", 6) && PyObject_HasAttrString(o, "tolist"))
		return from_numpy(o, depth, out);
	else {
		PyErr_Format(PyExc_TypeError,
			     "a %.100s cannot cross the sandbox boundary: use None, bool, int, "
			     "float, str, bytes, list, tuple, dict with str keys, datetime, date, "
			     "timedelta, timezone or PurePosixPath",
			     Py_TYPE(o)->tp_name);
		return -1;
	}
	if (!v) {
		PyErr_NoMemory();
		return -1;
	}
	*out = v;
	return 0;
}

int cc_py_to_value(PyObject *o, cc_value **out)
{
	return convert(o, 0, out);
}

PyObject *cc_py_from_value(const cc_value *v)
{
	return cc_py_object_from_value(v);
}
