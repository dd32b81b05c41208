/* Allocation-failure injection on the supervisor's decoder and encoder
 * (tests/alloc/test_allocfail.py). For each input (a frame payload, e.g.
 * the frame fuzzer's corpus) it counts the allocations of one pass (parse
 * with cc_msg_parse, and for a result, its value encoded again with
 * cc_value_encode into msgpack-c's sbuffer), then runs the pass once per N
 * with the Nth allocation failing. Each must end in a clean error: -1 with
 * an error kind (internal, for an input the pass otherwise takes), never
 * success after a lost allocation, never a crash, and
 * nothing leaked (LeakSanitizer in build-asan, at exit).
 * usage: cc-allocfail-decode FILE... ; prints "ok"/"FAIL" lines and
 * "N failed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocfail.h"
#include "error.h"
#include "supervisor.h"
#include "value.h"

static int failures, checks;

/* One pass: parse buf, re-encode a result's value. Returns 0 when both
 * worked, -1 with err filled otherwise. */
static int pass(const char *buf, size_t len, cc_error *err)
{
	struct cc_msg m;
	if (cc_msg_parse(buf, len, 64 * 1024, &m, err) < 0)
		return -1;
	int rc = 0;
	if (m.what == CC_MSG_RESULT && m.ok) {
		msgpack_sbuffer sb;
		msgpack_packer pk;
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		cc_value_caps caps = cc_value_default_caps();
		rc = cc_value_encode(&pk, m.value, &caps, err);
		msgpack_sbuffer_destroy(&sb);
	}
	cc_msg_free(&m);
	return rc;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0;
	*len = 0;
	for (;;) {
		if (*len == cap) {
			char *nb = realloc(buf, cap = cap ? 2 * cap : 4096);
			if (!nb)
				break;
			buf = nb;
		}
		size_t r = fread(buf + *len, 1, cap - *len, f);
		*len += r;
		if (!r)
			break;
	}
	fclose(f);
	return buf;
}

/* Every single allocation failure of one input's pass. */
static void inject(const char *path, const char *buf, size_t len)
{
	cc_error err = { 0 };
	allocfail_arm(0);
	int rc0 = pass(buf, len, &err);
	long total = allocfail_disarm();
	cc_error_clear(&err);
	int bad = 0;
	for (long n = 1; n <= total; n++) {
		allocfail_arm(n);
		int rc = pass(buf, len, &err);
		allocfail_disarm();
		bool fired = allocfail_fired();
		/* a frame the pass takes must, short of memory, fail as internal
		 * (not as the worker's protocol_violation, nor the caller's
		 * invalid_input) */
		bool wrong_kind = rc0 == 0 && fired && rc < 0 && err.kind != CC_ERR_INTERNAL;
		if ((fired && rc == 0) || (rc < 0 && err.kind == CC_OK) || (rc0 < 0 && rc == 0) ||
		    wrong_kind) {
			if (bad++ < 3)
				printf("FAIL %s: allocation %ld of %ld failing gave rc=%d kind=%s "
				       "(%s)\n",
				       path, n, total, rc, cc_error_kind_name(err.kind),
				       err.message ? err.message : "no message");
		}
		cc_error_clear(&err);
	}
	failures += bad != 0;
	checks++;
	if (!bad)
		printf("ok   %s: %ld allocations, each failing cleanly\n", path, total);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		size_t len = 0;
		char *buf = slurp(argv[i], &len);
		if (!buf) {
			printf("FAIL cannot read %s\n", argv[i]);
			failures++;
			continue;
		}
		inject(argv[i], buf, len);
		free(buf);
	}
	printf("%d inputs\n%d failed\n", checks, failures);
	return failures != 0;
}
