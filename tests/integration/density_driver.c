/* Density of one fork server through the C API (issue 23): the session cap
 * (cc_options.max_sessions) and what churn leaves behind.
 *
 * usage: cc-densitydriver cap LANG MAX | churn LANG N | live LANG N
 *   cap: MAX live sessions, the next refused at once as
 *        sandbox_unavailable naming max_sessions while the MAX still
 *        evaluate, then room again after one close; the same through a
 *        pool; out-of-range values refused as invalid_input.
 *   churn: N sessions opened, evaluated and closed (ten live at a time)
 *        leave the host's descriptors, threads, children and memory, the
 *        template's descriptors, threads and memory, and the count of
 *        processes, user and pid namespaces below this one as they were.
 *   live: N sessions live at once (max_sessions N), all evaluating, then
 *        the counts as for churn once they are closed.
 * One line per check (driver.h), then "N failed". */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "driver.h"

static cc_language lang_of(const char *s)
{
	return !strcmp(s, "python") ? CC_LANG_PYTHON : CC_LANG_JAVASCRIPT;
}

static void fs_options(cc_options *o, cc_language lang, unsigned max)
{
	cc_options_init(o, lang);
	o->sandbox = CC_SANDBOX_AUTO;
	o->max_sessions = max;
}

static cc_forkserver *fs_start(cc_language lang, unsigned max)
{
	cc_options o;
	fs_options(&o, lang, max);
	cc_forkserver *fs = NULL;
	cc_error err = { 0 };
	/* "" preloads nothing: the counts, not the imports, are the point */
	if (cc_forkserver_new(&o, "", &fs, &err) < 0) {
		printf("FAIL forkserver_new: %s: %s\n", cc_error_kind_name(err.kind), err.message);
		exit(1);
	}
	return fs;
}

/* 1 when rt evaluates 1 + i to that number. */
static int evaluates(cc_runtime *rt, int i)
{
	char code[32];
	snprintf(code, sizeof(code), "1 + %d", i);
	cc_result *r = cc_runtime_eval(rt, code, strlen(code), 30);
	const cc_value *v = r ? cc_result_value(r) : NULL;
	int ok = r && cc_result_ok(r) && cc_value_type_of(v) == CC_VALUE_INT && v->u.i == 1 + i;
	cc_result_free(r);
	return ok;
}

/* A refusal of the cap: sandbox_unavailable, naming max_sessions. */
static int names_the_cap(int rc, const cc_error *err)
{
	return rc < 0 && err->kind == CC_ERR_SANDBOX_UNAVAILABLE && err->message &&
	       strstr(err->message, "max_sessions");
}

static void bad_values(cc_language lang)
{
	cc_options o;
	fs_options(&o, lang, CC_FORK_MAX_SESSIONS_LIMIT + 1);
	cc_forkserver *fs = NULL;
	cc_error err = { 0 };
	int rc = cc_forkserver_new(&o, "", &fs, &err);
	CHECK(rc < 0 && err.kind == CC_ERR_INVALID_INPUT && strstr(err.message, "max_sessions"),
	      "max_sessions %u is refused as invalid_input naming it (%s)",
	      CC_FORK_MAX_SESSIONS_LIMIT + 1, err.message ? err.message : "accepted");
	cc_error_clear(&err);
	cc_forkserver_close(fs);
	cc_pool *p = NULL;
	fs_options(&o, lang, 4);
	rc = cc_pool_new(&o, 8, true, "", &p, &err);
	CHECK(rc < 0 && err.kind == CC_ERR_INVALID_INPUT && strstr(err.message, "max_sessions"),
	      "a pool of 8 over max_sessions 4 is refused naming it (%s)",
	      err.message ? err.message : "accepted");
	cc_error_clear(&err);
	cc_pool_close(p);
}

