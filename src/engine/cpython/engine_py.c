/* The CPython engine: Debian's libpython3.11 embedded behind the worker
 * core (worker.h). Worker side only; the process is confined before
 * py_init runs and is assumed hostile once guest code has run, so nothing
 * here is a security boundary: the supervisor re-checks every outcome and
 * enforces time and memory from outside. What this file adds is that most
 * overruns end as clean, catchable errors with the runtime still usable.
 *
 *  - Isolation: an isolated PyConfig (no environment, no user site, no
 *    site import, no bytecode writes) with sys.path fixed to the stdlib,
 *    lib-dynload and Debian's read-only dist-packages, checked after start.
 *  - Memory: py_mem.c, a counting allocator under the RAW domain and pymalloc's
 *    arenas refuses allocations past cc_worker_limits.max_memory, so the
 *    guest sees MemoryError instead of the kernel's rlimit.
 *  - Time: a POSIX timer raises KeyboardInterrupt in the guest at the
 *    deadline and every 50 ms after; a stop not taken within about 5 ms
 *    of CPU time (a long C call) ends the worker (see "soft stop" below).
 *  - Output: sys.stdout/sys.stderr are replaced by writers that send frames
 *    through cc_worker_output; their flush() is a flush point, and held
 *    output goes out on an early tick of the stop timer (output_due).
 *  - REPL semantics: the value of a final expression statement is the
 *    result; top-level await runs on one persistent event loop.
 *  - Host tools (bind_tool): py_tools.c.
 * Python-side glue lives in cc_py_helper_src (py_helper.c), compiled as "<codecage>"
 * at build time (py_glue.h: frozen, so a new worker does not compile it) so
 * its frames never show in guest tracebacks. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "py_display.h"
#include "py_fork.h"
#include "py_glue.h"
#include "py_paths.h"
#include "py_stop.h"
#include "py_mem.h"
#include "py_value.h"
#include "lang_guess.h"
#include "value.h"
#include "confine.h"
#include "grants.h"
#include "seccomp_policy.h"
#include "worker.h"
#include "worker_exit.h"

/* Caps on what one error report carries, bytes: together well inside the
 * 64 KiB envelope the supervisor allows a result frame beyond max_result
 * (the traceback is first shortened in py_helper.c, keeping head and tail). */
#define TYPE_MAX 256
#define MESSAGE_MAX (16 * 1024)
#define TRACEBACK_MAX (40 * 1024)

static PyObject *main_dict; /* __main__.__dict__: the guest's globals */
static PyObject *h_compile; /* helper functions, see py_helper.c */
static PyObject *h_run_coro;
static PyObject *h_format;
static PyObject *h_prepare;
static char version[64];

/* ---- soft stop: py_stop.c ---- */

/* ---- guest output ----
 *
 * emit(fd, data) backs the sys.stdout / sys.stderr objects of py_helper.c
 * (data is a str, or any bytes-like object for .buffer). Text is encoded
 * UTF-8 with surrogatepass and each lone surrogate turned into one U+FFFD
 * (the supervisor's generic repair would make three of it); bytes go out
 * as they are and the supervisor repairs them. The GIL stays held across
 * cc_worker_output, so guest threads never enter the worker core at once.
 * Output while no eval runs (a __del__ during set_global, say) is dropped:
 * there is no eval for it to belong to. Returns the length written. */
static PyObject *emit(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	long fd = nargs == 2 && PyLong_Check(args[0]) ? PyLong_AsLong(args[0]) : 0;
	PyObject *b = NULL;
	Py_buffer view = { 0 };
	Py_ssize_t written;
	int rc = 0;

	(void)self;
	if (fd != 1 && fd != 2) {
		PyErr_Clear();
		PyErr_SetString(PyExc_ValueError, "emit: expected (1 or 2, data)");
		return NULL;
	}
	if (PyUnicode_Check(args[1])) {
		PyObject *s = args[1];
		b = PyUnicode_AsEncodedString(s, "utf-8", "surrogatepass");
		if (!b)
			return NULL;
		if (PyUnicode_KIND(s) != PyUnicode_1BYTE_KIND)
			cc_utf8_fix_surrogates(PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b));
		written = PyUnicode_GET_LENGTH(s);
		rc = PyObject_GetBuffer(b, &view, PyBUF_SIMPLE);
	} else {
		rc = PyObject_GetBuffer(args[1], &view, PyBUF_SIMPLE);
		written = view.len;
	}
	if (rc < 0) {
		Py_XDECREF(b);
		return NULL;
	}
	if (!cc_py_in_guest || !view.len) {
		rc = 0;
	} else if (cc_worker_should_stop()) {
		rc = -1;
	} else if (cc_worker_output((int)fd, view.buf, (size_t)view.len) < 0) {
		cc_py_stop_cap_hit((int)fd); /* cap hit: stop now, and go on stopping */
		rc = -1;
	}
	PyBuffer_Release(&view);
	Py_XDECREF(b);
	return rc < 0 ? cc_py_raise_stop() : PyLong_FromSsize_t(written);
}

