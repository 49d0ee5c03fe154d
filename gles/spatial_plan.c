/* Spatial convolution planning; see spatial_plan.h. */
#include "gles/spatial_plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/spatial.h"

/* a * b * c * d as a count, or SPATIAL_PLAN_MAX_ELEMS + 1 when larger (no overflow) */
static unsigned long long count4(long long a, long long b, long long c, long long d)
{
	unsigned long long n = 1, f[4] = {(unsigned long long)a, (unsigned long long)b,
	                                  (unsigned long long)c, (unsigned long long)d};
	for (int i = 0; i < 4; i++) {
		if (f[i] > SPATIAL_PLAN_MAX_ELEMS || n * f[i] > SPATIAL_PLAN_MAX_ELEMS)
			return SPATIAL_PLAN_MAX_ELEMS + 1;
		n *= f[i];
	}
	return n;
}

int spatial_plan_window_h(const struct spatial_geom *g)
{
	return (g->out_h - 1) * g->stride_h + (g->k_h - 1) * g->dil_h + 1;
}

int spatial_plan_window_w(const struct spatial_geom *g)
{
	return (g->out_w - 1) * g->stride_w + (g->k_w - 1) * g->dil_w + 1;
}

int spatial_plan_check(const struct spatial_geom *g, char err[SPATIAL_PLAN_ERR_LEN])
{
	const struct {
		const char *name;
		int v, min;
	} f[] = {
		{"batch", g->batch, 1}, {"input planes", g->in_c, 1}, {"input height", g->in_h, 1},
		{"input width", g->in_w, 1}, {"output planes", g->out_c, 1}, {"groups", g->groups, 1},
		{"kernel height", g->k_h, 1}, {"kernel width", g->k_w, 1}, {"stride", g->stride_h, 1},
		{"stride", g->stride_w, 1}, {"dilation", g->dil_h, 1}, {"dilation", g->dil_w, 1},
		{"zero insertion", g->up_h, 1}, {"zero insertion", g->up_w, 1},
		{"output height", g->out_h, 1}, {"output width", g->out_w, 1},
		{"destination height", g->dst_h, 1}, {"destination width", g->dst_w, 1},
		{"destination step", g->dst_sy, 1}, {"destination step", g->dst_sx, 1},
		{"destination offset", g->dst_oy, 0}, {"destination offset", g->dst_ox, 0},
	};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		if (f[i].v < f[i].min) {
			snprintf(err, SPATIAL_PLAN_ERR_LEN, "%s is %d (at least %d)", f[i].name, f[i].v,
			         f[i].min);
			return -1;
		}
	if (g->in_c % g->groups || g->out_c % g->groups) {
		snprintf(err, SPATIAL_PLAN_ERR_LEN,
		         "groups: %d input and %d output planes are not both divisible by %d groups",
		         g->in_c, g->out_c, g->groups);
		return -1;
	}
	const long long lim = 1 << 30;
	long long wh = (long long)(g->out_h - 1) * g->stride_h + (long long)(g->k_h - 1) * g->dil_h + 1;
	long long ww = (long long)(g->out_w - 1) * g->stride_w + (long long)(g->k_w - 1) * g->dil_w + 1;
	if (wh > lim || ww > lim || llabs((long long)g->org_y) > lim || llabs((long long)g->org_x) > lim) {
		snprintf(err, SPATIAL_PLAN_ERR_LEN, "the input window (%lld x %lld) is too large", wh, ww);
		return -1;
	}
	if ((long long)(g->out_h - 1) * g->dst_sy + g->dst_oy >= g->dst_h ||
	    (long long)(g->out_w - 1) * g->dst_sx + g->dst_ox >= g->dst_w) {
		snprintf(err, SPATIAL_PLAN_ERR_LEN, "the output grid does not fit its destination");
		return -1;
	}
	if (count4(g->batch, g->in_c, g->in_h, g->in_w) > SPATIAL_PLAN_MAX_ELEMS ||
	    count4(g->batch, g->out_c, g->dst_h, g->dst_w) > SPATIAL_PLAN_MAX_ELEMS ||
	    count4(g->out_c, g->in_c / g->groups, g->k_h, g->k_w) > SPATIAL_PLAN_MAX_ELEMS) {
		snprintf(err, SPATIAL_PLAN_ERR_LEN, "a tensor has more than 2^30 elements");
		return -1;
	}
	return 0;
}

