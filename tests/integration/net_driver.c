/* cc-netdriver: the network API from C, for test_net_c.py. Prints "ok ..."
 * / "FAIL ..." per check and "N failed" last.
 * usage: cc-netdriver PORT   (a server of tests/netsrv.py on 127.0.0.1:PORT)
 * Both languages reach 127.0.0.1:PORT through cc_runtime_set_net; a C
 * request hook adds a header and refuses one path; the response hook
 * counts; another port is refused; a bad entry is invalid_input before a
 * runtime is touched; cc_runtime_set_net with no entries refuses all; a
 * redirect to another origin drops the credential headers (the host's
 * credential_headers too) and the most specific entry decides. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecage.h"
#include "driver.h"

static int responses; /* atomic */

static int on_request(void *user, const cc_net_request *rq, cc_net_headers *add, char **reason)
{
	(void)user;
	if (strstr(rq->url, "/echo?refuse")) {
		*reason = strdup("the C hook refuses this path");
		return -1;
	}
	if (cc_net_add_header(add, "X-Bad", "a\r\nb") == 0)
		return -1; /* must have been refused */
	return cc_net_add_header(add, "X-From-C", "secret");
}

static void on_response(void *user, const cc_net_request *rq, int status, uint64_t bytes, double ms,
			const char *error)
{
	(void)user, (void)rq, (void)status, (void)bytes, (void)ms, (void)error;
	__atomic_add_fetch(&responses, 1, __ATOMIC_RELAXED);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: cc-netdriver PORT\n");
		return 2;
	}
	const char *port = argv[1];
	char entry[64], code[1024];
	snprintf(entry, sizeof(entry), "127.0.0.1:%s", port);
	const char *allow[] = { entry };
	cc_net_options n;
	cc_net_options_init(&n);
	n.allow = allow;
	n.n_allow = 1;
	n.on_request = on_request;
	n.on_response = on_response;

	const char *bad[] = { "http://x.test" };
	cc_net_options nb;
	cc_error err = { 0 };
	cc_net_options_init(&nb);
	nb.allow = bad;
	nb.n_allow = 1;
	CHECK(cc_net_check(&nb, &err) < 0 && err.kind == CC_ERR_INVALID_INPUT &&
		      strstr(err.message, "allow_net entry 'http://x.test'"),
	      "a bad entry is invalid_input: %s", err.message ? err.message : "(accepted)");
	cc_error_clear(&err);

	cc_runtime *js = driver_start(CC_LANG_JAVASCRIPT, 20, 0);
	CHECK(cc_runtime_set_net(js, &n, &err) == 0, "set_net (javascript): %s",
	      err.message ? err.message : "");
	snprintf(code, sizeof(code),
		 "fetch('http://127.0.0.1:%s/echo?js').then(r => r.json())"
		 ".then(j => j.path + ' ' + j.headers['x-from-c'])",
		 port);
	char *t = eval_text(js, code);
	CHECK(!strcmp(t, "/echo?js secret"), "javascript fetch with the hook's header: %s", t);
	free(t);
	snprintf(code, sizeof(code),
		 "fetch('http://127.0.0.1:%s/echo?refuse').then(() => 'reached', e => e.message)",
		 port);
	t = eval_text(js, code);
	CHECK(strstr(t, "refused by the host: the C hook refuses this path") != NULL,
	      "the hook refuses: %s", t);
	free(t);
	t = eval_text(js, "fetch('http://127.0.0.1:1/').then(() => 'reached', e => e.message)");
	CHECK(strstr(t, "is not in allow_net") != NULL, "another port is refused: %s", t);
	free(t);
	cc_net_options none;
	cc_net_options_init(&none);
	CHECK(cc_runtime_set_net(js, &none, &err) == 0, "set_net with no entries");
	snprintf(code, sizeof(code),
		 "fetch('http://127.0.0.1:%s/echo').then(() => 'reached', e => e.message)", port);
	t = eval_text(js, code);
	CHECK(strstr(t, "no network is allowed") != NULL, "then everything is refused: %s", t);
	free(t);
	cc_runtime_close(js);

	/* Issue 27, E6: a redirect to another origin (another name of the
	 * same server) leaves the guest's credential headers behind, the
	 * built-in ones and the host's credential_headers; the most specific
	 * entry decides: the exact in.example.test, a loopback address,
	 * although the wildcard listed first matches it too. */
	char exact[64];
	snprintf(exact, sizeof(exact), "in.example.test:%s", port);
	const char *allow2[] = { entry, "*.example.test", exact };
	const char *res[] = { "in.example.test=127.0.0.1" };
	const char *cred[] = { "X-Tenant" };
	cc_net_options n2;
	cc_net_options_init(&n2);
	n2.allow = allow2;
	n2.n_allow = 3;
	n2.test_resolve = res;
	n2.n_test_resolve = 1;
	n2.credential_headers = cred;
	n2.n_credential_headers = 1;
	js = driver_start(CC_LANG_JAVASCRIPT, 20, 0);
	CHECK(cc_runtime_set_net(js, &n2, &err) == 0, "set_net with credential_headers: %s",
	      err.message ? err.message : "");
	snprintf(code, sizeof(code),
		 "fetch('http://127.0.0.1:%s/redir?to=' + encodeURIComponent("
		 "'http://in.example.test:%s/echo'), {headers: {'X-Tenant': 't', 'X-Api-Key': 'k', "
		 "'X-Plain': 'p'}}).then(r => r.json()).then(j => [j.headers['x-tenant'], "
		 "j.headers['x-api-key'], j.headers['x-plain']].map(String).join(' '))",
		 port, port);
	t = eval_text(js, code);
	CHECK(!strcmp(t, "undefined undefined p"),
	      "another origin gets no credential header, the host's own named ones too: %s", t);
	free(t);
	cc_runtime_close(js);
	const char *badcred[] = { "X Bad" };
	n2.credential_headers = badcred;
	CHECK(cc_net_check(&n2, &err) < 0 && err.kind == CC_ERR_INVALID_INPUT &&
		      strstr(err.message, "credential_headers[0] 'X Bad' is not a header name"),
	      "a bad credential header name is invalid_input: %s",
	      err.message ? err.message : "(accepted)");
	cc_error_clear(&err);

	cc_runtime *py = driver_start(CC_LANG_PYTHON, 20, 0);
	CHECK(cc_runtime_set_net(py, &n, &err) == 0, "set_net (python): %s",
	      err.message ? err.message : "");
	snprintf(code, sizeof(code),
		 "import urllib.request, json\n"
		 "j = json.loads(urllib.request.urlopen('http://127.0.0.1:%s/echo?py').read())\n"
		 "j['path'] + ' ' + j['headers']['x-from-c']",
		 port);
	t = eval_text(py, code);
	CHECK(!strcmp(t, "/echo?py secret"), "python urllib with the hook's header: %s", t);
	free(t);
	cc_runtime_close(py);
	int seen = __atomic_load_n(&responses, __ATOMIC_RELAXED);
	CHECK(seen == 4, "the response hook saw each request: %d", seen);
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
