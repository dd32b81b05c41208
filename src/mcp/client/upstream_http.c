/* Code mode over streamable HTTP (upstream.h): one POST per JSON-RPC
 * message with libcurl, the answer read from an application/json body or
 * from a text/event-stream's events; the Mcp-Session-Id the initialize
 * answer gives goes on every later request. The body is capped at
 * MCP_UPSTREAM_MAX_MESSAGE bytes; redirects are not followed; only http
 * and https are spoken. A POST in flight stops when *cancel turns true. */
#include <curl/curl.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "upstream_http.h"

struct body {
	struct cc_buf b;
	bool over;
	char *session; /* Mcp-Session-Id of the answer (owned) */
	bool sse;
};

static size_t on_data(char *p, size_t size, size_t n, void *data)
{
	struct body *bd = data;
	size_t len = size * n;
	if (bd->b.len + len > MCP_UPSTREAM_MAX_MESSAGE) {
		bd->over = true;
		return 0; /* aborts the transfer */
	}
	cc_buf_add(&bd->b, p, len);
	return len;
}

static size_t on_header(char *p, size_t size, size_t n, void *data)
{
	struct body *bd = data;
	size_t len = size * n, k = strlen("mcp-session-id:");
	if (len > k && !strncasecmp(p, "mcp-session-id:", k) && !bd->session) {
		const char *v = p + k;
		size_t m = len - k;
		while (m && (*v == ' ' || *v == '\t'))
			v++, m--;
		while (m && (v[m - 1] == '\r' || v[m - 1] == '\n' || v[m - 1] == ' '))
			m--;
		/* An id goes back in our requests' headers: visible ASCII only
		 * (the transport's rule), never a CR or LF of a hostile peer. */
		bool visible = m && m < 256;
		for (size_t i = 0; visible && i < m; i++)
			visible = v[i] > 0x20 && v[i] < 0x7f;
		if (visible)
			bd->session = strndup(v, m);
	}
	/* The header line is not NUL-terminated: search it by its length. */
	if (len > 13 && !strncasecmp(p, "content-type:", 13) &&
	    memmem(p, len, "text/event-stream", 17))
		bd->sse = true;
	return len;
}

static int on_progress(void *data, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	(void)a, (void)b, (void)c, (void)d;
	const volatile int *cancel = data;
	return cancel && __atomic_load_n(cancel, __ATOMIC_ACQUIRE) ? 1 : 0;
}

/* The message of an SSE body whose id is id (owned), or NULL; *deep is
 * set when an event was too deep for the JSON parser. */
static json_t *from_sse(const char *s, size_t n, int64_t id, bool *deep)
{
	json_error_t jerr;
	struct cc_buf ev = { 0 };
	json_t *found = NULL;
	const char *end = s + n;
	while (s < end && !found) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *le = nl ? nl : end;
		size_t ll = (size_t)(le - s);
		if (ll && s[ll - 1] == '\r')
			ll--;
		if (ll >= 5 && !strncmp(s, "data:", 5)) {
			const char *d = s + 5 + (ll > 5 && s[5] == ' ');
			cc_buf_add(&ev, d, (size_t)(s + ll - d));
			cc_buf_add(&ev, "\n", 1);
		} else if (ll == 0 && ev.len) {
			json_t *m = json_loadb(ev.data, ev.len, 0, &jerr);
			*deep |= !m && json_error_code(&jerr) == json_error_stack_overflow;
			if (json_integer_value(json_object_get(m, "id")) == id &&
			    !json_object_get(m, "method"))
				found = m;
			else
				json_decref(m);
			ev.len = 0;
		}
		s = nl ? nl + 1 : end;
	}
	if (!found && ev.len) {
		json_t *m = json_loadb(ev.data, ev.len, 0, &jerr);
		*deep |= !m && json_error_code(&jerr) == json_error_stack_overflow;
		if (json_integer_value(json_object_get(m, "id")) == id)
			found = m;
		else
			json_decref(m);
	}
	cc_buf_free(&ev);
	return found;
}

int mcp_up_http_post(const char *url, char **session, const json_t *msg, json_t **reply,
		     double timeout_s, const volatile int *cancel, int *http_status, char **why)
{
	*reply = NULL;
	*why = NULL;
	*http_status = 0;
	char *text = json_dumps(msg, JSON_COMPACT);
	CURL *h = text ? curl_easy_init() : NULL;
	struct curl_slist *hd = NULL;
	struct body bd = { 0 };
	int rc = -1;
	if (!h) {
		*why = strdup("out of memory");
		goto out;
	}
	hd = curl_slist_append(hd, "Content-Type: application/json");
	hd = curl_slist_append(hd, "Accept: application/json, text/event-stream");
	hd = curl_slist_append(hd, "MCP-Protocol-Version: 2025-06-18");
	char sh[300];
	if (*session) {
		snprintf(sh, sizeof(sh), "Mcp-Session-Id: %s", *session);
		hd = curl_slist_append(hd, sh);
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, text);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &bd);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &bd);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, (void *)cancel);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	if (timeout_s > 0)
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout_s * 1000));
	CURLcode cr = curl_easy_perform(h);
	long status = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	*http_status = (int)status;
	if (bd.over) {
		*why = strdup("sent a message over 8 MiB");
		goto out;
	}
	if (cr != CURLE_OK) {
		if (asprintf(why, "cannot reach %s: %s", url, curl_easy_strerror(cr)) < 0)
			*why = NULL;
		goto out;
	}
	if (bd.session) {
		free(*session);
		*session = bd.session;
		bd.session = NULL;
	}
	int64_t id = json_integer_value(json_object_get(msg, "id"));
	if (!json_object_get(msg, "id")) { /* a notification: 202 and no body */
		rc = status >= 200 && status < 300 ? 0 : -1;
		if (rc < 0 && asprintf(why, "HTTP status %ld", status) < 0)
			*why = NULL;
		goto out;
	}
	if (status < 200 || status >= 300) {
		if (asprintf(why, "HTTP status %ld from %s", status, url) < 0)
			*why = NULL;
		goto out;
	}
	bool deep = false;
	json_error_t jerr;
	if (bd.sse) {
		*reply = from_sse(bd.b.data ? bd.b.data : "", bd.b.len, id, &deep);
	} else {
		*reply = json_loadb(bd.b.data ? bd.b.data : "", bd.b.len, 0, &jerr);
		deep = !*reply && json_error_code(&jerr) == json_error_stack_overflow;
	}
	if (!*reply || json_integer_value(json_object_get(*reply, "id")) != id) {
		json_decref(*reply);
		*reply = NULL;
		*why = strdup(deep ? "its answer " MCP_UPSTREAM_TOO_DEEP
				   : "answered with no JSON-RPC response to the request");
		goto out;
	}
	rc = 0;
out:
	curl_slist_free_all(hd);
	if (h)
		curl_easy_cleanup(h);
	free(text);
	free(bd.session);
	cc_buf_free(&bd.b);
	return rc;
}
