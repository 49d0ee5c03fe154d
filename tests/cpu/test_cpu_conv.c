/* The CPU engine's conv2d and conv2d_transpose (cpu/conv.h) against references written here in
 * double precision that gather each output element from its taps (the engine runs im2col/col2im
 * over OpenBLAS): worked examples exactly; edge shapes (1x1, stride above the kernel, padding
 * above the kernel, odd sizes, batch 1 and 3, planes 1 and 17, groups, dilation, bias on and
 * off, blocks split mid-row) and random ones, each element within the float32 bound
 * (spatial_plan_bound) and the relative L2 error within 1e-5; the same bits on 1, 2 and 8
 * threads; the serial OpenBLAS; refused shapes; and the GPU engine (llvmpipe here) on a few
 * shapes, within the two engines' bounds. Fresh random data, outputs pre-filled with NaN. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/conv.h"
#include "gles/deconv.h"
#include "gles/spatial.h"
#include "gles/spatial_plan.h"
#include "tests/testutil.h"

/* One case: sizes, kernel, stride, padding, dilation, groups, output_padding (transpose), bias. */
struct tc {
	int b, ci, h, w, co, kh, kw, sh, sw, ph, pw, dh, dw, g, oph, opw, bias;
};

/* A case's tensors and reference. */
struct run {
	struct cpu_conv_geom geo;
	size_t nx, nw, ny;
	float *x, *wt, *bias, *y;
	double *ref, *bound;
};

static int setup(void **state)
{
	(void)state;
	tu_seed_from_clock();
	return 0;
}

static struct cpu_conv_geom geom_of(const struct tc *t, int transpose)
{
	struct cpu_conv_geom q = {
		.batch = t->b, .in_c = t->ci, .in_h = t->h, .in_w = t->w, .out_c = t->co,
		.groups = t->g, .k_h = t->kh, .k_w = t->kw, .stride_h = t->sh, .stride_w = t->sw,
		.dil_h = t->dh, .dil_w = t->dw, .pad_h = t->ph, .pad_w = t->pw,
	};
	if (transpose) {
		q.out_h = (t->h - 1) * t->sh - 2 * t->ph + t->dh * (t->kh - 1) + t->oph + 1;
		q.out_w = (t->w - 1) * t->sw - 2 * t->pw + t->dw * (t->kw - 1) + t->opw + 1;
	} else {
		q.out_h = (t->h + 2 * t->ph - t->dh * (t->kh - 1) - 1) / t->sh + 1;
		q.out_w = (t->w + 2 * t->pw - t->dw * (t->kw - 1) - 1) / t->sw + 1;
	}
	return q;
}

static float *fresh(size_t n)
{
	float *p = malloc((n ? n : 1) * sizeof *p);
	assert_non_null(p);
	tu_fill_f32(p, n, -1, 1);
	return p;
}

/* The input index an output position's tap reads on one axis, or -1 where none (zero). */
static long tap_src(long o, long k, long s, long pad, long d, long in, int transpose)
{
	if (!transpose) {
		long i = o * s - pad + k * d;
		return i >= 0 && i < in ? i : -1;
	}
	long num = o + pad - k * d; /* = i * s */
	if (num < 0 || num % s)
		return -1;
	return num / s < in ? num / s : -1;
}

/* y[b, co, oy, ox] = bias + the sum over its group's input planes and taps, in double, with
 * the float32 bound of each element. */
static void reference(struct run *r, int transpose)
{
	const struct cpu_conv_geom *q = &r->geo;
	int cpi = q->in_c / q->groups, cpo = q->out_c / q->groups;
	size_t e = 0;
	for (int b = 0; b < q->batch; b++)
		for (int co = 0; co < q->out_c; co++)
			for (int oy = 0; oy < q->out_h; oy++)
				for (int ox = 0; ox < q->out_w; ox++, e++) {
					int grp = co / cpo;
					double acc = r->bias ? r->bias[co] : 0, mag = 0;
					for (int c = 0; c < cpi; c++) {
						int ci = grp * cpi + c;
						for (int j = 0; j < q->k_h; j++) {
							long iy = tap_src(oy, j, q->stride_h, q->pad_h, q->dil_h, q->in_h, transpose);
							for (int i = 0; i < q->k_w && iy >= 0; i++) {
								long ix = tap_src(ox, i, q->stride_w, q->pad_w, q->dil_w, q->in_w,
								                  transpose);
								if (ix < 0)
									continue;
								size_t wi = transpose
									? (((size_t)ci * cpo + (size_t)(co - grp * cpo)) * q->k_h + j) * q->k_w + i
									: (((size_t)co * cpi + c) * q->k_h + j) * q->k_w + i;
								double xv = r->x[(((size_t)b * q->in_c + ci) * q->in_h + iy) * q->in_w + ix];
								acc += xv * r->wt[wi];
								mag += fabs(xv * r->wt[wi]);
							}
						}
					}
					r->ref[e] = acc;
					struct spatial_bound_in bi = {
						.precision = SPATIAL_FP32, .mediump_bits = 10,
						.taps = (long)cpi * q->k_h * q->k_w, .sum_abs_wx = mag,
						.abs_bias = r->bias ? fabs(r->bias[co]) : 0, .abs_y = fabs(acc),
					};
					r->bound[e] = spatial_plan_bound(&bi);
				}
}

