/* The CPU engine's conv2d (im2col + GEMM) and conv2d_transpose (GEMM + col2im); see conv.h.
 * The GEMMs are cpu/gemm.h's, on par_each's threads at once; OpenBLAS's serial build (the
 * Makefile links it by path) is asked only what it runs on (cpu_conv_blas_*). */
#include "cpu/conv.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/parallel.h"
#include "cpu/gemm.h"

/* The blocks' GEMMs run on cpu/gemm.h, each on its thread at once, not on OpenBLAS: Debian 12's
 * serial OpenBLAS (libopenblas0-serial 0.3.21, SINGLE_THREADED) is not safe to call from several
 * threads at once, though its blas_memory_alloc spins on an allocation lock: unlocked,
 * test_cpu_conv's random conv2d (B3 5->3 13x15 k3x5, an sgemm of 3 rows) failed 1 run in 15
 * with rel_l2 0.80 on 2 threads, and bench/probes/issue42_blas_concurrent.c (16 threads of sgemm on buffers of their
 * own, each compared with the call made alone) saw 3 wrong results in 1 run of about 130. Under
 * a lock the sgemm calls ran one at a time: 16 threads no faster than one. */

/* conv2d runs direct loops (a saxpy a tap and output row: no column matrix) where a group has
 * at most this many output planes and the kernel more than one tap: im2col copies each input
 * pixel k_h * k_w times, which costs more than a GEMM with so few rows computes. Measured on the
 * 2-core VM, one thread, 256x256, 3x3: 16 -> 1 and 16 -> 2 planes direct 2.1 and 3.2 ms, im2col
 * 4.2 and 4.6 ms; 16 -> 4: 6.4 against 5.7 ms; 1 -> 1, 15x15: 2.4 against 8.1 ms. */
#define DIRECT_MAX_COUT 2
/* Output rows of one direct item. */
#define DIRECT_ROWS 16
/* Floats of one worker's column buffer: about a core's L2, so that the block sgemm reads back
 * is still in cache. */
#define COL_BUDGET (1u << 18)
/* A field the geometry takes (|pad| too): positions then fit a long long with room to spare. */
#define FIELD_MAX (1 << 24)

