/* codecage._codecage: the module, Budget, the bridge from cc_error kinds
 * to the package's exception classes (defined in Python,
 * python/codecage/errors.py, and registered here at import), and
 * ForkServer and Pool, which make Runtimes (runtime.c) from forked or
 * pooled sessions. */
#include <limits.h>
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

PyObject *cc_py_raise_error(cc_error *err)
{
	cc_py_raise(err->kind, err->message);
	cc_error_clear(err);
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

static PyObject *budget_set_hint(cc_py_budget *self, PyObject *args)
{
	const char *total, *per_tool;
	if (!PyArg_ParseTuple(args, "zz:set_hint", &total, &per_tool))
		return NULL;
	if (cc_budget_set_hint(self->budget, total, per_tool) < 0) {
		char msg[96]; /* ASCII, fits */
		snprintf(msg, sizeof(msg), "a budget hint is a non-empty str of at most %d bytes",
			 CC_BUDGET_HINT_MAX);
		return cc_py_raise(CC_ERR_INVALID_INPUT, msg);
	}
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
	{ "set_hint", (PyCFunction)budget_set_hint, METH_VARARGS,
	  "set_hint(total, per_tool): what a refused call's ToolBudgetError tells the guest "
	  "(and the host, uncaught) to raise, for the total and a tool's own limit; str or "
	  "None (cc_budget_set_hint)." },
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

/* ---- ForkServer and Pool ----
 *
 * Both hand out sessions as Runtime objects (cc_py_runtime_adopt). Their
 * blocking calls (start, fork, checkout, close) run with the GIL released,
 * and any thread may call them, so a close() must not free the C object
 * under a call in flight: `users` counts those calls (read and written
 * with the GIL held), and close() with users left only marks the object
 * closed; the last call out closes it. New calls on a closed object get
 * invalid_input. Getters hold the GIL throughout, and the pointer is
 * cleared with the GIL held before it is freed, so they never see a freed
 * object. */

typedef struct {
	PyObject_HEAD cc_forkserver *fs;
	int users;   /* calls in flight with the GIL released */
	bool closed; /* close() was called */
} fs_obj;

typedef struct {
	PyObject_HEAD cc_pool *pool;
	int users;
	bool closed;
} pool_obj;

/* max_sessions as the constructors take it: 0 (the default) or
 * 1..CC_FORK_MAX_SESSIONS_LIMIT; anything else is invalid_input here,
 * before it could wrap in the cast to cc_options' uint32_t. */
static int check_max_sessions(unsigned long long v)
{
	if (v <= CC_FORK_MAX_SESSIONS_LIMIT)
		return 0;
	char msg[160];
	snprintf(msg, sizeof(msg),
		 "max_sessions is %llu; it must be between 1 and %u sessions per fork server "
		 "(start more fork servers for more)",
		 v, (unsigned)CC_FORK_MAX_SESSIONS_LIMIT);
	cc_py_raise(CC_ERR_INVALID_INPUT, msg);
	return -1;
}

static void fs_close_now(fs_obj *self)
{
	cc_forkserver *fs = self->fs;
	self->fs = NULL;
	if (fs) {
		Py_BEGIN_ALLOW_THREADS
			cc_forkserver_close(fs);
		Py_END_ALLOW_THREADS
	}
}

static void fs_release(fs_obj *self)
{
	if (--self->users == 0 && self->closed)
		fs_close_now(self);
}

static int fs_init(fs_obj *self, PyObject *args, PyObject *kw)
{
	static char *names[] = { "language", "sandbox",	     "limits", "worker_dir",
				 "preload",  "max_sessions", NULL };
	const char *lang, *sandbox, *worker_dir = NULL, *preload = NULL;
	PyObject *limits;
	unsigned long long max_sessions = 0;
	if (self->fs || self->users || self->closed)
		return cc_py_raise(CC_ERR_INVALID_INPUT, "ForkServer is already initialised"), -1;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "ssO!|zzK:ForkServer", names, &lang, &sandbox,
					 &PyDict_Type, &limits, &worker_dir, &preload,
					 &max_sessions))
		return -1;
	cc_options o;
	const char *pp[CC_MAX_PYTHON_PATH];
	if (check_max_sessions(max_sessions) < 0 ||
	    cc_py_options(lang, sandbox, limits, worker_dir, &o, pp) < 0)
		return -1;
	o.max_sessions = (uint32_t)max_sessions;
	cc_forkserver *fs = NULL;
	cc_error err = { 0 };
	int rc;
	self->users++; /* a second __init__ meanwhile is refused */
	Py_BEGIN_ALLOW_THREADS
		rc = cc_forkserver_new(&o, preload, &fs, &err);
	Py_END_ALLOW_THREADS
	cc_py_options_free(&o);
	self->fs = fs;
	fs_release(self); /* closes it again if close() came meanwhile */
	if (rc < 0)
		return cc_py_raise_error(&err), -1;
	return 0;
}