static void run_make(struct run *r, const struct tc *t, int transpose)
{
	memset(r, 0, sizeof *r);
	r->geo = geom_of(t, transpose);
	const struct cpu_conv_geom *q = &r->geo;
	r->nx = (size_t)q->batch * q->in_c * q->in_h * q->in_w;
	r->nw = (size_t)q->in_c * (q->out_c / q->groups) * q->k_h * q->k_w;
	r->ny = (size_t)q->batch * q->out_c * q->out_h * q->out_w;
	r->x = fresh(r->nx), r->wt = fresh(r->nw), r->y = fresh(r->ny);
	r->bias = t->bias ? fresh((size_t)q->out_c) : NULL;
	r->ref = malloc(r->ny * sizeof *r->ref);
	r->bound = malloc(r->ny * sizeof *r->bound);
	assert_true(r->ref && r->bound);
	reference(r, transpose);
}

static void run_free(struct run *r)
{
	free(r->x), free(r->wt), free(r->y), free(r->bias), free(r->ref), free(r->bound);
}

/* Each element of got within scale x its bound, the relative L2 error within 1e-5 (NaN fails
 * both); prints the measures. */
static int within(const char *name, const float *got, const struct run *r, double scale)
{
	double worst = 0, top = 0;
	size_t over = 0;
	for (size_t e = 0; e < r->ny; e++) {
		double lim = scale * r->bound[e], dev = fabs((double)got[e] - r->ref[e]);
		top = lim > top ? lim : top;
		if (!(dev <= lim) && over++ < 3)
			printf("  %s: [%zu] %.9g, reference %.9g, bound %.3g\n", name, e, got[e], r->ref[e],
			       lim);
		double q = lim > 0 ? dev / lim : (dev > 0 ? INFINITY : 0);
		if (!(q <= worst))
			worst = q;
	}
	int ok = tu_report(name, tu_rel_l2_f32(got, r->ref, r->ny), 1e-5,
	                   tu_max_abs_f32(got, r->ref, r->ny), top);
	printf("    worst error / bound %.3f, %zu over\n", worst, over);
	return ok && !over;
}

static void case_name(char *s, size_t n, const struct tc *t, int transpose)
{
	snprintf(s, n, "%s B%d %d->%d %dx%d k%dx%d s%d,%d p%d,%d d%d,%d g%d op%d,%d %s",
	         transpose ? "transpose" : "conv2d", t->b, t->ci, t->co, t->h, t->w, t->kh, t->kw,
	         t->sh, t->sw, t->ph, t->pw, t->dh, t->dw, t->g, t->oph, t->opw,
	         t->bias ? "bias" : "no bias");
}

/* Runs case t on the CPU engine (threads 0: all) and checks it; 1 when right. */
static int check_case(const struct tc *t, int transpose)
{
	struct run r;
	run_make(&r, t, transpose);
	char err[CPU_CONV_ERR_LEN], name[200];
	case_name(name, sizeof name, t, transpose);
	for (size_t e = 0; e < r.ny; e++)
		r.y[e] = NAN; /* every element must be written */
	int rc = transpose ? cpu_conv2d_transpose_geom(&r.geo, r.x, r.wt, r.bias, r.y, err)
	                   : cpu_conv2d_geom(&r.geo, r.x, r.wt, r.bias, r.y, err);
	int ok = rc == 0;
	if (rc)
		printf("%s: %d %s\n", name, rc, err);
	else
		ok = within(name, r.y, &r, 1);
	run_free(&r);
	return ok;
}

