/* The CPU engine's context: FFTW's threads on the project's pool, its wisdom, the plans per
 * padded size and the FFT operation; see engine.h. The bloom's frame function is fftconv.c. */
#include "cpu/engine_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/parallel.h"

const char *cpu_strerror(int code)
{
	switch (code) {
	case CPU_OK: return "ok";
	case CPU_E_ARG: return "bad parameter";
	case CPU_E_TOO_LARGE: return "too large for the CPU engine";
	case CPU_E_NOMEM: return "out of memory";
	case CPU_E_UNSUPPORTED: return "not supported by the CPU engine";
	}
	return "unknown error";
}

/* ---- FFTW's parallel loops on par_each ---- */

struct fftw_loop {
	void *(*work)(char *);
	char *jobdata;
	size_t elsize;
};

static int fftw_item(void *ctx, int worker, size_t item)
{
	(void)worker;
	struct fftw_loop *l = ctx;
	l->work(l->jobdata + l->elsize * item);
	return 0;
}

/* fftwf_threads_set_callback's loop: FFTW's njobs pieces as par_each items, so its threads are
 * the process's shared helpers (and fewer where codec threads hold the cores). */
static void fftw_parallel_loop(void *(*work)(char *), char *jobdata, size_t elsize, int njobs,
                               void *data)
{
	(void)data;
	struct fftw_loop l = {work, jobdata, elsize};
	par_each((size_t)njobs, njobs, fftw_item, &l, NULL);
}

static pthread_once_t fftw_once = PTHREAD_ONCE_INIT;
static int fftw_threads_ok;
static int fftw_own_threads; /* cpu_engine_fftw_own_threads: no callback */

void cpu_engine_fftw_own_threads(void)
{
	fftw_own_threads = 1;
}
/* FFTW's planner and its nthreads setting are process-wide: planning is serialised here */
pthread_mutex_t cpu_plan_lock = PTHREAD_MUTEX_INITIALIZER;

static void fftw_setup(void)
{
	fftw_threads_ok = fftwf_init_threads() != 0;
	if (fftw_threads_ok) {
		fftwf_make_planner_thread_safe();
		if (!fftw_own_threads)
			fftwf_threads_set_callback(fftw_parallel_loop, NULL);
	}
}

unsigned cpu_plan_flags(struct cpu_engine *e)
{
	return e->opts.measure == CPU_MEASURE_NOW ? FFTW_MEASURE : FFTW_ESTIMATE;
}

void cpu_plan_begin(struct cpu_engine *e, int threads)
{
	if (threads < 1 || threads > e->threads)
		threads = e->threads;
	pthread_mutex_lock(&cpu_plan_lock);
	fftwf_plan_with_nthreads(fftw_threads_ok ? threads : 1);
	fftwf_set_timelimit(e->opts.measure_limit_s > 0 ? e->opts.measure_limit_s : 1.0);
}

void cpu_plan_end(struct cpu_engine *e)
{
	pthread_mutex_unlock(&cpu_plan_lock);
	(void)e;
}

int cpu_engine_idle(struct cpu_engine *e)
{
	if (e->opts.measure != CPU_MEASURE_IDLE)
		return 0;
	struct cpu_plan *q = NULL;
	for (int i = 0; i < e->nplans; i++)
		if (!e->plans[i].measured && (!q || e->plans[i].last_use < q->last_use))
			q = &e->plans[i];
	if (!q)
		return 0;
	struct cpu_plan m = *q; /* its buffers: FFTW_MEASURE overwrites them between frames */
	m.fwd = m.inv = NULL;
	if (cpu_plan_make(e, &m, FFTW_MEASURE)) {
		q->measured = 1; /* kept as estimated; not tried again */
		return 1;
	}
	pthread_mutex_lock(&cpu_plan_lock);
	fftwf_destroy_plan(q->fwd);
	fftwf_destroy_plan(q->inv);
	pthread_mutex_unlock(&cpu_plan_lock);
	q->fwd = m.fwd, q->inv = m.inv;
	q->measured = 1;
	e->wisdom_dirty = 1;
	log_sinkf(&e->log, LOG_DEBUG, "FFTW measured the %dx%d plan (%d planes in, %d out)", q->pw,
	          q->ph, q->nsrc, q->nout);
	return 1;
}

/* ---- the context ---- */

