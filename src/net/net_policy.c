/* The network policy: allow-list entries, URL checks, address ranges and
 * the name lookup (codecage.h, "network by allow-list"). Supervisor side.
 *
 * Every URL the guest (or a redirect) names is checked here before
 * libcurl sees it: scheme, userinfo, the host's textual form, the port,
 * the allow-list, then every address of the name against the ranges a
 * guest may not reach unless an entry names the host exactly or the
 * address. The caller pins the connection to the address chosen here. */
#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "net.h"

CC_EXPORT void cc_net_options_init(cc_net_options *n)
{
	memset(n, 0, sizeof(*n));
	n->max_requests = 100;
	n->max_response_bytes = 4u << 20;
	n->max_total_bytes = 16u << 20;
	n->max_body_bytes = 1u << 20;
	n->timeout_s = 30.0;
}

/* ---- host[:port] ---- */

/* A DNS name of ASCII labels [a-z0-9-] (already lower case). Sets *why
 * for a name that is not one. */
static bool name_ok(const char *h, char **why)
{
	size_t n = strlen(h), label = 0;
	bool numeric = true;
	if (!n || n > 253)
		return *why = cc_strprintf("the host name '%s' is empty or longer than 253 bytes",
					   h),
		       false;
	if (h[n - 1] == '.')
		return *why = cc_strprintf(
			       "the host name '%s' ends with a dot: write it without the "
			       "trailing dot",
			       h),
		       false;
	for (size_t i = 0; i <= n; i++) {
		unsigned char c = (unsigned char)h[i];
		if (c == '.' || c == 0) {
			if (!label || label > 63)
				return *why = cc_strprintf(
					       "the host name '%s' has an empty or overlong label",
					       h),
				       false;
			label = 0;
			continue;
		}
		if (c >= 0x80)
			return *why = cc_strprintf("the host name '%s' is not ASCII: write an "
						   "internationalised name in its xn-- (IDNA) form",
						   h),
			       false;
		if (!isalnum(c) && c != '-')
			return *why = cc_strprintf("the host name '%s' has the character '%c'", h,
						   c),
			       false;
		if (!isdigit(c) && !(c == 'x') && !(c >= 'a' && c <= 'f'))
			numeric = false;
		label++;
	}
	if (numeric)
		return *why = cc_strprintf("'%s' is a numeric host form that is not a dotted IPv4 "
					   "address: write the address as a.b.c.d",
					   h),
		       false;
	return true;
}

/* Parse "host", "host:port", "[v6]", "[v6]:port" (len bytes of s) into
 * host (lower case, canonical for an address), *port (0 when absent) and
 * *literal. Returns 0, or -1 with *why set. */
static int parse_hostport(const char *s, size_t len, char host[256], int *port, bool *literal,
			  char **why)
{
	const char *end = s + len, *colon = NULL;
	char raw[256];
	*port = 0;
	*literal = false;
	if (len && s[0] == '[') {
		const char *rb = memchr(s, ']', len);
		if (!rb || (size_t)(rb - s - 1) >= sizeof(raw))
			return *why = cc_strprintf("an IPv6 address must be [in brackets]"), -1;
		memcpy(raw, s + 1, (size_t)(rb - s - 1));
		raw[rb - s - 1] = 0;
		struct in6_addr a6;
		if (inet_pton(AF_INET6, raw, &a6) != 1)
			return *why = cc_strprintf("'[%s]' is not an IPv6 address", raw), -1;
		if (IN6_IS_ADDR_V4MAPPED(&a6))
			return *why = cc_strprintf(
				       "'[%s]' is an IPv4-mapped IPv6 address: write the IPv4 "
				       "address itself",
				       raw),
			       -1;
		inet_ntop(AF_INET6, &a6, host, 256);
		*literal = true;
		if (rb + 1 < end && rb[1] != ':')
			return *why = cc_strprintf("unexpected text after ']'"), -1;
		colon = rb + 1 < end ? rb + 1 : NULL;
	} else {
		colon = memchr(s, ':', len);
		size_t hl = colon ? (size_t)(colon - s) : len;
		if (hl >= sizeof(raw))
			return *why = cc_strprintf("the host name is longer than 253 bytes"), -1;
		for (size_t i = 0; i < hl; i++)
			raw[i] = (char)tolower((unsigned char)s[i]);
		raw[hl] = 0;
		struct in_addr a4;
		if (inet_pton(AF_INET, raw, &a4) == 1) {
			*literal = true;
		} else if (!name_ok(raw, why)) {
			return -1;
		}
		memcpy(host, raw, hl + 1);
	}
	if (colon) {
		const char *p = colon + 1;
		long v = 0;
		if (p == end)
			return *why = cc_strprintf("an empty port after ':'"), -1;
		for (; p < end; p++) {
			if (!isdigit((unsigned char)*p) || v > 65535)
				return *why = cc_strprintf("the port is not a number in 1..65535"),
				       -1;
			v = v * 10 + (*p - '0');
		}
		if (v < 1 || v > 65535)
			return *why = cc_strprintf("port %ld is outside 1..65535", v), -1;
		*port = (int)v;
	}
	return 0;
}

