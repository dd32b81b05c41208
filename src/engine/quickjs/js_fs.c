/* The guest's `fs` (Node's synchronous file API subset, plus fs.promises)
 * and `require`: the native half. A few primitives made with ordinary
 * system calls (openat, read, write, newfstatat, getdents64, mkdir, rmdir,
 * unlink, rename), so the worker's mount namespace, Landlock rules and
 * seccomp filter bind them exactly as they bind Python's file I/O; the
 * Node-shaped API on top of them is JavaScript (js_fs_boot.c), built once
 * at init, before any guest code. Worker side only.
 *
 * Memory: what a read brings in is allocated on the QuickJS heap, so the
 * engine's cap (limits.max_memory) bounds it and an overrun is an ordinary
 * memory_limit. A write is bounded by the kernel (RLIMIT_FSIZE: EFBIG, as
 * SIGXFSZ is ignored; the scratch tmpfs size: ENOSPC). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "js_fs.h"

/* The largest chunk one read() or write() asks for. */
#define FS_IO_CHUNK (1u << 20)

/* libuv's wording (what Node prints) for the errors a file call meets;
 * others use strerror. */
static const struct {
	int no;
	const char *text;
} fs_texts[] = {
	{ ENOENT, "no such file or directory" },
	{ EACCES, "permission denied" },
	{ EPERM, "operation not permitted" },
	{ EROFS, "read-only file system" },
	{ ENOSPC, "no space left on device" },
	{ EEXIST, "file already exists" },
	{ ENOTDIR, "not a directory" },
	{ EISDIR, "illegal operation on a directory" },
	{ ENOTEMPTY, "directory not empty" },
	{ EFBIG, "file too large" },
	{ EMFILE, "too many open files" },
	{ EXDEV, "cross-device link not permitted" },
	{ ELOOP, "too many symbolic links encountered" },
	{ ENAMETOOLONG, "name too long" },
	{ EINVAL, "invalid argument" },
	{ EBUSY, "resource busy or locked" },
	{ EDQUOT, "disk quota exceeded" },
};

/* Appended to a refusal, so that a guest (or the model that wrote it)
 * learns which host setting would allow the call. */
static const char fs_hint[] =
	" (the sandbox did not grant this: the host makes /tmp writable with a scratch "
	"(cc_options.scratch_bytes, RuntimeConfig(scratch=BYTES), --scratch MIB) and shows a "
	"host folder with a mount (RuntimeConfig(mounts=[Mount(host, guest, writable=True)]), "
	"--mount HOST:GUEST[:rw]))";

static const char fs_hint_fsize[] =
	" (each file the guest writes is capped by the host's limits.max_file_size, "
	"RuntimeConfig(max_file_size=BYTES))";

static const char *fs_text(int no)
{
	for (size_t i = 0; i < sizeof(fs_texts) / sizeof(fs_texts[0]); i++)
		if (fs_texts[i].no == no)
			return fs_texts[i].text;
	return strerror(no);
}

/* Throw Node's error for a failed call: Error "CODE: text, syscall 'path'"
 * (" -> 'dest'" for rename) with own properties errno (negative), code,
 * syscall, path and dest. Returns JS_EXCEPTION. */
