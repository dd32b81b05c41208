/* --out DIR: copy what a run left in scratch to the host (the CLI's; the
 * flags it shares with `codecage mcp`, --mount among them, are flags.h's). */
#ifndef CC_CLI_FILES_H
#define CC_CLI_FILES_H

#include <stdint.h>
#include <stdio.h>

#include "codecage.h"
#include "term.h"

/* Copy every file and directory under the runtime's scratch (/tmp) into
 * dir (created if missing), keeping the tree; symlinks and other special
 * files are skipped with a note on diag (escaped on a terminal: the
 * names are the guest's). Never writes outside dir: each
 * listed path must be under /tmp, without '.' or '..' components, and
 * every path is resolved beneath dir with openat2 (RESOLVE_BENEATH, no
 * symlink in any component, no mount crossed), so a symlink dir already
 * held leads nowhere; a FIFO, device or hard link already in dir is
 * skipped with a note, never opened for writing. Returns the number of
 * files copied, or -1 with err (invalid_input: dir unusable; the kinds of
 * cc_runtime_list_files / read_file). The worker's word is bounded by
 * what scratch can hold: at most CC_CLI_OUT_MAX_ENTRIES entries (its
 * inodes; a worker that lists more is stopped, protocol_violation) and
 * max_bytes (its size, bytes) in all (files past it, sparse ones or a
 * lying worker's, are skipped with a note), so no worker can fill the
 * host's disk. */
#define CC_CLI_OUT_MAX_ENTRIES 4096
/* The file rel beneath the directory dfd (no symbolic link or ".." leads
 * out), opened for writing and emptied: a regular file with one link
 * (created if missing, mode 0644). A FIFO, device, socket or hard link
 * already there is refused (-1, errno EPERM), never opened for writing in
 * a way that blocks or writes through to another name. Returns the fd
 * (the caller closes it) or -1 with errno. */
int cc_cli_open_out(int dfd, const char *rel);
int cc_cli_copy_out(cc_runtime *rt, const char *dir, uint64_t max_bytes, const struct cc_term *diag,
		    cc_error *err);

#endif
