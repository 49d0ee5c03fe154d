/* The spatial convolution against a CPU direct convolution in double precision: batches 1, 3,
 * 4, 8; planes 1, 3, 16; kernels 1x1, 3x3, 5x5, 7x3; padding 0-3; strides 1-3; dilation and
 * groups; every algorithm at every precision, each output element within the level's bound
 * (spatial_plan_bound) and the relative L2 error within the level's figure; the interpolator's
 * pairs (opposite signs, f1 = -f2, equal weights) and its fallback without float filtering;
 * Q2.6 clamping; auto, and an algorithm asked for explicitly running the program auto ran for
 * it; the image path against the FFT path's semantics (and the FFT path
 * itself); errors for impossible shapes and limits. Fresh random data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/bloom.h"
#include "gles/spatial.h"
#include "tests/testutil.h"

static struct program_cache *g_pc;
static struct spatial_ctx *g_s;

/* The relative L2 error each level stays within on these inputs (inputs in [-1, 1], weights
 * in [-0.5, 0.5] / sqrt(taps), outputs of order 0.3; image kernels summing to about 1): the
 * per-element bound is the guarantee, these catch a drift. Q2.6's steps of 1/64 dominate
 * levels 0 and 1 (about 2.4e-2 on large outputs; the smallest cases, 99 outputs of a 3x3
 * kernel, reach 5e-2 by chance); float16 storage and (on llvmpipe) float16 sums, level 2. */
static const double REL_TOL[4] = {8e-2, 8e-2, 5e-3, 1e-5};

static int setup(void **state)
{
	(void)state;
	struct egl_ctx *ctx = tu_gl_context();
	if (!ctx)
		return -1;
	tu_seed_from_clock();
	char err[SPATIAL_ERR_LEN];
	if (program_cache_create("", NULL, &g_pc))
		return -1;
	if (spatial_ctx_create(g_pc, egl_ctx_info(ctx), NULL, NULL, &g_s, err)) {
		fprintf(stderr, "spatial_ctx_create: %s\n", err);
		return -1;
	}
	const struct spatial_caps *c = spatial_ctx_caps(g_s);
	printf("caps: float_linear %d, filter bits %d %d %d %d (deviation %.2e %.2e %.2e %.2e), "
	       "mediump bits %d, gemm f16vec2 %d\n", c->float_linear, c->filter_bits[0],
	       c->filter_bits[1], c->filter_bits[2], c->filter_bits[3], c->filter_dev[0],
	       c->filter_dev[1], c->filter_dev[2], c->filter_dev[3], c->mediump_bits, c->half2);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	spatial_ctx_destroy(g_s);
	program_cache_destroy(g_pc);
	return 0;
}

/* ---- the CPU reference: direct cross-correlation in double, with per-element bound terms ---- */

struct ref {
	double *y, *bound;
	size_t n;
};

static int dflt(int v) { return v ? v : 1; }

static void reference(const struct spatial_conv *c, const float *x, const float *w, const float *b,
                      int oh, int ow, int precision, int interp, struct ref *r)
{
	int groups = dflt(c->groups), dh = dflt(c->dil_h), dw = dflt(c->dil_w);
	int cpg = c->in_c / groups, cpo = c->out_c / groups;
	r->n = (size_t)c->batch * c->out_c * oh * ow;
	r->y = malloc(r->n * sizeof *r->y);
	r->bound = malloc(r->n * sizeof *r->bound);
	assert_non_null(r->y);
	assert_non_null(r->bound);
	size_t idx = 0;
	for (int bi = 0; bi < c->batch; bi++)
		for (int co = 0; co < c->out_c; co++)
			for (int oy = 0; oy < oh; oy++)
				for (int ox = 0; ox < ow; ox++, idx++) {
					double s = b ? b[co] : 0, sa = 0, aw = 0, mx = 0;
					int g = co / cpo;
					for (int cl = 0; cl < cpg; cl++)
						for (int j = 0; j < c->k_h; j++)
							for (int i = 0; i < c->k_w; i++) {
								double wv = w[(((size_t)co * cpg + cl) * c->k_h + j) * c->k_w + i];
								int iy = oy * c->stride_h - c->pad_h + j * dh;
								int ix = ox * c->stride_w - c->pad_w + i * dw;
								double xv = 0;
								if (iy >= 0 && iy < c->in_h && ix >= 0 && ix < c->in_w)
									xv = x[(((size_t)bi * c->in_c + g * cpg + cl) * c->in_h + iy) *
									       c->in_w + ix];
								s += wv * xv;
								sa += fabs(wv * xv);
								aw += fabs(wv);
								mx = fmax(mx, fabs(xv));
							}
					struct spatial_bound_in bi_ = {
						precision, interp, spatial_ctx_caps(g_s)->mediump_bits,
						(long)cpg * c->k_h * c->k_w, sa, aw, mx, b ? fabs(b[co]) : 0, fabs(s)};
					r->y[idx] = s;
					r->bound[idx] = spatial_plan_bound(&bi_);
				}
}

/* winograd's own rounding on top of the direct sum's bound: F(m x m, 3 x 3) computes
 * Y = A^T [sum over planes (G g G^T) . (B^T d B)] A in float32, so to first order its error is
 * at most gamma_n |A^T| [sum |G||g||G^T| . |B^T||d||B|] |A| (Higham's bound for sums and
 * products, the absolute values of every matrix and value), n the roundings along one path:
 * 12 in the input's transform, 8 in the weights' (their 1/6, 1/24 rounded too), 1 product, Cin
 * in the sum over planes, 12 in the output's transform and 1 for the bias. Adds that to
 * r->bound (3x3, stride 1, one group: what winograd runs). */
