/* The spatial convolution's CPU planning: geometry checks, texture tiling, the interpolator's
 * pair decisions (opposite signs, f1 = -f2, zeros, grid rounding) and tap lists (the weights
 * they stand for equal the filter's within the tolerance), shared-memory chunking, float16 and
 * Q2.6 rounding, and the error bound's terms. No GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/spatial_plan.h"
#include "tests/testutil.h"

static struct spatial_geom geom(void)
{
	struct spatial_geom g = {
		.batch = 2, .in_c = 4, .in_h = 10, .in_w = 12, .out_c = 6, .groups = 2, .k_h = 3,
		.k_w = 5, .stride_h = 1, .stride_w = 2, .dil_h = 1, .dil_w = 1, .up_h = 1, .up_w = 1,
		.org_y = -1, .org_x = -2, .out_h = 10, .out_w = 6, .dst_h = 10, .dst_w = 6,
		.dst_sy = 1, .dst_sx = 1,
	};
	return g;
}

static void test_check(void **state)
{
	(void)state;
	char err[SPATIAL_PLAN_ERR_LEN];
	struct spatial_geom g = geom();
	assert_int_equal(spatial_plan_check(&g, err), 0);
	assert_int_equal(spatial_plan_window_h(&g), 12);
	assert_int_equal(spatial_plan_window_w(&g), 15);
	g.groups = 4; /* 6 output planes are not divisible by 4 */
	assert_int_equal(spatial_plan_check(&g, err), -1);
	printf("%s\n", err);
	g = geom();
	g.stride_w = 0;
	assert_int_equal(spatial_plan_check(&g, err), -1);
	printf("%s\n", err);
	g = geom();
	g.dst_oy = 1; /* the last row would land outside */
	assert_int_equal(spatial_plan_check(&g, err), -1);
	g = geom();
	g.in_h = 1 << 20, g.in_w = 1 << 20;
	assert_int_equal(spatial_plan_check(&g, err), -1);
	printf("%s\n", err);
}

static void test_tiles(void **state)
{
	(void)state;
	int tx, w, h;
	assert_int_equal(spatial_plan_tiles(4, 10, 10, 1024, 0, &tx, &w, &h), 0);
	assert_int_equal(w * h, 400);
	assert_int_equal(spatial_plan_tiles(3, 100, 10, 1024, 0, &tx, &w, &h), 0);
	assert_true(tx * 100 <= w && (3 + tx - 1) / tx * 10 <= h && w * h == 3000);
	assert_int_equal(spatial_plan_tiles(5, 100, 100, 256, 1, &tx, &w, &h), -1); /* 5 > 4 fit */
	assert_int_equal(spatial_plan_tiles(4, 100, 100, 256, 1, &tx, &w, &h), 0);
	assert_int_equal(w, 256);
	assert_int_equal(h, 256);
	assert_int_equal(spatial_plan_tiles(1, 300, 10, 256, 0, &tx, &w, &h), -1);
	/* every tile lies inside the texture */
	for (int t = 1; t < 40; t++)
		for (int pow2 = 0; pow2 < 2; pow2++) {
			assert_int_equal(spatial_plan_tiles(t, 7, 13, 4096, pow2, &tx, &w, &h), 0);
			assert_true(tx * 7 <= w && (t + tx - 1) / tx * 13 <= h);
			if (pow2)
				assert_true((w & (w - 1)) == 0 && (h & (h - 1)) == 0);
		}
}

