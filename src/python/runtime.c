/* codecage._codecage.Runtime: one cc_runtime, and PendingCall: one deferred
 * tool call.
 *
 * The GIL is released while the supervisor waits on the worker (start-up,
 * eval, set_global, bind, close) and taken again for host tools and the
 * output handler, which run on the eval's thread. A Runtime is used by one
 * thread at a time: an atomic `busy` flag guards every call into
 * libcodecage, so a second thread gets RuntimeBusyError (invalid_input)
 * instead of corrupting the channel, and a tool that calls back into its
 * own runtime gets invalid_input. Every tool is bound as an asynchronous
 * tool taking keyword arguments (cc_runtime_bind_tool_async_kw): the
 * Python half answers through the
 * PendingCall at once for plain functions, or later, from the event loop,
 * for coroutines. */
#include <string.h>

#include "ext.h"
/* After Python.h (ext.h), which it needs. */
#include <pythread.h>

typedef struct {
	PyObject_HEAD cc_runtime *rt;
	int busy;	     /* a call into rt is in flight (atomic) */
	unsigned long owner; /* the thread of that call */
	bool close_inside;   /* closed from inside a tool: rt is freed by C */
	bool close_pending;  /* close() from another thread: close after the call */
	PyObject *tools;     /* dict: name -> callback(args, pending) */
	PyObject *on_output; /* callable(fd, line) or NULL */
	PyObject *on_wait;   /* callable() or NULL */
	PyObject *budget;    /* Budget or NULL */
	bool fallback;	     /* set_value_fallback's: what an eval asks by default */
} rt_obj;

typedef struct {
	PyObject_HEAD cc_tool_call *call; /* NULL once answered */
} pending_obj;

/* ---- PendingCall ---- */

/* The guest-visible failure for the Python exception now set (cleared). */
static void fail_from_exception(cc_tool_call *call, const char *prefix)
{
	PyObject *type, *value, *tb;
	PyErr_Fetch(&type, &value, &tb);
	PyErr_NormalizeException(&type, &value, &tb);
	const char *name = type ? ((PyTypeObject *)type)->tp_name : "Error";
	const char *dot = strrchr(name, '.');
	PyObject *s = value ? PyObject_Str(value) : NULL;
	const char *msg = s ? PyUnicode_AsUTF8(s) : NULL;
	if (!msg)
		PyErr_Clear();
	cc_tool_call_fail(call,
			  prefix ? "ToolResultError"
			  : dot	 ? dot + 1
				 : name,
			  "%s%s", prefix ? prefix : "", msg ? msg : "");
	Py_XDECREF(s);
	Py_XDECREF(type);
	Py_XDECREF(value);
	Py_XDECREF(tb);
}

static PyObject *pending_resolve(pending_obj *self, PyObject *value)
{
	if (!self->call)
		Py_RETURN_FALSE;
	cc_tool_call *call = self->call;
	self->call = NULL;
	cc_value *v = NULL;
	int rc;
	if (cc_py_to_value(value, &v) < 0) {
		/* the supervisor redacts it when the tool's calls are redacted */
		fail_from_exception(call, "the host tool returned a value that cannot "
					  "cross the sandbox boundary: ");
		Py_RETURN_TRUE;
	}
	rc = cc_tool_call_return(call, v);
	return PyBool_FromLong(rc == 0);
}

static PyObject *pending_reject(pending_obj *self, PyObject *args)
{
	const char *name, *message, *bases = NULL;
	if (!PyArg_ParseTuple(args, "ss|z:reject", &name, &message, &bases))
		return NULL;
	if (!self->call)
		Py_RETURN_FALSE;
	cc_tool_call *call = self->call;
	self->call = NULL;
	return PyBool_FromLong(cc_tool_call_fail_bases(call, name, bases && *bases ? bases : NULL,
						       "%s", message) == 0);
}

static PyObject *pending_hold(pending_obj *self, PyObject *args)
{
	double timeout;
	if (!PyArg_ParseTuple(args, "d:hold", &timeout))
		return NULL;
	/* cc_tool_call_hold refuses it too, but cannot say why */
	if (!(timeout > 0 && timeout <= CC_MAX_TIMEOUT_S)) {
		char msg[80]; /* ASCII, fits */
		snprintf(msg, sizeof(msg), "the approval timeout must be in (0, %d] seconds",
			 CC_MAX_TIMEOUT_S);
		return cc_py_raise(CC_ERR_INVALID_INPUT, msg), NULL;
	}
	if (!self->call)
		Py_RETURN_FALSE;
	return PyBool_FromLong(cc_tool_call_hold(self->call, timeout) == 0);
}

