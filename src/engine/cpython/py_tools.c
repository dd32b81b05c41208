/* Host tool calls for the CPython engine (worker.h, "host tool calls").
 * Worker side only; like the rest of the engine nothing here is a
 * security boundary: the supervisor decides whether a call reaches the
 * host and re-checks every value.
 *
 * bind_tool("fetch_sales") gives the guest three spellings:
 *
 *     rows = fetch_sales(2024)               # a global in __main__
 *     rows = tools.fetch_sales(2024)         # the same function
 *     rows = await atools.fetch_sales(2024)  # the awaitable form
 *
 * The first two are synchronous: the call blocks until the host answers
 * (the eval's deadline covers the host's time). The awaitable form is for
 * running calls side by side:
 *
 *     a, b = await asyncio.gather(atools.f(1), atools.g(2))
 *
 * Each atools coroutine starts its call when it first runs, then steps
 * aside once (exactly what `await asyncio.sleep(0)` does) so the sibling
 * coroutines start theirs, and only then waits for its own reply: every
 * call is in flight before any of them waits. Outside gather (a plain
 * `await atools.f(1)`) it behaves like the synchronous form.
 *
 * Behaviour chosen here:
 *  - Positional arguments travel as the call frame's `args` array,
 *    keyword arguments (when there are any) as its `kwargs` map; a host
 *    tool bound without keyword support refuses them (TypeError, from
 *    the supervisor). Arguments follow the same value
 *    rules and caps as results (py_value.c); one that cannot cross is a
 *    TypeError or ValueError raised before anything is sent.
 *  - A failed call raises an exception whose type name is the reply's
 *    error name and whose args are (message,). If builtins has an
 *    Exception subclass of that name (PermissionError, ValueError,
 *    KeyError ...), that class is raised, so `except PermissionError:`
 *    works; otherwise a class made once per name, a direct subclass of
 *    Exception with __module__ 'tools' (tools.ToolBudgetError,
 *    tools.ToolNotFoundError ...); tools.ToolResultError (the tool's
 *    value cannot cross) derives from TypeError. When the reply names
 *    builtin bases (a host's io.UnsupportedOperation: OSError and
 *    ValueError), the class made derives from those instead, so both
 *    `except OSError` and `except ValueError` catch it. KeyError's str() quotes its message,
 *    as it always does.
 *  - When the eval must stop (deadline, output cap) a call raises the
 *    soft stop's KeyboardInterrupt, so the eval ends with the stop's
 *    kind. A call outside an eval (a __del__ run by set_global) raises
 *    RuntimeError.
 *  - The GIL stays held while a call waits: the worker core is single-
 *    threaded, so guest threads must not enter it meanwhile (they would
 *    stall anyway; the deadline still ends the wait).
 *  - An atools call whose coroutine never resumes (cancelled, or left
 *    pending on the session's event loop) is simply not collected; its
 *    reply is dropped by the worker core when the eval ends. A coroutine
 *    that resumes in a later eval gets RuntimeError: its reply is gone.
 *  - A tool named `tools` or `atools` is reachable as tools.tools /
 *    atools.tools only: the namespaces win the global name. */
#include <stdlib.h>
#include <string.h>

#include "py_value.h"
#include "py_glue.h"
#include "value.h"
#include "worker.h"

static PyObject *tools_ns;	   /* types.SimpleNamespace: name -> sync function */
static PyObject *atools_ns;	   /* types.SimpleNamespace: name -> async function */
static PyObject *bound;		   /* name -> (sync function, async function) */
static PyObject *err_classes;	   /* error name -> class made for it */
static PyObject *in_flight;	   /* ids atools started in this eval, not yet collected */
static PyObject *builtins;	   /* the builtins module's dict */
static PyObject *h_make_async;	   /* glue: make_async(name, start, wait) */
static PyObject *h_start, *h_wait; /* glue_start, glue_wait as functions */
static PyObject *module_name;	   /* "tools", the functions' __module__ */

static const char TOOL_DOC[] =
	"A host tool. Call it with positional and keyword arguments; it returns the tool's result\n"
	"or raises the tool's error. `await atools.<name>(...)` is the awaitable form.";