static PyMethodDef emit_method = { "emit", _PyCFunction_CAST(emit), METH_FASTCALL, NULL };

/* The Python-side glue: py_helper.c (cc_py_helper_src), frozen (py_glue.h). */

/* ev's type name and str() as UTF-8 (NULL where that failed: a guest
 * __str__ may raise). Leaves no exception set. */
static void exc_text(PyObject *ev, char **type, char **msg, size_t max)
{
	PyObject *name = PyType_GetName(Py_TYPE(ev));
	PyErr_Clear();
	PyObject *str = PyObject_Str(ev);
	PyErr_Clear();
	*type = cc_py_utf8(name, TYPE_MAX);
	*msg = cc_py_utf8(str, max);
	Py_XDECREF(name);
	Py_XDECREF(str);
}

/* Init failures have no guest to report to: say what failed, then the
 * pending exception's "type: message". Clears the exception. */
static int fail_python(cc_error *err, const char *what)
{
	PyObject *t, *v, *tb;
	char *type = NULL, *msg = NULL;

	PyErr_Fetch(&t, &v, &tb);
	PyErr_NormalizeException(&t, &v, &tb);
	if (v)
		exc_text(v, &type, &msg, 1024);
	cc_fail(err,
		v && PyErr_GivenExceptionMatches(v, PyExc_MemoryError) ? CC_ERR_MEMORY_LIMIT
								       : CC_ERR_INTERNAL,
		"starting CPython: %s: %s: %s", what, type ? type : "error", msg ? msg : "");
	free(type);
	free(msg);
	Py_XDECREF(t);
	Py_XDECREF(v);
	Py_XDECREF(tb);
	return -1;
}

static const struct {
	const char *name;
	PyObject **fn;
} helpers[] = {
	{ "compile_src", &h_compile },
	{ "run_coro", &h_run_coro },
	{ "format_exc", &h_format },
	{ "prepare", &h_prepare },
};

/* The C functions the helper's namespace holds, each under its ml_name. */
static PyMethodDef *const natives[] = { &emit_method, &cc_py_stop_method, &cc_py_tick_method,
					&cc_py_flush_method };

/* After Py_Initialize: the guest's globals, the helper, the checks, the
 * timer. */
