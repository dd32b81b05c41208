/* The CLI's displays: the "displays" array of --json, the files of
 * --display-dir, and the note text mode prints when displays are not
 * saved. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "displays.h"
#include "files.h"
#include "json_out.h"

void cli_json_displays(struct cc_buf *b, const cc_result *r)
{
	size_t n = cc_result_display_count(r);
	cc_buf_puts(b, ", \"displays\": [");
	for (size_t i = 0; i < n; i++) {
		if (i)
			cc_buf_puts(b, ", ");
		cc_json_display(b, cc_result_display(r, i));
	}
	cc_buf_puts(b, "]");
}

/* The richest form of display i, as a notebook would show it, with the
 * file extension it is saved under. */
static const char *pick(const cc_result *r, size_t i, const char **ext, size_t *len)
{
	static const char *const order[][2] = {
		{ "image/png", "png" },		{ "image/svg+xml", "svg" }, { "text/html", "html" },
		{ "application/json", "json" }, { "text/plain", "txt" },
	};
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		const char *d = cc_result_display_data(r, i, order[k][0], len);
		if (d) {
			*ext = order[k][1];
			return order[k][0];
		}
	}
	return NULL;
}

/* Write len bytes to dir/name: a new file or one emptied, never through
 * a symbolic link, a FIFO or a hard link (cc_cli_open_out). Returns 0 or
 * -1 with errno. */
static int write_file(int dirfd, const char *name, const char *data, size_t len)
{
	int fd = cc_cli_open_out(dirfd, name);
	if (fd < 0)
		return -1;
	while (len) {
		ssize_t w = write(fd, data, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? errno : EIO;
			close(fd);
			errno = e;
			return -1;
		}
		data += w;
		len -= (size_t)w;
	}
	return close(fd);
}

int cli_save_displays(const cc_result *r, const char *dir)
{
	size_t n = cc_result_display_count(r);
	if (!n)
		return 0;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "codecage: --display-dir: cannot create '%s': %s\n", dir,
			strerror(errno));
		return -1;
	}
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		fprintf(stderr, "codecage: --display-dir: cannot open '%s': %s\n", dir,
			strerror(errno));
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		const char *ext = "";
		size_t len = 0;
		const char *mime = pick(r, i, &ext, &len);
		const char *data = mime ? cc_result_display_data(r, i, mime, &len) : NULL;
		char name[64];
		snprintf(name, sizeof(name), "display-%zu.%s", i + 1, ext);
		if (!data)
			continue;
		if (write_file(dirfd, name, data, len) < 0) {
			fprintf(stderr, "codecage: --display-dir: cannot write '%s/%s': %s\n", dir,
				name,
				errno == EPERM ? "it is a FIFO, device or hard link"
					       : strerror(errno));
			rc = -1;
			continue;
		}
		fprintf(stderr, "codecage: display %zu (%s, %zu bytes) saved as %s/%s\n", i + 1,
			mime, len, dir, name);
	}
	close(dirfd);
	return rc;
}

void cli_note_displays(const cc_result *r)
{
	size_t n = cc_result_display_count(r);
	for (size_t i = 0; i < n; i++) {
		const char *ext = "";
		size_t len = 0;
		const char *mime = pick(r, i, &ext, &len);
		if (mime)
			fprintf(stderr,
				"codecage: display %zu (%s, %zu bytes); pass --display-dir DIR to "
				"save it\n",
				i + 1, mime, len);
	}
}