static void test_fuse(void **state)
{
	(void)state;
	double a, f, tol = ldexp(1, -11);
	assert_int_equal(spatial_plan_fuse(0.3, -0.3, 12, tol, &a, &f), 0);  /* f1 = -f2 */
	assert_int_equal(spatial_plan_fuse(0.3, -0.1, 12, tol, &a, &f), 0);  /* opposite signs */
	assert_int_equal(spatial_plan_fuse(-0.3, 0.1, 12, tol, &a, &f), 0);
	assert_int_equal(spatial_plan_fuse(0.3, 0.0, 12, tol, &a, &f), 0);   /* a zero tap */
	assert_int_equal(spatial_plan_fuse(NAN, 0.1, 12, tol, &a, &f), 0);
	assert_int_equal(spatial_plan_fuse(0.2, 0.2, 0, tol, &a, &f), 0);    /* no filtering */
	assert_int_equal(spatial_plan_fuse(0.2, 0.2, 1, tol, &a, &f), 1);    /* a = 1/2 */
	assert_true(a == 0.5 && f == 0.4);
	assert_int_equal(spatial_plan_fuse(-0.3, -0.1, 2, tol, &a, &f), 1); /* a = 1/4 */
	assert_true(a == 0.25 && fabs(f + 0.4) < 1e-15);
	/* a = 1/3 on a 10-bit grid (341/1024) moves the weights by 2e-4: within 2^-9 of their sum,
	 * not within 2^-11 */
	assert_int_equal(spatial_plan_fuse(0.2, 0.1, 10, tol, &a, &f), 0);
	assert_int_equal(spatial_plan_fuse(0.2, 0.1, 10, ldexp(1, -9), &a, &f), 1);
	assert_true(a == 341.0 / 1024);
	/* a tap far smaller than its partner rounds to a texel centre: no fusing */
	assert_int_equal(spatial_plan_fuse(1.0, 1e-6, 8, ldexp(1, -9), &a, &f), 0);
	/* random pairs: whenever fused, the weights they stand for are within tol */
	tu_seed(12345);
	int fused = 0;
	for (int i = 0; i < 100000; i++) {
		double f1 = tu_sym(), f2 = tu_sym();
		int bits = 1 + i % 12;
		if (spatial_plan_fuse(f1, f2, bits, tol, &a, &f)) {
			fused++;
			assert_true(a > 0 && a < 1 && a * ldexp(1, bits) == floor(a * ldexp(1, bits)));
			assert_true(fabs(f * (1 - a) - f1) + fabs(f * a - f2) <= tol * (fabs(f1) + fabs(f2)));
			assert_true(f1 * f2 > 0);
		}
	}
	printf("random pairs fused: %d of 100000\n", fused);
	assert_true(fused > 0);
}

/* The weight each (offset, layer) of a tap list stands for, spread back onto the taps. */
static void expand(const float *e, int n, int lanes, int k_h, int k_w, int dil_h, int dil_w,
                   int c0, double *w)
{
	int per = lanes == 1 ? 4 : 8;
	for (int i = 0; i < n; i++) {
		const float *p = e + (size_t)i * per;
		double x = p[0], y = p[1];
		int c = (int)p[2] - c0;
		double fx = x / dil_w, fy = y / dil_h;
		int ix = (int)floor(fx), iy = (int)floor(fy);
		double ax = x - ix * dil_w, ay = y - iy * dil_h; /* fractions (dilation 1 when fused) */
		for (int l = 0; l < lanes; l++) {
			double f = lanes == 1 ? p[3] : p[4 + l];
			size_t t0 = (((size_t)c * k_h + iy) * k_w + ix) * lanes + l;
			if (ax > 0) {
				w[t0] += f * (1 - ax);
				w[t0 + lanes] += f * ax;
			} else if (ay > 0) {
				w[t0] += f * (1 - ay);
				w[t0 + (size_t)k_w * lanes] += f * ay;
			} else {
				w[t0] += f;
			}
		}
	}
}

static void entries_case(int lanes, int cpg, int k_h, int k_w, int dil_h, int dil_w, int bits,
                         double tol, int kind)
{
	size_t taps = (size_t)cpg * k_h * k_w, nw = taps * lanes;
	float *w = malloc(nw * sizeof *w), *e = malloc(taps * (lanes == 1 ? 4 : 8) * sizeof *e);
	double *back = calloc(nw, sizeof *back);
	assert_non_null(w);
	assert_non_null(e);
	assert_non_null(back);
	for (size_t t = 0; t < taps; t++)
		for (int l = 0; l < lanes; l++) {
			double v = kind == 0 ? tu_sym() : kind == 1 ? 0.25 : (t % 2 ? -0.3 : 0.3);
			w[t * lanes + l] = (float)(lanes == 1 || kind == 1 ? v : v * (1 + 0.01 * l));
		}
	int ns, nf;
	spatial_plan_entries(w, lanes, cpg, 3, k_h, k_w, dil_h, dil_w, bits, tol, e, &ns, &nf);
	assert_int_equal(ns + 2 * nf, (int)taps);
	expand(e, ns + nf, lanes, k_h, k_w, dil_h, dil_w, 3, back);
	/* each fused pair moves its two weights by at most tol times their magnitudes' sum (and
	 * the stored sums are float32): summed over the taps, tol times the filter's */
	double sum = 0, err = 0;
	for (size_t i = 0; i < nw; i++) {
		err += fabs(back[i] - w[i]);
		sum += fabs(w[i]);
	}
	assert_true(err <= (tol + 1e-7) * sum);
	if (nf == 0)
		assert_true(err <= 1e-7 * sum); /* singles carry their weights as they are */
	for (int i = 0; i < ns; i++) /* singles come first and sit on texel centres */
		assert_true(e[i * (lanes == 1 ? 4 : 8)] == floor(e[i * (lanes == 1 ? 4 : 8)]));
	printf("entries lanes %d %dx%dx%d dil %d,%d bits %d kind %d: %d singles, %d fused\n", lanes,
	       cpg, k_h, k_w, dil_h, dil_w, bits, kind, ns, nf);
	if (kind == 1 && bits >= 1 && (dil_w == 1 || dil_h == 1) && taps > 1)
		assert_true(nf > 0); /* equal weights fuse at a = 1/2 */
	if (kind == 2 && dil_w == 1 && k_w > 1 && k_h == 1)
		assert_int_equal(nf, 0); /* alternating signs never fuse horizontally */
	free(w);
	free(e);
	free(back);
}

