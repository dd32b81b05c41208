/* src/python/: the extension codecage._codecage. It may include
 * src/common/ and the public headers only (setup.py compiles it with
 * those).
 *
 * codecage._codecage: the CPython extension over libcodecage (the Python
 * package's native half; python/codecage/ is the Python half). Internal
 * interfaces shared by its three files:
 *   module.c   the module, Budget, the error factory, and ForkServer and Pool
 *              (cc_forkserver, cc_pool: factories of Runtimes)
 *   runtime.c  Runtime (one cc_runtime) and PendingCall (one deferred tool call)
 *   values.c   Python objects <-> cc_value trees
 * Every function here needs the GIL unless it says otherwise. */
#ifndef CC_PY_EXT_H
#define CC_PY_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "codecage.h"

/* ---- values.c ---- */

/* A new cc_value for o (None, bool, int, float, str, bytes-like, list,
 * tuple, dict with str keys, datetime; numpy values through tolist()),
 * nesting at most CC_VALUE_MAX_DEPTH. *out is owned by the caller (NULL =
 * None). Returns 0, or -1 with a Python exception set: TypeError (a type
 * that cannot cross), ValueError (too deep, a bigint over 4300 digits,
 * duplicate keys after U+FFFD repair), MemoryError. */
int cc_py_to_value(PyObject *o, cc_value **out);

/* A new Python object for v (borrowed): None, bool, int, float, str,
 * bytes, list, dict, datetime (aware, UTC). NULL with an exception set:
 * OverflowError (a timestamp outside datetime's years 1-9999),
 * MemoryError. */
PyObject *cc_py_from_value(const cc_value *v);

/* Import the datetime C API. Returns 0 or -1 with an exception set. */
int cc_py_values_init(void);

/* ---- module.c ---- */

/* Raise the codecage exception for kind (its class comes from the Python
 * half, registered with _set_error_factory) with message. Returns NULL. */
PyObject *cc_py_raise(cc_error_kind kind, const char *message);
/* The same with a detail the Python half maps to a subclass ("busy":
 * RuntimeBusyError). */
PyObject *cc_py_raise_detail(cc_error_kind kind, const char *message, const char *detail);
/* Raise err's kind and message as cc_py_raise does, then clear err (its
 * message freed). Returns NULL. */
PyObject *cc_py_raise_error(cc_error *err);

/* Budget object: a cc_budget reference. */
typedef struct {
	PyObject_HEAD cc_budget *budget;
} cc_py_budget;
extern PyTypeObject cc_py_budget_type;

/* ForkServer (a cc_forkserver) and Pool (a cc_pool): their sessions come
 * out as Runtime objects. */
extern PyTypeObject cc_py_forkserver_type;
extern PyTypeObject cc_py_pool_type;

/* ---- deps.c ---- */

/* limits["dependencies"] and limits["deps"] into o (see deps.c); -1 with
 * an exception set. Freed by cc_py_deps_free (cc_py_options_free). */
int cc_py_deps(PyObject *limits, cc_options *o);
void cc_py_deps_free(cc_options *o);
/* script_dependencies(code) -> list of str (cc_script_dependencies). */
PyObject *cc_py_script_dependencies(PyObject *mod, PyObject *code);
/* {key, packages, cached, log} of d, or None. */
PyObject *cc_py_deps_dict(const cc_deps *d);

/* ---- runtime.c ---- */

extern PyTypeObject cc_py_runtime_type;
extern PyTypeObject cc_py_pending_type;

/* Fill *o from a language and sandbox name, a limits dict (the keys of
 * Runtime(); missing or None keys keep cc_options_init's defaults) and a
 * worker directory (borrowed: o->worker_dir points into it). limits'
 * "python_path" (a tuple of str) is borrowed into pp, an array of
 * CC_MAX_PYTHON_PATH the caller keeps while o is used. Returns 0, or
 * -1 with an exception set (InvalidInputError, TypeError). */
int cc_py_options(const char *lang, const char *sandbox, PyObject *limits, const char *worker_dir,
		  cc_options *o, const char **pp);
/* Limits keys beyond cc_limits: "scratch" (bytes, cc_options.scratch_bytes)
 * and "mounts" (a list of (host, guest, writable); o->mounts is then an
 * array the caller frees with cc_py_options_free once the runtime, fork
 * server or pool is made; the strings are borrowed from limits).
 * cc_py_options_free frees what cc_py_options allocated for o->mounts and
 * o->libraries. */
void cc_py_options_free(cc_options *o);

/* A new Runtime object over rt, which it takes ownership of (also on
 * failure: rt is then closed, with the GIL released). For sessions from
 * cc_forkserver_spawn and cc_pool_checkout. NULL with MemoryError set. */
PyObject *cc_py_runtime_adopt(cc_runtime *rt);

/* ---- net.c: the network policy ---- */

/* Fill *n from a spec dict (allow_net, test_resolve: lists of str;
 * max_requests, max_response_bytes, max_total_bytes, max_body_bytes: int;
 * timeout: float seconds; ca_file: str; on_request, on_response:
 * callables, only when with_hooks). The lists point into spec's strings.
 * Returns 0, or -1 with an exception set. Free with cc_py_net_options_free. */
int cc_py_net_options(PyObject *spec, cc_net_options *n, bool with_hooks);
void cc_py_net_options_free(cc_net_options *n);
/* _codecage.check_net(spec): InvalidInputError for a bad policy. */
PyObject *cc_py_net_check(PyObject *mod, PyObject *spec);
/* Give rt the policy (the GIL released while it applies). Returns 0, or -1
 * with an exception set. */
int cc_py_net_apply(cc_runtime *rt, PyObject *spec);

/* A confinement report as a dict (mode, applied, missing, landlock_abi,
 * seccomp_allowed); None for NULL. s is borrowed. */
PyObject *cc_py_sandbox_dict(const cc_sandbox_report *s);

#endif
