/* The transposed convolution against a CPU reference in double precision that scatters each
 * input pixel's patch (the GPU methods gather): the worked examples (stride 2, padding 0; padding
 * 1 with output_padding 1; TF SAME to 4x4; TF VALID), random cases over kernel, stride,
 * padding, output_padding, dilation, groups, batch and the spatial algorithm underneath, every
 * method within the float32 bound of the reference and of each other; auto; impossible shapes.
 * Fresh random data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/conv_shape.h"
#include "gles/deconv.h"
#include "gles/deconv_plan.h"
#include "core/clock.h"
#include "tests/testutil.h"

static struct program_cache *g_pc;
static struct spatial_ctx *g_s;
static struct deconv_ctx *g_d;

static int setup(void **state)
{
	(void)state;
	struct egl_ctx *ctx = tu_gl_context();
	if (!ctx)
		return -1;
	tu_seed_from_clock();
	char err[SPATIAL_ERR_LEN];
	if (program_cache_create("", NULL, &g_pc) ||
	    spatial_ctx_create(g_pc, egl_ctx_info(ctx), NULL, NULL, &g_s, err) ||
	    deconv_ctx_create(g_pc, egl_ctx_info(ctx), g_s, NULL, &g_d, err)) {
		fprintf(stderr, "setup: %s\n", err);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	deconv_ctx_destroy(g_d);
	spatial_ctx_destroy(g_s);
	program_cache_destroy(g_pc);
	return 0;
}

static int dflt(int v) { return v ? v : 1; }

/* out[b, co, iy*s - p + j*d, ...] += x[b, ci, iy, ix] * w[ci, co', j, i]: the patches scattered,
 * in double, with each element's float32 bound (sum |w x| terms). */
static void reference(const struct deconv_conv *c, int oh, int ow, int pt, int pl, const float *x,
                      const float *w, const float *b, double *y, double *bound)
{
	int g = dflt(c->groups), cpi = c->in_c / g, cpo = c->out_c / g, dh = dflt(c->dil_h),
	    dw = dflt(c->dil_w);
	size_t n = (size_t)c->batch * c->out_c * oh * ow;
	double *sa = calloc(n, sizeof *sa);
	assert_non_null(sa);
	for (size_t i = 0; i < n; i++)
		y[i] = b ? b[(i / ((size_t)oh * ow)) % c->out_c] : 0;
	for (int bi = 0; bi < c->batch; bi++)
		for (int ci = 0; ci < c->in_c; ci++)
			for (int iy = 0; iy < c->in_h; iy++)
				for (int ix = 0; ix < c->in_w; ix++) {
					double xv = x[(((size_t)bi * c->in_c + ci) * c->in_h + iy) * c->in_w + ix];
					int grp = ci / cpi;
					for (int cl = 0; cl < cpo; cl++)
						for (int j = 0; j < c->k_h; j++)
							for (int i = 0; i < c->k_w; i++) {
								int oy = iy * c->stride_h - pt + j * dh, ox = ix * c->stride_w - pl + i * dw;
								if (oy < 0 || oy >= oh || ox < 0 || ox >= ow)
									continue;
								int co = grp * cpo + cl;
								double wv = w[(((size_t)ci * cpo + cl) * c->k_h + j) * c->k_w + i];
								size_t o = (((size_t)bi * c->out_c + co) * oh + oy) * ow + ox;
								y[o] += xv * wv;
								sa[o] += fabs(xv * wv);
							}
				}
	for (size_t i = 0; i < n; i++) {
		struct spatial_bound_in bi = {SPATIAL_FP32, 0, 10, (long)cpi * c->k_h * c->k_w, sa[i], 0, 0,
		                              b ? fabs(b[(i / ((size_t)oh * ow)) % c->out_c]) : 0,
		                              fabs(y[i])};
		bound[i] = spatial_plan_bound(&bi);
	}
	free(sa);
}

/* Every element within its bound (so the largest absolute error within the largest bound) and
 * the relative L2 error within 1e-5; prints the figures. */
