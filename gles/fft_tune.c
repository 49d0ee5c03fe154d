/* The FFT tuner: for a shape with no wisdom yet (gles/wisdom.h), measures the candidate
 * techniques and work-group shapes on the GPU and remembers the fastest; fft_axis_create. */
#include "gles/fft_internal.h"

#include <GLES3/gl31.h>
#include <stdlib.h>
#include <string.h>

#include "gles/gpu_timer.h"

#define TUNE_ROUNDS 7     /* measurements per candidate; the median counts */
#define TUNE_WARM_MS 50.0 /* GPU time spent running the candidates before measuring */
#define TUNE_MAX_CAND 12

static unsigned long long tune_rng = 0x2545F4914F6CDD1Dull;

/* The shapes tune measures: shared at several invocation counts, global, and for adjacent
 * signals blocked with rows of 64 (its default), 32 and 128 bytes and with half the invocations.
 * Returns the count written to cand (at most TUNE_MAX_CAND). */
static int tune_candidates(const struct egl_info *info, int n, int adjacent,
                           const struct fft_opts *o, struct fft_opts cand[TUNE_MAX_CAND])
{
	static const int threads[] = {0, 32, 64, 128, 256, 512};
	int nc = 0;
	for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++)
		if (threads[i] <= info->max_invocations) {
			cand[nc] = *o;
			cand[nc].technique = FFT_TECH_SHARED;
			cand[nc++].threads = threads[i];
		}
	cand[nc] = *o;
	cand[nc++].technique = FFT_TECH_GLOBAL;
	if (!adjacent)
		return nc;
	int selem = o->components * (o->half ? 2 : 4);
	static const int row_bytes[] = {64, 32, 128};
	for (int i = 0; i < 3; i++) {
		cand[nc] = *o;
		cand[nc].technique = FFT_TECH_BLOCKED;
		cand[nc++].signals = row_bytes[i] / selem > 1 ? row_bytes[i] / selem : 1;
	}
	struct fft_plan_opts po = {.technique = FFT_TECH_BLOCKED, .components = o->components,
	                           .shared_limit = info->max_shared_memory,
	                           .max_invocations = info->max_invocations, .signals_adjacent = 1,
	                           .half = o->half, .pad_from = o->pad_from};
	struct fft_plan p;
	if (!fft_plan_make(n, &po, &p) && p.blocked && p.threads > 1) {
		cand[nc] = *o;
		cand[nc].technique = FFT_TECH_BLOCKED;
		cand[nc++].threads = p.threads / 2;
	}
	return nc;
}

/* A storage buffer of random data for `elems` elements of the candidates' layout (float16
 * bits with sane exponents when half); 0 when out of memory. */
static GLuint tune_buffer(size_t elems, const struct fft_opts *o)
{
	size_t floats = elems * (size_t)o->components;
	float *data = malloc(floats * sizeof *data);
	if (!data)
		return 0;
	for (size_t i = 0; i < floats; i++) {
		tune_rng ^= tune_rng << 13, tune_rng ^= tune_rng >> 7, tune_rng ^= tune_rng << 17;
		data[i] = (float)((tune_rng >> 40) * (1.0 / 16777216.0)) - 0.5f;
	}
	if (o->half) { /* the bits of random halves: exponent and sign kept sane */
		unsigned short *h = (unsigned short *)data;
		for (size_t i = 0; i < floats; i++)
			h[i] = (unsigned short)(0x3000 | ((unsigned)(data[i] * 65536.0f) & 0x83ff));
	}
	GLuint buf;
	glGenBuffers(1, &buf);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf);
	glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(floats * (o->half ? 2 : 4)), data,
	             GL_DYNAMIC_COPY);
	free(data);
	return buf;
}

/* GPU time of one forward + inverse run of axis a over `count` signals on buffer buf;
 * negative when it failed. */