static void winograd_bound(const struct spatial_conv *c, const float *x, const float *w, int oh,
                           int ow, int m, struct ref *r)
{
	static const double bt2[4][4] = {{1, 0, 1, 0}, {0, 1, 1, 0}, {0, 1, 1, 0}, {0, 1, 0, 1}};
	static const double at2[2][4] = {{1, 1, 1, 0}, {0, 1, 1, 1}};
	static const double g2[4][3] = {{1, 0, 0}, {.5, .5, .5}, {.5, .5, .5}, {0, 0, 1}};
	static const double bt4[6][6] = {{4, 0, 5, 0, 1, 0}, {0, 4, 4, 1, 1, 0}, {0, 4, 4, 1, 1, 0},
	                                 {0, 2, 1, 2, 1, 0}, {0, 2, 1, 2, 1, 0}, {0, 4, 0, 5, 0, 1}};
	static const double at4[4][6] = {{1, 1, 1, 1, 1, 0}, {0, 1, 1, 2, 2, 0}, {0, 1, 1, 4, 4, 0},
	                                 {0, 1, 1, 8, 8, 1}};
	static const double g4[6][3] = {{.25, 0, 0}, {1. / 6, 1. / 6, 1. / 6}, {1. / 6, 1. / 6, 1. / 6},
	                                {1. / 24, 1. / 12, 1. / 6}, {1. / 24, 1. / 12, 1. / 6}, {0, 0, 1}};
	int n = m + 2;
	double bt[6][6], at[4][6], gm[6][3];
	for (int a = 0; a < n; a++) {
		for (int k = 0; k < n; k++)
			bt[a][k] = m == 2 ? bt2[a][k] : bt4[a][k];
		for (int k = 0; k < 3; k++)
			gm[a][k] = m == 2 ? g2[a][k] : g4[a][k];
	}
	for (int i = 0; i < m; i++)
		for (int k = 0; k < n; k++)
			at[i][k] = m == 2 ? at2[i][k] : at4[i][k];
	double u = ldexp(1, -24), steps = 12 + 8 + 1 + c->in_c + 12 + 1;
	double gamma = steps * u / (1 - steps * u);
	int tx = (ow + m - 1) / m, ty = (oh + m - 1) / m;
	double *uv = malloc(sizeof *uv * 36 * c->in_c), *vv = malloc(sizeof *vv * 36 * c->in_c);
	assert_true(uv && vv);
	for (int bi = 0; bi < c->batch; bi++)
		for (int t0 = 0; t0 < ty; t0++)
			for (int t1 = 0; t1 < tx; t1++) {
				for (int cl = 0; cl < c->in_c; cl++) { /* |B^T| |d| |B| */
					double d[6][6], e[6][6];
					for (int i = 0; i < n; i++)
						for (int j = 0; j < n; j++) {
							int iy = t0 * m - c->pad_h + i, ix = t1 * m - c->pad_w + j;
							d[i][j] = iy >= 0 && iy < c->in_h && ix >= 0 && ix < c->in_w
							          ? fabs(x[(((size_t)bi * c->in_c + cl) * c->in_h + iy) *
							                     c->in_w + ix]) : 0;
						}
					for (int a = 0; a < n; a++)
						for (int j = 0; j < n; j++) {
							e[a][j] = 0;
							for (int k = 0; k < n; k++)
								e[a][j] += bt[a][k] * d[k][j];
						}
					for (int a = 0; a < n; a++)
						for (int bb = 0; bb < n; bb++) {
							double s = 0;
							for (int k = 0; k < n; k++)
								s += e[a][k] * bt[bb][k];
							uv[cl * 36 + a * n + bb] = s;
						}
				}
				for (int co = 0; co < c->out_c; co++) {
					for (int cl = 0; cl < c->in_c; cl++) { /* |G| |g| |G^T| */
						const float *k = w + ((size_t)co * c->in_c + cl) * 9;
						double e[6][3];
						for (int a = 0; a < n; a++)
							for (int j = 0; j < 3; j++)
								e[a][j] = gm[a][0] * fabs(k[j]) + gm[a][1] * fabs(k[3 + j]) +
								          gm[a][2] * fabs(k[6 + j]);
						for (int a = 0; a < n; a++)
							for (int bb = 0; bb < n; bb++)
								vv[cl * 36 + a * n + bb] = e[a][0] * gm[bb][0] +
								                           e[a][1] * gm[bb][1] + e[a][2] * gm[bb][2];
					}
					double mm[6][6] = {{0}};
					for (int cl = 0; cl < c->in_c; cl++)
						for (int a = 0; a < n; a++)
							for (int bb = 0; bb < n; bb++)
								mm[a][bb] += vv[cl * 36 + a * n + bb] * uv[cl * 36 + a * n + bb];
					for (int i = 0; i < m; i++)
						for (int j = 0; j < m; j++) {
							int oy = t0 * m + i, ox = t1 * m + j;
							if (oy >= oh || ox >= ow)
								continue;
							double s = 0;
							for (int a = 0; a < n; a++)
								for (int bb = 0; bb < n; bb++)
									s += at[i][a] * mm[a][bb] * at[j][bb];
							r->bound[(((size_t)bi * c->out_c + co) * oh + oy) * ow + ox] +=
								gamma * s;
						}
				}
			}
	free(uv);
	free(vv);
}

static int g_winograd_m = 4; /* the F(m x m) of winograd's runs (test_winograd sets it) */

/* reference for the algorithm that ran: winograd's bound widened by its own rounding. */
static void reference_for(const struct spatial_conv *c, const float *x, const float *w,
                          const float *b, int oh, int ow, int precision, int alg, struct ref *r)
{
	reference(c, x, w, b, oh, ow, precision, alg == SPATIAL_ALG_INTERP, r);
	if (alg == SPATIAL_ALG_WINOGRAD)
		winograd_bound(c, x, w, oh, ow, g_winograd_m, r);
}

static void ref_free(struct ref *r)
{
	free(r->y);
	free(r->bound);
}

/* Compares; returns 1 when every element is within its bound (so the largest absolute error
 * within the largest bound) and rel L2 within tol. Elements whose exact value leaves the Q2.6
 * range (clamped by design) are skipped at levels 0 and 1. */
static int compare(const char *name, const float *got, const struct ref *r, int precision,
                   double tol)
{
	double worst = 0, num = 0, den = 0, maxabs = 0, bmax = 0;
	size_t skipped = 0, bad = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (precision <= 1 && fabs(r->y[i]) > 1.98) {
			skipped++;
			continue;
		}
		double d = fabs((double)got[i] - r->y[i]);
		bmax = r->bound[i] > bmax ? r->bound[i] : bmax;
		num += d * d;
		den += r->y[i] * r->y[i];
		if (!(d <= maxabs))
			maxabs = d;
		double q = d / r->bound[i];
		if (!(q <= worst))
			worst = q;
		if (!(d <= r->bound[i])) {
			if (bad++ < 3)
				printf("  %s: element %zu: got %.9g, want %.9g (bound %.3g)\n", name, i, got[i],
				       r->y[i], r->bound[i]);
		}
	}
	double rel = den > 0 ? sqrt(num / den) : sqrt(num);
	int ok = tu_report(name, rel, tol, maxabs, bmax) && !bad;
	printf("    worst error / bound %.3f%s", worst, skipped ? "" : "\n");
	if (skipped)
		printf(", %zu clamped elements skipped\n", skipped);
	return ok;
}

static float *rand_f(size_t n, float lo, float hi)
{
	float *p = malloc((n ? n : 1) * sizeof *p);
	assert_non_null(p);
	tu_fill_f32(p, n, lo, hi);
	return p;
}

/* winograd's shapes: 3x3, stride 1, no dilation or groups, precision 2 or 3. */
static int winograd_fits(const struct spatial_conv *c, int prec)
{
	return c->k_h == 3 && c->k_w == 3 && dflt(c->stride_h) == 1 && dflt(c->stride_w) == 1 &&
	       dflt(c->dil_h) == 1 && dflt(c->dil_w) == 1 && dflt(c->groups) == 1 && prec >= 2;
}

/* Runs c with every algorithm at every precision and checks each; batch4 and interp must
 * refuse a batch that is not a multiple of 4, winograd the shapes it does not run. */
static void run_case(struct spatial_conv c, int with_bias)
{
	int oh, ow;
	char err[SPATIAL_ERR_LEN];
	assert_int_equal(spatial_conv_output(&c, &oh, &ow, err), 0);
	int groups = dflt(c.groups);
	size_t nx = (size_t)c.batch * c.in_c * c.in_h * c.in_w;
	size_t nw = (size_t)c.out_c * (c.in_c / groups) * c.k_h * c.k_w;
	size_t ny = (size_t)c.batch * c.out_c * oh * ow;
	double wscale = 0.5 / sqrt((double)(c.in_c / groups) * c.k_h * c.k_w);
	float *x = rand_f(nx, -1, 1), *w = rand_f(nw, -(float)wscale, (float)wscale);
	float *b = with_bias ? rand_f((size_t)c.out_c, -0.25f, 0.25f) : NULL;
	float *y = malloc(ny * sizeof *y);
	assert_non_null(y);
	int all_ok = 1;
	for (int prec = 0; prec < 4; prec++) {
		for (int alg = SPATIAL_ALG_BATCH4; alg < SPATIAL_ALG_COUNT; alg++) {
			c.precision = prec;
			c.algorithm = alg;
			struct spatial_stats st;
			int rc = spatial_conv2d(g_s, &c, x, w, b, y, &st, err);
			char name[160];
			snprintf(name, sizeof name, "B%d %d->%d %dx%d k%dx%d p%d,%d s%d,%d d%d g%d %s L%d",
			         c.batch, c.in_c, c.out_c, c.in_h, c.in_w, c.k_h, c.k_w, c.pad_h, c.pad_w,
			         c.stride_h, c.stride_w, dflt(c.dil_h), groups, spatial_algorithm_name(alg),
			         prec);
			if (((alg == SPATIAL_ALG_BATCH4 || alg == SPATIAL_ALG_INTERP) && c.batch % 4) ||
			    (alg == SPATIAL_ALG_WINOGRAD && !winograd_fits(&c, prec))) {
				if (rc != SPATIAL_E_UNSUPPORTED) {
					printf("%s: expected unsupported, got %d (%s)\n", name, rc, err);
					all_ok = 0;
				}
				continue;
			}
			if (rc) {
				printf("%s: %s\n", name, err);
				all_ok = 0;
				continue;
			}
			struct ref r;
			reference_for(&c, x, w, b, oh, ow, prec, alg, &r);
			if (!compare(name, y, &r, prec, REL_TOL[prec]))
				all_ok = 0;
			ref_free(&r);
		}
	}
	free(x);
	free(w);
	free(b);
	free(y);
	assert_true(all_ok);
}