static int check(const char *name, const float *got, const double *y, const double *bound,
                 size_t n)
{
	double worst = 0, bmax = 0;
	size_t bad = 0;
	for (size_t i = 0; i < n; i++)
		bmax = bound[i] > bmax ? bound[i] : bmax;
	for (size_t i = 0; i < n; i++) {
		double d = fabs((double)got[i] - y[i]), q = d / (bound[i] > 0 ? bound[i] : 1e-30);
		if (!(q <= worst))
			worst = q;
		if (!(d <= bound[i]) && bad++ < 3)
			printf("  %s: element %zu: got %.9g, want %.9g (bound %.3g)\n", name, i, got[i], y[i],
			       bound[i]);
	}
	int ok = tu_report(name, tu_rel_l2_f32(got, y, n), 1e-5, tu_max_abs_f32(got, y, n), bmax) && !bad;
	printf("    worst error / bound %.3f\n", worst);
	return ok;
}

/* ---- the worked examples ---- */

static const float EX_X[4] = {1, 2, 3, 4};
static const float EX_W[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};

static struct deconv_conv example(void)
{
	struct deconv_conv c;
	memset(&c, 0, sizeof c);
	c.batch = 1, c.in_c = 1, c.in_h = 2, c.in_w = 2, c.out_c = 1, c.k_h = 3, c.k_w = 3;
	c.stride_h = c.stride_w = 2;
	return c;
}

static void expect_example(struct deconv_conv c, const float *want, int wh, int ww)
{
	char err[DECONV_ERR_LEN];
	int oh, ow, pt, pl;
	assert_int_equal(deconv_output(&c, &oh, &ow, &pt, &pl, err), 0);
	assert_int_equal(oh, wh);
	assert_int_equal(ow, ww);
	/* the CPU reference gives the example's numbers too */
	double y[25], bound[25];
	reference(&c, oh, ow, pt, pl, EX_X, EX_W, NULL, y, bound);
	for (int i = 0; i < wh * ww; i++)
		assert_true(y[i] == want[i]);
	for (int m = DECONV_ZERO_INSERT; m < DECONV_METHOD_COUNT; m++)
		for (int alg = SPATIAL_ALG_AUTO; alg < SPATIAL_ALG_COUNT; alg++) {
			if (alg == SPATIAL_ALG_BATCH4 || alg == SPATIAL_ALG_INTERP)
				continue; /* batch 1 */
			if (alg == SPATIAL_ALG_WINOGRAD)
				continue; /* 3x3 at stride 1 only: these are zero-inserted or 2x2 */
			if (m == DECONV_OVERLAP_ADD && alg)
				continue; /* no spatial convolution underneath */
			c.method = m;
			c.conv_algorithm = alg;
			float got[25];
			struct deconv_stats st;
			int rc = deconv_run(g_d, &c, EX_X, EX_W, NULL, got, &st, err);
			if (rc)
				printf("%s: %s\n", deconv_method_name(m), err);
			assert_int_equal(rc, 0);
			for (int i = 0; i < wh * ww; i++)
				if (got[i] != want[i]) {
					printf("%s/%s: element %d: got %g, want %g\n", deconv_method_name(m),
					       spatial_algorithm_name(alg), i, got[i], want[i]);
					fail();
				}
		}
	printf("example %dx%d: every method exact\n", wh, ww);
}

static void test_examples(void **state)
{
	(void)state;
	static const float p0[25] = {1, 2, 5, 4, 6, 4, 5, 14, 10, 12, 10, 14, 36, 24, 30,
	                             12, 15, 34, 20, 24, 21, 24, 55, 32, 36};
	static const float p1[16] = {5, 14, 10, 12, 14, 36, 24, 30, 15, 34, 20, 24, 24, 55, 32, 36};
	static const float same[16] = {1, 2, 5, 4, 4, 5, 14, 10, 10, 14, 36, 24, 12, 15, 34, 20};
	struct deconv_conv c = example();
	expect_example(c, p0, 5, 5);
	c.pad_h = c.pad_w = 1, c.out_pad_h = c.out_pad_w = 1;
	expect_example(c, p1, 4, 4);
	c = example();
	c.padding_mode = DECONV_PAD_TF_SAME, c.out_h = c.out_w = 4;
	expect_example(c, same, 4, 4);
	c.out_h = c.out_w = 0; /* SAME's default: input * stride */
	expect_example(c, same, 4, 4);
	c = example();
	c.padding_mode = DECONV_PAD_TF_VALID; /* VALID's default 2*2 + 3 - 2 = 5: no padding */
	expect_example(c, p0, 5, 5);
}