static void test_entries(void **state)
{
	(void)state;
	tu_seed_from_clock();
	double tol = ldexp(1, -11);
	entries_case(1, 2, 3, 3, 1, 1, 12, tol, 0);
	entries_case(1, 2, 3, 3, 1, 1, 12, tol, 1);
	entries_case(1, 1, 1, 7, 1, 1, 12, tol, 2);
	entries_case(1, 3, 5, 4, 1, 1, 8, ldexp(1, -9), 0);
	entries_case(1, 2, 7, 3, 2, 1, 12, tol, 1); /* dilated rows: horizontal pairs only */
	entries_case(1, 2, 4, 5, 1, 3, 12, tol, 1); /* dilated columns: vertical pairs */
	entries_case(1, 2, 3, 3, 2, 2, 12, tol, 1); /* both dilated: no pairs */
	entries_case(1, 1, 3, 3, 1, 1, 0, tol, 1);  /* no filtering */
	entries_case(4, 1, 5, 5, 1, 1, 12, tol, 1); /* image lanes, equal */
	entries_case(4, 1, 5, 5, 1, 1, 12, tol, 0); /* image lanes, differing: mostly singles */
}

static void test_shared(void **state)
{
	(void)state;
	struct spatial_geom g = geom();
	int chunk, cob, ww, wh;
	assert_int_equal(spatial_plan_shared(&g, &chunk, &cob, &ww, &wh), 0);
	assert_int_equal(ww, 31 * 2 + 5);
	assert_int_equal(wh, 7 + 3);
	assert_true(chunk * ww * wh <= SPATIAL_PLAN_SH_IN && cob * chunk * 15 <= SPATIAL_PLAN_SH_W);
	g.k_h = g.k_w = 40; /* 1600 taps: more than the weights' shared memory */
	assert_int_equal(spatial_plan_shared(&g, &chunk, &cob, &ww, &wh), -1);
	g.k_h = g.k_w = 15, g.stride_w = 3; /* a 108 x 22 window fits once */
	assert_int_equal(spatial_plan_shared(&g, &chunk, &cob, &ww, &wh), 0);
	assert_int_equal(chunk, 1);
	assert_int_equal(cob, 4);
}

/* gemm's tiles: every table entry is valid within 1024 invocations and 48 KiB (both layouts);
 * the rule's choices for the harness's shapes; broken tiles are refused with the rule named. */