static struct spatial_conv conv(int b, int cin, int h, int w, int cout, int kh, int kw, int ph,
                                int pw, int sh, int sw)
{
	struct spatial_conv c = {b, cin, h, w, cout, kh, kw, ph, pw, sh, sw, 1, 1, 1, 3, 0, 0};
	return c;
}

static void test_batches_and_planes(void **state)
{
	(void)state;
	run_case(conv(1, 1, 9, 11, 1, 3, 3, 1, 1, 1, 1), 1);
	run_case(conv(3, 3, 10, 8, 5, 5, 5, 2, 2, 1, 1), 1);
	run_case(conv(4, 16, 8, 9, 16, 3, 3, 1, 1, 1, 1), 1);
	run_case(conv(8, 3, 7, 7, 4, 1, 1, 0, 0, 1, 1), 0);
}

static void test_kernels_padding_stride(void **state)
{
	(void)state;
	run_case(conv(4, 3, 13, 12, 2, 7, 3, 3, 0, 2, 1), 1);
	run_case(conv(4, 1, 11, 11, 3, 5, 5, 0, 3, 3, 2), 1);
	run_case(conv(1, 16, 9, 10, 3, 3, 3, 2, 1, 3, 3), 1);
	run_case(conv(3, 3, 6, 7, 3, 1, 1, 3, 2, 2, 2), 0);
}

static void test_dilation_groups(void **state)
{
	(void)state;
	struct spatial_conv c = conv(4, 6, 12, 11, 4, 3, 3, 2, 2, 1, 2);
	c.dil_h = 2, c.dil_w = 3, c.groups = 2;
	run_case(c, 1);
	c = conv(1, 4, 9, 9, 4, 3, 3, 1, 1, 1, 1);
	c.groups = 4; /* depthwise */
	run_case(c, 1);
}

/* The interpolator on weights chosen to pair: opposite signs and f1 = -f2 must fall back to two
 * fetches; equal weights (a = 1/2) and 3:1 (a = 1/4) fuse where the filter allows. */
static void test_interp_pairs(void **state)
{
	(void)state;
	struct spatial_conv c = conv(4, 2, 8, 9, 3, 3, 4, 1, 1, 1, 1);
	int oh, ow;
	char err[SPATIAL_ERR_LEN];
	assert_int_equal(spatial_conv_output(&c, &oh, &ow, err), 0);
	size_t nx = (size_t)c.batch * c.in_c * c.in_h * c.in_w, nw = (size_t)c.out_c * c.in_c * 12;
	float *x = rand_f(nx, -1, 1), *w = malloc(nw * sizeof *w), *y = malloc(sizeof *y * c.batch * c.out_c * oh * ow);
	assert_non_null(w);
	assert_non_null(y);
	const struct spatial_caps *caps = spatial_ctx_caps(g_s);
	for (int kind = 0; kind < 3; kind++) {
		for (size_t i = 0; i < nw; i += 2) {
			float f = (float)(0.05 + 0.2 * tu_uniform());
			if (kind == 0) /* f1 = -f2 */
				w[i] = f, w[i + 1] = -f;
			else if (kind == 1) /* opposite signs, unequal */
				w[i] = f, w[i + 1] = -0.37f * f;
			else /* equal, then 3:1 */
				w[i] = f, w[i + 1] = (i / 2) % 2 ? f : f / 3;
		}
		for (int prec = 0; prec < 4; prec++) {
			c.precision = prec;
			c.algorithm = SPATIAL_ALG_INTERP;
			struct spatial_stats st;
			assert_int_equal(spatial_conv2d(g_s, &c, x, w, NULL, y, &st, err), 0);
			struct ref r;
			reference(&c, x, w, NULL, oh, ow, prec, 1, &r);
			char name[96];
			snprintf(name, sizeof name, "interp pairs kind %d L%d (fused %ld, single %ld)", kind,
			         prec, st.fused, st.singles);
			assert_true(compare(name, y, &r, prec, REL_TOL[prec]));
			ref_free(&r);
			if (kind < 2)
				assert_int_equal(st.fused, 0);
			/* equal weights fuse at a = 1/2 wherever the filter resolves one bit */
			if (kind == 2 && caps->filter_bits[prec] >= 1)
				assert_true(st.fused > 0);
		}
	}
	free(x);
	free(w);
	free(y);
}

/* Without OES_texture_float_linear, float32 textures are not filterable: no pair fuses at level
 * 3 and interp still computes the right result. */
static void test_interp_no_float_linear(void **state)
{
	(void)state;
	struct spatial_opts o = {0};
	o.no_float_linear = 1;
	struct spatial_ctx *s;
	char err[SPATIAL_ERR_LEN];
	assert_int_equal(spatial_ctx_create(g_pc, egl_ctx_info(tu_gl_context()), &o, NULL, &s, err), 0);
	assert_int_equal(spatial_ctx_caps(s)->float_linear, 0);
	assert_int_equal(spatial_ctx_caps(s)->filter_bits[3], 0);
	struct spatial_conv c = conv(4, 3, 7, 8, 2, 3, 3, 1, 1, 1, 1);
	c.algorithm = SPATIAL_ALG_INTERP;
	int oh, ow;
	assert_int_equal(spatial_conv_output(&c, &oh, &ow, err), 0);
	size_t nx = (size_t)4 * 3 * 7 * 8, nw = (size_t)2 * 3 * 9;
	float *x = rand_f(nx, -1, 1), *w = rand_f(nw, 0.1f, 0.1f), *y = malloc(sizeof *y * 4 * 2 * oh * ow);
	struct spatial_stats st;
	assert_int_equal(spatial_conv2d(s, &c, x, w, NULL, y, &st, err), 0);
	assert_int_equal(st.fused, 0);
	struct ref r;
	reference(&c, x, w, NULL, oh, ow, 3, 1, &r);
	assert_true(compare("interp, float32 not filterable", y, &r, 3, REL_TOL[3]));
	ref_free(&r);
	spatial_ctx_destroy(s);
	free(x);
	free(w);
	free(y);
}

/* Q2.6 clamps inputs and outputs to +-127/64 and rounds them to 1/64. */
static void test_q26_clamp(void **state)
{
	(void)state;
	struct spatial_conv c = conv(4, 1, 1, 3, 1, 1, 1, 0, 0, 1, 1);
	float x[12] = {3.0f, -5.0f, 0.3f, 1.0f, 1.0f, 1.0f, -0.01f, 0.02f, 1.99f,
	               0.5f, -0.5f, 0.25f};
	float w1 = 1.0f, w2 = 2.0f, y[12];
	char err[SPATIAL_ERR_LEN];
	for (int prec = 0; prec < 2; prec++)
		for (int alg = SPATIAL_ALG_BATCH4; alg < SPATIAL_ALG_COUNT; alg++) {
			if (alg == SPATIAL_ALG_WINOGRAD)
				continue; /* 3x3 kernels at precisions 2 and 3 only */
			c.precision = prec;
			c.algorithm = alg;
			assert_int_equal(spatial_conv2d(g_s, &c, x, &w1, NULL, y, NULL, err), 0);
			for (int i = 0; i < 12; i++) /* the weight is 1: output = input as stored */
				assert_float_equal(y[i], spatial_plan_q26(x[i]), 1e-7);
			assert_int_equal(spatial_conv2d(g_s, &c, x, &w2, NULL, y, NULL, err), 0);
			for (int i = 0; i < 12; i++) /* 2 x stored input, stored again */
				assert_float_equal(y[i], spatial_plan_q26(2 * spatial_plan_q26(x[i])), 1e-7);
		}
	printf("Q2.6: 3.0 -> %g, -5.0 -> %g, 0.3 -> %g\n", spatial_plan_q26(3.0f),
	       spatial_plan_q26(-5.0f), spatial_plan_q26(0.3f));
}

