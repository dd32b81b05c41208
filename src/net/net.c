/* The network broker (codecage.h, "network by allow-list"). Supervisor
 * side.
 *
 * A guest request arrives as a call of the reserved tool CC_NET_TOOL,
 * dispatched here by tools.c without the tool budget: the arguments are
 * validated (protocol.c), counted against the eval's request limit, and
 * performed by libcurl on a thread of the broker's pool (net_pool.c), so
 * concurrent requests run concurrently while the eval's thread keeps reading frames; the answer
 * goes back through the deferred-reply queue (deferred.c). Each hop (the
 * request, then every redirect, at most 5) is checked by net_policy.c and
 * pinned to the checked address (CURLOPT_RESOLVE, and a socket callback
 * that refuses any other address). The guest gets a value, never a tool
 * failure: {status, statusText, url, redirected, headers, body} or
 * {error, code}; its bootstrap (net_guest.c) turns the latter into the
 * language's usual error. */
#include <curl/curl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "error.h"
#include "net.h"
#include "utf8.h"

/* One eval's share of the network: its counters, and the flag that stops
 * its requests when it ends. */
struct net_eval {
	int refs; /* atomic */
	uint64_t id;
	uint32_t requests; /* the eval's thread only */
	uint64_t bytes;	   /* atomic */
	int cancelled;	   /* atomic */
	int64_t soft_ns;   /* the eval's deadline */
};

struct cc_net {
	pthread_mutex_t lock;
	struct cc_net_policy *policy;
	struct net_eval *cur;
	bool bound;
};

struct job {
	struct cc_net_policy *p;
	struct net_eval *ev;
	cc_tool_call *call;
	struct cc_net_req req;
	int64_t deadline_ns;
};

struct cc_net_headers {
	struct curl_slist *l;
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void eval_unref(struct net_eval *ev)
{
	if (ev && !__atomic_sub_fetch(&ev->refs, 1, __ATOMIC_ACQ_REL))
		free(ev);
}

CC_EXPORT int cc_net_add_header(cc_net_headers *h, const char *name, const char *value)
{
	if (!h || !name || !value || !cc_net_token(name, strlen(name)) ||
	    !cc_net_value_ok(value, strlen(value)))
		return -1;
	char *line = cc_strprintf("%s: %s", name, value);
	struct curl_slist *l = line ? curl_slist_append(h->l, line) : NULL;
	free(line);
	if (!l)
		return -1;
	h->l = l;
	return 0;
}

/* ---- one transfer ---- */

struct xfer {
	struct job *j;
	const struct cc_net_target *t;
	char *buf;
	size_t len, cap;
	bool over, total_over;
	cc_value *headers;
	size_t hbytes;
	char reason[128];
};

static size_t on_body(char *p, size_t size, size_t n, void *u)
{
	struct xfer *x = u;
	size_t k = size * n;
	if (x->len + k > x->j->p->max_response) {
		x->over = true;
		return 0;
	}
	uint64_t total = __atomic_add_fetch(&x->j->ev->bytes, k, __ATOMIC_RELAXED);
	if (total > x->j->p->max_total) {
		x->total_over = true;
		return 0;
	}
	if (x->len + k > x->cap) {
		size_t cap = x->cap ? x->cap : 16384;
		while (cap < x->len + k)
			cap *= 2;
		char *b = realloc(x->buf, cap);
		if (!b)
			return 0;
		x->buf = b;
		x->cap = cap;
	}
	memcpy(x->buf + x->len, p, k);
	x->len += k;
	return k;
}

/* A header's text as UTF-8: Latin-1 when it is not. */
static cc_value *text_value(const char *s, size_t n)
{
	if (cc_utf8_valid(s, n))
		return cc_value_new_string(s, n);
	char *u = malloc(2 * n + 1);
	size_t k = 0;
	if (!u)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x80) {
			u[k++] = (char)c;
		} else {
			u[k++] = (char)(0xc0 | (c >> 6));
			u[k++] = (char)(0x80 | (c & 0x3f));
		}
	}
	cc_value *v = cc_value_new_string(u, k);
	free(u);
	return v;
}