static int setup(cc_error *err)
{
	PyObject *ns = NULL, *r = NULL, *paths = NULL, *check;
	PyObject *main_mod = PyImport_AddModule("__main__"); /* borrowed */
	int rc = -1;

	if (!main_mod)
		return fail_python(err, "__main__");
	main_dict = Py_NewRef(PyModule_GetDict(main_mod));
	if (cc_py_value_init() < 0)
		return fail_python(err, "datetime");

	ns = PyDict_New();
	if (!ns || PyDict_SetItemString(ns, "__builtins__", PyEval_GetBuiltins()) < 0)
		goto py_fail;
	r = PyUnicode_FromString("_codecage");
	if (!r || PyDict_SetItemString(ns, "__name__", r) < 0)
		goto py_fail;
	Py_CLEAR(r);
	for (size_t i = 0; i < sizeof(natives) / sizeof(natives[0]); i++) {
		r = PyCFunction_New(natives[i], NULL);
		if (!r || PyDict_SetItemString(ns, natives[i]->ml_name, r) < 0)
			goto py_fail;
		Py_CLEAR(r);
	}
	if (cc_py_glue_exec(&cc_py_glue_helper, ns) < 0)
		goto py_fail;
	for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++) {
		*helpers[i].fn = Py_XNewRef(PyDict_GetItemString(ns, helpers[i].name));
		if (!*helpers[i].fn) {
			PyErr_Format(PyExc_KeyError, "helper %s missing", helpers[i].name);
			goto py_fail;
		}
	}

	if (cc_py_display_setup() < 0)
		goto py_fail;

	/* Failed writes and network calls say why (py_helper.c), when they
	 * failed for the sandbox's reasons. */
	check = PyDict_GetItemString(ns, "fs_hints");
	r = !cc_worker_isolated ? Py_NewRef(Py_None)
	    : check		? PyObject_CallFunction(check, "O",
						cc_worker_limits.max_file_size ? Py_True : Py_False)
				: NULL;
	if (!r)
		goto py_fail;
	Py_CLEAR(r);

	/* matplotlib's backend and folders, numpy's BLAS threads: set when
	 * each is imported (py_helper.c's import_setup). */
	check = PyDict_GetItemString(ns, "import_setup");
	r = check ? PyObject_CallFunction(check, "s", cc_worker_isolated ? PY_CACHE : "") : NULL;
	if (!r)
		goto py_fail;
	Py_CLEAR(r);

	/* Fail closed if the configuration did not take. */
	paths = Py_BuildValue("[ss]", CC_PY_STDLIB, CC_PY_DYNLOAD);
	const char *pp[CC_MAX_PYTHON_PATH];
	size_t npp = cc_grants_python_path(pp, CC_MAX_PYTHON_PATH, cc_worker_isolated);
	for (size_t i = 0; paths && i < npp; i++) {
		PyObject *d = PyUnicode_DecodeFSDefault(pp[i]);
		if (!d || PyList_Append(paths, d) < 0)
			Py_CLEAR(paths);
		Py_XDECREF(d);
	}
	r = paths ? PyUnicode_FromString(CC_PY_DISTPACKAGES) : NULL;
	if (paths && (!r || PyList_Append(paths, r) < 0))
		Py_CLEAR(paths);
	Py_CLEAR(r);
	check = paths ? PyDict_GetItemString(ns, "check") : NULL;
	r = check ? PyObject_CallOneArg(check, paths) : NULL;
	if (!r || !PyUnicode_Check(r))
		goto py_fail;
	if (PyUnicode_GET_LENGTH(r)) {
		char *bad = cc_py_utf8(r, 1024);
		cc_fail(err, CC_ERR_INTERNAL, "starting CPython: isolation did not apply: %s",
			bad ? bad : "?");
		free(bad);
		goto out;
	}
	rc = cc_py_stop_init(err);
	goto out;
py_fail:
	fail_python(err, "engine setup");
out:
	Py_XDECREF(paths);
	Py_XDECREF(r);
	Py_XDECREF(ns);
	return rc;
}

static int status_fail(cc_error *err, PyStatus st, const char *what)
{
	/* our allocator refusing is the likely cause of a failed start with
	 * a small max_memory */
	bool oom = st.err_msg && strstr(st.err_msg, "memory");

	return cc_fail(err, oom ? CC_ERR_MEMORY_LIMIT : CC_ERR_INTERNAL,
		       "starting CPython: %s: %s%s%s", what, st.func ? st.func : "",
		       st.func ? ": " : "", st.err_msg ? st.err_msg : "exit requested");
}

