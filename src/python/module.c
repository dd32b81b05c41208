/* codecage._codecage: the module, Budget, and the bridge from cc_error
 * kinds to the package's exception classes (defined in Python,
 * python/codecage/errors.py, and registered here at import). */
#include <stdint.h>

#include "ext.h"

/* errors.make(kind_name, message, detail) -> exception instance. */
static PyObject *error_factory;

PyObject *cc_py_raise(cc_error_kind kind, const char *message)
{
	return cc_py_raise_detail(kind, message, NULL);
}

PyObject *cc_py_raise_detail(cc_error_kind kind, const char *message, const char *detail)
{
	if (!error_factory) {
		PyErr_Format(PyExc_RuntimeError, "codecage %s: %s", cc_error_kind_name(kind),
			     message ? message : "");
		return NULL;
	}
	PyObject *e = PyObject_CallFunction(error_factory, "ssz", cc_error_kind_name(kind),
					    message ? message : "", detail);
	if (e) {
		PyErr_SetObject((PyObject *)Py_TYPE(e), e);
		Py_DECREF(e);
	}
	return NULL;
}

static PyObject *set_error_factory(PyObject *self, PyObject *f)
{
	(void)self;
	if (!PyCallable_Check(f))
		return PyErr_Format(PyExc_TypeError, "the error factory must be callable");
	Py_INCREF(f);
	Py_XSETREF(error_factory, f);
	Py_RETURN_NONE;
}

/* ---- Budget ---- */

static int budget_init(cc_py_budget *self, PyObject *args, PyObject *kw)
{
	static char *names[] = { "max_calls", NULL };
	PyObject *max = Py_None;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:Budget", names, &max))
		return -1;
	uint64_t n = UINT64_MAX;
	if (max != Py_None) {
		unsigned long long v = PyLong_AsUnsignedLongLong(max);
		if (v == (unsigned long long)-1 && PyErr_Occurred()) {
			PyErr_Clear();
			PyErr_SetString(PyExc_ValueError,
					"max_calls must be None or an int in [0, 2**64 - 2]");
			return -1;
		}
		n = v;
	}
	cc_budget_unref(self->budget);
	self->budget = cc_budget_new(n);
	if (!self->budget) {
		PyErr_NoMemory();
		return -1;
	}
	return 0;
}

static void budget_dealloc(cc_py_budget *self)
{
	cc_budget_unref(self->budget);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *budget_limit_tool(cc_py_budget *self, PyObject *args)
{
	const char *name;
	unsigned long long n;
	if (!PyArg_ParseTuple(args, "sK:limit_tool", &name, &n))
		return NULL;
	if (cc_budget_limit_tool(self->budget, name, n) < 0)
		return PyErr_NoMemory();
	Py_RETURN_NONE;
}

static PyObject *budget_made(cc_py_budget *self, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLongLong(cc_budget_calls_made(self->budget));
}

static PyObject *budget_remaining(cc_py_budget *self, void *c)
{
	(void)c;
	uint64_t n = cc_budget_calls_remaining(self->budget);
	if (n == UINT64_MAX)
		Py_RETURN_NONE;
	return PyLong_FromUnsignedLongLong(n);
}

static PyMethodDef budget_methods[] = {
	{ "limit_tool", (PyCFunction)budget_limit_tool, METH_VARARGS,
	  "limit_tool(name, max_calls): also cap the calls of one tool." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef budget_getset[] = {
	{ "calls_made", (getter)budget_made, NULL, "calls that reached the host (int)", NULL },
	{ "calls_remaining", (getter)budget_remaining, NULL,
	  "calls left in the total (int), None when unlimited", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject cc_py_budget_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "codecage._codecage.Budget",
	.tp_basicsize = sizeof(cc_py_budget),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Budget(max_calls=None): a thread-safe tool call budget (cc_budget) that "
		  "several runtimes can share.",
	.tp_new = PyType_GenericNew,
	.tp_init = (initproc)budget_init,
	.tp_dealloc = (destructor)budget_dealloc,
	.tp_methods = budget_methods,
	.tp_getset = budget_getset,
};

/* ---- module ---- */

static PyObject *kind_names(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	PyObject *l = PyList_New(0);
	for (int k = 0; l && k < CC_ERR_KIND_COUNT; k++) {
		PyObject *s = PyUnicode_FromString(cc_error_kind_name((cc_error_kind)k));
		if (!s || PyList_Append(l, s) < 0)
			Py_CLEAR(l);
		Py_XDECREF(s);
	}
	return l;
}

static PyMethodDef module_methods[] = {
	{ "_set_error_factory", set_error_factory, METH_O,
	  "Register make(kind_name, message) -> exception (codecage.errors)." },
	{ "kind_names", kind_names, METH_NOARGS,
	  "The closed set of error kind names, in cc_error_kind order." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "codecage._codecage",
	.m_doc = "The native half of codecage: runtimes over libcodecage. Use the codecage "
		 "package, not this module.",
	.m_size = -1,
	.m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__codecage(void)
{
	if (cc_py_values_init() < 0 || PyType_Ready(&cc_py_budget_type) < 0 ||
	    PyType_Ready(&cc_py_runtime_type) < 0 || PyType_Ready(&cc_py_pending_type) < 0)
		return NULL;
	PyObject *m = PyModule_Create(&module_def);
	if (!m)
		return NULL;
	if (PyModule_AddObjectRef(m, "Budget", (PyObject *)&cc_py_budget_type) < 0 ||
	    PyModule_AddObjectRef(m, "Runtime", (PyObject *)&cc_py_runtime_type) < 0 ||
	    PyModule_AddObjectRef(m, "PendingCall", (PyObject *)&cc_py_pending_type) < 0 ||
	    PyModule_AddIntConstant(m, "MAX_DEPTH", CC_VALUE_MAX_DEPTH) < 0 ||
	    PyModule_AddIntConstant(m, "BIGINT_MAX_DIGITS", CC_BIGINT_MAX_DIGITS) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
