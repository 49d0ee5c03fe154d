/* The FFT tuner: for a shape with no wisdom yet (gles/wisdom.h), the built-in rule
 * (fft_plan_rule), or the candidate techniques and work-group shapes measured on the GPU and the
 * fastest remembered: at once in fft_axis_create, or step by step in idle time (fft_tuner). */
#include "gles/fft_internal.h"

#include <GLES3/gl31.h>
#include <stdlib.h>
#include <string.h>

#include "gles/gpu_timer.h"
#include "gles/tune_rounds.h"

#define TUNE_REPS 4       /* runs back to back a measurement (one timer read) of a candidate
                             shorter than TUNE_REPS_BELOW_MS, so that the GPU is kept busy as in
                             the runs that count (bench/RESULTS.md, "The FFT tuner's candidates
                             and timing") */
#define TUNE_REPS_BELOW_MS 1.0
#define TUNE_RANDOM_FLOATS (1u << 20) /* random values made; the buffer repeats them */
#define TUNE_BUILD_STEPS 16 /* idle steps (a program each) a candidate takes before it is built
                               whole in one */

int fft_tune_candidates(const struct egl_info *info, int n, int adjacent, int max_count,
                        const struct fft_opts *o, struct fft_opts cand[FFT_TUNE_MAX_CAND])
{
	static const int threads[] = {0, 32, 64, 128, 256, 512};
	int nc = 0;
	struct fft_choice rule;
	fft_plan_rule(n, adjacent, o->components, o->half, info->software, info->max_invocations,
	              info->max_shared_memory, max_count, &rule);
	if (rule.signals || rule.split) { /* a shape none of the others is */
		cand[nc] = *o;
		cand[nc].technique = rule.technique;
		cand[nc].threads = rule.threads;
		cand[nc].signals = rule.signals;
		cand[nc++].split = rule.split;
	}
	for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++)
		if (threads[i] <= info->max_invocations &&
		    (!threads[i] || (long long)threads[i] * FFT_TUNE_MAX_VALUES >= n)) {
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
	/* a block of random values repeated: the transforms' time does not depend on the values,
	 * and making tens of MB of them held an idle step for as many ms */
	size_t floats = elems * (size_t)o->components, esize = o->half ? 2 : 4;
	size_t block = floats < TUNE_RANDOM_FLOATS ? floats : TUNE_RANDOM_FLOATS;
	float *data = malloc(block * sizeof *data);
	if (!data)
		return 0;
	/* the same values each time, and no state shared by contexts on other threads */
	unsigned long long tune_rng = 0x2545F4914F6CDD1Dull;
	for (size_t i = 0; i < block; i++) {
		tune_rng ^= tune_rng << 13, tune_rng ^= tune_rng >> 7, tune_rng ^= tune_rng << 17;
		data[i] = (float)((tune_rng >> 40) * (1.0 / 16777216.0)) - 0.5f;
	}
	if (o->half) { /* the bits of random halves: exponent and sign kept sane */
		unsigned short *h = (unsigned short *)data;
		for (size_t i = 0; i < block; i++)
			h[i] = (unsigned short)(0x3000 | ((unsigned)(data[i] * 65536.0f) & 0x83ff));
	}
	GLuint buf;
	glGenBuffers(1, &buf);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf);
	glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(floats * esize), NULL, GL_DYNAMIC_COPY);
	for (size_t at = 0; at < floats; at += block) {
		size_t n = floats - at < block ? floats - at : block;
		glBufferSubData(GL_SHADER_STORAGE_BUFFER, (GLintptr)(at * esize), (GLsizeiptr)(n * esize),
		                data);
	}
	free(data);
	if (glGetError() != GL_NO_ERROR) {
		glDeleteBuffers(1, &buf);
		return 0;
	}
	return buf;
}

/* GPU time of `reps` forward + inverse runs back to back of axis a over `count` signals on
 * buffer buf; negative when it failed. */
static double time_runs(struct fft_axis *a, int adjacent, struct gpu_timer *t, unsigned buf,
                        int count, int reps)
{
	size_t sig = adjacent ? 1 : (size_t)fft_axis_plan(a)->n, el = adjacent ? (size_t)count : 1;
	int stage = adjacent ? GPU_STAGE_COLS : GPU_STAGE_ROWS, rc = 0;
	double ms[GPU_STAGE_COUNT];
	gpu_timer_start(t);
	for (int i = 0; i < reps; i++) {
		rc |= fft_axis_execute(a, buf, 0, sig, el, count, 0);
		rc |= fft_axis_execute(a, buf, 0, sig, el, count, 1);
	}
	gpu_timer_mark(t, stage);
	if (rc || gpu_timer_read(t, ms))
		return -1;
	return ms[stage];
}