static int py_init(const char **version_out, cc_error *err)
{
	PyPreConfig pre;
	PyConfig config;
	PyStatus st;

	/* UTF-8 mode: the worker's environment has no locale, and file names
	 * and open() should still be UTF-8 rather than ASCII. */
	PyPreConfig_InitIsolatedConfig(&pre);
	pre.utf8_mode = 1;
	st = Py_PreInitialize(&pre);
	if (PyStatus_Exception(st))
		return status_fail(err, st, "pre-initialising");
	cc_py_mem_install();

	PyConfig_InitIsolatedConfig(&config);
	config.site_import = 0;	   /* no .pth files, no user site */
	config.write_bytecode = 0; /* read-only tree anyway */
	config.user_site_directory = 0;
	config.use_environment = 0;
	config.parse_argv = 0;
	config.install_signal_handlers = 1; /* SIGINT -> KeyboardInterrupt; SIGPIPE,
					       SIGXFSZ ignored: EPIPE/EFBIG become
					       OSError instead of killing the worker */
	config.faulthandler = 0;
	config.tracemalloc = 0;
	config.pathconfig_warnings = 0;
	config.module_search_paths_set = 1;
	if (cc_py_config_home(&config) < 0 || cc_py_search_paths(&config) < 0) {
		PyConfig_Clear(&config);
		return cc_fail(err, CC_ERR_MEMORY_LIMIT, "starting CPython: out of memory");
	}
	st = Py_InitializeFromConfig(&config);
	PyConfig_Clear(&config);
	if (PyStatus_Exception(st))
		return status_fail(err, st, "initialising");
	if (setup(err) < 0)
		return -1;

	/* "3.11.2 (main, ...) [GCC ...]" -> "CPython 3.11.2" */
	const char *v = Py_GetVersion();
	snprintf(version, sizeof(version), "CPython %.*s", (int)strcspn(v, " "), v);
	*version_out = version;
	return 0;
}

/* ---- outcomes ---- */

enum phase {
	PH_PARSE,  /* compiling: SyntaxError is syntax_error */
	PH_RUN,	   /* guest code: SystemExit(0/None) is success */
	PH_RESULT, /* converting the value */
	PH_GLOBAL, /* set_global */
};

static void outcome_reset(struct cc_outcome *o)
{
	free(o->type);
	free(o->message);
	free(o->traceback);
	o->type = o->message = o->traceback = NULL;
	o->value.size = 0;
	o->ok = false;
}

/* ev's guest-only traceback, its last line replaced when last is set;
 * NULL when formatting failed (memory, a guest __str__ that raised). */
static char *format_tb(PyObject *ev, const char *last)
{
	PyObject *tb = last ? PyObject_CallFunction(h_format, "Os", ev, last)
			    : PyObject_CallOneArg(h_format, ev);
	char *s;

	PyErr_Clear();
	s = cc_py_utf8(tb, TRACEBACK_MAX);
	Py_XDECREF(tb);
	return s;
}

/* What a model reads after "No module named 'x'": where modules come
 * from here and how the host adds one. */
#define MODULE_HINT                                                                                \
	" (codecage: the sandbox imports from the standard library, Debian's python3-* "           \
	"packages installed on the host, and the host's RuntimeConfig(python_path=[DIR]) "         \
	"folders (CLI and MCP --python-path DIR), e.g. a pip install --target DIR)"

static char *with_module_hint(const char *type, char *msg)
{
	char *out = NULL;
	if (!type || strcmp(type, "ModuleNotFoundError") || !msg ||
	    strncmp(msg, "No module named", 15) || asprintf(&out, "%s" MODULE_HINT, msg) < 0)
		return msg;
	free(msg);
	return out;
}

/* Record kind with ev's type name, str() and guest-only traceback. Each
 * piece may run guest code (__str__) or fail for memory; a piece that
 * fails is replaced, never allowed to lose the outcome. */
static void fail_exc(struct cc_outcome *o, cc_error_kind kind, PyObject *ev)
{
	char *type, *msg, *trace, *last = NULL, mem[128];

	exc_text(ev, &type, &msg, MESSAGE_MAX);
	char *plain = msg;
	msg = with_module_hint(type, msg);
	/* the hint ends the traceback too: the CLI's text mode shows only that */
	if (msg != plain && asprintf(&last, "%s: %s\n", type, msg) < 0)
		last = NULL;
	trace = format_tb(ev, last);
	free(last);

	if (kind == CC_ERR_MEMORY_LIMIT && (!msg || !*msg)) {
		free(msg);
		msg = NULL;
		snprintf(mem, sizeof(mem), "out of memory (the engine heap limit is %llu bytes)",
			 (unsigned long long)cc_worker_limits.max_memory);
	}
	cc_outcome_fail(o, kind, type ? type : "Exception",
			msg			      ? msg
			: kind == CC_ERR_MEMORY_LIMIT ? mem
						      : "<exception str() failed>",
			trace);
	free(type);
	free(msg);
	free(trace);
}