/* ---- random cases ---- */

static float *rand_f(size_t n, float lo, float hi)
{
	float *p = malloc((n ? n : 1) * sizeof *p);
	assert_non_null(p);
	tu_fill_f32(p, n, lo, hi);
	return p;
}

static int irand(int lo, int hi) /* [lo, hi] */
{
	return lo + (int)(tu_uniform() * (hi - lo + 1));
}

#define WINOGRAD_SLACK 4.0

static int run_random(struct deconv_conv c, int with_bias)
{
	char err[DECONV_ERR_LEN], name[200];
	int oh, ow, pt, pl;
	assert_int_equal(deconv_output(&c, &oh, &ow, &pt, &pl, err), 0);
	int g = dflt(c.groups);
	size_t nx = (size_t)c.batch * c.in_c * c.in_h * c.in_w;
	size_t nw = (size_t)c.in_c * (c.out_c / g) * c.k_h * c.k_w;
	size_t ny = (size_t)c.batch * c.out_c * oh * ow;
	float *x = rand_f(nx, -1, 1), *w = rand_f(nw, -1, 1);
	float *b = with_bias ? rand_f((size_t)c.out_c, -1, 1) : NULL;
	double *y = malloc(ny * sizeof *y), *bound = malloc(ny * sizeof *bound);
	float *got[DECONV_METHOD_COUNT] = {0};
	/* a method on winograd: the direct sum's bound times WINOGRAD_SLACK (its F(4x4) rounding
	 * measured up to 1.3x the direct bound on test_spatial's shapes, whose own winograd bound,
	 * from the transforms' absolute values, holds it with room) */
	double wf[DECONV_METHOD_COUNT] = {1, 1, 1, 1}, *wb = malloc(ny * sizeof *wb);
	reference(&c, oh, ow, pt, pl, x, w, b, y, bound);
	int ok = 1;
	for (int m = DECONV_ZERO_INSERT; m < DECONV_METHOD_COUNT; m++) {
		c.method = m;
		got[m] = malloc(ny * sizeof(float));
		struct deconv_stats st;
		int rc = deconv_run(g_d, &c, x, w, b, got[m], &st, err);
		snprintf(name, sizeof name, "B%d %d->%d %dx%d k%dx%d s%d,%d p%d,%d op%d,%d d%d,%d g%d %s%s%s",
		         c.batch, c.in_c, c.out_c, c.in_h, c.in_w, c.k_h, c.k_w, c.stride_h, c.stride_w,
		         c.pad_h, c.pad_w, c.out_pad_h, c.out_pad_w, dflt(c.dil_h), dflt(c.dil_w), g,
		         deconv_method_name(m), m == DECONV_OVERLAP_ADD ? "" : "/",
		         m == DECONV_OVERLAP_ADD ? "" : spatial_algorithm_name(st.conv_algorithm));
		if (rc) {
			printf("%s: %s\n", name, err);
			ok = 0;
			continue;
		}
		if (m != DECONV_OVERLAP_ADD && st.conv_algorithm == SPATIAL_ALG_WINOGRAD)
			wf[m] = WINOGRAD_SLACK;
		for (size_t i = 0; i < ny; i++)
			wb[i] = wf[m] * bound[i];
		ok &= check(name, got[m], y, wb, ny);
	}
	/* the methods agree with each other within their two bounds */
	for (int m = DECONV_OVERLAP_ADD; ok && m < DECONV_METHOD_COUNT; m++)
		for (size_t i = 0; i < ny; i++)
			if (!(fabs((double)got[m][i] - got[DECONV_ZERO_INSERT][i]) <=
			      (wf[m] + wf[DECONV_ZERO_INSERT]) * bound[i])) {
				printf("methods disagree at %zu: %g vs %g\n", i, got[m][i], got[1][i]);
				ok = 0;
				break;
			}
	for (int m = 0; m < DECONV_METHOD_COUNT; m++)
		free(got[m]);
	free(x);
	free(w);
	free(b);
	free(y);
	free(bound);
	free(wb);
	return ok;
}

