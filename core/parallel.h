/* Large host copies and scans split across threads: a big frame's read-back, its tiles' crops
 * and pastes move gigabytes, which one core does at a fraction of the host's memory bandwidth.
 * Pure C (pthreads); no state between calls. */
#ifndef FFTBLOOM_PARALLEL_H
#define FFTBLOOM_PARALLEL_H

#include <stddef.h>

/* Threads a par_for call uses at most (the calling one among them), and fewer where the process
 * may run on fewer cores (par_cores): one frame's copies take at
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

/* The cores this process may run on: the online processors, fewer where its CPU affinity
 * confines it to some, and fewer where its cgroup's CPU quota (cgroup v2 cpu.max, or v1's cfs
 * quota) allows less (rounded up); read once. */
long par_cores(void);

/* The most threads one par_each call runs (its callers' per-worker state is sized by what they
 * pass, at most this). */
#define PAR_EACH_MAX 256

/* A thread that works outside par_each (a codec thread decoding a frame) counts itself busy
 * while it works, so that par_each calls (the CPU engine's FFTs) start helpers only on the
 * cores left: codec threads and the engine share the cores without oversubscribing them. */
void par_hold(void);
void par_release(void);
/* The threads par_each and par_hold count at work now. */
int par_busy_now(void);

/* One item of par_each: item in [0, n) on worker in [0, threads) (0 is the calling thread; a
 * worker runs one item at a time, so state indexed by worker needs no lock). Returns 0, or
 * nonzero to stop: no item is started after that (those under way finish). */
typedef int (*par_item_fn)(void *ctx, int worker, size_t item);

/* Runs fn on items [0, n) handed out one at a time in order (an item's cost may vary) to the
 * calling thread and up to threads - 1 helpers, which the process shares: all par_each calls
 * at once run at most as many threads as the process may use cores (par_threads' count), so
 * codec threads that each split a frame do not oversubscribe a loaded host: a call made while
 * the others hold every core runs on its calling thread alone. threads is clamped to
 * [1, PAR_EACH_MAX]; helpers are threads started once and parked between calls. Returns 0 when
 * every item returned 0; else the value of the lowest item
 * that failed among those that ran, with that item in *failed (when not NULL). */
int par_each(size_t n, int threads, par_item_fn fn, void *ctx, size_t *failed);

#endif
