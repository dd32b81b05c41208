/* A stdio upstream's process and its input (upstream_pipe.c): started
 * with a parent-death signal, fed through a bounded queue that a writer
 * thread of its own drains, so no other thread ever waits on the
 * upstream's stdin. upstream.c reads its stdout.
 *
 * Threads: every function is thread-safe except up_pipe_free, which must
 * be the last call on p. */
#ifndef CC_MCP_UPSTREAM_PIPE_H
#define CC_MCP_UPSTREAM_PIPE_H

#include <stddef.h>
#include <sys/types.h>

struct up_pipe;

/* Start argv (argv[0] looked up in PATH when it has no '/'; borrowed) with
 * its stdin and stdout as pipes and the rest of our descriptors closed
 * (O_CLOEXEC), our environment, an empty signal mask and default signal
 * dispositions. It gets SIGKILL when this process dies, however it dies
 * (PR_SET_PDEATHSIG, set between fork and exec by the writer thread, which
 * lives until up_pipe_free). Returns 0 with *out a new pipe, or -1 with
 * *why an owned message ("cannot run 'X': REASON"; NULL when out of
 * memory). */
int up_pipe_start(char *const *argv, struct up_pipe **out, char **why);

/* The process id, and its stdout (ours to read until up_pipe_free). */
pid_t up_pipe_pid(const struct up_pipe *p);
int up_pipe_out_fd(const struct up_pipe *p);

/* Queue text[0..n) (copied) to be written whole, after everything queued
 * before it, unless the queue would then hold more than cap bytes.
 * Returns 0, or -1 with nothing queued: over cap, the upstream closed its
 * stdin, or out of memory. Never waits for the upstream. */
int up_pipe_send(struct up_pipe *p, const char *text, size_t n, size_t cap);

/* Bytes waiting to be written (for messages). */
size_t up_pipe_queued(struct up_pipe *p);

/* SIGKILL the process, unless it was reaped already. */
void up_pipe_kill(struct up_pipe *p);

/* SIGKILL the process (it may have exited already) and reap it: returns
 * its wait status. Once only (upstream.c's reader calls it). */
int up_pipe_reap(struct up_pipe *p);

/* Stop the writer thread, drop the queue, close the descriptors, free.
 * The process must have been reaped (up_pipe_reap). NULL is fine. */
void up_pipe_free(struct up_pipe *p);

#endif