static JSValue fs_throw(JSContext *ctx, int no, const char *syscall, const char *path,
			const char *dest)
{
	const char *code = strerrorname_np(no);
	bool refused = no == EPERM || no == EACCES || no == EROFS;
	char *msg = NULL;
	if (!code)
		code = "EIO";
	if (asprintf(&msg, "%s: %s, %s '%s'%s%s%s%s", code, fs_text(no), syscall, path,
		     dest ? " -> '" : "", dest ? dest : "", dest ? "'" : "",
		     refused	   ? fs_hint
		     : no == EFBIG ? fs_hint_fsize
				   : "") < 0)
		return JS_ThrowOutOfMemory(ctx);
	JSValue e = JS_NewError(ctx);
	if (JS_IsException(e)) {
		free(msg);
		return e;
	}
	int r = JS_DefinePropertyValueStr(ctx, e, "message", JS_NewString(ctx, msg),
					  JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
	free(msg);
	if (r >= 0)
		r = JS_DefinePropertyValueStr(ctx, e, "errno", JS_NewInt32(ctx, -no),
					      JS_PROP_C_W_E);
	if (r >= 0)
		r = JS_DefinePropertyValueStr(ctx, e, "code", JS_NewString(ctx, code),
					      JS_PROP_C_W_E);
	if (r >= 0)
		r = JS_DefinePropertyValueStr(ctx, e, "syscall", JS_NewString(ctx, syscall),
					      JS_PROP_C_W_E);
	if (r >= 0)
		r = JS_DefinePropertyValueStr(ctx, e, "path", JS_NewString(ctx, path),
					      JS_PROP_C_W_E);
	if (r >= 0 && dest)
		r = JS_DefinePropertyValueStr(ctx, e, "dest", JS_NewString(ctx, dest),
					      JS_PROP_C_W_E);
	if (r < 0) {
		JS_FreeValue(ctx, e);
		return JS_EXCEPTION;
	}
	return JS_Throw(ctx, e);
}

/* argv[i] as a path: the JavaScript half has checked it is a string
 * without NUL; this checks again (the natives are reachable only from
 * that half, but cost nothing to check). Free with JS_FreeCString. */
static const char *fs_path(JSContext *ctx, int argc, JSValueConst *argv, int i)
{
	size_t len;
	if (i >= argc || !JS_IsString(argv[i])) {
		JS_ThrowTypeError(ctx, "fs: a path must be a string");
		return NULL;
	}
	const char *p = JS_ToCStringLen(ctx, &len, argv[i]);
	if (p && strlen(p) != len) {
		JS_FreeCString(ctx, p);
		JS_ThrowTypeError(ctx, "fs: a path must not contain NUL");
		return NULL;
	}
	return p;
}

static void fs_free_buf(JSRuntime *rt, void *opaque, void *ptr)
{
	(void)opaque;
	js_free_rt(rt, ptr);
}

/* Read the whole file at path onto the QuickJS heap (*len bytes, a NUL
 * after them). Returns the buffer, or NULL with an exception thrown. */
static char *fs_slurp(JSContext *ctx, const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	size_t cap = 4096, n = 0;
	char *buf;
	if (fd < 0) {
		fs_throw(ctx, errno, "open", path, NULL);
		return NULL;
	}
	/* Room for the file, the NUL and one byte more, so the read that
	 * finds the end needs no bigger buffer (with + 1 a 100 MiB file took
	 * a 200 MiB one); only a file that grows meanwhile makes it grow. */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		cap = (size_t)st.st_size + 2;
	buf = js_malloc(ctx, cap);
	while (buf) {
		if (n + 1 >= cap) {
			char *nb = js_realloc(ctx, buf, cap * 2);
			if (!nb) {
				js_free(ctx, buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		size_t want = cap - n - 1 < FS_IO_CHUNK ? cap - n - 1 : FS_IO_CHUNK;
		ssize_t r = read(fd, buf + n, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fs_throw(ctx, errno, "read", path, NULL);
			js_free(ctx, buf);
			buf = NULL;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (buf) {
		buf[n] = 0;
		*len = n;
	}
	return buf; /* js_malloc threw "out of memory" itself */
}

/* The whole file named by argv[0], as fs_slurp: NULL with a JavaScript
 * exception pending (a bad path argument or the file's error). */
static char *fs_slurp_arg(JSContext *ctx, int argc, JSValueConst *argv, size_t *len)
{
	const char *path = fs_path(ctx, argc, argv, 0);
	if (!path)
		return NULL;
	char *buf = fs_slurp(ctx, path, len);
	JS_FreeCString(ctx, path);
	return buf;
}

/* readFile(path) -> ArrayBuffer */
static JSValue fs_read_file(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
	(void)this_val;
	size_t len = 0;
	char *buf = fs_slurp_arg(ctx, argc, argv, &len);
	if (!buf)
		return JS_EXCEPTION;
	return JS_NewArrayBuffer(ctx, (uint8_t *)buf, len, fs_free_buf, NULL, false);
}

/* readText(path) -> string, the bytes read as UTF-8 */
static JSValue fs_read_text(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
	(void)this_val;
	size_t len = 0;
	char *buf = fs_slurp_arg(ctx, argc, argv, &len);
	if (!buf)
		return JS_EXCEPTION;
	JSValue s = JS_NewStringLen(ctx, buf, len);
	js_free(ctx, buf);
	return s;
}

/* utf8(ArrayBuffer) -> string */
static JSValue fs_utf8(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
	(void)this_val;
	size_t len = 0;
	uint8_t *p = argc > 0 ? JS_GetArrayBuffer(ctx, &len, argv[0]) : NULL;
	if (!p)
		return argc > 0 ? JS_EXCEPTION : JS_ThrowTypeError(ctx, "fs: utf8 wants a buffer");
	return JS_NewStringLen(ctx, (const char *)p, len);
}

static int fs_write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t w = write(fd, p, len < FS_IO_CHUNK ? len : FS_IO_CHUNK);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Node's flag strings for writes. -1 for one it does not know. */
static int fs_open_flags(const char *flag)
{
	static const struct {
		const char *s;
		int f;
	} t[] = {
		{ "w", O_WRONLY | O_CREAT | O_TRUNC },
		{ "wx", O_WRONLY | O_CREAT | O_TRUNC | O_EXCL },
		{ "w+", O_RDWR | O_CREAT | O_TRUNC },
		{ "a", O_WRONLY | O_CREAT | O_APPEND },
		{ "ax", O_WRONLY | O_CREAT | O_APPEND | O_EXCL },
		{ "a+", O_RDWR | O_CREAT | O_APPEND },
		{ "r+", O_RDWR },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(t[i].s, flag))
			return t[i].f;
	return -1;
}

/* writeFile(path, data, flag, mode): data a string (written as UTF-8) or
 * an ArrayBuffer with an offset and a length (argv[4], argv[5]). */
static JSValue fs_write_file(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
	(void)this_val;
	const char *path = fs_path(ctx, argc, argv, 0), *flag = NULL, *str = NULL;
	const uint8_t *data = NULL;
	size_t len = 0, ab_len = 0;
	int32_t mode = 0666;
	int64_t off = 0, cnt = 0;
	JSValue ret = JS_EXCEPTION;
	int fd, flags;
	if (!path)
		return JS_EXCEPTION;
	if (argc < 6 || !(flag = JS_ToCString(ctx, argv[2])) || JS_ToInt32(ctx, &mode, argv[3]) < 0)
		goto out;
	if ((flags = fs_open_flags(flag)) < 0) {
		JS_ThrowTypeError(ctx, "fs: unknown flag '%s' (use w, wx, w+, a, ax, a+ or r+)",
				  flag);
		goto out;
	}
	if (JS_IsString(argv[1])) {
		if (!(str = JS_ToCStringLen(ctx, &len, argv[1])))
			goto out;
		data = (const uint8_t *)str;
	} else {
		uint8_t *ab = JS_GetArrayBuffer(ctx, &ab_len, argv[1]);
		if (!ab || JS_ToInt64(ctx, &off, argv[4]) < 0 || JS_ToInt64(ctx, &cnt, argv[5]) < 0)
			goto out;
		if (off < 0 || cnt < 0 || (uint64_t)off > ab_len ||
		    (uint64_t)cnt > ab_len - (uint64_t)off) {
			JS_ThrowRangeError(ctx, "fs: the data's bounds are outside its buffer");
			goto out;
		}
		data = ab + off;
		len = (size_t)cnt;
	}
	fd = open(path, flags | O_CLOEXEC | O_NOCTTY, (mode_t)mode & 07777);
	if (fd < 0) {
		fs_throw(ctx, errno, "open", path, NULL);
		goto out;
	}
	if (fs_write_all(fd, data, len) < 0) {
		fs_throw(ctx, errno, "write", path, NULL);
		close(fd);
		goto out;
	}
	if (close(fd) < 0 && errno != EINTR) {
		fs_throw(ctx, errno, "close", path, NULL);
		goto out;
	}
	ret = JS_UNDEFINED;
out:
	JS_FreeCString(ctx, path);
	JS_FreeCString(ctx, flag);
	JS_FreeCString(ctx, str);
	return ret;
}

static JSValue fs_ms(JSContext *ctx, struct timespec t)
{
	return JS_NewFloat64(ctx, (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6);
}

/* stat(path, follow, throwIfNoEntry) -> [mode, size, mtimeMs, atimeMs,
 * ctimeMs, nlink, uid, gid, ino, dev, blksize, blocks, rdev], or undefined
 * for a missing path when throwIfNoEntry is false. */
static JSValue fs_stat(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
	(void)this_val;
	const char *path = fs_path(ctx, argc, argv, 0);
	bool follow = argc > 1 && JS_ToBool(ctx, argv[1]) > 0;
	bool throw_missing = argc < 3 || JS_ToBool(ctx, argv[2]) != 0;
	struct stat st;
	if (!path)
		return JS_EXCEPTION;
	if ((follow ? stat(path, &st) : lstat(path, &st)) < 0) {
		int no = errno;
		JSValue r = !throw_missing && (no == ENOENT || no == ENOTDIR)
				    ? JS_UNDEFINED
				    : fs_throw(ctx, no, follow ? "stat" : "lstat", path, NULL);
		JS_FreeCString(ctx, path);
		return r;
	}
	JS_FreeCString(ctx, path);
	JSValue a = JS_NewArray(ctx);
	JSValue v[] = {
		JS_NewInt64(ctx, st.st_mode),
		JS_NewInt64(ctx, st.st_size),
		fs_ms(ctx, st.st_mtim),
		fs_ms(ctx, st.st_atim),
		fs_ms(ctx, st.st_ctim),
		JS_NewInt64(ctx, (int64_t)st.st_nlink),
		JS_NewInt64(ctx, st.st_uid),
		JS_NewInt64(ctx, st.st_gid),
		JS_NewFloat64(ctx, (double)st.st_ino),
		JS_NewFloat64(ctx, (double)st.st_dev),
		JS_NewInt64(ctx, st.st_blksize),
		JS_NewInt64(ctx, st.st_blocks),
		JS_NewFloat64(ctx, (double)st.st_rdev),
	};
	for (uint32_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (JS_IsException(a) || JS_SetPropertyUint32(ctx, a, i, v[i]) < 0) {
			for (uint32_t j = i + !JS_IsException(a); j < sizeof(v) / sizeof(v[0]); j++)
				JS_FreeValue(ctx, v[j]);
			JS_FreeValue(ctx, a);
			return JS_EXCEPTION;
		}
	}
	return a;
}

/* The d_type of an entry as one letter: f(ile), d(irectory), l(ink),
 * o(ther); DT_UNKNOWN asks lstat. */
static const char *fs_kind(DIR *d, const struct dirent *e)
{
	struct stat st;
	unsigned char t = e->d_type;
	if (t == DT_UNKNOWN && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		t = S_ISREG(st.st_mode)	  ? DT_REG
		    : S_ISDIR(st.st_mode) ? DT_DIR
		    : S_ISLNK(st.st_mode) ? DT_LNK
					  : DT_UNKNOWN;
	return t == DT_REG ? "f" : t == DT_DIR ? "d" : t == DT_LNK ? "l" : "o";
}

/* readdir(path) -> [name, kind, name, kind, ...] without . and .. */
static JSValue fs_readdir(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
	(void)this_val;
	const char *path = fs_path(ctx, argc, argv, 0);
	uint32_t i = 0;
	if (!path)
		return JS_EXCEPTION;
	DIR *d = opendir(path);
	if (!d) {
		JSValue r = fs_throw(ctx, errno, "scandir", path, NULL);
		JS_FreeCString(ctx, path);
		return r;
	}
	JSValue a = JS_NewArray(ctx);
	for (;;) {
		errno = 0;
		struct dirent *e = readdir(d);
		if (!e) {
			if (errno) {
				JS_FreeValue(ctx, a);
				a = fs_throw(ctx, errno, "scandir", path, NULL);
			}
			break;
		}
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (JS_IsException(a) ||
		    JS_SetPropertyUint32(ctx, a, i++, JS_NewString(ctx, e->d_name)) < 0 ||
		    JS_SetPropertyUint32(ctx, a, i++, JS_NewString(ctx, fs_kind(d, e))) < 0) {
			JS_FreeValue(ctx, a);
			a = JS_EXCEPTION;
			break;
		}
	}
	closedir(d);
	JS_FreeCString(ctx, path);
	return a;
}

/* The one- and two-path calls: magic picks the system call. */
enum {
	FS_MKDIR,
	FS_RMDIR,
	FS_UNLINK,
	FS_RENAME
};

static JSValue fs_path_call(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv,
			    int magic)
{
	(void)this_val;
	static const char *const names[] = { "mkdir", "rmdir", "unlink", "rename" };
	const char *a = fs_path(ctx, argc, argv, 0), *b = NULL;
	int32_t mode = 0777;
	int r = -1;
	if (!a)
		return JS_EXCEPTION;
	if (magic == FS_RENAME && !(b = fs_path(ctx, argc, argv, 1))) {
		JS_FreeCString(ctx, a);
		return JS_EXCEPTION;
	}
	if (magic == FS_MKDIR && argc > 1 && JS_ToInt32(ctx, &mode, argv[1]) < 0) {
		JS_FreeCString(ctx, a);
		return JS_EXCEPTION;
	}
	switch (magic) {
	case FS_MKDIR:
		r = mkdir(a, (mode_t)mode & 07777);
		break;
	case FS_RMDIR:
		r = rmdir(a);
		break;
	case FS_UNLINK:
		r = unlink(a);
		break;
	case FS_RENAME:
		r = rename(a, b);
		break;
	}
	JSValue ret = r < 0 ? fs_throw(ctx, errno, names[magic], a, b) : JS_UNDEFINED;
	JS_FreeCString(ctx, a);
	JS_FreeCString(ctx, b);
	return ret;
}

static const JSCFunctionListEntry fs_natives[] = {
	JS_CFUNC_DEF("readFile", 1, fs_read_file),
	JS_CFUNC_DEF("readText", 1, fs_read_text),
	JS_CFUNC_DEF("utf8", 1, fs_utf8),
	JS_CFUNC_DEF("writeFile", 6, fs_write_file),
	JS_CFUNC_DEF("stat", 3, fs_stat),
	JS_CFUNC_DEF("readdir", 1, fs_readdir),
	JS_CFUNC_MAGIC_DEF("mkdir", 2, fs_path_call, FS_MKDIR),
	JS_CFUNC_MAGIC_DEF("rmdir", 1, fs_path_call, FS_RMDIR),
	JS_CFUNC_MAGIC_DEF("unlink", 1, fs_path_call, FS_UNLINK),
	JS_CFUNC_MAGIC_DEF("rename", 2, fs_path_call, FS_RENAME),
};

int cc_js_fs_install(JSContext *ctx)
{
	JSValue natives = JS_NewObject(ctx), boot, fs;
	if (JS_IsException(natives))
		return -1;
	JS_SetPropertyFunctionList(ctx, natives, fs_natives,
				   sizeof(fs_natives) / sizeof(fs_natives[0]));
	boot = JS_Eval(ctx, cc_js_fs_boot, strlen(cc_js_fs_boot), "<codecage:fs>",
		       JS_EVAL_TYPE_GLOBAL);
	if (JS_IsException(boot)) {
		JS_FreeValue(ctx, natives);
		return -1;
	}
	/* The boot function defines the globals fs and require itself. */
	fs = JS_Call(ctx, boot, JS_UNDEFINED, 1, &natives);
	JS_FreeValue(ctx, boot);
	JS_FreeValue(ctx, natives);
	if (JS_IsException(fs))
		return -1;
	JS_FreeValue(ctx, fs);
	return 0;
}