static double time_axis_once(struct fft_axis *a, int adjacent, struct gpu_timer *t, unsigned buf,
                             int count)
{
	size_t sig = adjacent ? 1 : (size_t)fft_axis_plan(a)->n, el = adjacent ? (size_t)count : 1;
	int stage = adjacent ? GPU_STAGE_COLS : GPU_STAGE_ROWS;
	double ms[GPU_STAGE_COUNT];
	gpu_timer_start(t);
	int rc = fft_axis_execute(a, buf, 0, sig, el, count, 0);
	rc |= fft_axis_execute(a, buf, 0, sig, el, count, 1);
	gpu_timer_mark(t, stage);
	if (rc || gpu_timer_read(t, ms))
		return -1;
	return ms[stage];
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

/* The median GPU time of each built candidate (ax[i] non-NULL) in med[i] (negative when a run
 * failed). Every candidate is built first and then measured in interleaved rounds, after a
 * warm-up: GPU clocks ramp up over tens of milliseconds of load (the H200 under GL: 2-4x), and
 * measuring the candidates one after the other favoured whichever came last. */
static void measure(struct fft_axis *ax[], int nc, int adjacent, struct gpu_timer *t,
                    unsigned buf, int count, double med[])
{
	double ms[TUNE_MAX_CAND][TUNE_ROUNDS];
	int live = 0;
	for (int i = 0; i < nc; i++)
		live += ax[i] != NULL;
	double t_warm = 0; /* warm-up: the live candidates in turn until TUNE_WARM_MS of GPU time */
	for (int w = 0; live && t_warm < TUNE_WARM_MS && w < 1000; w++)
		for (int i = 0; i < nc; i++)
			if (ax[i]) {
				double m = time_axis_once(ax[i], adjacent, t, buf, count);
				t_warm += m > 0 ? m : TUNE_WARM_MS; /* a failure ends the warm-up */
			}
	for (int r = 0; r < TUNE_ROUNDS; r++)
		for (int i = 0; i < nc; i++)
			ms[i][r] = ax[i] ? time_axis_once(ax[i], adjacent, t, buf, count) : -1;
	for (int i = 0; i < nc; i++) {
		qsort(ms[i], TUNE_ROUNDS, sizeof ms[i][0], cmp_double);
		med[i] = ms[i][0] < 0 ? -1 : ms[i][TUNE_ROUNDS / 2];
	}
}

/* Measures the candidate shapes (tune_candidates) on random data of the real shape, and returns
 * the fastest in *best (technique, threads, signals: the shape measured, so that the plan
 * rebuilt from wisdom is this one) and its time in *best_ms; -1 when none ran. */
static int tune(struct program_cache *pc, const struct egl_info *info, int n, int adjacent,
                size_t capacity, int max_count, const struct fft_opts *o,
                const struct gles_log *log, struct fft_opts *best, double *best_ms)
{
	size_t elems = (size_t)n * max_count;
	struct gpu_timer *t = NULL;
	GLuint buf = tune_buffer(elems < capacity ? elems : capacity, o);
	if (!buf || gpu_timer_create(info, &t)) {
		if (buf)
			glDeleteBuffers(1, &buf);
		return -1;
	}
	struct fft_opts cand[TUNE_MAX_CAND];
	struct fft_axis *ax[TUNE_MAX_CAND] = {NULL};
	double med[TUNE_MAX_CAND];
	int nc = tune_candidates(info, n, adjacent, o, cand), found = 0;
	for (int i = 0; i < nc; i++) {
		char err[FFT_ERR_LEN];
		cand[i].wisdom = NULL;
		if (fft_axis_build(pc, info, n, adjacent, capacity, max_count, &cand[i], log, &ax[i], err))
			ax[i] = NULL;
	}
	measure(ax, nc, adjacent, t, buf, max_count, med);
	for (int i = 0; i < nc; i++) {
		if (!ax[i])
			continue;
		const struct fft_plan *p = fft_axis_plan(ax[i]);
		gles_logf(log, GLES_LOG_DEBUG, "FFT tune n=%d vec%d %s %s: %d signals x %d invocations, "
		          "%d sweeps: %.4f ms", n, o->components, adjacent ? "cols" : "rows",
		          fft_technique_name(cand[i].technique), p->signals, p->threads, p->nsweeps,
		          med[i]);
		if (med[i] > 0 && (!found || med[i] < *best_ms)) {
			*best = cand[i];
			best->threads = cand[i].technique == FFT_TECH_GLOBAL ? 0 : cand[i].threads
			              ? cand[i].threads : p->threads;
			best->signals = cand[i].technique == FFT_TECH_BLOCKED ? p->signals : 0;
			*best_ms = med[i];
			found = 1;
		}
		fft_axis_destroy(ax[i]);
	}
	glDeleteBuffers(1, &buf);
	gpu_timer_destroy(t);
	return found ? 0 : -1;
}

/* The wisdom's key for a shape: the batch rounded down to a power of two. */
static void wisdom_key(int n, int adjacent, int max_count, const struct fft_opts *o,
                       struct fft_wisdom_key *k)
{
	memset(k, 0, sizeof *k);
	k->n = n;
	k->components = o->components;
	k->adjacent = adjacent;
	k->half = o->half;
	while ((1 << (k->count_log2 + 1)) <= max_count)
		k->count_log2++;
}

int fft_axis_create(struct program_cache *pc, const struct egl_info *info, int n,
                    int signals_adjacent, size_t capacity, int max_count,
                    const struct fft_opts *o, const struct gles_log *log,
                    struct fft_axis **out, char err[FFT_ERR_LEN])
{
	struct fft_opts ro;
	if (o->technique == FFT_TECH_BLOCKED && !signals_adjacent) {
		ro = *o; /* blocked is for columns; rows (and Bluestein's work rows) take auto */
		ro.technique = FFT_TECH_AUTO;
		ro.threads = ro.signals = 0;
		o = &ro;
	}
	if (!o->wisdom || o->technique != FFT_TECH_AUTO || o->threads || o->signals || n < 2 ||
	    !fft_is_native(n))
		return fft_axis_build(pc, info, n, signals_adjacent, capacity, max_count, o, log, out,
		                      err);
	struct fft_wisdom_key k;
	wisdom_key(n, signals_adjacent, max_count, o, &k);
	struct fft_opts c = *o;
	struct fft_wisdom_choice ch;
	if (fft_wisdom_get(o->wisdom, &k, &ch) == 0) {
		c.technique = ch.technique;
		c.threads = ch.threads;
		c.signals = ch.signals;
	} else {
		double ms = 0;
		struct fft_opts best;
		if (tune(pc, info, n, signals_adjacent, capacity, max_count, o, log, &best, &ms) == 0) {
			c = best;
			ch.technique = c.technique;
			ch.threads = c.threads;
			ch.signals = c.signals;
			fft_wisdom_put(o->wisdom, &k, &ch, ms);
			gles_logf(log, GLES_LOG_INFO, "FFT wisdom: n=%d vec%d %s: %s, %d signals x %d "
			          "invocations (%.4f ms)", n, o->components, signals_adjacent ? "cols" : "rows",
			          fft_technique_name(c.technique), c.signals, c.threads, ms);
		}
	}
	c.wisdom = NULL;
	return fft_axis_build(pc, info, n, signals_adjacent, capacity, max_count, &c, log, out, err);
}