/* auto measures once per shape class, then reuses its choice; the result is right either way. */
static void test_auto(void **state)
{
	(void)state;
	struct spatial_conv c = conv(4, 5, 10, 10, 6, 3, 3, 1, 1, 1, 1);
	c.algorithm = SPATIAL_ALG_AUTO;
	c.time_stages = 1;
	int oh, ow;
	char err[SPATIAL_ERR_LEN];
	assert_int_equal(spatial_conv_output(&c, &oh, &ow, err), 0);
	size_t nx = (size_t)4 * 5 * 100, nw = (size_t)6 * 5 * 9;
	float *x = rand_f(nx, -1, 1), *w = rand_f(nw, -0.1f, 0.1f), *y = malloc(sizeof *y * 4 * 6 * 100);
	for (int rep = 0; rep < 2; rep++) {
		struct spatial_stats st;
		assert_int_equal(spatial_conv2d(g_s, &c, x, w, NULL, y, &st, err), 0);
		printf("auto call %d: %s, measured %d, gpu %.3f ms\n", rep,
		       spatial_algorithm_name(st.algorithm), st.measured, st.gpu_ms);
		assert_int_equal(st.measured, rep == 0);
		assert_true(st.timed != GPU_TIMING_NONE && st.stage_ms[GPU_STAGE_CONV] > 0);
		assert_true(st.algorithm >= SPATIAL_ALG_BATCH4 && st.algorithm < SPATIAL_ALG_COUNT);
		struct ref r;
		reference_for(&c, x, w, NULL, oh, ow, 3, st.algorithm, &r);
		assert_true(compare("auto", y, &r, 3, REL_TOL[3]));
		ref_free(&r);
	}
	free(x);
	free(w);
	free(y);
}

/* A plan keeps its programs across calls, held (program_hold): trimming the program cache
 * between two runs of the same shape, as the daemon does between jobs, deletes every program
 * nobody holds (the probes', the packing programs compiled ahead), and the second run of each
 * algorithm still computes the right answer on new data. */
static void test_trim_between_runs(void **state)
{
	(void)state;
	struct spatial_conv c = conv(4, 3, 9, 8, 2, 3, 3, 1, 1, 1, 1);
	int oh, ow;
	char err[SPATIAL_ERR_LEN];
	assert_int_equal(spatial_conv_output(&c, &oh, &ow, err), 0);
	size_t nx = (size_t)4 * 3 * 9 * 8, nw = (size_t)2 * 3 * 9, ny = (size_t)4 * 2 * oh * ow;
	float *y = malloc(ny * sizeof *y);
	for (int alg = SPATIAL_ALG_BATCH4; alg < SPATIAL_ALG_COUNT; alg++)
		for (int run = 0; run < 2; run++) {
			c.algorithm = alg;
			c.precision = alg == SPATIAL_ALG_INTERP ? 2 : 3;
			float *x = rand_f(nx, -1, 1), *w = rand_f(nw, -0.2f, 0.2f);
			struct spatial_stats st;
			assert_int_equal(spatial_conv2d(g_s, &c, x, w, NULL, y, &st, err), 0);
			struct ref r;
			reference_for(&c, x, w, NULL, oh, ow, c.precision, alg, &r);
			char name[96];
			snprintf(name, sizeof name, "%s, %s the cache was trimmed", spatial_algorithm_name(alg),
			         run ? "after" : "before");
			assert_true(compare(name, y, &r, c.precision, REL_TOL[c.precision]));
			ref_free(&r);
			free(x);
			free(w);
			if (!run) {
				struct program_stats a, b;
				program_cache_stats(g_pc, &a);
				program_cache_trim(g_pc, 0, 0);
				program_cache_stats(g_pc, &b);
				printf("  trimmed: programs %u -> %u (%llu deleted so far)\n", a.count, b.count,
				       b.evictions);
				assert_true(b.evictions > a.evictions || a.count == b.count);
				assert_true(b.count >= 1); /* the plan's, held */
			}
		}
	struct program_stats ps;
	program_cache_stats(g_pc, &ps);
	assert_true(ps.evictions > 0);
	free(y);
}

static void test_errors(void **state)
{
	(void)state;
	char err[SPATIAL_ERR_LEN];
	float x[64] = {0}, w[64] = {0}, y[64];
	int oh, ow;
	/* kernel larger than the padded input */
	struct spatial_conv c = conv(1, 1, 3, 3, 1, 5, 5, 0, 0, 1, 1);
	assert_int_equal(spatial_conv_output(&c, &oh, &ow, err), SPATIAL_E_ARG);
	printf("kernel too large: %s\n", err);
	assert_int_equal(spatial_conv2d(g_s, &c, x, w, NULL, y, NULL, err), SPATIAL_E_ARG);
	/* planes not divisible by groups */
	c = conv(1, 3, 4, 4, 2, 1, 1, 0, 0, 1, 1);
	c.groups = 2;
	assert_int_equal(spatial_conv2d(g_s, &c, x, w, NULL, y, NULL, err), SPATIAL_E_ARG);
	printf("groups: %s\n", err);
	/* zero stride, negative padding, empty input, bad precision and algorithm */
	c = conv(1, 1, 4, 4, 1, 1, 1, 0, 0, 0, 1);
	assert_int_equal(spatial_conv2d(g_s, &c, x, w, NULL, y, NULL, err), SPATIAL_E_ARG);
	c = conv(1, 1, 4, 4, 1, 1, 1, -1, 0, 1, 1);
	assert_int_equal(spatial_conv2d(g_s, &c, x, w, NULL, y, NULL, err), SPATIAL_E_ARG);
	c = conv(0, 1, 4, 4, 1, 1, 1, 0, 0, 1, 1);
	assert_int_equal(spatial_conv2d(g_s, &c, x, w, NULL, y, NULL, err), SPATIAL_E_ARG);
	c = conv(1, 1, 4, 4, 1, 1, 1, 0, 0, 1, 1);
	c.precision = 4;
	assert_int_equal(spatial_conv2d(g_s, &c, x, w, NULL, y, NULL, err), SPATIAL_E_ARG);
	c.precision = 3;
	c.algorithm = 7;
	assert_int_equal(spatial_conv2d(g_s, &c, x, w, NULL, y, NULL, err), SPATIAL_E_ARG);
	/* batch4 needs a batch multiple of 4 */
	c.algorithm = SPATIAL_ALG_BATCH4;
	assert_int_equal(spatial_conv2d(g_s, &c, x, w, NULL, y, NULL, err), SPATIAL_E_UNSUPPORTED);
	printf("batch4, batch 1: %s\n", err);
	/* limits: more input planes than texture layers; wider than a texture */
	const struct spatial_caps *caps = spatial_ctx_caps(g_s);
	int planes = caps->max_layers + 1;
	float *big = calloc((size_t)4 * planes, sizeof *big), *bw = calloc((size_t)planes, sizeof *bw);
	float by[4];
	assert_non_null(big);
	assert_non_null(bw);
	c = conv(4, planes, 1, 1, 1, 1, 1, 0, 0, 1, 1);
	c.algorithm = SPATIAL_ALG_BATCH4;
	assert_int_equal(spatial_conv2d(g_s, &c, big, bw, NULL, by, NULL, err), SPATIAL_E_TOO_LARGE);
	printf("too many planes: %s\n", err);
	c.algorithm = SPATIAL_ALG_SHARED; /* no textures: runs */
	assert_int_equal(spatial_conv2d(g_s, &c, big, bw, NULL, by, NULL, err), 0);
	free(big);
	free(bw);
	int wide = caps->max_texture_size + 5;
	float *wx = rand_f((size_t)4 * wide, -1, 1), *wy = malloc(sizeof *wy * 4 * wide), one = 1;
	c = conv(4, 1, 1, wide, 1, 1, 1, 0, 0, 1, 1);
	c.algorithm = SPATIAL_ALG_BATCH4;
	assert_int_equal(spatial_conv2d(g_s, &c, wx, &one, NULL, wy, NULL, err), SPATIAL_E_TOO_LARGE);
	printf("too wide: %s\n", err);
	c.algorithm = SPATIAL_ALG_AUTO; /* auto finds one that fits: the storage-buffer kinds */
	struct spatial_stats st;
	assert_int_equal(spatial_conv2d(g_s, &c, wx, &one, NULL, wy, &st, err), 0);
	assert_true(st.algorithm == SPATIAL_ALG_SHARED || st.algorithm == SPATIAL_ALG_GEMM);
	for (int i = 0; i < 4 * wide; i++)
		assert_float_equal(wy[i], wx[i], 0);
	free(wx);
	free(wy);
}