static PyObject *fs_spawn(fs_obj *self, PyObject *unused)
{
	(void)unused;
	if (!self->fs || self->closed)
		return cc_py_raise(CC_ERR_INVALID_INPUT, "this fork server is closed");
	cc_forkserver *fs = self->fs;
	cc_runtime *rt = NULL;
	cc_error err = { 0 };
	int rc;
	self->users++;
	Py_BEGIN_ALLOW_THREADS
		rc = cc_forkserver_spawn(fs, &rt, &err);
	Py_END_ALLOW_THREADS
	fs_release(self);
	if (rc < 0)
		return cc_py_raise_error(&err);
	return cc_py_runtime_adopt(rt);
}

static PyObject *fs_close(fs_obj *self, PyObject *unused)
{
	(void)unused;
	self->closed = true;
	if (self->users == 0)
		fs_close_now(self);
	Py_RETURN_NONE;
}

static PyObject *fs_sandbox(fs_obj *self, void *c)
{
	(void)c;
	if (!self->fs || self->closed)
		Py_RETURN_NONE;
	return cc_py_sandbox_dict(cc_forkserver_sandbox(self->fs));
}

static PyObject *fs_preload_skipped(fs_obj *self, void *c)
{
	(void)c;
	const char *s = self->fs && !self->closed ? cc_forkserver_preload_skipped(self->fs) : NULL;
	if (!s)
		return PyTuple_New(0);
	PyObject *str = PyUnicode_FromString(s);
	PyObject *list = str ? PyUnicode_Splitlines(str, 0) : NULL;
	Py_XDECREF(str);
	PyObject *t = list ? PyList_AsTuple(list) : NULL;
	Py_XDECREF(list);
	return t;
}

static PyObject *fs_closed(fs_obj *self, void *c)
{
	(void)c;
	return PyBool_FromLong(!self->fs || self->closed);
}