/* The Python-side glue (tools, atools, make_async) is py_helper.c's
 * cc_py_tools_src, frozen as "<codecage>" (py_glue.h): its frames never
 * show in guest tracebacks. */

/* ---- one call ---- */

/* Pack args (a tuple) and kwargs (a dict or NULL; sent only when not
 * empty) and start the call. Returns its id, or 0 with an exception set. */
static uint64_t call_start(PyObject *name, PyObject *args, PyObject *kwargs)
{
	const char *cname = PyUnicode_AsUTF8(name);
	msgpack_sbuffer sb, kb;
	uint64_t id = 0, max = cc_worker_limits.max_result;
	bool kw = kwargs && PyDict_Check(kwargs) && PyDict_GET_SIZE(kwargs);
	int rc;

	if (!cname)
		return 0;
	msgpack_sbuffer_init(&sb);
	msgpack_sbuffer_init(&kb);
	rc = cc_py_pack_args(args, &sb, max);
	if (rc == 0 && kw)
		rc = cc_py_pack_kwargs(kwargs, &kb, max - (sb.size < max ? sb.size : max));
	if (rc == CC_PY_TOO_BIG) {
		PyErr_Format(PyExc_ValueError,
			     "%s(): the arguments are larger than the limit of %llu bytes", cname,
			     (unsigned long long)max);
	} else if (rc == CC_PY_TOO_MANY) {
		PyErr_Format(PyExc_ValueError,
			     "%s(): the arguments have more than %zu values (one per 8 bytes of "
			     "the %llu-byte value cap)",
			     cname, cc_value_node_budget(max), (unsigned long long)max);
	} else if (rc == 0) {
		id = cc_worker_call_start(cname, sb.data, sb.size, kw ? kb.data : NULL, kb.size);
		if (!id) {
			if (cc_worker_should_stop())
				cc_py_raise_stop();
			else
				PyErr_Format(PyExc_RuntimeError,
					     "%s(): a host tool can only be called while an eval "
					     "runs",
					     cname);
		}
	}
	msgpack_sbuffer_destroy(&kb);
	msgpack_sbuffer_destroy(&sb);
	return id;
}

/* The builtin Exception classes named in list (comma-separated, may be
 * NULL), in order and without repeats, as a new list; empty when none
 * apply. NULL with an exception set. */
static PyObject *builtin_bases(const char *list)
{
	PyObject *out = PyList_New(0);

	while (out && list && *list) {
		const char *end = strchr(list, ',');
		size_t k = end ? (size_t)(end - list) : strlen(list);
		PyObject *n = PyUnicode_DecodeUTF8(list, (Py_ssize_t)k, "replace");
		PyObject *cls = n ? PyDict_GetItemWithError(builtins, n) : NULL;

		Py_XDECREF(n);
		if (PyErr_Occurred())
			Py_CLEAR(out);
		else if (cls && PyType_Check(cls) &&
			 PyType_IsSubtype((PyTypeObject *)cls, (PyTypeObject *)PyExc_Exception) &&
			 !PySequence_Contains(out, cls) && PyList_Append(out, cls) < 0)
			Py_CLEAR(out);
		list += k + (end ? 1 : 0);
	}
	return out;
}

/* The class made for error name ename with the builtin bases named in
 * list (borrowed reference; made once per name and list, and cached), or
 * NULL with an exception set. Without bases, ToolResultError (a value
 * that cannot cross) derives from TypeError and every other name from
 * Exception. Bases that cannot be combined (instance layout conflict,
 * no consistent MRO) are dropped from the end until the class can be
 * made. */
