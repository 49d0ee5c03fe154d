/* The bloom's io rows measured: where a plan's rows carry the prefilter and composite (fft_io)
 * and the wisdom has no line of the ends for their shape, their invocation counts
 * (fft_io_tune_candidates), each in both kinds of rounds where the rows exchange in rounds, are
 * timed on the plan's own buffers, forward rows with the prefilter and inverse rows with the
 * composite over the last frame's rows, and the fastest goes into the wisdom under the ends' key
 * (fft_wisdom_key.io); the plan is rebuilt with it (bloom_ctx_refresh). The plain transform's
 * time cannot choose for them: on the H200 the 4375-long rows' plain transform took the same on
 * 512 and 875 invocations, the bloom's rows 0.936 against 0.859 ms (bench/RESULTS.md, "The
 * 2160p bloom's rows on 875 invocations").
 * A step compiles one program, runs a candidate once, warms them up (a turn of every candidate,
 * more turns up to TUNE_WARM_STEP_MS of GPU time) or measures a round (a run of each), in the
 * measuring loop the FFT tuner runs too (tune_rounds.h). */
#include "gles/bloom_internal.h"

#include <stdlib.h>
#include <string.h>

#include "gles/tune_rounds.h"

#define TUNE_BUILD_STEPS 16   /* steps a program may be deferred before it is built at once */
#define TUNE_MAX (2 * FFT_IO_TUNE_MAX) /* candidates: invocation counts in two kinds of rounds */

struct bloom_rows_tune {
	int pw, ph, technique, half, tile_log, w, h;
	int n;                              /* candidates */
	int threads[TUNE_MAX], split[TUNE_MAX];
	struct fft_axis *ax[TUNE_MAX];      /* their shapes (no programs) */
	struct fft_io *in[TUNE_MAX], *out[TUNE_MAX];
	struct bloom_prog pin[TUNE_MAX], pout[TUNE_MAX];
	int dead[TUNE_MAX];                 /* 1: could not be built or run */
	int built;                          /* programs built or given up, two a candidate */
	int deferred;                       /* steps the program being built was deferred */
	int tried, warmed, rounds;
	double t_warm;
	double ms[TUNE_MAX][TUNE_ROUNDS];
	struct gpu_timer *timer;
};

static const char *rounds_name(int split)
{
	return split == 2 ? "float" : split == 1 ? "vec2" : "whole vec4";
}

static void tune_free(struct bloom_ctx *b)
{
	struct bloom_rows_tune *t = b->rows_tune;
	if (!t)
		return;
	for (int i = 0; i < t->n; i++) {
		fft_io_destroy(t->in[i]);
		fft_io_destroy(t->out[i]);
		fft_axis_destroy(t->ax[i]);
	}
	gpu_timer_destroy(t->timer);
	free(t);
	b->rows_tune = NULL;
}

void bloom_rows_tune_free(struct bloom_ctx *b)
{
	tune_free(b);
}

/* The plan measured, if it is still cached and still waits for its rows' shape. */
static struct plan *tune_plan(const struct bloom_ctx *b, const struct bloom_rows_tune *t)
{
	struct plan *q = bloom_find_plan(b, t->pw, t->ph, t->technique, t->half);
	return q && q->rows_tune && q->tile_log == t->tile_log ? q : NULL;
}

/* The next plan to measure: a frame has run on it (its size is what the rows are timed on). */
static struct plan *next_plan(const struct bloom_ctx *b)
{
	for (int i = 0; i < b->plans.n; i++)
		if (bloom_plan_rows_tune_due(b->plans.e[i]))
			return b->plans.e[i];
	return NULL;
}

/* A run for q: its candidates, a shape each (no compile): the invocation counts of
 * fft_io_tune_candidates, in the rounds the rule gives the rows and, for vec4 rows that
 * exchange in rounds, in the other kind (two vec2 rounds or four float rounds: the rule,
 * FFT_FLOAT_ROUNDS_TO, is the H200's). 0; TUNE_ONE when fewer than two; TUNE_NOMEM. */