/* A soft stop: reason's kind, with the guest frames ev was raised
 * through (where the guest was when it was stopped) when there is one.
 * The timer is off first: its next tick would only break the formatting. */
static void fail_stop(struct cc_outcome *o, cc_error_kind reason, PyObject *ev)
{
	const char *type = reason == CC_ERR_TIMEOUT ? "TimeoutError" : "OutputLimitError";
	char msg[128], last[192];
	char *trace = NULL;

	cc_py_stop_off();
	if (reason == CC_ERR_TIMEOUT)
		snprintf(msg, sizeof(msg), "execution stopped: the time limit was reached");
	else if (cc_py_cap_fd)
		snprintf(msg, sizeof(msg),
			 "execution stopped: %s went over its limit of %llu bytes",
			 cc_py_cap_fd == 1 ? "stdout" : "stderr",
			 (unsigned long long)(cc_py_cap_fd == 1 ? cc_worker_limits.max_stdout
								: cc_worker_limits.max_stderr));
	else
		snprintf(msg, sizeof(msg), "execution stopped: the output limit was reached");
	if (ev) {
		snprintf(last, sizeof(last), "%s: %s\n", type, msg);
		trace = format_tb(ev, last);
	}
	cc_outcome_fail(o, reason, type, msg, trace);
	free(trace);
}

/* A MemoryError with no allocation refused: not the memory limit. A bare
 * one at parse time is CPython's parser running out of its fixed stack on
 * code nested too deeply ('-' * 100000 + '1'): a syntax_error saying so.
 * At run time a bare one is that (the guest's own eval/compile) or a size
 * CPython refuses before asking for memory ([0] * 2**60): a guest_error
 * saying both. A guest's own MemoryError('...') keeps its message. */
static void fail_not_heap(struct cc_outcome *o, enum phase ph, PyObject *ev)
{
	static const char deep[] =
		"the code is nested too deeply for CPython's parser (its stack has a fixed "
		"size; this is not the memory limit): split the expression up";
	static const char bare_run[] =
		"MemoryError with the memory limit not reached: CPython raises it for code "
		"nested too deeply for its parser (eval/compile) and for sizes it refuses "
		"before allocating";
	PyObject *args = PyObject_GetAttrString(ev, "args");
	bool bare = args && PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 0;
	char *trace = NULL;

	PyErr_Clear();
	Py_XDECREF(args);
	if (!bare) {
		fail_exc(o, CC_ERR_GUEST, ev);
		return;
	}
	const char *msg = ph == PH_PARSE ? deep : bare_run;
	char last[sizeof(bare_run) + 32];
	snprintf(last, sizeof(last), "MemoryError: %s\n", msg);
	trace = format_tb(ev, last);
	cc_outcome_fail(o, ph == PH_PARSE ? CC_ERR_SYNTAX : CC_ERR_GUEST, "MemoryError", msg,
			trace);
	free(trace);
}

static bool exit_is_success(PyObject *ev)
{
	PyObject *code = PyObject_GetAttrString(ev, "code");
	bool ok = code == Py_None || (code && PyLong_Check(code) && PyLong_AsLong(code) == 0);

	PyErr_Clear();
	Py_XDECREF(code);
	return ok;
}

/* Classify the pending exception into o. */
static void report(struct cc_outcome *o, enum phase ph)
{
	PyObject *et, *ev, *etb;
	cc_error_kind stop = cc_py_in_guest ? cc_py_stop_reason() : CC_OK;

	PyErr_Fetch(&et, &ev, &etb);
	PyErr_NormalizeException(&et, &ev, &etb);
	if (ev && etb)
		PyException_SetTraceback(ev, etb);
	cc_py_mem_glue(true);
	if (stop != CC_OK) {
		fail_stop(o, stop, ev);
	} else if (!ev) {
		cc_outcome_fail(o, CC_ERR_GUEST, "SystemError", "error without an exception", NULL);
	} else if (ph == PH_PARSE && PyErr_GivenExceptionMatches(ev, PyExc_SyntaxError)) {
		fail_exc(o, CC_ERR_SYNTAX, ev);
	} else if (ph == PH_RUN && PyErr_GivenExceptionMatches(ev, PyExc_SystemExit) &&
		   exit_is_success(ev)) {
		outcome_reset(o);
		msgpack_sbuffer_write(&o->value, "\xc0", 1); /* nil */
		o->ok = true;
	} else if (PyErr_GivenExceptionMatches(ev, PyExc_MemoryError) && cc_py_mem_refused()) {
		fail_exc(o, CC_ERR_MEMORY_LIMIT, ev);
	} else if (PyErr_GivenExceptionMatches(ev, PyExc_MemoryError)) {
		fail_not_heap(o, ph, ev);
	} else {
		fail_exc(o, CC_ERR_GUEST, ev);
	}
	Py_XDECREF(et);
	Py_XDECREF(ev);
	Py_XDECREF(etb);
	PyErr_Clear();
}

