/* Prometheus counters and histograms; see metrics.h. */
#include "daemon/metrics.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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
	pthread_mutex_t lock;
	struct {
		const char *route;
		int status;
		unsigned long long n;
	} req[MAX_SERIES];
	int nreq;
	struct hist h[METRICS_NSTAGES];
	unsigned long long drops[METRICS_NDROPS];
};

int metrics_create(struct metrics **out)
{
	struct metrics *m = calloc(1, sizeof *m);
	if (!m)
		return -1;
	pthread_mutex_init(&m->lock, NULL);
	*out = m;
	return 0;
}

void metrics_destroy(struct metrics *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->lock);
	free(m);
}

void metrics_request(struct metrics *m, const char *route, int status)
{
	pthread_mutex_lock(&m->lock);
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
	pthread_mutex_lock(&m->lock);
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
	pthread_mutex_lock(&m->lock);
	m->drops[why]++;
	pthread_mutex_unlock(&m->lock);
}

void metrics_write(struct metrics *m, FILE *f)
{
	pthread_mutex_lock(&m->lock);
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
	pthread_mutex_unlock(&m->lock);
}