enum { TUNE_ONE = 1, TUNE_NOMEM = 2 };
static int tune_start(struct bloom_ctx *b, struct plan *q)
{
	struct bloom_rows_tune *t = calloc(1, sizeof *t);
	if (!t)
		return TUNE_NOMEM;
	t->pw = q->pw, t->ph = q->ph, t->technique = q->technique, t->half = q->half;
	t->tile_log = q->tile_log, t->w = q->frame_w, t->h = q->frame_h;
	const struct fft_plan *rp = fft_axis_plan(q->rows4);
	int threads[FFT_IO_TUNE_MAX];
	int n = fft_io_tune_candidates(b->info, q->rows4, threads);
	struct fft_opts o = {.technique = FFT_TECH_SHARED, .components = 4, .half = q->half,
	                     .norm_forward = q->half, .pad_from = b->opts.fft_pad_from,
	                     .split = rp->split, .io = 1};
	b->rows_tune = t;
	if (gpu_timer_create(b->info, &t->timer)) {
		tune_free(b);
		return TUNE_NOMEM;
	}
	size_t elems = (size_t)q->pw * q->ph;
	int splits[2] = {rp->split, rp->split == 1 ? 2 : 1}, nsplits = rp->split ? 2 : 1;
	for (int si = 0; si < nsplits; si++)
		for (int i = 0; i < n; i++) {
			char err[FFT_ERR_LEN];
			o.threads = threads[i];
			o.split = splits[si];
			struct fft_axis *a;
			if (fft_axis_shape(b->pc, b->info, q->pw, elems, q->ph, &o, &a, err))
				continue; /* a shape the plan refuses */
			const struct fft_plan *p = fft_axis_plan(a);
			if (!p->shared || p->split != splits[si] || p->threads != threads[i]) {
				fft_axis_destroy(a); /* not the shape asked for */
				continue;
			}
			t->threads[t->n] = threads[i];
			t->split[t->n] = splits[si];
			t->ax[t->n++] = a;
		}
	if (t->n < 2) {
		tune_free(b);
		return TUNE_ONE;
	}
	log_sinkf(&b->log, LOG_DEBUG, "bloom: measuring the rows of %dx%d (%d long, %s) in %d "
	          "shapes, over %d rows of %d", q->pw, q->ph, q->pw, q->half ? "float16" : "float32",
	          t->n, t->h, t->w);
	return 0;
}

/* GPU ms of candidate i's forward rows with the prefilter and inverse rows with the
 * composite, on q's buffers; negative when it failed. */
static double time_once(struct bloom_ctx *b, struct plan *q, int i)
{
	struct bloom_rows_tune *t = b->rows_tune;
	struct bloom_params p;
	memset(&p, 0, sizeof p); /* the defaults of a float bloom */
	p.threshold = 1, p.knee = 0.5, p.clamp_max = 65472, p.intensity = 1, p.mix = 0.5;
	double ms[GPU_STAGE_COUNT];
	gpu_timer_start(t->timer);
	int rc = bloom_rows_in(q, t->in[i], &t->pin[i], &p, 1, t->w, t->h);
	rc |= bloom_rows_out(b, q, t->out[i], &t->pout[i], &p, 1, t->w, t->h);
	gpu_timer_mark(t->timer, GPU_STAGE_ROWS);
	b->plans.last.valid = 0; /* the plan's buffers no longer hold the last frame's stages */
	if (rc || gpu_timer_read(t->timer, ms) || !(ms[GPU_STAGE_ROWS] > 0))
		return -1;
	return ms[GPU_STAGE_ROWS];
}

/* One program of the candidates (the forward rows', then the inverse rows'), under a budget of
 * one compile (none: at once); a refused one is tried again at the next step. */