static void test_gemm(void **state)
{
	(void)state;
	char err[SPATIAL_PLAN_ERR_LEN];
	for (int t = 1; t < SPATIAL_PLAN_GEMM_TILES; t++)
		for (int h = 0; h < 2; h++) {
			const struct spatial_gemm_tile *c = &spatial_plan_gemm_tiles[t];
			assert_int_equal(spatial_plan_gemm_valid(c, h, 1024, 49152, err), 0);
			assert_true(spatial_plan_gemm_shared(c, h) <= 49152);
		}
	struct spatial_gemm_tile bad = {128, 128, 8, 6, 8, 0};
	assert_int_equal(spatial_plan_gemm_valid(&bad, 0, 1024, 49152, err), -1);
	printf("refused: %s\n", err);
	bad = (struct spatial_gemm_tile){128, 128, 8, 4, 4, 0}; /* 1024 invocations: more than 256 */
	assert_int_equal(spatial_plan_gemm_valid(&bad, 0, 256, 49152, err), -1);
	bad = (struct spatial_gemm_tile){128, 128, 64, 8, 8, 0}; /* 128 KiB of shared memory */
	assert_int_equal(spatial_plan_gemm_valid(&bad, 0, 1024, 49152, err), -1);
	printf("refused: %s\n", err);
	/* B=16, 128 -> 128, 3x3, 128x128: the largest tile */
	struct spatial_geom g = {.batch = 16, .in_c = 128, .in_h = 128, .in_w = 128, .out_c = 128,
	                         .groups = 1, .k_h = 3, .k_w = 3, .out_h = 128, .out_w = 128};
	struct spatial_gemm_tile t;
	assert_int_equal(spatial_plan_gemm(&g, 0, &t), 1);
	/* the subkernels of 64 -> 32: 32 planes, 256x256 outputs */
	g.batch = 1, g.in_c = 64, g.out_c = 32, g.out_h = g.out_w = 256, g.k_h = g.k_w = 2;
	assert_int_equal(spatial_plan_gemm(&g, 0, &t), 6);
	assert_int_equal(t.bn, 32);
	/* one plane (an image's lanes as a batch): 256 x 4 */
	g.batch = 4, g.in_c = 1, g.out_c = 1, g.out_h = 1080, g.out_w = 1920, g.k_h = g.k_w = 5;
	assert_int_equal(spatial_plan_gemm(&g, 0, &t), 11);
	/* small: the most work groups the planes allow */
	g.batch = 1, g.in_c = 3, g.out_c = 8, g.out_h = g.out_w = 9;
	spatial_plan_gemm(&g, 0, &t);
	assert_true(t.bn <= 8);
	/* an explicit tile */
	assert_int_equal(spatial_plan_gemm(&g, 10, &t), 10);
	assert_int_equal(t.bk, 16);
}

static void test_rounding(void **state)
{
	(void)state;
	assert_true(spatial_plan_half(1.0f) == 1.0f);
	assert_true(spatial_plan_half(1.0f + ldexpf(1, -11)) == 1.0f);           /* tie to even */
	assert_true(spatial_plan_half(1.0f + 3 * ldexpf(1, -11)) == 1.0f + ldexpf(1, -9));
	assert_true(spatial_plan_half(65504.0f) == 65504.0f);
	assert_true(isinf(spatial_plan_half(65520.0f)));
	assert_true(spatial_plan_half(65519.0f) == 65504.0f);
	assert_true(spatial_plan_half(ldexpf(1, -24)) == ldexpf(1, -24));        /* subnormal */
	assert_true(spatial_plan_half(ldexpf(1, -26)) == 0.0f);
	assert_true(spatial_plan_half(-0.1f) == -spatial_plan_half(0.1f));
	tu_seed(99);
	for (int i = 0; i < 100000; i++) {
		float v = (float)(tu_sym() * 1000);
		float h = spatial_plan_half(v);
		assert_true(fabs((double)h - v) <= ldexp(fabs(v), -11));
	}
	assert_true(spatial_plan_q26(3.0f) == 127.0f / 64);
	assert_true(spatial_plan_q26(-3.0f) == -127.0f / 64);
	assert_true(spatial_plan_q26(0.3f) == 19.0f / 64);
	assert_true(spatial_plan_q26(-0.3f) == -19.0f / 64);
	assert_true(spatial_plan_q26(1.0f / 128) == 1.0f / 64); /* half up */
}

static void test_bound(void **state)
{
	(void)state;
	struct spatial_bound_in b = {3, 0, 10, 9, 1.0, 2.0, 1.0, 0.5, 0.7};
	double e3 = spatial_plan_bound(&b);
	assert_true(e3 > 0 && e3 < 1e-5);
	b.precision = 2;
	double e2 = spatial_plan_bound(&b);
	b.precision = 1;
	double e1 = spatial_plan_bound(&b);
	b.precision = 0;
	double e0 = spatial_plan_bound(&b);
	printf("bounds for 9 taps, S 1, A 2: L3 %.3g L2 %.3g L1 %.3g L0 %.3g\n", e3, e2, e1, e0);
	assert_true(e2 > e3 && e1 > e2 && e0 > e1);
	assert_true(e1 >= 2.0 * ldexp(1, -7) + ldexp(1, -7)); /* input steps times A, output step */
	b.interp = 1;
	assert_true(spatial_plan_bound(&b) > e0);
	b.taps = 1000;
	b.interp = 0;
	assert_true(spatial_plan_bound(&b) > e0); /* mediump sums grow with the taps */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_tiles),
		cmocka_unit_test(test_fuse),
		cmocka_unit_test(test_entries),
		cmocka_unit_test(test_shared),
		cmocka_unit_test(test_gemm),
		cmocka_unit_test(test_rounding),
		cmocka_unit_test(test_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
