/* Files between evals, worker side (files.c): each fills o with a result
 * (write: null; read: bytes; list: an array of {path, size, mtime, dir}) or
 * an error (output_limit for a cap) whose type names the cause
 * (FileNotFoundError, PermissionError, OSError, ...). Refusals travel as
 * guest_error; the supervisor reports them as invalid_input. */
#ifndef CC_WORKER_FILES_H
#define CC_WORKER_FILES_H

#include <stddef.h>
#include <stdint.h>

#include "worker.h"

void cc_files_write(const char *path, const char *data, size_t len, struct cc_outcome *o);
void cc_files_read(const char *path, uint64_t max, struct cc_outcome *o);
void cc_files_list(const char *path, struct cc_outcome *o);

#endif