static long long pow2_at_least(long long v)
{
	long long p = 1;
	while (p < v)
		p <<= 1;
	return p;
}

int spatial_plan_tiles(int tiles, int tile_w, int tile_h, int max_size, int pow2, int *tiles_x,
                       int *tex_w, int *tex_h)
{
	long long best = -1;
	if (tiles < 1 || tile_w < 1 || tile_h < 1)
		return -1;
	for (int tx = 1; tx <= tiles; tx++) {
		int ty = (tiles + tx - 1) / tx;
		if (tx > 1 && (tiles + tx - 2) / (tx - 1) == ty)
			continue; /* same rows with fewer columns: already tried, smaller */
		long long w = (long long)tx * tile_w, h = (long long)ty * tile_h;
		if (pow2)
			w = pow2_at_least(w), h = pow2_at_least(h);
		if (w > max_size)
			break;
		if (h > max_size)
			continue;
		if (best < 0 || w * h < best || (w * h == best && w + h < (long long)*tex_w + *tex_h)) {
			best = w * h;
			*tiles_x = tx;
			*tex_w = (int)w;
			*tex_h = (int)h;
		}
	}
	return best < 0 ? -1 : 0;
}

double spatial_plan_interp_tol(int precision)
{
	switch (precision) {
	case 3: return ldexp(1.0, -22);
	case 2: return ldexp(1.0, -11);
	default: return ldexp(1.0, -9);
	}
}

int spatial_plan_fuse(double f1, double f2, int bits, double tol, double *a, double *f)
{
	if (bits < 1 || !(f1 * f2 > 0))
		return 0; /* a zero tap, opposite signs (f1 + f2 may be 0 or a cancellation), or NaN */
	double s = f1 + f2, scale = ldexp(1.0, bits);
	double q = nearbyint(f2 / s * scale) / scale;
	if (!(q > 0 && q < 1))
		return 0; /* at a texel centre: two fetches, so that no texel outside the pair is read */
	double g1 = s * (1 - q), g2 = s * q;
	if (!(fabs(g1 - f1) + fabs(g2 - f2) <= tol * (fabs(f1) + fabs(f2))))
		return 0;
	*a = q;
	*f = s;
	return 1;
}

/* Whether all lanes of taps p and q fuse at one common a (that of the first lane). */
static int fuse_lanes(const float *p, const float *q, int lanes, int bits, double tol, double *a,
                      double *f)
{
	double a0, s;
	if (!spatial_plan_fuse(p[0], q[0], bits, tol, &a0, &s))
		return 0;
	f[0] = s;
	for (int l = 1; l < lanes; l++) {
		double f1 = p[l], f2 = q[l];
		if (!(f1 * f2 > 0))
			return 0;
		double sl = f1 + f2;
		if (!(fabs(sl * (1 - a0) - f1) + fabs(sl * a0 - f2) <= tol * (fabs(f1) + fabs(f2))))
			return 0;
		f[l] = sl;
	}
	*a = a0;
	return 1;
}

static void put_entry(float **o, int lanes, double x, double y, int layer, const double *w)
{
	float *e = *o;
	e[0] = (float)x, e[1] = (float)y, e[2] = (float)layer;
	if (lanes == 1) {
		e[3] = (float)w[0];
		*o += 4;
	} else {
		e[3] = 0;
		for (int l = 0; l < 4; l++)
			e[4 + l] = (float)w[l];
		*o += 8;
	}
}

