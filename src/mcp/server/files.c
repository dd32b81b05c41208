/* Files of an MCP session: the `files` a tools/call writes before its code
 * runs, the listing of what the call created or changed, and the session's
 * scratch files as MCP resources (resources/list, resources/read). All of
 * it goes through the public file API (cc_runtime_write_file, _read_file,
 * _list_files), which the worker serves inside its confined view, between
 * evals: every function here runs in the session's turn.
 *
 * A resource's URI names the language whose scratch holds it:
 * codecage://python/tmp/out.svg, codecage://javascript/tmp/data.csv. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "json_out.h"
#include "files.h"
#include "utf8.h"

/* ---- base64 (RFC 4648, the "$bytes" tag and resource blobs) ---- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_digit(unsigned char c)
{
	const char *p = c ? strchr(b64, c) : NULL;
	return p ? (int)(p - b64) : -1;
}

/* Decode s (padding optional, no other characters); *out malloc'd. */
int mcp_b64_decode(const char *s, size_t n, unsigned char **out, size_t *len)
{
	while (n && s[n - 1] == '=')
		n--;
	unsigned char *o = malloc(n * 3 / 4 + 3);
	size_t j = 0;
	unsigned acc = 0;
	int bits = 0;
	if (!o)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int d = b64_digit((unsigned char)s[i]);
		if (d < 0) {
			free(o);
			return -1;
		}
		acc = (acc << 6) | (unsigned)d;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			o[j++] = (unsigned char)(acc >> bits);
		}
	}
	*out = o;
	*len = j;
	return 0;
}

static char *b64_encode(const unsigned char *p, size_t n)
{
	char *o = malloc(4 * ((n + 2) / 3) + 1), *q = o;
	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		unsigned k = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);
		*q++ = b64[k >> 18];
		*q++ = b64[(k >> 12) & 63];
		*q++ = i + 1 < n ? b64[(k >> 6) & 63] : '=';
		*q++ = i + 2 < n ? b64[k & 63] : '=';
	}
	*q = 0;
	return o;
}

/* ---- files in ---- */

/* Does path have a ".." component? */
static bool has_dotdot(const char *p)
{
	for (const char *c = p; (c = strstr(c, "..")); c += 2)
		if ((c == p || c[-1] == '/') && (c[2] == 0 || c[2] == '/'))
			return true;
	return false;
}

const char *mcp_files_check(const json_t *files)
{
	const char *key;
	json_t *val;
	if (!json_is_object(files))
		return "arguments.files must be an object {\"/tmp/name\": text or {\"$bytes\": "
		       "base64}}";
	if (json_object_size(files) > MCP_MAX_FILES_IN)
		return "arguments.files: at most 100 files per call";
	json_object_foreach((json_t *)files, key, val)
	{
		if (!*key || has_dotdot(key))
			return "arguments.files: a path must be non-empty and have no '..'";
		if (json_is_string(val))
			continue;
		json_t *b = json_object_get(val, "$bytes");
		if (!json_is_object(val) || json_object_size(val) != 1 || !json_is_string(b))
			return "arguments.files: each value must be text or {\"$bytes\": base64}";
	}
	return NULL;
}

/* "name" -> "/tmp/name"; an absolute path stays. Owned. */
static char *guest_path(const char *key)
{
	char *p = NULL;
	if (asprintf(&p, "%s%s", key[0] == '/' ? "" : "/tmp/", key) < 0)
		return NULL;
	return p;
}

/* Make the parents of path (under /tmp or a grant) with the guest's own
 * file calls, so the worker's rules bind them as they bind the write. */