/* The edges: 1x1 everywhere, the 1x1 fast path, stride above the kernel, padding above the
 * kernel, odd and prime sizes, batch 1 and 3, planes 1 and 17, groups and depthwise, dilation,
 * a 1x1 output, planes split in blocks mid-row, more planes than a column block holds, a kernel
 * far larger than the image (a column of 90000 taps). */
static const struct tc EDGES[] = {
	{1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0},
	{1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 1},
	{3, 17, 9, 11, 17, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 1},
	{1, 3, 13, 7, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1},
	{3, 1, 17, 17, 1, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 0, 0},
	{1, 4, 10, 11, 6, 2, 2, 5, 5, 0, 0, 1, 1, 1, 4, 3, 1},
	{2, 2, 12, 10, 3, 3, 3, 1, 1, 4, 4, 1, 1, 1, 0, 0, 1},
	{1, 6, 15, 14, 4, 3, 3, 2, 2, 1, 1, 2, 2, 2, 1, 1, 1},
	{1, 17, 12, 13, 17, 3, 3, 1, 1, 1, 1, 1, 1, 17, 0, 0, 1},
	{2, 3, 33, 65, 17, 7, 5, 3, 2, 3, 2, 1, 3, 1, 2, 1, 1},
	{1, 2, 5, 5, 2, 5, 5, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0},
	{1, 2, 40, 301, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0},
	{1, 64, 20, 19, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1},
	{3, 2, 9, 9, 4, 1, 1, 2, 3, 0, 0, 1, 1, 2, 1, 2, 1},
	{1, 1, 2, 3, 1, 4, 4, 7, 6, 3, 3, 1, 1, 1, 6, 5, 1},
	{1, 3, 1, 29, 2, 1, 3, 1, 1, 0, 1, 1, 4, 1, 0, 0, 0},
	{1, 1, 200, 3, 1, 9, 1, 1, 1, 4, 0, 1, 1, 1, 0, 0, 1},
	{1, 1, 3, 3, 3, 300, 300, 1, 1, 150, 150, 1, 1, 1, 0, 0, 1},
};

static int edges_ok(int transpose)
{
	int ok = 1;
	for (size_t i = 0; i < sizeof EDGES / sizeof *EDGES; i++) {
		struct tc t = EDGES[i];
		if (!transpose && (t.oph || t.opw))
			t.oph = t.opw = 0; /* no output_padding in conv2d */
		if (transpose) { /* output_padding below the stride or the dilation, as PyTorch's */
			int mh = t.sh > t.dh ? t.sh : t.dh, mw = t.sw > t.dw ? t.sw : t.dw;
			t.oph %= mh, t.opw %= mw;
		}
		ok &= check_case(&t, transpose);
	}
	return ok;
}

static int irand(int lo, int hi) { return lo + (int)(tu_uniform() * (hi - lo + 1)); }

static struct tc random_case(int transpose)
{
	for (;;) {
		struct tc t = {0};
		t.g = irand(0, 3) ? 1 : irand(1, 3);
		t.ci = t.g * irand(1, 5), t.co = t.g * irand(1, 5);
		t.b = irand(1, 3), t.h = irand(1, 23), t.w = irand(1, 23);
		t.kh = irand(1, 5), t.kw = irand(1, 5), t.sh = irand(1, 4), t.sw = irand(1, 4);
		t.dh = irand(1, 3), t.dw = irand(1, 3), t.ph = irand(0, 5), t.pw = irand(0, 5);
		t.bias = irand(0, 1);
		if (transpose) {
			t.oph = irand(0, (t.sh > t.dh ? t.sh : t.dh) - 1);
			t.opw = irand(0, (t.sw > t.dw ? t.sw : t.dw) - 1);
		}
		struct cpu_conv_geom q = geom_of(&t, transpose);
		if (q.out_h >= 1 && q.out_w >= 1)
			return t;
	}
}

