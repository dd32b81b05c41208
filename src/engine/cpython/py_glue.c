/* Running the Python engine's frozen glue (py_glue.h). */
#include "py_glue.h"

#include <marshal.h>

int cc_py_glue_exec(const struct cc_py_glue *g, PyObject *ns)
{
	PyObject *code, *r;

	if (cc_py_glue_magic != PyImport_GetMagicNumber()) {
		PyErr_Format(
			PyExc_RuntimeError,
			"the %s glue was frozen by a CPython with bytecode magic %ld, this one "
			"has %ld: rebuild codecage-worker-py",
			g->name, cc_py_glue_magic, PyImport_GetMagicNumber());
		return -1;
	}
	code = PyMarshal_ReadObjectFromString((const char *)g->code, (Py_ssize_t)g->size);
	if (code && !PyCode_Check(code)) {
		Py_DECREF(code);
		PyErr_Format(PyExc_RuntimeError, "the %s glue is not a code object", g->name);
		return -1;
	}
	r = code ? PyEval_EvalCode(code, ns, ns) : NULL;
	Py_XDECREF(code);
	Py_XDECREF(r);
	return r ? 0 : -1;
}