/* One convolution on context s at a precision with an algorithm against the reference;
 * returns 1 when within the bounds (prints the measured errors either way). */
static int check_one(struct spatial_ctx *s, struct spatial_conv c, int prec, int alg,
                     const char *what)
{
	int oh, ow;
	char err[SPATIAL_ERR_LEN];
	assert_int_equal(spatial_conv_output(&c, &oh, &ow, err), 0);
	int groups = dflt(c.groups);
	size_t nx = (size_t)c.batch * c.in_c * c.in_h * c.in_w;
	size_t nw = (size_t)c.out_c * (c.in_c / groups) * c.k_h * c.k_w;
	double wscale = 0.5 / sqrt((double)(c.in_c / groups) * c.k_h * c.k_w);
	float *x = rand_f(nx, -1, 1), *w = rand_f(nw, -(float)wscale, (float)wscale);
	float *b = rand_f((size_t)c.out_c, -0.25f, 0.25f);
	float *y = malloc((size_t)c.batch * c.out_c * oh * ow * sizeof *y);
	assert_non_null(y);
	c.precision = prec;
	c.algorithm = alg;
	c.time_stages = 1;
	struct spatial_stats st;
	int ok = 0, rc = spatial_conv2d(s, &c, x, w, b, y, &st, err);
	char name[240];
	snprintf(name, sizeof name, "%s: B%d %d->%d %dx%d k%dx%d p%d s%d g%d %s L%d (program %u, "
	         "gpu %.3f ms)", what, c.batch, c.in_c, c.out_c, c.in_h, c.in_w, c.k_h, c.k_w,
	         c.pad_h, c.stride_h, groups, spatial_algorithm_name(st.algorithm), prec,
	         st.conv_program, st.gpu_ms);
	if (rc) {
		printf("%s: %s\n", name, err);
	} else {
		struct ref r;
		reference_for(&c, x, w, b, oh, ow, prec, st.algorithm, &r);
		ok = compare(name, y, &r, prec, REL_TOL[prec]);
		ref_free(&r);
	}
	free(x);
	free(w);
	free(b);
	free(y);
	return ok;
}

/* gemm with every tile of its table (spatial_opts.gemm_tile): planes that fill no tile (37 out,
 * 13 in: K = 117, several K-slices and a partial one), odd sizes, a batch of 3, bias, at
 * float32, and with packed float16 pairs (precision 2) on the largest tile and on the tiles
 * holding A as halves (a16). */
static void test_gemm_tiles(void **state)
{
	(void)state;
	int ok = 1;
	for (int t = 1; t < SPATIAL_PLAN_GEMM_TILES; t++) {
		struct spatial_opts o = {0};
		o.gemm_tile = t;
		o.gemm_half2 = 1; /* precision 2's packed kernel (float32 at precision 3) */
		struct spatial_ctx *s;
		char err[SPATIAL_ERR_LEN];
		assert_int_equal(spatial_ctx_create(g_pc, egl_ctx_info(tu_gl_context()), &o, NULL, &s,
		                                    err), 0);
		const struct spatial_gemm_tile *gt = &spatial_plan_gemm_tiles[t];
		char what[64];
		snprintf(what, sizeof what, "tile %d (%dx%dx%d / %dx%d%s)", t, gt->bm, gt->bn, gt->bk,
		         gt->tm, gt->tn, gt->a16 ? ", A as halves" : "");
		ok &= check_one(s, conv(3, 13, 11, 9, 37, 3, 3, 1, 1, 1, 1), 3, SPATIAL_ALG_GEMM, what);
		if (t == 1 || gt->a16) /* the packed float16 kernel: the rule's tile for many planes
		                        * (test_gemm_shapes runs it on the rule's other tiles) */
			ok &= check_one(s, conv(2, 13, 7, 9, 37, 3, 3, 1, 1, 2, 2), 2, SPATIAL_ALG_GEMM,
			                what);
		spatial_ctx_destroy(s);
	}
	assert_true(ok);
}

/* winograd, F(4x4, 3x3) and F(2x2, 3x3) (spatial_opts.winograd_m): output sizes that fill no
 * whole block, paddings 0-2, a batch of 3, many planes, bias, at precisions 3 and 2, each
 * within the level's bound of the float64 reference; shapes it cannot run are refused as
 * unsupported. */
static void test_winograd(void **state)
{
	(void)state;
	int ok = 1;
	const struct egl_info *info = egl_ctx_info(tu_gl_context());
	struct spatial_conv shapes[] = {
		conv(3, 13, 11, 9, 37, 3, 3, 1, 1, 1, 1),  /* 11x9: blocks cut at both edges */
		conv(2, 40, 10, 12, 72, 3, 3, 1, 1, 1, 1), /* many planes */
		conv(1, 5, 17, 6, 3, 3, 3, 0, 0, 1, 1),    /* no padding: 15x4 */
		conv(2, 4, 7, 9, 6, 3, 3, 2, 2, 1, 1),     /* padding 2: 9x11 */
	};
	for (int m = 2; m <= 4; m += 2) {
		struct spatial_opts o = {0};
		o.winograd_m = m;
		g_winograd_m = m;
		struct spatial_ctx *s;
		char err[SPATIAL_ERR_LEN];
		assert_int_equal(spatial_ctx_create(g_pc, info, &o, NULL, &s, err), 0);
		char what[32];
		snprintf(what, sizeof what, "F(%dx%d, 3x3)", m, m);
		for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
			for (int prec = 3; prec >= 2; prec--)
				ok &= check_one(s, shapes[i], prec, SPATIAL_ALG_WINOGRAD, what);
		spatial_ctx_destroy(s);
	}
	g_winograd_m = 4;
	struct spatial_conv no[] = {
		conv(1, 4, 9, 9, 4, 5, 5, 2, 2, 1, 1), /* 5x5 */
		conv(1, 4, 9, 9, 4, 3, 3, 1, 1, 2, 2), /* stride 2 */
	};
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
		struct spatial_conv c = no[i];
		c.algorithm = SPATIAL_ALG_WINOGRAD;
		c.precision = 3;
		int oh, ow;
		char err[SPATIAL_ERR_LEN];
		assert_int_equal(spatial_conv_output(&c, &oh, &ow, err), 0);
		float *x = rand_f((size_t)c.in_c * c.in_h * c.in_w, -1, 1);
		float *w = rand_f((size_t)c.out_c * c.in_c * c.k_h * c.k_w, -1, 1);
		float *y = malloc((size_t)c.out_c * oh * ow * sizeof *y);
		assert_int_equal(spatial_conv2d(g_s, &c, x, w, NULL, y, NULL, err), SPATIAL_E_UNSUPPORTED);
		printf("refused: %s\n", err);
		free(x), free(w), free(y);
	}
	assert_true(ok);
}