static void test_conv2d_examples(void **state)
{
	(void)state;
	/* 3x3 image 1..9, 2x2 kernel (1, 2; 3, 4), bias 0.5: the four windows, exactly */
	static const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w[4] = {1, 2, 3, 4}, b[1] = {0.5f};
	static const float want[4] = {37.5f, 47.5f, 67.5f, 77.5f};
	/* padding 1, stride 2: windows from (-1, -1) by 2 (4 x1; 3 x2 + 4 x3; 2 x4 + 4 x7;
	 * 1 x5 + 2 x6 + 3 x8 + 4 x9) */
	static const float want_p[4] = {4.5f, 18.5f, 36.5f, 77.5f};
	struct cpu_conv_geom q = {.batch = 1, .in_c = 1, .in_h = 3, .in_w = 3, .out_c = 1,
	                          .k_h = 2, .k_w = 2, .out_h = 2, .out_w = 2};
	float y[4];
	char err[CPU_CONV_ERR_LEN];
	assert_int_equal(cpu_conv2d_geom(&q, x, w, b, y, err), 0);
	for (int i = 0; i < 4; i++)
		assert_true(y[i] == want[i]);
	q.pad_h = q.pad_w = 1, q.stride_h = q.stride_w = 2;
	assert_int_equal(cpu_conv2d_geom(&q, x, w, b, y, err), 0);
	for (int i = 0; i < 4; i++)
		assert_true(y[i] == want_p[i]);
	printf("conv2d examples exact\n");
}

static void test_transpose_examples(void **state)
{
	(void)state;
	/* PyTorch's conv_transpose2d of (1, 2; 3, 4) with 1..9 at stride 2: 5x5; padding 1 with
	 * output_padding 1: its 4x4 crop from (1, 1) */
	static const float x[4] = {1, 2, 3, 4}, w[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
	static const float full[25] = {1, 2, 5, 4, 6, 4, 5, 14, 10, 12, 10, 14, 36, 24, 30,
	                               12, 15, 34, 20, 24, 21, 24, 55, 32, 36};
	struct cpu_conv_geom q = {.batch = 1, .in_c = 1, .in_h = 2, .in_w = 2, .out_c = 1,
	                          .k_h = 3, .k_w = 3, .stride_h = 2, .stride_w = 2, .out_h = 5,
	                          .out_w = 5};
	float y[25];
	char err[CPU_CONV_ERR_LEN];
	assert_int_equal(cpu_conv2d_transpose_geom(&q, x, w, NULL, y, err), 0);
	for (int i = 0; i < 25; i++)
		assert_true(y[i] == full[i]);
	q.pad_h = q.pad_w = 1, q.out_h = q.out_w = 4;
	assert_int_equal(cpu_conv2d_transpose_geom(&q, x, w, NULL, y, err), 0);
	for (int i = 0; i < 16; i++)
		assert_true(y[i] == full[(i / 4 + 1) * 5 + i % 4 + 1]);
	/* TF SAME to 4x4 as the GPU engine resolves it (pad_top 0: the odd pixel at the bottom) */
	struct deconv_conv dc = {.batch = 1, .in_c = 1, .in_h = 2, .in_w = 2, .out_c = 1, .k_h = 3,
	                         .k_w = 3, .stride_h = 2, .stride_w = 2,
	                         .padding_mode = DECONV_PAD_TF_SAME};
	int pt, pl;
	assert_int_equal(deconv_output(&dc, &q.out_h, &q.out_w, &pt, &pl, err), 0);
	q.pad_h = pt, q.pad_w = pl;
	assert_int_equal(cpu_conv2d_transpose_geom(&q, x, w, NULL, y, err), 0);
	for (int i = 0; i < 16; i++)
		assert_true(y[i] == full[(i / 4) * 5 + i % 4]);
	printf("transpose examples exact (torch, padding + output_padding, TF SAME)\n");
}

static void test_conv2d_edges(void **state)
{
	(void)state;
	assert_true(edges_ok(0));
}

static void test_transpose_edges(void **state)
{
	(void)state;
	assert_true(edges_ok(1));
}

static void test_random(void **state)
{
	(void)state;
	int ok = 1;
	for (int n = 0; n < 40; n++) {
		struct tc t = random_case(n & 1);
		ok &= check_case(&t, n & 1);
	}
	assert_true(ok);
}

/* The blocks depend on the shape only: 1, 2 and 8 threads give the same bits (im2col, col2im
 * and the direct loops). */
static void test_threads_same_bits(void **state)
{
	(void)state;
	static const struct tc cases[] = {
		{1, 8, 64, 77, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1},
		{3, 4, 31, 40, 6, 5, 5, 2, 2, 2, 2, 1, 1, 2, 1, 1, 1},
		{2, 3, 50, 41, 2, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 0, 1},
	};
	char err[CPU_CONV_ERR_LEN];
	for (int tr = 0; tr < 2; tr++)
		for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
			struct run r;
			run_make(&r, &cases[c], tr);
			float *y1 = malloc(r.ny * sizeof *y1);
			assert_non_null(y1);
			static const int threads[] = {1, 2, 8};
			for (int k = 0; k < 3; k++) {
				r.geo.threads = threads[k];
				float *dst = k ? r.y : y1;
				int rc = tr ? cpu_conv2d_transpose_geom(&r.geo, r.x, r.wt, r.bias, dst, err)
				            : cpu_conv2d_geom(&r.geo, r.x, r.wt, r.bias, dst, err);
				assert_int_equal(rc, 0);
				if (k)
					assert_memory_equal(y1, r.y, r.ny * sizeof *y1);
			}
			assert_true(within(tr ? "transpose threads" : "conv2d threads", r.y, &r, 1));
			free(y1);
			run_free(&r);
		}
}