static PyObject *pending_unhold(pending_obj *self, PyObject *unused)
{
	(void)unused;
	if (!self->call)
		Py_RETURN_FALSE;
	return PyBool_FromLong(cc_tool_call_unhold(self->call) == 0);
}

static PyObject *pending_answered(pending_obj *self, void *c)
{
	(void)c;
	return PyBool_FromLong(self->call == NULL);
}

static void pending_dealloc(pending_obj *self)
{
	/* Never answered (a coroutine dropped with its loop): fail it, so
	 * the call does not leak and the guest is not left waiting. */
	if (self->call)
		cc_tool_call_fail(self->call, "ToolError", "the host tool never answered");
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef pending_methods[] = {
	{ "resolve", (PyCFunction)pending_resolve, METH_O,
	  "resolve(value) -> bool: answer with value (converted now; a value that cannot "
	  "cross fails the call as ToolResultError, whose message the supervisor redacts "
	  "as it does a failure's). False when already answered or the eval is over. "
	  "Thread-safe." },
	{ "reject", (PyCFunction)pending_reject, METH_VARARGS,
	  "reject(name, message, bases=None) -> bool: fail the call; the guest sees an error "
	  "named `name`, its class also derived from the builtin exception classes named in "
	  "`bases` (comma-separated: \"OSError,ValueError\"). False when already answered "
	  "or the eval is over." },
	{ "hold", (PyCFunction)pending_hold, METH_VARARGS,
	  "hold(approval_timeout) -> bool: the call waits for approval: the eval's deadline "
	  "clock stops until no held call is left, and approval_timeout (seconds) bounds the "
	  "wait (cc_tool_call_hold). Call it from the tool callback, before answering. False "
	  "when already answered or the eval is over." },
	{ "unhold", (PyCFunction)pending_unhold, METH_NOARGS,
	  "unhold() -> bool: the host decided on a held call: it no longer waits for "
	  "approval and the eval's clock runs again (cc_tool_call_unhold). False when its "
	  "approval timeout has passed by its own deadline (do not run the tool: the eval is "
	  "being stopped), or it was not held, is answered or its eval is over. Thread-safe." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef pending_getset[] = {
	{ "answered", (getter)pending_answered, NULL, "True once resolved or rejected", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject cc_py_pending_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "codecage._codecage.PendingCall",
	.tp_basicsize = sizeof(pending_obj),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "One host tool call waiting for its answer (cc_tool_call). Answer it once.",
	.tp_dealloc = (destructor)pending_dealloc,
	.tp_methods = pending_methods,
	.tp_getset = pending_getset,
};

/* ---- callbacks from libcodecage (eval's thread, GIL not held) ---- */

/* The package's callback(args: list, kwargs: dict or None, pending). */
static void tool_cb(void *user, const cc_value *args, const cc_value *kwargs, cc_tool_call *call)
{
	PyGILState_STATE g = PyGILState_Ensure();
	pending_obj *p = PyObject_New(pending_obj, &cc_py_pending_type);
	if (!p) {
		PyErr_Clear();
		cc_tool_call_fail(call, "MemoryError", "the host is out of memory");
		goto out;
	}
	p->call = call;
	PyObject *pargs = cc_py_from_value(args);
	PyObject *pkw = pargs ? cc_py_from_value(kwargs) : NULL; /* NULL kwargs: None */
	PyObject *r =
		pkw ? PyObject_CallFunctionObjArgs((PyObject *)user, pargs, pkw, p, NULL) : NULL;
	Py_XDECREF(pkw);
	if (!r && p->call) {
		cc_tool_call *c = p->call;
		p->call = NULL;
		fail_from_exception(c, NULL);
	}
	PyErr_Clear();
	Py_XDECREF(r);
	Py_XDECREF(pargs);
	Py_DECREF(p);
out:
	PyGILState_Release(g);
}

static void output_cb(void *user, int fd, const char *line, size_t len)
{
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *r = PyObject_CallFunction((PyObject *)user, "is#", fd, line, (Py_ssize_t)len);
	if (!r)
		PyErr_WriteUnraisable((PyObject *)user);
	Py_XDECREF(r);
	PyGILState_Release(g);
}

static void wait_cb(void *user)
{
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *r = PyObject_CallNoArgs((PyObject *)user);
	if (!r)
		PyErr_WriteUnraisable((PyObject *)user);
	Py_XDECREF(r);
	PyGILState_Release(g);
}

/* ---- Runtime ---- */

static int rt_init(rt_obj *self, PyObject *args, PyObject *kw)
{
	static char *names[] = { "language", "sandbox", "limits", "worker_dir", NULL };
	const char *lang, *sandbox, *worker_dir = NULL;
	PyObject *limits;
	if (self->rt)
		return cc_py_raise(CC_ERR_INVALID_INPUT, "Runtime is already initialised"), -1;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "ssO!|z:Runtime", names, &lang, &sandbox,
					 &PyDict_Type, &limits, &worker_dir))
		return -1;
	cc_options o;
	const char *pp[CC_MAX_PYTHON_PATH];
	if (cc_py_options(lang, sandbox, limits, worker_dir, &o, pp) < 0)
		return -1;
	if (!self->tools && !(self->tools = PyDict_New()))
		return -1;
	cc_runtime *rt = NULL;
	cc_error err = { 0 };
	int rc;
	Py_BEGIN_ALLOW_THREADS
		rc = cc_runtime_new(&o, &rt, &err);
	Py_END_ALLOW_THREADS
	cc_py_options_free(&o);
	if (rc < 0) {
		cc_py_raise_error(&err);
		return -1;
	}
	self->rt = rt;
	return 0;
}

PyObject *cc_py_runtime_adopt(cc_runtime *rt)
{
	rt_obj *self = (rt_obj *)cc_py_runtime_type.tp_alloc(&cc_py_runtime_type, 0);
	if (self && !(self->tools = PyDict_New()))
		Py_CLEAR(self);
	if (!self) {
		Py_BEGIN_ALLOW_THREADS
			cc_runtime_close(rt);
		Py_END_ALLOW_THREADS
		return NULL;
	}
	self->rt = rt;
	return (PyObject *)self;
}

/* Take the runtime for one call. NULL (exception set) when closed or busy. */
static cc_runtime *take(rt_obj *self)
{
	if (!self->rt || self->close_inside || self->close_pending)
		return cc_py_raise(CC_ERR_INVALID_INPUT, "this runtime is closed"), NULL;
	if (__atomic_exchange_n(&self->busy, 1, __ATOMIC_ACQUIRE)) {
		if (self->owner == PyThread_get_thread_ident())
			return cc_py_raise(CC_ERR_INVALID_INPUT,
					   "a host tool called back into its own runtime; "
					   "tools must not use the runtime that called them"),
			       NULL;
		return cc_py_raise_detail(CC_ERR_INVALID_INPUT,
					  "this runtime is running a request in another thread; "
					  "use one runtime per thread, or wait for it",
					  "busy"),
		       NULL;
	}
	self->owner = PyThread_get_thread_ident();
	return self->rt;
}

/* Give the runtime back; close it now if that was asked meanwhile. */
static void give(rt_obj *self)
{
	self->owner = 0;
	if (self->close_inside) {
		self->rt = NULL; /* libcodecage freed it when the request ended */
	} else if (self->close_pending) {
		cc_runtime *rt = self->rt;
		self->rt = NULL;
		Py_BEGIN_ALLOW_THREADS
			cc_runtime_close(rt);
		Py_END_ALLOW_THREADS
	}
	__atomic_store_n(&self->busy, 0, __ATOMIC_RELEASE);
}

static PyObject *str_or_empty(const char *s)
{
	return PyUnicode_DecodeUTF8(s ? s : "", (Py_ssize_t)strlen(s ? s : ""), "replace");
}

static PyObject *displays_of(const cc_result *r);

static PyObject *rt_eval(rt_obj *self, PyObject *args)
{
	PyObject *code;
	double timeout = 0;
	int fallback = -1; /* -1: set_value_fallback's choice; 0 or 1: this eval's */
	if (!PyArg_ParseTuple(args, "U|di:eval", &code, &timeout, &fallback))
		return NULL;
	if (fallback < -1 || fallback > 1)
		return cc_py_raise(CC_ERR_INVALID_INPUT, "eval's fallback must be -1, 0 or 1");
	Py_ssize_t n;
	const char *src = PyUnicode_AsUTF8AndSize(code, &n);
	if (!src) {
		PyErr_Clear();
		return cc_py_raise(CC_ERR_INVALID_INPUT,
				   "the code is not valid UTF-8 (it has lone surrogates)");
	}
	cc_runtime *rt = take(self);
	if (!rt)
		return NULL;
	cc_result *r;
	/* The library reads its switch as each eval starts: set it for this
	 * one and back after it, while this thread holds the runtime. */
	if (fallback >= 0)
		cc_runtime_set_value_fallback(rt, fallback);
	Py_BEGIN_ALLOW_THREADS
		r = cc_runtime_eval(rt, src, (size_t)n, timeout);
	Py_END_ALLOW_THREADS
	if (fallback >= 0 && !self->close_inside) /* else rt is freed already */
		cc_runtime_set_value_fallback(rt, self->fallback);
	give(self);
	if (!r)
		return PyErr_NoMemory();
	cc_error_kind kind = cc_result_error_kind(r);
	PyObject *value = NULL, *type = NULL, *message = NULL;
	if (kind == CC_OK) {
		value = cc_py_from_value(cc_result_value(r));
		if (!value) {
			/* The guest's value has no Python equivalent. */
			PyObject *et, *ev, *etb;
			PyErr_Fetch(&et, &ev, &etb);
			kind = CC_ERR_GUEST;
			type = PyUnicode_FromString(et ? ((PyTypeObject *)et)->tp_name : "Error");
			message = ev ? PyObject_Str(ev) : PyUnicode_FromString("");
			Py_XDECREF(et);
			Py_XDECREF(ev);
			Py_XDECREF(etb);
		}
	}
	if (!value) {
		value = Py_NewRef(Py_None);
		if (!type)
			type = str_or_empty(cc_result_error_type(r));
		if (!message)
			message = str_or_empty(cc_result_error_message(r));
	}
	size_t olen, elen;
	const char *out = cc_result_stdout(r, &olen), *errs = cc_result_stderr(r, &elen);
	PyObject *displays = displays_of(r);
	PyObject *t =
		displays ? Py_BuildValue("(sNs#s#NNNdzN)", cc_error_kind_name(kind), value, out,
					 (Py_ssize_t)olen, errs, (Py_ssize_t)elen,
					 type ? type : str_or_empty(""),
					 message ? message : str_or_empty(""),
					 str_or_empty(cc_result_error_traceback(r)),
					 cc_result_duration(r),
					 kind == CC_OK ? cc_result_value_type(r) : NULL, displays)
			 : NULL;
	if (!displays) {
		Py_XDECREF(value);
		Py_XDECREF(type);
		Py_XDECREF(message);
	}
	cc_result_free(r);
	return t;
}

/* The result's displays as a tuple of dicts (MIME type to str, or bytes
 * for image/png), in order. New reference, or NULL with an exception. */
static PyObject *displays_of(const cc_result *r)
{
	size_t n = cc_result_display_count(r);
	PyObject *t = PyTuple_New((Py_ssize_t)n);

	for (size_t i = 0; t && i < n; i++) {
		PyObject *d = cc_py_from_value(cc_result_display(r, i));
		if (!d)
			Py_CLEAR(t);
		else
			PyTuple_SET_ITEM(t, (Py_ssize_t)i, d);
	}
	return t;
}

static PyObject *rt_set_global(rt_obj *self, PyObject *args)
{
	const char *name;
	PyObject *value;
	if (!PyArg_ParseTuple(args, "sO:set_global", &name, &value))
		return NULL;
	cc_value *v = NULL;
	if (cc_py_to_value(value, &v) < 0) {
		PyObject *et, *ev, *etb;
		PyErr_Fetch(&et, &ev, &etb);
		PyObject *s = ev ? PyObject_Str(ev) : NULL;
		cc_py_raise(CC_ERR_INVALID_INPUT, s ? PyUnicode_AsUTF8(s) : "bad value");
		Py_XDECREF(s);
		Py_XDECREF(et);
		Py_XDECREF(ev);
		Py_XDECREF(etb);
		return NULL;
	}
	cc_runtime *rt = take(self);
	if (!rt) {
		cc_value_free(v);
		return NULL;
	}
	cc_error err = { 0 };
	int rc;
	Py_BEGIN_ALLOW_THREADS
		rc = cc_runtime_set_global(rt, name, v, &err);
	Py_END_ALLOW_THREADS
	give(self);
	cc_value_free(v);
	if (rc < 0) {
		return cc_py_raise_error(&err);
	}
	Py_RETURN_NONE;
}

static PyObject *rt_write_file(rt_obj *self, PyObject *args)
{
	const char *path;
	Py_buffer data;
	if (!PyArg_ParseTuple(args, "sy*:write_file", &path, &data))
		return NULL;
	cc_runtime *rt = take(self);
	if (!rt) {
		PyBuffer_Release(&data);
		return NULL;
	}
	cc_error err = { 0 };
	int rc;
	Py_BEGIN_ALLOW_THREADS
		rc = cc_runtime_write_file(rt, path, data.buf, (size_t)data.len, &err);
	Py_END_ALLOW_THREADS
	give(self);
	PyBuffer_Release(&data);
	if (rc < 0)
		return cc_py_raise_error(&err);
	Py_RETURN_NONE;
}

static PyObject *rt_read_file(rt_obj *self, PyObject *args)
{
	const char *path;
	unsigned long long max = 0;
	if (!PyArg_ParseTuple(args, "s|K:read_file", &path, &max))
		return NULL;
	cc_runtime *rt = take(self);
	if (!rt)
		return NULL;
	cc_error err = { 0 };
	void *data = NULL;
	size_t len = 0;
	int rc;
	Py_BEGIN_ALLOW_THREADS
		rc = cc_runtime_read_file(rt, path, max, &data, &len, &err);
	Py_END_ALLOW_THREADS
	give(self);
	if (rc < 0)
		return cc_py_raise_error(&err);
	PyObject *b = PyBytes_FromStringAndSize(data, (Py_ssize_t)len);
	free(data);
	return b;
}

static PyObject *rt_list_files(rt_obj *self, PyObject *args)
{
	const char *path;
	if (!PyArg_ParseTuple(args, "s:list_files", &path))
		return NULL;
	cc_runtime *rt = take(self);
	if (!rt)
		return NULL;
	cc_error err = { 0 };
	cc_value *v = NULL;
	int rc;
	Py_BEGIN_ALLOW_THREADS
		rc = cc_runtime_list_files(rt, path, &v, &err);
	Py_END_ALLOW_THREADS
	give(self);
	if (rc < 0)
		return cc_py_raise_error(&err);
	PyObject *o = cc_py_from_value(v);
	cc_value_free(v);
	return o;
}

static PyObject *rt_bind(rt_obj *self, PyObject *args)
{
	const char *name;
	PyObject *cb;
	if (!PyArg_ParseTuple(args, "sO:bind", &name, &cb))
		return NULL;
	if (!PyCallable_Check(cb))
		return PyErr_Format(PyExc_TypeError, "a tool must be callable");
	cc_runtime *rt = take(self);
	if (!rt)
		return NULL;
	cc_error err = { 0 };
	int rc;
	/* The dict holds the callback that libcodecage borrows. */
	PyObject *old = PyDict_GetItemString(self->tools, name);
	Py_XINCREF(old);
	if (PyDict_SetItemString(self->tools, name, cb) < 0) {
		Py_XDECREF(old);
		give(self);
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS
		rc = cc_runtime_bind_tool_async_kw(rt, name, tool_cb, cb, &err);
	Py_END_ALLOW_THREADS
	give(self);
	if (rc < 0) {
		if (old)
			PyDict_SetItemString(self->tools, name, old);
		else
			PyDict_DelItemString(self->tools, name);
		Py_XDECREF(old);
		return cc_py_raise_error(&err);
	}
	Py_XDECREF(old);
	Py_RETURN_NONE;
}

static PyObject *rt_set_budget(rt_obj *self, PyObject *b)
{
	if (b != Py_None && !PyObject_TypeCheck(b, &cc_py_budget_type))
		return PyErr_Format(PyExc_TypeError, "set_budget takes a Budget or None");
	cc_runtime *rt = take(self);
	if (!rt)
		return NULL;
	cc_runtime_set_budget(rt, b == Py_None ? NULL : ((cc_py_budget *)b)->budget);
	Py_XSETREF(self->budget, b == Py_None ? NULL : Py_NewRef(b));
	give(self);
	Py_RETURN_NONE;
}

static PyObject *rt_set_tool_budget(rt_obj *self, PyObject *args)
{
	const char *name;
	PyObject *b;
	if (!PyArg_ParseTuple(args, "sO:set_tool_budget", &name, &b))
		return NULL;
	if (b != Py_None && !PyObject_TypeCheck(b, &cc_py_budget_type))
		return PyErr_Format(PyExc_TypeError, "set_tool_budget takes a Budget or None");
	cc_runtime *rt = take(self);
	if (!rt)
		return NULL;
	cc_error err = { 0 };
	int rc = cc_runtime_set_tool_budget(
		rt, name, b == Py_None ? NULL : ((cc_py_budget *)b)->budget, &err);
	give(self);
	if (rc < 0) {
		return cc_py_raise_error(&err);
	}
	Py_RETURN_NONE;
}

static PyObject *rt_set_tool_redaction(rt_obj *self, PyObject *args)
{
	const char *name;
	int redact;
	if (!PyArg_ParseTuple(args, "si:set_tool_redaction", &name, &redact))
		return NULL;
	cc_runtime *rt = take(self);
	if (!rt)
		return NULL;
	cc_error err = { 0 };
	int rc = cc_runtime_set_tool_redaction(rt, name, redact, &err);
	give(self);
	if (rc < 0)
		return cc_py_raise_error(&err);
	Py_RETURN_NONE;
}

/* A runtime's on/off setting: on's truth passed to set. */
static PyObject *set_switch(rt_obj *self, PyObject *on, void (*set)(cc_runtime *, bool))
{
	int r = PyObject_IsTrue(on);
	if (r < 0)
		return NULL;
	cc_runtime *rt = take(self);
	if (!rt)
		return NULL;
	set(rt, r);
	give(self);
	Py_RETURN_NONE;
}

static PyObject *rt_set_value_fallback(rt_obj *self, PyObject *on)
{
	PyObject *r = set_switch(self, on, cc_runtime_set_value_fallback);
	if (r)
		self->fallback = PyObject_IsTrue(on) == 1;
	return r;
}

static PyObject *rt_set_redaction(rt_obj *self, PyObject *on)
{
	return set_switch(self, on, cc_runtime_set_redaction);
}

static PyObject *rt_set_net(rt_obj *self, PyObject *spec)
{
	cc_runtime *rt = take(self);
	if (!rt)
		return NULL;
	int rc = cc_py_net_apply(rt, spec);
	give(self);
	if (rc < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *rt_set_output_handler(rt_obj *self, PyObject *fn)
{
	if (fn != Py_None && !PyCallable_Check(fn))
		return PyErr_Format(PyExc_TypeError, "the output handler must be callable or None");
	cc_runtime *rt = take(self);
	if (!rt)
		return NULL;
	Py_XSETREF(self->on_output, fn == Py_None ? NULL : Py_NewRef(fn));
	cc_runtime_set_output_handler(rt, self->on_output ? output_cb : NULL, self->on_output);
	give(self);
	Py_RETURN_NONE;
}

static PyObject *rt_set_wait_handler(rt_obj *self, PyObject *fn)
{
	if (fn != Py_None && !PyCallable_Check(fn))
		return PyErr_Format(PyExc_TypeError, "the wait handler must be callable or None");
	cc_runtime *rt = take(self);
	if (!rt)
		return NULL;
	Py_XSETREF(self->on_wait, fn == Py_None ? NULL : Py_NewRef(fn));
	cc_runtime_set_wait_handler(rt, self->on_wait ? wait_cb : NULL, self->on_wait);
	give(self);
	Py_RETURN_NONE;
}

static void close_now(rt_obj *self)
{
	cc_runtime *rt = self->rt;
	self->rt = NULL;
	Py_BEGIN_ALLOW_THREADS
		cc_runtime_close(rt);
	Py_END_ALLOW_THREADS
}

static PyObject *rt_close(rt_obj *self, PyObject *unused)
{
	(void)unused;
	if (!self->rt || self->close_inside || self->close_pending)
		Py_RETURN_NONE;
	if (!__atomic_exchange_n(&self->busy, 1, __ATOMIC_ACQUIRE)) {
		close_now(self);
		__atomic_store_n(&self->busy, 0, __ATOMIC_RELEASE);
	} else if (self->owner == PyThread_get_thread_ident()) {
		/* From inside one of its tools: libcodecage stops the worker now
		 * and frees the runtime when the eval returns. */
		cc_runtime_close(self->rt);
		self->close_inside = true;
	} else {
		self->close_pending = true;
	}
	Py_RETURN_NONE;
}

/* From another thread while this runtime runs a request: kill the worker
 * so the request ends now. The GIL keeps rt alive here: the thread in the
 * request frees it only in give(), which needs the GIL. */
static PyObject *rt_interrupt(rt_obj *self, PyObject *unused)
{
	(void)unused;
	if (self->rt && !self->close_inside)
		cc_runtime_interrupt(self->rt);
	Py_RETURN_NONE;
}

static PyObject *rt_alive(rt_obj *self, void *c)
{
	(void)c;
	return PyBool_FromLong(self->rt && !self->close_inside && !self->close_pending &&
			       cc_runtime_alive(self->rt));
}

static PyObject *rt_closed(rt_obj *self, void *c)
{
	(void)c;
	return PyBool_FromLong(!self->rt || self->close_inside || self->close_pending);
}

static PyObject *rt_deps(rt_obj *self, void *c)
{
	(void)c;
	return cc_py_deps_dict(self->rt ? cc_runtime_deps(self->rt) : NULL);
}

static PyObject *rt_version(rt_obj *self, void *c)
{
	(void)c;
	return str_or_empty(self->rt ? cc_runtime_engine_version(self->rt) : "");
}

PyObject *cc_py_sandbox_dict(const cc_sandbox_report *s)
{
	if (!s)
		Py_RETURN_NONE;
	PyObject *d = Py_BuildValue("{s:s,s:s,s:s,s:i,s:i}", "mode", cc_sandbox_mode_name(s->mode),
				    "applied", s->applied, "missing", s->missing, "landlock_abi",
				    s->landlock_abi, "seccomp_allowed", s->seccomp_allowed);
	if (d && s->fork_server) { /* cc_options.fork_server: how it was served */
		PyObject *v = PyUnicode_FromString(s->fork_server);
		if (!v || PyDict_SetItemString(d, "fork_server", v) < 0)
			Py_CLEAR(d);
		Py_XDECREF(v);
	}
	return d;
}

static PyObject *rt_sandbox(rt_obj *self, void *c)
{
	(void)c;
	return cc_py_sandbox_dict(self->rt ? cc_runtime_sandbox(self->rt) : NULL);
}

/* The worker's pid (cc_runtime_pid), None once it is gone or closed. The
 * GIL keeps rt alive: it is freed only with the GIL held. */
static PyObject *rt_pid(rt_obj *self, void *c)
{
	(void)c;
	int pid = self->rt && !self->close_inside ? cc_runtime_pid(self->rt) : -1;
	if (pid <= 0)
		Py_RETURN_NONE;
	return PyLong_FromLong(pid);
}

static int rt_traverse(rt_obj *self, visitproc visit, void *arg)
{
	Py_VISIT(self->tools);
	Py_VISIT(self->on_output);
	Py_VISIT(self->on_wait);
	Py_VISIT(self->budget);
	return 0;
}

static int rt_clear(rt_obj *self)
{
	/* Callbacks are borrowed by libcodecage: only drop them once the
	 * runtime is gone (a cycle is cleared when nothing can run it). */
	if (self->rt && !__atomic_load_n(&self->busy, __ATOMIC_ACQUIRE))
		close_now(self);
	if (self->rt)
		return 0;
	Py_CLEAR(self->tools);
	Py_CLEAR(self->on_output);
	Py_CLEAR(self->on_wait);
	Py_CLEAR(self->budget);
	return 0;
}

static void rt_dealloc(rt_obj *self)
{
	PyObject_GC_UnTrack(self);
	if (self->rt)
		close_now(self);
	rt_clear(self);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef rt_methods[] = {
	{ "eval", (PyCFunction)rt_eval, METH_VARARGS,
	  "eval(code, timeout=0, fallback=-1) -> (kind, value, stdout, stderr, type, message, "
	  "traceback, duration_s, value_type, displays); kind 'ok' or an error kind name; "
	  "value_type names the type of a text-form value, else None. fallback 1 asks this "
	  "eval for the text of a last value with no mapping, 0 refuses it, -1 follows "
	  "set_value_fallback. The GIL is released meanwhile." },
	{ "set_value_fallback", (PyCFunction)rt_set_value_fallback, METH_O,
	  "set_value_fallback(bool): a last value with no mapping comes back as its text." },
	{ "set_global", (PyCFunction)rt_set_global, METH_VARARGS,
	  "set_global(name, value): bind a guest global to a copy of value." },
	{ "write_file", (PyCFunction)rt_write_file, METH_VARARGS,
	  "write_file(path, data: bytes): create or replace a guest file (between evals)." },
	{ "read_file", (PyCFunction)rt_read_file, METH_VARARGS,
	  "read_file(path, max_bytes=0) -> bytes (0: the result cap)." },
	{ "list_files", (PyCFunction)rt_list_files, METH_VARARGS,
	  "list_files(dir) -> [{path, size, mtime, dir}], recursive." },
	{ "bind", (PyCFunction)rt_bind, METH_VARARGS,
	  "bind(name, callback): callback(args: list, pending: PendingCall) answers the "
	  "call through pending, now or later from any thread." },
	{ "set_budget", (PyCFunction)rt_set_budget, METH_O, "set_budget(Budget | None)" },
	{ "set_tool_budget", (PyCFunction)rt_set_tool_budget, METH_VARARGS,
	  "set_tool_budget(name, Budget | None): count one tool against its own budget." },
	{ "set_redaction", (PyCFunction)rt_set_redaction, METH_O,
	  "set_redaction(bool): hide failing tools' messages from the guest." },
	{ "set_tool_redaction", (PyCFunction)rt_set_tool_redaction, METH_VARARGS,
	  "set_tool_redaction(name, redact: 1 | 0 | -1): one tool's redaction (-1: the "
	  "runtime's; cc_runtime_set_tool_redaction)." },
	{ "set_net", (PyCFunction)rt_set_net, METH_O,
	  "set_net(spec): the network policy (see codecage.RuntimeConfig.allow_net)." },
	{ "set_output_handler", (PyCFunction)rt_set_output_handler, METH_O,
	  "set_output_handler(fn(fd, line) | None)" },
	{ "set_wait_handler", (PyCFunction)rt_set_wait_handler, METH_O,
	  "set_wait_handler(fn() | None): fn runs on the eval's thread when the worker says it "
	  "waits for tool answers (a hint; cc_runtime_set_wait_handler)." },
	{ "interrupt", (PyCFunction)rt_interrupt, METH_NOARGS,
	  "interrupt(): kill the worker now; a running eval ends as worker_crashed." },
	{ "close", (PyCFunction)rt_close, METH_NOARGS,
	  "close(): stop the worker (from another thread while an eval runs: when it ends)." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef rt_getset[] = {
	{ "alive", (getter)rt_alive, NULL, "the worker is usable", NULL },
	{ "closed", (getter)rt_closed, NULL, "close() was called", NULL },
	{ "engine_version", (getter)rt_version, NULL, "e.g. 'QuickJS 2025-04-26'", NULL },
	{ "dependencies", (getter)rt_deps, NULL, "its dependencies (dict) or None", NULL },
	{ "sandbox", (getter)rt_sandbox, NULL, "the confinement report (dict)", NULL },
	{ "pid", (getter)rt_pid, NULL,
	  "the worker's process id in the host's pid namespace (int), None when gone; for "
	  "monitoring only",
	  NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject cc_py_runtime_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "codecage._codecage.Runtime",
	.tp_basicsize = sizeof(rt_obj),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
	.tp_doc = "Runtime(language, sandbox, limits: dict, worker_dir=None): one confined "
		  "worker (cc_runtime). Use codecage.IsolatedRuntime.",
	.tp_new = PyType_GenericNew,
	.tp_init = (initproc)rt_init,
	.tp_dealloc = (destructor)rt_dealloc,
	.tp_traverse = (traverseproc)rt_traverse,
	.tp_clear = (inquiry)rt_clear,
	.tp_methods = rt_methods,
	.tp_getset = rt_getset,
};
