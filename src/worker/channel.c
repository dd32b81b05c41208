/* The worker's end of the channel (fd CC_CHANNEL_FD): frames in and out,
 * with read-ahead, mirroring the supervisor's src/lib/channel.c. Bytes and
 * frames only: what a frame means is for main.c (requests), tools.c
 * (replies, clocks during an eval) and output.c. A send that would block
 * hands incoming frames to the hook the worker core registers
 * (cc_worker_channel_init), so this file calls nothing above it. Every
 * failure ends the worker (worker_exit.h); it never prints. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "hygiene.h"
#include "worker_exit.h"
#include "worker_internal.h"

/* Reads and files one frame while a send is blocked (NULL: none yet). */
static void (*on_input)(void);

void cc_worker_channel_init(void (*incoming)(void))
{
	on_input = incoming;
}

/* ---- reading the channel, with read-ahead ----
 *
 * One read() takes what the socket holds (up to the buffer), so a small
 * frame arrives with one system call instead of two (header, payload).
 * Bytes kept here count as input waiting: every wait looks here before it
 * polls the socket. */
static struct {
	char buf[4096];
	size_t len, off;
} ra;

bool cc_worker_input_buffered(void)
{
	return ra.off < ra.len;
}

/* Read exactly n bytes. Returns 0, or -1 (errno 0: end of file). */
static int read_full(char *p, size_t n)
{
	while (n > 0) {
		if (ra.off < ra.len) {
			size_t k = ra.len - ra.off < n ? ra.len - ra.off : n;
			memcpy(p, ra.buf + ra.off, k);
			ra.off += k;
			p += k;
			n -= k;
			continue;
		}
		bool direct = n >= sizeof(ra.buf);
		ssize_t r = read(CC_CHANNEL_FD, direct ? p : ra.buf, direct ? n : sizeof(ra.buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = 0;
			return -1;
		}
		if (direct) {
			p += r;
			n -= (size_t)r;
		} else {
			ra.len = (size_t)r;
			ra.off = 0;
		}
	}
	return 0;
}

int cc_worker_read_frame(char **buf, size_t *len, size_t cap)
{
	unsigned char hdr[CC_FRAME_HEADER];
	*buf = NULL;
	if (read_full((char *)hdr, CC_FRAME_HEADER) < 0)
		return -1;
	size_t n = cc_le32(hdr);
	if (n > cap)
		return -2;
	char *b = malloc(n ? n : 1);
	if (!b || read_full(b, n) < 0) {
		free(b);
		return -1;
	}
	*buf = b;
	*len = n;
	return 0;
}

/* One look at the socket, without waiting: 1 when input (or end of file,
 * or an error) is there, 0 when nothing is. Reads for real, into the
 * read-ahead buffer: what arrives is taken by this one call (a peek would
 * need a second). End of file or an error is left for the read that
 * follows. */
static int look_once(void)
{
	ssize_t r = recv(CC_CHANNEL_FD, ra.buf, sizeof(ra.buf), MSG_DONTWAIT);
	if (r > 0) {
		ra.len = (size_t)r;
		ra.off = 0;
		return 1;
	}
	return r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

bool cc_worker_input_waiting(void)
{
	return cc_worker_input_buffered() || look_once();
}

bool cc_worker_spin_for_input(void)
{
	if (cc_worker_input_buffered())
		return true;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int64_t until = (int64_t)t0.tv_sec * 1000000000 + t0.tv_nsec + CC_SPIN_NS;
	for (;;) {
		if (look_once())
			return true;
		cc_cpu_relax();
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if ((int64_t)t0.tv_sec * 1000000000 + t0.tv_nsec >= until)
			return false;
	}
}

bool cc_worker_poll_input(int64_t deadline_ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int64_t left = deadline_ns - ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
	struct pollfd p = { CC_CHANNEL_FD, POLLIN, 0 };
	int n = poll(&p, 1, left > 0 ? (int)((left + 999999) / 1000000) : 0);
	if (n < 0 && errno != EINTR)
		_exit(CC_WORKER_EXIT_CHANNEL);
	return n > 0;
}

/* Every frame the worker sends goes through here. The supervisor answers
 * calls while we keep writing (more calls, output, the result), so a write
 * that would block first reads and files what the supervisor sent (the
 * on_input hook): otherwise both sides could block on full socket buffers
 * forever. */
void cc_worker_send_frame(const void *payload, size_t len)
{
	unsigned char hdr[CC_FRAME_HEADER];
	cc_frame_header(hdr, len);
	const char *parts[2] = { (const char *)hdr, payload };
	size_t sizes[2] = { 4, len };
	/* A small frame goes in one send(): header and payload together
	 * (sendmsg is not on the allow-list). */
	char one[1024];
	if (len <= sizeof(one) - CC_FRAME_HEADER) {
		memcpy(one, hdr, CC_FRAME_HEADER);
		memcpy(one + CC_FRAME_HEADER, payload, len);
		parts[0] = one;
		sizes[0] = CC_FRAME_HEADER + len;
		sizes[1] = 0;
	}
	for (int i = 0; i < 2; i++) {
		size_t off = 0;
		while (off < sizes[i]) {
			ssize_t n = send(CC_CHANNEL_FD, parts[i] + off, sizes[i] - off,
					 MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n > 0) {
				off += (size_t)n;
				continue;
			}
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
				_exit(CC_WORKER_EXIT_CHANNEL);
			struct pollfd p = { CC_CHANNEL_FD, POLLOUT | (on_input ? POLLIN : 0), 0 };
			if (poll(&p, 1, -1) < 0 && errno != EINTR)
				_exit(CC_WORKER_EXIT_CHANNEL);
			if (p.revents & POLLIN)
				on_input();
			else if (p.revents & (POLLHUP | POLLERR))
				_exit(CC_WORKER_EXIT_CHANNEL);
		}
	}
}