/* ---- the policy ---- */

static int entry_parse(const char *text, struct cc_net_entry *e, cc_error *err)
{
	const char *s = text;
	char *why = NULL;
	char host[256];
	memset(e, 0, sizeof(*e));
	if (!strncmp(s, "https://", 8)) {
		e->https = true;
		s += 8;
	} else if (strstr(s, "://")) {
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "allow_net entry '%s': only https:// may prefix an entry (HOST, "
			       "HOST:PORT, *.DOMAIN[:PORT], https://HOST[:PORT])",
			       text);
	}
	if (!strncmp(s, "*.", 2)) {
		e->wildcard = true;
		s += 2;
	}
	size_t len = strlen(s);
	if (!len || strpbrk(s, "/@?#\\ \t*"))
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "allow_net entry '%s' is not HOST, HOST:PORT, *.DOMAIN[:PORT] or "
			       "https://HOST[:PORT]",
			       text);
	if (parse_hostport(s, len, host, &e->port, &e->literal, &why) < 0) {
		cc_fail(err, CC_ERR_INVALID_INPUT, "allow_net entry '%s': %s", text,
			why ? why : "out of memory");
		free(why);
		return -1;
	}
	if (e->wildcard && e->literal)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "allow_net entry '%s': a wildcard needs a domain name", text);
	e->host = strdup(host);
	return e->host ? 0 : cc_fail(err, CC_ERR_INTERNAL, "out of memory");
}

CC_EXPORT int cc_net_check(const cc_net_options *n, cc_error *err)
{
	struct cc_net_policy *p = NULL;
	cc_net_options copy;
	if (!n)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "no network options");
	copy = *n;
	copy.hook_free = NULL; /* the caller keeps its hooks */
	if (cc_net_policy_new(&copy, UINT64_MAX, &p, err) < 0)
		return -1;
	cc_net_policy_unref(p);
	return 0;
}

static int limits_check(const cc_net_options *n, cc_error *err)
{
	if (n->n_allow && !n->allow)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "allow_net: a count without a list");
	if (n->max_requests < 1)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "net max_requests must be at least 1");
	if (n->max_response_bytes < 1 || n->max_total_bytes < 1)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "net max_response_bytes and max_total_bytes must be at least 1");
	if (!(n->timeout_s > 0) || n->timeout_s > CC_MAX_TIMEOUT_S)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "net timeout_s must be in (0, %d] seconds", CC_MAX_TIMEOUT_S);
	if ((n->n_credential_headers && !n->credential_headers) ||
	    n->n_credential_headers > CC_NET_MAX_CREDENTIAL_HEADERS)
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "net credential_headers: give at most %d names (a count needs its "
			       "list)",
			       CC_NET_MAX_CREDENTIAL_HEADERS);
	for (size_t i = 0; i < n->n_credential_headers; i++) {
		const char *h = n->credential_headers[i];
		bool printable = h != NULL;
		for (const char *c = h; c && *c; c++)
			printable = printable && *c >= 0x20 && *c < 0x7f;
		if (!h || !cc_net_token(h, strlen(h)))
			return cc_fail(
				err, CC_ERR_INVALID_INPUT,
				"net credential_headers[%zu] %s%s%s is not a header name (an "
				"HTTP token)",
				i, printable ? "'" : "", printable ? h : "(unprintable)",
				printable ? "'" : "");
	}
	return 0;
}

