/* Files between evals (cc_runtime_write_file / read_file / list_files),
 * worker side: the "fwrite", "fread" and "flist" requests, served with
 * ordinary system calls inside the worker's confined view, so the mount
 * namespace, Landlock and seccomp bind them exactly as they bind the
 * guest. A path must be absolute, free of "." and ".." components, and
 * (after following any symlinks in its directories) lie in scratch or in a
 * grant: a writable one for writes. The last component is never followed. */
#include "files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "fdpass.h"
#include "grants.h"
#include "message.h"
#include "value.h"
#include "worker.h"

#define CC_LIST_MAX 10000

static bool beneath(const char *a, const char *b)
{
	size_t n = strlen(b);
	return !strncmp(a, b, n) && (a[n] == 0 || a[n] == '/');
}

/* Which tree holds real (a resolved path): 1 writable, 0 read-only, -1
 * none. */
static int tree_of(const char *real)
{
	if (cc_worker_limits.scratch_bytes > 0 && beneath(real, "/tmp"))
		return 1;
	for (size_t i = 0; i < cc_worker_n_grants; i++)
		if (beneath(real, cc_worker_grants[i].guest))
			return cc_worker_grants[i].writable ? 1 : 0;
	return -1;
}

static const char *where_writable(void)
{
	return "writable places are scratch (/tmp, given by RuntimeConfig(scratch=BYTES), "
	       "cc_options.scratch_bytes, --scratch MIB) and mounts marked writable "
	       "(Mount(..., writable=True), HOST:GUEST:rw)";
}

static int fail(struct cc_outcome *o, const char *type, const char *fmt, const char *path,
		const char *extra)
{
	char *msg = NULL;
	if (asprintf(&msg, fmt, path, extra ? extra : "") < 0)
		msg = NULL;
	cc_outcome_fail(o, CC_ERR_GUEST, type, msg ? msg : path, NULL);
	free(msg);
	return -1;
}

/* path (as the guest gave it) is in no tree: a PermissionError naming the
 * places a read (for a write, a write) may use. Returns -1. */
static int fail_outside(struct cc_outcome *o, const char *path, bool write)
{
	if (write)
		return fail(o, "PermissionError", "%s: not in scratch or a writable mount; %s",
			    path, where_writable());
	return fail(o, "PermissionError",
		    "%s: not in scratch (/tmp) or a mount; only those can be read or listed%s",
		    path, NULL);
}

/* Check path; on success real is it with its directory resolved (the
 * last component as given, never followed) and *ok_tree says whether that
 * tree is writable (1) or read-only (0). */
static int check_path(const char *path, bool write, char *real, int *ok_tree, struct cc_outcome *o)
{
	size_t n = strlen(path);
	if (path[0] != '/' || n >= PATH_MAX - 1)
		return fail(o, "ValueError", "%s: the path must be absolute%s", path, NULL);
	for (const char *p = path; (p = strchr(p, '/')); p++) {
		size_t len = strcspn(p + 1, "/");
		if ((len == 1 && p[1] == '.') || (len == 2 && p[1] == '.' && p[2] == '.'))
			return fail(o, "ValueError", "%s: '.' and '..' are not allowed in paths%s",
				    path, NULL);
	}
	/* Lexically first: a session without scratch or grants has no file
	 * calls at all (JavaScript's filter), and nothing to offer. */
	if (tree_of(path) < 0)
		return fail_outside(o, path, write);
	char dir[PATH_MAX];
	memcpy(dir, path, n + 1);
	while (n > 1 && dir[n - 1] == '/')
		dir[--n] = 0;
	char *slash = strrchr(dir, '/');
	char leaf[NAME_MAX + 1];
	if (strlen(slash + 1) > NAME_MAX)
		return fail(o, "ValueError", "%s: a name is too long%s", path, NULL);
	strcpy(leaf, slash + 1);
	slash[slash == dir ? 1 : 0] = 0; /* dir is now the parent ("/" at the top) */
	char rdir[PATH_MAX];
	if (!realpath(dir, rdir))
		return fail(o, "FileNotFoundError", "%s: %s", path, strerror(errno));
	int w = *leaf ? snprintf(real, PATH_MAX, "%s%s%s", rdir, strcmp(rdir, "/") ? "/" : "", leaf)
		      : snprintf(real, PATH_MAX, "%s", rdir);
	if (w < 0 || w >= PATH_MAX)
		return fail(o, "ValueError", "%s: the path is too long%s", path, NULL);
	int t = tree_of(real);
	if (t < 0)
		return fail_outside(o, path, write);
	if (write && t == 0)
		return fail(o, "PermissionError", "%s: this mount is read-only; %s", path,
			    where_writable());
	*ok_tree = t;
	return 0;
}

