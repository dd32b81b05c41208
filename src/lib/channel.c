/* Frames over the nonblocking channel, with deadlines. Supervisor side.
 *
 * Every wait is a poll() on the socket and the worker's pidfd bounded by an
 * absolute CLOCK_MONOTONIC deadline, so a worker that stops reading, drips
 * bytes or hangs can delay the host by at most that deadline. */
#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "frame.h"
#include "supervisor.h"

int64_t cc_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sleep in poll() until the socket is ready for events (or hangs up),
 * other_fd (-1: none) is readable, the worker ends, or the deadline
 * passes. Returns 0 (socket), 1 (other_fd), or -1 with err: timeout,
 * worker_crashed, internal. */
static int wait_fds(struct cc_child *c, short events, int other_fd, int64_t deadline_ns,
		    cc_error *err)
{
	for (;;) {
		int64_t left = deadline_ns - cc_now_ns();
		if (left <= 0)
			return cc_fail(err, CC_ERR_TIMEOUT, "deadline passed");
		int ms = (int)((left + 999999) / 1000000);
		struct pollfd p[3] = { { c->sock, events, 0 },
				       { c->pidfd, POLLIN, 0 },
				       { other_fd, POLLIN, 0 } };
		int n = poll(p, 3, ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return cc_fail(err, CC_ERR_INTERNAL, "poll: %s", strerror(errno));
		if (p[0].revents & (events | POLLHUP | POLLERR))
			return 0; /* the read/write itself reports EOF or errors */
		if (p[2].revents & POLLIN)
			return 1;
		if (p[1].revents)
			return cc_fail(err, CC_ERR_WORKER_CRASHED, "the worker process ended");
	}
}

int cc_chan_wait(struct cc_child *c, short events, int64_t deadline_ns, cc_error *err)
{
	return wait_fds(c, events, -1, deadline_ns, err) < 0 ? -1 : 0;
}

int cc_chan_send(struct cc_child *c, const void *payload, size_t len, int64_t deadline_ns,
		 cc_error *err)
{
	if (len > UINT32_MAX)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "message of %zu bytes is too large", len);
	unsigned char hdr[CC_FRAME_HEADER];
	cc_frame_header(hdr, len);
	/* Header and payload in one system call. */
	struct iovec iov[2] = { { hdr, CC_FRAME_HEADER }, { (void *)payload, len } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	while (mh.msg_iovlen > 0) {
		ssize_t n = sendmsg(c->sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (cc_chan_wait(c, POLLOUT, deadline_ns, err) < 0)
				return -1;
			continue;
		}
		if (n < 0)
			return cc_fail(err, CC_ERR_WORKER_CRASHED, "sending to the worker: %s",
				       strerror(errno));
		while (n > 0 && mh.msg_iovlen > 0) {
			size_t k =
				(size_t)n < mh.msg_iov->iov_len ? (size_t)n : mh.msg_iov->iov_len;
			mh.msg_iov->iov_base = (char *)mh.msg_iov->iov_base + k;
			mh.msg_iov->iov_len -= k;
			n -= (ssize_t)k;
			if (mh.msg_iov->iov_len == 0) {
				mh.msg_iov++;
				mh.msg_iovlen--;
			}
		}
		while (mh.msg_iovlen > 0 && mh.msg_iov->iov_len == 0) {
			mh.msg_iov++;
			mh.msg_iovlen--;
		}
	}
	return 0;
}

/* Look for input without sleeping for up to CC_SPIN_NS (frame.h). The
 * look is a real read into the empty read-ahead buffer, so what arrives
 * costs no second system call; end of file or an error is left for the
 * read that follows (it sees the same again). */
static bool spin_for_input(struct cc_child *c)
{
	int64_t until = cc_now_ns() + CC_SPIN_NS;
	do {
		ssize_t r = recv(c->sock, c->ra, sizeof(c->ra), MSG_DONTWAIT);
		if (r > 0) {
			c->ra_len = (size_t)r;
			c->ra_off = 0;
			return true;
		}
		if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			return true;
		cc_cpu_relax();
	} while (cc_now_ns() < until);
	return false;
}

int cc_chan_wait_input(struct cc_child *c, int other_fd, int64_t deadline_ns, cc_error *err)
{
	/* Bytes already read ahead are input; the worker usually answers
	 * within microseconds: look before sleeping, as recv_exact does. */
	if (c->ra_off < c->ra_len || spin_for_input(c))
		return 0;
	return wait_fds(c, POLLIN, other_fd, deadline_ns, err);
}

/* Read exactly n bytes. Small reads go through the read-ahead buffer, so
 * a small frame (header and payload) costs one recv; large ones go
 * straight into p. */
static int recv_exact(struct cc_child *c, char *p, size_t n, int64_t deadline_ns, cc_error *err)
{
	size_t off = 0;
	while (off < n) {
		if (c->ra_off < c->ra_len) {
			size_t k = c->ra_len - c->ra_off;
			if (k > n - off)
				k = n - off;
			memcpy(p + off, c->ra + c->ra_off, k);
			c->ra_off += k;
			off += k;
			continue;
		}
		bool direct = n - off >= sizeof(c->ra);
		ssize_t r = recv(c->sock, direct ? p + off : c->ra,
				 direct ? n - off : sizeof(c->ra), MSG_DONTWAIT);
		if (r > 0) {
			if (direct) {
				off += (size_t)r;
			} else {
				c->ra_len = (size_t)r;
				c->ra_off = 0;
			}
			continue;
		}
		if (r == 0)
			return cc_fail(err, CC_ERR_WORKER_CRASHED, "the worker closed its channel");
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			/* the read-ahead buffer is empty here: the spin fills it */
			if (!spin_for_input(c) && cc_chan_wait(c, POLLIN, deadline_ns, err) < 0)
				return -1;
			continue;
		}
		return cc_fail(err, CC_ERR_WORKER_CRASHED, "reading from the worker: %s",
			       strerror(errno));
	}
	return 0;
}

int cc_chan_recv(struct cc_child *c, char **buf, size_t *len, size_t cap, int64_t deadline_ns,
		 cc_error *err)
{
	unsigned char hdr[4];
	*buf = NULL;
	if (recv_exact(c, (char *)hdr, 4, deadline_ns, err) < 0)
		return -1;
	size_t n = cc_le32(hdr);
	if (n > cap)
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
			       "the worker announced a %zu-byte frame; the cap is %zu", n, cap);
	char *b = malloc(n ? n : 1);
	if (!b)
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory for a %zu-byte frame", n);
	if (recv_exact(c, b, n, deadline_ns, err) < 0) {
		free(b);
		return -1;
	}
	*buf = b;
	*len = n;
	return 0;
}