static size_t on_header(char *p, size_t size, size_t n, void *u)
{
	struct xfer *x = u;
	size_t k = size * n;
	x->hbytes += k;
	if (x->hbytes > CC_NET_MAX_HEADER_BYTES)
		return 0;
	while (k && (p[k - 1] == '\n' || p[k - 1] == '\r'))
		k--;
	if (k > 5 && !strncmp(p, "HTTP/", 5)) {
		/* A new status line (after 100 Continue): its headers only. */
		cc_value_free(x->headers);
		x->headers = cc_value_new_array();
		const char *sp = memchr(p, ' ', k);
		sp = sp ? memchr(sp + 1, ' ', k - (size_t)(sp + 1 - p)) : NULL;
		size_t rl = sp ? k - (size_t)(sp + 1 - p) : 0;
		snprintf(x->reason, sizeof(x->reason), "%.*s", (int)rl, sp ? sp + 1 : "");
		return size * n;
	}
	const char *colon = memchr(p, ':', k);
	if (!colon || !x->headers)
		return size * n;
	const char *v = colon + 1;
	while (v < p + k && (*v == ' ' || *v == '\t'))
		v++;
	cc_value *pair = cc_value_new_array();
	cc_value_array_push(pair, text_value(p, (size_t)(colon - p)));
	cc_value_array_push(pair, text_value(v, (size_t)(p + k - v)));
	cc_value_array_push(x->headers, pair);
	return size * n;
}

static int on_progress(void *u, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	struct xfer *x = u;
	(void)a, (void)b, (void)c, (void)d;
	return __atomic_load_n(&x->j->ev->cancelled, __ATOMIC_RELAXED) ? 1 : 0;
}

/* The second check: curl may open a socket to the checked address only. */
static curl_socket_t on_socket(void *u, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct xfer *x = u;
	const struct sockaddr_storage *want = &x->t->sa;
	(void)purpose;
	if (a->family != want->ss_family)
		return CURL_SOCKET_BAD;
	if (a->family == AF_INET) {
		const struct sockaddr_in *g = (const void *)&a->addr, *w = (const void *)want;
		if (g->sin_addr.s_addr != w->sin_addr.s_addr || g->sin_port != w->sin_port)
			return CURL_SOCKET_BAD;
	} else {
		const struct sockaddr_in6 *g = (const void *)&a->addr, *w = (const void *)want;
		if (memcmp(&g->sin6_addr, &w->sin6_addr, 16) || g->sin6_port != w->sin6_port)
			return CURL_SOCKET_BAD;
	}
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

/* The outcome of one hop. */
struct hop {
	long status;
	char *location; /* malloc'd, for a redirect */
	char *error;	/* malloc'd, when it failed */
	const char *code;
};

static void set_curl_opts(CURL *c, struct xfer *x, const struct cc_net_target *t, const char *url,
			  const char *method, bool body, struct curl_slist *hl,
			  struct curl_slist *pin, char *errbuf)
{
	struct job *j = x->j;
	int64_t left_ms = (j->deadline_ns - now_ns()) / 1000000;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_NETRC, (long)CURL_NETRC_IGNORED);
	curl_easy_setopt(c, CURLOPT_RESOLVE, pin);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, on_socket);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, x);
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(c, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	if (j->p->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, j->p->ca_file);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(left_ms > 1 ? left_ms : 1));
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)j->p->max_response);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, x);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "codecage");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	if (!strcmp(method, "HEAD")) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)j->req.body_len);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, j->req.body);
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	} else if (strcmp(method, "GET")) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	}
	(void)t;
}

