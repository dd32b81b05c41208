/* The worker's monitor and the child's side of talking to it
 * (src/confine/monitor.c). */
#ifndef CC_WORKER_MONITOR_H
#define CC_WORKER_MONITOR_H

#include <stdbool.h>
#include <sys/types.h>

#include "codecage.h"

/* Send fd (or, when fd < 0, no fd) with one byte over a unix socket.
 * Returns 0 or -1 (errno set). */
int cc_send_fd(int sock, int fd);

/* Receive what cc_send_fd sent: the fd (close-on-exec), or -1 when none
 * came or the peer is gone. */
int cc_recv_fd(int sock);

/* Become the monitor of child, talking to it over sock (never returns):
 * take the seccomp listener, drop every capability, install its own
 * filter, answer kill-list calls (EPERM until armed, then kill the child
 * and exit CC_SC_KILL_EXIT_BASE + index), and end the way the child
 * ended. */
__attribute__((noreturn)) void cc_monitor_run(pid_t child, int sock);

/* Child side. attach: remember the socket to the monitor (after the
 * clone). present: a monitor is there to hand a listener to. */
void cc_monitor_attach(int sock);
bool cc_monitor_present(void);

/* Hand the notify filter's listener to the monitor (fd < 0: there is none,
 * seccomp did not apply). Returns 0, or -1 with err (internal). */
int cc_monitor_give_listener(int fd, cc_error *err);

/* After the self-probes: from now on a kill-list call kills. Closes the
 * socket. Returns 0, or -1 with err (internal). */
int cc_monitor_arm(cc_error *err);

#endif
