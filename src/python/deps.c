/* Dependencies in the extension (RuntimeConfig(dependencies=...,
 * deps=DependencyOptions(...)), python/codecage/_deps.py): the limits
 * dict's "dependencies" (a tuple of str) and "deps" (a dict of the
 * policy) as cc_options.dependencies and cc_options.deps; and
 * script_dependencies(code), the library's PEP 723 reading. */
#include <string.h>

#include "ext.h"

/* What o->dependencies and o->deps point at: one heap block, the strings
 * borrowed from the limits dict (immutable tuples and str, alive while
 * the call that takes the options runs). */
struct py_deps {
	cc_deps_options d;
	const char *specs[CC_MAX_DEPENDENCIES];
	const char **allow, **deny;
};

/* A tuple of str into a heap array (NULL with an exception set). */
static const char **strs(PyObject *t, const char *what, size_t *n, size_t cap)
{
	*n = 0;
	if (!t || t == Py_None)
		return NULL;
	if (!PyTuple_Check(t) || (size_t)PyTuple_GET_SIZE(t) > cap) {
		cc_py_raise(CC_ERR_INVALID_INPUT, what);
		return NULL;
	}
	size_t len = (size_t)PyTuple_GET_SIZE(t);
	const char **v = PyMem_Calloc(len + 1, sizeof(*v));
	for (size_t i = 0; v && i < len; i++) {
		PyObject *e = PyTuple_GET_ITEM(t, (Py_ssize_t)i);
		if (!PyUnicode_Check(e) || !(v[i] = PyUnicode_AsUTF8(e))) {
			PyMem_Free(v);
			PyErr_Clear();
			cc_py_raise(CC_ERR_INVALID_INPUT, what);
			return NULL;
		}
	}
	if (!v)
		PyErr_NoMemory();
	*n = len;
	return v;
}

static int opt_str(PyObject *d, const char *key, const char **out)
{
	PyObject *v = PyDict_GetItemString(d, key);
	if (!v || v == Py_None)
		return 0;
	if (!PyUnicode_Check(v) || !(*out = PyUnicode_AsUTF8(v))) {
		PyErr_Clear();
		cc_py_raise(CC_ERR_INVALID_INPUT, "DependencyOptions: a path or URL is not a str");
		return -1;
	}
	return 0;
}

static int opt_num(PyObject *d, const char *key, double *f, uint64_t *u)
{
	PyObject *v = PyDict_GetItemString(d, key);
	if (!v || v == Py_None)
		return 0;
	if (f)
		*f = PyFloat_AsDouble(v);
	else
		*u = PyLong_AsUnsignedLongLong(v);
	if (PyErr_Occurred()) {
		PyErr_Clear();
		cc_py_raise(CC_ERR_INVALID_INPUT, "DependencyOptions: a size or time is not a "
						  "non-negative number");
		return -1;
	}
	return 0;
}

int cc_py_deps(PyObject *limits, cc_options *o)
{
	PyObject *specs = PyDict_GetItemString(limits, "dependencies");
	PyObject *pol = PyDict_GetItemString(limits, "deps");
	if ((!specs || specs == Py_None) && (!pol || pol == Py_None))
		return 0;
	struct py_deps *p = PyMem_Calloc(1, sizeof(*p));
	if (!p)
		return PyErr_NoMemory(), -1;
	cc_deps_options_init(&p->d);
	o->deps = &p->d;
	size_t n = 0;
	const char **v = strs(specs, "dependencies must be a tuple of at most 64 package specs", &n,
			      CC_MAX_DEPENDENCIES);
	if (PyErr_Occurred())
		return -1;
	for (size_t i = 0; i < n; i++)
		p->specs[i] = v[i];
	PyMem_Free(v);
	o->dependencies = n ? p->specs : NULL;
	o->n_dependencies = n;
	if (!pol || pol == Py_None)
		return 0;
	if (!PyDict_Check(pol))
		return cc_py_raise(CC_ERR_INVALID_INPUT, "deps must be a dict"), -1;
	p->allow = strs(PyDict_GetItemString(pol, "allow"), "allow must be a tuple of names",
			&p->d.n_allow, 1u << 16);
	if (PyErr_Occurred())
		return -1;
	p->deny = strs(PyDict_GetItemString(pol, "deny"), "deny must be a tuple of names",
		       &p->d.n_deny, 1u << 16);
	if (PyErr_Occurred())
		return -1;
	p->d.allow = p->allow;
	p->d.deny = p->deny;
	if (opt_str(pol, "cache_dir", &p->d.cache_dir) < 0 ||
	    opt_str(pol, "index_url", &p->d.index_url) < 0 ||
	    opt_str(pol, "registry", &p->d.registry) < 0 ||
	    opt_str(pol, "lock_file", &p->d.lock_file) < 0 ||
	    opt_num(pol, "timeout", &p->d.timeout_s, NULL) < 0 ||
	    opt_num(pol, "refresh", &p->d.refresh_s, NULL) < 0 ||
	    opt_num(pol, "max_cache_bytes", NULL, &p->d.max_cache_bytes) < 0 ||
	    opt_num(pol, "max_install_bytes", NULL, &p->d.max_install_bytes) < 0)
		return -1;
	return 0;
}

void cc_py_deps_free(cc_options *o)
{
	struct py_deps *p = (struct py_deps *)o->deps; /* d is its first member */
	if (p) {
		PyMem_Free(p->allow);
		PyMem_Free(p->deny);
		PyMem_Free(p);
	}
	o->deps = NULL;
	o->dependencies = NULL;
	o->n_dependencies = 0;
}

PyObject *cc_py_script_dependencies(PyObject *mod, PyObject *code)
{
	(void)mod;
	Py_ssize_t len = 0;
	const char *s = PyUnicode_Check(code) ? PyUnicode_AsUTF8AndSize(code, &len) : NULL;
	if (!s)
		return PyErr_Occurred() ? NULL
					: cc_py_raise(CC_ERR_INVALID_INPUT, "code must be str");
	char **specs = NULL;
	size_t n = 0;
	cc_error err = { 0 };
	int rc;
	Py_BEGIN_ALLOW_THREADS
		rc = cc_script_dependencies(s, (size_t)len, &specs, &n, &err);
	Py_END_ALLOW_THREADS
	if (rc < 0)
		return cc_py_raise_error(&err);
	PyObject *list = PyList_New((Py_ssize_t)n);
	for (size_t i = 0; list && i < n; i++) {
		PyObject *e = PyUnicode_FromString(specs[i]);
		if (!e) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, e);
	}
	cc_script_dependencies_free(specs);
	return list;
}

PyObject *cc_py_deps_dict(const cc_deps *d)
{
	if (!d)
		Py_RETURN_NONE;
	return Py_BuildValue("{s:s, s:s, s:O, s:s}", "key", cc_deps_key(d), "packages",
			     cc_deps_packages(d), "cached", cc_deps_cached(d) ? Py_True : Py_False,
			     "log", cc_deps_log(d));
}