static int make_parents(cc_runtime *rt, int lang, const char *path, cc_error *err)
{
	const char *slash = strrchr(path, '/');
	if (!slash || slash == path || (!strncmp(path, "/tmp/", 5) && !strchr(path + 5, '/')))
		return 0;
	struct cc_buf code = { 0 };
	struct cc_buf dir = { 0 };
	cc_json_string(&dir, path, (size_t)(slash - path));
	if (lang == MCP_LANG_PY)
		cc_buf_printf(&code, "__import__('os').makedirs(%s, exist_ok=True)", dir.data);
	else
		cc_buf_printf(&code, "void fs.mkdirSync(%s, {recursive: true})", dir.data);
	cc_buf_free(&dir);
	if (code.oom) {
		cc_buf_free(&code);
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	}
	cc_result *r = cc_runtime_eval(rt, code.data, code.len, 0);
	cc_buf_free(&code);
	int rc = 0;
	if (!r)
		rc = cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	else if (!cc_result_ok(r))
		rc = cc_fail(err, CC_ERR_INVALID_INPUT,
			     "arguments.files: cannot make the folder of %s: %s", path,
			     cc_result_error_message(r));
	cc_result_free(r);
	return rc;
}

int mcp_files_write(cc_runtime *rt, int lang, const json_t *files, cc_error *err)
{
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)files, key, val)
	{
		char *path = guest_path(key);
		unsigned char *bytes = NULL;
		size_t len = 0;
		int rc;
		if (!path)
			return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
		if (json_is_string(val)) {
			rc = 0;
		} else {
			json_t *b = json_object_get(val, "$bytes");
			rc = mcp_b64_decode(json_string_value(b), json_string_length(b), &bytes,
					    &len);
			if (rc < 0)
				cc_fail(err, CC_ERR_INVALID_INPUT,
					"arguments.files[%s]: $bytes is not base64", key);
		}
		if (rc == 0)
			rc = make_parents(rt, lang, path, err);
		if (rc == 0)
			rc = cc_runtime_write_file(
				rt, path, bytes ? (const void *)bytes : json_string_value(val),
				bytes ? len : json_string_length(val), err);
		if (rc < 0 && err->kind != CC_ERR_INTERNAL)
			cc_fail_wrap(err, "writing arguments.files[%s]", key);
		free(bytes);
		free(path);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* ---- the session's scratch across a reset ---- */

static const cc_value *map_get(const cc_value *m, const char *key);

int mcp_scratch_carry(cc_runtime *from, cc_runtime *to, int lang, uint64_t budget, size_t *lost)
{
	cc_value *l = NULL;
	cc_error err = { 0 };
	size_t copied = 0;
	*lost = 0;
	if (!cc_runtime_alive(from) || cc_runtime_list_files(from, "/tmp", &l, &err) < 0 || !l ||
	    l->type != CC_VALUE_ARRAY) {
		cc_error_clear(&err);
		cc_value_free(l);
		return 0;
	}
	/* A directory comes before what it holds (cc_runtime_list_files). */
	for (size_t i = 0; i < l->u.array.len; i++) {
		const cc_value *it = l->u.array.items[i];
		const cc_value *p = map_get(it, "path"), *sz = map_get(it, "size"),
			       *dir = map_get(it, "dir");
		if (!p || p->type != CC_VALUE_STRING)
			continue;
		int rc = -1;
		if (dir && dir->type == CC_VALUE_BOOL && dir->u.b) {
			char *inside = NULL;
			if (asprintf(&inside, "%s/x", p->u.str.ptr) >= 0)
				rc = make_parents(to, lang, inside, &err);
			free(inside);
		} else if (sz && sz->type == CC_VALUE_INT && (uint64_t)sz->u.i <= budget) {
			void *data = NULL;
			size_t len = 0;
			rc = cc_runtime_read_file(from, p->u.str.ptr, budget, &data, &len, &err);
			if (rc == 0)
				rc = cc_runtime_write_file(to, p->u.str.ptr, data, len, &err);
			if (rc == 0)
				budget -= len;
			free(data);
			copied += rc == 0;
		}
		*lost += rc < 0 && !(dir && dir->type == CC_VALUE_BOOL && dir->u.b);
		cc_error_clear(&err);
	}
	cc_value_free(l);
	return (int)copied;
}

/* ---- what a call changed ---- */

struct entry {
	const char *path;
	size_t len;
	int64_t size;
	double mtime;
};

struct mcp_snapshot {
	cc_value *lists[1 + CC_MAX_MOUNTS];
	size_t n_lists;
	struct entry *e;
	size_t n;
};

static const cc_value *map_get(const cc_value *m, const char *key)
{
	if (!m || m->type != CC_VALUE_MAP)
		return NULL;
	for (size_t i = 0; i < m->u.map.len; i++)
		if (!strcmp(m->u.map.keys[i], key))
			return m->u.map.vals[i];
	return NULL;
}

static int by_path(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	return strcmp(x->path, y->path);
}

/* The roots a call may write: /tmp when there is scratch, and each
 * writable grant that is a directory on the host. */
static size_t roots(const struct mcp_config *cfg, const char **out)
{
	size_t n = 0;
	struct stat st;
	if (cfg->scratch_mib)
		out[n++] = "/tmp";
	for (size_t i = 0; i < cfg->n_mounts; i++)
		if (cfg->mounts[i].writable && stat(cfg->mounts[i].host, &st) == 0 &&
		    S_ISDIR(st.st_mode))
			out[n++] = cfg->mounts[i].guest;
	return n;
}

struct mcp_snapshot *mcp_snapshot_take(cc_runtime *rt, const struct mcp_config *cfg)
{
	const char *r[1 + CC_MAX_MOUNTS];
	size_t nr = roots(cfg, r), cap = 0;
	struct mcp_snapshot *s = calloc(1, sizeof(*s));
	if (!s || !nr || !cc_runtime_alive(rt))
		return s;
	for (size_t i = 0; i < nr; i++) {
		cc_value *l = NULL;
		cc_error err = { 0 };
		if (cc_runtime_list_files(rt, r[i], &l, &err) < 0 || !l ||
		    l->type != CC_VALUE_ARRAY) {
			cc_error_clear(&err);
			cc_value_free(l);
			continue;
		}
		s->lists[s->n_lists++] = l;
		cap += l->u.array.len;
	}
	s->e = calloc(cap ? cap : 1, sizeof(*s->e));
	if (!s->e) {
		mcp_snapshot_free(s);
		return NULL;
	}
	for (size_t i = 0; i < s->n_lists; i++) {
		const cc_value *l = s->lists[i];
		for (size_t j = 0; j < l->u.array.len; j++) {
			const cc_value *it = l->u.array.items[j];
			const cc_value *p = map_get(it, "path"), *sz = map_get(it, "size"),
				       *mt = map_get(it, "mtime"), *dir = map_get(it, "dir");
			if (!p || p->type != CC_VALUE_STRING ||
			    (dir && dir->type == CC_VALUE_BOOL && dir->u.b))
				continue;
			s->e[s->n++] = (struct entry){
				.path = p->u.str.ptr,
				.len = p->u.str.len,
				.size = sz && sz->type == CC_VALUE_INT ? sz->u.i : 0,
				.mtime = mt && mt->type == CC_VALUE_FLOAT ? mt->u.f
					 : mt && mt->type == CC_VALUE_INT ? (double)mt->u.i
									  : 0,
			};
		}
	}
	qsort(s->e, s->n, sizeof(*s->e), by_path);
	return s;
}

void mcp_snapshot_free(struct mcp_snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_lists; i++)
		cc_value_free(s->lists[i]);
	free(s->e);
	free(s);
}

