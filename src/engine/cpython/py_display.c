/* Displays from a Python guest (DESIGN.md: rich results).
 *
 * display(*objs, raw=False) is a builtin, as in IPython: each object
 * becomes one MIME bundle, from (in this order) a matplotlib Figure (PNG,
 * drawn with Agg), a Pillow image (PNG), or the object's _repr_png_,
 * _repr_svg_, _repr_html_ and _repr_json_ methods, plus text/plain from
 * repr(); with raw=True each object is already a dict of MIME type to
 * data. When the eval ends (cc_py_display_finish) a last value that is a
 * pandas DataFrame or Series adds its HTML table, then every matplotlib
 * figure still open is shown and closed, as a notebook's inline backend
 * does; plt.show() shows and closes the open figures at once (pyplot is
 * patched when it is imported: a finder on sys.meta_path).
 *
 * Nothing here imports matplotlib, Pillow or pandas: they are only looked
 * up in sys.modules, so a guest that never imported them pays nothing.
 * The bundles go to the worker core (display.c), which counts and caps
 * them; the supervisor checks them again. The Python half (display(),
 * show(), the pyplot finder) is py_helper.c's cc_py_display_src, frozen at
 * build time (py_glue.h); this file holds its natives, room() and add(). */
#include <Python.h>

#include "py_display.h"
#include "py_glue.h"
#include "worker.h"

static PyObject *h_finish;

/* room(): whether one more display fits the count. */
static PyObject *room(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyBool_FromLong(cc_worker_display_room());
}

/* add(bundle): a dict of MIME type (str) to data: bytes-like for
 * image/png, str for the rest. Raises TypeError/ValueError for a bad
 * bundle; a bundle over the caps is dropped (the eval then ends as
 * output_limit). */
static PyObject *add(PyObject *self, PyObject *b)
{
	struct cc_display_part parts[5];
	Py_buffer views[5];
	size_t n = 0, nv = 0;
	PyObject *k, *v, *ret = NULL;
	Py_ssize_t pos = 0;

	(void)self;
	if (!PyDict_Check(b) || PyDict_GET_SIZE(b) < 1 || PyDict_GET_SIZE(b) > 5)
		return PyErr_Format(PyExc_ValueError,
				    "display: a bundle is a dict of 1 to 5 MIME types (image/png, "
				    "image/svg+xml, text/html, text/plain, application/json)");
	while (PyDict_Next(b, &pos, &k, &v)) {
		const char *mime = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
		if (!mime) {
			PyErr_Clear();
			PyErr_SetString(PyExc_TypeError, "display: MIME types are str");
			goto out;
		}
		parts[n].mime = mime;
		if (!strcmp(mime, "image/png")) {
			if (PyObject_GetBuffer(v, &views[nv], PyBUF_SIMPLE) < 0) {
				PyErr_Clear();
				PyErr_SetString(PyExc_TypeError,
						"display: image/png data is bytes");
				goto out;
			}
			parts[n].data = views[nv].buf;
			parts[n].len = (size_t)views[nv].len;
			nv++;
		} else {
			Py_ssize_t len = 0;
			parts[n].data =
				PyUnicode_Check(v) ? PyUnicode_AsUTF8AndSize(v, &len) : NULL;
			if (!parts[n].data) {
				if (!PyErr_Occurred())
					PyErr_Format(PyExc_TypeError, "display: %s data is str",
						     mime);
				goto out;
			}
			parts[n].len = (size_t)len;
		}
		n++;
	}
	switch (cc_worker_display_add(parts, n)) {
	case CC_DISPLAY_BAD:
		PyErr_SetString(PyExc_ValueError,
				"display: unknown or repeated MIME type; use image/png, "
				"image/svg+xml, text/html, text/plain or application/json");
		break;
	case CC_DISPLAY_NOT_PNG:
		PyErr_SetString(PyExc_ValueError, "display: the image/png data is not a PNG file");
		break;
	case CC_DISPLAY_NOMEM:
		PyErr_NoMemory();
		break;
	default: /* 0, or CC_DISPLAY_FULL: dropped, the result will say so */
		ret = Py_NewRef(Py_None);
	}
out:
	for (size_t i = 0; i < nv; i++)
		PyBuffer_Release(&views[i]);
	return ret;
}

static PyMethodDef methods[] = {
	{ "room", room, METH_NOARGS, NULL },
	{ "add", add, METH_O, NULL },
};

int cc_py_display_setup(void)
{
	PyObject *ns = PyDict_New(), *r = NULL;
	int rc = -1;

	if (!ns || PyDict_SetItemString(ns, "__builtins__", PyEval_GetBuiltins()) < 0)
		goto out;
	r = PyUnicode_FromString("_codecage_display");
	if (!r || PyDict_SetItemString(ns, "__name__", r) < 0)
		goto out;
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		Py_SETREF(r, PyCFunction_New(&methods[i], NULL));
		if (!r || PyDict_SetItemString(ns, methods[i].ml_name, r) < 0)
			goto out;
	}
	if (cc_py_glue_exec(&cc_py_glue_display, ns) < 0)
		goto out;
	h_finish = Py_XNewRef(PyDict_GetItemString(ns, "finish"));
	rc = h_finish ? 0 : -1;
	if (!h_finish)
		PyErr_SetString(PyExc_KeyError, "display helper finish missing");
out:
	Py_XDECREF(r);
	Py_XDECREF(ns);
	return rc;
}

/* Whether finish() has anything to look at: pandas (the last value's
 * table) or matplotlib.pyplot (open figures) in sys.modules, as finish()
 * itself reads them. A sys.modules that is not a dict: ask finish(). */
static bool finish_needed(void)
{
	PyObject *mods = PySys_GetObject("modules"); /* borrowed */

	if (!mods || !PyDict_CheckExact(mods))
		return true;
	return PyDict_GetItemString(mods, "pandas") ||
	       PyDict_GetItemString(mods, "matplotlib.pyplot");
}

int cc_py_display_finish(PyObject *value)
{
	if (h_finish && !finish_needed())
		return 0; /* the common case: no Python call at all */
	PyObject *r = h_finish ? PyObject_CallOneArg(h_finish, value ? value : Py_None) : NULL;

	Py_XDECREF(r);
	return r ? 0 : -1;
}