static void hop_error(struct hop *h, CURLcode rc, const struct xfer *x, const char *host,
		      const char *errbuf)
{
	const struct cc_net_policy *p = x->j->p;
	if (x->over || rc == CURLE_FILESIZE_EXCEEDED) {
		h->code = "limit";
		h->error = cc_strprintf("the response from %s is over %llu bytes (the net option "
					"max_response_bytes); it was cut off",
					host, (unsigned long long)p->max_response);
	} else if (x->total_over) {
		h->code = "limit";
		h->error = cc_strprintf(
			"the eval's responses are over %llu bytes in total (the net option "
			"max_total_bytes)",
			(unsigned long long)p->max_total);
	} else if (rc == CURLE_OPERATION_TIMEDOUT) {
		h->code = "timeout";
		h->error = cc_strprintf("the request to %s did not finish in time (the net option "
					"timeout_s, %g s)",
					host, p->timeout_s);
	} else if (rc == CURLE_ABORTED_BY_CALLBACK) {
		h->code = "cancelled";
		h->error = cc_strprintf("the request to %s was cancelled: its eval ended", host);
	} else if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
		   rc == CURLE_SSL_CONNECT_ERROR) {
		h->code = "tls";
		h->error = cc_strprintf(
			"TLS with %s failed: %s (verification is always on; the net option "
			"ca_file names the CA bundle)",
			host, *errbuf ? errbuf : curl_easy_strerror(rc));
	} else {
		h->code = "failed";
		h->error = cc_strprintf("the request to %s failed: %s", host,
					*errbuf ? errbuf : curl_easy_strerror(rc));
	}
}

/* Run one hop to the checked target t. */
static void run_hop(struct job *j, const struct cc_net_target *t, const char *url,
		    const char *method, bool body, bool cross, struct xfer *x, struct hop *h)
{
	struct cc_net_headers add = { NULL };
	char *reason = NULL;
	cc_net_request rq = { method, url, t->host, t->port, t->addr };
	if (j->p->on_request && j->p->on_request(j->p->hook_user, &rq, &add, &reason) != 0) {
		h->code = "refused";
		h->error = cc_strprintf("refused by the host: %s",
					reason ? reason : "the request hook said no");
		free(reason);
		curl_slist_free_all(add.l);
		return;
	}
	free(reason);
	struct curl_slist *hl = add.l, *pin = NULL;
	for (size_t i = 0; i < j->req.nh; i++) {
		/* Another origin gets none of the guest's credentials. */
		if (cross && cc_net_credential_header(j->p, j->req.name[i]))
			continue;
		char *line = cc_strprintf("%s: %s", j->req.name[i], j->req.value[i]);
		struct curl_slist *n = line ? curl_slist_append(hl, line) : NULL;
		free(line);
		if (n)
			hl = n;
	}
	struct curl_slist *n = curl_slist_append(hl, "Expect:");
	hl = n ? n : hl;
	/* A name is pinned to the checked address (an address needs no
	 * lookup); on_socket refuses any other either way. */
	bool v6 = t->sa.ss_family == AF_INET6, literal = !strcmp(t->host, t->addr);
	char *pinline = literal ? NULL
				: cc_strprintf("%s:%d:%s%s%s", t->host, t->port, v6 ? "[" : "",
					       t->addr, v6 ? "]" : "");
	pin = pinline ? curl_slist_append(NULL, pinline) : NULL;
	free(pinline);
	CURL *c = curl_easy_init();
	char errbuf[CURL_ERROR_SIZE] = "";
	if (!c || (!literal && !pin)) {
		h->code = "failed";
		h->error = cc_strprintf("the host is out of memory");
	} else {
		set_curl_opts(c, x, t, url, method, body, hl, pin, errbuf);
		CURLcode rc = curl_easy_perform(c);
		if (rc != CURLE_OK) {
			hop_error(h, rc, x, t->host, errbuf);
		} else {
			char *loc = NULL;
			curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &h->status);
			curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &loc);
			if (loc && h->status >= 300 && h->status < 400)
				h->location = strdup(loc);
		}
	}
	if (c)
		curl_easy_cleanup(c);
	curl_slist_free_all(pin);
	curl_slist_free_all(hl);
}

static cc_value *error_value(const char *code, const char *message)
{
	cc_value *m = cc_value_new_map();
	cc_value_map_set(m, "error", 5, cc_value_new_string(message, strlen(message)));
	cc_value_map_set(m, "code", 4, cc_value_new_string(code, strlen(code)));
	return m;
}