/* Files in `after` that are not in `before`, or differ in size or mtime,
 * as a JSON array of {path, size}; and as text lines. */
void mcp_snapshot_diff(const struct mcp_snapshot *before, const struct mcp_snapshot *after,
		       struct cc_buf *json, struct cc_buf *text)
{
	size_t i = 0, shown = 0;
	cc_buf_puts(json, "[");
	for (size_t j = 0; after && j < after->n; j++) {
		const struct entry *a = &after->e[j];
		int c = 1;
		while (before && i < before->n && (c = strcmp(before->e[i].path, a->path)) < 0)
			i++;
		if (c == 0 && before->e[i].size == a->size && before->e[i].mtime == a->mtime)
			continue;
		if (shown++ == MCP_MAX_FILES_SHOWN) {
			cc_buf_puts(text, "  ... (more not shown)\n");
			continue;
		}
		if (shown > MCP_MAX_FILES_SHOWN)
			continue;
		cc_buf_puts(json, shown > 1 ? ",{\"path\":" : "{\"path\":");
		cc_json_string(json, a->path, a->len);
		cc_buf_printf(json, ",\"size\":%lld}", (long long)a->size);
		cc_buf_printf(text, "  %s (%lld bytes)\n", a->path, (long long)a->size);
	}
	cc_buf_puts(json, "]");
}

