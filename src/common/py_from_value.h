/* A cc_value as a new Python object, shared by the worker's CPython glue
 * (src/engine/cpython/py_value.c) and the package's extension (src/python/values.c).
 * Not part of libcc_common: each of those targets compiles
 * src/common/py_from_value.c against its own libpython's headers. */
#ifndef CC_COMMON_PY_FROM_VALUE_H
#define CC_COMMON_PY_FROM_VALUE_H

#include <Python.h>

#include "codecage.h"

/* v (borrowed; NULL = None) as a new reference: bool, int (bigints from
 * their decimal digits), float, str (UTF-8; invalid bytes, which validated
 * values never hold, become U+FFFD), bytes, list, dict with str keys, and
 * the date, time and path types through cc_py_object_from_ext
 * (py_objects.h, whose cc_py_objects_init the caller has run). Nesting
 * deeper than CC_VALUE_MAX_DEPTH raises ValueError. Returns NULL with a
 * Python exception set on failure. */
PyObject *cc_py_object_from_value(const cc_value *v);

#endif
