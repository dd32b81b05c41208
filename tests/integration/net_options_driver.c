/* cc-netoptdriver: cc_options.net from C, for test_net_c.py. Prints
 * "ok ..." / "FAIL ..." per check and "N failed" last.
 * usage: cc-netoptdriver PORT   (a server of tests/netsrv.py on 127.0.0.1:PORT)
 * A runtime, a pool's sessions (spawned and forked) and a fork server's
 * sessions reach 127.0.0.1:PORT with the policy given once in cc_options,
 * never calling cc_runtime_set_net; the entry strings are overwritten
 * after the call that took them (each keeps a deep copy); the request
 * hook and its user pointer are kept as given; hook_free runs once, after
 * the last runtime and the pool or server are closed (and once when the
 * call fails); a bad entry is invalid_input at cc_pool_new and
 * cc_forkserver_new. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codecage.h"
#include "driver.h"

static int frees;

static int on_request(void *user, const cc_net_request *rq, cc_net_headers *add, char **reason)
{
	(void)rq, (void)reason;
	return cc_net_add_header(add, "X-From-C", user);
}

static void hook_free(void *user)
{
	(void)user;
	__atomic_add_fetch(&frees, 1, __ATOMIC_RELAXED);
}

/* hook_free runs once the last request using the policy ends too, which
 * may be on a broker thread just after the runtime's close: wait for it
 * (10 s at most, a deadline, not a speed check). */
static int frees_now(int want)
{
	for (int i = 0; i < 1000 && __atomic_load_n(&frees, __ATOMIC_RELAXED) < want; i++)
		usleep(10000);
	return __atomic_load_n(&frees, __ATOMIC_RELAXED);
}

static char code[512];

/* The session fetches the echo server and returns path and the hook's header. */
static void check_reaches(cc_runtime *rt, const char *what)
{
	char *t = eval_text(rt, code);
	CHECK(!strcmp(t, "/echo?opt secret"), "%s reaches the server with the hook's header: %s",
	      what, t);
	free(t);
}

/* Options whose policy allows only *entry, with the hook. */
static void options(cc_options *o, cc_net_options *n, const char **allow)
{
	driver_options_init(o, CC_LANG_JAVASCRIPT);
	o->sandbox = CC_SANDBOX_AUTO;
	o->limits.timeout_s = 20;
	cc_net_options_init(n);
	n->allow = allow;
	n->n_allow = 1;
	n->on_request = on_request;
	n->hook_user = "secret";
	n->hook_free = hook_free;
	o->net = n;
}

static void pool_case(const char *port, bool fork_server)
{
	char *entry = NULL;
	asprintf(&entry, "127.0.0.1:%s", port);
	const char *allow[] = { entry };
	cc_options o;
	cc_net_options n;
	options(&o, &n, allow);
	cc_pool *p = NULL;
	cc_error err = { 0 };
	int rc = cc_pool_new(&o, 1, fork_server, NULL, &p, &err);
	CHECK(rc == 0, "cc_pool_new (fork_server %d): %s", fork_server,
	      err.message ? err.message : "");
	memset(entry, 'x', strlen(entry)); /* the pool must have copied it */
	free(entry);
	if (rc < 0)
		return;
	frees = 0;
	cc_runtime *a = NULL, *b = NULL;
	CHECK(cc_pool_checkout(p, 60, &a, &err) == 0, "checkout: %s",
	      err.message ? err.message : "");
	CHECK(cc_pool_checkout(p, 60, &b, &err) == 0, "a second checkout: %s",
	      err.message ? err.message : "");
	if (a)
		check_reaches(a, fork_server ? "a forked pool session" : "a pool session");
	if (b)
		check_reaches(b, "the pool's next session");
	cc_runtime_close(a);
	cc_pool_close(p);
	int f = frees_now(0);
	CHECK(f == 0, "hook_free waits for the session still open (ran %d times)", f);
	cc_runtime_close(b);
	f = frees_now(1);
	CHECK(f == 1, "hook_free ran once after the pool and its sessions closed: %d", f);
}