static void fs_dealloc(fs_obj *self)
{
	fs_close_now(self); /* no call is in flight: each holds a reference */
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef fs_methods[] = {
	{ "spawn", (PyCFunction)fs_spawn, METH_NOARGS,
	  "spawn() -> Runtime: a new session forked from the template (owned by the caller). "
	  "The GIL is released meanwhile; thread-safe." },
	{ "close", (PyCFunction)fs_close, METH_NOARGS,
	  "close(): let go of the template (sessions still open keep it alive). Idempotent; "
	  "with a spawn() in flight in another thread, when that returns." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef fs_getset[] = {
	{ "sandbox", (getter)fs_sandbox, NULL,
	  "the template's confinement report (dict), None "
	  "once closed",
	  NULL },
	{ "closed", (getter)fs_closed, NULL, "close() was called (or __init__ failed)", NULL },
	{ "preload_skipped", (getter)fs_preload_skipped, NULL,
	  "the optional preload modules the template dropped, each 'name: Type: message' "
	  "(tuple of str; () when none, or once closed)",
	  NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject cc_py_forkserver_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "codecage._codecage.ForkServer",
	.tp_basicsize = sizeof(fs_obj),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "ForkServer(language, sandbox, limits: dict, worker_dir=None, preload=None, "
		  "max_sessions=0): a "
		  "confined template worker that forks sessions (cc_forkserver). Use "
		  "codecage.ForkServer.",
	.tp_new = PyType_GenericNew,
	.tp_init = (initproc)fs_init,
	.tp_dealloc = (destructor)fs_dealloc,
	.tp_methods = fs_methods,
	.tp_getset = fs_getset,
};

static void pool_close_now(pool_obj *self)
{
	cc_pool *p = self->pool;
	self->pool = NULL;
	if (p) {
		Py_BEGIN_ALLOW_THREADS
			cc_pool_close(p);
		Py_END_ALLOW_THREADS
	}
}

static void pool_release(pool_obj *self)
{
	if (--self->users == 0 && self->closed)
		pool_close_now(self);
}

static int pool_init(pool_obj *self, PyObject *args, PyObject *kw)
{
	static char *names[] = { "language",	"sandbox", "limits",	   "worker_dir", "size",
				 "fork_server", "preload", "max_sessions", NULL };
	const char *lang, *sandbox, *worker_dir = NULL, *preload = NULL;
	PyObject *limits;
	Py_ssize_t size = 4;
	int fork_server = 1;
	unsigned long long max_sessions = 0;
	if (self->pool || self->users || self->closed)
		return cc_py_raise(CC_ERR_INVALID_INPUT, "Pool is already initialised"), -1;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "ssO!|znpzK:Pool", names, &lang, &sandbox,
					 &PyDict_Type, &limits, &worker_dir, &size, &fork_server,
					 &preload, &max_sessions))
		return -1;
	if (check_max_sessions(max_sessions) < 0)
		return -1;
	if (size < 0 || (size_t)size > UINT_MAX)
		return cc_py_raise(CC_ERR_INVALID_INPUT,
				   "pool size is out of range; it must be between 1 and 1024 "
				   "sessions"),
		       -1;
	cc_options o;
	const char *pp[CC_MAX_PYTHON_PATH];
	if (cc_py_options(lang, sandbox, limits, worker_dir, &o, pp) < 0)
		return -1;
	cc_pool *p = NULL;
	cc_error err = { 0 };
	int rc;
	self->users++;
	o.max_sessions = (uint32_t)max_sessions;
	Py_BEGIN_ALLOW_THREADS
		rc = cc_pool_new(&o, (unsigned)size, fork_server, preload, &p, &err);
	Py_END_ALLOW_THREADS
	cc_py_options_free(&o);
	self->pool = p;
	pool_release(self);
	if (rc < 0)
		return cc_py_raise_error(&err), -1;
	return 0;
}

static PyObject *pool_checkout(pool_obj *self, PyObject *args)
{
	double timeout = 5.0;
	if (!PyArg_ParseTuple(args, "|d:checkout", &timeout))
		return NULL;
	if (!self->pool || self->closed)
		return cc_py_raise(CC_ERR_INVALID_INPUT, "this session pool is closed");
	cc_pool *p = self->pool;
	cc_runtime *rt = NULL;
	cc_error err = { 0 };
	int rc;
	self->users++;
	Py_BEGIN_ALLOW_THREADS
		rc = cc_pool_checkout(p, timeout, &rt, &err);
	Py_END_ALLOW_THREADS
	pool_release(self);
	if (rc < 0)
		return cc_py_raise_error(&err);
	return cc_py_runtime_adopt(rt);
}

static PyObject *pool_close(pool_obj *self, PyObject *unused)
{
	(void)unused;
	self->closed = true;
	if (self->users == 0)
		pool_close_now(self);
	Py_RETURN_NONE;
}

static PyObject *pool_ready(pool_obj *self, void *c)
{
	(void)c;
	/* cc_pool_ready takes the pool's lock, which no holder keeps while
	 * waiting for the GIL: holding the GIL here cannot deadlock. */
	if (!self->pool || self->closed)
		return PyLong_FromLong(0);
	return PyLong_FromUnsignedLong(cc_pool_ready(self->pool));
}

static PyObject *pool_closed(pool_obj *self, void *c)
{
	(void)c;
	return PyBool_FromLong(!self->pool || self->closed);
}

static void pool_dealloc(pool_obj *self)
{
	pool_close_now(self);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef pool_methods[] = {
	{ "checkout", (PyCFunction)pool_checkout, METH_VARARGS,
	  "checkout(timeout=5.0) -> Runtime: take a ready session, waiting up to timeout "
	  "seconds (0: only if one is ready now); the caller owns it. The GIL is released "
	  "meanwhile; thread-safe." },
	{ "close", (PyCFunction)pool_close, METH_NOARGS,
	  "close(): stop the pool's thread and close its ready sessions; checked-out ones stay "
	  "usable. Idempotent; with a checkout() in flight in another thread, when that "
	  "returns." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef pool_getset[] = {
	{ "ready", (getter)pool_ready, NULL, "sessions ready to check out now (int)", NULL },
	{ "closed", (getter)pool_closed, NULL, "close() was called (or __init__ failed)", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject cc_py_pool_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "codecage._codecage.Pool",
	.tp_basicsize = sizeof(pool_obj),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Pool(language, sandbox, limits: dict, worker_dir=None, size=4, "
		  "fork_server=True, preload=None, max_sessions=0): ready sessions kept full by a "
		  "thread "
		  "(cc_pool). Use codecage.SessionPool.",
	.tp_new = PyType_GenericNew,
	.tp_init = (initproc)pool_init,
	.tp_dealloc = (destructor)pool_dealloc,
	.tp_methods = pool_methods,
	.tp_getset = pool_getset,
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

/* cc_forkserver_shared_close, with the GIL released (it reaps templates). */
static PyObject *shared_close(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	Py_BEGIN_ALLOW_THREADS
		cc_forkserver_shared_close();
	Py_END_ALLOW_THREADS
	Py_RETURN_NONE;
}

static PyObject *shared_pids(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	int pids[16];
	size_t n = cc_forkserver_shared_pids(pids, 16);
	PyObject *l = PyList_New(0);
	for (size_t i = 0; l && i < n && i < 16; i++) {
		PyObject *v = PyLong_FromLong(pids[i]);
		if (!v || PyList_Append(l, v) < 0)
			Py_CLEAR(l);
		Py_XDECREF(v);
	}
	return l;
}

/* check_limits(limits): cc_options_check on a JavaScript runtime's
 * defaults with the limits dict's entries (RuntimeConfig's check) */
static PyObject *check_limits(PyObject *self, PyObject *limits)
{
	(void)self;
	if (!PyDict_Check(limits))
		return PyErr_SetString(PyExc_TypeError, "check_limits takes a dict"), NULL;
	cc_options o;
	const char *pp[CC_MAX_PYTHON_PATH];
	if (cc_py_options("javascript", "require", limits, NULL, &o, pp) < 0)
		return NULL;
	cc_error err = { 0 };
	int rc = cc_options_check(&o, &err);
	cc_py_options_free(&o);
	if (rc < 0)
		return cc_py_raise_error(&err);
	Py_RETURN_NONE;
}

/* defaults(language): cc_options_init's limits and cc_net_options_init's
 * under RuntimeConfig's names */
static PyObject *defaults(PyObject *self, PyObject *arg)
{
	(void)self;
	cc_language lang;
	const char *s = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
	if (!s || cc_language_parse(s, &lang) < 0)
		return PyErr_Occurred() ? NULL
					: cc_py_raise(CC_ERR_INVALID_INPUT,
						      "defaults takes javascript or python");
	cc_options o;
	cc_options_init(&o, lang);
	const cc_limits *l = &o.limits;
	cc_net_options n;
	cc_net_options_init(&n);
	const struct {
		const char *name;
		unsigned long long v;
	} ints[] = {
		{ "max_memory", l->max_memory },
		{ "max_stdout", l->max_stdout },
		{ "max_stderr", l->max_stderr },
		{ "max_result", l->max_result },
		{ "max_source", l->max_source },
		{ "cpu_time", l->cpu_s },
		{ "max_open_files", l->max_open_files },
		{ "max_file_size", l->max_file_size },
		{ "max_pending_calls", l->max_pending_calls },
		{ "scratch", o.scratch_bytes },
		{ "net_max_requests", n.max_requests },
		{ "net_max_response_bytes", n.max_response_bytes },
		{ "net_max_total_bytes", n.max_total_bytes },
		{ "net_max_body_bytes", n.max_body_bytes },
	};
	PyObject *d = Py_BuildValue("{s:d,s:d,s:d}", "timeout", l->timeout_s, "grace", l->grace_s,
				    "net_timeout", n.timeout_s);
	for (size_t i = 0; d && i < sizeof(ints) / sizeof(ints[0]); i++) {
		PyObject *v = PyLong_FromUnsignedLongLong(ints[i].v);
		if (!v || PyDict_SetItemString(d, ints[i].name, v) < 0)
			Py_CLEAR(d);
		Py_XDECREF(v);
	}
	return d;
}

/* language_name(name): cc_language_parse's canonical name, or None */
static PyObject *language_name(PyObject *self, PyObject *arg)
{
	(void)self;
	cc_language lang;
	const char *s = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
	if (!s) {
		PyErr_Clear();
		Py_RETURN_NONE;
	}
	if (cc_language_parse(s, &lang) < 0)
		Py_RETURN_NONE;
	return PyUnicode_FromString(cc_language_name(lang));
}

static PyMethodDef module_methods[] = {
	{ "close_shared_fork_servers", shared_close, METH_NOARGS,
	  "cc_forkserver_shared_close(): let go of the default path's fork servers." },
	{ "shared_fork_server_pids", shared_pids, METH_NOARGS,
	  "The pids of the default path's running templates (cc_forkserver_shared_pids)." },
	{ "_set_error_factory", set_error_factory, METH_O,
	  "Register make(kind_name, message) -> exception (codecage.errors)." },
	{ "kind_names", kind_names, METH_NOARGS,
	  "The closed set of error kind names, in cc_error_kind order." },
	{ "language_name", language_name, METH_O,
	  "language_name(name) -> 'javascript', 'python' or None: the library's spellings "
	  "(cc_language_parse: js, py, any ASCII case)." },
	{ "defaults", defaults, METH_O,
	  "defaults(language) -> dict: the library's default limits (cc_options_init, "
	  "cc_net_options_init) under RuntimeConfig's field names." },
	{ "check_limits", check_limits, METH_O,
	  "check_limits(limits): InvalidInputError with the library's message when a "
	  "limit is out of its range (cc_options_check)." },
	{ "check_net", cc_py_net_check, METH_O,
	  "check_net(spec): InvalidInputError when the network policy is malformed." },
	{ "script_dependencies", cc_py_script_dependencies, METH_O,
	  "script_dependencies(code) -> list: the PEP 723 block's dependencies." },
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
	    PyType_Ready(&cc_py_runtime_type) < 0 || PyType_Ready(&cc_py_pending_type) < 0 ||
	    PyType_Ready(&cc_py_forkserver_type) < 0 || PyType_Ready(&cc_py_pool_type) < 0)
		return NULL;
	PyObject *m = PyModule_Create(&module_def);
	if (!m)
		return NULL;
	if (PyModule_AddObjectRef(m, "Budget", (PyObject *)&cc_py_budget_type) < 0 ||
	    PyModule_AddObjectRef(m, "Runtime", (PyObject *)&cc_py_runtime_type) < 0 ||
	    PyModule_AddObjectRef(m, "PendingCall", (PyObject *)&cc_py_pending_type) < 0 ||
	    PyModule_AddObjectRef(m, "ForkServer", (PyObject *)&cc_py_forkserver_type) < 0 ||
	    PyModule_AddObjectRef(m, "Pool", (PyObject *)&cc_py_pool_type) < 0 ||
	    PyModule_AddIntConstant(m, "MAX_DEPTH", CC_VALUE_MAX_DEPTH) < 0 ||
	    PyModule_AddIntConstant(m, "MAX_TIMEOUT", CC_MAX_TIMEOUT_S) < 0 ||
	    PyModule_AddStringConstant(m, "REDACTED_MESSAGE", CC_REDACTED_MESSAGE) < 0 ||
	    PyModule_AddIntConstant(m, "BIGINT_MAX_DIGITS", CC_BIGINT_MAX_DIGITS) < 0 ||
	    PyModule_AddStringConstant(m, "__version__", cc_version()) < 0 ||
	    PyModule_AddStringConstant(m, "WEB_POLYFILLS", cc_web_polyfills(NULL)) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
