/* Python's date, time and path objects as the value model's parts, and
 * back (py_objects.h). */
#include "py_objects.h"
/* After Python.h (py_objects.h), which it needs. */
#include <datetime.h>
#include <string.h>

#include "civil.h"
#include "utf8.h"

void cc_py_objects_init(void *api)
{
	PyDateTimeAPI = api;
}

/* datetime.timezone, which cannot be subclassed: the type of its UTC. */
static bool is_timezone(PyObject *o)
{
	return Py_IS_TYPE(o, Py_TYPE(PyDateTime_TimeZone_UTC));
}

/* pathlib.PurePosixPath when pathlib is imported (only then can o be
 * one), else NULL; borrowed. No import and no Python code: a lookup in
 * sys.modules and in the module's dict. */
static PyObject *pure_posix_path(void)
{
	static PyObject *name;
	if (!name && !(name = PyUnicode_InternFromString("pathlib"))) {
		PyErr_Clear();
		return NULL;
	}
	PyObject *mod = PyImport_GetModule(name);
	if (!mod) {
		PyErr_Clear();
		return NULL;
	}
	PyObject *cls = PyModule_Check(mod)
				? PyDict_GetItemString(PyModule_GetDict(mod), "PurePosixPath")
				: NULL;
	Py_DECREF(mod); /* the module's dict holds cls, sys.modules the module */
	return cls && PyType_Check(cls) ? cls : NULL;
}

cc_value_type cc_py_object_kind(PyObject *o)
{
	if (PyDateTime_Check(o))
		return CC_VALUE_TIMESTAMP;
	if (PyDate_Check(o))
		return CC_VALUE_DATE;
	if (PyDelta_Check(o))
		return CC_VALUE_DURATION;
	if (is_timezone(o))
		return CC_VALUE_TIMEZONE;
	PyObject *cls = pure_posix_path();
	return cls && PyType_IsSubtype(Py_TYPE(o), (PyTypeObject *)cls) ? CC_VALUE_PATH
									: CC_VALUE_NULL;
}

PyObject *cc_py_utf8_bytes(PyObject *s)
{
	PyObject *b = PyUnicode_AsEncodedString(s, "utf-8", "surrogatepass");
	if (b) /* fresh from the codec: ours to edit */
		cc_utf8_fix_surrogates(PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b));
	return b;
}

/* The name of dt's zone (tz, not None), a new reference or NULL for none:
 * a datetime.timezone's own name when it was given one; tzname() of any
 * other tzinfo, when it gives a str (the base class's NotImplementedError
 * is no name). -1 with an exception. */
static int zone_name(PyObject *dt, PyObject *tz, PyObject **out)
{
	PyObject *n = NULL;
	*out = NULL;
	if (is_timezone(tz)) {
		PyObject *args = PyObject_CallMethod(tz, "__getinitargs__", NULL);
		if (!args)
			return -1;
		if (PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 2)
			n = Py_NewRef(PyTuple_GET_ITEM(args, 1));
		Py_DECREF(args);
	} else if (!(n = PyObject_CallMethod(dt, "tzname", NULL))) {
		if (!PyErr_ExceptionMatches(PyExc_NotImplementedError))
			return -1;
		PyErr_Clear();
	}
	if (n && !PyUnicode_Check(n))
		Py_CLEAR(n);
	*out = n;
	return 0;
}

