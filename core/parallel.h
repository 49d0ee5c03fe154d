/* Large host copies and scans split across threads: a big frame's read-back, its tiles' crops
 * and pastes move gigabytes, which one core does at a fraction of the host's memory bandwidth.
 * Pure C (pthreads); no state between calls. */
#ifndef FFTBLOOM_PARALLEL_H
#define FFTBLOOM_PARALLEL_H

#include <stddef.h>

/* Threads a call uses at most (the calling one among them), and fewer where the process may run
 * on fewer cores (its CPU affinity; a cgroup's quota is not seen): one frame's copies take at
 * most half of a 16-core host whose other cores decode and encode other requests. The bound is
 * per call: calls on several threads at once (one GPU thread each) start their own. */
#define PAR_MAX_THREADS 8

/* A range [begin, end) of items; ctx as given to par_for. Must not fail. */
typedef void (*par_fn)(void *ctx, size_t begin, size_t end);

/* Runs fn over [0, n) in contiguous pieces of at least min_items items each, on up to
 * PAR_MAX_THREADS threads (one piece on the calling thread), and returns when every piece is
 * done. With n < 2 * min_items, one core, or a thread that cannot be started, the pieces run
 * on the calling thread: the result never depends on the threads. */
void par_for(size_t n, size_t min_items, par_fn fn, void *ctx);

/* The threads par_for would use for n items of at least min_items a piece (1 when it would run
 * them on the calling thread alone). */
int par_threads(size_t n, size_t min_items);

#endif