static cc_value *ok_value(const struct xfer *x, long status, const char *url, bool redirected)
{
	cc_value *m = cc_value_new_map();
	cc_value_map_set(m, "status", 6, cc_value_new_int(status));
	cc_value_map_set(m, "statusText", 10, text_value(x->reason, strlen(x->reason)));
	cc_value_map_set(m, "url", 3, cc_value_new_string(url, strlen(url)));
	cc_value_map_set(m, "redirected", 10, cc_value_new_bool(redirected));
	cc_value_map_set(m, "headers", 7, x->headers ? x->headers : cc_value_new_array());
	cc_value_map_set(m, "body", 4, cc_value_new_bytes(x->buf ? x->buf : "", x->len));
	return m;
}

/* The request and its redirects; the guest's answer. */
static cc_value *perform(struct job *j, long *status, uint64_t *bytes, char **url_out, char **error)
{
	char *url = strdup(j->req.url);
	char method[17];
	snprintf(method, sizeof(method), "%s", j->req.method);
	bool body = j->req.body != NULL, cross = false;
	char first_host[256] = "";
	int first_port = 0;
	bool first_https = false;
	for (int hops = 0;; hops++) {
		struct cc_net_target t;
		char *why = NULL;
		if (!url || cc_net_check_url(j->p, url, &t, &why) < 0) {
			cc_value *v = error_value("refused", why ? why : "out of memory");
			*error = why;
			*url_out = url;
			return v;
		}
		if (!*first_host) {
			snprintf(first_host, sizeof(first_host), "%s", t.host);
			first_port = t.port;
			first_https = t.https;
		}
		/* Another origin (scheme, host or port, as fetch and curl have
		 * it) gets no credentials, also after coming back. */
		cross = cross || strcmp(first_host, t.host) || first_port != t.port ||
			first_https != t.https;
		struct xfer x = { .j = j, .t = &t };
		struct hop h = { 0 };
		run_hop(j, &t, url, method, body, cross, &x, &h);
		if (h.error) {
			cc_value_free(x.headers);
			free(x.buf);
			cc_value *v = error_value(h.code, h.error);
			*error = h.error;
			*url_out = url;
			return v;
		}
		if (!h.location) {
			cc_value *v = ok_value(&x, h.status, url, hops > 0);
			*status = h.status;
			*bytes = x.len;
			*url_out = url;
			free(x.buf);
			return v;
		}
		cc_value_free(x.headers);
		free(x.buf);
		if (hops + 1 > CC_NET_MAX_REDIRECTS) {
			free(h.location);
			*error = cc_strprintf("more than %d redirects (the broker's cap)",
					      CC_NET_MAX_REDIRECTS);
			*url_out = url;
			return error_value("redirects", *error ? *error : "too many redirects");
		}
		if (h.status == 303 ||
		    ((h.status == 301 || h.status == 302) && strcmp(method, "HEAD"))) {
			snprintf(method, sizeof(method), "%s",
				 strcmp(method, "HEAD") ? "GET" : "HEAD");
			body = false;
		}
		free(url);
		url = h.location;
	}
}

static void request_thread(void *arg)
{
	struct job *j = arg;
	long status = 0;
	uint64_t bytes = 0;
	char *url = NULL, *error = NULL;
	int64_t t0 = now_ns();
	cc_value *v = perform(j, &status, &bytes, &url, &error);
	/* Audit first: the guest sees the answer only once the host has. */
	if (j->p->on_response) {
		cc_net_request rq = { j->req.method, url ? url : j->req.url, "", 0, "" };
		j->p->on_response(j->p->hook_user, &rq, (int)status, bytes,
				  (double)(now_ns() - t0) / 1e6, error);
	}
	cc_tool_call_return(j->call, v);
	free(url);
	free(error);
	cc_net_req_free(&j->req);
	eval_unref(j->ev);
	cc_net_policy_unref(j->p);
	free(j);
}

/* ---- dispatch (the eval's thread) ---- */

static void cancel_eval(void *data)
{
	struct net_eval *ev = data;
	__atomic_store_n(&ev->cancelled, 1, __ATOMIC_RELAXED);
}

static void refuse(cc_tool_call *call, const char *code, char *why)
{
	cc_tool_call_return(call, error_value(code, why ? why : "out of memory"));
	free(why);
}