static PyObject *made_class(PyObject *ename, const char *list)
{
	PyObject *key = Py_BuildValue("(Oz)", ename, list);
	PyObject *cls = key ? PyDict_GetItemWithError(err_classes, key) : NULL;
	PyObject *bases = NULL;

	if (!key || cls || PyErr_Occurred())
		goto out;
	bases = builtin_bases(list);
	if (!bases)
		goto out;
	if (!PyList_GET_SIZE(bases) &&
	    PyList_Append(bases, PyUnicode_CompareWithASCIIString(ename, "ToolResultError")
					 ? PyExc_Exception
					 : PyExc_TypeError) < 0)
		goto out;
	for (;;) {
		PyObject *t = PyList_AsTuple(bases);
		cls = t ? PyObject_CallFunction((PyObject *)&PyType_Type, "OO{sOss}", ename, t,
						"__module__", module_name, "__doc__",
						"An error reported for a host tool call.")
			: NULL;
		Py_XDECREF(t);
		if (cls || PyList_GET_SIZE(bases) == 1 || !PyErr_ExceptionMatches(PyExc_TypeError))
			break;
		PyErr_Clear();
		if (PyList_SetSlice(bases, PyList_GET_SIZE(bases) - 1, PyList_GET_SIZE(bases),
				    NULL) < 0)
			break;
	}
	if (cls) {
		int rc = PyDict_SetItem(err_classes, key, cls);
		Py_DECREF(cls); /* err_classes holds it */
		if (rc < 0)
			cls = NULL;
	}
out:
	Py_XDECREF(bases);
	Py_XDECREF(key);
	return cls;
}

/* Raise the reply's error. Always returns NULL. */
static PyObject *raise_reply(const struct cc_call_reply *r)
{
	const char *n = r->err_name && *r->err_name ? r->err_name : "Error";
	const char *m = r->err_message ? r->err_message : "";
	PyObject *ename = PyUnicode_DecodeUTF8(n, (Py_ssize_t)strlen(n), "replace");
	PyObject *msg = ename ? PyUnicode_DecodeUTF8(m, (Py_ssize_t)strlen(m), "replace") : NULL;
	PyObject *cls = msg ? PyDict_GetItemWithError(builtins, ename) : NULL;
	PyObject *exc = NULL;

	if (cls && PyType_Check(cls) &&
	    PyType_IsSubtype((PyTypeObject *)cls, (PyTypeObject *)PyExc_Exception)) {
		exc = PyObject_CallOneArg(cls, msg);
		/* A builtin whose constructor wants more than a message
		 * (UnicodeDecodeError), or one the guest replaced with
		 * something odd: use the class made for the name instead. */
		if (!exc && PyErr_ExceptionMatches(PyExc_Exception))
			PyErr_Clear();
		else if (exc && !PyObject_TypeCheck(exc, (PyTypeObject *)PyExc_Exception))
			Py_CLEAR(exc);
	}
	if (!exc && msg && !PyErr_Occurred()) {
		cls = made_class(ename, r->err_bases);
		exc = cls ? PyObject_CallOneArg(cls, msg) : NULL;
	}
	if (exc)
		PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
	Py_XDECREF(exc);
	Py_XDECREF(msg);
	Py_XDECREF(ename);
	return NULL;
}

/* Wait for call id's reply: its value, or NULL with the tool's error (or
 * the soft stop) raised. */
static PyObject *call_finish(uint64_t id)
{
	struct cc_call_reply r;
	PyObject *v;

	if (cc_worker_call_wait(id, &r) < 0) {
		cc_call_reply_free(&r);
		return cc_py_raise_stop();
	}
	v = r.ok ? cc_py_from_value(r.value) : raise_reply(&r);
	cc_call_reply_free(&r);
	return v;
}

/* ---- the functions the guest calls ---- */

/* fetch_sales(*args) and tools.fetch_sales(*args); self is the name. */
static PyObject *tool_sync(PyObject *self, PyObject *args, PyObject *kwargs)
{
	uint64_t id = call_start(self, args, kwargs);
	return id ? call_finish(id) : NULL;
}

/* Glue's start(name, args, kwargs) -> call id, for atools. */
static PyObject *glue_start(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	if (nargs != 3 || !PyUnicode_Check(args[0]) || !PyTuple_Check(args[1]) ||
	    !PyDict_Check(args[2])) {
		PyErr_SetString(PyExc_TypeError, "start(name, args, kwargs)");
		return NULL;
	}
	uint64_t id = call_start(args[0], args[1], args[2]);
	PyObject *key = id ? PyLong_FromUnsignedLongLong(id) : NULL;
	if (key && PySet_Add(in_flight, key) < 0)
		Py_CLEAR(key);
	return key;
}

