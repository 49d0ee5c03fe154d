/* fftw_peer: the CPU peer of `fftbloom bench` in the harness's "peers" suite (bench/README.md).
 * FFTW single precision on all cores, FFTW_MEASURE: complex 2D FFTs at fftbloom's FFT sizes, and
 * the bloom as a CPU would do it with the kernel spectrum cached (4 float32 planes padded to
 * fftbloom's sizes from fft_conv_frame_size, batched r2c, multiply, c2r, composite), under the same
 * workload IDs. Median of runs after warm-up, input sets rotated. Result lines
 * (bench/bench_json.h) on stdout, a short table on stderr. */
#include <complex.h>
#include <fftw3.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_json.h"
#include "bench/bench_opts.h"
#include "gles/fft_plan.h"

#define SETS 3
#define MAX_THREADS 256

struct peer_cfg {
	int threads, runs, warmup, quick;
	double max_s; /* timed seconds per workload at most (at least 3 runs) */
	const char *only, *wisdom;
	struct bench_meta meta;
};

/* ---- a fixed pool for the memory-bound loops FFTW does not thread ---- */

struct pool {
	int n;
	pthread_t th[MAX_THREADS];
	pthread_barrier_t start, done;
	void (*fn)(void *arg, int i, int n);
	void *arg;
	int quit;
};

struct worker {
	struct pool *p;
	int i;
};
static struct worker g_workers[MAX_THREADS];

static void *pool_main(void *arg)
{
	struct worker *w = arg;
	struct pool *p = w->p;
	for (;;) {
		pthread_barrier_wait(&p->start);
		if (p->quit)
			return NULL;
		p->fn(p->arg, w->i, p->n);
		pthread_barrier_wait(&p->done);
	}
}

static int pool_create(struct pool *p, int n)
{
	memset(p, 0, sizeof *p);
	p->n = n;
	pthread_barrier_init(&p->start, NULL, (unsigned)n);
	pthread_barrier_init(&p->done, NULL, (unsigned)n);
	for (int i = 1; i < n; i++) {
		g_workers[i].p = p;
		g_workers[i].i = i;
		if (pthread_create(&p->th[i], NULL, pool_main, &g_workers[i]))
			return -1;
	}
	return 0;
}

/* Runs fn(arg, i, n) for i in 0..n-1, one per thread, the caller taking i = 0. */
static void pool_run(struct pool *p, void (*fn)(void *, int, int), void *arg)
{
	p->fn = fn;
	p->arg = arg;
	pthread_barrier_wait(&p->start);
	fn(arg, 0, p->n);
	pthread_barrier_wait(&p->done);
}

static void pool_destroy(struct pool *p)
{
	p->quit = 1;
	pthread_barrier_wait(&p->start);
	for (int i = 1; i < p->n; i++)
		pthread_join(p->th[i], NULL);
	pthread_barrier_destroy(&p->start);
	pthread_barrier_destroy(&p->done);
}

#include "bench/bench_util.h"

/* ---- helpers ---- */

static unsigned long long g_rng = 88172645463325252ull;
static float frand(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return (float)((g_rng >> 11) * (1.0 / 9007199254740992.0));
}


/* ---- complex 2D FFT ---- */

