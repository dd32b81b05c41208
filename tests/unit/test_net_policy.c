/* The network policy without a network: allow-list entries, address
 * ranges, URL checks against a policy (names answered by test_resolve),
 * and the validation of a guest's request (protocol.c). */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "net.h"
#include "supervisor.h"

static struct cc_net_policy *policy(const char *const *allow, size_t n, const char *const *res,
				    size_t nres)
{
	cc_net_options o;
	cc_error err = { 0 };
	struct cc_net_policy *p = NULL;
	cc_net_options_init(&o);
	o.allow = allow;
	o.n_allow = n;
	o.test_resolve = res;
	o.n_test_resolve = nres;
	cr_assert_eq(cc_net_policy_new(&o, 16u << 20, &p, &err), 0, "%s", err.message);
	return p;
}

Test(net, entries)
{
	static const char *const good[] = { "a.test",		"a.test:8080",
					    "*.a.test",		"https://a.test",
					    "https://a.test:1", "127.0.0.1",
					    "[::1]:80",		"A.Test" };
	static const char *const bad[] = { "",
					   "http://a.test",
					   "a.test/x",
					   "u@a.test",
					   "a.test:0",
					   "a.test:65536",
					   "a.test:",
					   "*.1.2.3.4",
					   "a.test.",
					   "b\xc3\xbc.test",
					   "2130706433",
					   "0x7f.1",
					   "[::ffff:1.2.3.4]",
					   "[::1",
					   "*",
					   "a b" };
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++) {
		cc_net_options o;
		cc_error err = { 0 };
		cc_net_options_init(&o);
		o.allow = &good[i];
		o.n_allow = 1;
		cr_expect_eq(cc_net_check(&o, &err), 0, "%s: %s", good[i], err.message);
		cc_error_clear(&err);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		cc_net_options o;
		cc_error err = { 0 };
		cc_net_options_init(&o);
		o.allow = &bad[i];
		o.n_allow = 1;
		cr_expect_eq(cc_net_check(&o, &err), -1, "accepted '%s'", bad[i]);
		cr_expect_eq(err.kind, CC_ERR_INVALID_INPUT);
		cr_expect(err.message && strstr(err.message, "allow_net"), "%s", err.message);
		cc_error_clear(&err);
	}
}

static const char *kind_of(const char *text)
{
	struct sockaddr_storage ss = { 0 };
	if (inet_pton(AF_INET, text, &((struct sockaddr_in *)&ss)->sin_addr) == 1)
		ss.ss_family = AF_INET;
	else if (inet_pton(AF_INET6, text, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1)
		ss.ss_family = AF_INET6;
	else
		cr_assert_fail("bad address %s", text);
	return cc_net_addr_forbidden((struct sockaddr *)&ss);
}

Test(net, ranges)
{
	static const char *const t[][2] = {
		{ "127.0.0.1", "loopback" },
		{ "10.0.0.1", "private" },
		{ "172.31.255.255", "private" },
		{ "192.168.0.1", "private" },
		{ "100.127.0.1", "CGNAT" },
		{ "169.254.169.254", "cloud-metadata" },
		{ "169.254.0.1", "link-local" },
		{ "0.1.2.3", "unspecified" },
		{ "224.1.1.1", "multicast" },
		{ "255.255.255.255", "reserved" },
		{ "::1", "loopback" },
		{ "::", "unspecified" },
		{ "::ffff:10.0.0.1", "private" },
		{ "::ffff:169.254.169.254", "cloud-metadata" },
		{ "64:ff9b::7f00:1", "loopback" },
		{ "fc00::1", "private" },
		{ "fd00:ec2::254", "private" },
		{ "fe80::1", "link-local" },
		{ "ff02::1", "multicast" },
		{ "2001:db8::1", "reserved" },
		{ "2002:7f00:1::", "reserved" },
		/* red team round 4: ranges that carry an IPv4 address in other ways */
		{ "2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved" },
		{ "64:ff9b:1::7f00:1", "reserved" },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++) {
		const char *k = kind_of(t[i][0]);
		cr_expect(k && !strcmp(k, t[i][1]), "%s: %s, not %s", t[i][0], k ? k : "public",
			  t[i][1]);
	}
	/* In reverse: public addresses pass. */
	static const char *const pub[] = { "93.184.216.34",	  "8.8.8.8",
					   "172.32.0.1",	  "100.128.0.1",
					   "2606:4700::1111",	  "::ffff:8.8.8.8",
					   "2001:4860:4860::8888" };
	for (size_t i = 0; i < sizeof(pub) / sizeof(*pub); i++)
		cr_expect_null(kind_of(pub[i]), "%s refused", pub[i]);
}

static char *check(struct cc_net_policy *p, const char *url, struct cc_net_target *t)
{
	char *why = NULL;
	int rc = cc_net_check_url(p, url, t, &why);
	cr_assert((rc == 0) == (why == NULL), "%s", url);
	return why;
}

Test(net, urls)
{
	static const char *const allow[] = { "*.ex.test", "pub.test:8080", "https://s.test",
					     "127.0.0.2:81" };
	static const char *const res[] = { "a.ex.test=10.0.0.5", "pub.test=127.0.0.9",
					   "b.ex.test=93.184.216.34", "s.test=93.184.216.35",
					   "c.ex.test=127.0.0.2" };
	struct cc_net_policy *p = policy(allow, 4, res, 5);
	struct cc_net_target t;
	static const char *const refused[][2] = {
		{ "http://a.ex.test/", "a private address" },
		{ "http://ex.test/", "not in allow_net" },
		{ "http://pub.test/", "not in allow_net" },
		{ "http://s.test/", "not in allow_net" },
		{ "http://u@b.ex.test/", "user name" },
		{ "http://b.ex.test./", "trailing dot" },
		{ "http://2130706433/", "numeric host form" },
		{ "http://[::ffff:127.0.0.2]:81/", "IPv4-mapped" },
		{ "gopher://b.ex.test/", "not http or https" },
		{ "http://b.ex.test:0/", "outside 1..65535" },
		{ "http://b.ex.test%2f/", "escape" },
		{ "http://b.ex.test\\x/", "escape" },
		{ "http://b.ex.test\\@x/", "user name" },
		{ "http://c.ex.test:80/", "loopback" },
		{ "http://b.ex.test/\r\n", "control character" },
		{ "/relative", "not an absolute" },
		{ "b.ex.test/x:y", "not an absolute" },
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
		char *why = check(p, refused[i][0], &t);
		cr_expect(why && strstr(why, refused[i][1]), "%s: %s", refused[i][0],
			  why ? why : "allowed");
		free(why);
	}
	cr_expect_null(check(p, "http://B.Ex.Test/x", &t));
	cr_expect_str_eq(t.host, "b.ex.test");
	cr_expect_str_eq(t.addr, "93.184.216.34");
	cr_expect_eq(t.port, 80);
	cr_expect_null(check(p, "http://pub.test:8080/", &t)); /* named exactly */
	cr_expect_str_eq(t.addr, "127.0.0.9");
	cr_expect_null(check(p, "https://s.test/", &t));
	cr_expect(t.https && t.port == 443);
	cr_expect_null(check(p, "http://c.ex.test:81/", &t)); /* the address is named */
	cr_expect_null(check(p, "http://127.0.0.2:81/", &t));
	cc_net_policy_unref(p);
}

/* One request map packed as the worker would, decoded as the supervisor
 * does. */
static cc_value *request(const char *method, const char *url, int nh, const char *hn,
			 const char *hv, int body_len, int extra)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, 1);
	msgpack_pack_map(&pk, 4 + extra);