static const char *const credential_names[] = { "authorization", "proxy-authorization",
						"cookie",	 "x-api-key",
						"api-key",	 "x-auth-token" };
static const char *const credential_words[] = { "auth",	   "token",    "secret",     "key",
						"session", "password", "credential", "cookie" };

static bool has_word(const char *name, const char *word)
{
	size_t n = strlen(word);
	for (const char *c = name; *c; c++)
		if (!strncasecmp(c, word, n))
			return true;
	return false;
}

bool cc_net_credential_header(const struct cc_net_policy *p, const char *name)
{
	for (size_t i = 0; i < sizeof(credential_names) / sizeof(credential_names[0]); i++)
		if (!strcasecmp(name, credential_names[i]))
			return true;
	for (size_t i = 0; i < sizeof(credential_words) / sizeof(credential_words[0]); i++)
		if (has_word(name, credential_words[i]))
			return true;
	for (size_t i = 0; p && i < p->ncredential; i++)
		if (!strcasecmp(name, p->credential[i]))
			return true;
	return false;
}

static int map_parse(const char *text, struct cc_net_map *m, cc_error *err)
{
	const char *eq = text ? strchr(text, '=') : NULL;
	unsigned char buf[sizeof(struct in6_addr)];
	if (!eq || eq == text ||
	    (inet_pton(AF_INET, eq + 1, buf) != 1 && inet_pton(AF_INET6, eq + 1, buf) != 1))
		return cc_fail(err, CC_ERR_INVALID_INPUT,
			       "test_resolve entry '%s' is not NAME=ADDRESS", text ? text : "");
	m->name = strndup(text, (size_t)(eq - text));
	m->addr = strdup(eq + 1);
	for (char *c = m->name; c && *c; c++)
		*c = (char)tolower((unsigned char)*c);
	return m->name && m->addr ? 0 : cc_fail(err, CC_ERR_INTERNAL, "out of memory");
}

int cc_net_policy_new(const cc_net_options *n, uint64_t max_result, struct cc_net_policy **out,
		      cc_error *err)
{
	*out = NULL;
	if (!n)
		return cc_fail(err, CC_ERR_INVALID_INPUT, "no network options");
	if (limits_check(n, err) < 0)
		return -1;
	struct cc_net_policy *p = calloc(1, sizeof(*p));
	if (!p)
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	p->refs = 1;
	p->e = calloc(n->n_allow + 1, sizeof(*p->e));
	p->res = calloc(n->n_test_resolve + 1, sizeof(*p->res));
	p->ca_file = n->ca_file ? strdup(n->ca_file) : NULL;
	if (!p->e || !p->res || (n->ca_file && !p->ca_file)) {
		cc_net_policy_unref(p);
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	}
	for (; p->n < n->n_allow; p->n++)
		if (!n->allow[p->n] || entry_parse(n->allow[p->n], &p->e[p->n], err) < 0) {
			if (!n->allow[p->n])
				cc_fail(err, CC_ERR_INVALID_INPUT, "allow_net entry %zu is NULL",
					p->n);
			cc_net_policy_unref(p);
			return -1;
		}
	for (; p->nres < n->n_test_resolve; p->nres++)
		if (map_parse(n->test_resolve[p->nres], &p->res[p->nres], err) < 0) {
			p->nres++;
			cc_net_policy_unref(p);
			return -1;
		}
	p->credential = calloc(n->n_credential_headers + 1, sizeof(*p->credential));
	for (; p->credential && p->ncredential < n->n_credential_headers; p->ncredential++)
		if (!(p->credential[p->ncredential] =
			      strdup(n->credential_headers[p->ncredential])))
			break;
	if (!p->credential || p->ncredential < n->n_credential_headers) {
		cc_net_policy_unref(p);
		return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
	}
	uint64_t room = max_result > (64u << 10) ? max_result - (64u << 10) : 1;
	p->max_requests = n->max_requests;
	p->max_response = n->max_response_bytes < room ? n->max_response_bytes : room;
	p->max_total = n->max_total_bytes;
	p->max_body = n->max_body_bytes;
	p->timeout_s = n->timeout_s;
	p->on_request = n->on_request;
	p->on_response = n->on_response;
	p->hook_user = n->hook_user;
	p->hook_free = n->hook_free;
	*out = p;
	return 0;
}