static int bench_fft(const struct peer_cfg *c, int h, int w)
{
	size_t n = (size_t)h * (size_t)w;
	fftwf_complex *in[SETS], *out = fftwf_alloc_complex(n), *back = fftwf_alloc_complex(n);
	int ok = out && back;
	for (int s = 0; s < SETS; s++)
		ok &= (in[s] = fftwf_alloc_complex(n)) != NULL;
	if (!ok) {
		fprintf(stderr, "fft %dx%d: out of memory\n", h, w);
		return -1;
	}
	double t0 = bench_now_s();
	fftwf_plan fwd = fftwf_plan_dft_2d(h, w, in[0], out, FFTW_FORWARD, FFTW_MEASURE);
	fftwf_plan inv = fftwf_plan_dft_2d(h, w, out, back, FFTW_BACKWARD, FFTW_MEASURE);
	double plan_s = bench_now_s() - t0;
	if (!fwd || !inv) {
		fprintf(stderr, "fft %dx%d: no plan\n", h, w);
		return -1;
	}
	for (int s = 0; s < SETS; s++)
		for (size_t i = 0; i < n; i++)
			in[s][i] = (frand() * 2 - 1) + I * (frand() * 2 - 1);
	double *tf = malloc((size_t)c->runs * sizeof *tf), *ti = malloc((size_t)c->runs * sizeof *ti);
	int done = 0;
	double t_start = bench_now_s();
	for (int r = 0; r < c->warmup + c->runs; r++) {
		double a = bench_now_s();
		fftwf_execute_dft(fwd, in[r % SETS], out);
		double b = bench_now_s();
		fftwf_execute(inv);
		double e = bench_now_s();
		if (r < c->warmup)
			continue;
		tf[done] = (b - a) * 1e3;
		ti[done] = (e - b) * 1e3;
		done++;
		if (done >= 3 && bench_now_s() - t_start > c->max_s)
			break;
	}
	double mf = bench_median(tf, done), mi = bench_median(ti, done);
	char id[64], size[32];
	snprintf(id, sizeof id, "fft.2d.%dx%d.fwd", h, w);
	snprintf(size, sizeof size, "%dx%d", h, w);
	struct bench_line l;
	bench_line_begin(&l, stdout, &c->meta, id, "fftw", "measure");
	bench_metric(&l, "ms", mf);
	bench_metric(&l, "gb_s", 2.0 * 8.0 * (double)n / (mf * 1e-3) / 1e9);
	bench_metric(&l, "inverse_ms", mi);
	bench_detail_str(&l, "size", size);
	bench_detail_num(&l, "threads", c->threads);
	bench_detail_num(&l, "plan_s", plan_s);
	bench_detail_num(&l, "runs", done);
	bench_line_end(&l, &c->meta);
	fprintf(stderr, "fft   %5dx%-5d  forward %9.3f ms  inverse %9.3f ms  (plan %.1f s, %d runs)\n",
	        h, w, mf, mi, plan_s, done);
	fftwf_destroy_plan(fwd);
	fftwf_destroy_plan(inv);
	for (int s = 0; s < SETS; s++)
		fftwf_free(in[s]);
	fftwf_free(out);
	fftwf_free(back);
	free(tf);
	free(ti);
	return 0;
}

/* ---- bloom: 4 planes, padded, r2c, multiply by a cached spectrum, c2r, composite ---- */

struct bloom_job {
	int w, h, pw, ph, hc; /* image, padded; hc = pw/2+1 complex columns */
	const float *src;     /* 4 planes of w x h */
	float *pad;           /* 4 planes of pw x ph; padding stays zero */
	fftwf_complex *spec;  /* 4 planes of hc x ph */
	const fftwf_complex *k;
	const float *conv; /* c2r result, 4 planes of pw x ph */
	float *out;        /* 4 planes of w x h: src + conv */
};

/* rows [i*R/n, (i+1)*R/n) of R rows */
#define SPLIT(R, i, n, lo, hi)                                                               \
	size_t lo = (size_t)(R) * (size_t)(i) / (size_t)(n), hi = (size_t)(R) * (size_t)((i) + 1) / (size_t)(n)

/* Where row r of the 4 w x h planes (plane r / h, row r % h) starts in the pw x ph planes:
 * the image sits at the top left of its padded plane. */
static size_t padded_row(const struct bloom_job *j, size_t r)
{
	size_t ch = r / (size_t)j->h, y = r % (size_t)j->h;
	return (ch * (size_t)j->ph + y) * (size_t)j->pw;
}

static void do_pad(void *arg, int i, int n)
{
	const struct bloom_job *j = arg;
	SPLIT(4 * j->h, i, n, lo, hi);
	for (size_t r = lo; r < hi; r++)
		memcpy(j->pad + padded_row(j, r), j->src + r * (size_t)j->w,
		       (size_t)j->w * sizeof(float));
}

static void do_multiply(void *arg, int i, int n)
{
	const struct bloom_job *j = arg;
	SPLIT(4 * j->ph, i, n, lo, hi);
	size_t a = lo * (size_t)j->hc, b = hi * (size_t)j->hc;
	fftwf_complex *restrict s = j->spec;
	const fftwf_complex *restrict k = j->k;
	for (size_t e = a; e < b; e++)
		s[e] *= k[e];
}