static void test_blas_serial(void **state)
{
	(void)state;
	/* the Makefile links openblas-serial by its directory and run path */
	assert_int_equal(cpu_conv_blas_serial(), 1);
	char hint[256] = "";
	int h = cpu_conv_blas_hint(hint, sizeof hint);
	printf("OpenBLAS kernels: %s%s%s\n", cpu_conv_blas_core(), h ? "; " : "", hint);
	assert_true(!h || strstr(hint, "OPENBLAS_CORETYPE="));
}

static void test_errors(void **state)
{
	(void)state;
	float one[4] = {1, 1, 1, 1}, out[4];
	char err[CPU_CONV_ERR_LEN];
	struct cpu_conv_geom ok = {.batch = 1, .in_c = 2, .in_h = 1, .in_w = 2, .out_c = 2,
	                           .k_h = 1, .k_w = 1, .out_h = 1, .out_w = 2};
	struct cpu_conv_geom q = ok;
	assert_int_equal(cpu_conv2d_geom(&q, one, one, NULL, out, err), 0);
	q.groups = 3;
	assert_int_equal(cpu_conv2d_geom(&q, one, one, NULL, out, err), CPU_CONV_E_ARG);
	printf("groups 3: %s\n", err);
	q = ok, q.in_h = 0;
	assert_int_equal(cpu_conv2d_transpose_geom(&q, one, one, NULL, out, err), CPU_CONV_E_ARG);
	printf("in_h 0: %s\n", err);
	q = ok, q.out_w = -4;
	assert_int_equal(cpu_conv2d_geom(&q, one, one, NULL, out, err), CPU_CONV_E_ARG);
	q = ok, q.stride_h = -1;
	assert_int_equal(cpu_conv2d_geom(&q, one, one, NULL, out, err), CPU_CONV_E_ARG);
	q = ok, q.pad_w = 1 << 25;
	assert_int_equal(cpu_conv2d_geom(&q, one, one, NULL, out, err), CPU_CONV_E_ARG);
	q = ok;
	assert_int_equal(cpu_conv2d_geom(&q, NULL, one, NULL, out, err), CPU_CONV_E_ARG);
	assert_int_equal(cpu_conv2d_transpose_geom(&q, one, one, NULL, NULL, err), CPU_CONV_E_ARG);
	/* sizes whose product overflows or passes the element limit: refused before any buffer */
	q = ok, q.batch = 1 << 24, q.in_c = 1 << 24, q.out_c = 1 << 24, q.in_h = q.in_w = 1 << 24;
	q.out_h = q.out_w = 1 << 24;
	assert_int_equal(cpu_conv2d_geom(&q, one, one, NULL, out, err), CPU_CONV_E_TOO_LARGE);
	printf("huge: %s\n", err);
	q = ok, q.in_h = 1 << 15, q.in_w = 1 << 15;
	assert_int_equal(cpu_conv2d_transpose_geom(&q, one, one, NULL, out, err), CPU_CONV_E_TOO_LARGE);
	assert_string_equal(cpu_conv_strerror(CPU_CONV_E_NOMEM), "out of memory");
}

/* ---- the GPU engine on the same cases (llvmpipe here) ---- */