/* ---- eval ---- */

static void guest_enter(void)
{
	cc_py_mem_eval_begin();
	cc_py_in_guest = true;
	cc_py_cap_fd = 0;
	cc_py_tools_eval_begin();
	PyObject *r = PyObject_CallNoArgs(h_prepare);
	if (!r)
		PyErr_Clear();
	Py_XDECREF(r);
	cc_py_stop_eval_begin();
}

static void guest_leave(struct cc_outcome *o)
{
	/* A tick that landed after the last bytecode left SIGINT tripped:
	 * consume it now, or it would interrupt the next eval at once. (Any
	 * other signal the guest armed a Python handler for runs here too.)
	 * The timer stays armed: from cc_py_in_guest = false a tick only disarms
	 * it, and the second check takes one that came in between. */
	if (PyErr_CheckSignals() < 0)
		PyErr_Clear();
	cc_error_kind stop = cc_py_stop_reason();
	cc_py_in_guest = false;
	if (PyErr_CheckSignals() < 0)
		PyErr_Clear();
	/* Past the deadline or the output cap, that is the outcome, whatever
	 * the guest made of its KeyboardInterrupt. */
	if (stop != CC_OK && (o->ok || o->kind != stop)) {
		outcome_reset(o);
		fail_stop(o, stop, NULL);
	}
	cc_py_mem_glue(false);
}

static PyObject *run_code(PyObject *code)
{
	PyObject *r = PyEval_EvalCode(code, main_dict, main_dict);

	/* top-level await: the code object is a coroutine function body */
	if (r && (((PyCodeObject *)code)->co_flags & CO_COROUTINE))
		Py_SETREF(r, PyObject_CallOneArg(h_run_coro, r));
	return r;
}

/* Code that looks like JavaScript and failed to parse as Python says
 * that it reached the Python runtime. */
static void syntax_hint(struct cc_outcome *o, const char *code, size_t len)
{
	if (!o->ok && o->kind == CC_ERR_SYNTAX && cc_looks_like_javascript(code, len))
		cc_outcome_append(o, CC_HINT_LOOKS_JAVASCRIPT);
}

