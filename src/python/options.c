/* The Runtime's options: cc_options from the package's language, sandbox
 * mode and limits dict (RuntimeConfig), with the mounts, libraries and
 * python_path it allocates (cc_py_options, cc_py_options_free; ext.h). */
#include <string.h>

#include "ext.h"

static int limit_u64(PyObject *limits, const char *key, uint64_t *out)
{
	PyObject *v = PyDict_GetItemString(limits, key);
	if (!v || v == Py_None)
		return 0;
	unsigned long long n = PyLong_AsUnsignedLongLong(v);
	if (n == (unsigned long long)-1 && PyErr_Occurred()) {
		PyErr_Clear();
		cc_py_raise(CC_ERR_INVALID_INPUT, "a limit is not a non-negative int");
		return -1;
	}
	*out = n;
	return 0;
}

static int limit_f(PyObject *limits, const char *key, double *out)
{
	PyObject *v = PyDict_GetItemString(limits, key);
	if (!v || v == Py_None)
		return 0;
	double d = PyFloat_AsDouble(v);
	if (d == -1 && PyErr_Occurred())
		return -1;
	*out = d;
	return 0;
}

/* limits["libraries"]: a tuple of str (the package made it, immutable, so
 * the UTF-8 it lends stays put while the GIL is released); limits
 * ["node_modules"]: str or None. o->libraries is then a heap array the
 * caller frees with cc_py_options_free. */
static int py_libraries(PyObject *limits, cc_options *o)
{
	PyObject *libs = PyDict_GetItemString(limits, "libraries");
	PyObject *nm = PyDict_GetItemString(limits, "node_modules");
	if (nm && nm != Py_None) {
		if (!PyUnicode_Check(nm) || !(o->node_modules = PyUnicode_AsUTF8(nm)))
			return PyErr_Occurred() ? -1
						: (cc_py_raise(CC_ERR_INVALID_INPUT,
							       "node_modules must be a path"),
						   -1);
	}
	if (!libs || libs == Py_None)
		return 0;
	if (!PyTuple_Check(libs))
		return cc_py_raise(CC_ERR_INVALID_INPUT, "libraries must be a tuple of paths"), -1;
	Py_ssize_t n = PyTuple_GET_SIZE(libs);
	if (n == 0)
		return 0;
	const char **v = calloc((size_t)n, sizeof(*v));
	if (!v)
		return PyErr_NoMemory(), -1;
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *e = PyTuple_GET_ITEM(libs, i);
		if (!PyUnicode_Check(e) || !(v[i] = PyUnicode_AsUTF8(e))) {
			free(v);
			if (!PyErr_Occurred())
				cc_py_raise(CC_ERR_INVALID_INPUT,
					    "each library must be a path (str)");
			return -1;
		}
	}
	o->libraries = v;
	o->n_libraries = (size_t)n;
	return 0;
}

/* limits["mounts"]: a list of (host, guest, writable[, name]) tuples of
 * str, str, bool[, str] (the package's Mount objects, flattened: host is
 * /proc/self/fd/N of the descriptor Mount() keeps, name the path the user
 * gave, for messages). The strings are borrowed from the dict, which
 * outlives the call; the array is freed by cc_py_options_free. */
static int py_mounts(PyObject *limits, cc_options *o)
{
	PyObject *ms = PyDict_GetItemString(limits, "mounts");
	if (!ms || ms == Py_None)
		return 0;
	if (!PyList_Check(ms))
		return PyErr_SetString(PyExc_TypeError, "mounts must be a list"), -1;
	Py_ssize_t n = PyList_GET_SIZE(ms);
	if (n == 0)
		return 0;
	cc_mount *m = PyMem_Calloc((size_t)n, sizeof(*m));
	if (!m)
		return PyErr_NoMemory(), -1;
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *t = PyList_GET_ITEM(ms, i);
		Py_ssize_t len = PyTuple_Check(t) ? PyTuple_GET_SIZE(t) : 0;
		if ((len != 3 && len != 4) || !PyUnicode_Check(PyTuple_GET_ITEM(t, 0)) ||
		    !PyUnicode_Check(PyTuple_GET_ITEM(t, 1)) ||
		    (len == 4 && !PyUnicode_Check(PyTuple_GET_ITEM(t, 3)))) {
			PyMem_Free(m);
			return PyErr_SetString(
				       PyExc_TypeError,
				       "each mount must be (host, guest, writable[, name])"),
			       -1;
		}
		m[i].host = PyUnicode_AsUTF8(PyTuple_GET_ITEM(t, 0));
		m[i].guest = PyUnicode_AsUTF8(PyTuple_GET_ITEM(t, 1));
		m[i].writable = PyObject_IsTrue(PyTuple_GET_ITEM(t, 2)) == 1;
		m[i].name = len == 4 ? PyUnicode_AsUTF8(PyTuple_GET_ITEM(t, 3)) : NULL;
		if (!m[i].host || !m[i].guest || (len == 4 && !m[i].name)) {
			PyMem_Free(m);
			return -1;
		}
	}
	o->mounts = m;
	o->n_mounts = (size_t)n;
	return 0;
}