static void errno_fail(struct cc_outcome *o, const char *path, int e)
{
	const char *type = e == ENOENT				     ? "FileNotFoundError"
			   : e == EACCES || e == EPERM || e == EROFS ? "PermissionError"
			   : e == EISDIR			     ? "IsADirectoryError"
								     : "OSError";
	char msg[1024];
	snprintf(msg, sizeof(msg), "%s: %s%s", path, strerror(e),
		 e == EFBIG || e == ENOSPC ? " (the scratch size or max_file_size caps it)" : "");
	cc_outcome_fail(o, CC_ERR_GUEST, type, msg, NULL);
}

void cc_files_write(const char *path, const char *data, size_t len, struct cc_outcome *o)
{
	char real[PATH_MAX];
	int t;
	if (check_path(path, true, real, &t, o) < 0)
		return;
	/* O_NONBLOCK: a FIFO in a grant must not hang the worker (ENXIO) */
	int fd = open(real, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		      0644);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		return errno_fail(o, path, EINVAL);
	}
	if (fd < 0)
		return errno_fail(o, path, errno);
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? errno : ENOSPC;
			close(fd);
			unlink(real); /* no half-written file is left behind */
			return errno_fail(o, path, e);
		}
		off += (size_t)w;
	}
	if (close(fd) < 0)
		return errno_fail(o, path, errno);
	o->ok = true;
}

void cc_files_read(const char *path, uint64_t max, struct cc_outcome *o)
{
	char real[PATH_MAX];
	int t;
	if (check_path(path, false, real, &t, o) < 0)
		return;
	/* O_NONBLOCK: a FIFO in a grant must not hang the worker */
	cc_autoclose int fd = open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return errno_fail(o, path, errno);
	if (!S_ISREG(st.st_mode))
		return errno_fail(o, path, S_ISDIR(st.st_mode) ? EISDIR : EINVAL);
	if ((uint64_t)st.st_size > max) {
		char msg[512];
		snprintf(msg, sizeof(msg), "%s is %lld bytes, over the %llu-byte cap of this read",
			 path, (long long)st.st_size, (unsigned long long)max);
		cc_outcome_fail(o, CC_ERR_OUTPUT_LIMIT, "OutputLimit", msg, NULL);
		return;
	}
	cc_autofree char *buf = malloc((size_t)st.st_size + 1);
	size_t got = buf ? cc_fd_read_full(fd, buf, (size_t)st.st_size) : 0;
	if (!buf) {
		cc_outcome_fail(o, CC_ERR_INTERNAL, "MemoryError", "out of memory", NULL);
		return;
	}
	msgpack_packer pk;
	msgpack_packer_init(&pk, &o->value, msgpack_sbuffer_write);
	msgpack_pack_bin(&pk, got);
	msgpack_pack_bin_body(&pk, buf, got);
	o->ok = true;
}

struct walk {
	msgpack_packer pk;
	size_t n;
	msgpack_sbuffer items;
};

static int walk_dir(struct walk *w, const char *real, const char *shown, int depth);

