/* Request counters and per-stage latency histograms for GET /metrics, in the Prometheus text
 * exposition format. Gauges owned by other modules (queue depth, GPU busy time, caches) are
 * written by the route after these. Thread-safe. */
#ifndef FFTBLOOM_METRICS_H
#define FFTBLOOM_METRICS_H

#include <stdio.h>

enum metrics_stage { METRICS_DECODE = 0, METRICS_QUEUE, METRICS_GPU, METRICS_ENCODE,
                     METRICS_TOTAL, METRICS_NSTAGES };

enum metrics_drop { METRICS_DROP_DEADLINE = 0, METRICS_DROP_CLIENT_GONE, METRICS_DROP_SHUTDOWN,
                    METRICS_DROP_QUEUE_FULL, METRICS_NDROPS };

struct metrics;

int metrics_create(struct metrics **out); /* 0 or -1 (out of memory) */
void metrics_destroy(struct metrics *m);  /* NULL-safe */

/* One answered request: route is a static label ("bloom", "kernels", ...). */
void metrics_request(struct metrics *m, const char *route, int status);
void metrics_observe(struct metrics *m, enum metrics_stage stage, double seconds);
void metrics_drop(struct metrics *m, enum metrics_drop why);

/* Writes every counter and histogram with its HELP and TYPE lines. */
void metrics_write(struct metrics *m, FILE *f);

#endif