/* GPU time of a forward + inverse run of axis a; a run shorter than TUNE_REPS_BELOW_MS is
 * measured again as the mean of TUNE_REPS runs back to back. *spent (may be NULL) adds the GPU
 * time used. Negative when it failed. */
static double time_axis_once(struct fft_axis *a, int adjacent, struct gpu_timer *t, unsigned buf,
                             int count, double *spent)
{
	double m = time_runs(a, adjacent, t, buf, count, 1), all = m;
	if (m > 0 && m < TUNE_REPS_BELOW_MS) {
		double r = time_runs(a, adjacent, t, buf, count, TUNE_REPS);
		all += r;
		m = r > 0 ? r / TUNE_REPS : -1;
	}
	if (spent)
		*spent += all > 0 ? all : 0;
	return m;
}

/* The candidates of one shape being measured: built, warmed, then measured in rounds. */
struct tune_run {
	int n, adjacent, max_count;
	size_t capacity;
	struct fft_opts o;              /* the shape's options (technique auto) */
	struct fft_opts cand[FFT_TUNE_MAX_CAND];
	struct fft_axis *ax[FFT_TUNE_MAX_CAND];
	int nc;
	double ms[FFT_TUNE_MAX_CAND][TUNE_ROUNDS];
	GLuint buf;
	struct gpu_timer *t;
	const struct log_sink *log;     /* the candidates' and their medians' debug lines */
};

static void run_free(struct tune_run *r)
{
	for (int i = 0; i < r->nc; i++) {
		fft_axis_destroy(r->ax[i]);
		r->ax[i] = NULL;
	}
	if (r->buf)
		glDeleteBuffers(1, &r->buf);
	gpu_timer_destroy(r->t);
	r->buf = 0;
	r->t = NULL;
	r->nc = 0;
}

/* The candidate list, the random data and the timer of a shape; -1 when out of memory. */
static int run_start(struct tune_run *r, const struct egl_info *info, int n, int adjacent,
                     size_t capacity, int max_count, const struct fft_opts *o,
                     const struct log_sink *log)
{
	memset(r, 0, sizeof *r);
	r->log = log;
	r->n = n;
	r->adjacent = adjacent;
	r->capacity = capacity;
	r->max_count = max_count;
	r->o = *o;
	r->o.wisdom = NULL;
	r->o.split = 0; /* a measuring option of the caller's: not what the wisdom remembers */
	size_t elems = (size_t)n * max_count;
	r->buf = tune_buffer(elems < capacity ? elems : capacity, o);
	if (!r->buf || gpu_timer_create(info, &r->t)) {
		run_free(r);
		return -1;
	}
	r->nc = fft_tune_candidates(info, n, adjacent, max_count, &r->o, r->cand);
	return 0;
}

static void run_build(struct tune_run *r, struct program_cache *pc, const struct egl_info *info,
                      int i)
{
	char err[FFT_ERR_LEN];
	const struct fft_opts *c = &r->cand[i];
	r->cand[i].wisdom = NULL;
	log_sinkf(r->log, LOG_DEBUG, "FFT tune n=%d vec%d %s: candidate %d of %d, %s, %d invocations, "
	          "%d signals, split %d", r->n, c->components, r->adjacent ? "cols" : "rows", i + 1,
	          r->nc, fft_technique_name(c->technique), c->threads, c->signals, c->split);
	if (fft_axis_build(pc, info, r->n, r->adjacent, r->capacity, r->max_count, &r->cand[i],
	                   r->log, &r->ax[i], err))
		r->ax[i] = NULL;
}

static int run_live(void *ctx, int i)
{
	const struct tune_run *r = ctx;
	return r->ax[i] != NULL;
}

static double run_time(void *ctx, int i, double *spent)
{
	struct tune_run *r = ctx;
	return time_axis_once(r->ax[i], r->adjacent, r->t, r->buf, r->max_count, spent);
}

