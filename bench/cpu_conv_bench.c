/* The CPU engine's conv2d and conv2d_transpose (cpu/conv.h) against a plain OpenBLAS peer on
 * the conv suite's shapes (bench/conv_bench.sh; --quick scales them for a small machine): the
 * textbook im2col of a whole image then one sgemm (transpose: one sgemm then Caffe's col2im), on
 * one thread through the same serial OpenBLAS. The engine runs on 1 thread and on --threads.
 * One result line (bench/bench_json.h) per workload and implementation; each line's detail has
 * the relative L2 difference from the peer. usage: cpu_conv_bench [--quick] [--runs N] ... */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "bench/bench_json.h"
#include "bench/bench_opts.h"
#include "core/clock.h"
#include "core/parallel.h"
#include "cpu/conv.h"

struct opts {
	int runs, threads, quick;
	char only[OPT_STR_MAX], machine[OPT_STR_MAX];
};

#define O(f) offsetof(struct opts, f)
static const struct opt_def opt_table[] = {
	{"runs", OPT_INT, 1, 1000, "5", NULL, "timed runs of each implementation (after one warm-up)",
	 NULL, O(runs)},
	{"threads", OPT_INT, 0, PAR_MAX_THREADS, "0", NULL,
	 "the engine's threads in its second line; 0: the cores (par_cores)", NULL, O(threads)},
	{"quick", OPT_BOOL, 0, 1, "0", NULL, "the shapes scaled down (IDs follow the shapes)", NULL,
	 O(quick)},
	{"only", OPT_STRING, 0, 0, "", NULL, "workload IDs or prefixes (bench_list_matches)", NULL,
	 O(only)},
	{"machine", OPT_STRING, 0, 0, "", NULL, "the lines' machine; empty: from the CPU's name",
	 NULL, O(machine)},
};
#undef O

static const char usage[] =
	"usage: cpu_conv_bench [options]\n"
	"The CPU engine's conv2d and conv2d_transpose against plain im2col/col2im over OpenBLAS.\n";

struct work {
	char id[64];
	int transpose;
	struct cpu_conv_geom g;
};

/* ---- the peer: the textbook way, one (batch, group) at a time, whole images ---- */

/* One group of one image: xs its first input plane, ws its weights, bs its bias (NULL: none),
 * ys its first output plane. */
static void peer_conv2d(const struct cpu_conv_geom *g, const float *xs, const float *ws,
                        const float *bs, float *ys, float *col)
{
	int cpi = g->in_c / g->groups, cpo = g->out_c / g->groups, K = cpi * g->k_h * g->k_w;
	int P = g->out_h * g->out_w;
	size_t r = 0;
	for (int c = 0; c < cpi; c++)
		for (int j = 0; j < g->k_h; j++)
			for (int i = 0; i < g->k_w; i++, r++)
				for (int oy = 0; oy < g->out_h; oy++)
					for (int ox = 0; ox < g->out_w; ox++) {
						int iy = oy * g->stride_h - g->pad_h + j * g->dil_h;
						int ix = ox * g->stride_w - g->pad_w + i * g->dil_w;
						col[r * P + (size_t)oy * g->out_w + ox] =
							iy >= 0 && iy < g->in_h && ix >= 0 && ix < g->in_w
								? xs[((size_t)c * g->in_h + iy) * g->in_w + ix] : 0.0f;
					}
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, cpo, P, K, 1.0f, ws, K, col, P, 0.0f,
	            ys, P);
	for (int c = 0; bs && c < cpo; c++)
		for (int p = 0; p < P; p++)
			ys[(size_t)c * P + p] += bs[c];
}

static void peer_transpose(const struct cpu_conv_geom *g, const float *xs, const float *ws,
                           const float *bs, float *ys, float *col)
{
	int cpi = g->in_c / g->groups, cpo = g->out_c / g->groups, kk = g->k_h * g->k_w;
	int P = g->out_h * g->out_w, HW = g->in_h * g->in_w;
	cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, cpo * kk, HW, cpi, 1.0f, ws, cpo * kk,
	            xs, HW, 0.0f, col, HW);
	for (int c = 0; c < cpo; c++)
		for (int p = 0; p < P; p++)
			ys[(size_t)c * P + p] = bs ? bs[c] : 0.0f;
	size_t r = 0;
	for (int c = 0; c < cpo; c++)
		for (int j = 0; j < g->k_h; j++)
			for (int i = 0; i < g->k_w; i++, r++)
				for (int iy = 0; iy < g->in_h; iy++)
					for (int ix = 0; ix < g->in_w; ix++) {
						int oy = iy * g->stride_h - g->pad_h + j * g->dil_h;
						int ox = ix * g->stride_w - g->pad_w + i * g->dil_w;
						if (oy >= 0 && oy < g->out_h && ox >= 0 && ox < g->out_w)
							ys[(size_t)c * P + (size_t)oy * g->out_w + ox] +=
								col[r * HW + (size_t)iy * g->in_w + ix];
					}
}