void spatial_plan_entries(const float *w, int lanes, int cpg, int c0, int k_h, int k_w,
                          int dil_h, int dil_w, int bits, double tol, float *out, int *n_single,
                          int *n_fused)
{
	/* singles are written from the front, fused pairs into a second list copied after them */
	int per = lanes == 1 ? 4 : 8, taps = k_h * k_w;
	float *s = out, *fu = out + (size_t)per * cpg * taps; /* fused list grows down from the end */
	int ns = 0, nf = 0;
	double wt[4], fw[4], a;
	for (int c = 0; c < cpg; c++) {
		const float *wc = w + (size_t)c * taps * lanes;
		int horizontal = dil_w == 1 && k_w > 1, vertical = dil_h == 1 && k_h > 1;
		for (int j = 0; j < k_h; j++) {
			int i = 0;
			for (; horizontal && i + 1 < k_w; i += 2) {
				const float *p = wc + ((size_t)j * k_w + i) * lanes, *q = p + lanes;
				if (fuse_lanes(p, q, lanes, bits, tol, &a, fw)) {
					fu -= per;
					float *t = fu;
					put_entry(&t, lanes, (double)i * dil_w + a, (double)j * dil_h, c0 + c, fw);
					nf++;
					continue;
				}
				for (int d = 0; d < 2; d++) {
					for (int l = 0; l < lanes; l++)
						wt[l] = p[d * lanes + l];
					put_entry(&s, lanes, (double)(i + d) * dil_w, (double)j * dil_h, c0 + c, wt);
					ns++;
				}
			}
			if (i >= k_w)
				continue;
			/* the columns left: with horizontal pairs, the odd last one pairs down the rows
			 * (its even rows take the odd rows below); without, every column does */
			for (int col = i; col < k_w; col++) {
				const float *p = wc + ((size_t)j * k_w + col) * lanes;
				if (vertical && j % 2 == 0 && j + 1 < k_h) {
					const float *q = p + (size_t)k_w * lanes;
					if (fuse_lanes(p, q, lanes, bits, tol, &a, fw)) {
						fu -= per;
						float *t = fu;
						put_entry(&t, lanes, (double)col * dil_w, (double)j * dil_h + a, c0 + c, fw);
						nf++;
						continue;
					}
					for (int l = 0; l < lanes; l++)
						wt[l] = q[l];
					put_entry(&s, lanes, (double)col * dil_w, (double)(j + 1) * dil_h, c0 + c, wt);
					ns++;
				} else if (vertical && j % 2 == 1) {
					continue; /* taken with the row above */
				}
				for (int l = 0; l < lanes; l++)
					wt[l] = p[l];
				put_entry(&s, lanes, (double)col * dil_w, (double)j * dil_h, c0 + c, wt);
				ns++;
			}
		}
	}
	/* fused entries sit at the end in reverse order: move them right after the singles */
	memmove(s, fu, (size_t)nf * per * sizeof *s);
	*n_single = ns;
	*n_fused = nf;
}

int spatial_plan_shared(const struct spatial_geom *g, int *chunk, int *cob, int *win_w, int *win_h)
{
	int kk = g->k_h * g->k_w;
	*win_w = (SPATIAL_PLAN_TILE_X - 1) * g->stride_w + (g->k_w - 1) * g->dil_w + 1;
	*win_h = (SPATIAL_PLAN_TILE_Y - 1) * g->stride_h + (g->k_h - 1) * g->dil_h + 1;
	long long area = (long long)*win_w * *win_h;
	if (area > SPATIAL_PLAN_SH_IN || kk > SPATIAL_PLAN_SH_W)
		return -1;
	*cob = g->out_c >= 8 && 8 * kk <= SPATIAL_PLAN_SH_W ? 8 : g->out_c >= 4 && 4 * kk <= SPATIAL_PLAN_SH_W ? 4 : 1;
	int c = (int)(SPATIAL_PLAN_SH_IN / area), cw = SPATIAL_PLAN_SH_W / (*cob * kk);
	*chunk = c < cw ? c : cw;
	return *chunk >= 1 ? 0 : -1;
}

float spatial_plan_half(float f)
{
	if (!isfinite(f) || f == 0)
		return f;
	double a = fabs((double)f);
	if (a >= 65520.0) /* 65504 + half its spacing: rounds to infinity */
		return copysignf(INFINITY, f);
	int e;
	frexp(a, &e); /* a = m 2^e, m in [0.5, 1): 10 bits after the leading one, or subnormal */
	double ulp = e - 1 >= -14 ? ldexp(1.0, e - 11) : ldexp(1.0, -24);
	return (float)copysign(nearbyint(a / ulp) * ulp, f);
}

float spatial_plan_q26(float v)
{
	double c = floor((double)v * 64 + 0.5);
	c = c < -127 ? -127 : c > 127 ? 127 : c;
	return (float)(c / 64);
}

