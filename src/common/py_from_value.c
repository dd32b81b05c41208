/* cc_value -> Python object (py_from_value.h). */
#include "py_from_value.h"

#include "py_objects.h"

static PyObject *convert(const cc_value *v, unsigned depth)
{
	if (!v)
		Py_RETURN_NONE;
	if (depth > CC_VALUE_MAX_DEPTH) {
		PyErr_SetString(PyExc_ValueError, "value nested too deeply");
		return NULL;
	}
	switch (v->type) {
	case CC_VALUE_BOOL:
		return PyBool_FromLong(v->u.b);
	case CC_VALUE_INT:
		return PyLong_FromLongLong(v->u.i);
	case CC_VALUE_FLOAT:
		return PyFloat_FromDouble(v->u.f);
	case CC_VALUE_BIGINT: {
		/* via str: the digits need not be NUL-terminated. At most 4300
		 * digits, within int_max_str_digits unless a guest lowered it */
		PyObject *s = PyUnicode_FromStringAndSize(v->u.str.ptr, (Py_ssize_t)v->u.str.len);
		PyObject *i = s ? PyLong_FromUnicodeObject(s, 10) : NULL;
		Py_XDECREF(s);
		return i;
	}
	case CC_VALUE_STRING:
		return PyUnicode_DecodeUTF8(v->u.str.ptr, (Py_ssize_t)v->u.str.len, "replace");
	case CC_VALUE_BYTES:
		return PyBytes_FromStringAndSize(v->u.str.ptr, (Py_ssize_t)v->u.str.len);
	case CC_VALUE_ARRAY: {
		PyObject *list = PyList_New((Py_ssize_t)v->u.array.len);
		for (size_t i = 0; list && i < v->u.array.len; i++) {
			PyObject *item = convert(v->u.array.items[i], depth + 1);
			if (!item) {
				Py_CLEAR(list);
				break;
			}
			PyList_SET_ITEM(list, (Py_ssize_t)i, item);
		}
		return list;
	}
	case CC_VALUE_MAP: {
		PyObject *dict = PyDict_New();
		for (size_t i = 0; dict && i < v->u.map.len; i++) {
			PyObject *key = PyUnicode_DecodeUTF8(
				v->u.map.keys[i], (Py_ssize_t)v->u.map.key_lens[i], "replace");
			PyObject *val = key ? convert(v->u.map.vals[i], depth + 1) : NULL;
			if (!val || PyDict_SetItem(dict, key, val) < 0)
				Py_CLEAR(dict);
			Py_XDECREF(key);
			Py_XDECREF(val);
		}
		return dict;
	}
	default: /* datetime, date, timedelta, timezone, PurePosixPath */
		return cc_py_object_from_ext(v);
	}
}

PyObject *cc_py_object_from_value(const cc_value *v)
{
	return convert(v, 0);
}
