/* The tuners' measuring loop: candidates already built are warmed up, timed in interleaved
 * rounds and the fastest by median chosen. The FFT shape tuner (fft_tune.c) and the bloom's rows
 * tuner (bloom_tune.c) both measure this way; each keeps its candidates, logs and wisdom keys.
 *
 * GL contract: none of its own; it runs the caller's timing callback, which runs on the thread
 * that owns the context. */
#ifndef FFTBLOOM_TUNE_ROUNDS_H
#define FFTBLOOM_TUNE_ROUNDS_H

#define TUNE_ROUNDS 7         /* measurements per candidate; the median counts */
#define TUNE_WARM_MS 50.0     /* GPU time spent running the candidates before measuring */
#define TUNE_WARM_STEP_MS 8.0 /* of it at most a step, past its first turn (a frame arriving
                                 waits for one) */

/* The candidates measured, as the caller holds them. */
struct tune_rounds {
	int n;                               /* candidates, 0 .. n-1 */
	int (*live)(void *ctx, int i);       /* 1: candidate i was built and may run */
	/* GPU ms of one run of candidate i, negative when it failed; *spent (may be NULL) adds the
	 * GPU ms the run used (more than the result where it was repeated) */
	double (*time)(void *ctx, int i, double *spent);
	/* called with each live candidate's median, in order, by tune_rounds_pick (may be NULL) */
	void (*median)(void *ctx, int i, double ms);
	void *ctx;                           /* passed to the callbacks */
	double (*ms)[TUNE_ROUNDS];           /* the caller's: n rows of times, one a round */
};

/* A step of the warm-up: the live candidates in turn, whole turns until TUNE_WARM_STEP_MS of GPU
 * time in this call (at least one turn) or TUNE_WARM_MS in all; *t_warm carries the total across
 * calls (0 before the first). A failed run counts as TUNE_WARM_MS: a failure ends the warm-up.
 * Returns 1 when the warm-up is done (or no candidate is live), else 0. */
int tune_rounds_warm(const struct tune_rounds *tr, double *t_warm);

/* Round `round` (0 .. TUNE_ROUNDS-1): a run of each live candidate in turn, its time (as the
 * callback returned it) into ms[i][round]; -1 for one not live. */
void tune_rounds_round(const struct tune_rounds *tr, int round);

/* After TUNE_ROUNDS rounds: each live candidate's times sorted in place (ms[i]), its median
 * (-1 when a round failed) passed to tr->median, and the index of the fastest one with a
 * positive median returned (the first of equals), its median in *best_ms; -1 when none. */
int tune_rounds_pick(const struct tune_rounds *tr, double *best_ms);

#endif