static void cap_forkserver(cc_language lang, unsigned max)
{
	cc_forkserver *fs = fs_start(lang, max);
	cc_runtime **live = calloc(max, sizeof(*live));
	unsigned n = 0, good = 0;
	cc_error err = { 0 };
	while (n < max && cc_forkserver_spawn(fs, &live[n], &err) == 0)
		n++;
	CHECK(n == max, "%u of max_sessions %u sessions started (%s)", n, max,
	      err.message ? err.message : "");
	cc_error_clear(&err);
	cc_runtime *extra = NULL;
	int rc = cc_forkserver_spawn(fs, &extra, &err);
	CHECK(names_the_cap(rc, &err), "session %u is refused naming max_sessions: %s", max + 1,
	      err.message ? err.message : "it started");
	cc_error_clear(&err);
	cc_runtime_close(extra);
	for (unsigned i = 0; i < n; i++)
		good += evaluates(live[i], (int)i);
	CHECK(good == n, "the %u live sessions still evaluate (%u do)", n, good);
	if (n) {
		cc_runtime_close(live[--n]);
		rc = cc_forkserver_spawn(fs, &live[n], &err);
		CHECK(rc == 0 && evaluates(live[n], 41), "after one close a new session works (%s)",
		      err.message ? err.message : "");
		cc_error_clear(&err);
		n += rc == 0;
	}
	for (unsigned i = 0; i < n; i++)
		cc_runtime_close(live[i]);
	free(live);
	cc_forkserver_close(fs);
}

static void cap_pool(cc_language lang, unsigned max)
{
	cc_options o;
	fs_options(&o, lang, max);
	cc_pool *p = NULL;
	cc_error err = { 0 };
	if (cc_pool_new(&o, 2, true, "", &p, &err) < 0) {
		printf("FAIL pool_new: %s\n", err.message);
		exit(1);
	}
	cc_runtime **out = calloc(max, sizeof(*out));
	unsigned n = 0, good = 0;
	while (n < max && cc_pool_checkout(p, 60, &out[n], &err) == 0)
		n++;
	CHECK(n == max, "%u of max_sessions %u checked out (%s)", n, max,
	      err.message ? err.message : "");
	cc_error_clear(&err);
	cc_runtime *extra = NULL;
	/* a long timeout: the refusal must come before it, not be it */
	int rc = cc_pool_checkout(p, 120, &extra, &err);
	CHECK(names_the_cap(rc, &err), "the pool reports the full fork server: %s: %s",
	      cc_error_kind_name(err.kind), err.message ? err.message : "it gave one");
	cc_error_clear(&err);
	cc_runtime_close(extra);
	for (unsigned i = 0; i < n; i++)
		good += evaluates(out[i], (int)i);
	CHECK(good == n, "the %u checked-out sessions still evaluate (%u do)", n, good);
	if (n) {
		cc_runtime_close(out[--n]);
		rc = cc_pool_checkout(p, 60, &out[n], &err);
		CHECK(rc == 0 && evaluates(out[n], 7), "after one close the pool gives one (%s)",
		      err.message ? err.message : "");
		cc_error_clear(&err);
		n += rc == 0;
	}
	for (unsigned i = 0; i < n; i++)
		cc_runtime_close(out[i]);
	free(out);
	cc_pool_close(p);
}

/* ---- counts ---- */

/* A number from /proc/PID/status ("Threads:", "VmRSS:"); -1 if absent. */
static long status_field(int pid, const char *field)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	FILE *f = fopen(path, "r");
	long v = -1;
	size_t n = strlen(field);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n))
			v = atol(line + n);
	if (f)
		fclose(f);
	return v;
}

static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 2;
}

static int fds_of(int pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	return count_dir(path);
}

static int ppid_of(int pid)
{
	return (int)status_field(pid, "PPid:");
}

/* Processes below this one, and the distinct user and pid namespaces they
 * are in (only our own descendants: nothing else on the host is read). */
struct below {
	int procs, userns, pidns;
};

static bool is_descendant(int pid, int self)
{
	for (int i = 0; i < 64 && pid > 1; i++) {
		pid = ppid_of(pid);
		if (pid == self)
			return true;
	}
	return false;
}

