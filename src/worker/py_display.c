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
 * them; the supervisor checks them again. */
#include <Python.h>

#include "py_display.h"
#include "worker.h"

/* clang-format off */
static const char glue_src[] =
	"import builtins, json, sys\n"
	"REPRS = (('_repr_png_', 'image/png'), ('_repr_svg_', 'image/svg+xml'),\n"
	"\t('_repr_html_', 'text/html'), ('_repr_json_', 'application/json'))\n"
	"def _is(obj, mod, cls):\n"
	"\tc = getattr(sys.modules.get(mod), cls, None)\n"
	"\treturn isinstance(c, type) and isinstance(obj, c)\n"
	"def _png(save):\n"
	"\timport io\n"
	"\tf = io.BytesIO()\n"
	"\tsave(f)\n"
	"\treturn f.getvalue()\n"
	"def _text(obj, meth, r):\n"
	"\tif not isinstance(r, str):\n"
	"\t\traise TypeError(f'{type(obj).__name__}.{meth}() returned {type(r).__name__}, not str')\n"
	"\treturn r\n"
	"def bundle(obj):\n"
	"\tb = {}\n"
	"\tif _is(obj, 'matplotlib.figure', 'Figure'):\n"
	"\t\tb['image/png'] = _png(lambda f: obj.savefig(f, format='png', bbox_inches='tight'))\n"
	"\telif _is(obj, 'PIL.Image', 'Image'):\n"
	"\t\tb['image/png'] = _png(lambda f: obj.save(f, format='PNG'))\n"
	"\telse:\n"
	"\t\tfor meth, mime in REPRS:\n"
	"\t\t\tf = getattr(type(obj), meth, None)\n"
	"\t\t\tr = f(obj) if callable(f) else None\n"
	"\t\t\tif isinstance(r, tuple) and len(r) == 2:\n"
	"\t\t\t\tr = r[0]  # (data, metadata)\n"
	"\t\t\tif r is None:\n"
	"\t\t\t\tcontinue\n"
	"\t\t\tif mime == 'application/json':\n"
	"\t\t\t\tr = r if isinstance(r, str) else json.dumps(r)\n"
	"\t\t\telif mime == 'image/png':\n"
	"\t\t\t\tif not isinstance(r, (bytes, bytearray, memoryview)):\n"
	"\t\t\t\t\traise TypeError(f'{type(obj).__name__}._repr_png_() returned {type(r).__name__}, not bytes')\n"
	"\t\t\telse:\n"
	"\t\t\t\tr = _text(obj, meth, r)\n"
	"\t\t\tb[mime] = r\n"
	"\tb['text/plain'] = repr(obj)\n"
	"\treturn b\n"
	"def display(*objs, raw=False):\n"
	"\t'''Show objects in the result as rich output (images, HTML), as\n"
	"\tIPython's display() does. raw=True: each object is a dict of MIME\n"
	"\ttype (image/png, image/svg+xml, text/html, text/plain,\n"
	"\tapplication/json) to its data.'''\n"
	"\tfor obj in objs:\n"
	"\t\tif not room():\n"
	"\t\t\tadd({'text/plain': ''})  # counted as dropped: the eval ends as output_limit\n"
	"\t\t\tcontinue\n"
	"\t\tif raw and not isinstance(obj, dict):\n"
	"\t\t\traise TypeError(f'display(raw=True) takes dicts of MIME type to data, not {type(obj).__name__}')\n"
	"\t\tb = dict(obj) if raw else bundle(obj)\n"
	"\t\tif isinstance(b.get('application/json'), (dict, list)):\n"
	"\t\t\tb['application/json'] = json.dumps(b['application/json'])\n"
	"\t\tadd(b)\n"
	"def _figures():\n"
	"\th = sys.modules.get('matplotlib._pylab_helpers')\n"
	"\tplt = sys.modules.get('matplotlib.pyplot')\n"
	"\tif h is None or plt is None:\n"
	"\t\treturn\n"
	"\tfor m in h.Gcf.get_all_fig_managers():\n"
	"\t\tdisplay(m.canvas.figure)\n"
	"\tplt.close('all')\n"
	"def show(*args, **kwargs):\n"
	"\t'''Show every open figure in the result, then close them (codecage).'''\n"
	"\t_figures()\n"
	"def _patch(plt):\n"
	"\tplt.show = show\n"
	"class _Finder:\n"
	"\t# after matplotlib.pyplot is imported, its show() is ours\n"
	"\t@staticmethod\n"
	"\tdef find_spec(name, path=None, target=None):\n"
	"\t\tif name != 'matplotlib.pyplot':\n"
	"\t\t\treturn None\n"
	"\t\tfrom importlib.machinery import PathFinder\n"
	"\t\tspec = PathFinder.find_spec(name, path)\n"
	"\t\tif spec is None or spec.loader is None:\n"
	"\t\t\treturn spec\n"
	"\t\texec_module = spec.loader.exec_module\n"
	"\t\tdef run(module):\n"
	"\t\t\texec_module(module)\n"
	"\t\t\t_patch(module)\n"
	"\t\tspec.loader.exec_module = run\n"
	"\t\treturn spec\n"
	"def finish(value):\n"
	"\tif _is(value, 'pandas', 'DataFrame') or _is(value, 'pandas', 'Series'):\n"
	"\t\tdf = value.to_frame() if _is(value, 'pandas', 'Series') else value\n"
	"\t\tdisplay({'text/html': df._repr_html_() or df.to_html(max_rows=60), 'text/plain': repr(value)}, raw=True)\n"
	"\t_figures()\n"
	"if 'matplotlib.pyplot' in sys.modules:\n"
	"\t_patch(sys.modules['matplotlib.pyplot'])\n"
	"sys.meta_path.insert(0, _Finder)\n"
	"builtins.display = display\n";
/* clang-format on */

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
	PyObject *ns = PyDict_New(), *code = NULL, *r = NULL;
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
	code = Py_CompileString(glue_src, "<codecage>", Py_file_input);
	Py_XSETREF(r, code ? PyEval_EvalCode(code, ns, ns) : NULL);
	if (!r)
		goto out;
	h_finish = Py_XNewRef(PyDict_GetItemString(ns, "finish"));
	rc = h_finish ? 0 : -1;
	if (!h_finish)
		PyErr_SetString(PyExc_KeyError, "display helper finish missing");
out:
	Py_XDECREF(r);
	Py_XDECREF(code);
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
