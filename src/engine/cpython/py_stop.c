/* The Python engine's soft stop (py_stop.h), engine_py.c's part that
 * owns the deadline's timer.
 *
 * A per-process POSIX timer on CLOCK_MONOTONIC, armed at the eval's
 * absolute deadline with a 50 ms period, sends a real-time signal to the
 * main thread (SIGEV_THREAD_ID: that is the thread running the guest, and
 * a signal there interrupts its sleeps and selects with EINTR, after which
 * CPython checks for signals). The handler only calls
 * PyErr_SetInterruptEx(SIGINT), which CPython documents as
 * async-signal-safe: it sets atomic "tripped" flags and the eval breaker,
 * exactly what CPython's own C signal handler does, and needs neither the
 * GIL nor a thread state. At the next bytecode boundary the main thread
 * runs SIGINT's Python handler, reset to stop_handler before every eval,
 * which raises KeyboardInterrupt. KeyboardInterrupt is a
 * BaseException, so `except Exception:` does not swallow it.
 * Py_AddPendingCall was not used: it takes a lock, so it is not safe to
 * call from a signal handler.
 * The handler is our own stop_handler, not default_int_handler, so the
 * worker can tell that the stop was taken.
 * A long C call that never checks signals (sum(range(10**12)),
 * ('{' + 'x' * 10**8).format()) cannot be stopped: CPython offers no way.
 * Once a stop is asked the timer ticks every STUCK_TICK_NS until it is
 * taken (then every STOP_REPEAT_NS again). When, at a tick after the
 * deadline, the main thread has spent STUCK_CPU_NS of CPU time since the
 * stop was asked and has not taken it (so about 6 ms after the deadline
 * on an idle machine; a pure-Python loop takes a stop within
 * microseconds), the worker ends itself (exit status
 * CC_WORKER_EXIT_STUCK, worker_exit.h) and the supervisor reports the
 * eval as a timeout with the runtime dead: a C call that was about to
 * return on its own after that (a 50 ms sort) costs the runtime, the
 * price of a deadline that holds to a few ms. A waiting thread spends no CPU
 * time, so a sleep or a slow tool is never taken for such a call, however
 * loaded the machine. A guest that replaced SIGINT's handler ends the
 * same way. A guest that catches every KeyboardInterrupt takes each stop
 * and is not ended here: the supervisor's SIGKILL after the grace period
 * is the real limit, for that and for a worker that lies. No SA_RESTART:
 * a wait without a timeout (threading.Event().wait(), a lock) must return
 * EINTR so CPython runs the handler; the worker core's own I/O retries on
 * EINTR. */
#include <Python.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "py_fork.h"
#include "py_stop.h"
#include "py_value.h"
#include "worker.h"
#include "worker_exit.h"

volatile sig_atomic_t cc_py_in_guest;
int cc_py_cap_fd;

/* Soft-stop repeat period, ns: a guest that catches one KeyboardInterrupt
 * gets another soon after, until the eval returns or the supervisor's
 * grace period ends in SIGKILL. */
#define STOP_REPEAT_NS (50 * 1000000LL)
/* While a stop is asked and not taken, the timer ticks this often (ns), so
 * a long C call is found within a tick of STUCK_CPU_NS (below). */
#define STUCK_TICK_NS (1 * 1000000LL)
#define STUCK_CPU_NS (5 * 1000000LL)
static timer_t stop_timer;
static volatile sig_atomic_t output_tick; /* the next tick is for held output */
static volatile sig_atomic_t stop_asked;  /* a stop is pending, not taken */
static volatile sig_atomic_t stop_done;	  /* fail_stop is reporting it: no more ticks */
static int64_t stop_asked_cpu;		  /* the main thread's CPU ns then */

static void stop_timer_arm(int64_t abs_ns);
/* When the timer's first tick is due (abs ns), 0 when disarmed: what the
 * last stop_timer_arm asked for. Written by the signal handler too, on
 * this thread (the timer is aimed at it). */
