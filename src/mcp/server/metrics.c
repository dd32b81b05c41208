/* Counters for GET /metrics in the Prometheus text format: runtimes
 * started (pooled or fresh) and replaced, tools/calls by tool and outcome
 * kind, a call-duration histogram, live sessions and pool readiness. One
 * mutex; every update is a few additions. */
#include <pthread.h>
#include <stdlib.h>

#include "buf.h"
#include "metrics.h"
#include "pools.h"
#include "session.h"

static const char *const tool_names[MCP_LANGS + 1] = { "run_python", "run_javascript", "unknown" };
/* Upper bounds of the duration buckets, s (+Inf follows). */
static const double buckets[] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60 };
#define N_BUCKETS (sizeof(buckets) / sizeof(buckets[0]))

struct mcp_metrics {
	pthread_mutex_t lock;
	unsigned long long started[MCP_LANGS][2]; /* [lang][pooled] */
	unsigned long long replaced[MCP_LANGS];
	unsigned long long calls[MCP_LANGS + 1][MCP_OUTCOMES];
	unsigned long long hist[N_BUCKETS + 1]; /* non-cumulative; last = +Inf */
	unsigned long long n_calls;
	double sum_s;
};

struct mcp_metrics *mcp_metrics_new(void)
{
	struct mcp_metrics *m = calloc(1, sizeof(*m));
	if (m)
		pthread_mutex_init(&m->lock, NULL);
	return m;
}

void mcp_metrics_runtime(struct mcp_metrics *m, int lang, bool pooled, bool replaced)
{
	if (!m || lang < 0 || lang >= MCP_LANGS)
		return;
	pthread_mutex_lock(&m->lock);
	m->started[lang][pooled]++;
	if (replaced)
		m->replaced[lang]++;
	pthread_mutex_unlock(&m->lock);
}

void mcp_metrics_call(struct mcp_metrics *m, int lang, int outcome, double seconds)
{
	if (!m)
		return;
	if (lang < 0 || lang >= MCP_LANGS)
		lang = MCP_LANGS;
	if (outcome < 0 || outcome >= MCP_OUTCOMES)
		outcome = CC_ERR_INTERNAL;
	size_t b = 0;
	while (b < N_BUCKETS && seconds > buckets[b])
		b++;
	pthread_mutex_lock(&m->lock);
	m->calls[lang][outcome]++;
	m->hist[b]++;
	m->n_calls++;
	m->sum_s += seconds;
	pthread_mutex_unlock(&m->lock);
}

static const char *outcome_name(int o)
{
	if (o == MCP_OUTCOME_INVALID_PARAMS)
		return "invalid_params";
	if (o == MCP_OUTCOME_CANCELLED)
		return "cancelled";
	return cc_error_kind_name((cc_error_kind)o);
}

static void render_calls(struct cc_buf *b, const struct mcp_metrics *m)
{
	cc_buf_puts(b, "# HELP codecage_mcp_calls_total tools/calls answered, by tool and "
		       "outcome kind.\n# TYPE codecage_mcp_calls_total counter\n");
	for (int t = 0; t <= MCP_LANGS; t++)
		for (int o = 0; o < MCP_OUTCOMES; o++)
			if (m->calls[t][o])
				cc_buf_printf(
					b,
					"codecage_mcp_calls_total{tool=\"%s\",outcome=\"%s\"} "
					"%llu\n",
					tool_names[t], outcome_name(o), m->calls[t][o]);
	cc_buf_puts(b, "# HELP codecage_mcp_call_duration_seconds Time from a tools/call's turn "
		       "to its answer.\n# TYPE codecage_mcp_call_duration_seconds histogram\n");
	unsigned long long cum = 0;
	for (size_t i = 0; i <= N_BUCKETS; i++) {
		cum += m->hist[i];
		if (i < N_BUCKETS)
			cc_buf_printf(b,
				      "codecage_mcp_call_duration_seconds_bucket{le=\"%g\"} %llu\n",
				      buckets[i], cum);
		else
			cc_buf_printf(
				b, "codecage_mcp_call_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
				cum);
	}
	cc_buf_printf(b,
		      "codecage_mcp_call_duration_seconds_sum %.6f\n"
		      "codecage_mcp_call_duration_seconds_count %llu\n",
		      m->sum_s, m->n_calls);
}

