/* src/net/: the network broker: allow-list entries, URLs and address
 * ranges (net_policy.c), the requests with libcurl on a pool of threads
 * (net.c, net_pool.c) and the guest-side shims as data (net_fetch.js,
 * net_urllib.py, embedded by net_guest.c). It may include src/common/ and
 * the public headers; the supervisor (src/lib/) includes it and binds it
 * to a runtime (runtime_net.c).
 *
 * The network broker's internals (codecage.h, "network by allow-list").
 * Supervisor side: net_policy.c (entries, URLs, address ranges: no I/O),
 * net.c (the requests, with libcurl), net_guest.c (the guest's APIs). */
#ifndef CC_LIB_NET_H
#define CC_LIB_NET_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "codecage.h"

/* The reserved tool name a guest's request travels under. */
#define CC_NET_TOOL "__codecage_net"
#define CC_NET_MAX_REDIRECTS 5
#define CC_NET_MAX_URL 8192
#define CC_NET_MAX_HEADERS 100
#define CC_NET_MAX_HEADER_BYTES 65536
/* cc_net_options.credential_headers: at most this many names */
#define CC_NET_MAX_CREDENTIAL_HEADERS 64

struct cc_net_entry {
	char *host;    /* lower case; a canonical address for literals */
	int port;      /* 0 = any */
	bool wildcard; /* "*.host": host's subdomains */
	bool https;    /* "https://...": https only */
	bool literal;  /* host is an IP address */
};

struct cc_net_map {
	char *name, *addr;
};

/* One policy, immutable once made, shared by the requests that use it. */
struct cc_net_policy {
	int refs; /* atomic */
	struct cc_net_entry *e;
	size_t n;
	struct cc_net_map *res;
	size_t nres;
	uint32_t max_requests;
	uint64_t max_response, max_total, max_body;
	double timeout_s;
	char *ca_file;
	cc_net_request_fn on_request;
	cc_net_response_fn on_response;
	void *hook_user;
	void (*hook_free)(void *user);
	char **credential; /* more names to drop on a cross-origin hop */
	size_t ncredential;
};

/* Parse and copy n. max_result bounds max_response_bytes. Errors:
 * invalid_input naming the entry or the limit. */
int cc_net_policy_new(const cc_net_options *n, uint64_t max_result, struct cc_net_policy **out,
		      cc_error *err);
struct cc_net_policy *cc_net_policy_ref(struct cc_net_policy *p);
void cc_net_policy_unref(struct cc_net_policy *p);

/* Where one URL goes once checked. */
struct cc_net_target {
	bool https;
	char host[256]; /* lower case, without brackets */
	int port;
	struct sockaddr_storage sa; /* the checked address, port set */
	socklen_t salen;
	char addr[64]; /* its text, bracket-free */
};

/* Check url against the policy: syntax (scheme, userinfo, host form,
 * port), the allow-list, then the name's addresses and their ranges.
 * Returns 0 with *t filled, or -1 with *why a malloc'd message for the
 * guest (NULL when out of memory). */
int cc_net_check_url(const struct cc_net_policy *p, const char *url, struct cc_net_target *t,
		     char **why);

/* What kind of address it is when it is one the guest may not reach
 * unless allow_net names it ("loopback", "private", ...), or NULL. */
const char *cc_net_addr_forbidden(const struct sockaddr *sa);

/* Whether header name is one the broker drops on a redirect to another
 * origin: the built-in names and words (codecage_net.h) or one of p's. */
bool cc_net_credential_header(const struct cc_net_policy *p, const char *name);

/* An HTTP token (method, header name). */
bool cc_net_token(const char *s, size_t n);
/* A header value without CR, LF or NUL. */
bool cc_net_value_ok(const char *s, size_t n);

/* One guest request, as validated by cc_net_req_parse (protocol.c). */
struct cc_net_req {
	char method[17];
	char *url;
	char **name, **value; /* headers */
	size_t nh;
	char *body; /* NULL: none */
	size_t body_len;
};

/* Validate a net call's arguments field by field: exactly one map of
 * {method: token of at most 16 bytes, not CONNECT/TRACE/TRACK; url: str;
 * headers: array of at most 100 [name, value] string pairs, names HTTP
 * tokens and not ones the broker sets itself, values without CR, LF or
 * NUL; body: bin, str or nil of at most max_body bytes}. Returns 0, or -1
 * with *why a malloc'd message. */
int cc_net_req_parse(const cc_value *args, uint64_t max_body, struct cc_net_req *r, char **why);
void cc_net_req_free(struct cc_net_req *r);

/* Run fn(arg) on one of the broker's threads (net_pool.c). Returns 0, or
 * -1 when no thread could take it (fn then never runs). */
int cc_net_pool_submit(void (*fn)(void *arg), void *arg);

/* The bootstrap that gives the guest its network APIs (net_guest.c). */
const char *cc_net_bootstrap(cc_language lang);

/* ---- net.c: one runtime's broker ---- */

/* A runtime's broker state: its policy, its current eval's counters. */
struct cc_net;

/* Take one guest request (a call of the network tool: args as the guest
 * sent them, borrowed) of eval eval_id, whose deadline is soft_ns; answer
 * `call` now (refused) or from the request's thread. net: the runtime's
 * (made by cc_net_set_policy). */
void cc_net_dispatch(struct cc_net *net, uint64_t eval_id, const cc_value *args, int64_t soft_ns,
		     cc_tool_call *call);
/* Give *net (made first when NULL) the policy p, taking the caller's
 * reference, also on failure. Returns 1 when the runtime must now bind the
 * network tool and run the guest's APIs (p allows a host and that was
 * never done: cc_net_set_bound once it is), 0 when not, or -1 with err
 * (internal: libcurl would not start, out of memory). */
int cc_net_set_policy(struct cc_net **net, struct cc_net_policy *p, cc_error *err);
void cc_net_set_bound(struct cc_net *net);
/* Cancel the current eval's requests and free net and its policy
 * (requests in flight keep what they use). NULL does nothing. After
 * cc_tools_free. */
void cc_net_free(struct cc_net *net);
/* cc_options.net as a policy: *out NULL when opts->net is NULL. Made first
 * by the calls that take options, so that its hook_free runs exactly once
 * whatever fails later (their unref). Errors: invalid_input naming the bad
 * entry and "cc_options.net"; on error hook_free has run. */
int cc_net_from_options(const cc_options *opts, struct cc_net_policy **out, cc_error *err);

#endif
