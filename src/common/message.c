/* Protocol message helpers; see message.h. */
#include "message.h"

#include <string.h>

#include "error.h"

/* The packer's writer: msgpack-c's sbuffer, failing for good after its
 * first failure. */
static int msgbuf_write(void *data, const char *buf, size_t len)
{
	struct cc_msgbuf *m = data;
	if (m->failed || msgpack_sbuffer_write(&m->sb, buf, len) < 0) {
		m->failed = true;
		return -1;
	}
	return 0;
}

int cc_msgbuf_check(const struct cc_msgbuf *m, const char *what, cc_error *err)
{
	if (!m->failed)
		return 0;
	return cc_fail(err, CC_ERR_INTERNAL, "out of memory building the %s frame", what);
}

void cc_msgbuf_begin(struct cc_msgbuf *m, size_t nfields, const char *type)
{
	msgpack_sbuffer_init(&m->sb);
	m->failed = false;
	msgpack_packer_init(&m->pk, m, msgbuf_write);
	msgpack_pack_map(&m->pk, nfields);
	cc_pack_cstr(&m->pk, "t");
	cc_pack_cstr(&m->pk, type);
}

void cc_msgbuf_free(struct cc_msgbuf *m)
{
	msgpack_sbuffer_destroy(&m->sb);
}

void cc_pack_cstr(msgpack_packer *pk, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	msgpack_pack_str(pk, n);
	msgpack_pack_str_body(pk, s ? s : "", n);
}

void cc_pack_kv_str(msgpack_packer *pk, const char *key, const char *s)
{
	cc_pack_cstr(pk, key);
	cc_pack_cstr(pk, s);
}

void cc_pack_kv_strn(msgpack_packer *pk, const char *key, const char *s, size_t n)
{
	cc_pack_cstr(pk, key);
	msgpack_pack_str(pk, n);
	msgpack_pack_str_body(pk, s, n);
}

void cc_pack_kv_bin(msgpack_packer *pk, const char *key, const void *p, size_t n)
{
	cc_pack_cstr(pk, key);
	msgpack_pack_bin(pk, n);
	msgpack_pack_bin_body(pk, p, n);
}

void cc_pack_kv_u64(msgpack_packer *pk, const char *key, uint64_t v)
{
	cc_pack_cstr(pk, key);
	msgpack_pack_uint64(pk, v);
}

void cc_pack_kv_int(msgpack_packer *pk, const char *key, int64_t v)
{
	cc_pack_cstr(pk, key);
	msgpack_pack_int64(pk, v);
}

void cc_pack_kv_bool(msgpack_packer *pk, const char *key, bool v)
{
	cc_pack_cstr(pk, key);
	if (v)
		msgpack_pack_true(pk);
	else
		msgpack_pack_false(pk);
}

bool cc_identifier_ok(const char *s, size_t n)
{
	if (!s || n == 0 || n > 256)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
		if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
			return false;
	}
	return true;
}

bool cc_tool_name_ok(const char *s, size_t n)
{
	const char *dot = s ? memchr(s, '.', n) : NULL;
	if (!dot)
		return cc_identifier_ok(s, n);
	size_t a = (size_t)(dot - s);
	return n <= 256 && cc_identifier_ok(s, a) && cc_identifier_ok(dot + 1, n - a - 1);
}