static volatile int64_t timer_at;
static void stop_timer_arm_every(int64_t abs_ns, int64_t period_ns);

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void on_stop_signal(int sig)
{
	int saved = errno;

	(void)sig;
	/* Left armed after an eval (one system call fewer per eval): a tick
	 * with no guest running, or one queued before fail_stop disarmed the
	 * timer, disarms it and does nothing else. */
	if (!cc_py_in_guest || stop_done) {
		stop_timer_arm(0);
		errno = saved;
		return;
	}
	/* An early tick that output_due asked for: SIGUSR2's Python handler
	 * (output_tick_handler) sends the held output at the next bytecode
	 * boundary, and the timer goes back to the deadline. */
	if (output_tick) {
		output_tick = 0;
		PyErr_SetInterruptEx(SIGUSR2);
		if (!stop_asked && now_ns() < cc_worker_deadline_ns()) {
			stop_timer_arm(cc_worker_deadline_ns());
			errno = saved;
			return;
		}
	}
	/* The deadline moved later (a "clock" frame: a tool call waited for
	 * approval) after the timer was armed: no stop yet, tick again then.
	 * The output cap's stop (stop_reason set) is never deferred. */
	int64_t deadline = cc_worker_deadline_ns();
	if (!stop_asked && cc_worker_stop_reason() == CC_OK && deadline > 0 &&
	    now_ns() < deadline) {
		stop_timer_arm(deadline);
		errno = saved;
		return;
	}
	int64_t cpu = thread_cpu_ns();
	if (!stop_asked) {
		stop_asked = 1;
		stop_asked_cpu = cpu;
		stop_timer_arm_every(now_ns() + STUCK_TICK_NS, STUCK_TICK_NS);
	} else if (cpu - stop_asked_cpu >= STUCK_CPU_NS && cc_worker_deadline_ns() > 0 &&
		   now_ns() >= cc_worker_deadline_ns()) {
		_exit(CC_WORKER_EXIT_STUCK); /* async-signal-safe; see above */
	}
	PyErr_SetInterruptEx(SIGINT);
	errno = saved;
}

/* SIGINT's Python handler during an eval: default_int_handler's
 * KeyboardInterrupt, and the stop counts as taken: the timer goes back to
 * its STOP_REPEAT_NS period (armed before stop_asked is cleared, so a tick
 * in between finds the stop still asked and only asks it again). */
static PyObject *stop_handler(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
	(void)self;
	(void)args;
	(void)n;
	if (stop_asked)
		stop_timer_arm(now_ns() + STOP_REPEAT_NS);
	stop_asked = 0;
	PyErr_SetNone(PyExc_KeyboardInterrupt);
	return NULL;
}

PyMethodDef cc_py_stop_method = { "stop_handler", _PyCFunction_CAST(stop_handler), METH_FASTCALL,
				  NULL };

/* Streaming: output is held (output.c) and the guest may now sleep or
 * compute without writing: tick early, at due_ns, so it still goes out.
 * Not after a cap was hit, nor past the deadline, which own the timer. */
static void output_due(int64_t due_ns)
{
	if (!cc_py_in_guest || cc_py_cap_fd || stop_asked || due_ns >= cc_worker_deadline_ns())
		return;
	output_tick = 1;
	stop_timer_arm(due_ns);
}

/* cc_worker_calls_due: the same early tick as output_due's, unless one
 * is already due no later (its handler asks again when it runs). */
static void calls_due(int64_t due_ns)
{
	int64_t at = timer_at;
	if (output_tick && at > now_ns() && at <= due_ns)
		return;
	output_due(due_ns);
}

/* SIGUSR2's Python handler during an eval (prepare() installs it): send
 * what output.c holds, if its gap has passed, and take what the
 * supervisor sent while a call is unanswered (cc_worker_calls_tick): a
 * "clock" frame that moved the deadline earlier than the timer (an
 * approval timed out) arms the stop for it now. A guest that replaces it
 * only delays its own output to the next flush point or the eval's end,
 * and its stop to the deadline the worker last knew, or the supervisor's
 * SIGKILL. */
static PyObject *output_tick_handler(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
	(void)self;
	(void)args;
	(void)n;
	if (cc_py_in_guest) {
		cc_worker_output_tick();
		cc_worker_calls_tick();
		int64_t deadline = cc_worker_deadline_ns(), at = timer_at;
		if (deadline > 0 && !stop_asked && (at == 0 || deadline < at))
			stop_timer_arm(deadline);
	}
	Py_RETURN_NONE;
}

/* flush() of sys.stdout / sys.stderr: an explicit flush point. */
static PyObject *flush_out(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
	(void)self;
	(void)args;
	(void)n;
	if (cc_py_in_guest)
		cc_worker_output_flush_point();
	Py_RETURN_NONE;
}

