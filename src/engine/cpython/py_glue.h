/* The Python engine's glue: Python source in py_helper.c, compiled and
 * marshalled at build time by cc-py-freeze (py_freeze.c) into the
 * generated py_glue_frozen.c, which the worker links. The worker never
 * compiles the glue: it unmarshals it (cc_py_glue_exec). */
#ifndef CC_WORKER_PY_GLUE_H
#define CC_WORKER_PY_GLUE_H

#include <Python.h>
#include <stddef.h>

/* py_helper.c: the sources, NUL-terminated; only cc-py-freeze links them. */
extern const char cc_py_helper_src[];  /* engine_py.c: compile, tracebacks, asyncio */
extern const char cc_py_display_src[]; /* py_display.c: display(), figures */
extern const char cc_py_tools_src[];   /* py_tools.c: tools, atools */

/* One source's code object as marshal data (size bytes). */
struct cc_py_glue {
	const char *name;
	const unsigned char *code;
	size_t size;
};

/* py_glue_frozen.c (generated): the three, and the magic number of the
 * CPython that compiled them (PyImport_GetMagicNumber). */
extern const struct cc_py_glue cc_py_glue_helper, cc_py_glue_display, cc_py_glue_tools;
extern const long cc_py_glue_magic;

/* Runs g's module code in ns (a dict; borrowed), which the caller has
 * given __builtins__, __name__ and the natives the glue calls. Returns 0,
 * or -1 with a Python exception set: RuntimeError when the glue was
 * frozen by a CPython of another bytecode version (rebuild the worker),
 * MemoryError, or whatever the glue's top level raised. */
int cc_py_glue_exec(const struct cc_py_glue *g, PyObject *ns);

#endif