static void test_random(void **state)
{
	(void)state;
	int ok = 1, n = 0;
	static const int algs[] = {SPATIAL_ALG_AUTO, SPATIAL_ALG_PLANES4, SPATIAL_ALG_SHARED,
	                           SPATIAL_ALG_BATCH4, SPATIAL_ALG_INTERP, SPATIAL_ALG_GEMM};
	while (n < 36) {
		struct deconv_conv c;
		memset(&c, 0, sizeof c);
		c.groups = irand(1, 3) == 3 ? 2 : 1;
		c.batch = (int[]){1, 2, 4}[irand(0, 2)];
		c.in_c = c.groups * irand(1, 3);
		c.out_c = c.groups * irand(1, 3);
		c.in_h = irand(1, 7), c.in_w = irand(1, 7);
		c.k_h = irand(1, 5);
		c.k_w = irand(0, 2) ? c.k_h : irand(1, 5);
		c.stride_h = irand(1, 3);
		c.stride_w = irand(0, 2) ? c.stride_h : irand(1, 3);
		c.dil_h = irand(0, 3) ? 1 : 2;
		c.dil_w = irand(0, 3) ? c.dil_h : irand(1, 3);
		c.pad_h = irand(0, dflt(c.dil_h) * (c.k_h - 1) + 1);
		c.pad_w = irand(0, dflt(c.dil_w) * (c.k_w - 1) + 1);
		int mh = c.stride_h > c.dil_h ? c.stride_h : c.dil_h, mw = c.stride_w > c.dil_w ? c.stride_w : c.dil_w;
		c.out_pad_h = irand(0, mh - 1), c.out_pad_w = irand(0, mw - 1);
		c.conv_algorithm = algs[n % 6];
		if (c.batch % 4 && (c.conv_algorithm == SPATIAL_ALG_BATCH4 || c.conv_algorithm == SPATIAL_ALG_INTERP))
			c.conv_algorithm = SPATIAL_ALG_AUTO;
		int oh, ow, pt, pl;
		char err[DECONV_ERR_LEN];
		if (deconv_output(&c, &oh, &ow, &pt, &pl, err))
			continue; /* an empty output: drawn again */
		ok &= run_random(c, n % 2);
		n++;
	}
	assert_true(ok);
}

/* The harness's transposed shapes (conv_bench.sh: k4 s2 p1; k3 s2 p1 op1), shrunk, with gemm
 * under zero-insert and subkernel: planes that fill no tile (16 -> 24, 7 -> 5), a batch of 3,
 * groups, bias; every method within the float32 bound of the reference. */
static void test_gemm(void **state)
{
	(void)state;
	struct deconv_conv c;
	int ok = 1;
	for (int i = 0; i < 4; i++) {
		memset(&c, 0, sizeof c);
		c.batch = i == 1 ? 3 : 1;
		c.in_c = i == 2 ? 7 : 16, c.out_c = i == 2 ? 5 : 24;
		c.in_h = 13, c.in_w = 11;
		c.k_h = c.k_w = i % 2 ? 3 : 4;
		c.stride_h = c.stride_w = 2;
		c.pad_h = c.pad_w = 1;
		c.out_pad_h = c.out_pad_w = i % 2;
		if (i == 3)
			c.groups = 4, c.in_c = 8, c.out_c = 12, c.dil_h = 2;
		c.conv_algorithm = SPATIAL_ALG_GEMM;
		ok &= run_random(c, i != 2);
	}
	assert_true(ok);
}

/* winograd underneath: stride-1 3x3 transposed convolutions (zero insertion and sub-kernels
 * both run a 3x3 stride-1 convolution there) with paddings 0-2, a batch of 2 and bias, every
 * method against the float64 reference. */
static void test_winograd(void **state)
{
	(void)state;
	int ok = 1;
	for (int pad = 0; pad <= 2; pad++) {
		struct deconv_conv c;
		memset(&c, 0, sizeof c);
		c.batch = 2, c.in_c = 6, c.out_c = 5, c.in_h = 9, c.in_w = 7;
		c.k_h = c.k_w = 3;
		c.stride_h = c.stride_w = 1;
		c.pad_h = c.pad_w = pad;
		c.conv_algorithm = SPATIAL_ALG_WINOGRAD;
		ok &= run_random(c, pad != 1);
	}
	assert_true(ok);
}

