/* The Python engine in a fork server: what the template imports before
 * any session exists, and what each forked session must renew.
 *
 * What sessions of one template still share, on purpose (SECURITY.md):
 * the address-space layout (one ASLR draw per template) and str/bytes
 * hash randomisation (the secret is fixed when the interpreter starts and
 * every interned string carries a hash made with it). What they do not:
 * the `random` module (CPython reseeds it after fork through
 * os.register_at_fork), numpy's global RandomState (reseeded here), the
 * stop timer (POSIX timers are not inherited). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "py_fork.h"
#include "py_value.h"
#include "worker.h"

/* A module name as Python spells it: identifiers joined by dots. */
static bool module_name_ok(const char *s, size_t n)
{
	bool start = true;
	if (n == 0 || n > 200)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '.' && !start) {
			start = true;
			continue;
		}
		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (!start && c >= '0' && c <= '9')))
			return false;
		start = false;
	}
	return !start;
}

static int import_one(const char *name, bool optional, cc_error *err)
{
	/* matplotlib: pyplot too, with the Agg backend and its font list
	 * built (py_helper.c's import hook), so a session draws at once. */
	PyObject *m =
		PyImport_ImportModule(strcmp(name, "matplotlib") ? name : "matplotlib.pyplot");
	if (m) {
		Py_DECREF(m);
		return 0;
	}
	PyObject *type = NULL, *exc = NULL, *tb = NULL;
	PyErr_Fetch(&type, &exc, &tb);
	PyErr_NormalizeException(&type, &exc, &tb);
	Py_XDECREF(type);
	Py_XDECREF(tb);
	PyObject *s = exc ? PyObject_Str(exc) : NULL;
	char *why = s ? cc_py_utf8(s, 300) : NULL;
	PyErr_Clear();
	Py_XDECREF(s);
	const char *tname = exc ? Py_TYPE(exc)->tp_name : "error";
	if (optional) { /* dropped, with the reason for "ready" */
		size_t k = cc_worker_n_preload_skipped;
		if (k < CC_PRELOAD_SKIPPED_MAX) {
			snprintf(cc_worker_preload_skipped[k], CC_PRELOAD_SKIPPED_LEN,
				 "%s: %.100s%s%s", name, tname, why ? ": " : "", why ? why : "");
			cc_worker_n_preload_skipped = k + 1;
		}
		Py_XDECREF(exc);
		free(why);
		return 0;
	}
	cc_fail(err, CC_ERR_INVALID_INPUT,
		"preloading module '%s' failed: %s%s%s; remove it from the preload list or "
		"mark it optional with a trailing '?'",
		name, tname, why ? ": " : "", why ? why : "");
	Py_XDECREF(exc);
	free(why);
	return -1;
}

int cc_py_preload(const char *modules, cc_error *err)
{
	const char *p = modules;
	while (*p) {
		size_t n = strcspn(p, ",");
		bool optional = n > 0 && p[n - 1] == '?';
		size_t len = optional ? n - 1 : n;
		char name[201];
		if (!module_name_ok(p, len))
			return cc_fail(err, CC_ERR_INVALID_INPUT,
				       "preload list: '%.*s' is not a module name; give "
				       "comma-separated names such as \"json,numpy?\"",
				       (int)(n > 60 ? 60 : n), p);
		memcpy(name, p, len);
		name[len] = 0;
		if (import_one(name, optional, err) < 0)
			return -1;
		p += n;
		if (*p == ',')
			p++;
	}
	/* What the glue imports only when it formats a traceback (py_helper.c)
	 * is imported here, so a forked session formats its first one at
	 * once, as spawned workers used to. Optional: a failure only makes
	 * that first traceback slower. */
	PyObject *tb = PyImport_ImportModule("traceback");
	if (!tb)
		PyErr_Clear();
	Py_XDECREF(tb);
	/* Everything alive now moves to the permanent generation: the
	 * collector in a session never walks (and so never writes to) the
	 * template's objects, which keeps their pages shared. */
	PyObject *gc = PyImport_ImportModule("gc");
	PyObject *r = gc ? PyObject_CallMethod(gc, "collect", NULL) : NULL;
	Py_XDECREF(r);
	r = gc ? PyObject_CallMethod(gc, "freeze", NULL) : NULL;
	Py_XDECREF(gc);
	if (!r) {
		PyErr_Clear();
		return cc_fail(err, CC_ERR_INTERNAL, "gc.freeze() failed in the template");
	}
	Py_DECREF(r);
	return 0;
}

void cc_py_before_fork(void)
{
	PyOS_BeforeFork();
}

void cc_py_after_fork_parent(void)
{
	PyOS_AfterFork_Parent();
}

int cc_py_after_fork_child(cc_error *err)
{
	/* Runs os.register_at_fork's hooks: `random` reseeds itself. */
	PyOS_AfterFork_Child();
	if (cc_py_stop_timer_create(err) < 0)
		return -1;
	/* numpy's legacy global RandomState does not reseed after fork. */
	PyObject *name = PyUnicode_FromString("numpy.random");
	PyObject *mod = name ? PyImport_GetModule(name) : NULL;
	Py_XDECREF(name);
	if (mod) {
		PyObject *r = PyObject_CallMethod(mod, "seed", NULL);
		Py_DECREF(mod);
		if (!r) {
			PyErr_Clear();
			return cc_fail(err, CC_ERR_INTERNAL,
				       "reseeding numpy.random in a forked session failed");
		}
		Py_DECREF(r);
	}
	PyErr_Clear();
	return 0;
}