static void add_ns(ino_t *seen, int *n, int cap, int pid, const char *ns)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, ns);
	if (stat(path, &st) < 0)
		return;
	for (int i = 0; i < *n; i++)
		if (seen[i] == st.st_ino)
			return;
	if (*n < cap)
		seen[(*n)++] = st.st_ino;
}

static struct below below_us(void)
{
	enum {
		CAP = 8192
	};
	static ino_t users[CAP], pids[CAP];
	struct below b = { 0, 0, 0 };
	int self = getpid();
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		int pid = atoi(e->d_name);
		if (pid <= 0 || !is_descendant(pid, self))
			continue;
		b.procs++;
		add_ns(users, &b.userns, CAP, pid, "user");
		add_ns(pids, &b.pidns, CAP, pid, "pid");
	}
	if (d)
		closedir(d);
	return b;
}

struct counts {
	int host_fds;
	long host_threads, host_rss, host_children;
	int tmpl_fds;
	long tmpl_threads, tmpl_rss;
	struct below below;
};

/* Counted with one marker session live, forked just before: the template
 * answers a request only after it has reaped (and closed the descriptors
 * of) every session that ended before it, so no close is still in flight
 * in the template while it is counted. */
static struct counts count(cc_forkserver *fs, int tmpl)
{
	struct counts c;
	cc_runtime *marker = NULL;
	cc_error err = { 0 };
	if (cc_forkserver_spawn(fs, &marker, &err) < 0) {
		printf("FAIL the marker session: %s\n", err.message);
		exit(1);
	}
	c.host_fds = count_dir("/proc/self/fd");
	c.host_threads = status_field(getpid(), "Threads:");
	c.host_rss = rss_kib();
	c.host_children = children();
	c.tmpl_fds = fds_of(tmpl);
	c.tmpl_threads = status_field(tmpl, "Threads:");
	c.tmpl_rss = status_field(tmpl, "VmRSS:");
	c.below = below_us();
	cc_runtime_close(marker);
	return c;
}

/* The template's pid (the host's view): a session's parent. */
static int template_pid(cc_forkserver *fs)
{
	cc_runtime *rt = NULL;
	cc_error err = { 0 };
	if (cc_forkserver_spawn(fs, &rt, &err) < 0) {
		printf("FAIL a session to find the template: %s\n", err.message);
		exit(1);
	}
	int t = ppid_of(cc_runtime_pid(rt));
	cc_runtime_close(rt);
	return t;
}

static void compare(const struct counts *a, const struct counts *b, const char *what)
{
	CHECK(a->host_fds == b->host_fds, "%s: host descriptors %d, then %d", what, a->host_fds,
	      b->host_fds);
	CHECK(a->host_threads == b->host_threads, "%s: host threads %ld, then %ld", what,
	      a->host_threads, b->host_threads);
	CHECK(a->host_children == b->host_children, "%s: host children %ld, then %ld", what,
	      a->host_children, b->host_children);
	CHECK(b->host_rss - a->host_rss < 4096, "%s: host RSS grew by %ld KiB (limit 4096)", what,
	      b->host_rss - a->host_rss);
	CHECK(a->tmpl_fds == b->tmpl_fds, "%s: template descriptors %d, then %d", what, a->tmpl_fds,
	      b->tmpl_fds);
	CHECK(a->tmpl_threads == b->tmpl_threads, "%s: template threads %ld, then %ld", what,
	      a->tmpl_threads, b->tmpl_threads);
	CHECK(b->tmpl_rss - a->tmpl_rss < 512, "%s: template RSS grew by %ld KiB (limit 512)", what,
	      b->tmpl_rss - a->tmpl_rss);
	CHECK(a->below.procs == b->below.procs, "%s: processes below the host %d, then %d", what,
	      a->below.procs, b->below.procs);
	CHECK(a->below.userns == b->below.userns, "%s: their user namespaces %d, then %d", what,
	      a->below.userns, b->below.userns);
	CHECK(a->below.pidns == b->below.pidns, "%s: their pid namespaces %d, then %d", what,
	      a->below.pidns, b->below.pidns);
}