struct cc_net_policy *cc_net_policy_ref(struct cc_net_policy *p)
{
	if (p)
		__atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);
	return p;
}

void cc_net_policy_unref(struct cc_net_policy *p)
{
	if (!p || __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->e[i].host);
	for (size_t i = 0; i < p->nres; i++) {
		free(p->res[i].name);
		free(p->res[i].addr);
	}
	free(p->e);
	free(p->res);
	free(p->ca_file);
	for (size_t i = 0; i < p->ncredential; i++)
		free(p->credential[i]);
	free(p->credential);
	if (p->hook_free)
		p->hook_free(p->hook_user);
	free(p);
}

/* ---- address ranges ---- */

static bool v4_in(uint32_t a, const char *net, int bits)
{
	struct in_addr n;
	inet_pton(AF_INET, net, &n);
	uint32_t mask = bits ? ~0u << (32 - bits) : 0;
	return (a & mask) == (ntohl(n.s_addr) & mask);
}

static const char *v4_kind(uint32_t a)
{
	static const struct {
		const char *net;
		int bits;
		const char *kind;
	} r[] = {
		{ "0.0.0.0", 8, "unspecified" },
		{ "10.0.0.0", 8, "private" },
		{ "100.64.0.0", 10, "CGNAT" },
		{ "127.0.0.0", 8, "loopback" },
		{ "169.254.169.254", 32, "cloud-metadata" },
		{ "169.254.0.0", 16, "link-local" },
		{ "172.16.0.0", 12, "private" },
		{ "192.0.0.0", 24, "reserved" },
		{ "192.0.2.0", 24, "reserved" },
		{ "192.168.0.0", 16, "private" },
		{ "198.18.0.0", 15, "reserved" },
		{ "198.51.100.0", 24, "reserved" },
		{ "203.0.113.0", 24, "reserved" },
		{ "224.0.0.0", 4, "multicast" },
		{ "240.0.0.0", 4, "reserved" },
	};
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (v4_in(a, r[i].net, r[i].bits))
			return r[i].kind;
	return NULL;
}

const char *cc_net_addr_forbidden(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return v4_kind(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	if (sa->sa_family != AF_INET6)
		return "unknown-family";
	const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
	const uint8_t *b = a->s6_addr;
	uint32_t embedded;
	if (IN6_IS_ADDR_UNSPECIFIED(a))
		return "unspecified";
	if (IN6_IS_ADDR_LOOPBACK(a))
		return "loopback";
	/* IPv4-mapped and -compatible, NAT64 (64:ff9b::/96): the IPv4 inside. */
	static const uint8_t nat64[12] = { 0, 0x64, 0xff, 0x9b };
	if (IN6_IS_ADDR_V4MAPPED(a) || IN6_IS_ADDR_V4COMPAT(a) || !memcmp(b, nat64, 12)) {
		memcpy(&embedded, b + 12, 4);
		const char *k = v4_kind(ntohl(embedded));
		return k ? k : IN6_IS_ADDR_V4MAPPED(a) ? NULL : "reserved";
	}
	if (b[0] == 0x20 && b[1] == 0x02) { /* 6to4 */
		memcpy(&embedded, b + 2, 4);
		if (v4_kind(ntohl(embedded)))
			return "reserved";
	}
	if ((b[0] & 0xfe) == 0xfc)
		return "private"; /* fc00::/7, also fd00:ec2::254 (metadata) */
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return "link-local";
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)
		return "link-local"; /* site-local, deprecated */
	if (b[0] == 0xff)
		return "multicast";
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8)
		return "reserved"; /* documentation */
	if (b[0] == 0x20 && b[1] == 0x01 && !b[2] && !b[3])
		return "reserved"; /* Teredo 2001::/32: an (obfuscated) IPv4 inside */
	if (!b[0] && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && !b[4] && b[5] == 0x01)
		return "reserved"; /* local-use NAT64 64:ff9b:1::/48 (RFC 8215) */
	if (b[0] == 0x01 && !b[1] && !b[2] && !b[3] && !b[4] && !b[5] && !b[6] && !b[7])
		return "reserved"; /* discard 100::/64 */
	return NULL;
}