void cc_py_options_free(cc_options *o)
{
	free((void *)o->libraries);
	o->libraries = NULL;
	o->n_libraries = 0;
	PyMem_Free((void *)o->mounts);
	o->mounts = NULL;
	o->n_mounts = 0;
	cc_py_deps_free(o);
}

/* limits["python_path"]: a tuple of str (the package checked the types),
 * borrowed into pp (CC_MAX_PYTHON_PATH slots) while limits lives. */
static int python_path(PyObject *limits, const char **pp, cc_options *o)
{
	PyObject *v = PyDict_GetItemString(limits, "python_path");
	if (!v || v == Py_None)
		return 0;
	if (!PyTuple_Check(v))
		return cc_py_raise(CC_ERR_INVALID_INPUT, "python_path must be a tuple of str"), -1;
	Py_ssize_t n = PyTuple_GET_SIZE(v);
	if (n > CC_MAX_PYTHON_PATH)
		return cc_py_raise(CC_ERR_INVALID_INPUT,
				   "python_path has more than 8 folders; give at most 8"),
		       -1;
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *item = PyTuple_GET_ITEM(v, i);
		pp[i] = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : NULL;
		if (!pp[i]) {
			PyErr_Clear();
			return cc_py_raise(CC_ERR_INVALID_INPUT,
					   "python_path must be a tuple of str"),
			       -1;
		}
	}
	o->python_path = pp;
	o->n_python_path = (size_t)n;
	return 0;
}

int cc_py_options(const char *lang, const char *sandbox, PyObject *limits, const char *worker_dir,
		  cc_options *o, const char **pp)
{
	cc_language language;
	if (cc_language_parse(lang, &language) < 0)
		return cc_py_raise(CC_ERR_INVALID_INPUT,
				   "language must be javascript (js) or python (py)"),
		       -1;
	cc_options_init(o, language);
	if (cc_sandbox_mode_parse(sandbox, &o->sandbox) < 0)
		return cc_py_raise(CC_ERR_INVALID_INPUT, "sandbox must be require, auto or off"),
		       -1;
	cc_limits *l = &o->limits;
	uint64_t cpu = l->cpu_s, files = l->max_open_files, pending = l->max_pending_calls;
	if (limit_f(limits, "timeout", &l->timeout_s) < 0 ||
	    limit_f(limits, "grace", &l->grace_s) < 0 ||
	    limit_u64(limits, "max_memory", &l->max_memory) < 0 ||
	    limit_u64(limits, "max_stdout", &l->max_stdout) < 0 ||
	    limit_u64(limits, "max_stderr", &l->max_stderr) < 0 ||
	    limit_u64(limits, "max_result", &l->max_result) < 0 ||
	    limit_u64(limits, "max_source", &l->max_source) < 0 ||
	    limit_u64(limits, "cpu_time", &cpu) < 0 ||
	    limit_u64(limits, "max_open_files", &files) < 0 ||
	    limit_u64(limits, "max_file_size", &l->max_file_size) < 0 ||
	    limit_u64(limits, "max_pending_calls", &pending) < 0 ||
	    limit_u64(limits, "scratch", &o->scratch_bytes) < 0 || py_mounts(limits, o) < 0)
		return -1;
	if (pending > UINT32_MAX)
		return cc_py_raise(CC_ERR_INVALID_INPUT, "max_pending_calls must be in [1, 65536]"),
		       -1;
	l->max_pending_calls = (uint32_t)pending;
	if (cpu > UINT32_MAX || files > UINT32_MAX)
		return cc_py_options_free(o),
		       cc_py_raise(CC_ERR_INVALID_INPUT, "cpu_time or max_open_files too large"),
		       -1;
	l->cpu_s = (uint32_t)cpu;
	l->max_open_files = (uint32_t)files;
	/* Not a limit, but carried in the same dict (RuntimeConfig.web_polyfills). */
	PyObject *web = PyDict_GetItemString(limits, "web_polyfills");
	o->web_polyfills = web && PyObject_IsTrue(web) == 1;
	/* The default path (IsolatedRuntime's fork_server; Runtime only). */
	PyObject *fork = PyDict_GetItemString(limits, "fork_server");
	o->fork_server = fork && PyObject_IsTrue(fork) == 1;
	o->worker_dir = worker_dir;
	if (python_path(limits, pp, o) < 0 || cc_py_deps(limits, o) < 0)
		return cc_py_options_free(o), -1;
	return py_libraries(limits, o);
}