/* gemm at precision 2 in each arithmetic (spatial_opts.gemm_half2: float32 on the level's
 * float16 values, the default; packed float16) on the many-plane, batch-of-3 and 15x15 shapes,
 * each within the level's bound of the float64 reference, and auto at precision 2 (GPU times
 * printed, not asserted). */
static void test_gemm_arithmetic(void **state)
{
	(void)state;
	int ok = 1;
	const struct egl_info *info = egl_ctx_info(tu_gl_context());
	struct spatial_conv shapes[] = {
		conv(2, 40, 10, 12, 72, 3, 3, 1, 1, 1, 1),
		conv(3, 10, 9, 8, 12, 3, 3, 1, 1, 1, 1),
		conv(4, 1, 20, 17, 1, 15, 15, 7, 7, 1, 1),
	};
	for (int half2 = 0; half2 <= 1; half2++) {
		struct spatial_opts o = {0};
		o.gemm_half2 = half2;
		struct spatial_ctx *s;
		char err[SPATIAL_ERR_LEN];
		assert_int_equal(spatial_ctx_create(g_pc, info, &o, NULL, &s, err), 0);
		for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
			ok &= check_one(s, shapes[i], 2, SPATIAL_ALG_GEMM,
			                half2 ? "packed float16" : "float32 arithmetic");
		spatial_ctx_destroy(s);
	}
	ok &= check_one(g_s, shapes[0], 2, SPATIAL_ALG_AUTO, "auto");
	assert_true(ok);
}

/* gemm on the rule's tiles for the shape classes the harness has (many planes, one plane of a
 * batch, 1x1, 5x5 and 15x15 kernels, strides), shrunk for llvmpipe, every precision. */
static void test_gemm_shapes(void **state)
{
	(void)state;
	int ok = 1;
	for (int prec = 0; prec < 4; prec++)
		ok &= check_one(g_s, conv(2, 40, 10, 12, 72, 3, 3, 1, 1, 1, 1), prec, SPATIAL_ALG_GEMM,
		                "many planes");
	ok &= check_one(g_s, conv(4, 1, 23, 31, 1, 5, 5, 2, 2, 1, 1), 3, SPATIAL_ALG_GEMM, "image 5x5");
	ok &= check_one(g_s, conv(4, 1, 20, 17, 1, 15, 15, 7, 7, 1, 1), 2, SPATIAL_ALG_GEMM,
	                "image 15x15");
	ok &= check_one(g_s, conv(1, 24, 9, 7, 20, 1, 1, 0, 0, 1, 1), 3, SPATIAL_ALG_GEMM, "1x1");
	ok &= check_one(g_s, conv(3, 5, 15, 14, 6, 4, 4, 1, 2, 3, 3), 1, SPATIAL_ALG_GEMM, "stride 3");
	assert_true(ok);
}

/* One explicit case of test_explicit_is_auto: runs c (algorithm set) three times on s, the
 * last output into y; the conv program, the pack program and the last GPU time out. */
static void run_thrice(struct spatial_ctx *s, struct spatial_conv c, const float *x,
                       const float *w, const float *b, float *y, struct spatial_stats *st)
{
	char err[SPATIAL_ERR_LEN];
	c.time_stages = 1;
	for (int i = 0; i < 3; i++) {
		int rc = spatial_conv2d(s, &c, x, w, b, y, st, err);
		if (rc)
			printf("%s: %s\n", spatial_algorithm_name(c.algorithm), err);
		assert_int_equal(rc, 0);
	}
}

/* Host arrays through the mapped staging buffers (the default where GL_EXT_buffer_storage is)
 * and through the driver's updates and maps (spatial_opts.no_persistent_map): the context says
 * which it takes, and both give the same bits, call after call (the mapped upload reuses its
 * buffer once its last copy is done). */
static void test_persistent_map_choice(void **state)
{
	(void)state;
	struct spatial_conv c = conv(2, 6, 13, 11, 5, 3, 3, 1, 1, 1, 1);
	c.precision = 3;
	c.algorithm = SPATIAL_ALG_GEMM;
	int oh, ow;
	char err[SPATIAL_ERR_LEN];
	assert_int_equal(spatial_conv_output(&c, &oh, &ow, err), 0);
	size_t nx = (size_t)c.batch * c.in_c * c.in_h * c.in_w, nw = (size_t)c.out_c * c.in_c * 9;
	size_t ny = (size_t)c.batch * c.out_c * oh * ow;
	float *y[2][2], *x[2], *w[2];
	for (int call = 0; call < 2; call++) /* two calls' inputs, the same for both contexts */
		x[call] = rand_f(nx, -1, 1), w[call] = rand_f(nw, -0.2f, 0.2f);
	const struct egl_info *info = egl_ctx_info(tu_gl_context());
	for (int off = 0; off < 2; off++) {
		struct spatial_opts o = {.no_persistent_map = off};
		struct spatial_ctx *s;
		assert_int_equal(spatial_ctx_create(g_pc, info, &o, NULL, &s, err), 0);
		assert_int_equal(spatial_ctx_caps(s)->persistent_map, off ? 0 : info->buffer_storage);
		for (int call = 0; call < 2; call++) {
			y[off][call] = malloc(ny * sizeof(float));
			assert_non_null(y[off][call]);
			assert_int_equal(spatial_conv2d(s, &c, x[call], w[call], NULL, y[off][call], NULL,
			                                err), 0);
		}
		spatial_ctx_destroy(s);
	}
	for (int call = 0; call < 2; call++)
		free(x[call]), free(w[call]);
	printf("persistent map %d: the mapped and unmapped transfers' answers %s\n",
	       info->buffer_storage, !memcmp(y[0][0], y[1][0], ny * sizeof(float)) &&
	       !memcmp(y[0][1], y[1][1], ny * sizeof(float)) ? "identical" : "DIFFER");
	for (int call = 0; call < 2; call++)
		assert_memory_equal(y[0][call], y[1][call], ny * sizeof(float));
	for (int off = 0; off < 2; off++)
		free(y[off][0]), free(y[off][1]);
}

/* The algorithm auto picks and the same algorithm asked for explicitly run one program: in a
 * context of its own (as a process that asks for it would), the explicit call compiles nothing
 * (the program cache's misses do not move: the plan's programs are the ones auto built, one
 * id a (shader, key) and the defines derived from the key), runs the same conv and pack
 * programs, and writes the same bits, each within the level's bound of the float64 reference.
 * Both paths' GPU times are printed (llvmpipe; a timing is never asserted). */