/* A datetime's instant and, when it has one, its offset and zone name. */
static int datetime_parts(PyObject *o, struct cc_py_parts *p)
{
	struct cc_civil c = {
		.year = PyDateTime_GET_YEAR(o),
		.month = (unsigned)PyDateTime_GET_MONTH(o),
		.day = (unsigned)PyDateTime_GET_DAY(o),
		.hour = (unsigned)PyDateTime_DATE_GET_HOUR(o),
		.minute = (unsigned)PyDateTime_DATE_GET_MINUTE(o),
		.second = (unsigned)PyDateTime_DATE_GET_SECOND(o),
		.usec = (unsigned)PyDateTime_DATE_GET_MICROSECOND(o),
	};
	PyObject *tz = PyDateTime_DATE_GET_TZINFO(o), *off = NULL, *name = NULL;
	int64_t off_us = 0;
	if (tz != Py_None) {
		Py_INCREF(tz); /* utcoffset() may be code that drops o's last other hold */
		/* The tzinfo may be guest code (in the worker); it runs under
		 * the deadline. */
		off = PyObject_CallMethod(o, "utcoffset", NULL);
		if (off && off != Py_None && !PyDelta_Check(off)) {
			PyErr_SetString(PyExc_TypeError,
					"datetime.utcoffset() did not return a timedelta");
			Py_CLEAR(off);
		}
		/* A subclass's utcoffset may return any timedelta: only what
		 * CPython's own allows, so nothing overflows. */
		if (off && off != Py_None &&
		    cc_civil_offset_us(PyDateTime_DELTA_GET_DAYS(off),
				       PyDateTime_DELTA_GET_SECONDS(off),
				       PyDateTime_DELTA_GET_MICROSECONDS(off), &off_us) < 0) {
			PyErr_SetString(PyExc_ValueError, CC_CIVIL_OFFSET_ERROR);
			Py_CLEAR(off);
		}
		int rc = off && off != Py_None ? zone_name(o, tz, &name) : 0;
		Py_DECREF(tz);
		if (!off || rc < 0) {
			Py_XDECREF(off);
			return -1;
		}
	}
	cc_civil_to_timestamp(&c, off_us, &p->sec, &p->nsec);
	bool utc = off_us == 0 && (!name || PyUnicode_CompareWithASCIIString(name, "UTC") == 0);
	p->zoned = off && off != Py_None && !utc;
	p->offset_us = off_us;
	Py_XDECREF(off);
	if (p->zoned && name && !(p->text = cc_py_utf8_bytes(name))) {
		Py_DECREF(name);
		return -1;
	}
	Py_XDECREF(name);
	return 0;
}

int cc_py_object_parts(PyObject *o, cc_value_type kind, struct cc_py_parts *p)
{
	memset(p, 0, sizeof(*p));
	switch (kind) {
	case CC_VALUE_TIMESTAMP:
		return datetime_parts(o, p);
	case CC_VALUE_DATE:
		p->days = (int32_t)cc_days_from_civil(PyDateTime_GET_YEAR(o),
						      (unsigned)PyDateTime_GET_MONTH(o),
						      (unsigned)PyDateTime_GET_DAY(o));
		return 0;
	case CC_VALUE_DURATION:
		/* normalized: seconds 0..86399, microseconds 0..999999 */
		p->sec = (int64_t)PyDateTime_DELTA_GET_DAYS(o) * 86400 +
			 PyDateTime_DELTA_GET_SECONDS(o);
		p->nsec = (uint32_t)PyDateTime_DELTA_GET_MICROSECONDS(o) * 1000u;
		return 0;
	case CC_VALUE_TIMEZONE: {
		/* a timezone is C code: none of this runs Python code */
		PyObject *off = PyObject_CallMethod(o, "utcoffset", "O", Py_None), *name = NULL;
		int rc = off && PyDelta_Check(off) &&
					 cc_civil_offset_us(PyDateTime_DELTA_GET_DAYS(off),
							    PyDateTime_DELTA_GET_SECONDS(off),
							    PyDateTime_DELTA_GET_MICROSECONDS(off),
							    &p->offset_us) == 0
				 ? zone_name(NULL, o, &name)
				 : -1;
		if (rc == 0 && name)
			p->text = cc_py_utf8_bytes(name);
		if (rc < 0 && off && !PyErr_Occurred())
			PyErr_SetString(PyExc_ValueError, CC_CIVIL_OFFSET_ERROR);
		Py_XDECREF(off);
		Py_XDECREF(name);
		return rc < 0 || (name && !p->text) ? -1 : 0;
	}
	case CC_VALUE_PATH: {
		/* str() of a PurePath is its path; a subclass's is its own */
		PyObject *s = PyObject_Str(o);
		p->text = s ? cc_py_utf8_bytes(s) : NULL;
		Py_XDECREF(s);
		return p->text ? 0 : -1;
	}
	default:
		PyErr_SetString(PyExc_SystemError, "cc_py_object_parts: not one of its kinds");
		return -1;
	}
}