static int dflt(int v) { return v ? v : 1; }
static size_t min_z(size_t a, size_t b) { return a < b ? a : b; }
static size_t max_z(size_t a, size_t b) { return a > b ? a : b; }
static long long floor_div(long long a, long long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
static long long ceil_div(long long a, long long b) { return -floor_div(-a, b); }

const char *cpu_conv_strerror(int code)
{
	switch (code) {
	case CPU_CONV_OK: return "ok";
	case CPU_CONV_E_ARG: return "bad convolution shape or parameter";
	case CPU_CONV_E_TOO_LARGE: return "convolution too large";
	case CPU_CONV_E_NOMEM: return "out of memory";
	default: return "unknown CPU convolution error";
	}
}

int cpu_conv_blas_serial(void) { return openblas_get_parallel() == 0; }

const char *cpu_conv_blas_core(void) { return openblas_get_corename(); }

int cpu_conv_blas_hint(char *hint, size_t len)
{
#if defined(__x86_64__) && defined(__GNUC__)
	/* OpenBLAS's cores whose kernels use AVX2 and FMA or AVX-512 */
	static const char *const modern[] = {"Haswell", "Zen", "SkylakeX", "Cooperlake",
	                                     "SapphireRapids"};
	const char *core = openblas_get_corename();
	for (size_t i = 0; i < sizeof modern / sizeof *modern; i++)
		if (core && !strcmp(core, modern[i]))
			return 0;
	__builtin_cpu_init();
	int avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
	int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	if (!avx2 && !avx512)
		return 0;
	snprintf(hint, len, "OpenBLAS runs its %s kernels on a CPU with %s: OPENBLAS_CORETYPE=%s in "
	         "the environment selects faster ones", core ? core : "unknown",
	         avx512 ? "AVX-512" : "AVX2 and FMA", avx512 ? "SkylakeX" : "Haswell");
	return 1;
#else
	(void)hint, (void)len;
	return 0;
#endif
}

/* The problem after the defaults and checks, shared by both directions. */
struct prob {
	struct cpu_conv_geom g; /* defaults applied */
	int cpi, cpo, kk;       /* planes per group in and out; taps k_h * k_w */
	size_t hw, ohw;         /* one input plane, one output plane */
	const float *in, *w, *bias;
	float *out;
	float **col;            /* one column buffer per worker */
	size_t col_n;           /* floats of each */
	/* conv2d: output pixels per block, blocks per plane; no_col 1 when the input is its own
	 * column matrix (1x1, stride 1, no padding, output the input's size) */
	size_t nb, blocks;
	int no_col;
	/* transpose: output planes per block, blocks per group, output rows per band, bands, input
	 * rows per sgemm */
	int cob, co_blocks, band_h, bands, rows;
};

static int bad(char *err, int code, const char *what)
{
	snprintf(err, CPU_CONV_ERR_LEN, "%s", what);
	return code;
}

static int setup(const struct cpu_conv_geom *gi, const float *in, const float *weight,
                 const float *bias, float *out, struct prob *p, char *err)
{
	memset(p, 0, sizeof *p);
	if (!gi || !in || !weight || !out)
		return bad(err, CPU_CONV_E_ARG, "a tensor (input, weight or output) is missing");
	struct cpu_conv_geom g = *gi;
	g.groups = dflt(g.groups);
	g.stride_h = dflt(g.stride_h), g.stride_w = dflt(g.stride_w);
	g.dil_h = dflt(g.dil_h), g.dil_w = dflt(g.dil_w);
	const int pos[] = {g.batch, g.in_c, g.in_h, g.in_w, g.out_c, g.groups, g.k_h, g.k_w,
	                   g.stride_h, g.stride_w, g.dil_h, g.dil_w, g.out_h, g.out_w};
	static const char *const names[] = {"batch", "in_c", "in_h", "in_w", "out_c", "groups", "k_h",
	                                    "k_w", "stride_h", "stride_w", "dil_h", "dil_w", "out_h",
	                                    "out_w"};
	for (size_t i = 0; i < sizeof pos / sizeof *pos; i++)
		if (pos[i] < 1 || pos[i] > FIELD_MAX) {
			snprintf(err, CPU_CONV_ERR_LEN, "%s is %d: it must lie in [1, %d]", names[i], pos[i],
			         FIELD_MAX);
			return CPU_CONV_E_ARG;
		}
	if (g.pad_h < -FIELD_MAX || g.pad_h > FIELD_MAX || g.pad_w < -FIELD_MAX || g.pad_w > FIELD_MAX)
		return bad(err, CPU_CONV_E_ARG, "a padding beyond +-16777216");
	if (g.in_c % g.groups || g.out_c % g.groups) {
		snprintf(err, CPU_CONV_ERR_LEN, "%d input and %d output planes are not both multiples "
		         "of %d groups", g.in_c, g.out_c, g.groups);
		return CPU_CONV_E_ARG;
	}
	p->g = g;
	p->cpi = g.in_c / g.groups, p->cpo = g.out_c / g.groups;
	size_t fi[] = {(size_t)g.batch, (size_t)g.in_c, (size_t)g.in_h, (size_t)g.in_w};
	size_t fw[] = {(size_t)g.in_c, (size_t)p->cpo, (size_t)g.k_h, (size_t)g.k_w};
	size_t fo[] = {(size_t)g.batch, (size_t)g.out_c, (size_t)g.out_h, (size_t)g.out_w};
	size_t ni = 0, nw = 0, no = 0;
	int over = checked_product_size(fi, 4, 1, &ni) | checked_product_size(fw, 4, 1, &nw) |
	           checked_product_size(fo, 4, 1, &no);
	if (over || ni > CPU_CONV_MAX_ELEMS ||
	    nw > CPU_CONV_MAX_ELEMS || no > CPU_CONV_MAX_ELEMS) {
		snprintf(err, CPU_CONV_ERR_LEN, "a tensor of more than %llu elements (input %zu, "
		         "weight %zu, output %zu)", CPU_CONV_MAX_ELEMS, ni, nw, no);
		return CPU_CONV_E_TOO_LARGE;
	}
	p->kk = g.k_h * g.k_w; /* <= the weight's elements */
	p->hw = (size_t)g.in_h * g.in_w, p->ohw = (size_t)g.out_h * g.out_w;
	p->in = in, p->w = weight, p->bias = bias, p->out = out;
	return 0;
}

/* One column buffer of n floats per worker (none with n 0); the thread count. */
static int alloc_cols(struct prob *p, size_t items, size_t n, int *threads, char *err)
{
	long t = p->g.threads > 0 ? p->g.threads : par_cores();
	if (t > PAR_EACH_MAX)
		t = PAR_EACH_MAX;
	if ((size_t)t > items)
		t = (long)items;
	*threads = t < 1 ? 1 : (int)t;
	p->col_n = n;
	if (!n)
		return 0;
	size_t bytes;
	p->col = calloc((size_t)*threads, sizeof *p->col);
	if (!p->col || checked_mul_size(n, sizeof(float), &bytes))
		return bad(err, CPU_CONV_E_NOMEM, "no memory for the column buffers");
	for (int i = 0; i < *threads; i++)
		if (!(p->col[i] = malloc(bytes))) {
			snprintf(err, CPU_CONV_ERR_LEN, "no memory for %d column buffers of %zu bytes",
			         *threads, bytes);
			return CPU_CONV_E_NOMEM;
		}
	return 0;
}

static void free_cols(struct prob *p, int threads)
{
	if (p->col)
		for (int i = 0; i < threads; i++)
			free(p->col[i]);
	free(p->col);
}

/* Output planes co0.. of n elements at stride `plane` from y, each set to its bias (0: none). */
static void fill_bias(const struct prob *p, float *y, int co0, int n_planes, size_t plane, size_t n)
{
	for (int c = 0; c < n_planes; c++) {
		float v = p->bias ? p->bias[co0 + c] : 0.0f;
		float *d = y + (size_t)c * plane;
		for (size_t k = 0; k < n; k++)
			d[k] = v;
	}
}

/* The valid range [*lo, *hi) of s in [0, n) with 0 <= x0 + s * step < size. */
static void valid_range(long long x0, long long step, long long size, size_t n, size_t *lo,
                        size_t *hi)
{
	long long a = x0 >= 0 ? 0 : ceil_div(-x0, step);
	long long b = x0 > size - 1 ? 0 : floor_div(size - 1 - x0, step) + 1;
	if (b > (long long)n)
		b = (long long)n;
	if (a > b)
		a = b;
	*lo = (size_t)a, *hi = (size_t)b;
}

/* ---- conv2d ---- */

/* The column matrix (cpi * k_h * k_w rows, n columns) of output pixels p0 .. p0 + n of the
 * group whose first input plane is x. */
static void im2col(const struct prob *p, const float *x, size_t p0, size_t n, float *col)
{
	const struct cpu_conv_geom *g = &p->g;
	float *row = col;
	for (int ci = 0; ci < p->cpi; ci++)
		for (int j = 0; j < g->k_h; j++)
			for (int i = 0; i < g->k_w; i++, row += n) {
				const float *xp = x + (size_t)ci * p->hw;
				long long oy = (long long)(p0 / (size_t)g->out_w);
				long long ox = (long long)(p0 % (size_t)g->out_w);
				for (size_t k = 0; k < n; ox = 0, oy++) {
					size_t seg = min_z(n - k, (size_t)(g->out_w - ox)), lo, hi;
					long long iy = oy * g->stride_h - g->pad_h + (long long)j * g->dil_h;
					float *d = row + k;
					k += seg;
					if (iy < 0 || iy >= g->in_h) {
						memset(d, 0, seg * sizeof *d);
						continue;
					}
					const float *xr = xp + (size_t)iy * g->in_w;
					long long ix0 = ox * g->stride_w - g->pad_w + (long long)i * g->dil_w;
					valid_range(ix0, g->stride_w, g->in_w, seg, &lo, &hi);
					memset(d, 0, lo * sizeof *d);
					if (g->stride_w == 1)
						memcpy(d + lo, xr + ix0 + (long long)lo, (hi - lo) * sizeof *d);
					else
						for (size_t s = lo; s < hi; s++)
							d[s] = xr[ix0 + (long long)s * g->stride_w];
					memset(d + hi, 0, (seg - hi) * sizeof *d);
				}
			}
}

/* par_each's item: batch b, group grp, pixel block blk. */
static int conv2d_item(void *ctx, int worker, size_t item)
{
	const struct prob *p = ctx;
	const struct cpu_conv_geom *g = &p->g;
	size_t blk = item % p->blocks, bg = item / p->blocks;
	size_t b = bg / (size_t)g->groups, grp = bg % (size_t)g->groups;
	size_t p0 = blk * p->nb, n = min_z(p->nb, p->ohw - p0);
	size_t K = (size_t)p->cpi * (size_t)p->kk;
	const float *x = p->in + (b * (size_t)g->in_c + grp * (size_t)p->cpi) * p->hw;
	const float *w = p->w + grp * (size_t)p->cpo * K;
	float *y = p->out + (b * (size_t)g->out_c + grp * (size_t)p->cpo) * p->ohw + p0;
	const float *B = x + p0;
	size_t ldb = p->hw;
	if (!p->no_col) {
		im2col(p, x, p0, n, p->col[worker]);
		B = p->col[worker], ldb = n;
	}
	if (p->bias)
		fill_bias(p, y, (int)grp * p->cpo, p->cpo, p->ohw, n);
	cpu_gemm(0, (size_t)p->cpo, n, K, w, K, B, ldb, p->bias ? 1.0f : 0.0f, y, p->ohw);
	return 0;
}

/* par_each's item of the direct loops: batch b, output plane co, output rows band. */
static int direct_item(void *ctx, int worker, size_t item)
{
	(void)worker;
	const struct prob *p = ctx;
	const struct cpu_conv_geom *g = &p->g;
	size_t bands = (size_t)(g->out_h + DIRECT_ROWS - 1) / DIRECT_ROWS;
	size_t bd = item % bands, bc = item / bands;
	size_t b = bc / (size_t)g->out_c, co = bc % (size_t)g->out_c, grp = co / (size_t)p->cpo;
	const float *x = p->in + (b * (size_t)g->in_c + grp * (size_t)p->cpi) * p->hw;
	const float *w = p->w + co * (size_t)p->cpi * (size_t)p->kk;
	float *y = p->out + (b * (size_t)g->out_c + co) * p->ohw;
	int oy1 = (int)(bd + 1) * DIRECT_ROWS > g->out_h ? g->out_h : (int)(bd + 1) * DIRECT_ROWS;
	for (int oy = (int)bd * DIRECT_ROWS; oy < oy1; oy++) {
		float *yr = y + (size_t)oy * g->out_w;
		fill_bias(p, yr, (int)co, 1, 0, (size_t)g->out_w);
		for (int c = 0; c < p->cpi; c++)
			for (int j = 0; j < g->k_h; j++) {
				long long iy = (long long)oy * g->stride_h - g->pad_h + (long long)j * g->dil_h;
				if (iy < 0 || iy >= g->in_h)
					continue;
				const float *xr = x + (size_t)c * p->hw + (size_t)iy * g->in_w;
				for (int i = 0; i < g->k_w; i++) {
					long long ix0 = (long long)i * g->dil_w - g->pad_w;
					size_t lo, hi;
					valid_range(ix0, g->stride_w, g->in_w, (size_t)g->out_w, &lo, &hi);
					if (hi > lo)
						cblas_saxpy((int)(hi - lo), w[((size_t)c * g->k_h + j) * g->k_w + i],
						            xr + ix0 + (long long)lo * g->stride_w, g->stride_w, yr + lo, 1);
				}
			}
	}
	return 0;
}

/* conv2d of the problem p set up: 0 or a negative cpu_conv_error. */
static int conv2d_run(struct prob *pp, char *err)
{
	struct prob p = *pp;
	const struct cpu_conv_geom *g = &p.g;
	int rc;
	size_t K = (size_t)p.cpi * (size_t)p.kk;
	int threads;
	if (p.cpo <= DIRECT_MAX_COUT && p.kk > 1) {
		size_t rows = (size_t)(g->out_h + DIRECT_ROWS - 1) / DIRECT_ROWS;
		size_t n = (size_t)g->batch * (size_t)g->out_c * rows;
		alloc_cols(&p, n, 0, &threads, err);
		par_each(n, threads, direct_item, &p, NULL);
		return 0;
	}
	p.no_col = g->k_h == 1 && g->k_w == 1 && g->stride_h == 1 && g->stride_w == 1 &&
	           !g->pad_h && !g->pad_w && g->out_h == g->in_h && g->out_w == g->in_w;
	/* blocks of about COL_BUDGET column floats, at least 64 pixels while that stays within 16
	 * budgets (a huge kernel's column: down to one pixel), and eight blocks a plane where the
	 * planes are large enough to split (a batch of 1 still uses every core); past 32 pixels a
	 * multiple of 32 (so 32 where the rule gives 33 to 63) */
	size_t least = min_z(64, max_z(16 * (size_t)COL_BUDGET / K, 1));
	p.nb = min_z(max_z(COL_BUDGET / K, least), max_z((p.ohw + 7) / 8, 256));
	if (p.nb > CPU_GEMM_COLS) /* whole column tiles of the GEMM; its last columns go slower */
		p.nb -= p.nb % CPU_GEMM_COLS;
	p.nb = min_z(p.nb, p.ohw);
	p.blocks = (p.ohw + p.nb - 1) / p.nb;
	size_t items = (size_t)g->batch * (size_t)g->groups * p.blocks, col_n = 0;
	if (!p.no_col && checked_mul_size(K, p.nb, &col_n))
		return bad(err, CPU_CONV_E_TOO_LARGE, "a column block too large");
	if ((rc = alloc_cols(&p, items, col_n, &threads, err)) == 0)
		par_each(items, threads, conv2d_item, &p, NULL);
	free_cols(&p, threads);
	return rc;
}

/* ---- conv2d_transpose ---- */

/* Adds column matrix col (rows (co - co0) * kk + j * k_w + i, columns the input pixels of rows
 * iy0 .. iy0 + rows) into output rows [oy0, oy1) of planes co0 .. co0 + ncob starting at y. */
static void col2im(const struct prob *p, const float *col, int ncob, int iy0, int rows, int oy0,
                   int oy1, float *y)
{
	const struct cpu_conv_geom *g = &p->g;
	size_t n = (size_t)rows * (size_t)g->in_w;
	const float *row = col;
	for (int c = 0; c < ncob; c++)
		for (int j = 0; j < g->k_h; j++)
			for (int i = 0; i < g->k_w; i++, row += n) {
				long long ox0 = (long long)i * g->dil_w - g->pad_w;
				size_t lo, hi;
				valid_range(ox0, g->stride_w, g->out_w, (size_t)g->in_w, &lo, &hi);
				for (int r = 0; r < rows; r++) {
					long long oy = (long long)(iy0 + r) * g->stride_h - g->pad_h +
					               (long long)j * g->dil_h;
					if (oy < oy0 || oy >= oy1)
						continue;
					float *d = y + (size_t)c * p->ohw + (size_t)oy * g->out_w;
					const float *s = row + (size_t)r * g->in_w;
					if (g->stride_w == 1)
						for (size_t ix = lo; ix < hi; ix++)
							d[ox0 + (long long)ix] += s[ix];
					else
						for (size_t ix = lo; ix < hi; ix++)
							d[ox0 + (long long)ix * g->stride_w] += s[ix];
				}
			}
}

/* par_each's item: batch b, group grp, output-plane block cb, output band bd. */
static int transpose_item(void *ctx, int worker, size_t item)
{
	const struct prob *p = ctx;
	const struct cpu_conv_geom *g = &p->g;
	size_t bd = item % (size_t)p->bands, rest = item / (size_t)p->bands;
	size_t cb = rest % (size_t)p->co_blocks, bg = rest / (size_t)p->co_blocks;
	size_t b = bg / (size_t)g->groups, grp = bg % (size_t)g->groups;
	int co0 = (int)cb * p->cob, ncob = p->cpo - co0 < p->cob ? p->cpo - co0 : p->cob;
	int oy0 = (int)bd * p->band_h, oy1 = oy0 + p->band_h > g->out_h ? g->out_h : oy0 + p->band_h;
	const float *x = p->in + (b * (size_t)g->in_c + grp * (size_t)p->cpi) * p->hw;
	const float *w = p->w + grp * (size_t)p->cpi * (size_t)p->cpo * (size_t)p->kk +
	                 (size_t)co0 * (size_t)p->kk;
	float *y = p->out + (b * (size_t)g->out_c + grp * (size_t)p->cpo + (size_t)co0) * p->ohw;
	for (int c = 0; c < ncob; c++)
		fill_bias(p, y + (size_t)c * p->ohw + (size_t)oy0 * g->out_w,
		          (int)grp * p->cpo + co0 + c, 1, 0, (size_t)(oy1 - oy0) * g->out_w);
	/* the input rows whose patches reach [oy0, oy1): oy = iy s - pad + j d, j < k_h */
	long long lo = ceil_div((long long)oy0 + g->pad_h - (long long)(g->k_h - 1) * g->dil_h,
	                        g->stride_h);
	long long hi = floor_div((long long)oy1 - 1 + g->pad_h, g->stride_h) + 1;
	if (lo < 0)
		lo = 0;
	if (hi > g->in_h)
		hi = g->in_h;
	int M = ncob * p->kk, lda = p->cpo * p->kk;
	for (long long iy = lo; iy < hi; iy += p->rows) {
		int rows = (int)(hi - iy < p->rows ? hi - iy : p->rows);
		int N = rows * g->in_w;
		float *col = p->col[worker];
		cpu_gemm(1, (size_t)M, (size_t)N, (size_t)p->cpi, w, (size_t)lda,
		         x + (size_t)iy * g->in_w, p->hw, 0.0f, col, (size_t)N);
		col2im(p, col, ncob, (int)iy, rows, oy0, oy1, y);
	}
	return 0;
}

/* conv2d_transpose of the problem p set up: 0 or a negative cpu_conv_error. */
static int transpose_run(struct prob *pp, char *err)
{
	struct prob p = *pp;
	const struct cpu_conv_geom *g = &p.g;
	int rc;
	/* blocks of output planes and input rows whose columns fit about COL_BUDGET floats (at least
	 * one plane and one row) */
	size_t per_plane_row = (size_t)p.kk * (size_t)g->in_w;
	p.cob = (int)min_z((size_t)p.cpo, max_z(COL_BUDGET / per_plane_row, 1));
	p.co_blocks = (p.cpo + p.cob - 1) / p.cob;
	p.rows = (int)min_z((size_t)g->in_h, max_z(COL_BUDGET / (per_plane_row * (size_t)p.cob), 1));
	/* output bands: eight items at least where the output is tall enough that a band's
	 * recomputed rows (the taps' reach, (k_h - 1) dil_h) stay a quarter of it at most */
	size_t bgc = (size_t)g->batch * (size_t)g->groups * (size_t)p.co_blocks;
	size_t reach = (size_t)(g->k_h - 1) * (size_t)g->dil_h + 1;
	size_t want = bgc >= 8 ? 1 : (8 + bgc - 1) / bgc;
	size_t most = max_z((size_t)g->out_h / (4 * reach), 1);
	p.bands = (int)min_z(want, most);
	p.band_h = (g->out_h + p.bands - 1) / p.bands;
	p.bands = (g->out_h + p.band_h - 1) / p.band_h;
	size_t col_n, items = bgc * (size_t)p.bands;
	if (checked_mul_size(per_plane_row * (size_t)p.cob, (size_t)p.rows, &col_n) ||
	    col_n > CPU_CONV_MAX_ELEMS)
		return bad(err, CPU_CONV_E_TOO_LARGE, "a column block too large");
	int threads;
	if ((rc = alloc_cols(&p, items, col_n, &threads, err)) == 0)
		par_each(items, threads, transpose_item, &p, NULL);
	free_cols(&p, threads);
	return rc;
}

static int run_geom(const struct cpu_conv_geom *g, int transpose, const float *in,
                    const float *weight, const float *bias, float *out, char *err)
{
	struct prob p;
	int rc = setup(g, in, weight, bias, out, &p, err);
	return rc ? rc : transpose ? transpose_run(&p, err) : conv2d_run(&p, err);
}

int cpu_conv2d_geom(const struct cpu_conv_geom *g, const float *in, const float *weight,
                    const float *bias, float *out, char err[CPU_CONV_ERR_LEN])
{
	return run_geom(g, 0, in, weight, bias, out, err);
}

int cpu_conv2d_transpose_geom(const struct cpu_conv_geom *g, const float *in,
                              const float *weight, const float *bias, float *out,
                              char err[CPU_CONV_ERR_LEN])
{
	return run_geom(g, 1, in, weight, bias, out, err);
}

/* ---- the engines' entry points ---- */

/* The fields spatial_conv and deconv_conv share, in a cpu_conv_geom's initializer. */
#define GEOM_SHARED(c)                                                                       \
	.batch = (c)->batch, .in_c = (c)->in_c, .in_h = (c)->in_h, .in_w = (c)->in_w,           \
	.out_c = (c)->out_c, .groups = (c)->groups, .k_h = (c)->k_h, .k_w = (c)->k_w,           \
	.stride_h = (c)->stride_h, .stride_w = (c)->stride_w, .dil_h = (c)->dil_h,              \
	.dil_w = (c)->dil_w

int cpu_conv2d(const struct spatial_conv *c, int out_h, int out_w, const float *in,
               const float *weight, const float *bias, float *out, int threads,
               char err[CPU_CONV_ERR_LEN])
{
	if (!c || c->pad_h < 0 || c->pad_w < 0)
		return bad(err, CPU_CONV_E_ARG, c ? "a negative padding" : "no convolution given");
	struct cpu_conv_geom g = {GEOM_SHARED(c), .pad_h = c->pad_h, .pad_w = c->pad_w,
	                          .out_h = out_h, .out_w = out_w, .threads = threads};
	return cpu_conv2d_geom(&g, in, weight, bias, out, err);
}

int cpu_conv2d_transpose(const struct deconv_conv *c, int out_h, int out_w, int pad_top,
                         int pad_left, const float *in, const float *weight, const float *bias,
                         float *out, int threads, char err[CPU_CONV_ERR_LEN])
{
	if (!c)
		return bad(err, CPU_CONV_E_ARG, "no convolution given");
	struct cpu_conv_geom g = {GEOM_SHARED(c), .pad_h = pad_top, .pad_w = pad_left,
	                          .out_h = out_h, .out_w = out_w, .threads = threads};
	return cpu_conv2d_transpose_geom(&g, in, weight, bias, out, err);
}