/* TF SAME and VALID with odd padding totals and explicit shapes, non-square. */
static void test_tf(void **state)
{
	(void)state;
	struct deconv_conv c;
	memset(&c, 0, sizeof c);
	c.batch = 2, c.in_c = 3, c.in_h = 5, c.in_w = 4, c.out_c = 2, c.k_h = 4, c.k_w = 3;
	c.stride_h = 2, c.stride_w = 3;
	c.padding_mode = DECONV_PAD_TF_SAME;
	c.out_h = 9, c.out_w = 12; /* SAME: totals (4*2+4-9 = 3: top 1, bottom 2), (3*3+3-12 = 0) */
	int oh, ow, pt, pl;
	char err[DECONV_ERR_LEN];
	assert_int_equal(deconv_output(&c, &oh, &ow, &pt, &pl, err), 0);
	assert_int_equal(pt, 1);
	assert_int_equal(pl, 0);
	assert_true(run_random(c, 1));
	c.padding_mode = DECONV_PAD_TF_VALID;
	c.out_h = 12, c.out_w = 13; /* VALID: [4*2+4, 5*2+3] and [3*3+3, 4*3+2] */
	assert_int_equal(deconv_output(&c, &oh, &ow, &pt, &pl, err), 0);
	assert_int_equal(pt, 0);
	assert_true(run_random(c, 0));
	c.out_h = 11; /* below VALID's range */
	assert_int_equal(deconv_output(&c, &oh, &ow, &pt, &pl, err), DECONV_E_ARG);
	printf("%s\n", err);
}

static void test_auto(void **state)
{
	(void)state;
	struct deconv_conv c;
	memset(&c, 0, sizeof c);
	c.batch = 1, c.in_c = 4, c.in_h = 9, c.in_w = 8, c.out_c = 3, c.k_h = 4, c.k_w = 4;
	c.stride_h = c.stride_w = 2, c.pad_h = c.pad_w = 1;
	int oh, ow, pt, pl;
	char err[DECONV_ERR_LEN];
	assert_int_equal(deconv_output(&c, &oh, &ow, &pt, &pl, err), 0);
	size_t nx = 4 * 9 * 8, nw = 4 * 3 * 16, ny = (size_t)3 * oh * ow;
	float *x = rand_f(nx, -1, 1), *w = rand_f(nw, -1, 1), *got = malloc(ny * sizeof *got);
	double *y = malloc(ny * sizeof *y), *bound = malloc(ny * sizeof *bound);
	reference(&c, oh, ow, pt, pl, x, w, NULL, y, bound);
	c.time_stages = 1;
	for (int rep = 0; rep < 2; rep++) {
		struct deconv_stats st;
		assert_int_equal(deconv_run(g_d, &c, x, w, NULL, got, &st, err), 0);
		printf("auto call %d: %s, measured %d, gpu %.3f ms\n", rep, deconv_method_name(st.method),
		       st.measured, st.gpu_ms);
		assert_int_equal(st.measured, rep == 0);
		assert_true(st.timed != GPU_TIMING_NONE && st.stage_ms[GPU_STAGE_DECONV] > 0);
		assert_true(st.method >= DECONV_ZERO_INSERT && st.method < DECONV_METHOD_COUNT);
		assert_true(check("auto", got, y, bound, ny));
	}
	free(x);
	free(w);
	free(got);
	free(y);
	free(bound);
}

/* The context holds its overlap-add programs and the spatial plans under zero insertion and
 * sub-kernels hold theirs (program_hold): trimming the program cache between two runs of the same
 * shape, as the daemon does between jobs, deletes every program nobody holds, and the second run
 * of each method still computes the right answer on new data. */