int cpu_engine_create(const struct cpu_engine_opts *o, const struct log_sink *log,
                      struct cpu_engine **out, char err[CPU_ERR_LEN])
{
	*out = NULL;
	pthread_once(&fftw_once, fftw_setup);
	struct cpu_engine *e = calloc(1, sizeof *e);
	if (!e) {
		snprintf(err, CPU_ERR_LEN, "CPU engine: out of memory");
		return CPU_E_NOMEM;
	}
	if (o)
		e->opts = *o;
	if (!e->opts.pixels_per_thread)
		e->opts.pixels_per_thread = CPU_PIXELS_PER_THREAD;
	else if (e->opts.pixels_per_thread < 0)
		e->opts.pixels_per_thread = 0; /* cpu_frame_threads: all */
	if (log)
		e->log = *log;
	long cores = par_cores();
	e->threads = e->opts.threads > 0 ? e->opts.threads : (int)(cores < 1 ? 1 : cores);
	if (e->threads > PAR_EACH_MAX)
		e->threads = PAR_EACH_MAX;
	if (!e->opts.kernel_cache_bytes)
		e->opts.kernel_cache_bytes = (size_t)512 << 20;
	if (e->opts.max_plans < 1)
		e->opts.max_plans = 8;
	if (e->opts.wisdom_file && *e->opts.wisdom_file) {
		snprintf(e->wisdom, sizeof e->wisdom, "%s", e->opts.wisdom_file);
		pthread_mutex_lock(&cpu_plan_lock);
		int ok = access(e->wisdom, F_OK) || fftwf_import_wisdom_from_filename(e->wisdom);
		pthread_mutex_unlock(&cpu_plan_lock);
		if (!ok)
			log_sinkf(&e->log, LOG_WARN, "FFTW wisdom %s could not be read; planning anew",
			          e->wisdom);
	}
	e->opts.wisdom_file = NULL; /* not owned: the copy in e->wisdom is used */
	snprintf(e->describe, sizeof e->describe, "FFTW %s (single precision), %d thread%s",
	         fftwf_version + (strncmp(fftwf_version, "fftw-", 5) ? 0 : 5), e->threads,
	         e->threads == 1 ? "" : "s");
	*out = e;
	return 0;
}

/* Writes the wisdom through a temporary file renamed over it (a crash leaves the old one). */
static void wisdom_save(struct cpu_engine *e)
{
	if (!e->wisdom[0] || !e->wisdom_dirty)
		return;
	char tmp[sizeof e->wisdom + 32];
	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", e->wisdom, (long)getpid());
	pthread_mutex_lock(&cpu_plan_lock);
	int ok = fftwf_export_wisdom_to_filename(tmp);
	pthread_mutex_unlock(&cpu_plan_lock);
	if (!ok || rename(tmp, e->wisdom)) {
		log_sinkf(&e->log, LOG_WARN, "FFTW wisdom %s could not be written: %s", e->wisdom,
		          strerror(errno));
		unlink(tmp);
		return;
	}
	e->wisdom_dirty = 0;
}

int cpu_engine_plan_text(struct cpu_engine *e, int pw, int ph, char *buf, size_t len)
{
	for (int i = e->nplans - 1; i >= 0; i--) {
		struct cpu_plan *q = &e->plans[i];
		if (q->pw != pw || q->ph != ph)
			continue;
		pthread_mutex_lock(&cpu_plan_lock);
		char *f = fftwf_sprint_plan(q->fwd), *v = fftwf_sprint_plan(q->inv);
		pthread_mutex_unlock(&cpu_plan_lock);
		snprintf(buf, len, "forward (%d planes%s, %d threads) %s\ninverse %s", q->nsrc,
		         q->per_plane ? ", one at a time" : "", q->threads, f ? f : "?", v ? v : "?");
		free(f);
		free(v);
		return 0;
	}
	return -1;
}

void cpu_engine_trim(struct cpu_engine *e)
{
	for (int i = 0; i < e->nplans; i++)
		cpu_plan_free(&e->plans[i]);
	e->nplans = 0;
	for (size_t i = 0; i < e->nspectra; i++)
		fftwf_free(e->spectra[i].spec);
	e->nspectra = 0;
	e->spectra_bytes = 0;
}

void cpu_engine_destroy(struct cpu_engine *e)
{
	if (!e)
		return;
	wisdom_save(e);
	for (int i = 0; i < e->nplans; i++)
		cpu_plan_free(&e->plans[i]);
	for (size_t i = 0; i < e->nspectra; i++)
		fftwf_free(e->spectra[i].spec);
	free(e->spectra);
	for (int i = 0; i < CPU_PRESETS; i++)
		image_free(&e->presets[i].img);
	for (int i = 0; i < CPU_FFT_PLANS; i++)
		if (e->ffts[i].plan) {
			pthread_mutex_lock(&cpu_plan_lock);
			fftwf_destroy_plan(e->ffts[i].plan);
			pthread_mutex_unlock(&cpu_plan_lock);
		}
	free(e);
}

int cpu_engine_threads(const struct cpu_engine *e)
{
	return e->threads;
}