/* Glue's wait(id) -> the call's value, for atools. Only ids start gave
 * out in this eval: cc_worker_call_wait would take any other for a stop. */
static PyObject *glue_wait(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	if (nargs != 1 || !PyLong_Check(args[0])) {
		PyErr_SetString(PyExc_TypeError, "wait(call_id)");
		return NULL;
	}
	int rc = PySet_Discard(in_flight, args[0]);
	if (rc < 0)
		return NULL;
	if (rc == 0) {
		PyErr_SetString(PyExc_RuntimeError,
				"this tool call was started by an earlier eval (or already "
				"collected): its reply is gone");
		return NULL;
	}
	return call_finish(PyLong_AsUnsignedLongLong(args[0]));
}

static PyMethodDef glue_methods[] = {
	{ "start", _PyCFunction_CAST(glue_start), METH_FASTCALL, NULL },
	{ "wait", _PyCFunction_CAST(glue_wait), METH_FASTCALL, NULL },
};

/* ---- binding ---- */

/* Everything a first bind needs; on failure nothing is kept, so the next
 * bind tries again. Returns 0, or -1 with an exception set. */
static int tools_init(void)
{
	PyObject *bmod = PyImport_AddModule("builtins"); /* borrowed */
	PyObject *ns = PyDict_New(), *r = NULL;
	PyObject *start = PyCFunction_New(&glue_methods[0], NULL);
	PyObject *wait = PyCFunction_New(&glue_methods[1], NULL);
	PyObject *bd = PyDict_New(), *ec = PyDict_New(), *fl = PySet_New(NULL);
	PyObject *mn = PyUnicode_FromString("tools");
	PyObject *t, *a, *m;
	int rc = -1;

	if (!bmod || !ns || !start || !wait || !bd || !ec || !fl || !mn ||
	    PyDict_SetItemString(ns, "__builtins__", PyEval_GetBuiltins()) < 0 ||
	    PyDict_SetItemString(ns, "__name__", mn) < 0)
		goto out;
	if (cc_py_glue_exec(&cc_py_glue_tools, ns) < 0)
		goto out;
	t = PyDict_GetItemString(ns, "tools");
	a = PyDict_GetItemString(ns, "atools");
	m = PyDict_GetItemString(ns, "make_async");
	if (!t || !a || !m) {
		PyErr_SetString(PyExc_SystemError, "tool glue incomplete");
		goto out;
	}
	builtins = Py_NewRef(PyModule_GetDict(bmod));
	tools_ns = Py_NewRef(t);
	atools_ns = Py_NewRef(a);
	h_make_async = Py_NewRef(m);
	h_start = Py_NewRef(start);
	h_wait = Py_NewRef(wait);
	bound = Py_NewRef(bd);
	err_classes = Py_NewRef(ec);
	in_flight = Py_NewRef(fl);
	module_name = Py_NewRef(mn);
	rc = 0;
out:
	Py_XDECREF(mn);
	Py_XDECREF(fl);
	Py_XDECREF(ec);
	Py_XDECREF(bd);
	Py_XDECREF(wait);
	Py_XDECREF(start);
	Py_XDECREF(r);
	Py_XDECREF(ns);
	return rc;
}

/* The synchronous function for name: a builtin function whose __name__ is
 * the tool's, with the name as its self. Its PyMethodDef lives as long as
 * the process (one per tool name, cached in `bound`). */
static PyObject *make_sync(PyObject *name, const char *cname)
{
	PyMethodDef *def = calloc(1, sizeof(*def));
	char *n = strdup(cname);

	if (!def || !n) {
		free(def);
		free(n);
		return PyErr_NoMemory();
	}
	def->ml_name = n;
	def->ml_meth = _PyCFunction_CAST(tool_sync);
	def->ml_flags = METH_VARARGS | METH_KEYWORDS;
	def->ml_doc = TOOL_DOC;
	PyObject *fn = PyCFunction_NewEx(def, name, module_name);
	if (!fn) {
		free(n);
		free(def);
	}
	return fn;
}