static void do_composite(void *arg, int i, int n)
{
	const struct bloom_job *j = arg;
	SPLIT(4 * j->h, i, n, lo, hi);
	for (size_t r = lo; r < hi; r++) {
		const float *restrict cv = j->conv + padded_row(j, r);
		const float *restrict s = j->src + r * (size_t)j->w;
		float *restrict o = j->out + r * (size_t)j->w;
		for (int x = 0; x < j->w; x++)
			o[x] = s[x] + cv[x];
	}
}

#define NSTAGE 5
static const char *stage_names[NSTAGE] = {"pad", "r2c", "multiply", "c2r", "composite"};

static int bench_bloom(const struct peer_cfg *c, struct pool *pool, const char *label, int w, int h,
                       int kw, int kh, int padded)
{
	if (!bench_list_matches(c->only, label))
		return 0;
	struct bloom_job j;
	memset(&j, 0, sizeof j);
	j.w = w;
	j.h = h;
	j.pw = w, j.ph = h;
	if (padded)
		fft_conv_frame_size(w, h, kw, kh, kw / 2, kh / 2, &j.pw, &j.ph);
	j.hc = j.pw / 2 + 1;
	size_t img = (size_t)w * h * 4, real = (size_t)j.pw * j.ph * 4, cplx = (size_t)j.hc * j.ph * 4;
	float *src[SETS], *pad = fftwf_alloc_real(real), *conv = fftwf_alloc_real(real);
	float *out = fftwf_alloc_real(img);
	fftwf_complex *spec = fftwf_alloc_complex(cplx), *k = fftwf_alloc_complex(cplx);
	int ok = pad && conv && out && spec && k;
	for (int s = 0; s < SETS; s++)
		ok &= (src[s] = fftwf_alloc_real(img)) != NULL;
	if (!ok) {
		fprintf(stderr, "bloom %s: out of memory\n", label);
		return -1;
	}
	int dims[2] = {j.ph, j.pw};
	double t0 = bench_now_s();
	fftwf_plan r2c = fftwf_plan_many_dft_r2c(2, dims, 4, pad, NULL, 1, j.pw * j.ph, spec, NULL, 1,
	                                         j.hc * j.ph, FFTW_MEASURE);
	fftwf_plan c2r = fftwf_plan_many_dft_c2r(2, dims, 4, spec, NULL, 1, j.hc * j.ph, conv, NULL, 1,
	                                         j.pw * j.ph, FFTW_MEASURE);
	double plan_s = bench_now_s() - t0;
	if (!r2c || !c2r) {
		fprintf(stderr, "bloom %s: no plan\n", label);
		return -1;
	}
	/* planning scribbled on the arrays: zero the padding, fill the frames and the kernel spectrum
	 * (a kernel's padded r2c, scaled by 1/(pw*ph) so the c2r needs no normalisation) */
	memset(pad, 0, real * sizeof *pad);
	for (int s = 0; s < SETS; s++)
		for (size_t i = 0; i < img; i++)
			src[s][i] = frand();
	for (int ch = 0; ch < 4; ch++)
		for (int y = 0; y < kh; y++)
			for (int x = 0; x < kw; x++)
				pad[((size_t)ch * j.ph + y) * j.pw + x] = frand() / ((float)kw * kh);
	fftwf_execute(r2c);
	float scale = 1.0f / ((float)j.pw * (float)j.ph);
	for (size_t i = 0; i < cplx; i++)
		k[i] = spec[i] * scale;
	memset(pad, 0, real * sizeof *pad);
	j.pad = pad;
	j.spec = spec;
	j.k = k;
	j.conv = conv;
	j.out = out;

	double *t[NSTAGE + 1];
	for (int s = 0; s <= NSTAGE; s++)
		t[s] = malloc((size_t)c->runs * sizeof *t[s]);
	int done = 0;
	double t_start = bench_now_s();
	for (int r = 0; r < c->warmup + c->runs; r++) {
		double m[NSTAGE + 1];
		j.src = src[r % SETS];
		m[0] = bench_now_s();
		pool_run(pool, do_pad, &j);
		m[1] = bench_now_s();
		fftwf_execute(r2c);
		m[2] = bench_now_s();
		pool_run(pool, do_multiply, &j);
		m[3] = bench_now_s();
		fftwf_execute(c2r);
		m[4] = bench_now_s();
		pool_run(pool, do_composite, &j);
		m[5] = bench_now_s();
		if (r < c->warmup)
			continue;
		for (int s = 0; s < NSTAGE; s++)
			t[s][done] = (m[s + 1] - m[s]) * 1e3;
		t[NSTAGE][done] = (m[NSTAGE] - m[0]) * 1e3;
		done++;
		if (done >= 3 && bench_now_s() - t_start > c->max_s)
			break;
	}
	double md[NSTAGE + 1];
	for (int s = 0; s <= NSTAGE; s++)
		md[s] = bench_median(t[s], done);
	char image[32], kernel[32], padsize[32];
	snprintf(image, sizeof image, "%dx%d", w, h);
	snprintf(kernel, sizeof kernel, "%dx%d", kw, kh);
	snprintf(padsize, sizeof padsize, "%dx%d", j.pw, j.ph);
	struct bench_line l;
	bench_line_begin(&l, stdout, &c->meta, label, "fftw", "measure");
	bench_metric(&l, "ms", md[NSTAGE]);
	bench_metric(&l, "fft_ms", md[1] + md[2] + md[3]);
	bench_detail_str(&l, "image", image);
	bench_detail_str(&l, "kernel", kernel);
	bench_detail_str(&l, "padded", padsize);
	bench_detail_num(&l, "channels", 4);
	bench_detail_num(&l, "threads", c->threads);
	bench_detail_num(&l, "plan_s", plan_s);
	bench_detail_num(&l, "runs", done);
	bench_detail_open(&l, "stages_ms");
	for (int s = 0; s < NSTAGE; s++)
		bench_detail_num(&l, stage_names[s], md[s]);
	bench_detail_close(&l);
	bench_line_end(&l, &c->meta);
	fprintf(stderr, "%-24s %5dx%-5d k %4dx%-4d -> %5dx%-5d  total %9.3f ms  (pad %.2f, r2c "
	        "%.2f, mul %.2f, c2r %.2f, composite %.2f; %d runs)\n",
	        label, w, h, kw, kh, j.pw, j.ph, md[NSTAGE], md[0], md[1], md[2], md[3], md[4], done);
	for (int s = 0; s <= NSTAGE; s++)
		free(t[s]);
	fftwf_destroy_plan(r2c);
	fftwf_destroy_plan(c2r);
	for (int s = 0; s < SETS; s++)
		fftwf_free(src[s]);
	fftwf_free(pad);
	fftwf_free(conv);
	fftwf_free(out);
	fftwf_free(spec);
	fftwf_free(k);
	return 0;
}