double spatial_plan_bound(const struct spatial_bound_in *b)
{
	double ux = 0, uw = ldexp(1, -24), ex = 0, ua = ldexp(1, -23), out;
	int mp = b->mediump_bits > 0 && b->mediump_bits < 23 ? b->mediump_bits : 23;
	switch (b->precision) {
	case 0:
	case 1:
		ex = ldexp(1, -7) + ldexp(1, -13);
		out = ldexp(1, -7);
		if (b->precision == 0)
			ua = ldexp(1, -mp);
		break;
	case 2:
		ux = ldexp(1, -10);
		uw = ldexp(1, -11);
		ua = ldexp(1, -mp);
		out = ldexp(1, -10) * b->abs_y;
		break;
	default:
		ux = ldexp(1, -24);
		out = ldexp(1, -24) * b->abs_y;
		break;
	}
	double g = pow(1 + ua, (double)b->taps + 2);
	double e = b->sum_abs_wx * ((1 + ux) * (1 + uw) * g - 1) + b->sum_abs_w * ex * (1 + uw) * g +
	           b->abs_bias * ((1 + ua) * (1 + ua) - 1) + out;
	if (b->interp)
		e += 2 * spatial_plan_interp_tol(b->precision) * b->sum_abs_w * b->max_abs_x;
	return e * 1.01;
}

/* Here rather than in spatial.c: pure CPU, so that the shape checks (gles/conv_shape.c) link
 * without GL (tests/fuzz/fuzz_tensor.c) */
int spatial_conv_output(const struct spatial_conv *c, int *out_h, int *out_w,
                        char err[SPATIAL_ERR_LEN])
{
	int dh = c->dil_h ? c->dil_h : 1, dw = c->dil_w ? c->dil_w : 1;
	int groups = c->groups ? c->groups : 1;
	if (c->batch < 1 || c->in_c < 1 || c->in_h < 1 || c->in_w < 1 || c->out_c < 1 ||
	    c->k_h < 1 || c->k_w < 1) {
		snprintf(err, SPATIAL_ERR_LEN, "empty tensor: input (%d, %d, %d, %d), weight (%d, ., %d, %d)",
		         c->batch, c->in_c, c->in_h, c->in_w, c->out_c, c->k_h, c->k_w);
		return SPATIAL_E_ARG;
	}
	if (c->pad_h < 0 || c->pad_w < 0 || c->stride_h < 1 || c->stride_w < 1 || dh < 1 || dw < 1 ||
	    groups < 1) {
		snprintf(err, SPATIAL_ERR_LEN, "padding must be >= 0; stride, dilation and groups >= 1");
		return SPATIAL_E_ARG;
	}
	if (c->in_c % groups || c->out_c % groups) {
		snprintf(err, SPATIAL_ERR_LEN, "groups: %d input and %d output planes are not both "
		         "divisible by %d", c->in_c, c->out_c, groups);
		return SPATIAL_E_ARG;
	}
	long long eh = (long long)c->in_h + 2ll * c->pad_h - (long long)dh * (c->k_h - 1) - 1;
	long long ew = (long long)c->in_w + 2ll * c->pad_w - (long long)dw * (c->k_w - 1) - 1;
	if (eh < 0 || ew < 0) {
		snprintf(err, SPATIAL_ERR_LEN, "the %dx%d kernel (dilation %d,%d) is larger than the "
		         "padded %lldx%lld input: the output would be empty", c->k_h, c->k_w, dh, dw,
		         (long long)c->in_h + 2ll * c->pad_h, (long long)c->in_w + 2ll * c->pad_w);
		return SPATIAL_E_ARG;
	}
	*out_h = (int)(eh / c->stride_h + 1);
	*out_w = (int)(ew / c->stride_w + 1);
	return 0;
}