static void run_median(void *ctx, int i, double med)
{
	const struct tune_run *r = ctx;
	const struct fft_plan *p = fft_axis_plan(r->ax[i]);
	log_sinkf(r->log, LOG_DEBUG, "FFT tune n=%d vec%d %s %s: %d signals x %d invocations, "
	          "%d sweeps: %.4f ms", r->n, r->o.components, r->adjacent ? "cols" : "rows",
	          fft_technique_name(r->cand[i].technique), p->signals, p->threads, p->nsweeps, med);
}

/* The measuring loop over r's built candidates (tune_rounds.h): a forward + inverse run each. */
static struct tune_rounds run_rounds(struct tune_run *r)
{
	return (struct tune_rounds){.n = r->nc, .live = run_live, .time = run_time,
	                            .median = run_median, .ctx = r, .ms = r->ms};
}

/* The fastest candidate by median (technique, threads, signals: the shape measured, so that the
 * plan rebuilt from wisdom is this one) in *best and its time in *best_ms; -1 when none ran. */
static int run_pick(struct tune_run *r, struct fft_wisdom_choice *best, double *best_ms)
{
	struct tune_rounds tr = run_rounds(r);
	int i = tune_rounds_pick(&tr, best_ms);
	if (i < 0)
		return -1;
	const struct fft_plan *p = fft_axis_plan(r->ax[i]);
	best->technique = r->cand[i].technique;
	best->threads = r->cand[i].technique == FFT_TECH_GLOBAL ? 0 : r->cand[i].threads
	              ? r->cand[i].threads : p->threads;
	best->signals = r->cand[i].technique == FFT_TECH_BLOCKED || r->cand[i].signals
	              ? p->signals : 0;
	best->split = p->shared ? r->cand[i].split : 0;
	return 0;
}

/* The wisdom's key for a shape: the batch rounded down to a power of two. */
void fft_wisdom_key_of(int n, int adjacent, int max_count, const struct fft_opts *o,
                       struct fft_wisdom_key *k)
{
	memset(k, 0, sizeof *k);
	k->n = n;
	k->components = o->components;
	k->adjacent = adjacent;
	k->half = o->half;
	k->io = o->io && !adjacent;
	while ((1 << (k->count_log2 + 1)) <= max_count)
		k->count_log2++;
}

int fft_io_tune_candidates(const struct egl_info *info, const struct fft_axis *a,
                           int threads[FFT_IO_TUNE_MAX])
{
	const struct fft_plan *p = fft_axis_plan(a);
	if (!p->shared || p->bluestein || fft_axis_adjacent(a) || !p->npasses)
		return 0;
	int want[FFT_IO_TUNE_MAX] = {p->threads, 256, 512, info->max_invocations}, nw = 4, nt = 0;
	int rmin = p->m;
	for (int i = 0; i < p->npasses; i++) {
		if (nw < FFT_IO_TUNE_MAX)
			want[nw++] = p->m / p->pass[i].radix;
		rmin = p->pass[i].radix < rmin ? p->pass[i].radix : rmin;
	}
	for (int i = 0; i < nw; i++) {
		int t = want[i], dup = 0;
		for (int j = 0; j < nt; j++)
			dup |= threads[j] == t;
		/* past a butterfly of the smallest radix an invocation, the rest only wait */
		if (!dup && t >= 1 && t <= info->max_invocations && (i == 0 || t <= p->m / rmin) &&
		    (long long)t * FFT_TUNE_MAX_VALUES >= p->m)
			threads[nt++] = t;
	}
	return nt;
}

static void log_choice(const struct log_sink *log, const struct fft_wisdom_key *k,
                       const struct fft_wisdom_choice *c, double ms)
{
	log_sinkf(log, LOG_INFO, "FFT wisdom: n=%d vec%d %s: %s, %d signals x %d invocations "
	          "(%.4f ms)", k->n, k->components, k->adjacent ? "cols" : "rows",
	          fft_technique_name(c->technique), c->signals, c->threads, ms);
}

