/* Descriptors over unix sockets, reading a descriptor in full (fdpass.h). */
#include "fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Room for a few descriptors: more than any caller expects, so extras
 * arrive (and are closed) rather than truncate. */
#define CC_FD_MAX 8

ssize_t cc_fds_send(int sock, const void *data, size_t len, const int *fds, int nfds, int flags)
{
	struct iovec iov = { (void *)data, len };
	union {
		char buf[CMSG_SPACE(sizeof(int) * CC_FD_MAX)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (nfds < 0 || nfds > CC_FD_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (nfds > 0) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	}
	return sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
}

ssize_t cc_fd_send(int sock, const void *data, size_t len, int fd, int flags)
{
	return cc_fds_send(sock, data, len, &fd, fd >= 0 ? 1 : 0, flags);
}

ssize_t cc_fd_recv(int sock, void *data, size_t len, int *fds, int max, int *nfds, int *truncated,
		   int flags)
{
	struct iovec iov = { data, len };
	union {
		char buf[CMSG_SPACE(sizeof(int) * CC_FD_MAX)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	*nfds = 0;
	*truncated = 0;
	ssize_t n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return n;
	*truncated = (mh.msg_flags & MSG_CTRUNC) != 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*nfds < max)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	return n;
}

size_t cc_fd_read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t r = read(fd, (char *)buf + got, len - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}
