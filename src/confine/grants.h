/* File grants, worker side: what the init frame's "mounts" says, with the
 * supervisor's O_PATH descriptor of each (fd CC_GRANT_FD0 + i). The
 * mount namespace binds them (namespaces.c calls cc_grants_bind), Landlock
 * adds a rule per descriptor (landlock.c), and confine.c closes the
 * descriptors before any guest code runs. */
#ifndef CC_WORKER_GRANTS_H
#define CC_WORKER_GRANTS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "codecage.h"
#include "frame.h"
#include "value.h"

struct cc_worker_grant {
	char guest[CC_GRANT_PATH_MAX + 1];
	char host[PATH_MAX]; /* the supervisor's realpath; bound only if it is still fd */
	bool writable;
	/* false: fd is an O_PATH of host, bound (mount MS_BIND) once the
	 * same path opened here is that object; true: fd is a detached
	 * mount the supervisor idmapped (src/lib/idmap.c), attached as it
	 * is (move_mount) */
	bool attach;
	int fd; /* -1 once closed */
};

extern struct cc_worker_grant cc_worker_grants[CC_MAX_MOUNTS];
extern size_t cc_worker_n_grants;

/* Descriptors the supervisor passed (argv --grants=N); set before hygiene. */
extern size_t cc_worker_grant_fds;

/* Take the init frame's "mounts" (NULL: none): [[guest, host, writable,
 * attach], ...], exactly cc_worker_grant_fds of them. Errors:
 * protocol_violation. */
int cc_grants_parse(const cc_value *mounts, cc_error *err);

/* Mount each grant under newroot at its guest path (bound, or attached
 * when the supervisor made it a detached mount; read-only unless
 * writable), after checking it overlaps none of the engine's own paths
 * (ro[], n_ro; scratch) and that the mounted object is the supervisor's
 * descriptor (same device and inode), so a swapped path is refused.
 * Errors: invalid_input (overlap, a tree the bind may not show),
 * sandbox_unavailable (the object changed), internal. */
int cc_grants_bind(const char *newroot, const char *const *ro, size_t n_ro, const char *scratch,
		   cc_error *err);

/* In the new mount namespace, before the new root covers any host path:
 * open each bound grant's host path here and check it is the
 * supervisor's object (an attached one needs no path). Errors:
 * invalid_input (the worker's user cannot reach it), sandbox_unavailable
 * (the path changed). */
int cc_grants_open(cc_error *err);

/* The python_path grants (guest path under CC_PYTHON_PATH_GUEST), in
 * order: fills out[] with where the guest finds each (its guest path when
 * bound in the worker's mount namespace, else, in sandbox mode off, the
 * host path) and returns how many, at most cap. Pointers into
 * cc_worker_grants. */
size_t cc_grants_python_path(const char **out, size_t cap, bool bound);

/* Close every grant descriptor (idempotent). */
void cc_grants_close(void);

#endif
