/* Files between evals: cc_runtime_write_file, cc_runtime_read_file,
 * cc_runtime_list_files. The worker serves them inside its confinement
 * (src/worker/files.c); here the requests are built, sized against the
 * frame caps, and every answer is checked for its shape. */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "message.h"
#include "supervisor.h"

static int check_path(const cc_runtime *rt, const char *path, cc_error *err)
{
	if (!rt)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "runtime is NULL");
	if (!path || path[0] != '/' || strlen(path) >= 4096)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "the guest path '%s' must be absolute (under /tmp or a mount)",
			       path ? path : "(null)");
	return 0;
}

/* The worker reports a refused path or a failed system call as a guest
 * error (the only kinds a result may carry are an eval's): for the host
 * it is bad input. */
static int request(cc_runtime *rt, uint64_t id, const struct cc_msgbuf *m, cc_value **v,
		   cc_error *err)
{
	int rc = cc_runtime_request_value(rt, id, m, v, err);
	if (rc < 0 && err && err->kind == CC_ERR_GUEST)
		err->kind = CC_ERR_INVALID_INPUT;
	return rc;
}

static void begin(struct cc_msgbuf *m, size_t fields, const char *t, uint64_t id, const char *path)
{
	cc_msgbuf_begin(m, fields, t);
	cc_pack_cstr(&m->pk, "id");
	msgpack_pack_uint64(&m->pk, id);
	cc_pack_cstr(&m->pk, "path");
	cc_pack_cstr(&m->pk, path);
}

CC_EXPORT int cc_runtime_write_file(cc_runtime *rt, const char *guest_path, const void *data,
				    size_t len, cc_error *err)
{
	if (check_path(rt, guest_path, err) < 0)
		return -1;
	const cc_limits *l = &rt->opts.limits;
	uint64_t cap = l->max_source > l->max_result ? l->max_source : l->max_result;
	if (len > cap)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "%s: %zu bytes is over the %llu bytes one write may carry (the "
			       "larger of max_source and max_result); raise one, or write in parts",
			       guest_path, len, (unsigned long long)cap);
	if (!data && len)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "data is NULL");
	uint64_t id = rt->next_id++;
	struct cc_msgbuf m;
	begin(&m, 4, "fwrite", id, guest_path);
	cc_pack_cstr(&m.pk, "data");
	msgpack_pack_bin(&m.pk, len);
	msgpack_pack_bin_body(&m.pk, data, len);
	cc_value *v = NULL;
	int rc = request(rt, id, &m, &v, err);
	cc_msgbuf_free(&m);
	cc_value_free(v);
	return rc < 0 ? cc_fail_wrap(err, "writing %s", guest_path) : 0;
}

CC_EXPORT int cc_runtime_read_file(cc_runtime *rt, const char *guest_path, uint64_t max_bytes,
				   void **data, size_t *len, cc_error *err)
{
	if (data)
		*data = NULL;
	if (len)
		*len = 0;
	if (check_path(rt, guest_path, err) < 0)
		return -1;
	if (!data || !len)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "data and len are required");
	uint64_t cap = rt->opts.limits.max_result;
	if (max_bytes == 0 || max_bytes > cap)
		max_bytes = cap; /* a bigger answer could not cross the frame cap */
	uint64_t id = rt->next_id++;
	struct cc_msgbuf m;
	begin(&m, 4, "fread", id, guest_path);
	cc_pack_cstr(&m.pk, "max");
	msgpack_pack_uint64(&m.pk, max_bytes);
	cc_value *v = NULL;
	int rc = request(rt, id, &m, &v, err);
	cc_msgbuf_free(&m);
	if (rc < 0)
		return cc_fail_wrap(err, "reading %s", guest_path);
	if (!v || v->type != CC_VALUE_BYTES || v->u.str.len > max_bytes) {
		cc_value_free(v);
		cc_runtime_interrupt(rt); /* the worker broke the protocol */
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
			       "reading %s: the worker answered with something other than the "
			       "file's bytes",
			       guest_path);
	}
	char *out = malloc(v->u.str.len + 1);
	if (!out) {
		cc_value_free(v);
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	}
	memcpy(out, v->u.str.ptr, v->u.str.len);
	out[v->u.str.len] = 0;
	*len = v->u.str.len;
	*data = out;
	cc_value_free(v);
	return 0;
}

/* Each entry must be {path: string, size: int, mtime: float, dir: bool}. */
static bool listing_ok(const cc_value *v)
{
	if (!v || v->type != CC_VALUE_ARRAY)
		return false;
	for (size_t i = 0; i < v->u.array.len; i++) {
		const cc_value *e = v->u.array.items[i];
		if (!e || e->type != CC_VALUE_MAP || e->u.map.len != 4)
			return false;
		const cc_value *p = cc_value_map_get(e, "path", NULL),
			       *s = cc_value_map_get(e, "size", NULL),
			       *t = cc_value_map_get(e, "mtime", NULL),
			       *d = cc_value_map_get(e, "dir", NULL);
		if (!p || p->type != CC_VALUE_STRING || p->u.str.ptr[0] != '/' || !s ||
		    s->type != CC_VALUE_INT || s->u.i < 0 || !t ||
		    (t->type != CC_VALUE_FLOAT && t->type != CC_VALUE_INT) || !d ||
		    d->type != CC_VALUE_BOOL)
			return false;
	}
	return true;
}

CC_EXPORT int cc_runtime_list_files(cc_runtime *rt, const char *guest_dir, cc_value **listing,
				    cc_error *err)
{
	if (listing)
		*listing = NULL;
	if (check_path(rt, guest_dir, err) < 0)
		return -1;
	if (!listing)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "listing is required");
	uint64_t id = rt->next_id++;
	struct cc_msgbuf m;
	begin(&m, 3, "flist", id, guest_dir);
	cc_value *v = NULL;
	int rc = request(rt, id, &m, &v, err);
	cc_msgbuf_free(&m);
	if (rc < 0)
		return cc_fail_wrap(err, "listing %s", guest_dir);
	if (!listing_ok(v)) {
		cc_value_free(v);
		cc_runtime_interrupt(rt);
		return cc_fail(err, CC_ERR_PROTOCOL_VIOLATION,
			       "listing %s: the worker's answer is not a listing", guest_dir);
	}
	*listing = v;
	return 0;
}
