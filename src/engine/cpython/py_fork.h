/* The Python engine's fork-server hooks (src/engine/cpython/py_fork.c); see the
 * fork-server members of struct cc_engine in worker.h. */
#ifndef CC_WORKER_PY_FORK_H
#define CC_WORKER_PY_FORK_H

#include "codecage.h"

int cc_py_preload(const char *modules, cc_error *err);
void cc_py_before_fork(void);
void cc_py_after_fork_parent(void);
int cc_py_after_fork_child(cc_error *err);

/* engine_py.c: the soft-stop timer for the calling (main) thread.
 * Errors: internal. */
int cc_py_stop_timer_create(cc_error *err);

#endif
