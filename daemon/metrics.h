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
void metrics_destroy(struct metrics *m);  /* NULL-safe; one metrics_place made is left alone */

/* The bytes a store takes, to place one in memory shared between processes (the worker
 * processes of several GPUs, each writing its own and any of them reading all). */
size_t metrics_size(void);

/* The store at mem (metrics_size() bytes, suitably aligned): init zeroes it and makes its lock
 * (process-shared, robust: a process killed while holding it does not block the others);
 * without init the counts there are kept (a restarted worker goes on with its slot's). */
struct metrics *metrics_place(void *mem, int init);

/* One answered request: route is a static label ("bloom", "kernels", ...). */
void metrics_request(struct metrics *m, const char *route, int status);
void metrics_observe(struct metrics *m, enum metrics_stage stage, double seconds);
void metrics_drop(struct metrics *m, enum metrics_drop why);

/* Writes every counter and histogram with its HELP and TYPE lines. */
void metrics_write(struct metrics *m, FILE *f);

/* The same for n stores summed: each series, bucket and counter is the sum of theirs. Route
 * labels are compared as strings. */
void metrics_write_sum(struct metrics *const *m, int n, FILE *f);

#endif
