/* Frame I/O shared by supervisor and worker. */
#include "frame.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

int cc_frame_write(int fd, const void *payload, size_t len)
{
	if (len > UINT32_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	unsigned char hdr[CC_FRAME_HEADER];
	cc_frame_header(hdr, len);
	struct iovec iov[2] = { { hdr, 4 }, { (void *)payload, len } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
	size_t total = 4 + len;
	while (total > 0) {
		ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		total -= (size_t)n;
		while (n > 0 && msg.msg_iovlen > 0) {
			if ((size_t)n >= msg.msg_iov[0].iov_len) {
				n -= (ssize_t)msg.msg_iov[0].iov_len;
				msg.msg_iov++;
				msg.msg_iovlen--;
			} else {
				msg.msg_iov[0].iov_base = (char *)msg.msg_iov[0].iov_base + n;
				msg.msg_iov[0].iov_len -= (size_t)n;
				n = 0;
			}
		}
	}
	return 0;
}

/* Read exactly n bytes (blocking, EINTR retried). Returns 0, or -1 with
 * errno set (errno 0: EOF before n bytes). */
static int read_full(int fd, void *buf, size_t n)
{
	char *p = buf;
	while (n > 0) {
		ssize_t r = read(fd, p, n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0) {
			errno = 0;
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int cc_frame_read(int fd, char **buf, size_t *len, size_t cap)
{
	unsigned char hdr[4];
	*buf = NULL;
	if (read_full(fd, hdr, 4) < 0)
		return -1;
	size_t n = cc_le32(hdr);
	if (n > cap)
		return -2;
	char *b = malloc(n ? n : 1);
	if (!b)
		return -1;
	if (read_full(fd, b, n) < 0) {
		free(b);
		return -1;
	}
	*buf = b;
	*len = n;
	return 0;
}