static void test_explicit_is_auto(void **state)
{
	(void)state;
	struct {
		struct spatial_conv c;
		int prec;
		const char *what;
	} cases[] = {
		{conv(4, 12, 11, 10, 16, 3, 3, 1, 1, 1, 1), 3, "many planes"},
		{conv(4, 1, 27, 33, 1, 5, 5, 2, 2, 1, 1), 3, "image 5x5"},
		{conv(3, 10, 9, 8, 12, 3, 3, 1, 1, 1, 1), 2, "batch 3, float16"},
	};
	int ok = 1;
	for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
		struct spatial_conv c = cases[ci].c;
		c.precision = cases[ci].prec;
		int oh, ow;
		char err[SPATIAL_ERR_LEN];
		assert_int_equal(spatial_conv_output(&c, &oh, &ow, err), 0);
		size_t nx = (size_t)c.batch * c.in_c * c.in_h * c.in_w;
		size_t nw = (size_t)c.out_c * c.in_c * c.k_h * c.k_w;
		size_t ny = (size_t)c.batch * c.out_c * oh * ow;
		double ws = 0.5 / sqrt((double)c.in_c * c.k_h * c.k_w);
		float *x = rand_f(nx, -1, 1), *w = rand_f(nw, -(float)ws, (float)ws);
		float *b = rand_f((size_t)c.out_c, -0.25f, 0.25f);
		float *ya = malloc(ny * sizeof *ya), *ye = malloc(ny * sizeof *ye);
		assert_true(ya && ye);
		struct spatial_ctx *sa, *se;
		const struct egl_info *info = egl_ctx_info(tu_gl_context());
		assert_int_equal(spatial_ctx_create(g_pc, info, NULL, NULL, &sa, err), 0);
		struct spatial_stats sta, ste;
		c.algorithm = SPATIAL_ALG_AUTO;
		run_thrice(sa, c, x, w, b, ya, &sta);
		struct program_stats before, after;
		program_cache_stats(g_pc, &before);
		assert_int_equal(spatial_ctx_create(g_pc, info, NULL, NULL, &se, err), 0);
		c.algorithm = sta.algorithm;
		run_thrice(se, c, x, w, b, ye, &ste);
		program_cache_stats(g_pc, &after);
		int same_bits = !memcmp(ya, ye, ny * sizeof *ya);
		printf("%s L%d: auto picks %s (program %u, pack %u, gpu %.3f ms); explicit %s "
		       "(program %u, pack %u, gpu %.3f ms); compiles by the explicit context %llu; "
		       "outputs %s\n", cases[ci].what, c.precision, spatial_algorithm_name(sta.algorithm),
		       sta.conv_program, sta.pack_program, sta.gpu_ms,
		       spatial_algorithm_name(ste.algorithm), ste.conv_program, ste.pack_program,
		       ste.gpu_ms, after.misses - before.misses, same_bits ? "identical" : "DIFFER");
		ok &= ste.algorithm == sta.algorithm && sta.conv_program && ste.conv_program ==
		      sta.conv_program && ste.pack_program == sta.pack_program &&
		      after.misses == before.misses && same_bits;
		struct ref r;
		reference_for(&c, x, w, b, oh, ow, c.precision, sta.algorithm, &r);
		ok &= compare(cases[ci].what, ye, &r, c.precision, REL_TOL[c.precision]);
		ref_free(&r);
		spatial_ctx_destroy(se);
		spatial_ctx_destroy(sa);
		free(x), free(w), free(b), free(ya), free(ye);
	}
	assert_true(ok);
}

/* ---- images ---- */

/* Kernel channel value for image lane ch: the FFT path's rule. */
static double kval(const struct image *k, int x, int y, int ch, int gray)
{
	const float *p = k->pixels + ((size_t)y * k->width + x) * k->channels;
	if (k->channels <= 2 || gray)
		return p[0];
	if (ch < 3)
		return p[ch];
	return 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
}

static int kernel_gray(const struct image *k)
{
	if (k->channels <= 2)
		return 1;
	for (int i = 0; i < k->width * k->height; i++) {
		const float *p = k->pixels + (size_t)i * k->channels;
		if (p[0] != p[1] || p[1] != p[2])
			return 0;
	}
	return 1;
}

/* O[y,x] = sum I[y-(j-cy), x-(i-cx)] K[j,i] on RGBA doubles, then the result's channels. */
static void image_ref(const struct image *in, const struct image *k, int cx, int cy, double scale,
                      int out_ch, double *out, double *bound, int precision)
{
	int w = in->width, h = in->height, gray = kernel_gray(k);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			double v[4], b[4];
			for (int ch = 0; ch < 4; ch++) {
				double s = 0, sa = 0, aw = 0, mx = 0;
				for (int j = 0; j < k->height; j++)
					for (int i = 0; i < k->width; i++) {
						int yy = y - (j - cy), xx = x - (i - cx);
						double kv = kval(k, i, j, ch, gray) * scale, iv = 0;
						if (yy >= 0 && yy < h && xx >= 0 && xx < w) {
							const float *p = in->pixels + ((size_t)yy * w + xx) * in->channels;
							int c = in->channels;
							iv = c <= 2 ? (ch < 3 ? p[0] : (c == 2 ? p[1] : 1.0))
							            : (ch < 3 ? p[ch] : (c == 4 ? p[3] : 1.0));
							if (!isfinite(iv))
								iv = 0;
						}
						s += kv * iv, sa += fabs(kv * iv), aw += fabs(kv), mx = fmax(mx, fabs(iv));
					}
				struct spatial_bound_in bi = {precision, 0, spatial_ctx_caps(g_s)->mediump_bits,
				                              (long)k->width * k->height, sa, aw, mx, 0, fabs(s)};
				v[ch] = s;
				b[ch] = spatial_plan_bound(&bi);
			}
			static const int map[5][4] = {{0}, {0}, {0, 3}, {0, 1, 2}, {0, 1, 2, 3}};
			for (int c = 0; c < out_ch; c++) {
				out[((size_t)y * w + x) * out_ch + c] = v[map[out_ch][c]];
				bound[((size_t)y * w + x) * out_ch + c] = b[map[out_ch][c]];
			}
		}
}

static struct image rand_image(int w, int h, int c, float lo, float hi)
{
	struct image im;
	assert_int_equal(image_alloc(&im, w, h, c), 0);
	tu_fill_f32(im.pixels, (size_t)w * h * c, lo, hi);
	return im;
}

static int g_tiled; /* image_case must run in several tiles (1) or in one (0) */

static void image_case(int w, int h, int ch, int kw, int kh, int kch, int gray, int cx, int cy,
                       int normalize, int precision, int alg)
{
	struct image in = rand_image(w, h, ch, 0, 1);
	struct image k = rand_image(kw, kh, kch, 0.5f / (kw * kh), 1.5f / (kw * kh));
	if (gray && kch >= 3)
		for (int i = 0; i < kw * kh; i++)
			k.pixels[i * kch + 1] = k.pixels[i * kch + 2] = k.pixels[i * kch];
	struct spatial_image_opts o = {cx, cy, normalize, precision, alg, 0};
	struct image out;
	struct spatial_stats st;
	char err[SPATIAL_ERR_LEN];
	int rc = spatial_convolve_image(g_s, &in, &k, &o, &out, &st, err);
	if (rc)
		printf("image: %s\n", err);
	assert_int_equal(rc, 0);
	if (g_tiled) {
		print_message("  %dx%d in %dx%d tiles\n", w, h, st.tiles_x, st.tiles_y);
		assert_true(st.tiles_x * st.tiles_y > 1);
	} else {
		assert_int_equal(st.tiles_x * st.tiles_y, 1);
	}
	int want_ch = ch + (!kernel_gray(&k) && ch <= 2 ? 2 : 0);
	assert_int_equal(out.channels, want_ch);
	assert_int_equal(out.width, w);
	assert_int_equal(out.height, h);
	double lum = 0;
	for (int j = 0; j < kh; j++)
		for (int i = 0; i < kw; i++) {
			int g = kernel_gray(&k);
			lum += 0.2126 * kval(&k, i, j, 0, g) + 0.7152 * kval(&k, i, j, 1, g) +
			       0.0722 * kval(&k, i, j, 2, g);
		}
	size_t n = (size_t)w * h * want_ch;
	struct ref r = {malloc(n * sizeof(double)), malloc(n * sizeof(double)), n};
	image_ref(&in, &k, cx < 0 ? kw / 2 : cx, cy < 0 ? kh / 2 : cy, normalize ? 1 / lum : 1, want_ch,
	          r.y, r.bound, precision);
	char name[128];
	snprintf(name, sizeof name, "image %dx%dx%d k%dx%dx%d%s c%d,%d n%d L%d %s", w, h, ch, kw, kh,
	         kch, gray ? " gray" : "", cx, cy, normalize, precision,
	         spatial_algorithm_name(st.algorithm));
	assert_true(compare(name, out.pixels, &r, precision, REL_TOL[precision]));
	ref_free(&r);
	image_free(&out);
	image_free(&in);
	image_free(&k);
}

