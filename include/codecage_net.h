/* codecage_net.h: the network half of the public API (the broker's
 * allow-list policy and its hooks). Included by codecage.h, inside its
 * extern "C" block and after cc_runtime, cc_error and CC_EXPORT; include
 * codecage.h, not this file. */
#ifndef CODECAGE_NET_H
#define CODECAGE_NET_H
#ifndef CODECAGE_H
#error "include codecage.h, not codecage_net.h"
#endif

/* ---- network by allow-list, brokered by the host ----
 *
 * The worker never has a network of its own (empty network namespace,
 * seccomp, Landlock). With a non-empty allow-list, the guest gets
 * JavaScript's fetch (Request, Headers, Response, AbortController) and
 * Python's urllib.request and requests routed through a broker: each
 * request travels to the supervisor as a frame (a call of the reserved
 * name "__codecage_net", its fields validated by the supervisor), which
 * performs it with libcurl under this policy, on its own thread, so
 * concurrent requests run concurrently.
 *
 * Entries: "HOST", "HOST:PORT", "*.DOMAIN[:PORT]" (DOMAIN's subdomains,
 * not DOMAIN itself), "https://HOST[:PORT]" (https only); HOST is an ASCII
 * name (matched without regard to case; IDNA names in their xn-- form), a
 * dotted IPv4 address or a bracketed IPv6 one. Without a port, any port.
 * The host resolves the name itself and refuses any address in loopback,
 * private, link-local, CGNAT, multicast, unspecified, reserved or
 * cloud-metadata ranges (IPv4, IPv6, IPv4-mapped IPv6) unless an entry
 * names that host exactly (not by wildcard) or names that address; the
 * connection is pinned to the checked address; every redirect hop (at
 * most 5) is checked again. When several entries match a URL, the most
 * specific decides (an exact host over a wildcard, a longer wildcard
 * domain over a shorter one, then a port-specific entry over a portless
 * one, then https:// over any scheme): an exact entry lets a host that a
 * wildcard also matches reach the private address it resolves to. Only
 * http and https; TLS is always verified (the system CA store, or
 * ca_file); no proxy from the environment; no cookies or credentials
 * kept. On a redirect to another origin (scheme, host or port) the
 * guest's credential headers are dropped: CC_NET_CREDENTIAL_HEADERS by
 * name, any name holding one of CC_NET_CREDENTIAL_WORDS, and the
 * policy's credential_headers. */
/* The header names dropped on a redirect to another origin, whatever the
 * policy says (matched without regard to case), and the words a name
 * holding one of is dropped too. */
#define CC_NET_CREDENTIAL_HEADERS                                                                  \
	"Authorization, Proxy-Authorization, Cookie, X-Api-Key, Api-Key, X-Auth-Token"
#define CC_NET_CREDENTIAL_WORDS "auth, token, secret, key, session, password, credential, cookie"
typedef struct cc_net_request {
	const char *method;  /* "GET", ... */
	const char *url;     /* this hop's URL */
	const char *host;    /* lower case */
	int port;	     /* 1..65535 */
	const char *address; /* the checked address it connects to */
} cc_net_request;

/* Headers a request hook adds (cc_net_add_header). */
typedef struct cc_net_headers cc_net_headers;

/* Add "name: value" to the request the hook sees. Borrows both. Returns 0,
 * or -1 when the name is not an HTTP token or either has CR, LF or NUL. */
CC_EXPORT int cc_net_add_header(cc_net_headers *h, const char *name, const char *value);

/* Sees each request (and each redirect hop) before it goes, on a thread of
 * the broker's (several may run at once). Return 0 to let it go (after
 * adding any headers, e.g. an API key the guest never sees), or -1 to
 * refuse it; *reason may be set to a malloc'd message (the guest sees it
 * after "refused by the host: "; freed by the library). */
typedef int (*cc_net_request_fn)(void *user, const cc_net_request *req, cc_net_headers *add,
				 char **reason);
/* Sees each request's outcome, for audit, before the guest gets it: req
 * holds the method and the last URL (host and address empty, port 0),
 * status (0 when it failed; error then says why), response body bytes,
 * wall time in milliseconds. Same thread rules as cc_net_request_fn. */
typedef void (*cc_net_response_fn)(void *user, const cc_net_request *req, int status,
				   uint64_t bytes, double ms, const char *error);

typedef struct cc_net_options {
	const char *const *allow; /* entries (see above); n_allow 0 = no network */
	size_t n_allow;
	uint32_t max_requests;	     /* requests per eval; 100 */
	uint64_t max_response_bytes; /* one response body, decompressed, bytes;
					4 MiB; never above limits.max_result less
					64 KiB (the reply must fit its frame) */
	uint64_t max_total_bytes;    /* response bytes of one eval; 16 MiB */
	uint64_t max_body_bytes;     /* one request body, bytes; 1 MiB */
	double timeout_s;	     /* one request, seconds; 30; never past the
					eval: a request still running when its
					eval ends (result, timeout, close) is
					cancelled */
	const char *ca_file;	     /* PEM CA bundle; NULL = the system store */
	/* TEST ONLY: "NAME=ADDRESS" entries answering the broker's name
	 * lookups instead of the system resolver (a test maps a name to a
	 * loopback address, then changes it with cc_runtime_set_net). */
	const char *const *test_resolve;
	size_t n_test_resolve;
	cc_net_request_fn on_request; /* NULL = none */
	cc_net_response_fn on_response;
	void *hook_user;
	/* Runs once no request uses hook_user any more (the policy was
	 * replaced or the runtime closed, and its requests ended), also when
	 * cc_runtime_set_net fails: the call takes hook_user; NULL = none.
	 * cc_net_check never runs it. */
	void (*hook_free)(void *user);
	/* More header names (HTTP tokens, matched without regard to case) to
	 * drop from the guest's request on a redirect to another origin,
	 * beside the built-in ones above: the names of the host's own API's
	 * keys, say. At most 64; NULL/0 = none. Borrowed for the call that
	 * takes the options (copied). */
	const char *const *credential_headers;
	size_t n_credential_headers;
} cc_net_options;

/* Fill *n with the defaults above (no entries: no network). */
CC_EXPORT void cc_net_options_init(cc_net_options *n);

/* Check a policy without a runtime (front ends call it before starting
 * anything). Errors: invalid_input (the message names the bad entry or
 * limit and the option). */
CC_EXPORT int cc_net_check(const cc_net_options *n, cc_error *err);

/* Give the runtime this network policy (copied; the lists are borrowed
 * for the call only). The first call with entries gives the guest its
 * APIs (fetch, urllib, requests) by running a short bootstrap in it; a
 * later call replaces the policy for requests that start afterwards
 * (n_allow 0: refuse everything). The per-runtime override of
 * cc_options.net (which a pool or fork server applies to each session
 * itself). Errors: invalid_input (as cc_net_check, or
 * the runtime is busy), those of cc_runtime_eval's bootstrap (timeout,
 * worker_crashed). */
CC_EXPORT int cc_runtime_set_net(cc_runtime *rt, const cc_net_options *n, cc_error *err);

#endif /* CODECAGE_NET_H */