/* ---- URLs ---- */

static bool entry_matches(const struct cc_net_entry *e, const struct cc_net_target *t)
{
	if ((e->https && !t->https) || (e->port && e->port != t->port))
		return false;
	if (!e->wildcard)
		return !strcmp(e->host, t->host);
	size_t hl = strlen(t->host), dl = strlen(e->host);
	return hl > dl + 1 && t->host[hl - dl - 1] == '.' && !strcmp(t->host + hl - dl, e->host);
}

/* Whether a, which matches the same URL as b, decides over it: an exact
 * host over a wildcard, a longer wildcard domain over a shorter, then a
 * port over none, then https only over any scheme; otherwise the first
 * listed (b) stays. */
static bool more_specific(const struct cc_net_entry *a, const struct cc_net_entry *b)
{
	if (a->wildcard != b->wildcard)
		return !a->wildcard;
	size_t la = strlen(a->host), lb = strlen(b->host);
	if (a->wildcard && la != lb)
		return la > lb;
	if (!a->port != !b->port)
		return a->port != 0;
	return a->https && !b->https;
}

/* Whether an address of a private kind is named by the policy itself. */
static bool addr_named(const struct cc_net_policy *p, const struct cc_net_target *t)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->e[i].literal && !strcmp(p->e[i].host, t->addr) &&
		    (!p->e[i].port || p->e[i].port == t->port) && (!p->e[i].https || t->https))
			return true;
	return false;
}

static bool set_addr(struct cc_net_target *t, const char *text)
{
	memset(&t->sa, 0, sizeof(t->sa));
	struct sockaddr_in *s4 = (struct sockaddr_in *)&t->sa;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&t->sa;
	if (inet_pton(AF_INET, text, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)t->port);
		t->salen = sizeof(*s4);
	} else if (inet_pton(AF_INET6, text, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)t->port);
		t->salen = sizeof(*s6);
	} else {
		return false;
	}
	inet_ntop(t->sa.ss_family,
		  t->sa.ss_family == AF_INET ? (void *)&s4->sin_addr : (void *)&s6->sin6_addr,
		  t->addr, sizeof(t->addr));
	return true;
}

/* Try the addresses of t->host in turn; keep the first allowed. */
static int resolve(const struct cc_net_policy *p, bool exact, struct cc_net_target *t, char **why)
{
	char first[64] = "";
	const char *kind = NULL;
	size_t tried = 0;
	struct addrinfo *ai = NULL;
	bool mapped = false;
	for (size_t i = 0; i < p->nres; i++)
		if (!strcmp(p->res[i].name, t->host)) {
			mapped = true;
			if (!set_addr(t, p->res[i].addr))
				continue;
			const char *k = cc_net_addr_forbidden((struct sockaddr *)&t->sa);
			if (!k || exact || addr_named(p, t))
				return 0;
			if (!tried++) {
				kind = k;
				snprintf(first, sizeof(first), "%s", t->addr);
			}
		}
	if (!mapped) {
		struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
		int rc = getaddrinfo(t->host, NULL, &hints, &ai);
		if (rc)
			return *why = cc_strprintf("cannot resolve %s: %s", t->host,
						   gai_strerror(rc)),
			       -1;
		for (struct addrinfo *a = ai; a; a = a->ai_next) {
			char text[64];
			const void *ap =
				a->ai_family == AF_INET
					? (void *)&((struct sockaddr_in *)a->ai_addr)->sin_addr
					: (void *)&((struct sockaddr_in6 *)a->ai_addr)->sin6_addr;
			if (!inet_ntop(a->ai_family, ap, text, sizeof(text)) || !set_addr(t, text))
				continue;
			const char *k = cc_net_addr_forbidden((struct sockaddr *)&t->sa);
			if (!k || exact || addr_named(p, t)) {
				freeaddrinfo(ai);
				return 0;
			}
			if (!tried++) {
				kind = k;
				snprintf(first, sizeof(first), "%s", t->addr);
			}
		}
		freeaddrinfo(ai);
	}
	if (!tried)
		return *why = cc_strprintf("cannot resolve %s: no address", t->host), -1;
	*why = cc_strprintf("refused: %s resolves to %s, a %s address; allow_net decides: name the "
			    "host exactly (not by a wildcard) or the address itself to allow it",
			    t->host, first, kind);
	return -1;
}