int cpu_frame_threads(long long pixels_per_thread, int min_threads, int threads, int w, int h)
{
	if (threads < 1)
		threads = 1;
	if (pixels_per_thread <= 0 || w < 1 || h < 1)
		return threads;
	long long t = ((long long)w * h + pixels_per_thread - 1) / pixels_per_thread;
	if (t < min_threads)
		t = min_threads;
	return t < 1 ? 1 : t > threads ? threads : (int)t;
}

int cpu_engine_frame_threads(const struct cpu_engine *e, int w, int h)
{
	return cpu_frame_threads(e->opts.pixels_per_thread, e->opts.min_frame_threads, e->threads,
	                         w, h);
}

const char *cpu_engine_describe(const struct cpu_engine *e)
{
	return e->describe;
}

void cpu_engine_stats(const struct cpu_engine *e, struct cpu_cache_stats *st)
{
	*st = e->st;
	st->kernel_entries = e->nspectra;
	st->kernel_bytes = e->spectra_bytes;
	st->plan_entries = (size_t)e->nplans;
}

/* ---- the FFT operation ---- */

/* The kept plan of (width, height, axes, inverse), made on a miss (the least recently used goes). */
static fftwf_plan fft_plan_get(struct cpu_engine *e, int w, int h, int axes, int inverse)
{
	struct cpu_fft_plan *slot = &e->ffts[0];
	e->tick++;
	for (int i = 0; i < CPU_FFT_PLANS; i++) {
		struct cpu_fft_plan *f = &e->ffts[i];
		if (f->plan && f->w == w && f->h == h && f->axes == axes && f->inverse == inverse) {
			f->last_use = e->tick;
			return f->plan;
		}
		if (!f->plan || f->last_use < slot->last_use)
			slot = f;
	}
	/* planned on a buffer of its own (FFTW_MEASURE overwrites it), run on the caller's data
	 * wherever it lies (FFTW_UNALIGNED) */
	size_t n = (size_t)w * h;
	fftwf_complex *tmp = fftwf_malloc(n * sizeof *tmp);
	if (!tmp)
		return NULL;
	int sign = inverse ? FFTW_BACKWARD : FFTW_FORWARD;
	unsigned flags = cpu_plan_flags(e) | FFTW_UNALIGNED;
	cpu_plan_begin(e, e->threads);
	fftwf_plan p;
	if (axes == 3) {
		p = fftwf_plan_dft_2d(h, w, tmp, tmp, sign, flags);
	} else if (axes == 1) {
		int len = w;
		p = fftwf_plan_many_dft(1, &len, h, tmp, NULL, 1, w, tmp, NULL, 1, w, sign, flags);
	} else {
		int len = h;
		p = fftwf_plan_many_dft(1, &len, w, tmp, NULL, w, 1, tmp, NULL, w, 1, sign, flags);
	}
	if (slot->plan)
		fftwf_destroy_plan(slot->plan);
	cpu_plan_end(e);
	fftwf_free(tmp);
	*slot = (struct cpu_fft_plan){p, w, h, axes, inverse, e->tick};
	return p;
}

struct fft_scale {
	float *d;
	size_t n;
	float s;
};

static int fft_scale_item(void *ctx, int worker, size_t item)
{
	(void)worker;
	struct fft_scale *c = ctx;
	size_t a = item * CPU_CHUNK, b = a + CPU_CHUNK < c->n ? a + CPU_CHUNK : c->n;
	for (size_t i = a; i < b; i++)
		c->d[i] *= c->s;
	return 0;
}

int cpu_fft(struct cpu_engine *e, float *data, int width, int height, int axes, int inverse,
            char err[CPU_ERR_LEN])
{
	if (width < 1 || height < 1 || axes < 1 || axes > 3) {
		snprintf(err, CPU_ERR_LEN, "fft: a %dx%d array along axes %d", width, height, axes);
		return CPU_E_ARG;
	}
	size_t n;
	if (width > CPU_MAX_N || height > CPU_MAX_N ||
	    checked_mul_size((size_t)width, (size_t)height, &n) || n > ((size_t)1 << 31)) {
		snprintf(err, CPU_ERR_LEN, "fft: %dx%d is beyond the CPU engine's limits", width, height);
		return CPU_E_TOO_LARGE;
	}
	fftwf_plan p = fft_plan_get(e, width, height, axes, inverse);
	if (!p) {
		snprintf(err, CPU_ERR_LEN, "fft: FFTW could not plan %dx%d", width, height);
		return CPU_E_NOMEM;
	}
	fftwf_execute_dft(p, (fftwf_complex *)data, (fftwf_complex *)data);
	if (inverse) {
		double len = (axes & 1 ? width : 1) * (double)(axes & 2 ? height : 1);
		struct fft_scale c = {data, n * 2, (float)(1.0 / len)};
		par_each((c.n + CPU_CHUNK - 1) / CPU_CHUNK, e->threads, fft_scale_item, &c, NULL);
	}
	return 0;
}