/* n sessions, `batch` live at a time, each evaluated, all closed. Returns
 * how many evaluated. */
static unsigned open_close(cc_forkserver *fs, unsigned n, unsigned batch)
{
	cc_runtime **live = calloc(batch, sizeof(*live));
	unsigned good = 0;
	for (unsigned done = 0; done < n;) {
		unsigned k = 0;
		cc_error err = { 0 };
		while (k < batch && done + k < n && cc_forkserver_spawn(fs, &live[k], &err) == 0)
			k++;
		if (err.message)
			printf("spawn failed after %u: %s\n", done + k, err.message);
		cc_error_clear(&err);
		for (unsigned i = 0; i < k; i++) {
			good += evaluates(live[i], (int)(done + i));
			cc_runtime_close(live[i]);
		}
		if (k == 0)
			break;
		done += k;
	}
	free(live);
	return good;
}

static void churn(cc_language lang, unsigned n)
{
	cc_forkserver *fs = fs_start(lang, 0);
	int tmpl = template_pid(fs);
	open_close(fs, 20, 10); /* the host's and the template's first allocations */
	struct counts before = count(fs, tmpl);
	unsigned good = open_close(fs, n, 10);
	CHECK(good == n, "%u sessions opened, evaluated and closed (%u evaluated)", n, good);
	struct counts after = count(fs, tmpl);
	compare(&before, &after, "churn");
	cc_forkserver_close(fs);
}

/* n sessions live at once, each evaluated while all are live, then all
 * closed. */
static void live_round(cc_forkserver *fs, unsigned n)
{
	cc_runtime **rts = calloc(n, sizeof(*rts));
	unsigned k = 0, good = 0;
	cc_error err = { 0 };
	while (k < n && cc_forkserver_spawn(fs, &rts[k], &err) == 0)
		k++;
	CHECK(k == n, "%u of %u sessions live at once (%s)", k, n, err.message ? err.message : "");
	cc_error_clear(&err);
	struct below held = below_us();
	CHECK(held.procs >= (int)k, "each live session is a process below the host (%d for %u)",
	      held.procs, k);
	for (unsigned i = 0; i < k; i++)
		good += evaluates(rts[i], (int)i);
	CHECK(good == k, "all %u evaluate (%u do)", k, good);
	for (unsigned i = 0; i < k; i++)
		cc_runtime_close(rts[i]);
	free(rts);
}

/* Two rounds, counted around the second: the first leaves the host's
 * allocator with room for n runtimes, which it keeps (not a leak). */
static void live(cc_language lang, unsigned n)
{
	cc_forkserver *fs = fs_start(lang, n);
	int tmpl = template_pid(fs);
	live_round(fs, n);
	struct counts before = count(fs, tmpl);
	live_round(fs, n);
	struct counts after = count(fs, tmpl);
	compare(&before, &after, "live");
	cc_forkserver_close(fs);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 4 && !strcmp(argv[1], "cap")) {
		bad_values(lang_of(argv[2]));
		cap_forkserver(lang_of(argv[2]), (unsigned)atoi(argv[3]));
		cap_pool(lang_of(argv[2]), (unsigned)atoi(argv[3]));
	} else if (argc >= 4 && !strcmp(argv[1], "churn")) {
		churn(lang_of(argv[2]), (unsigned)atoi(argv[3]));
	} else if (argc >= 4 && !strcmp(argv[1], "live")) {
		live(lang_of(argv[2]), (unsigned)atoi(argv[3]));
	} else {
		fprintf(stderr, "usage: cc-densitydriver cap|churn|live LANG N\n");
		return 2;
	}
	printf("%d failed\n", failures);
	return failures != 0;
}