/* ns.SERVER (a SimpleNamespace made on the first tool of SERVER), new
 * reference; a SERVER that is a tool of its own is a TypeError. */
static PyObject *sub_ns(PyObject *ns, PyObject *server)
{
	PyObject *sub = NULL;
	if (_PyObject_LookupAttr(ns, server, &sub) < 0)
		return NULL;
	if (!sub) {
		sub = PyObject_CallNoArgs((PyObject *)Py_TYPE(ns));
		if (sub && PyObject_SetAttr(ns, server, sub) < 0)
			Py_CLEAR(sub);
	} else if (!PyObject_TypeCheck(sub, Py_TYPE(ns))) {
		PyErr_Format(PyExc_TypeError, "tools.%U is a tool, not a namespace", server);
		Py_CLEAR(sub);
	}
	return sub;
}

/* tools.SERVER.TOOL and atools.SERVER.TOOL for "SERVER.TOOL" (no global
 * function). Returns 0, or -1 with an exception set. */
static int bind_dotted(const char *cname, const char *dot, PyObject *sync, PyObject *async)
{
	PyObject *server = PyUnicode_FromStringAndSize(cname, dot - cname);
	PyObject *tool = PyUnicode_FromString(dot + 1);
	PyObject *t = server && tool ? sub_ns(tools_ns, server) : NULL;
	PyObject *a = t ? sub_ns(atools_ns, server) : NULL;
	int rc = a && PyObject_SetAttr(t, tool, sync) == 0 && PyObject_SetAttr(a, tool, async) == 0
			 ? 0
			 : -1;
	Py_XDECREF(a);
	Py_XDECREF(t);
	Py_XDECREF(tool);
	Py_XDECREF(server);
	return rc;
}

int cc_py_tools_bind(PyObject *globals, const char *cname)
{
	PyObject *name, *pair, *sync = NULL, *async = NULL;
	int rc = -1;

	if (!tools_ns && tools_init() < 0)
		return -1;
	name = PyUnicode_FromString(cname);
	if (!name)
		return -1;
	pair = PyDict_GetItemWithError(bound, name);
	if (pair) {
		sync = Py_NewRef(PyTuple_GET_ITEM(pair, 0));
		async = Py_NewRef(PyTuple_GET_ITEM(pair, 1));
	} else if (!PyErr_Occurred()) {
		sync = make_sync(name, cname);
		async = sync ? PyObject_CallFunctionObjArgs(h_make_async, name, h_start, h_wait,
							    NULL)
			     : NULL;
		pair = async ? PyTuple_Pack(2, sync, async) : NULL;
		if (!pair || PyDict_SetItem(bound, name, pair) < 0) {
			Py_XDECREF(pair);
			goto out;
		}
		Py_DECREF(pair);
	}
	if (!sync)
		goto out;
	const char *dot = strchr(cname, '.');
	if (dot) {
		if (bind_dotted(cname, dot, sync, async) == 0 &&
		    PyDict_SetItemString(globals, "tools", tools_ns) == 0 &&
		    PyDict_SetItemString(globals, "atools", atools_ns) == 0)
			rc = 0;
		goto out;
	}
	/* The global first: for a tool named "tools" the namespace wins. */
	if (PyDict_SetItem(globals, name, sync) < 0 || PyObject_SetAttr(tools_ns, name, sync) < 0 ||
	    PyObject_SetAttr(atools_ns, name, async) < 0 ||
	    PyDict_SetItemString(globals, "tools", tools_ns) < 0 ||
	    PyDict_SetItemString(globals, "atools", atools_ns) < 0)
		goto out;
	rc = 0;
out:
	Py_XDECREF(async);
	Py_XDECREF(sync);
	Py_DECREF(name);
	return rc;
}

void cc_py_tools_eval_begin(void)
{
	if (in_flight)
		PySet_Clear(in_flight);
}