static void test_image(void **state)
{
	(void)state;
	image_case(23, 17, 4, 5, 5, 3, 0, -1, -1, 0, 3, SPATIAL_ALG_BATCH4);
	image_case(23, 17, 4, 5, 5, 3, 0, -1, -1, 0, 3, SPATIAL_ALG_INTERP);
	image_case(20, 9, 1, 4, 6, 1, 1, -1, -1, 1, 3, SPATIAL_ALG_BATCH4); /* even kernel */
	image_case(20, 9, 1, 3, 3, 3, 0, 0, 2, 0, 3, SPATIAL_ALG_AUTO);     /* gray in, colour k */
	image_case(16, 12, 2, 7, 3, 4, 0, 6, 0, 0, 2, SPATIAL_ALG_INTERP);
	image_case(16, 12, 3, 3, 5, 3, 1, -1, -1, 1, 2, SPATIAL_ALG_INTERP); /* gray RGB kernel */
	image_case(11, 13, 3, 3, 3, 2, 1, -1, -1, 0, 1, SPATIAL_ALG_BATCH4);
	image_case(11, 13, 4, 1, 1, 1, 1, -1, -1, 0, 0, SPATIAL_ALG_INTERP);
}

/* Tiles: a context whose image passes may take 64 KiB (2048 pixels with their halo)
 * runs images in overlap-save tiles, against the same reference and bounds: uneven halos,
 * kernels wider than a tile's output, gray and colour, both algorithms. */
static void test_image_tiles(void **state)
{
	(void)state;
	struct spatial_ctx *keep = g_s;
	struct spatial_opts so = {.frame_bytes = 64u << 10};
	char err[SPATIAL_ERR_LEN];
	assert_int_equal(spatial_ctx_create(g_pc, egl_ctx_info(tu_gl_context()), &so, NULL, &g_s,
	                                    err), 0);
	g_tiled = 1;
	image_case(71, 45, 4, 5, 5, 3, 0, -1, -1, 0, 3, SPATIAL_ALG_BATCH4);
	image_case(90, 33, 3, 9, 3, 3, 1, 0, 2, 1, 3, SPATIAL_ALG_INTERP);
	image_case(50, 50, 1, 4, 11, 3, 0, 3, 0, 0, 3, SPATIAL_ALG_AUTO);
	image_case(107, 20, 2, 17, 5, 1, 1, -1, -1, 0, 2, SPATIAL_ALG_BATCH4);
	g_tiled = 0;
	spatial_ctx_destroy(g_s);
	g_s = keep;
}

/* The same convolution through the FFT path (gles/bloom, op convolve): both agree, for images
 * of 1-4 channels (missing alpha 1, not returned), gray and colour kernels (1, 3, 4 channels;
 * a colour kernel gives a gray image colour), normalised or not. Both sides are checked
 * against CPU references on their own: the spatial path in test_image above, the FFT path in
 * test_bloom (test_convolve_small, its direct convolution in double). */
static void test_image_vs_fft(void **state)
{
	(void)state;
	struct egl_ctx *ctx = tu_gl_context();
	struct bloom_ctx *b;
	char err[BLOOM_ERR_LEN];
	assert_int_equal(bloom_ctx_create(g_pc, egl_ctx_info(ctx), NULL, NULL, &b, err), 0);
	static const int cases[][3] = {{3, 3, 0}, {3, 3, 1}, {1, 1, 0}, {1, 3, 1}, {2, 4, 0},
	                               {2, 1, 1}, {4, 3, 0}, {4, 2, 1}};
	for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
		int normalize = cases[ci][2];
		struct image in = rand_image(40, 27, cases[ci][0], 0, 2);
		struct image k = rand_image(7, 5, cases[ci][1], 0.01f, 0.2f);
		in.pixels[5] = NAN; /* non-finite samples count as 0 on both paths */
		struct bloom_params p;
		tu_params(&p, BLOOM_OP_CONVOLVE);
		p.normalize = normalize ? BLOOM_NORMALIZE_LUMINANCE : BLOOM_NORMALIZE_NONE;
		tu_param(&p, BLOOM_OP_CONVOLVE, "kernel_center", "2,1");
		struct bloom_kernel bk = {&k, {0, 0}};
		struct bloom_stats bst;
		struct image fo, so;
		assert_int_equal(bloom_run(b, BLOOM_OP_CONVOLVE, &in, &bk, &p, 0, &fo, &bst, err), 0);
		struct spatial_image_opts o = {2, 1, normalize, SPATIAL_FP32, SPATIAL_ALG_AUTO, 0};
		assert_int_equal(spatial_convolve_image(g_s, &in, &k, &o, &so, NULL, err), 0);
		assert_int_equal(fo.channels, so.channels);
		size_t n = (size_t)fo.width * fo.height * fo.channels;
		double *ref = malloc(n * sizeof *ref);
		for (size_t i = 0; i < n; i++)
			ref[i] = fo.pixels[i];
		char name[96];
		snprintf(name, sizeof name, "spatial vs FFT convolve, %d ch, kernel %d ch%s",
		         cases[ci][0], cases[ci][1], normalize ? ", normalised" : "");
		assert_true(tu_check(name, so.pixels, ref, n, 1e-5));
		free(ref);
		image_free(&fo);
		image_free(&so);
		image_free(&in);
		image_free(&k);
	}
	bloom_ctx_destroy(b);
}

static void test_image_errors(void **state)
{
	(void)state;
	struct image in = rand_image(8, 8, 3, 0, 1), k = rand_image(3, 3, 1, 0, 1), out;
	char err[SPATIAL_ERR_LEN];
	struct spatial_image_opts o = {-1, -1, 0, 3, SPATIAL_ALG_AUTO, 0};
	k.pixels[4] = INFINITY;
	assert_int_equal(spatial_convolve_image(g_s, &in, &k, &o, &out, NULL, err), SPATIAL_E_ARG);
	printf("non-finite kernel: %s\n", err);
	k.pixels[4] = 0.5f;
	o.center_x = 3;
	assert_int_equal(spatial_convolve_image(g_s, &in, &k, &o, &out, NULL, err), SPATIAL_E_ARG);
	printf("centre: %s\n", err);
	o.center_x = -1;
	o.algorithm = SPATIAL_ALG_SHARED;
	assert_int_equal(spatial_convolve_image(g_s, &in, &k, &o, &out, NULL, err),
	                 SPATIAL_E_UNSUPPORTED);
	o.algorithm = SPATIAL_ALG_AUTO;
	o.normalize = 1;
	k.pixels[0] = -1, k.pixels[1] = 1;
	for (int i = 2; i < 9; i++)
		k.pixels[i] = 0;
	assert_int_equal(spatial_convolve_image(g_s, &in, &k, &o, &out, NULL, err), SPATIAL_E_ARG);
	printf("zero luminance: %s\n", err);
	double ms5, ms15;
	assert_int_equal(spatial_image_estimate(g_s, 1920, 1080, 5, 5, 3, &ms5, err), 0);
	assert_int_equal(spatial_image_estimate(g_s, 1920, 1080, 15, 15, 3, &ms15, err), 0);
	printf("estimate 1080p: 5x5 %.2f ms, 15x15 %.2f ms\n", ms5, ms15);
	assert_true(ms15 > ms5 && ms5 > 0);
	image_free(&in);
	image_free(&k);
}

int main(void)
{
	tu_test_filter();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batches_and_planes),
		cmocka_unit_test(test_kernels_padding_stride),
		cmocka_unit_test(test_dilation_groups),
		cmocka_unit_test(test_interp_pairs),
		cmocka_unit_test(test_interp_no_float_linear),
		cmocka_unit_test(test_q26_clamp),
		cmocka_unit_test(test_auto),
		cmocka_unit_test(test_trim_between_runs),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_gemm_tiles),
		cmocka_unit_test(test_gemm_shapes),
		cmocka_unit_test(test_gemm_arithmetic),
		cmocka_unit_test(test_winograd),
		cmocka_unit_test(test_explicit_is_auto),
		cmocka_unit_test(test_persistent_map_choice),
		cmocka_unit_test(test_image),
		cmocka_unit_test(test_image_tiles),
		cmocka_unit_test(test_image_vs_fft),
		cmocka_unit_test(test_image_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
