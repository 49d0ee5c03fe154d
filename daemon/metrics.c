/* Prometheus counters and histograms; see metrics.h. */
#include "daemon/metrics.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SERIES 256
static const double buckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                 0.25,   0.5,   1,      2.5,   5,    10,    30};
#define NBUCKETS (sizeof buckets / sizeof buckets[0])
static const char *stage_names[METRICS_NSTAGES] = {"decode", "queue", "gpu", "encode", "total"};
static const char *drop_names[METRICS_NDROPS] = {"deadline", "client_gone", "shutdown",
                                                 "queue_full"};

struct hist {
	unsigned long long le[NBUCKETS]; /* observations <= buckets[i] (not cumulative) */
	unsigned long long count;
	double sum;
};

struct metrics {
	pthread_mutex_t lock;     /* process-shared and robust: a store may sit in shared memory */
	int placed;               /* metrics_place made it: destroy frees nothing */
	struct {
		const char *route;
		int status;
		unsigned long long n;
	} req[MAX_SERIES];
	int nreq;
	struct hist h[METRICS_NSTAGES];
	unsigned long long drops[METRICS_NDROPS];
};

static void init_lock(pthread_mutex_t *l)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(l, &a);
	pthread_mutexattr_destroy(&a);
}

/* A process that died holding the lock left counts that are whole (each update is a few
 * stores under the lock): the next holder marks the lock consistent and goes on. */
static void lock(struct metrics *m)
{
	if (pthread_mutex_lock(&m->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&m->lock);
}

int metrics_create(struct metrics **out)
{
	struct metrics *m = calloc(1, sizeof *m);
	if (!m)
		return -1;
	init_lock(&m->lock);
	*out = m;
	return 0;
}

size_t metrics_size(void)
{
	return sizeof(struct metrics);
}

struct metrics *metrics_place(void *mem, int init)
{
	struct metrics *m = mem;
	if (init) {
		memset(m, 0, sizeof *m);
		init_lock(&m->lock);
	}
	m->placed = 1;
	return m;
}

void metrics_destroy(struct metrics *m)
{
	if (!m || m->placed)
		return;
	pthread_mutex_destroy(&m->lock);
	free(m);
}

void metrics_request(struct metrics *m, const char *route, int status)
{
	lock(m);
	int i;
	for (i = 0; i < m->nreq; i++)
		if (m->req[i].status == status && !strcmp(m->req[i].route, route))
			break;
	if (i == m->nreq && m->nreq < MAX_SERIES) {
		m->req[i].route = route;
		m->req[i].status = status;
		m->req[i].n = 0;
		m->nreq++;
	}
	if (i < m->nreq)
		m->req[i].n++;
	pthread_mutex_unlock(&m->lock);
}

void metrics_observe(struct metrics *m, enum metrics_stage stage, double seconds)
{
	if (stage >= METRICS_NSTAGES || !(seconds >= 0))
		return;
	lock(m);
	struct hist *h = &m->h[stage];
	for (size_t b = 0; b < NBUCKETS; b++)
		if (seconds <= buckets[b]) {
			h->le[b]++;
			break;
		}
	h->count++;
	h->sum += seconds;
	pthread_mutex_unlock(&m->lock);
}

void metrics_drop(struct metrics *m, enum metrics_drop why)
{
	if (why >= METRICS_NDROPS)
		return;
	lock(m);
	m->drops[why]++;
	pthread_mutex_unlock(&m->lock);
}

/* Another process's store, locked within FOREIGN_WAIT_MS: 1, or 0 when its holder does not let
 * go (a worker stopped or stuck inside an update, until the supervisor kills it), and then the
 * counts are read as they stand: every count only grows, so a sum never goes back, where
 * leaving the store out would show the counters falling. */
#define FOREIGN_WAIT_MS 20
static int lock_foreign(struct metrics *m)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += FOREIGN_WAIT_MS * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	int rc = pthread_mutex_timedlock(&m->lock, &t);
	if (rc == EOWNERDEAD)
		pthread_mutex_consistent(&m->lock);
	return rc == 0 || rc == EOWNERDEAD;
}

/* Adds src's counts into dst (a private copy: no lock of its own is used). */
static void add_into(struct metrics *dst, struct metrics *src)
{
	int locked = lock_foreign(src);
	for (int i = 0; i < src->nreq; i++) {
		int k;
		if (!src->req[i].route)
			continue; /* a series being added, read unlocked */
		for (k = 0; k < dst->nreq; k++)
			if (dst->req[k].status == src->req[i].status &&
			    !strcmp(dst->req[k].route, src->req[i].route))
				break;
		if (k == dst->nreq) {
			if (dst->nreq == MAX_SERIES)
				continue;
			dst->req[k].route = src->req[i].route;
			dst->req[k].status = src->req[i].status;
			dst->req[k].n = 0;
			dst->nreq++;
		}
		dst->req[k].n += src->req[i].n;
	}
	for (int s = 0; s < METRICS_NSTAGES; s++) {
		for (size_t b = 0; b < NBUCKETS; b++)
			dst->h[s].le[b] += src->h[s].le[b];
		dst->h[s].count += src->h[s].count;
		dst->h[s].sum += src->h[s].sum;
	}
	for (int d = 0; d < METRICS_NDROPS; d++)
		dst->drops[d] += src->drops[d];
	if (locked)
		pthread_mutex_unlock(&src->lock);
}

void metrics_write(struct metrics *m, FILE *f)
{
	metrics_write_sum(&m, 1, f);
}

void metrics_write_sum(struct metrics *const *ms, int n, FILE *f)
{
	struct metrics *m = calloc(1, sizeof *m);
	if (!m)
		return;
	for (int i = 0; i < n; i++)
		add_into(m, ms[i]);
	fputs("# HELP fftbloom_http_requests_total Requests answered, by route and status.\n"
	      "# TYPE fftbloom_http_requests_total counter\n", f);
	for (int i = 0; i < m->nreq; i++)
		fprintf(f, "fftbloom_http_requests_total{route=\"%s\",status=\"%d\"} %llu\n",
		        m->req[i].route, m->req[i].status, m->req[i].n);
	fputs("# HELP fftbloom_stage_seconds Time per request stage: decode, queue (waiting for a "
	      "GPU), gpu, encode, total.\n# TYPE fftbloom_stage_seconds histogram\n", f);
	for (int s = 0; s < METRICS_NSTAGES; s++) {
		const struct hist *h = &m->h[s];
		unsigned long long cum = 0;
		for (size_t b = 0; b < NBUCKETS; b++) {
			cum += h->le[b];
			fprintf(f, "fftbloom_stage_seconds_bucket{stage=\"%s\",le=\"%g\"} %llu\n",
			        stage_names[s], buckets[b], cum);
		}
		fprintf(f, "fftbloom_stage_seconds_bucket{stage=\"%s\",le=\"+Inf\"} %llu\n",
		        stage_names[s], h->count);
		fprintf(f, "fftbloom_stage_seconds_sum{stage=\"%s\"} %.9g\n", stage_names[s], h->sum);
		fprintf(f, "fftbloom_stage_seconds_count{stage=\"%s\"} %llu\n", stage_names[s], h->count);
	}
	fputs("# HELP fftbloom_jobs_dropped_total Jobs refused or dropped before their GPU run, by "
	      "reason.\n# TYPE fftbloom_jobs_dropped_total counter\n", f);
	for (int d = 0; d < METRICS_NDROPS; d++)
		fprintf(f, "fftbloom_jobs_dropped_total{reason=\"%s\"} %llu\n", drop_names[d],
		        m->drops[d]);
	free(m);
}