static void py_eval(const char *code, size_t len, struct cc_outcome *o)
{
	PyObject *src = NULL, *parts = NULL, *value = NULL;

	/* python3 runs a file that starts with a UTF-8 byte order mark (its
	 * tokenizer skips one); compile() of a str calls it an invalid
	 * character */
	if (len >= 3 && !memcmp(code, "\xef\xbb\xbf", 3)) {
		code += 3;
		len -= 3;
	}
	guest_enter();
	/* Compiling is the engine's work, not the guest's data: it gets the
	 * headroom, so that a guest holding the whole heap can still run
	 * `del big` and go on. */
	cc_py_mem_glue(true);
	src = PyUnicode_DecodeUTF8(code, (Py_ssize_t)len, "strict");
	if (src && strcmp(cc_worker_eval_file, "<code>")) {
		PyObject *file = PyUnicode_FromString(cc_worker_eval_file);
		parts = file ? PyObject_CallFunctionObjArgs(h_compile, src, file, NULL) : NULL;
		Py_XDECREF(file);
	} else {
		parts = src ? PyObject_CallOneArg(h_compile, src) : NULL;
	}
	if (!parts || !PyTuple_Check(parts) || PyTuple_GET_SIZE(parts) != 2) {
		report(o, PH_PARSE);
		syntax_hint(o, code, len);
		goto out;
	}
	cc_py_mem_glue(false);
	/* (None, last) when the source is one expression: nothing to run first */
	value = PyTuple_GET_ITEM(parts, 0) == Py_None ? Py_NewRef(Py_None)
						      : run_code(PyTuple_GET_ITEM(parts, 0));
	if (value) {
		PyObject *last = PyTuple_GET_ITEM(parts, 1);
		Py_SETREF(value, last == Py_None ? Py_NewRef(Py_None) : run_code(last));
	}
	if (!value) {
		report(o, PH_RUN);
		/* figures drawn before the error are still shown */
		if (cc_py_display_finish(NULL) < 0)
			PyErr_Clear();
		goto out;
	}
	if (cc_py_display_finish(value) < 0) {
		report(o, PH_RUN);
		goto out;
	}
	/* Still under the deadline: conversion may run guest code (a tzinfo's
	 * utcoffset, an exception's __str__). */
	cc_py_mem_glue(true);
	int rc = cc_py_pack(value, &o->value, cc_worker_limits.max_result);
	if (rc == CC_PY_TOO_BIG) {
		char msg[128];
		snprintf(msg, sizeof(msg), "the result is larger than the limit of %llu bytes",
			 (unsigned long long)cc_worker_limits.max_result);
		cc_outcome_fail(o, CC_ERR_OUTPUT_LIMIT, "OutputLimitError", msg, NULL);
	} else if (rc == CC_PY_TOO_MANY) {
		char msg[160];
		snprintf(msg, sizeof(msg),
			 "the result has more than %zu values (one per 8 bytes of the %llu-byte "
			 "result cap)",
			 cc_value_node_budget(cc_worker_limits.max_result),
			 (unsigned long long)cc_worker_limits.max_result);
		cc_outcome_fail(o, CC_ERR_OUTPUT_LIMIT, "OutputLimitError", msg, NULL);
	} else if (rc < 0 && !(cc_worker_value_fallback && cc_py_fallback(value, o))) {
		report(o, PH_RESULT);
	} else if (rc < 0) {
		/* cc_py_fallback made the outcome */
	} else {
		o->ok = true;
	}
out:
	/* Dropped inside the guest window: a __del__ is guest code too. */
	Py_XDECREF(value);
	Py_XDECREF(parts);
	Py_XDECREF(src);
	guest_leave(o);
}

/* set_global runs no guest code of its own (converting host data and one
 * dict store), so it is not timed; the value counts against the heap cap
 * like anything else the guest holds. */
static void py_set_global(const char *name, const cc_value *v, struct cc_outcome *o)
{
	PyObject *obj;

	cc_py_mem_set_cap();
	obj = cc_py_from_value(v);
	if (!obj || PyDict_SetItemString(main_dict, name, obj) < 0) {
		Py_XDECREF(obj);
		report(o, PH_GLOBAL);
		cc_py_mem_glue(false);
		return;
	}
	Py_DECREF(obj);
	o->ok = true;
}

/* Host tools: py_tools.c. Like set_global, binding runs no guest code of
 * its own and is not timed. */
static void py_bind_tool(const char *name, struct cc_outcome *o)
{
	cc_py_mem_set_cap();
	if (cc_py_tools_bind(main_dict, name) < 0) {
		report(o, PH_GLOBAL);
		cc_py_mem_glue(false);
		return;
	}
	o->ok = true;
}

const struct cc_engine cc_engine_cpython = {
	.name = "python",
	.policy.seccomp_engine = CC_SC_PY,
	/* threading, numpy's OpenBLAS pool (one per core) and asyncio's
	 * default executor stay well under this */
	.policy.max_threads = 64,
	.policy.fs_policy = cc_py_fs_policy,
	.init = py_init,
	.eval = py_eval,
	.set_global = py_set_global,
	.bind_tool = py_bind_tool,
	.preload = cc_py_preload,
	.before_fork = cc_py_before_fork,
	.after_fork_parent = cc_py_after_fork_parent,
	.after_fork_child = cc_py_after_fork_child,
};

const struct cc_engine *const cc_worker_engine = &cc_engine_cpython;
/* The confinement (src/confine/confine.c) reads the same policy. */
const struct cc_engine_policy *const cc_worker_policy = &cc_engine_cpython.policy;