/* Measures a shape's candidates at once: 0 and the winner put in the wisdom, or -1. */
static int tune_now(struct program_cache *pc, const struct egl_info *info, int n, int adjacent,
                    size_t capacity, int max_count, const struct fft_opts *o,
                    const struct log_sink *log, const struct fft_wisdom_key *k,
                    struct fft_wisdom_choice *best)
{
	struct tune_run r;
	if (run_start(&r, info, n, adjacent, capacity, max_count, o, log))
		return -1;
	for (int i = 0; i < r.nc; i++)
		run_build(&r, pc, info, i);
	struct tune_rounds tr = run_rounds(&r);
	double t_warm = 0;
	while (!tune_rounds_warm(&tr, &t_warm)) {
	}
	for (int i = 0; i < TUNE_ROUNDS; i++)
		tune_rounds_round(&tr, i);
	double ms = 0;
	int rc = run_pick(&r, best, &ms);
	run_free(&r);
	if (!rc) {
		fft_wisdom_put(o->wisdom, k, best, ms);
		log_choice(log, k, best, ms);
	}
	return rc;
}

int fft_axis_create(struct program_cache *pc, const struct egl_info *info, int n,
                    int signals_adjacent, size_t capacity, int max_count,
                    const struct fft_opts *o, const struct log_sink *log,
                    struct fft_axis **out, char err[FFT_ERR_LEN])
{
	struct fft_opts ro;
	if (o->technique == FFT_TECH_BLOCKED && !signals_adjacent) {
		ro = *o; /* blocked is for columns; rows (and Bluestein's work rows) take auto */
		ro.technique = FFT_TECH_AUTO;
		ro.threads = ro.signals = 0;
		o = &ro;
	}
	if (o->technique != FFT_TECH_AUTO || o->threads || o->signals || n < 2 || !fft_is_native(n))
		return fft_axis_build(pc, info, n, signals_adjacent, capacity, max_count, o, log, out,
		                      err);
	struct fft_wisdom_key k;
	fft_wisdom_key_of(n, signals_adjacent, max_count, o, &k);
	struct fft_choice rule;
	fft_plan_rule(n, signals_adjacent, o->components, o->half, info->software,
	              info->max_invocations, info->max_shared_memory, max_count, &rule);
	struct fft_wisdom_choice ch = {rule.technique, rule.threads, rule.signals, rule.split};
	int provisional = 0, io_unmeasured = 0, io_found = 0;
	if (k.io && o->wisdom) { /* the ends' own line, else the plain transform's shape */
		io_found = !fft_wisdom_get(o->wisdom, &k, &ch);
		io_unmeasured = !io_found;
		k.io = 0;
	}
	if (o->wisdom && !io_found && fft_wisdom_get(o->wisdom, &k, &ch)) {
		int mode = fft_wisdom_measure(o->wisdom);
		if (mode == FFT_WISDOM_MEASURE_NOW) {
			if (tune_now(pc, info, n, signals_adjacent, capacity, max_count, o, log, &k, &ch))
				ch = (struct fft_wisdom_choice){rule.technique, rule.threads, rule.signals,
				                                rule.split};
		} else if (mode == FFT_WISDOM_MEASURE_IDLE) {
			struct fft_wisdom_pending p = {.k = k, .capacity = capacity, .max_count = max_count,
			                               .norm_forward = o->norm_forward,
			                               .pad_from = o->pad_from};
			provisional = !fft_wisdom_want(o->wisdom, &p);
		}
	}
	struct fft_opts c = *o;
	c.technique = ch.technique;
	c.threads = ch.threads;
	c.signals = ch.signals;
	c.split = o->split ? o->split : ch.split; /* o->split: asked for (measuring) */
	c.wisdom = NULL;
	int rc = fft_axis_build(pc, info, n, signals_adjacent, capacity, max_count, &c, log, out, err);
	if (rc == FFT_E_PLAN && (c.technique != FFT_TECH_AUTO || c.threads || c.signals || c.split)) {
		/* a choice this device cannot run (a smaller shared memory than where it was
		 * measured): the plan's own */
		c.technique = FFT_TECH_AUTO;
		c.threads = c.signals = 0;
		c.split = o->split;
		rc = fft_axis_build(pc, info, n, signals_adjacent, capacity, max_count, &c, log, out, err);
	}
	if (!rc && provisional)
		fft_axis_set_provisional(*out);
	if (!rc)
		(*out)->io_unmeasured = io_unmeasured;
	return rc;
}

/* ---- measuring queued shapes in idle time ---- */