static void forkserver_case(const char *port)
{
	char *entry = NULL;
	asprintf(&entry, "127.0.0.1:%s", port);
	const char *allow[] = { entry };
	cc_options o;
	cc_net_options n;
	options(&o, &n, allow);
	cc_forkserver *fs = NULL;
	cc_error err = { 0 };
	frees = 0;
	int rc = cc_forkserver_new(&o, NULL, &fs, &err);
	CHECK(rc == 0, "cc_forkserver_new: %s", err.message ? err.message : "");
	memset(entry, 'x', strlen(entry));
	free(entry);
	if (rc < 0)
		return;
	for (int i = 0; i < 2; i++) {
		cc_runtime *rt = NULL;
		CHECK(cc_forkserver_spawn(fs, &rt, &err) == 0, "spawn %d: %s", i,
		      err.message ? err.message : "");
		if (rt)
			check_reaches(rt, "a fork server's session");
		cc_runtime_close(rt);
	}
	cc_forkserver_close(fs);
	int f = frees_now(1);
	CHECK(f == 1, "hook_free ran once after the fork server closed: %d", f);
}

static void runtime_case(const char *port)
{
	char entry[64];
	snprintf(entry, sizeof(entry), "127.0.0.1:%s", port);
	const char *allow[] = { entry };
	cc_options o;
	cc_net_options n;
	options(&o, &n, allow);
	cc_runtime *rt = NULL;
	cc_error err = { 0 };
	frees = 0;
	CHECK(cc_runtime_new(&o, &rt, &err) == 0, "cc_runtime_new: %s",
	      err.message ? err.message : "");
	if (rt)
		check_reaches(rt, "cc_runtime_new's runtime");
	cc_runtime_close(rt);
	int f = frees_now(1);
	CHECK(f == 1, "hook_free ran once after the runtime closed: %d", f);
}

static void bad_entry_case(void)
{
	const char *allow[] = { "http://x.test" };
	cc_options o;
	cc_net_options n;
	options(&o, &n, allow);
	cc_error err = { 0 };
	cc_pool *p = NULL;
	cc_forkserver *fs = NULL;
	frees = 0;
	CHECK(cc_pool_new(&o, 1, false, NULL, &p, &err) < 0 && !p &&
		      err.kind == CC_ERR_INVALID_INPUT && strstr(err.message, "cc_options.net") &&
		      strstr(err.message, "allow_net entry 'http://x.test'"),
	      "cc_pool_new refuses a bad entry: %s", err.message ? err.message : "(accepted)");
	cc_error_clear(&err);
	CHECK(cc_forkserver_new(&o, NULL, &fs, &err) < 0 && !fs &&
		      err.kind == CC_ERR_INVALID_INPUT &&
		      strstr(err.message, "allow_net entry 'http://x.test'"),
	      "cc_forkserver_new refuses a bad entry: %s",
	      err.message ? err.message : "(accepted)");
	cc_error_clear(&err);
	int f = frees_now(2);
	CHECK(f == 2, "hook_free ran once per refused call: %d", f);
	n.hook_free = NULL;
	CHECK(cc_pool_new(&o, 1, true, NULL, &p, &err) < 0 && err.kind == CC_ERR_INVALID_INPUT,
	      "cc_pool_new with a fork server refuses it too: %s",
	      err.message ? err.message : "(accepted)");
	cc_error_clear(&err);
	if (p)
		cc_pool_close(p);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: cc-netoptdriver PORT\n");
		return 2;
	}
	snprintf(code, sizeof(code),
		 "fetch('http://127.0.0.1:%s/echo?opt').then(r => r.json())"
		 ".then(j => j.path + ' ' + j.headers['x-from-c'])",
		 argv[1]);
	bad_entry_case();
	runtime_case(argv[1]);
	pool_case(argv[1], false);
	pool_case(argv[1], true);
	forkserver_case(argv[1]);
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
