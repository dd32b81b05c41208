/* Building protocol messages (HACKING.md, "Protocol") with msgpack-c, and
 * the one rule for global names. Pure helpers shared by both sides. */
#ifndef CC_COMMON_MESSAGE_H
#define CC_COMMON_MESSAGE_H

#include <msgpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A message being built: a growable buffer with a packer writing into it.
 * Free with cc_msgbuf_free. When the buffer cannot grow, that write and
 * every later one fail and `failed` is set (msgpack-c's sbuffer alone would
 * take a later, smaller write and leave a hole in the frame): check it
 * with cc_msgbuf_check before sending. */
struct cc_msgbuf {
	msgpack_sbuffer sb;
	msgpack_packer pk;
	bool failed;
};

/* Start a map of nfields fields (including "t") and write "t": type. */
void cc_msgbuf_begin(struct cc_msgbuf *m, size_t nfields, const char *type);
void cc_msgbuf_free(struct cc_msgbuf *m);

struct cc_error;
/* 0 when every write to m worked; else -1 with err internal ("out of
 * memory building the <what> frame"). */
int cc_msgbuf_check(const struct cc_msgbuf *m, const char *what, struct cc_error *err);

/* Pack a NUL-terminated string (NULL packs as ""). */
void cc_pack_cstr(msgpack_packer *pk, const char *s);

/* One field of a map being packed: the key (a NUL-terminated string),
 * then its value. The map's header, with the count of fields, is the
 * caller's (cc_msgbuf_begin, msgpack_pack_map). str: NUL-terminated, NULL
 * packs as ""; strn: n bytes of s; bin: n bytes as MessagePack bin. No
 * allocation of their own: a failure shows in the buffer (cc_msgbuf). */
void cc_pack_kv_str(msgpack_packer *pk, const char *key, const char *s);
void cc_pack_kv_strn(msgpack_packer *pk, const char *key, const char *s, size_t n);
void cc_pack_kv_bin(msgpack_packer *pk, const char *key, const void *p, size_t n);
void cc_pack_kv_u64(msgpack_packer *pk, const char *key, uint64_t v);
void cc_pack_kv_int(msgpack_packer *pk, const char *key, int64_t v);
void cc_pack_kv_bool(msgpack_packer *pk, const char *key, bool v);

/* A global name both engines accept: [A-Za-z_][A-Za-z0-9_]*, 1..256 bytes. */
bool cc_identifier_ok(const char *s, size_t n);

/* A tool's name: an identifier, or two joined by one dot ("SERVER.TOOL":
 * the guest reaches it as tools.SERVER.TOOL), at most 256 bytes. */
bool cc_tool_name_ok(const char *s, size_t n);

#endif