/* The peer: each (image, group) in turn, whole images. */
static void peer(const struct cpu_conv_geom *g, int transpose, const float *x, const float *w,
                 const float *b, float *y, float *col)
{
	int cpi = g->in_c / g->groups, cpo = g->out_c / g->groups;
	size_t HW = (size_t)g->in_h * g->in_w, P = (size_t)g->out_h * g->out_w;
	size_t wg = (size_t)cpi * cpo * g->k_h * g->k_w; /* a group's weights, either layout */
	for (int n = 0; n < g->batch; n++)
		for (int gr = 0; gr < g->groups; gr++)
			(transpose ? peer_transpose : peer_conv2d)(
				g, x + ((size_t)n * g->in_c + (size_t)gr * cpi) * HW, w + (size_t)gr * wg,
				b ? b + gr * cpo : NULL, y + ((size_t)n * g->out_c + (size_t)gr * cpo) * P, col);
}

/* ---- the suite ---- */

static struct work conv(const char *id, int b, int ci, int co, int h, int w, int k, int pad)
{
	struct work t = {.transpose = 0};
	snprintf(t.id, sizeof t.id, "%s", id);
	t.g = (struct cpu_conv_geom){.batch = b, .in_c = ci, .in_h = h, .in_w = w, .out_c = co,
	                             .groups = 1, .k_h = k, .k_w = k, .stride_h = 1, .stride_w = 1,
	                             .dil_h = 1, .dil_w = 1, .pad_h = pad, .pad_w = pad};
	t.g.out_h = h + 2 * pad - k + 1, t.g.out_w = w + 2 * pad - k + 1;
	return t;
}

static struct work deconv(const char *id, int ci, int co, int h, int k, int pad, int out_pad)
{
	struct work t = conv(id, 1, ci, co, h, h, k, pad);
	t.transpose = 1;
	t.g.stride_h = t.g.stride_w = 2;
	t.g.out_h = t.g.out_w = (h - 1) * 2 - 2 * pad + k + out_pad;
	return t;
}