void cc_net_dispatch(struct cc_net *net, uint64_t eval_id, const cc_value *args, int64_t soft_ns,
		     cc_tool_call *call)
{
	pthread_mutex_lock(&net->lock);
	if (!net->cur || net->cur->id != eval_id) {
		struct net_eval *ev = calloc(1, sizeof(*ev));
		if (ev) {
			ev->refs = 1;
			ev->id = eval_id;
			ev->soft_ns = soft_ns;
			eval_unref(net->cur);
			net->cur = ev;
		}
	}
	struct net_eval *ev = net->cur && net->cur->id == eval_id ? net->cur : NULL;
	struct cc_net_policy *p = cc_net_policy_ref(net->policy);
	if (ev)
		__atomic_add_fetch(&ev->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&net->lock);
	struct job *j = ev ? calloc(1, sizeof(*j)) : NULL;
	char *why = NULL;
	if (!j) {
		refuse(call, "failed", NULL);
	} else if (!p->n) {
		refuse(call, "refused",
		       cc_strprintf("refused: no network is allowed (allow_net is empty; allow_net "
				    "decides "
				    "which hosts the guest may reach)"));
	} else if (cc_net_req_parse(args, p->max_body, &j->req, &why) < 0) {
		refuse(call, "invalid", why);
	} else if (++ev->requests > p->max_requests) {
		refuse(call, "limit",
		       cc_strprintf("the eval's %u network requests are used up (the net option "
				    "max_requests)",
				    p->max_requests));
	} else {
		int64_t end = now_ns() + (int64_t)(p->timeout_s * 1e9);
		j->p = p;
		j->ev = ev;
		j->call = call;
		/* Past the eval's deadline the eval stops as a timeout and its end
		 * cancels the request (cancel_eval): the margin lets that, not the
		 * request's own timeout, be what the guest is told. */
		int64_t eval_end = soft_ns + 250 * 1000000LL;
		j->deadline_ns = end < eval_end ? end : eval_end;
		cc_tool_call_on_cancel(call, cancel_eval, ev);
		if (cc_net_pool_submit(request_thread, j) == 0)
			return;
		cc_tool_call_on_cancel(call, NULL, NULL);
		refuse(call, "failed",
		       cc_strprintf("the host could not start a thread for the request"));
	}
	if (j)
		cc_net_req_free(&j->req);
	free(j);
	eval_unref(ev);
	cc_net_policy_unref(p);
}

/* ---- one runtime's broker: its policy ---- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;
static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

void cc_net_free(struct cc_net *net)
{
	if (!net)
		return;
	if (net->cur)
		cancel_eval(net->cur);
	eval_unref(net->cur);
	cc_net_policy_unref(net->policy);
	pthread_mutex_destroy(&net->lock);
	free(net);
}

int cc_net_from_options(const cc_options *opts, struct cc_net_policy **out, cc_error *err)
{
	*out = NULL;
	if (!opts || !opts->net)
		return 0;
	if (cc_net_policy_new(opts->net, opts->limits.max_result, out, err) < 0) {
		if (opts->net->hook_free)
			opts->net->hook_free(opts->net->hook_user);
		return cc_fail_wrap(err, "cc_options.net");
	}
	return 0;
}

int cc_net_set_policy(struct cc_net **netp, struct cc_net_policy *p, cc_error *err)
{
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK) {
		cc_net_policy_unref(p);
		return cc_fail(err, CC_ERR_INTERNAL, "libcurl would not start: %s",
			       curl_easy_strerror(curl_init_rc));
	}
	if (!*netp) {
		*netp = calloc(1, sizeof(**netp));
		if (!*netp) {
			cc_net_policy_unref(p);
			return cc_fail(err, CC_ERR_INTERNAL, "out of memory");
		}
		pthread_mutex_init(&(*netp)->lock, NULL);
	}
	struct cc_net *net = *netp;
	pthread_mutex_lock(&net->lock);
	struct cc_net_policy *old = net->policy;
	net->policy = p;
	pthread_mutex_unlock(&net->lock);
	cc_net_policy_unref(old);
	return !net->bound && p->n;
}

void cc_net_set_bound(struct cc_net *net)
{
	net->bound = true;
}
