/* Displays: the MIME bundles an eval makes (display(), figures), kept
 * packed until its result frame carries them (main.c, send_result).
 *
 * The store keeps at most CC_MAX_DISPLAYS bundles and at most max_result
 * bytes of their data; what does not fit is dropped and remembered, and
 * the eval then ends as output_limit (cc_worker_display_settle), keeping
 * the displays that fitted. The supervisor checks all of it again
 * (src/lib/protocol.c). */
#include <stdio.h>
#include <string.h>

#include "message.h"
#include "worker.h"
#include "worker_internal.h"

static struct {
	msgpack_sbuffer sb; /* the packed bundles, one after the other */
	size_t n;
	uint64_t bytes;	 /* data bytes of the bundles kept */
	size_t dropped;	 /* bundles refused for the count */
	bool over_bytes; /* a bundle was refused for the bytes */
} st;

static const char *const mimes[] = {
	"image/png", "image/svg+xml", "text/html", "text/plain", "application/json",
};

void cc_worker_display_reset(void)
{
	msgpack_sbuffer_destroy(&st.sb);
	memset(&st, 0, sizeof(st));
	msgpack_sbuffer_init(&st.sb);
}

bool cc_worker_display_room(void)
{
	return st.n < CC_MAX_DISPLAYS;
}

int cc_worker_display_add(const struct cc_display_part *parts, size_t n)
{
	static const char png[8] = "\x89PNG\r\n\x1a\n";
	uint64_t bytes = 0;

	if (!n || n > sizeof(mimes) / sizeof(mimes[0]))
		return CC_DISPLAY_BAD;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < sizeof(mimes) / sizeof(mimes[0]) && strcmp(parts[i].mime, mimes[j]))
			j++;
		if (j == sizeof(mimes) / sizeof(mimes[0]))
			return CC_DISPLAY_BAD;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(parts[k].mime, parts[i].mime))
				return CC_DISPLAY_BAD;
		if (j == 0 &&
		    (parts[i].len < sizeof(png) || memcmp(parts[i].data, png, sizeof(png))))
			return CC_DISPLAY_NOT_PNG;
		bytes += parts[i].len;
	}
	if (st.n >= CC_MAX_DISPLAYS) {
		st.dropped++;
		return CC_DISPLAY_FULL;
	}
	if (bytes > cc_worker_limits.max_result - st.bytes) {
		st.over_bytes = true;
		return CC_DISPLAY_FULL;
	}
	msgpack_packer pk;
	size_t before = st.sb.size;
	int bad = 0;
	msgpack_packer_init(&pk, &st.sb, msgpack_sbuffer_write);
	bad |= msgpack_pack_map(&pk, n);
	for (size_t i = 0; i < n; i++) {
		bad |= msgpack_pack_str(&pk, strlen(parts[i].mime));
		bad |= msgpack_pack_str_body(&pk, parts[i].mime, strlen(parts[i].mime));
		if (!strcmp(parts[i].mime, "image/png")) {
			bad |= msgpack_pack_bin(&pk, parts[i].len);
			bad |= msgpack_pack_bin_body(&pk, parts[i].data, parts[i].len);
		} else {
			bad |= msgpack_pack_str(&pk, parts[i].len);
			bad |= msgpack_pack_str_body(&pk, parts[i].data, parts[i].len);
		}
	}
	if (bad) {
		/* out of memory part way: drop the partial bundle */
		st.sb.size = before;
		return CC_DISPLAY_NOMEM;
	}
	st.n++;
	st.bytes += bytes;
	return 0;
}

void cc_worker_display_settle(struct cc_outcome *o)
{
	char msg[300];

	if (st.dropped)
		snprintf(msg, sizeof(msg),
			 "the code made %zu displays (display() calls and open figures); a result "
			 "keeps at most %d (CC_MAX_DISPLAYS): close figures you do not need "
			 "(plt.close()) or draw several plots in one figure",
			 st.n + st.dropped, CC_MAX_DISPLAYS);
	else if (st.over_bytes || (o->ok && o->value.size + st.bytes > cc_worker_limits.max_result))
		snprintf(msg, sizeof(msg),
			 "the result with its displays is larger than the limit of %llu bytes; "
			 "make smaller images (a lower dpi) or " CC_RESULT_HINT,
			 (unsigned long long)cc_worker_limits.max_result);
	else
		return;
	if (o->ok || o->kind != CC_ERR_OUTPUT_LIMIT) {
		msgpack_sbuffer_destroy(&o->value);
		msgpack_sbuffer_init(&o->value);
		cc_outcome_fail(o, CC_ERR_OUTPUT_LIMIT, "OutputLimitError", msg, NULL);
	}
}

size_t cc_worker_display_count(void)
{
	return st.n;
}

size_t cc_worker_display_cost(void)
{
	/* each bundle decodes to a map node plus up to five strings */
	return (size_t)st.bytes + st.n * 6 * sizeof(cc_value) * 2;
}

void cc_worker_display_pack(msgpack_packer *pk)
{
	if (!st.n)
		return;
	cc_pack_cstr(pk, "displays");
	msgpack_pack_array(pk, st.n);
	/* through the packer's writer (a cc_msgbuf's, message.h), not
	 * straight into its buffer */
	pk->callback(pk->data, st.sb.data, st.sb.size);
}
