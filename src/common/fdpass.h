/* Descriptors over unix sockets (SCM_RIGHTS): the monitor's listener, a
 * fork server's requests and replies; and reading a descriptor in full.
 * Raw OS side effects, no policy: the callers check what arrived. */
#ifndef CC_COMMON_FDPASS_H
#define CC_COMMON_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

/* Send len bytes of data (1..64) on sock in one sendmsg, carrying fd when
 * fd >= 0. flags are sendmsg's (MSG_NOSIGNAL is always added). Returns
 * sendmsg's result (-1 with errno). */
ssize_t cc_fd_send(int sock, const void *data, size_t len, int fd, int flags);

/* As cc_fd_send, carrying the nfds (0..8) descriptors in fds, borrowed.
 * EINVAL for more. */
ssize_t cc_fds_send(int sock, const void *data, size_t len, const int *fds, int nfds, int flags);

/* Receive up to len bytes with one recvmsg (MSG_CMSG_CLOEXEC added), and
 * every descriptor that came with them: up to max into fds, *nfds of them;
 * any beyond max are closed. *truncated is set when the kernel dropped
 * descriptors (MSG_CTRUNC: the receiver was at its RLIMIT_NOFILE). Returns
 * recvmsg's result (-1 with errno, 0 at end of file). */
ssize_t cc_fd_recv(int sock, void *data, size_t len, int *fds, int max, int *nfds, int *truncated,
		   int flags);

/* Read len bytes from fd into buf (len bytes of room), retrying reads that
 * EINTR interrupted, until len bytes came, end of file or an error.
 * Returns how many bytes came: fewer than len at end of file or on an
 * error (errno then says which). Neither closes fd nor checks what came. */
size_t cc_fd_read_full(int fd, void *buf, size_t len);

#endif