static void render_runtimes(struct cc_buf *b, const struct mcp_metrics *m)
{
	cc_buf_puts(b, "# HELP codecage_mcp_runtimes_started_total Runtimes started, by language "
		       "and source (pool: a checkout; fresh: a worker started for the call).\n"
		       "# TYPE codecage_mcp_runtimes_started_total counter\n");
	for (int l = 0; l < MCP_LANGS; l++)
		for (int p = 1; p >= 0; p--)
			cc_buf_printf(b,
				      "codecage_mcp_runtimes_started_total{language=\"%s\",source="
				      "\"%s\"} %llu\n",
				      cc_language_name(mcp_lang_cc(l)), p ? "pool" : "fresh",
				      m->started[l][p]);
	cc_buf_puts(b, "# HELP codecage_mcp_runtimes_replaced_total Runtimes started in place of "
		       "one that ended (reset, crash, kill on timeout, cancel, idle).\n"
		       "# TYPE codecage_mcp_runtimes_replaced_total counter\n");
	for (int l = 0; l < MCP_LANGS; l++)
		cc_buf_printf(b, "codecage_mcp_runtimes_replaced_total{language=\"%s\"} %llu\n",
			      cc_language_name(mcp_lang_cc(l)), m->replaced[l]);
}

static void render_pools(struct cc_buf *b, struct mcp_server *srv)
{
	const struct mcp_config *cfg = mcp_server_config(srv);
	cc_buf_printf(b,
		      "# HELP codecage_mcp_sessions Live MCP sessions.\n"
		      "# TYPE codecage_mcp_sessions gauge\ncodecage_mcp_sessions %u\n"
		      "# HELP codecage_mcp_pool_size Ready sessions each pool keeps (--pool).\n"
		      "# TYPE codecage_mcp_pool_size gauge\ncodecage_mcp_pool_size %u\n"
		      "# HELP codecage_mcp_fork_max_sessions The most runtimes each language's "
		      "fork server holds at once (--fork-max-sessions); past it a new one is a "
		      "sandbox_unavailable call.\n"
		      "# TYPE codecage_mcp_fork_max_sessions gauge\ncodecage_mcp_fork_max_sessions "
		      "%u\n",
		      mcp_server_session_count(srv), cfg->pool_size,
		      cfg->fork_max_sessions ? cfg->fork_max_sessions
					     : CC_FORK_MAX_SESSIONS_DEFAULT);
	cc_buf_puts(b, "# HELP codecage_mcp_pool_ready Sessions ready to check out now.\n"
		       "# TYPE codecage_mcp_pool_ready gauge\n");
	bool started[MCP_LANGS];
	for (int l = 0; l < MCP_LANGS; l++)
		cc_buf_printf(b, "codecage_mcp_pool_ready{language=\"%s\"} %u\n",
			      cc_language_name(mcp_lang_cc(l)),
			      mcp_pools_ready(mcp_server_pools(srv), l, &started[l]));
	cc_buf_puts(b,
		    "# HELP codecage_mcp_pool_started Has the language's pool started (at server "
		    "start; a failed one is retried).\n# TYPE codecage_mcp_pool_started gauge\n");
	for (int l = 0; l < MCP_LANGS; l++)
		cc_buf_printf(b, "codecage_mcp_pool_started{language=\"%s\"} %d\n",
			      cc_language_name(mcp_lang_cc(l)), started[l]);
}

char *mcp_metrics_render(struct mcp_server *srv)
{
	struct mcp_metrics *m = mcp_server_metrics(srv), copy;
	pthread_mutex_lock(&m->lock);
	copy = *m;
	pthread_mutex_unlock(&m->lock);
	struct cc_buf b = { 0 };
	render_pools(&b, srv);
	render_runtimes(&b, &copy);
	render_calls(&b, &copy);
	if (b.oom) {
		cc_buf_free(&b);
		return NULL;
	}
	return b.data;
}