struct fft_tuner {
	struct program_cache *pc;
	const struct egl_info *info;
	struct fft_wisdom *w;
	struct log_sink log;
	struct fft_wisdom_pending p; /* the shape being measured, while active */
	struct fft_wisdom_key k;
	int active;
	int built, warmed, rounds;   /* candidates built, warm-up done, rounds measured */
	int tried;                   /* candidates run once (a driver may finish a program at its
	                                first dispatch: a step each, not all in the warm-up's) */
	double t_warm;               /* GPU ms of warm-up run so far */
	const char *last;            /* what the last step did (fft_tuner_last) */
	int deferred;                /* steps the candidate being built waited for its programs */
	struct tune_run r;
};

int fft_tuner_create(struct program_cache *pc, const struct egl_info *info, struct fft_wisdom *w,
                     const struct log_sink *log, struct fft_tuner **out)
{
	struct fft_tuner *t = calloc(1, sizeof *t);
	if (!t)
		return FFT_E_NOMEM;
	t->pc = pc;
	t->info = info;
	t->w = w;
	if (log)
		t->log = *log;
	*out = t;
	return 0;
}

void fft_tuner_destroy(struct fft_tuner *t)
{
	if (!t)
		return;
	if (t->active)
		run_free(&t->r);
	free(t);
}

int fft_tuner_step(struct fft_tuner *t)
{
	if (!t || !t->w)
		return 0;
	t->last = "nothing";
	if (!t->active) {
		t->last = "starting a shape";
		struct fft_wisdom_choice c;
		do {
			if (fft_wisdom_next_pending(t->w, &t->p))
				return 0;
		} while (!fft_wisdom_get(t->w, &t->p.k, &c)); /* measured since it was queued */
		struct fft_opts o = {.technique = FFT_TECH_AUTO, .components = t->p.k.components,
		                     .half = t->p.k.half, .norm_forward = t->p.norm_forward,
		                     .pad_from = t->p.pad_from};
		t->k = t->p.k;
		if (run_start(&t->r, t->info, t->p.k.n, t->p.k.adjacent, t->p.capacity, t->p.max_count,
		              &o, &t->log)) {
			log_sinkf(&t->log, LOG_WARN, "FFT wisdom: n=%d: no memory to measure it",
			          t->k.n);
			return fft_wisdom_pending_count(t->w) > 0;
		}
		t->active = 1;
		t->built = t->warmed = t->rounds = t->tried = 0;
		t->t_warm = 0;
		return 1;
	}
	if (t->built < t->r.nc) {
		t->last = "building a candidate";
		/* a program a step, so that a frame arriving meanwhile waits for one compile at
		 * most; a candidate still short of its programs after TUNE_BUILD_STEPS is built whole */
		program_cache_budget(t->pc, t->deferred < TUNE_BUILD_STEPS ? 1 : -1);
		run_build(&t->r, t->pc, t->info, t->built);
		int deferred = program_cache_refused(t->pc);
		program_cache_budget(t->pc, -1);
		if (deferred) {
			t->deferred++;
		} else {
			t->built++;
			t->deferred = 0;
		}
	} else if (t->tried < t->r.nc) {
		t->last = "a candidate's first run";
		if (t->r.ax[t->tried])
			time_axis_once(t->r.ax[t->tried], t->r.adjacent, t->r.t, t->r.buf, t->r.max_count,
			               NULL);
		t->tried++;
	} else if (!t->warmed) {
		t->last = "warming up";
		struct tune_rounds tr = run_rounds(&t->r);
		t->warmed = tune_rounds_warm(&tr, &t->t_warm);
	} else if (t->rounds < TUNE_ROUNDS) {
		t->last = "a round";
		struct tune_rounds tr = run_rounds(&t->r);
		tune_rounds_round(&tr, t->rounds++);
	} else {
		t->last = "picking";
		struct fft_wisdom_choice best;
		double ms = 0;
		if (!run_pick(&t->r, &best, &ms)) {
			fft_wisdom_put(t->w, &t->k, &best, ms);
			log_choice(&t->log, &t->k, &best, ms);
		}
		run_free(&t->r);
		t->active = 0;
		return fft_wisdom_pending_count(t->w) > 0;
	}
	return 1;
}

const char *fft_tuner_last(const struct fft_tuner *t)
{
	return t && t->last ? t->last : "nothing";
}

int fft_tuner_busy(const struct fft_tuner *t)
{
	return t && t->w && (t->active || fft_wisdom_pending_count(t->w) > 0);
}
