/* Displays from a Python guest: py_display.c. */
#ifndef CC_WORKER_PY_DISPLAY_H
#define CC_WORKER_PY_DISPLAY_H

#include <Python.h>

/* After the engine's glue: the display() builtin, the pyplot.show patch.
 * Returns 0, or -1 with a Python exception set. */
int cc_py_display_setup(void);

/* At the end of an eval, inside the guest window (it runs guest code: a
 * figure's artists, a DataFrame's repr): value's HTML table when it is a
 * pandas DataFrame or Series (value may be NULL), then every open
 * matplotlib figure, closed afterwards. Returns 0, or -1 with the guest's
 * exception set. */
int cc_py_display_finish(PyObject *value);

#endif
