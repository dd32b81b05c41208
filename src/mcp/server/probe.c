/* run_python's package probe at server start (probe.h). The cache file is
 * DEPS_CACHE/probe-HASH.txt, HASH (FNV-1a, 64 bits) over what decides the
 * answer: the probe's code, the sandbox mode, the Python worker executable
 * beside libcodecage and the guest's interpreter files (size and mtime),
 * Debian's dist-packages and each --python-path folder (device, inode,
 * mtime). A package installed or removed changes dist-packages' mtime,
 * and a new worker its own, so a stale account is never read. */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "pools.h"
#include "probe.h"

struct mcp_probe {
	struct mcp_server *srv;
	pthread_t thread;
	bool have_thread;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	bool done;
	char *env;  /* the account (owned) or NULL */
	char *path; /* the cache file, or NULL (no cache folder) */
};

static void fnv(uint64_t *h, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++) {
		*h ^= c[i];
		*h *= 1099511628211ull;
	}
}

static void fnv_stat(uint64_t *h, const char *path)
{
	struct stat st;
	memset(&st, 0, sizeof(st));
	stat(path, &st);
	uint64_t v[] = { (uint64_t)st.st_dev, (uint64_t)st.st_ino, (uint64_t)st.st_size,
			 (uint64_t)st.st_mtim.tv_sec, (uint64_t)st.st_mtim.tv_nsec };
	fnv(h, path, strlen(path) + 1);
	fnv(h, v, sizeof(v));
}

static char *cache_path(const struct mcp_config *cfg)
{
	char *dir = cfg->deps.o.cache_dir ? strdup(cfg->deps.o.cache_dir) : cc_deps_default_cache();
	if (!dir)
		return NULL;
	uint64_t h = 1469598103934665603ull;
	fnv(&h, mcp_probe_code(), strlen(mcp_probe_code()));
	fnv(&h, &cfg->sandbox, sizeof(cfg->sandbox));
	Dl_info info;
	if (dladdr((void *)cc_runtime_new, &info) && info.dli_fname) {
		char w[PATH_MAX];
		const char *slash = strrchr(info.dli_fname, '/');
		snprintf(w, sizeof(w), "%.*s/codecage-worker-py",
			 slash ? (int)(slash - info.dli_fname) : 1, slash ? info.dli_fname : ".");
		fnv_stat(&h, w);
		fnv_stat(&h, info.dli_fname);
	}
	fnv_stat(&h, "/usr/lib/python3.11/os.py");
	fnv_stat(&h, "/usr/lib/python3/dist-packages");
	for (size_t i = 0; i < cfg->n_python_path; i++)
		fnv_stat(&h, cfg->python_path[i]);
	char *path = cc_strprintf("%s/probe-%016llx.txt", dir, (unsigned long long)h);
	free(dir);
	return path;
}

static char *read_cached(const char *path)
{
	FILE *f = path ? fopen(path, "re") : NULL;
	if (!f)
		return NULL;
	char buf[4096];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return n && !memchr(buf, 0, n) ? strdup(buf) : NULL;
}

/* Write the account where the next server finds it (best effort). */
static void write_cached(const char *path, const char *env)
{
	char dir[PATH_MAX], tmp[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = 0;
	for (char *p = dir + 1; *p; p++) { /* mkdir -p, 0755 */
		if (*p != '/')
			continue;
		*p = 0;
		mkdir(dir, 0755);
		*p = '/';
	}
	mkdir(dir, 0755);
	snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)getpid());
	FILE *f = fopen(tmp, "we");
	if (!f)
		return;
	bool ok = fputs(env, f) >= 0;
	ok = fclose(f) == 0 && ok;
	if (!ok || rename(tmp, path) < 0)
		unlink(tmp);
}

static void *probe_main(void *arg)
{
	struct mcp_probe *p = arg;
	char *env = mcp_probe_python(p->srv);
	if (env && p->path)
		write_cached(p->path, env);
	pthread_mutex_lock(&p->lock);
	p->env = env;
	p->done = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct mcp_probe *mcp_probe_start(struct mcp_server *srv)
{
	struct mcp_probe *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->srv = srv;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->path = cache_path(mcp_server_config(srv));
	p->env = read_cached(p->path);
	p->done = p->env != NULL;
	if (!p->done) {
		p->have_thread = pthread_create(&p->thread, NULL, probe_main, p) == 0;
		p->done = !p->have_thread; /* no thread: no account */
	}
	return p;
}

char *mcp_probe_result(struct mcp_probe *p)
{
	pthread_mutex_lock(&p->lock);
	while (!p->done)
		pthread_cond_wait(&p->cv, &p->lock);
	char *env = p->env ? strdup(p->env) : NULL;
	pthread_mutex_unlock(&p->lock);
	return env;
}

void mcp_probe_free(struct mcp_probe *p)
{
	if (!p)
		return;
	if (p->have_thread)
		pthread_join(p->thread, NULL);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cv);
	free(p->env);
	free(p->path);
	free(p);
}
