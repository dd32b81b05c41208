/* Length-prefixed frames on a stream socket (DESIGN.md section 4):
 * a 4-byte little-endian payload length, then a MessagePack payload.
 * Constants and the header's encoding only: the supervisor reads and
 * writes frames in src/lib/channel.c, the worker in src/worker/channel.c
 * (both with read-ahead). */
#ifndef CC_COMMON_FRAME_H
#define CC_COMMON_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "codecage.h"
#include "cpu_relax.h" /* the CC_SPIN_NS loops */

#define CC_FRAME_HEADER 4
/* Headroom for a frame's envelope fields beyond its main payload. */
#define CC_FRAME_ENVELOPE (64 * 1024)
/* Before sleeping in poll(), both sides look for the next frame this long
 * (nanoseconds): a reply or request usually comes within microseconds, and
 * a sleep plus wake-up costs more than that on its own (bench/pingpong.c:
 * about 30 us a round trip on the 2-core test machine). Bounded, so an idle
 * wait costs at most this much CPU. */
#define CC_SPIN_NS 30000

/* Guest output travels in frames of at most this many data bytes. */
#define CC_OUTPUT_CHUNK (64 * 1024)

/* File grants: the worker receives grant i's O_PATH descriptor as fd
 * CC_GRANT_FD0 + i (argv --grants=N says how many), and closes them all
 * once confined. Guest paths are at most CC_GRANT_PATH_MAX bytes. */
#define CC_GRANT_FD0 4
/* Where the supervisor binds cc_options.python_path folders: read-only
 * grants at CC_PYTHON_PATH_GUEST "/N" (N = 0, 1, ... in order, after the
 * host's mounts, which may not be under it); the Python worker puts each
 * on sys.path. */
#define CC_PYTHON_PATH_GUEST "/codecage/python-path"

/* A template's "ready" may list the optional preload modules it dropped
 * (preload_skipped): at most this many entries of fewer than
 * CC_PRELOAD_SKIPPED_LEN bytes each. */
#define CC_PRELOAD_SKIPPED_MAX 32
#define CC_PRELOAD_SKIPPED_LEN 768
#define CC_GRANT_PATH_MAX 255
/* An eval frame's "file" (codecage's own guest-side code only, a name
 * starting "<codecage": src/worker/worker.h) is at most this many bytes. */
#define CC_EVAL_FILE_MAX 64

/* The host uid and gid a root host's guest has (nobody and nogroup on
 * Debian): the worker maps its namespace's ids to them (namespaces.c),
 * and the supervisor's idmapped grants show their owner as them
 * (src/lib/idmap.c). */
#define CC_HOST_NOBODY 65534
/* RLIMIT_FSIZE with a writable grant and neither max_file_size nor
 * scratch_bytes set. */
#define CC_GRANT_DEFAULT_FSIZE (1ull << 30)

/* The 4-byte little-endian length header of a frame of len bytes. */
static inline void cc_frame_header(unsigned char hdr[CC_FRAME_HEADER], size_t len)
{
	hdr[0] = len & 0xff;
	hdr[1] = (len >> 8) & 0xff;
	hdr[2] = (len >> 16) & 0xff;
	hdr[3] = (len >> 24) & 0xff;
}

static inline uint32_t cc_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#endif
