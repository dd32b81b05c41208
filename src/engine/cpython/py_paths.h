/* The Python worker's paths (py_paths.c). */
#ifndef CC_PY_PATHS_H
#define CC_PY_PATHS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "confine.h"

/* The writable cache folder the confinement provides (matplotlib's). */
#define PY_CACHE "/run/codecage"

/* config->home from CC_PY_STDLIB (no landmark search). 0, or -1 when
 * Python is out of memory. */
int cc_py_config_home(PyConfig *config);

/* config->module_search_paths: the stdlib, lib-dynload, the python_path
 * grants in order, then dist-packages. 0, or -1 when out of memory. */
int cc_py_search_paths(PyConfig *config);

/* Fills *pol with what the Python worker may read (static strings). */
void cc_py_fs_policy(struct cc_fs_policy *pol);

#endif