/* ---- resources ---- */

/* A file's MIME type from its name (what a client needs to show it). */
static const char *mime_of(const char *path)
{
	static const struct {
		const char *ext, *mime;
	} t[] = {
		{ ".txt", "text/plain" },      { ".md", "text/markdown" },
		{ ".csv", "text/csv" },	       { ".json", "application/json" },
		{ ".svg", "image/svg+xml" },   { ".png", "image/png" },
		{ ".jpg", "image/jpeg" },      { ".html", "text/html" },
		{ ".py", "text/x-python" },    { ".js", "text/javascript" },
		{ ".pdf", "application/pdf" }, { ".xml", "application/xml" },
	};
	const char *dot = strrchr(path, '.');
	for (size_t i = 0; dot && i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(dot, t[i].ext))
			return t[i].mime;
	return "application/octet-stream";
}

json_t *mcp_resources_list(cc_runtime *const rt[MCP_LANGS], const struct mcp_config *cfg)
{
	json_t *list = json_array();
	for (int l = 0; list && l < MCP_LANGS; l++) {
		struct mcp_snapshot *s = rt[l] ? mcp_snapshot_take(rt[l], cfg) : NULL;
		for (size_t i = 0; s && i < s->n && i < MCP_MAX_RESOURCES; i++) {
			char *uri = NULL;
			if (asprintf(&uri, "codecage://%s%s", cc_language_name(mcp_lang_cc(l)),
				     s->e[i].path) < 0)
				break;
			const char *name = strrchr(s->e[i].path, '/');
			json_array_append_new(
				list, json_pack("{s:s, s:s, s:s, s:s, s:I}", "uri", uri, "name",
						name ? name + 1 : s->e[i].path, "title",
						s->e[i].path, "mimeType", mime_of(s->e[i].path),
						"size", (json_int_t)s->e[i].size));
			free(uri);
		}
		mcp_snapshot_free(s);
	}
	return list ? json_pack("{s:o}", "resources", list) : NULL;
}

int mcp_resource_lang(const char *uri, const char **path)
{
	static const char scheme[] = "codecage://";
	if (!uri || strncmp(uri, scheme, sizeof(scheme) - 1))
		return -1;
	uri += sizeof(scheme) - 1;
	for (int l = 0; l < MCP_LANGS; l++) {
		size_t n = strlen(cc_language_name(mcp_lang_cc(l)));
		if (!strncmp(uri, cc_language_name(mcp_lang_cc(l)), n) && uri[n] == '/') {
			*path = uri + n;
			return l;
		}
	}
	return -1;
}

json_t *mcp_resource_read(cc_runtime *rt, const char *uri, const char *path, cc_error *err)
{
	void *data = NULL;
	size_t len = 0;
	if (has_dotdot(path)) {
		cc_fail(err, CC_ERR_INVALID_INPUT, "a resource path has no '..'");
		return NULL;
	}
	if (cc_runtime_read_file(rt, path, MCP_MAX_RESOURCE, &data, &len, err) < 0)
		return NULL;
	json_t *item;
	const char *mime = mime_of(path);
	/* Text only when it is text: UTF-8, no NUL, not a binary type. */
	bool text = cc_utf8_valid(data, len) && !memchr(data, 0, len) &&
		    strcmp(mime, "image/png") && strcmp(mime, "image/jpeg") &&
		    strcmp(mime, "application/pdf");
	if (text) {
		item = json_pack("{s:s, s:s, s:s%}", "uri", uri, "mimeType", mime, "text",
				 (const char *)data, len);
	} else {
		char *b = b64_encode(data, len);
		item = b ? json_pack("{s:s, s:s, s:s}", "uri", uri, "mimeType", mime, "blob", b)
			 : NULL;
		free(b);
	}
	free(data);
	if (!item)
		cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	return item ? json_pack("{s:[o]}", "contents", item) : NULL;
}