static int gpu_agree(struct spatial_ctx *sp, struct deconv_ctx *dc, const struct tc *t,
                     int transpose)
{
	struct run r;
	run_make(&r, t, transpose);
	char err[SPATIAL_ERR_LEN], name[220], label[240];
	case_name(name, sizeof name, t, transpose);
	float *gpu = malloc(r.ny * sizeof *gpu);
	assert_non_null(gpu);
	/* the engines' entry points, with the sizes the GPU engine's shape helpers give */
	int rc, crc, oh, ow, pt, pl;
	char cerr[CPU_CONV_ERR_LEN];
	if (transpose) {
		struct deconv_conv c = {
			.batch = t->b, .in_c = t->ci, .in_h = t->h, .in_w = t->w, .out_c = t->co,
			.k_h = t->kh, .k_w = t->kw, .stride_h = t->sh, .stride_w = t->sw, .pad_h = t->ph,
			.pad_w = t->pw, .out_pad_h = t->oph, .out_pad_w = t->opw, .dil_h = t->dh,
			.dil_w = t->dw, .groups = t->g};
		rc = deconv_run(dc, &c, r.x, r.wt, r.bias, gpu, NULL, err);
		assert_int_equal(deconv_output(&c, &oh, &ow, &pt, &pl, err), 0);
		crc = cpu_conv2d_transpose(&c, oh, ow, pt, pl, r.x, r.wt, r.bias, r.y, 0, cerr);
	} else {
		struct spatial_conv c = {
			.batch = t->b, .in_c = t->ci, .in_h = t->h, .in_w = t->w, .out_c = t->co,
			.k_h = t->kh, .k_w = t->kw, .pad_h = t->ph, .pad_w = t->pw, .stride_h = t->sh,
			.stride_w = t->sw, .dil_h = t->dh, .dil_w = t->dw, .groups = t->g,
			.precision = SPATIAL_FP32};
		rc = spatial_conv2d(sp, &c, r.x, r.wt, r.bias, gpu, NULL, err);
		assert_int_equal(spatial_conv_output(&c, &oh, &ow, err), 0);
		crc = cpu_conv2d(&c, oh, ow, r.x, r.wt, r.bias, r.y, 0, cerr);
	}
	assert_int_equal(oh, r.geo.out_h);
	assert_int_equal(ow, r.geo.out_w);
	if (rc)
		printf("%s on the GPU: %s\n", name, err);
	if (crc)
		printf("%s on the CPU: %s\n", name, cerr);
	int ok = !rc && !crc;
	snprintf(label, sizeof label, "%s gpu", name);
	ok = ok && within(label, gpu, &r, 1);
	snprintf(label, sizeof label, "%s cpu", name);
	ok = ok && within(label, r.y, &r, 1);
	/* each within its bound of the reference: within two bounds of each other */
	size_t e = 0;
	for (; ok && e < r.ny; e++)
		if (!(fabs((double)gpu[e] - r.y[e]) <= 2 * r.bound[e])) {
			printf("engines disagree at %zu: %.9g vs %.9g\n", e, gpu[e], r.y[e]);
			ok = 0;
		}
	free(gpu);
	run_free(&r);
	return ok;
}

static void test_gpu_cross(void **state)
{
	(void)state;
	struct egl_ctx *ctx = tu_gl_context();
	if (!ctx) {
		skip();
		return;
	}
	struct program_cache *pc = NULL;
	struct spatial_ctx *sp = NULL;
	struct deconv_ctx *dc = NULL;
	char err[SPATIAL_ERR_LEN];
	assert_int_equal(program_cache_create("", NULL, &pc), 0);
	if (spatial_ctx_create(pc, egl_ctx_info(ctx), NULL, NULL, &sp, err) ||
	    deconv_ctx_create(pc, egl_ctx_info(ctx), sp, NULL, &dc, err)) {
		printf("GPU engine: %s\n", err);
		fail();
	}
	static const struct tc cases[] = {
		{1, 3, 13, 7, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1},
		{3, 6, 15, 14, 4, 3, 3, 2, 2, 1, 1, 2, 2, 2, 1, 1, 1},
		{1, 17, 9, 11, 17, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0},
		{2, 2, 5, 6, 3, 3, 3, 3, 2, 4, 2, 1, 1, 1, 2, 1, 1},
	};
	int ok = 1;
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		struct tc t = cases[c];
		ok &= gpu_agree(sp, dc, &t, 0);
		if (t.ph >= t.kh) /* PyTorch's transposed padding stays below dil (k - 1) + 1 */
			t.ph = t.pw = 1;
		ok &= gpu_agree(sp, dc, &t, 1);
	}
	deconv_ctx_destroy(dc);
	spatial_ctx_destroy(sp);
	program_cache_destroy(pc);
	assert_true(ok);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blas_serial),
		cmocka_unit_test(test_conv2d_examples),
		cmocka_unit_test(test_transpose_examples),
		cmocka_unit_test(test_conv2d_edges),
		cmocka_unit_test(test_transpose_edges),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_threads_same_bits),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_gpu_cross),
	};
	tu_test_filter();
	return cmocka_run_group_tests(tests, setup, NULL);
}