/* The implicit-GEMM tiles; entry 0 unused (variant 0 is the rule). */
const struct spatial_gemm_tile spatial_plan_gemm_tiles[SPATIAL_PLAN_GEMM_TILES] = {
	{0, 0, 0, 0, 0, 0},
	{128, 128, 8, 8, 8, 0}, {128, 64, 8, 8, 8, 0}, {64, 128, 8, 8, 8, 0}, {64, 64, 8, 4, 4, 0},
	{64, 64, 16, 8, 8, 0}, {128, 32, 8, 8, 4, 0}, {64, 32, 16, 4, 4, 0}, {64, 16, 16, 4, 4, 0},
	{32, 32, 16, 4, 4, 0}, {128, 128, 16, 8, 8, 0}, {256, 4, 8, 4, 4, 0},
	/* the sweep's, A as halves at precision 2: tile 1; 2 (128 invocations: more groups an SM
	 * under the register budget); 10 (half the float16-to-float32 flushes) */
	{128, 128, 8, 8, 8, 1}, {128, 64, 8, 8, 8, 1}, {128, 128, 16, 8, 8, 1},
};

/* The rule's order: by tile area, the larger first */
static const int gemm_rule_order[] = {1, 2, 3, 4, 6, 7, 9, 8, 11};

int spatial_plan_gemm_wg(const struct spatial_gemm_tile *t)
{
	return (t->bm / t->tm) * (t->bn / t->tn);
}

int spatial_plan_gemm_shared(const struct spatial_gemm_tile *t, int half2)
{
	/* float32: 4 bytes an element of A and B; half2: A (a, a) in 4 bytes (2 with a16), B 2
	 * bytes a plane */
	return 2 * t->bk * (t->bm * (half2 && t->a16 ? 2 : 4) + t->bn * (half2 ? 2 : 4));
}

int spatial_plan_gemm_valid(const struct spatial_gemm_tile *t, int half2, int max_invocations,
                            int max_shared, char err[SPATIAL_PLAN_ERR_LEN])
{
	if (t->bm < 4 || t->bn < 4 || t->bk < 1 || t->tm < 4 || t->tn < 4 || t->tm % 4 ||
	    t->tn % 4 || t->bm % t->tm || t->bn % t->tn || t->tm > 16 || t->tn > 16 || t->bk > 64) {
		snprintf(err, SPATIAL_PLAN_ERR_LEN, "gemm tile %dx%dx%d / %dx%d: register tiles are "
		         "multiples of 4 (at most 16) dividing the tile", t->bm, t->bn, t->bk, t->tm, t->tn);
		return -1;
	}
	int wg = spatial_plan_gemm_wg(t), bm4 = t->bm / 4;
	if (wg > max_invocations || wg > 1024 || wg % bm4) {
		snprintf(err, SPATIAL_PLAN_ERR_LEN, "gemm tile %dx%dx%d / %dx%d: %d invocations (at most "
		         "%d, a multiple of bm / 4)", t->bm, t->bn, t->bk, t->tm, t->tn, wg,
		         max_invocations < 1024 ? max_invocations : 1024);
		return -1;
	}
	int sh = spatial_plan_gemm_shared(t, half2);
	if (sh > max_shared) {
		snprintf(err, SPATIAL_PLAN_ERR_LEN, "gemm tile %dx%dx%d: %d bytes of shared memory "
		         "(device: %d)", t->bm, t->bn, t->bk, sh, max_shared);
		return -1;
	}
	return 0;
}

int spatial_plan_gemm(const struct spatial_geom *g, int variant, struct spatial_gemm_tile *t)
{
	if (variant > 0 && variant < SPATIAL_PLAN_GEMM_TILES) {
		*t = spatial_plan_gemm_tiles[variant];
		return variant;
	}
	long long m = (long long)g->batch * g->out_h * g->out_w, n = g->out_c / g->groups;
	long long nmax = pow2_at_least(n < 4 ? 4 : n), best_groups = -1;
	int best = 0;
	for (size_t i = 0; i < sizeof gemm_rule_order / sizeof gemm_rule_order[0]; i++) {
		const struct spatial_gemm_tile *c = &spatial_plan_gemm_tiles[gemm_rule_order[i]];
		if (c->bn > nmax)
			continue;
		long long wgs = (m + c->bm - 1) / c->bm * ((n + c->bn - 1) / c->bn) * g->groups;
		if (wgs >= 256) {
			best = gemm_rule_order[i];
			break;
		}
		if (wgs > best_groups)
			best_groups = wgs, best = gemm_rule_order[i];
	}
	*t = spatial_plan_gemm_tiles[best];
	return best;
}
