/* The Python objects beyond JSON's that cross the boundary as themselves
 * (DESIGN.md section 5): datetime.datetime (an aware one with its offset),
 * datetime.date, datetime.timedelta, datetime.timezone and
 * pathlib.PurePosixPath, as the value model's parts and back. One copy for
 * both Python sides, the worker's CPython glue (src/engine/cpython/py_value.c,
 * which packs the parts itself) and the package's extension
 * (src/python/values.c, which builds cc_value nodes), so each type
 * crosses alike in both directions. Compiled with py_from_value.c (not
 * part of libcc_common: it needs the Python headers). */
#ifndef CC_COMMON_PY_OBJECTS_H
#define CC_COMMON_PY_OBJECTS_H

#include <Python.h>
#include <stdbool.h>

#include "codecage.h"

/* This file's datetime C API (a PyDateTime_CAPI *): each file that
 * includes datetime.h has a PyDateTimeAPI of its own, so the caller hands
 * over the one it set up. Call once before anything below. */
void cc_py_objects_init(void *api);

/* The value type o (borrowed) crosses as: CC_VALUE_TIMESTAMP (a
 * datetime, subclasses too), _DATE (a date that is not a datetime),
 * _DURATION (a timedelta), _TIMEZONE (a datetime.timezone; other tzinfo
 * objects are not values), _PATH (a PurePosixPath, so a PosixPath too,
 * once pathlib is imported), else CC_VALUE_NULL. Runs no Python code. */
cc_value_type cc_py_object_kind(PyObject *o);

/* The parts of an object of one of those kinds. */
struct cc_py_parts {
	int64_t sec;	   /* TIMESTAMP: the instant, UTC; DURATION: seconds */
	uint32_t nsec;	   /* after sec: 0..999999999 (microseconds x 1000) */
	int32_t days;	   /* DATE: days since 1970-01-01 */
	bool zoned;	   /* TIMESTAMP: the offset (and name) are kept */
	int64_t offset_us; /* zoned TIMESTAMP, TIMEZONE: microseconds east of UTC */
	PyObject *text;	   /* the zone's name (NULL: none) or PATH's text: UTF-8
			      bytes, lone surrogates each one U+FFFD (new
			      reference, the caller's to release) */
};

/* o's parts for kind (from cc_py_object_kind). An aware datetime keeps
 * its utcoffset() and its zone's name (a datetime.timezone's own, or
 * tzname() of another tzinfo), unless the offset is 0 with no name or
 * "UTC": that one, and a naive datetime (taken as UTC, DESIGN.md), is a
 * plain timestamp. May run Python code (a tzinfo's utcoffset and tzname,
 * a path subclass's __str__). Returns 0, or -1 with a Python exception
 * set (ValueError for an offset Python itself would refuse). */
int cc_py_object_parts(PyObject *o, cc_value_type kind, struct cc_py_parts *p);

/* A TIMESTAMP, DATE, DURATION, TIMEZONE or PATH value (borrowed) as a new
 * reference: an aware datetime (in UTC, or at the offset it keeps, with a
 * datetime.timezone of that offset and name), date, timedelta (the
 * nanoseconds below a microsecond dropped), timezone, PurePosixPath
 * (importing pathlib). NULL with OverflowError when Python cannot hold it
 * (years 1 to 9999, +-999999999 days), another exception on failure. */
PyObject *cc_py_object_from_ext(const cc_value *v);

/* s (a str) as UTF-8 bytes, each lone surrogate one U+FFFD, as strings
 * cross (cc_utf8_fix_surrogates). New reference, or NULL with an
 * exception. */
PyObject *cc_py_utf8_bytes(PyObject *s);

#endif