#define S(x)                                                                                       \
	do {                                                                                       \
		msgpack_pack_str(&pk, strlen(x));                                                  \
		msgpack_pack_str_body(&pk, x, strlen(x));                                          \
	} while (0)
	S("method");
	S(method);
	S("url");
	S(url);
	S("headers");
	msgpack_pack_array(&pk, nh);
	for (int i = 0; i < nh; i++) {
		msgpack_pack_array(&pk, 2);
		S(hn);
		S(hv);
	}
	S("body");
	if (body_len < 0) {
		msgpack_pack_nil(&pk);
	} else {
		char *b = calloc(1, (size_t)body_len + 1);
		msgpack_pack_bin(&pk, (size_t)body_len);
		msgpack_pack_bin_body(&pk, b, (size_t)body_len);
		free(b);
	}
	if (extra) {
		S("x");
		msgpack_pack_int(&pk, 1);
	}
#undef S
	cc_value *v = NULL;
	cc_error err = { 0 };
	cc_value_caps caps = cc_value_frame_caps(16u << 20);
	cr_assert_eq(cc_value_decode_all(sb.data, sb.size, &v, &caps, &err), 0);
	msgpack_sbuffer_destroy(&sb);
	return v;
}

static char *parse_req(cc_value *v)
{
	struct cc_net_req r;
	char *why = NULL;
	int rc = cc_net_req_parse(v, 100, &r, &why);
	cr_assert((rc == 0) == (why == NULL));
	cc_net_req_free(&r);
	cc_value_free(v);
	return why;
}

Test(net, requests)
{
	struct {
		cc_value *v;
		const char *want;
	} t[] = {
		{ request("GET", "http://x/", 1, "X-A", "v\r\nX-B: 1", -1, 0), "CR, LF or NUL" },
		{ request("GET", "http://x/", 1, "X A", "v", -1, 0), "not an HTTP token" },
		{ request("GET", "http://x/", 1, "Host", "evil", -1, 0), "set by the host" },
		{ request("GET", "http://x/", 1, "Proxy-Authorization", "x", -1, 0),
		  "set by the host" },
		{ request("TRACE", "http://x/", 0, "", "", -1, 0), "not allowed" },
		{ request("G(T", "http://x/", 0, "", "", -1, 0), "not an HTTP token" },
		{ request("GET", "http://x/", 0, "", "", 101, 0), "max_body_bytes" },
		{ request("GET", "http://x/", 0, "", "", -1, 1), "unknown fields" },
		{ request("GET", "http://x/", 101, "A", "b", -1, 0), "at most 100" },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++) {
		char *why = parse_req(t[i].v);
		cr_expect(why && strstr(why, t[i].want), "case %zu: %s", i, why ? why : "accepted");
		free(why);
	}
	cr_expect_null(parse_req(request("post", "http://x/", 2, "X-A", "b", 100, 0)));
}
