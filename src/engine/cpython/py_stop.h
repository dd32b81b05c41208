/* The Python engine's soft stop (py_stop.c): the deadline's POSIX timer
 * and its real-time signal, SIGINT's and SIGUSR2's Python handlers (the
 * stop taken, held output and the supervisor's frames while a call waits),
 * and the stuck check that ends a worker caught in a long C call. The rest
 * of the engine (engine_py.c) calls these around each eval. */
#ifndef CC_PY_STOP_H
#define CC_PY_STOP_H

#include <Python.h>
#include <signal.h>

#include "error.h"

/* Guest code may run (an eval, set_global's code): output is forwarded
 * and a tick may ask for a stop. Set by engine_py.c around guest code. */
extern volatile sig_atomic_t cc_py_in_guest;
/* The stream (1 or 2) whose cap output went over during this eval, or 0. */
extern int cc_py_cap_fd;

/* The natives the glue binds (py_helper.c): SIGINT's handler during an
 * eval, SIGUSR2's (held output, the supervisor's clock), flush(). */
extern PyMethodDef cc_py_stop_method, cc_py_tick_method, cc_py_flush_method;

/* Once, at engine start: the signal's handler, the worker core's tick
 * hooks (cc_worker_output_due, cc_worker_calls_due), the timer. 0 or -1
 * with err (internal; sandbox_unavailable when no timer can be had). */
int cc_py_stop_init(cc_error *err);
/* Each eval: no stop asked, the timer at the deadline. */
void cc_py_stop_eval_begin(void);
/* An output cap was hit on fd: stop now, and keep stopping. */
void cc_py_stop_cap_hit(int fd);
/* The stop is being reported: no tick asks again; the timer is off. */
void cc_py_stop_off(void);
/* Why the eval must stop as of now (CC_OK: it need not). */
cc_error_kind cc_py_stop_reason(void);

#endif