/* Does curl read the URL as we do? Its host must be ours. */
static bool curl_agrees(const char *url, const struct cc_net_target *t)
{
	CURLU *u = curl_url();
	char *host = NULL, *user = NULL;
	bool ok = u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
		  curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
		  curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_NO_USER;
	if (ok) {
		char *h = host;
		size_t n = strlen(h);
		if (n > 2 && h[0] == '[') {
			h++;
			n -= 2;
		}
		ok = n == strlen(t->host) && !strncasecmp(h, t->host, n);
	}
	curl_free(host);
	curl_free(user);
	curl_url_cleanup(u);
	return ok;
}

int cc_net_check_url(const struct cc_net_policy *p, const char *url, struct cc_net_target *t,
		     char **why)
{
	memset(t, 0, sizeof(*t));
	*why = NULL;
	size_t n = strlen(url);
	if (n > CC_NET_MAX_URL)
		return *why = cc_strprintf("the URL is longer than %d bytes", CC_NET_MAX_URL), -1;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)url[i] <= 0x20 || url[i] == 0x7f)
			return *why = cc_strprintf("the URL has a space or control character"), -1;
	const char *rest;
	if (!strncasecmp(url, "http://", 7)) {
		rest = url + 7;
	} else if (!strncasecmp(url, "https://", 8)) {
		rest = url + 8;
		t->https = true;
	} else {
		const char *c = strchr(url, ':');
		if (!c || c == url || strcspn(url, "/?#") < (size_t)(c - url))
			return *why = cc_strprintf(
				       "refused: '%.200s' is not an absolute http:// or https:// "
				       "URL",
				       url),
			       -1;
		return *why = cc_strprintf(
			       "refused: the scheme '%.*s' is not http or https (the only "
			       "ones the network allows)",
			       (int)(c - url) > 32 ? 32 : (int)(c - url), url),
		       -1;
	}
	size_t alen = strcspn(rest, "/?#");
	if (memchr(rest, '@', alen))
		return *why = cc_strprintf(
			       "refused: the URL carries a user name or password before '@'; "
			       "send credentials in a header instead"),
		       -1;
	if (memchr(rest, '\\', alen) || memchr(rest, '%', alen))
		return *why = cc_strprintf("refused: the URL's host has a '\\' or '%%' escape"), -1;
	bool literal;
	if (parse_hostport(rest, alen, t->host, &t->port, &literal, why) < 0) {
		char *inner = *why;
		*why = cc_strprintf("refused: %s", inner ? inner : "bad host");
		free(inner);
		return -1;
	}
	if (!t->port)
		t->port = t->https ? 443 : 80;
	if (!curl_agrees(url, t))
		return *why = cc_strprintf(
			       "refused: the URL is malformed (its host is not read the same "
			       "way by every parser)"),
		       -1;
	const struct cc_net_entry *hit = NULL;
	for (size_t i = 0; i < p->n; i++)
		if (entry_matches(&p->e[i], t) && (!hit || more_specific(&p->e[i], hit)))
			hit = &p->e[i];
	if (!hit)
		return *why = cc_strprintf(
			       "refused: %s%s:%d is not in allow_net (allow_net decides which "
			       "hosts and ports the guest may reach)",
			       t->https ? "https://" : "http://", t->host, t->port),
		       -1;
	if (literal) {
		set_addr(t, t->host);
		const char *k = cc_net_addr_forbidden((struct sockaddr *)&t->sa);
		if (k && !hit->literal)
			return *why = cc_strprintf("refused: %s is a %s address", t->addr, k), -1;
		return 0;
	}
	return resolve(p, !hit->wildcard, t, why);
}
