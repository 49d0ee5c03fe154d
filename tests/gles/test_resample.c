/* Both engines' resamplers (the GPU's, gles/resample.h, and the CPU engine's, cpu/resample.h)
 * against a float64 reference written here from the filter's definition
 * (Lanczos-3 widened by the scale when shrinking, each output pixel's weights over the taps
 * inside the image normalised to 1, alpha premultiplied while filtering): up- and downscales,
 * odd and prime sizes, 1-pixel inputs and outputs, 1-4 channels, cover's fractional crop and
 * contain's bars; the fit modes' geometry (sharp's meanings) and the kernel scale rule; the
 * taps' plan. Fresh random data; rel L2 and max abs printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/egl.h"
#include "gles/program.h"
#include "cpu/resample.h"
#include "gles/resample.h"
#include "tests/testutil.h"

static struct program_cache *g_pc;
static struct resample_ctx *g_r;
static int g_cpu; /* 1: check_case runs the CPU engine's resampler */

static int setup(void **state)
{
	(void)state;
	struct egl_ctx *ctx = tu_gl_context();
	if (!ctx)
		return -1;
	tu_seed_from_clock();
	char err[RESAMPLE_ERR_LEN] = "";
	if (program_cache_create("", NULL, &g_pc) ||
	    resample_ctx_create(g_pc, egl_ctx_info(ctx)->max_ssbo_size, NULL, &g_r, err)) {
		fprintf(stderr, "setup: %s\n", err);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	resample_ctx_destroy(g_r);
	program_cache_destroy(g_pc);
	return 0;
}

static double ref_lanczos3(double x)
{
	if (x == 0)
		return 1;
	if (fabs(x) >= 3)
		return 0;
	return sin(M_PI * x) / (M_PI * x) * (sin(M_PI * x / 3) / (M_PI * x / 3));
}

/* Weights of output i over all n source pixels (zero outside the filter's reach), summing to 1. */
static void ref_weights(int n, double src0, double len, int dst, int i, double *w)
{
	double f = len / dst, st = f > 1 ? f : 1, c = src0 + (i + 0.5) * f, sum = 0;
	for (int j = 0; j < n; j++)
		sum += w[j] = ref_lanczos3((j + 0.5 - c) / st);
	for (int j = 0; j < n; j++)
		w[j] /= sum;
}

/* The whole resize in double, straight from the definition (a 2-D sum, not two passes). */
static void reference(const struct image *in, const struct resample_geom *g, double *out)
{
	int c = in->channels, a = c == 2 || c == 4 ? c - 1 : -1, W = in->width, H = in->height;
	double *wx = malloc((size_t)g->dst_w * W * sizeof *wx);
	double *wy = malloc((size_t)g->dst_h * H * sizeof *wy);
	assert_non_null(wx);
	assert_non_null(wy);
	for (int i = 0; i < g->dst_w; i++)
		ref_weights(W, g->src_x, g->src_w, g->dst_w, i, wx + (size_t)i * W);
	for (int i = 0; i < g->dst_h; i++)
		ref_weights(H, g->src_y, g->src_h, g->dst_h, i, wy + (size_t)i * H);
	memset(out, 0, (size_t)g->out_w * g->out_h * c * sizeof *out);
	for (int y = 0; y < g->dst_h; y++)
		for (int x = 0; x < g->dst_w; x++) {
			double acc[4] = {0};
			for (int j = 0; j < H; j++) {
				double vy = wy[(size_t)y * H + j];
				if (vy == 0)
					continue;
				for (int i = 0; i < W; i++) {
					double v = vy * wx[(size_t)x * W + i];
					const float *p = in->pixels + ((size_t)j * W + i) * c;
					for (int k = 0; k < c; k++)
						acc[k] += v * p[k] * (a >= 0 && k != a ? p[a] : 1);
				}
			}
			if (a >= 0) {
				for (int k = 0; k < a; k++)
					acc[k] = acc[a] > 0 ? acc[k] / acc[a] : 0;
				acc[a] = acc[a] < 0 ? 0 : acc[a] > 1 ? 1 : acc[a];
			}
			double *o = out + ((size_t)(y + g->dst_y) * g->out_w + x + g->dst_x) * c;
			for (int k = 0; k < c; k++)
				o[k] = acc[k];
		}
	free(wx);
	free(wy);
}

/* A random image: smooth-ish colour in [0, 1] (and HDR peaks to 8 in a few pixels), alpha in
 * [0.25, 1] so that dividing it back out is well conditioned. */
static void random_image(struct image *im, int w, int h, int c)
{
	memset(im, 0, sizeof *im);
	im->width = w, im->height = h, im->channels = c;
	im->pixels = malloc((size_t)w * h * c * sizeof(float));
	assert_non_null(im->pixels);
	for (size_t i = 0; i < (size_t)w * h; i++)
		for (int k = 0; k < c; k++) {
			float v = (float)tu_uniform();
			if ((c == 2 || c == 4) && k == c - 1)
				v = 0.25f + 0.75f * v;
			else if (tu_uniform() < 0.02)
				v *= 8;
			im->pixels[i * c + k] = v;
		}
}

#define REL_TOL 2e-6 /* float32 weights and sums against double */
#define ABS_TOL 1e-4 /* values to 8 (HDR peaks) divided by alphas the ringing takes to ~0.2 */

static void check_case(const char *name, int w, int h, int c, const struct resample_geom *g)
{
	struct image in, out;
	random_image(&in, w, h, c);
	char err[RESAMPLE_ERR_LEN] = "";
	int rc = g_cpu ? cpu_resample(&in, g, 2, &out, err) : resample_run(g_r, &in, g, &out, err);
	if (rc)
		fprintf(stderr, "%s: %s\n", name, err);
	assert_int_equal(rc, 0);
	assert_int_equal(out.width, g->out_w);
	assert_int_equal(out.height, g->out_h);
	assert_int_equal(out.channels, c);
	size_t n = (size_t)g->out_w * g->out_h * c;
	double *ref = malloc(n * sizeof *ref);
	assert_non_null(ref);
	reference(&in, g, ref);
	char label[160];
	snprintf(label, sizeof label, "%s %s %dx%dx%d -> %dx%d (%dx%d at %d,%d, src %.3g,%.3g %.4gx%.4g)",
	         g_cpu ? "cpu" : "gpu", name, w, h, c, g->out_w, g->out_h, g->dst_w, g->dst_h, g->dst_x, g->dst_y,
	         g->src_x, g->src_y, g->src_w, g->src_h);
	double rel = tu_rel_l2_f32(out.pixels, ref, n), mx = tu_max_abs_f32(out.pixels, ref, n);
	assert_true(tu_report(label, rel, REL_TOL, mx, ABS_TOL));
	/* the bars are exactly 0 */
	for (int y = 0; y < g->out_h; y++)
		for (int x = 0; x < g->out_w; x++)
			if (x < g->dst_x || y < g->dst_y || x >= g->dst_x + g->dst_w ||
			    y >= g->dst_y + g->dst_h)
				for (int k = 0; k < c; k++)
					assert_true(out.pixels[((size_t)y * g->out_w + x) * c + k] == 0.0f);
	free(ref);
	image_free(&in);
	image_free(&out);
}

static struct resample_geom geom(int ow, int oh, int w, int h)
{
	return (struct resample_geom){ow, oh, 0, 0, ow, oh, 0, 0, w, h};
}

static void scales(void)
{
	static const int cases[][5] = {
		/* in w, h, channels, out w, h */
		{7, 5, 4, 23, 17},     /* upscale, odd, RGBA */
		{97, 61, 3, 13, 9},    /* downscale ~7x, primes */
		{64, 64, 4, 31, 33},   /* mixed: shrink one axis, grow... near 1:1 */
		{31, 17, 3, 1, 1},     /* one output pixel */
		{1, 1, 4, 5, 3},       /* one input pixel */
		{1, 9, 2, 4, 3},       /* a column, grey + alpha */
		{40, 1, 1, 7, 1},      /* a row, grey */
		{129, 65, 4, 128, 64}, /* 2^k + 1 -> 2^k */
		{50, 30, 3, 50, 30},   /* identity: the taps reduce to one */
		{200, 150, 4, 19, 250},/* shrink x 10.5, grow y */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const int *k = cases[i];
		struct resample_geom g = geom(k[3], k[4], k[0], k[1]);
		check_case("fill", k[0], k[1], k[2], &g);
	}
	/* random sizes and channels */
	for (int t = 0; t < 6; t++) {
		int w = 1 + (int)(tu_uniform() * 90), h = 1 + (int)(tu_uniform() * 90);
		int ow = 1 + (int)(tu_uniform() * 90), oh = 1 + (int)(tu_uniform() * 90);
		int c = 1 + (int)(tu_uniform() * 4);
		struct resample_geom g = geom(ow, oh, w, h);
		check_case("random", w, h, c, &g);
	}
}

static void fits(void)
{
	static const int cases[][5] = {
		/* in w, h, fit, box w, h */
		{120, 80, RESAMPLE_FIT_COVER, 40, 40},   /* fractional crop at the centre */
		{75, 113, RESAMPLE_FIT_COVER, 30, 17},
		{120, 80, RESAMPLE_FIT_CONTAIN, 40, 40}, /* bars top and bottom */
		{37, 90, RESAMPLE_FIT_CONTAIN, 51, 20},  /* bars left and right, odd */
		{33, 21, RESAMPLE_FIT_OUTSIDE, 16, 16},
		{33, 21, RESAMPLE_FIT_INSIDE, 16, 16},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const int *k = cases[i];
		struct resample_geom g;
		assert_int_equal(resample_fit(k[0], k[1], k[3], k[4], 1.0, k[2], &g), 0);
		check_case(resample_fit_names[k[2]], k[0], k[1], 4, &g);
		check_case(resample_fit_names[k[2]], k[0], k[1], 3, &g);
	}
}

static void test_scales(void **state)
{
	(void)state;
	g_cpu = 0;
	scales();
}

static void test_fits_on_gpu(void **state)
{
	(void)state;
	g_cpu = 0;
	fits();
}

/* The CPU engine's resampler on the same cases and reference (2 threads: rows split). */
static void test_scales_cpu(void **state)
{
	(void)state;
	g_cpu = 1;
	scales();
	g_cpu = 0;
}

static void test_fits_on_cpu(void **state)
{
	(void)state;
	g_cpu = 1;
	fits();
	g_cpu = 0;
}

/* An input past the storage-buffer limit goes up in bands of rows: the same pixels, bit for
 * bit, as in one piece; an output past it is refused. */
static void test_bands(void **state)
{
	(void)state;
	struct resample_ctx *small;
	char err[RESAMPLE_ERR_LEN] = "";
	assert_int_equal(resample_ctx_create(g_pc, 12000, NULL, &small, err), 0);
	struct image in, a, b;
	random_image(&in, 97, 61, 3); /* 71 KiB: 10 rows a band */
	struct resample_geom g = geom(13, 9, 97, 61);
	assert_int_equal(resample_run(g_r, &in, &g, &a, err), 0);
	int rc = resample_run(small, &in, &g, &b, err);
	if (rc)
		fprintf(stderr, "bands: %s\n", err);
	assert_int_equal(rc, 0);
	assert_memory_equal(a.pixels, b.pixels, sizeof(float) * 13 * 9 * 3);
	printf("97x61x3 -> 13x9 in bands of 10 rows: the same bits as in one piece\n");
	image_free(&b);
	g = geom(100, 100, 97, 61); /* 117 KiB of output */
	assert_int_equal(resample_run(small, &in, &g, &b, err), RESAMPLE_E_GPU_LIMIT);
	printf("refused: %s\n", err);
	image_free(&a);
	image_free(&in);
	resample_ctx_destroy(small);
}

static void fit_is(int w, int h, int bw, int bh, double dpr, int fit, int ow, int oh, int dx,
                   int dy, int dw, int dh)
{
	struct resample_geom g;
	int rc = resample_fit(w, h, bw, bh, dpr, fit, &g);
	printf("fit %s %dx%d box %dx%d dpr %g -> %dx%d (%dx%d at %d,%d; src %g,%g %gx%g)\n",
	       resample_fit_names[fit], w, h, bw, bh, dpr, g.out_w, g.out_h, g.dst_w, g.dst_h,
	       g.dst_x, g.dst_y, g.src_x, g.src_y, g.src_w, g.src_h);
	assert_int_equal(rc, 0);
	assert_int_equal(g.out_w, ow);
	assert_int_equal(g.out_h, oh);
	assert_int_equal(g.dst_x, dx);
	assert_int_equal(g.dst_y, dy);
	assert_int_equal(g.dst_w, dw);
	assert_int_equal(g.dst_h, dh);
	assert_true(g.src_x >= 0 && g.src_y >= 0 && g.src_x + g.src_w <= w + 1e-9 &&
	            g.src_y + g.src_h <= h + 1e-9);
}

static void test_fit_geometry(void **state)
{
	(void)state;
	enum { CO = RESAMPLE_FIT_COVER, CT = RESAMPLE_FIT_CONTAIN, FI = RESAMPLE_FIT_FILL,
	       IN = RESAMPLE_FIT_INSIDE, OU = RESAMPLE_FIT_OUTSIDE };
	/* 400x200 into 100x100: the five fits (sharp's sizes) */
	fit_is(400, 200, 100, 100, 1, CO, 100, 100, 0, 0, 100, 100);
	fit_is(400, 200, 100, 100, 1, CT, 100, 100, 0, 25, 100, 50);
	fit_is(400, 200, 100, 100, 1, FI, 100, 100, 0, 0, 100, 100);
	fit_is(400, 200, 100, 100, 1, IN, 100, 50, 0, 0, 100, 50);
	fit_is(400, 200, 100, 100, 1, OU, 200, 100, 0, 0, 200, 100);
	/* inside never enlarges; outside covers the box without cropping */
	fit_is(40, 20, 100, 100, 1, IN, 40, 20, 0, 0, 40, 20);
	fit_is(40, 20, 100, 100, 1, OU, 200, 100, 0, 0, 200, 100);
	/* one side alone keeps the aspect, whatever the fit (inside: not enlarged) */
	fit_is(400, 200, 100, 0, 1, CO, 100, 50, 0, 0, 100, 50);
	fit_is(400, 200, 100, 0, 1, CT, 100, 50, 0, 0, 100, 50);
	fit_is(400, 200, 0, 50, 1, FI, 100, 50, 0, 0, 100, 50);
	fit_is(400, 200, 0, 300, 1, IN, 400, 200, 0, 0, 400, 200);
	fit_is(400, 200, 0, 300, 1, OU, 600, 300, 0, 0, 600, 300);
	fit_is(333, 111, 100, 0, 1, CO, 100, 33, 0, 0, 100, 33);
	/* dpr multiplies the box */
	fit_is(400, 200, 100, 0, 2, CO, 200, 100, 0, 0, 200, 100);
	fit_is(400, 200, 100, 100, 1.5, CT, 150, 150, 0, 37, 150, 75); /* bars: floor above */
	fit_is(1000, 1000, 333, 0, 3, CO, 999, 999, 0, 0, 999, 999);
	/* tiny outputs stay at least 1 */
	fit_is(1000, 10, 10, 0, 1, CO, 10, 1, 0, 0, 10, 1);
	fit_is(1, 1, 1, 1, 1, CO, 1, 1, 0, 0, 1, 1);
	/* cover crops the centre: 400x200 into 50x100 keeps the middle 100x200 */
	struct resample_geom g;
	assert_int_equal(resample_fit(400, 200, 50, 100, 1, CO, &g), 0);
	assert_true(fabs(g.src_x - 150) < 1e-9 && fabs(g.src_w - 100) < 1e-9 && g.src_y == 0 &&
	            g.src_h == 200);
	/* refusals: nothing asked, bad dpr, bad fit, a side past the limit (dpr included) */
	assert_int_equal(resample_fit(400, 200, 0, 0, 1, CO, &g), RESAMPLE_E_ARG);
	assert_int_equal(resample_fit(400, 200, 10, 0, 0.5, CO, &g), RESAMPLE_E_ARG);
	assert_int_equal(resample_fit(400, 200, 10, 0, NAN, CO, &g), RESAMPLE_E_ARG);
	assert_int_equal(resample_fit(400, 200, 10, 0, 4.5, CO, &g), RESAMPLE_E_ARG);
	assert_int_equal(resample_fit(400, 200, 10, 0, 1, RESAMPLE_FIT_COUNT, &g), RESAMPLE_E_ARG);
	assert_int_equal(resample_fit(400, 200, 10000, 0, 2, CO, &g), RESAMPLE_E_TOO_LARGE);
	assert_int_equal(resample_fit(10000, 10, 100, 100, 1, OU, &g), RESAMPLE_E_TOO_LARGE);
	assert_int_equal(resample_fit(1, 1, RESAMPLE_MAX_SIDE, RESAMPLE_MAX_SIDE, 1, FI, &g), 0);
	assert_true(resample_is_identity(&(struct resample_geom){5, 4, 0, 0, 5, 4, 0, 0, 5, 4}, 5, 4));
	assert_false(resample_is_identity(&(struct resample_geom){5, 4, 0, 0, 5, 4, 0, 0, 5, 3}, 5, 4));
}

static void test_kernel_scale(void **state)
{
	(void)state;
	struct resample_geom g;
	/* half the size: a 64-pixel kernel becomes 32 pixels of a 200-pixel shorter side */
	assert_int_equal(resample_fit(400, 300, 200, 0, 1, RESAMPLE_FIT_COVER, &g), 0);
	assert_true(fabs(resample_scale(&g) - 0.5) < 1e-12);
	assert_true(fabs(resample_kernel_scale(0, 64, 48, 400, 300, &g) - 32.0 / 150) < 1e-12);
	/* kernel_scale S: S x the input's shorter side, then the scale */
	assert_true(fabs(resample_kernel_scale(0.5, 64, 48, 400, 300, &g) - 0.5 * 300 * 0.5 / 150) <
	            1e-12);
	/* contain: the canvas's shorter side has bars in it; the kernel follows the image */
	assert_int_equal(resample_fit(400, 200, 100, 100, 1, RESAMPLE_FIT_CONTAIN, &g), 0);
	assert_true(fabs(resample_kernel_scale(0, 40, 40, 400, 200, &g) - 40 * 0.25 / 100) < 1e-12);
	/* an odd kernel stays odd: 63 halved is 31 pixels, not 32 */
	assert_int_equal(resample_fit(400, 300, 200, 0, 1, RESAMPLE_FIT_COVER, &g), 0);
	assert_true(fabs(resample_kernel_scale(0, 63, 63, 400, 300, &g) - 31.0 / 150) < 1e-12);
	assert_true(fabs(resample_kernel_scale(0, 37, 21, 400, 300, &g) - 19.0 / 150) < 1e-12);
	/* fill: the geometric mean of the two scales */
	assert_int_equal(resample_fit(400, 200, 100, 200, 1, RESAMPLE_FIT_FILL, &g), 0);
	assert_true(fabs(resample_scale(&g) - sqrt(0.25 * 1.0)) < 1e-12);
}

static void test_axis_plan(void **state)
{
	(void)state;
	struct resample_axis a;
	/* shrinking 1000 -> 3: each output's taps cover its footprint and 3x its width */
	assert_int_equal(resample_axis_plan(1000, 0, 1000, 3, &a), 0);
	for (int i = 0; i < a.n_out; i++) {
		double s = 0;
		for (int k = 0; k < a.span[2 * i + 1]; k++)
			s += a.w[(size_t)i * a.max_taps + k];
		assert_true(fabs(s - 1) < 1e-5);
		assert_true(a.span[2 * i] >= 0 && a.span[2 * i] + a.span[2 * i + 1] <= 1000);
	}
	assert_true(a.span[1] > 600); /* 3 lobes of a 333-pixel footprint, cut at the edge */
	resample_axis_free(&a);
	/* 1:1: one tap of weight 1 (the zeros of the sinc) */
	assert_int_equal(resample_axis_plan(10, 0, 10, 10, &a), 0);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(a.span[2 * i], i);
		assert_int_equal(a.span[2 * i + 1], 1);
		assert_true(a.w[(size_t)i * a.max_taps] == 1.0f);
	}
	resample_axis_free(&a);
	assert_int_equal(resample_axis_plan(10, 2, 9, 4, &a), RESAMPLE_E_ARG); /* past the end */
	assert_int_equal(resample_axis_plan(10, 0, 0, 4, &a), RESAMPLE_E_ARG);
}

int main(void)
{
	tu_test_filter();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fit_geometry),
		cmocka_unit_test(test_kernel_scale),
		cmocka_unit_test(test_axis_plan),
		cmocka_unit_test(test_scales),
		cmocka_unit_test(test_fits_on_gpu),
		cmocka_unit_test(test_scales_cpu),
		cmocka_unit_test(test_fits_on_cpu),
		cmocka_unit_test(test_bands),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