struct opts {
	int quick, threads, runs, warmup;
	double max_s;
	char only[OPT_STR_MAX], wisdom[OPT_STR_MAX], suite[OPT_STR_MAX], machine[OPT_STR_MAX];
};

#define O(f) offsetof(struct opts, f)
static const struct opt_def opt_table[] = {
	{"quick", OPT_BOOL, 0, 1, "false", NULL, "the small sizes of `fftbloom bench --quick`", NULL,
	 O(quick)},
	{"threads", OPT_INT, 0, MAX_THREADS, "0", NULL, "FFTW's threads; 0: all cores", NULL,
	 O(threads)},
	{"runs", OPT_INT, 3, 100000, "30", NULL, "timed runs a workload at most", NULL, O(runs)},
	{"warmup", OPT_INT, 0, 1000, "3", NULL, "untimed runs first", NULL, O(warmup)},
	{"max-seconds", OPT_DOUBLE, 1e-3, 86400, "10", NULL,
	 "timed seconds a workload at most (at least 3 runs)", NULL, O(max_s)},
	{"only", OPT_STRING, 0, 0, "", NULL,
	 "workload IDs, prefixes or patterns, comma-separated; empty: all", NULL, O(only)},
	{"wisdom", OPT_STRING, 0, 0, "", NULL, "read and update FFTW wisdom in this file", NULL,
	 O(wisdom)},
	{"suite", OPT_STRING, 0, 0, "peers", NULL, "the lines' suite", NULL, O(suite)},
	{"machine", OPT_STRING, 0, 0, "", NULL, "the lines' machine; empty: from the CPU's name",
	 NULL, O(machine)},
};
#undef O

