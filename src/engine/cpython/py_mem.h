/* The Python engine's heap accounting (py_mem.c). Worker side only. */
#ifndef CC_WORKER_PY_MEM_H
#define CC_WORKER_PY_MEM_H

#include <stdbool.h>

/* After Py_PreInitialize (which could otherwise replace them) and before
 * any other Python allocation: the counting allocators, capped at
 * cc_worker_limits.max_memory. */
void cc_py_mem_install(void);

/* The cap again from cc_worker_limits.max_memory (0: none). */
void cc_py_mem_set_cap(void);

/* An eval begins: the cap, no glue headroom, nothing refused yet. */
void cc_py_mem_eval_begin(void);

/* on: the engine itself is reporting an outcome (formatting a traceback,
 * converting a result) and gets 16 MiB of headroom over the cap, so that
 * reporting a MemoryError never fails for want of what the guest used. */
void cc_py_mem_glue(bool on);

/* Whether an allocation was refused (the cap, or libc) since the eval
 * began: only then is a MemoryError the memory limit. */
bool cc_py_mem_refused(void);

#endif