static void build_one(struct bloom_ctx *b, int budget)
{
	struct bloom_rows_tune *t = b->rows_tune;
	int i = t->built / 2, inverse = t->built % 2;
	char err[FFT_ERR_LEN];
	if (t->dead[i]) {
		t->built++;
		return;
	}
	program_cache_budget(b->pc, budget && t->deferred < TUNE_BUILD_STEPS ? 1 : -1);
	int rc = bloom_io_make(b, t->ax[i], 0, t->tile_log, inverse,
	                       inverse ? &t->out[i] : &t->in[i], inverse ? &t->pout[i] : &t->pin[i],
	                       err);
	int refused = rc && program_cache_refused(b->pc);
	program_cache_budget(b->pc, -1);
	if (refused) {
		t->deferred++;
		return;
	}
	if (rc) {
		log_sinkf(&b->log, LOG_DEBUG, "bloom: rows of %d on %d invocations, %s rounds: %s",
		          t->pw, t->threads[i], rounds_name(t->split[i]), err);
		t->dead[i] = 1;
	}
	t->deferred = 0;
	t->built++;
}

/* The wisdom key of q's rows with their ends: make_axes' rows4 (bloom_plan.c) under io. */
static void rows_key(const struct plan *q, struct fft_wisdom_key *k)
{
	struct fft_opts o = {.components = 4, .half = q->half, .io = 1};
	fft_wisdom_key_of(q->pw, 0, q->ph, &o, k);
}

/* A shape of rows of q's length into the wisdom under the ends' key (so that the plan, rebuilt,
 * runs it and is not measured again). */
static void put_shape(struct bloom_ctx *b, const struct plan *q, int threads, int split,
                      double ms)
{
	struct fft_wisdom_key k;
	rows_key(q, &k);
	struct fft_wisdom_choice c = {FFT_TECH_SHARED, threads, 0, split};
	fft_wisdom_put(b->opts.wisdom, &k, &c, ms);
}

int bloom_rows_known(const struct bloom_ctx *b, const struct plan *q)
{
	struct fft_wisdom_key k;
	struct fft_wisdom_choice c;
	rows_key(q, &k);
	return q->rows_tune && b->opts.wisdom && !fft_wisdom_get(b->opts.wisdom, &k, &c);
}

/* The plain transform's shape kept for q's rows, remembered as theirs. */
static void keep_plain(struct bloom_ctx *b, struct plan *q, const char *why)
{
	const struct fft_plan *p = fft_axis_plan(q->rows4);
	log_sinkf(&b->log, LOG_INFO, "bloom: the rows of %dx%d keep the plain transform's %d "
	          "invocations: %s", q->pw, q->ph, p->threads, why);
	put_shape(b, q, p->threads, p->split, 0);
	q->rows_tune = 0;
}

/* A run's start failed: nothing to choose between (the plain shape remembered), or no memory
 * (nothing remembered: the plan's rows are left as they are until it is rebuilt). */
static void start_failed(struct bloom_ctx *b, struct plan *q, int rc)
{
	if (rc == TUNE_ONE) {
		keep_plain(b, q, "no other shape to measure");
	} else {
		log_sinkf(&b->log, LOG_WARN, "bloom: no memory to measure the rows of %dx%d", q->pw,
		          q->ph);
		q->rows_tune = 0;
	}
}

/* The plan whose rows are measured: the measuring loop's context. */
struct rows_run {
	struct bloom_ctx *b;
	struct plan *q;
};

static int rows_live(void *ctx, int i)
{
	const struct rows_run *r = ctx;
	return !r->b->rows_tune->dead[i];
}

static double rows_time(void *ctx, int i, double *spent)
{
	struct rows_run *r = ctx;
	double m = time_once(r->b, r->q, i);
	if (spent)
		*spent += m > 0 ? m : 0;
	return m;
}

static void rows_median(void *ctx, int i, double med)
{
	const struct rows_run *r = ctx;
	const struct bloom_rows_tune *t = r->b->rows_tune;
	log_sinkf(&r->b->log, LOG_DEBUG, "bloom: rows of %d (%s) on %d invocations, %s rounds: "
	          "%.4f ms", t->pw, t->half ? "float16" : "float32", t->threads[i],
	          rounds_name(t->split[i]), med);
}

