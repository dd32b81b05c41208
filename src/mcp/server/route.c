/* nginx's consistent hash (ngx_http_upstream_hash_module, `hash KEY
 * consistent`; compatible with Cache::Memcached::Fast): each upstream
 * server "HOST:PORT" puts 160 points on a ring, point j being
 * crc32(HOST "\0" PORT prev) with prev the previous point's 4 bytes
 * (little-endian; 0 first); a key goes to the server of the first point at
 * or after crc32(KEY), wrapping around. A replica that knows the ring
 * picks session ids that land on itself: random ids, tried until one does
 * (about as many tries as there are peers). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "route.h"

#define MCP_ROUTE_MAX_PEERS 64
#define POINTS_PER_PEER 160

struct point {
	uint32_t hash;
	int peer;
};

struct mcp_route {
	size_t n;
	int self;
	struct point points[];
};

static uint32_t crc_table[256];

static void crc_init_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc_update(uint32_t crc, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		crc = crc_table[(crc ^ b[i]) & 0xff] ^ (crc >> 8);
	return crc;
}

static int cmp_point(const void *a, const void *b)
{
	uint32_t x = ((const struct point *)a)->hash, y = ((const struct point *)b)->hash;
	return x < y ? -1 : x > y;
}

/* The 160 points of server s[0..n) (nginx splits HOST and PORT at the
 * last ':'). */
static void add_points(struct mcp_route *r, const char *s, size_t n, int peer)
{
	const char *colon = NULL;
	for (size_t j = n; j-- > 0;)
		if (s[j] == ':') {
			colon = s + j;
			break;
		}
	size_t host_len = colon ? (size_t)(colon - s) : n;
	uint32_t base = crc_update(0xffffffffu, s, host_len);
	base = crc_update(base, "", 1);
	if (colon)
		base = crc_update(base, colon + 1, n - host_len - 1);
	uint32_t prev = 0;
	for (int j = 0; j < POINTS_PER_PEER; j++) {
		unsigned char le[4] = { prev & 0xff, (prev >> 8) & 0xff, (prev >> 16) & 0xff,
					prev >> 24 };
		uint32_t h = crc_update(base, le, 4) ^ 0xffffffffu;
		r->points[r->n].hash = h;
		r->points[r->n++].peer = peer;
		prev = h;
	}
}

struct mcp_route *mcp_route_new(const char *peers, const char *self, char *why, size_t cap)
{
	crc_init_table();
	struct mcp_route *r = calloc(1, sizeof(*r) + MCP_ROUTE_MAX_PEERS * POINTS_PER_PEER *
							     sizeof(struct point));
	if (!r) {
		snprintf(why, cap, "out of memory");
		return NULL;
	}
	r->self = -1;
	int peer = 0;
	for (const char *p = peers; *p; peer++) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (!n || peer == MCP_ROUTE_MAX_PEERS) {
			snprintf(why, cap,
				 "--route-peers wants 1 to %d comma-separated HOST:PORT entries, "
				 "as in nginx's upstream block",
				 MCP_ROUTE_MAX_PEERS);
			free(r);
			return NULL;
		}
		if (strlen(self) == n && !strncmp(p, self, n))
			r->self = peer;
		add_points(r, p, n, peer);
		p = end ? end + 1 : p + n;
	}
	if (r->self < 0) {
		snprintf(why, cap, "--route-self '%.200s' is not one of --route-peers", self);
		free(r);
		return NULL;
	}
	qsort(r->points, r->n, sizeof(struct point), cmp_point);
	size_t i = 0; /* drop repeated hashes, as nginx does */
	for (size_t j = 1; j < r->n; j++)
		if (r->points[i].hash != r->points[j].hash)
			r->points[++i] = r->points[j];
	r->n = i + 1;
	return r;
}

void mcp_route_free(struct mcp_route *r)
{
	free(r);
}

bool mcp_route_mine(const struct mcp_route *r, const char *id, size_t len)
{
	if (!r)
		return true;
	uint32_t h = crc_update(0xffffffffu, id, len) ^ 0xffffffffu;
	size_t lo = 0, hi = r->n; /* the first point with hash >= h */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->points[mid].hash < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return r->points[lo % r->n].peer == r->self;
}
