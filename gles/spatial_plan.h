/* Planning for the spatial convolution (gles/spatial.h), pure CPU code with its own tests: the
 * geometry of one convolution and its checks, how batch tiles lie in a texture, how the
 * interpolator pairs taps, the shared-memory chunking of the storage-buffer kernel, float16
 * rounding, and the error bound each precision level guarantees. No GL. */
#ifndef FFTBLOOM_SPATIAL_PLAN_H
#define FFTBLOOM_SPATIAL_PLAN_H

#include <stddef.h>

#define SPATIAL_PLAN_ERR_LEN 256

/* One convolution as the GPU kernels see it (spatial.h builds it from Torch's parameters;
 * deconv.h from a transposed convolution's). With X the source read through zero insertion and
 * zero extension, X[b, c, u, v] = src[b, c, u / up_h, v / up_w] where both divide evenly and
 * land inside the source, else 0:
 *   y[b, co, oy, ox] = bias[co] + sum over ci of co's group, j < k_h, i < k_w of
 *       w[co, ci - group_start, j, i] * X[b, ci, org_y + oy*stride_h + j*dil_h,
 *                                               org_x + ox*stride_w + i*dil_w]
 * for oy < out_h, ox < out_w, stored at dst[b, co, oy*dst_sy + dst_oy, ox*dst_sx + dst_ox]. */
struct spatial_geom {
	int batch, in_c, in_h, in_w; /* the source tensor (B, Cin, H, W), NCHW */
	int out_c, groups;           /* output planes; in_c and out_c are multiples of groups */
	int k_h, k_w;                /* weight (out_c, in_c / groups, k_h, k_w) */
	int stride_h, stride_w;      /* >= 1 */
	int dil_h, dil_w;            /* >= 1 */
	int up_h, up_w;              /* zero insertion factor, >= 1 (1: none) */
	int org_y, org_x;            /* first tap of output (0, 0): minus the padding; any sign */
	int out_h, out_w;            /* the output grid computed */
	int dst_h, dst_w;            /* planes of the output tensor (B, out_c, dst_h, dst_w) */
	int dst_sy, dst_sx, dst_oy, dst_ox; /* where grid point (oy, ox) is stored (step, offset) */
};

/* Largest element count of any one tensor (indices are 32-bit in the shaders). */
#define SPATIAL_PLAN_MAX_ELEMS (1ull << 30)

/* 0 when g is consistent, else -1 with a message naming the first bad field. */
int spatial_plan_check(const struct spatial_geom *g, char err[SPATIAL_PLAN_ERR_LEN]);

/* Extents of the input window one output plane reads: (out - 1) * stride + (k - 1) * dil + 1. */
int spatial_plan_window_h(const struct spatial_geom *g);
int spatial_plan_window_w(const struct spatial_geom *g);

/* Lays `tiles` tiles of tile_w x tile_h texels in a texture at most max_size on a side (with
 * pow2, its sides are powers of two): the smallest area. 0 with *tiles_x, *tex_w, *tex_h; -1 when
 * they cannot fit. */
int spatial_plan_tiles(int tiles, int tile_w, int tile_h, int max_size, int pow2, int *tiles_x,
                       int *tex_w, int *tex_h);

/* The interpolator's tolerance at a precision level (spatial.h's enum): a pair of taps is read
 * with one bilinear fetch only when that moves the pair's weights by at most tol * (|f1| + |f2|),
 * and the texture's filtering is trusted only where it deviates from exact interpolation by at
 * most tol * max(|t1|, |t2|). 2^-22 (float32), 2^-11 (float16), 2^-9 (Q2.6 levels). */
double spatial_plan_interp_tol(int precision);

/* Whether taps f1, f2 (adjacent texels) can be read as one bilinear fetch on a filter grid of
 * `bits` fractional bits: they must have the same strict sign (so f1 + f2 is neither 0 nor a
 * difference of opposite terms), and a = f2 / (f1 + f2) rounded to the grid must reproduce
 * them within tol, and lie strictly between the two texels (a texel centre would let the
 * filter read a texel outside the pair, with weight 0). Returns 1 with *a (on the grid, in
 * (0, 1)) and *f = f1 + f2, else 0. */
int spatial_plan_fuse(double f1, double f2, int bits, double tol, double *a, double *f);

/* The interpolator's tap list of one output plane: for each of its cpg input planes (texture
 * layers c0 + c) and taps, single taps (dx, dy, layer, w) first, then fused pairs whose dx or dy
 * carries the fraction a. lanes 1: w holds (cpg, k_h, k_w) weights, one vec4 an entry; lanes 4
 * (images): w holds 4 lane weights a tap, two vec4 an entry ((dx, dy, layer, 0), weights), and a
 * pair fuses only if all four lanes fuse at one a. Pairs are horizontal neighbours when
 * dil_w == 1, else vertical when dil_h == 1; with odd k_w the last column pairs vertically.
 * out holds (lanes == 1 ? 4 : 8) * cpg * k_h * k_w floats. */
void spatial_plan_entries(const float *w, int lanes, int cpg, int c0, int k_h, int k_w,
                          int dil_h, int dil_w, int bits, double tol, float *out, int *n_single,
                          int *n_fused);