static void test_trim_between_runs(void **state)
{
	(void)state;
	struct deconv_conv c;
	memset(&c, 0, sizeof c);
	c.batch = 2, c.in_c = 3, c.in_h = 5, c.in_w = 6, c.out_c = 2, c.k_h = 3, c.k_w = 4;
	c.stride_h = 2, c.stride_w = 3, c.pad_h = 1;
	c.conv_algorithm = SPATIAL_ALG_SHARED;
	int oh, ow, pt, pl;
	char err[DECONV_ERR_LEN];
	assert_int_equal(deconv_output(&c, &oh, &ow, &pt, &pl, err), 0);
	size_t nx = (size_t)2 * 3 * 5 * 6, nw = (size_t)3 * 2 * 12, ny = (size_t)2 * 2 * oh * ow;
	float *got = malloc(ny * sizeof *got);
	double *y = malloc(ny * sizeof *y), *bound = malloc(ny * sizeof *bound);
	for (int m = DECONV_ZERO_INSERT; m < DECONV_METHOD_COUNT; m++)
		for (int run = 0; run < 2; run++) {
			c.method = m;
			float *x = rand_f(nx, -1, 1), *w = rand_f(nw, -1, 1), *b = rand_f(2, -1, 1);
			reference(&c, oh, ow, pt, pl, x, w, b, y, bound);
			struct deconv_stats st;
			assert_int_equal(deconv_run(g_d, &c, x, w, b, got, &st, err), 0);
			char name[96];
			snprintf(name, sizeof name, "%s, %s the cache was trimmed", deconv_method_name(m),
			         run ? "after" : "before");
			assert_true(check(name, got, y, bound, ny));
			free(x), free(w), free(b);
			if (!run) {
				struct program_stats before, after;
				program_cache_stats(g_pc, &before);
				program_cache_trim(g_pc, 0, 0);
				program_cache_stats(g_pc, &after);
				printf("  trimmed: programs %u -> %u\n", before.count, after.count);
				assert_true(after.count >= 3); /* the context's three, at least */
			}
		}
	struct program_stats ps;
	program_cache_stats(g_pc, &ps);
	assert_true(ps.evictions > 0);
	free(got), free(y), free(bound);
}

static void test_errors(void **state)
{
	(void)state;
	char err[DECONV_ERR_LEN];
	int oh, ow, pt, pl;
	struct deconv_conv c = example();
	c.out_pad_h = 2; /* >= stride 2 and >= dilation 1 */
	assert_int_equal(deconv_output(&c, &oh, &ow, &pt, &pl, err), DECONV_E_ARG);
	printf("%s\n", err);
	c.dil_h = 3; /* now below the dilation: allowed, as PyTorch */
	assert_int_equal(deconv_output(&c, &oh, &ow, &pt, &pl, err), 0);
	c = example();
	c.pad_h = 3; /* (2-1)*2 - 6 + 2 + 1 = -1 */
	assert_int_equal(deconv_output(&c, &oh, &ow, &pt, &pl, err), DECONV_E_ARG);
	printf("%s\n", err);
	c = example();
	c.groups = 2; /* one input plane */
	assert_int_equal(deconv_output(&c, &oh, &ow, &pt, &pl, err), DECONV_E_ARG);
	printf("%s\n", err);
	c = example();
	c.padding_mode = DECONV_PAD_TF_SAME, c.out_h = c.out_w = 5; /* ceil(5/2) = 3, not 2 */
	assert_int_equal(deconv_output(&c, &oh, &ow, &pt, &pl, err), DECONV_E_ARG);
	printf("%s\n", err);
	c.out_h = c.out_w = 4, c.pad_h = 1;
	assert_int_equal(deconv_output(&c, &oh, &ow, &pt, &pl, err), DECONV_E_ARG);
	printf("%s\n", err);
	c = example();
	c.stride_w = 0;
	assert_int_equal(deconv_output(&c, &oh, &ow, &pt, &pl, err), DECONV_E_ARG);
	c = example();
	c.out_h = 6; /* torch mode: an output shape that the parameters do not give */
	assert_int_equal(deconv_output(&c, &oh, &ow, &pt, &pl, err), DECONV_E_ARG);
	c = example();
	c.method = 9;
	float out[25];
	assert_int_equal(deconv_run(g_d, &c, EX_X, EX_W, NULL, out, NULL, err), DECONV_E_ARG);
	c.method = DECONV_ZERO_INSERT;
	c.conv_algorithm = SPATIAL_ALG_BATCH4; /* batch 1 */
	assert_int_equal(deconv_run(g_d, &c, EX_X, EX_W, NULL, out, NULL, err), DECONV_E_UNSUPPORTED);
	printf("%s\n", err);
}