static double median(double *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
			double t = v[j];
			v[j] = v[j - 1], v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double rel_l2(const float *a, const float *b, size_t n)
{
	double num = 0, den = 0;
	for (size_t i = 0; i < n; i++) {
		double d = (double)a[i] - b[i];
		num += d * d, den += (double)b[i] * b[i];
	}
	return sqrt(num / den);
}

struct bufs {
	float *x, *w, *b, *y, *ref, *col;
	size_t ny;
};

static double cpu_ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* impl 0: the peer; 1: the engine. The median ms of runs after one warm-up (-1 on an error),
 * and in *cpu the median of the process's CPU ms a run (a figure that a loaded machine's other
 * processes change less than the wall's). */
static double time_impl(const struct work *t, struct bufs *B, int impl, int threads, int runs,
                        double *cpu)
{
	struct cpu_conv_geom g = t->g;
	g.threads = threads;
	double *ms = malloc(2 * (size_t)runs * sizeof *ms);
	char err[CPU_CONV_ERR_LEN];
	if (!ms)
		return -1;
	for (int r = -1; r < runs; r++) {
		double t0 = clock_ms(), c0 = cpu_ms_now();
		int rc = 0;
		if (!impl)
			peer(&g, t->transpose, B->x, B->w, B->b, B->ref, B->col);
		else
			rc = (t->transpose ? cpu_conv2d_transpose_geom : cpu_conv2d_geom)(&g, B->x, B->w, B->b, B->y, err);
		if (rc) {
			fprintf(stderr, "cpu_conv_bench: %s: %s\n", t->id, err);
			free(ms);
			return -1;
		}
		if (r >= 0)
			ms[r] = clock_ms() - t0, ms[runs + r] = cpu_ms_now() - c0;
	}
	*cpu = median(ms + runs, runs);
	double m = median(ms, runs);
	free(ms);
	return m;
}

static int run_work(const struct work *t, const struct opts *o, const struct bench_meta *meta)
{
	const struct cpu_conv_geom *g = &t->g;
	int cpo = g->out_c / g->groups, cpi = g->in_c / g->groups, kk = g->k_h * g->k_w;
	size_t nx = (size_t)g->batch * g->in_c * g->in_h * g->in_w;
	size_t nw = (size_t)g->in_c * cpo * kk;
	size_t ny = (size_t)g->batch * g->out_c * g->out_h * g->out_w;
	size_t ncol = t->transpose ? (size_t)cpo * kk * g->in_h * g->in_w
	                           : (size_t)cpi * kk * g->out_h * g->out_w;
	/* multiply-adds: each output's taps for conv2d, each input's patch for the transpose */
	double flop = 2.0 * (t->transpose ? (double)nx * cpo * kk : (double)ny * cpi * kk);
	struct bufs B = {malloc(nx * 4), malloc(nw * 4), malloc((size_t)g->out_c * 4),
	                 malloc(ny * 4), malloc(ny * 4), malloc(ncol * 4), ny};
	if (!B.x || !B.w || !B.b || !B.y || !B.ref || !B.col) {
		fprintf(stderr, "cpu_conv_bench: %s: no memory\n", t->id);
		return 1;
	}
	unsigned s = 1;
	float *fill[] = {B.x, B.w, B.b};
	size_t nfill[] = {nx, nw, (size_t)g->out_c};
	for (int k = 0; k < 3; k++)
		for (size_t i = 0; i < nfill[k]; i++) {
			s = s * 1664525u + 1013904223u;
			fill[k][i] = (float)((s >> 8) * (1.0 / 16777216.0) * 2 - 1);
		}
	int threads = o->threads ? o->threads : (int)par_cores();
	if (threads > PAR_MAX_THREADS)
		threads = PAR_MAX_THREADS;
	struct { const char *impl, *variant; int which, threads; } v[] = {
		{"openblas-im2col", "1thread", 0, 1},
		{"fftbloom-cpu", "1thread", 1, 1},
		{"fftbloom-cpu", "threads", 1, threads},
	};
	int rc = 0;
	for (int k = 0; k < 3; k++) {
		double cpu_ms, ms = time_impl(t, &B, v[k].which, v[k].threads, o->runs, &cpu_ms);
		if (ms < 0) {
			rc = 1;
			break;
		}
		struct bench_line l;
		bench_line_begin(&l, stdout, meta, t->id, v[k].impl, v[k].variant);
		bench_metric(&l, "ms", ms);
		bench_metric(&l, "gflops", flop / (ms * 1e6));
		bench_metric(&l, "cpu_ms", cpu_ms);
		bench_detail_num(&l, "threads", v[k].threads);
		bench_detail_num(&l, "runs", o->runs);
		bench_detail_str(&l, "op", t->transpose ? "conv2d_transpose" : "conv2d");
		if (v[k].which)
			bench_detail_num(&l, "rel_l2_vs_peer", rel_l2(B.y, B.ref, ny));
		bench_line_end(&l, meta);
		fprintf(stderr, "%-32s %-16s %-8s %9.2f ms (CPU %9.2f ms) %7.2f GFLOP/s\n", t->id,
		        v[k].impl, v[k].variant, ms, cpu_ms, flop / (ms * 1e6));
	}
	free(B.x), free(B.w), free(B.b), free(B.y), free(B.ref), free(B.col);
	return rc;
}

int main(int argc, char **argv)
{
	static struct opts o;
	char **pos;
	int npos;
	int rc = bench_opts_parse("cpu_conv_bench", usage, opt_table,
	                          sizeof opt_table / sizeof opt_table[0], &o, sizeof o, NULL, NULL,
	                          NULL, argc, argv, &pos, &npos);
	if (rc)
		return rc == 1 ? 0 : rc;
	free(pos);
	if (!cpu_conv_blas_serial())
		fprintf(stderr, "cpu_conv_bench: OpenBLAS is not its serial build\n");
	char hint[256];
	if (cpu_conv_blas_hint(hint, sizeof hint))
		fprintf(stderr, "cpu_conv_bench: %s\n", hint);
	char cpu[200], gpu[256], driver[BENCH_META_STR];
	bench_cpu_name(cpu, sizeof cpu);
	snprintf(gpu, sizeof gpu, "CPU: %s (%ld cores)", cpu, par_cores());
	snprintf(driver, sizeof driver, "%s", openblas_get_config());
	struct bench_meta meta;
	bench_meta_init(&meta, "conv", gpu, driver, "cpu_conv_bench", argc - 1, argv + 1);
	if (o.machine[0])
		snprintf(meta.machine, sizeof meta.machine, "%.63s", o.machine);
	/* the conv suite's shapes (bench/conv_bench.sh); the images as (4, 1, H, W) batches */
	struct work full[] = {
		conv("conv.conv2d_b16_c128_k3_128", 16, 128, 128, 128, 128, 3, 1),
		conv("conv.image_k5_1080p", 4, 1, 1, 1080, 1920, 5, 2),
		conv("conv.image_k15_1080p", 4, 1, 1, 1080, 1920, 15, 7),
		deconv("conv.deconv_c64to32_k4s2_256", 64, 32, 256, 4, 1, 0),
		deconv("conv.deconv_c64to32_k3s2_512", 64, 32, 512, 3, 1, 1),
	};
	struct work quick[] = {
		conv("conv.conv2d_b2_c128_k3_128", 2, 128, 128, 128, 128, 3, 1),
		conv("conv.image_k5_540p", 4, 1, 1, 540, 960, 5, 2),
		conv("conv.image_k15_540p", 4, 1, 1, 540, 960, 15, 7),
		deconv("conv.deconv_c64to32_k4s2_128", 64, 32, 128, 4, 1, 0),
		deconv("conv.deconv_c64to32_k3s2_256", 64, 32, 256, 3, 1, 1),
	};
	struct work *ws = o.quick ? quick : full;
	for (int i = 0; i < 5; i++)
		if (bench_list_matches(o.only, ws[i].id))
			rc |= run_work(&ws[i], &o, &meta);
	return rc;
}