/* The storage-buffer kernel's work group: a 32 x 8 tile of outputs for `cob` output planes,
 * staging `chunk` input planes' window (win_w x win_h floats each) and their weights in shared
 * memory of SPATIAL_PLAN_SH_IN + SPATIAL_PLAN_SH_W floats. 0, or -1 when one plane's window or
 * one output plane's taps do not fit. */
#define SPATIAL_PLAN_TILE_X 32
#define SPATIAL_PLAN_TILE_Y 8
#define SPATIAL_PLAN_SH_IN 3072
#define SPATIAL_PLAN_SH_W 1024
int spatial_plan_shared(const struct spatial_geom *g, int *chunk, int *cob, int *win_w, int *win_h);

/* The implicit-GEMM kernel's tile (spatial_gemm.comp): M = output pixels (batch x rows x
 * columns), N = output planes of a group, K = the group's input planes x k_h x k_w. A work group
 * computes a bm x bn tile of the output in K-slices of bk, its input patches and filter slices
 * double-buffered in shared memory; each of its (bm / tm) * (bn / tn) invocations a tm x tn
 * register tile (rows 4 apart in groups of four, so that shared-memory reads are vec4 and
 * neighbouring invocations read neighbouring words). */
struct spatial_gemm_tile {
	int bm, bn, bk, tm, tn;
	int a16; /* packed float16 (precision 2) only: A in shared memory as halves, two pixels a
	            word, each broadcast to a (a, a) pair in the multiply (0: stored as (a, a) pairs,
	            twice the bytes and the shared-memory reads) */
};
#define SPATIAL_PLAN_GEMM_TILES 15 /* entries 1..14 of spatial_plan_gemm_tiles; 0: none */
extern const struct spatial_gemm_tile spatial_plan_gemm_tiles[SPATIAL_PLAN_GEMM_TILES];

/* Invocations of a work group of tile t. */
int spatial_plan_gemm_wg(const struct spatial_gemm_tile *t);
/* Shared-memory bytes of tile t, double-buffered; half2: the packed-fp16 layout (A as (a, a)
 * pairs, or halves with t->a16; B as pairs of planes) */
int spatial_plan_gemm_shared(const struct spatial_gemm_tile *t, int half2);
/* 0 when t is a tile the kernel can run within max_invocations and max_shared bytes, else -1
 * with the broken rule in err. */
int spatial_plan_gemm_valid(const struct spatial_gemm_tile *t, int half2, int max_invocations,
                            int max_shared, char err[SPATIAL_PLAN_ERR_LEN]);
/* The tile for g: variant 1..SPATIAL_PLAN_GEMM_TILES - 1 that one of the table, 0 the rule: in
 * order of decreasing tile area, the first whose bn does not exceed the group's output planes
 * rounded up to a power of two (at least 4) and that gives at least 256 work groups; else, of
 * those bn allows, the one giving the most. Returns the variant chosen. */
int spatial_plan_gemm(const struct spatial_geom *g, int variant, struct spatial_gemm_tile *t);

/* f rounded to the nearest float16 (ties to even; beyond 65504 rounds to infinity). */
float spatial_plan_half(float f);

/* Q2.6 as stored here: codes c in [-127, 127] meaning c / 64 (the snorm texture formats have no
 * code -128): v rounded to the nearest code, clamped. */
float spatial_plan_q26(float v);

/* The error bound of one output element, y = sum of n products w*x plus a bias b:
 *   |y_gpu - y| <= S ((1+ux)(1+uw)(1+ua)^(n+2) - 1) + A ex (1+uw)(1+ua)^(n+2)
 *                  + |b| ((1+ua)^2 - 1) + out + interp, all times 1.01,
 * S = sum |w x|, A = sum |w|, X = max |x|; ux, uw: relative rounding of stored inputs and
 * weights (float32 2^-24, float16 2^-10 (the GPU's conversion may truncate: llvmpipe's
 * imageStore does) and 2^-11 for weights (rounded here)), ex: absolute rounding of Q2.6 inputs
 * (2^-7, plus 2^-13 for the snorm scale); ua: the arithmetic's unit roundoff (highp 2^-23;
 * mediump 2^-p, p = mediump_bits, 10 for GLSL ES's float16-like minimum, which makes the bound
 * grow with n); out: the stored output's rounding (float32
 * 2^-24 |y|, float16 2^-10 |y|, Q2.6 2^-7); interp (interpolator only): 2 tol A X. Valid while
 * no value leaves the level's range (Q2.6: [-1.984375, 1.984375], clamped; float16 and mediump:
 * below 65504 in magnitude). */
struct spatial_bound_in {
	int precision;    /* 0..3 (spatial.h) */
	int interp;       /* 1: the interpolator's term */
	int mediump_bits; /* mantissa bits of mediump arithmetic (spatial_caps) */
	long taps;        /* n */
	double sum_abs_wx, sum_abs_w, max_abs_x, abs_bias, abs_y;
};
double spatial_plan_bound(const struct spatial_bound_in *b);

#endif