/* One entry, and with a directory what is in it. */
static int list_one(struct walk *w, const char *real, const char *shown, const char *name,
		    int depth)
{
	char rp[PATH_MAX], sp[PATH_MAX];
	if (snprintf(rp, sizeof(rp), "%s/%s", real, name) >= (int)sizeof(rp) ||
	    snprintf(sp, sizeof(sp), "%s/%s", shown, name) >= (int)sizeof(sp))
		return -ENAMETOOLONG;
	struct stat st;
	if (lstat(rp, &st) < 0)
		return 0; /* gone meanwhile */
	bool dir = S_ISDIR(st.st_mode);
	msgpack_pack_map(&w->pk, 4);
	cc_pack_cstr(&w->pk, "path");
	cc_pack_cstr(&w->pk, sp);
	cc_pack_cstr(&w->pk, "size");
	msgpack_pack_int64(&w->pk, (int64_t)st.st_size);
	cc_pack_cstr(&w->pk, "mtime");
	msgpack_pack_double(&w->pk, (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9);
	cc_pack_cstr(&w->pk, "dir");
	if (dir)
		msgpack_pack_true(&w->pk);
	else
		msgpack_pack_false(&w->pk);
	w->n++;
	return dir && depth < 64 ? walk_dir(w, rp, sp, depth + 1) : 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in a directory, sorted (a listing reads the same every time);
 * *names is malloc'd, each name too. Returns the count, or -errno. */
static ssize_t sorted_names(const char *real, char ***names)
{
	DIR *d = opendir(real);
	if (!d)
		return -errno;
	size_t n = 0, cap = 0;
	char **v = NULL;
	struct dirent *e;
	ssize_t rc = 0;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n == CC_LIST_MAX) {
			rc = -E2BIG;
			break;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			char **nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			v = nv;
		}
		if (!(v[n] = strdup(e->d_name))) {
			rc = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (rc < 0) {
		while (n)
			free(v[--n]);
		free(v);
		return rc;
	}
	qsort(v, n, sizeof(*v), by_name);
	*names = v;
	return (ssize_t)n;
}

static int walk_dir(struct walk *w, const char *real, const char *shown, int depth)
{
	char **names = NULL;
	ssize_t n = sorted_names(real, &names);
	if (n < 0)
		return (int)n;
	int rc = 0;
	for (ssize_t i = 0; i < n; i++) {
		if (!rc && w->n >= CC_LIST_MAX)
			rc = -E2BIG;
		if (!rc)
			rc = list_one(w, real, shown, names[i], depth);
		free(names[i]);
	}
	free(names);
	return rc;
}

void cc_files_list(const char *path, struct cc_outcome *o)
{
	char real[PATH_MAX];
	int t;
	if (check_path(path, false, real, &t, o) < 0)
		return;
	struct walk w = { .n = 0 };
	msgpack_sbuffer_init(&w.items);
	msgpack_packer_init(&w.pk, &w.items, msgpack_sbuffer_write);
	size_t n = strlen(path);
	char shown[PATH_MAX];
	snprintf(shown, sizeof(shown), "%.*s", (int)(n > 1 && path[n - 1] == '/' ? n - 1 : n),
		 path);
	int rc = walk_dir(&w, real, shown, 0);
	if (rc == -E2BIG) {
		msgpack_sbuffer_destroy(&w.items);
		char msg[512];
		snprintf(msg, sizeof(msg), "%s holds more than %d entries; list a subdirectory",
			 path, CC_LIST_MAX);
		cc_outcome_fail(o, CC_ERR_OUTPUT_LIMIT, "OutputLimit", msg, NULL);
		return;
	}
	if (rc < 0) {
		msgpack_sbuffer_destroy(&w.items);
		return errno_fail(o, path, -rc);
	}
	msgpack_packer pk;
	msgpack_packer_init(&pk, &o->value, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, w.n);
	msgpack_sbuffer_write(&o->value, w.items.data, w.items.size);
	msgpack_sbuffer_destroy(&w.items);
	o->ok = true;
}