/* Issue 35: input (32768, 1, 1, 1), weight (1, 32768, 2, 2), dilation 65535, overlap-add: the
 * output (32768, 32768, 65536, 65536) of float32 is 2^64 bytes, which a plain multiply wraps to
 * 0 (a 0-byte buffer and a GPU loop without end). Checked, it is refused before any GL work,
 * at once; the same with batch 1 (2^49 bytes, no wrap) is refused too, as before. */
static void test_sizes_overflow(void **state)
{
	(void)state;
	char err[DECONV_ERR_LEN];
	struct deconv_conv c = {
		.batch = 32768, .in_c = 1, .in_h = 1, .in_w = 1, .out_c = 32768, .k_h = 2, .k_w = 2,
		.stride_h = 1, .stride_w = 1, .dil_h = 65535, .dil_w = 65535,
		.method = DECONV_OVERLAP_ADD,
	};
	int oh, ow, pt, pl;
	assert_int_equal(deconv_output(&c, &oh, &ow, &pt, &pl, err), 0);
	assert_int_equal(oh, 65536);
	assert_int_equal(ow, 65536);
	float *x = calloc(32768, sizeof *x), *w = calloc(32768 * 4, sizeof *w), out[4];
	assert_non_null(x);
	assert_non_null(w);
	struct deconv_problem pr;
	assert_int_equal(deconv_plan_problem(&c, x, w, out, &pr, err), 0);
	size_t in_b = 0, w_b = 0, out_b = 0;
	assert_int_equal(deconv_plan_bytes(&pr, &in_b, &w_b, &out_b, err), DECONV_E_TOO_LARGE);
	printf("%s\n", err);
	double t0 = clock_ms();
	assert_int_equal(deconv_run(g_d, &c, x, w, NULL, out, NULL, err), DECONV_E_TOO_LARGE);
	double ms = clock_ms() - t0;
	printf("refused in %.3f ms: %s\n", ms, err); /* before: no return (a GPU loop) */
	c.batch = 1; /* 2^49 bytes: no wrap, still far past the limits */
	assert_int_equal(deconv_plan_problem(&c, x, w, out, &pr, err), 0);
	assert_int_equal(deconv_plan_bytes(&pr, &in_b, &w_b, &out_b, err), DECONV_E_TOO_LARGE);
	assert_int_equal(deconv_run(g_d, &c, x, w, NULL, out, NULL, err), DECONV_E_TOO_LARGE);
	/* the bytes of a problem that fits, exactly */
	c = (struct deconv_conv){.batch = 3, .in_c = 2, .in_h = 5, .in_w = 7, .out_c = 4, .k_h = 3,
	                         .k_w = 2, .stride_h = 2, .stride_w = 1};
	assert_int_equal(deconv_plan_problem(&c, x, w, out, &pr, err), 0);
	assert_int_equal(deconv_plan_bytes(&pr, &in_b, &w_b, &out_b, err), 0);
	assert_true(in_b == 3 * 2 * 5 * 7 * 4);
	assert_true(w_b == 2 * 4 * 3 * 2 * 4);
	assert_true(out_b == (size_t)3 * 4 * pr.y.out * pr.x.out * 4);
	/* the tensors' description: weight.shape[1] x groups output planes past an int's range */
	struct conv_params cp = {.stride_h = 1, .stride_w = 1, .dil_h = 1, .dil_w = 1,
	                         .groups = 65536};
	const size_t xs[4] = {1, 65536, 1, 1}, ws[4] = {65536, 1 << 24, 1, 1};
	struct deconv_conv dc;
	int ndim;
	size_t oshape[4];
	char cerr[CONV_SHAPE_ERR_LEN];
	assert_int_equal(deconv_describe(4, xs, ws, -1, &cp, &dc, &ndim, oshape, cerr), -1);
	printf("%s\n", cerr);
	free(x), free(w);
}

int main(void)
{
	tu_test_filter();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_examples),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_gemm),
		cmocka_unit_test(test_winograd),
		cmocka_unit_test(test_tf),
		cmocka_unit_test(test_auto),
		cmocka_unit_test(test_trim_between_runs),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_sizes_overflow),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