/* The measuring loop over the run's candidates (tune_rounds.h). */
static struct tune_rounds rows_rounds(struct rows_run *r)
{
	struct bloom_rows_tune *t = r->b->rows_tune;
	return (struct tune_rounds){.n = t->n, .live = rows_live, .time = rows_time,
	                            .median = rows_median, .ctx = r, .ms = t->ms};
}

/* The fastest candidate by median into the wisdom, under the ends' key. */
static void pick(struct bloom_ctx *b, struct plan *q)
{
	struct bloom_rows_tune *t = b->rows_tune;
	struct rows_run rr = {b, q};
	struct tune_rounds tr = rows_rounds(&rr);
	double best_ms = 0;
	int best = tune_rounds_pick(&tr, &best_ms);
	if (best < 0) {
		keep_plain(b, q, "no candidate could be timed");
		return;
	}
	const struct fft_plan *p = fft_axis_plan(t->ax[best]);
	put_shape(b, q, p->threads, p->split, best_ms);
	q->rows_tune = 0;
	b->st.rows_tuned++;
	log_sinkf(&b->log, LOG_INFO, "FFT wisdom: the bloom's rows of %d (%s, the prefilter and "
	          "composite in them): %d invocations, %s rounds (%.4f ms over %d rows, forward and "
	          "inverse)", t->pw, t->half ? "float16" : "float32", p->threads,
	          rounds_name(p->split), best_ms, t->h);
}

/* One step of the run; budget 0: no compile budget (at once). Returns 1 while it goes on, 0
 * once it ended (measured, or dropped). */
static int tune_step(struct bloom_ctx *b, int budget, const char **last)
{
	struct bloom_rows_tune *t = b->rows_tune;
	struct plan *q = tune_plan(b, t);
	if (!q) { /* evicted, rebuilt with a shape measured meanwhile, or retiled */
		*last = "dropping a plan gone";
		tune_free(b);
		return 0;
	}
	if (t->built < 2 * t->n) {
		*last = "building a candidate's program";
		build_one(b, budget);
	} else if (t->tried < t->n) {
		*last = "a candidate's first run";
		if (!t->dead[t->tried] && time_once(b, q, t->tried) < 0)
			t->dead[t->tried] = 1;
		t->tried++;
	} else if (!t->warmed) {
		*last = "warming up";
		struct rows_run rr = {b, q};
		struct tune_rounds tr = rows_rounds(&rr);
		t->warmed = tune_rounds_warm(&tr, &t->t_warm);
	} else if (t->rounds < TUNE_ROUNDS) {
		*last = "a round";
		struct rows_run rr = {b, q};
		struct tune_rounds tr = rows_rounds(&rr);
		tune_rounds_round(&tr, t->rounds++);
	} else {
		*last = "picking";
		pick(b, q);
		tune_free(b);
		return 0;
	}
	return 1;
}

int bloom_rows_tune_step(struct bloom_ctx *b, const char **last)
{
	const char *dummy;
	last = last ? last : &dummy;
	*last = "nothing";
	if (!b->opts.wisdom || fft_wisdom_measure(b->opts.wisdom) == FFT_WISDOM_MEASURE_NEVER)
		return 0;
	if (!b->rows_tune) {
		struct plan *q = next_plan(b);
		if (!q)
			return 0;
		*last = "starting a plan's rows";
		int rc = tune_start(b, q);
		if (rc)
			start_failed(b, q, rc);
		return 1;
	}
	tune_step(b, 1, last);
	return 1;
}

int bloom_rows_tune_now(struct bloom_ctx *b, struct plan *q)
{
	const char *last;
	if (!q->rows_tune || b->rows_tune)
		return 0;
	unsigned long long gen = fft_wisdom_generation(b->opts.wisdom);
	int rc = tune_start(b, q);
	if (rc)
		start_failed(b, q, rc);
	else
		while (tune_step(b, 0, &last)) {
		}
	return fft_wisdom_generation(b->opts.wisdom) != gen;
}