PyMethodDef cc_py_tick_method = { "output_tick", _PyCFunction_CAST(output_tick_handler),
				  METH_FASTCALL, NULL };
PyMethodDef cc_py_flush_method = { "flush_out", _PyCFunction_CAST(flush_out), METH_FASTCALL, NULL };

/* First tick at abs_ns (CLOCK_MONOTONIC), then every period_ns (under a
 * second); abs_ns <= 0 disarms. A time already past fires at once.
 * timer_settime is async-signal-safe: on_stop_signal calls this too. */
static void stop_timer_arm_every(int64_t abs_ns, int64_t period_ns)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	timer_at = abs_ns > 0 ? abs_ns : 0;
	if (abs_ns > 0) {
		its.it_value.tv_sec = abs_ns / 1000000000;
		its.it_value.tv_nsec = abs_ns % 1000000000;
		its.it_interval.tv_nsec = period_ns;
	}
	timer_settime(stop_timer, TIMER_ABSTIME, &its, NULL);
}

/* The same, then every STOP_REPEAT_NS. */
static void stop_timer_arm(int64_t abs_ns)
{
	stop_timer_arm_every(abs_ns, STOP_REPEAT_NS);
}

int cc_py_stop_init(cc_error *err)
{
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal; /* no SA_RESTART: waits see EINTR */
	sigfillset(&sa.sa_mask);
	if (sigaction(SIGRTMIN, &sa, NULL) < 0)
		return cc_fail(err, CC_ERR_INTERNAL, "starting CPython: sigaction: %s",
			       strerror(errno));
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	cc_worker_output_due = output_due;
	cc_worker_calls_due = calls_due;
	return cc_py_stop_timer_create(err);
}

/* POSIX timers are not inherited over fork: a forked session makes its
 * own, aimed at its own main thread. */
int cc_py_stop_timer_create(cc_error *err)
{
	struct sigevent sev = { 0 };

	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGRTMIN;
	sev._sigev_un._tid = gettid(); /* glibc lacks sigev_notify_thread_id */
	timer_at = 0;		       /* a new timer is disarmed */
	if (timer_create(CLOCK_MONOTONIC, &sev, &stop_timer) == 0)
		return 0;
	if (errno == EAGAIN)
		return cc_fail(
			err, CC_ERR_SANDBOX_UNAVAILABLE,
			"starting CPython: no POSIX timer for the deadline's soft stop: the "
			"queued signals and timers its user may hold (RLIMIT_SIGPENDING) are "
			"used up; in a fork server that quota is shared by all its sessions: "
			"close some, or start another fork server");
	return cc_fail(err, CC_ERR_INTERNAL, "starting CPython: timer_create: %s", strerror(errno));
}

/* The stop reason as of now: cc_worker_stop_reason() alone only reports
 * what the last cc_worker_should_stop() call found. */
cc_error_kind cc_py_stop_reason(void)
{
	cc_worker_should_stop();
	return cc_worker_stop_reason();
}

PyObject *cc_py_raise_stop(void)
{
	PyErr_SetString(PyExc_KeyboardInterrupt, cc_py_stop_reason() == CC_ERR_OUTPUT_LIMIT
							 ? "codecage: output limit reached"
							 : "codecage: time limit reached");
	return NULL;
}

/* guest_enter's part: no stop asked yet, and the timer at the deadline.
 * A timer still armed from an earlier eval for a time that is yet to come
 * and no later than this deadline is left alone (no system call): its tick
 * finds the deadline ahead and moves the timer there (on_stop_signal), so
 * the stop is never late, at most one tick early. */
void cc_py_stop_eval_begin(void)
{
	stop_asked = 0;
	stop_done = 0;
	output_tick = 0;
	int64_t deadline = cc_worker_deadline_ns(), at = timer_at;
	if (deadline > 0 && !(at > now_ns() && at <= deadline))
		stop_timer_arm(deadline);
}

/* An output cap was hit: stop now, and keep stopping as the deadline does. */
void cc_py_stop_cap_hit(int fd)
{
	output_tick = 0;
	stop_timer_arm(now_ns() + STOP_REPEAT_NS);
	cc_py_cap_fd = fd;
}

/* fail_stop is reporting the stop: a tick already queued must not ask
 * again, nor re-arm; the timer is off. */
void cc_py_stop_off(void)
{
	stop_done = 1;
	stop_timer_arm(0);
}
