/* --out copying (files.h). */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "buf.h"
#include "error.h"
#include "term.h"
#include "value.h"

/* One "codecage: --out: ..." line on diag. The text names guest files
 * (any bytes but '/' and NUL, ESC and newline included), so on a terminal
 * it is made inert (term.h) and cannot drive the terminal or start a
 * line of its own. */
static void note(const struct cc_term *diag, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(const struct cc_term *diag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = cc_vstrprintf(fmt, ap);
	va_end(ap);
	fputs("codecage: --out: ", diag->f);
	cc_term_inline(diag, s ? s : "(out of memory)");
	fputc('\n', diag->f);
	free(s);
}

/* "/tmp/a/b" -> "a/b", or NULL when the path is not a plain one under /tmp. */
static const char *relative(const char *p)
{
	if (strncmp(p, "/tmp/", 5) || !p[5])
		return NULL;
	const char *r = p + 5;
	for (const char *c = r; c; c = strchr(c, '/')) {
		c += *c == '/';
		size_t len = strcspn(c, "/");
		if (len == 0 || (len == 1 && c[0] == '.') ||
		    (len == 2 && c[0] == '.' && c[1] == '.'))
			return NULL;
		if (!c[len])
			break;
	}
	return r;
}

/* Open rel beneath dfd without following any symlink (a component of DIR
 * that already was one, before the run, would otherwise lead out of it) and
 * without crossing a mount. */
static int open_beneath(int dfd, const char *rel, int flags, mode_t mode)
{
	struct open_how how = { .flags = (uint64_t)flags,
				.mode = (flags & O_CREAT) ? mode : 0,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };
	return (int)syscall(SYS_openat2, dfd, rel, &how, sizeof(how));
}

/* mkdir rel beneath dfd: its parent is resolved by open_beneath. */
static int mkdir_beneath(int dfd, const char *rel)
{
	const char *slash = strrchr(rel, '/');
	if (!slash)
		return mkdirat(dfd, rel, 0755);
	char *parent = strndup(rel, (size_t)(slash - rel));
	if (!parent) {
		errno = ENOMEM;
		return -1;
	}
	int pfd = open_beneath(dfd, parent, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
	free(parent);
	if (pfd < 0)
		return -1;
	int rc = mkdirat(pfd, slash + 1, 0755);
	int saved = errno;
	close(pfd);
	errno = saved;
	return rc;
}

/* files.h; --display-dir's files use it too. */
int cc_cli_open_out(int dfd, const char *rel)
{
	/* Look before opening for writing: opening a device can act. */
	struct stat st;
	int look = open_beneath(dfd, rel, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
	if (look >= 0) {
		bool plain = fstat(look, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1;
		close(look);
		if (!plain) {
			errno = EPERM;
			return -1;
		}
	} else if (errno != ENOENT) {
		return -1;
	}
	int fd = open_beneath(dfd, rel,
			      O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
			      0644);
	if (fd < 0)
		return -1;
	int e = 0;
	if (fstat(fd, &st) < 0)
		e = errno;
	else if (!S_ISREG(st.st_mode) || st.st_nlink > 1)
		e = EPERM;
	else if (ftruncate(fd, 0) < 0)
		e = errno;
	if (e) {
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Errors of DIR's own contents (not of the copy): the file is skipped. */
static bool skippable(int e)
{
	return e == ELOOP || e == EXDEV || e == EPERM || e == ENXIO || e == ENOTDIR ||
	       e == EISDIR || e == ENOENT;
}

static int copy_file(cc_runtime *rt, int dfd, const char *guest, const char *rel,
		     const struct cc_term *diag, uint64_t *left, cc_error *err)
{
	void *data = NULL;
	size_t len = 0;
	/* Never more than is left of the scratch's size: a worker may claim
	 * anything, and sparse files may add up to more than it holds. */
	if (*left == 0)
		return cc_fail(err, CC_ERR_OUTPUT_LIMIT, "no bytes left of the --scratch size");
	if (cc_runtime_read_file(rt, guest, *left, &data, &len, err) < 0)
		return -1;
	*left -= len;
	errno = 0;
	int fd = cc_cli_open_out(dfd, rel);
	int rc = 0;
	if (fd < 0 && skippable(errno)) {
		note(diag,
		     "skipped %s (%s: DIR's own %s is a symlink, special file or hard link, "
		     "or leads out of DIR)",
		     guest, strerror(errno), rel);
		free(data);
		return 0;
	}
	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		rc = cc_fail(err, CC_ERR_INVALID_INPUT, "--out: writing %s: %s", rel,
			     strerror(errno));
	if (fd >= 0 && close(fd) < 0 && rc == 0)
		rc = cc_fail(err, CC_ERR_INVALID_INPUT, "--out: writing %s: %s", rel,
			     strerror(errno));
	free(data);
	return rc < 0 ? rc : 1;
}

int cc_cli_copy_out(cc_runtime *rt, const char *dir, uint64_t max_bytes, const struct cc_term *diag,
		    cc_error *err)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "--out %s: %s", dir, strerror(errno));
	int dfd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	if (dfd < 0)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "--out %s: %s", dir, strerror(errno));
	cc_value *ls = NULL;
	if (cc_runtime_list_files(rt, "/tmp", &ls, err) < 0) {
		close(dfd);
		return -1;
	}
	if (ls->u.array.len > CC_CLI_OUT_MAX_ENTRIES) {
		size_t n = ls->u.array.len;
		cc_value_free(ls);
		close(dfd);
		cc_runtime_interrupt(rt);
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
			       "--out: the worker listed %zu entries, more than scratch's %d "
			       "inodes allow; it was stopped and nothing was copied",
			       n, CC_CLI_OUT_MAX_ENTRIES);
	}
	int copied = 0;
	uint64_t left = max_bytes;
	/* The listing walks depth first: a directory comes before its files. */
	for (size_t i = 0; i < ls->u.array.len && copied >= 0; i++) {
		const cc_value *e = ls->u.array.items[i];
		const char *path = cc_value_map_get(e, "path", NULL)->u.str.ptr;
		const char *rel = relative(path);
		if (!rel) {
			note(diag, "skipped %s (not a plain path)", path);
			continue;
		}
		if (cc_value_map_get(e, "dir", NULL)->u.b) {
			if (mkdir_beneath(dfd, rel) < 0 && errno != EEXIST && !skippable(errno))
				copied = cc_fail(err, CC_ERR_INVALID_INPUT, "--out: mkdir %s: %s",
						 rel, strerror(errno));
			continue;
		}
		int one = copy_file(rt, dfd, path, rel, diag, &left, err);
		if (one < 0) {
			bool big = err->kind == CC_ERR_OUTPUT_LIMIT;
			if (!big && (err->kind != CC_ERR_INVALID_INPUT ||
				     !strstr(err->message, "reading"))) {
				copied = -1;
				break;
			}
			/* a symlink or special file the worker refuses to read, or
			 * a (sparse) file over what is left of the scratch's size */
			if (big)
				note(diag,
				     "skipped %s (over the %llu bytes left of the --scratch size "
				     "the copy may take)",
				     path, (unsigned long long)left);
			else
				note(diag, "skipped %s (%s)", path, err->message);
			cc_error_clear(err);
			continue;
		}
		copied += one;
	}
	cc_value_free(ls);
	close(dfd);
	return copied;
}