static const char usage[] =
	"usage: fftw_peer [options]\n"
	"FFTW single precision, FFTW_MEASURE, all cores unless --threads: the fft and bloom\n"
	"workloads as result lines.\n";

int main(int argc, char **argv)
{
	static struct opts o;
	char **pos;
	int npos;
	int prc = bench_opts_parse("fftw_peer", usage, opt_table,
	                           sizeof opt_table / sizeof opt_table[0], &o, sizeof o, NULL, NULL,
	                           NULL, argc, argv, &pos, &npos);
	if (prc)
		return prc == 1 ? 0 : prc;
	free(pos);
	if (npos) {
		fprintf(stderr, "fftw_peer: takes no arguments besides options (see --help)\n");
		return 2;
	}
	struct peer_cfg c = {.runs = o.runs, .warmup = o.warmup, .max_s = o.max_s, .quick = o.quick,
	                     .only = o.only, .wisdom = o.wisdom[0] ? o.wisdom : NULL};
	c.threads = o.threads ? o.threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (c.threads > MAX_THREADS)
		c.threads = MAX_THREADS;
	const char *suite = o.suite, *machine = o.machine[0] ? o.machine : NULL;
	if (!fftwf_init_threads()) {
		fprintf(stderr, "fftw_peer: fftwf_init_threads failed\n");
		return 1;
	}
	fftwf_plan_with_nthreads(c.threads);
	if (c.wisdom && !fftwf_import_wisdom_from_filename(c.wisdom))
		fprintf(stderr, "fftw_peer: no wisdom read from %s (planning from scratch)\n", c.wisdom);
	struct pool pool;
	if (pool_create(&pool, c.threads)) {
		fprintf(stderr, "fftw_peer: cannot start threads\n");
		return 1;
	}
	char cpu[200], gpu[256], driver[64];
	bench_cpu_name(cpu, sizeof cpu);
	snprintf(gpu, sizeof gpu, "CPU: %s (%d threads)", cpu, c.threads);
	snprintf(driver, sizeof driver, "%s", fftwf_version);
	bench_meta_init(&c.meta, suite, gpu, driver, "fftw_peer", argc - 1, argv + 1);
	if (machine)
		snprintf(c.meta.machine, sizeof c.meta.machine, "%.63s", machine);
	fprintf(stderr, "FFTW %s, %d threads, %s\n", fftwf_version, c.threads, cpu);

	static const int full[][2] = {{1024, 1024}, {1080, 1920}, {2048, 2048}, {4096, 4096}, {1350, 2187}};
	static const int quick[][2] = {{256, 256}, {270, 480}, {512, 512}};
	const int (*sizes)[2] = c.quick ? quick : full;
	int nsizes = c.quick ? 3 : 5, rc = 0;
	for (int i = 0; i < nsizes; i++) {
		char id[64];
		snprintf(id, sizeof id, "fft.2d.%dx%d.fwd", sizes[i][0], sizes[i][1]);
		if (bench_list_matches(c.only, id))
			rc |= bench_fft(&c, sizes[i][0], sizes[i][1]);
	}
	if (c.quick) {
		rc |= bench_bloom(&c, &pool, "bloom.270p.k64.fp32", 480, 270, 64, 64, 1);
	} else {
		rc |= bench_bloom(&c, &pool, "bloom.1080p.k256.fp32", 1920, 1080, 256, 256, 1);
		rc |= bench_bloom(&c, &pool, "bloom.1080p.full.fp32", 1920, 1080, 1920, 1080, 1);
		rc |= bench_bloom(&c, &pool, "bloom.2160p.k512.fp32", 3840, 2160, 512, 512, 1);
		/* circular, unpadded: the frame sizes peer_torch.py also times */
		rc |= bench_bloom(&c, &pool, "bloom.1080p.frame.fp32", 1920, 1080, 256, 256, 0);
		rc |= bench_bloom(&c, &pool, "bloom.2160p.frame.fp32", 3840, 2160, 512, 512, 0);
	}
	if (c.wisdom && !fftwf_export_wisdom_to_filename(c.wisdom))
		fprintf(stderr, "fftw_peer: could not write wisdom to %s\n", c.wisdom);
	pool_destroy(&pool);
	fftwf_cleanup_threads();
	return rc ? 1 : 0;
}