/* ---- values -> objects ---- */

static PyObject *overflow(const char *what)
{
	PyErr_Format(PyExc_OverflowError, "%s outside the range Python holds (%s)", what,
		     !strcmp(what, "timedelta") ? "+-999999999 days" : "years 1 to 9999");
	return NULL;
}

/* A datetime.timezone of offset_us and name (NULL: none). */
static PyObject *new_timezone(int64_t offset_us, const char *name, size_t len)
{
	/* normalized by Python: seconds and microseconds may be negative */
	PyObject *d = PyDelta_FromDSU(0, (int)(offset_us / 1000000), (int)(offset_us % 1000000));
	PyObject *n = d && name ? PyUnicode_DecodeUTF8(name, (Py_ssize_t)len, "replace") : NULL;
	PyObject *tz = d && (n || !name) ? PyDateTimeAPI->TimeZone_FromTimeZone(d, n) : NULL;
	Py_XDECREF(d);
	Py_XDECREF(n);
	return tz;
}

static PyObject *from_timestamp(const cc_value *v)
{
	const cc_value_zone *z = &v->u.ts.zone;
	int64_t off = z->set ? z->offset_us : 0, sec;
	/* the local time at its offset: whole seconds, then the microseconds
	 * (|off % 1e6| < 1e6, so at most one second carries either way) */
	int64_t us = (int64_t)(v->u.ts.nsec / 1000) + off % 1000000;
	int64_t carry = us < 0 ? -1 : us >= 1000000 ? 1 : 0;
	us -= carry * 1000000;
	struct cc_civil c;
	if (__builtin_add_overflow(v->u.ts.sec, off / 1000000 + carry, &sec) ||
	    cc_civil_from_timestamp(sec, (uint32_t)us * 1000u, &c) < 0)
		return overflow("timestamp");
	PyObject *tz = z->set ? new_timezone(z->offset_us, z->name, z->name_len)
			      : Py_NewRef(PyDateTime_TimeZone_UTC);
	PyObject *dt =
		tz ? PyDateTimeAPI->DateTime_FromDateAndTime(
			     (int)c.year, (int)c.month, (int)c.day, (int)c.hour, (int)c.minute,
			     (int)c.second, (int)c.usec, tz, PyDateTimeAPI->DateTimeType)
		   : NULL;
	Py_XDECREF(tz);
	return dt;
}

PyObject *cc_py_object_from_ext(const cc_value *v)
{
	int64_t y;
	unsigned m, d;
	switch (v->type) {
	case CC_VALUE_TIMESTAMP:
		return from_timestamp(v);
	case CC_VALUE_DATE:
		cc_civil_from_days(v->u.days, &y, &m, &d);
		if (y < 1 || y > 9999)
			return overflow("date");
		return PyDate_FromDate((int)y, (int)m, (int)d);
	case CC_VALUE_DURATION: {
		/* floor division: -1.5 s is sec -2 + 0.5 */
		int64_t days = v->u.dur.sec / 86400, s = v->u.dur.sec % 86400;
		if (s < 0) {
			s += 86400;
			days--;
		}
		if (days < -999999999 || days > 999999999)
			return overflow("timedelta");
		return PyDelta_FromDSU((int)days, (int)s, (int)(v->u.dur.nsec / 1000));
	}
	case CC_VALUE_TIMEZONE:
		return new_timezone(v->u.tz.offset_us, v->u.tz.name, v->u.tz.name_len);
	case CC_VALUE_PATH: {
		PyObject *mod = PyImport_ImportModule("pathlib");
		PyObject *cls = mod ? PyObject_GetAttrString(mod, "PurePosixPath") : NULL;
		PyObject *s = cls ? PyUnicode_DecodeUTF8(v->u.str.ptr, (Py_ssize_t)v->u.str.len,
							 "replace")
				  : NULL;
		PyObject *p = s ? PyObject_CallOneArg(cls, s) : NULL;
		Py_XDECREF(s);
		Py_XDECREF(cls);
		Py_XDECREF(mod);
		return p;
	}
	default:
		PyErr_Format(PyExc_ValueError, "unknown value type %d", (int)v->type);
		return NULL;
	}
}
