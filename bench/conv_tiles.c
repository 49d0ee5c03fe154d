/* conv_tiles: the gemm algorithm's tile sweep (issue 40): the conv suite's shapes (bench/
 * conv_bench.sh: B=16 128 -> 128 3x3 128^2; a 1080p RGBA image as a (4, 1, H, W) batch with 5x5
 * and 15x15 kernels; the transposed 64 -> 32 k4 s2 256^2 and k3 s2 op1 512^2 through subkernel)
 * run with gemm on every tile of spatial_plan_gemm_tiles and on the rule's, at precision 3 and
 * at precision 2 in packed float16 arithmetic (spatial_opts.gemm_half2), on random inputs. One result line a (workload, tile,
 * precision): the median GPU milliseconds of --runs timed runs after --warmup (the GPU's work
 * without the transfers, timer queries where the context has them), the workload IDs those of
 * conv_bench.sh with the variant gemm-tTILE-pPRECISION (tile 0: the rule, detail.tile naming
 * the one it chose); on the 3x3 shape also winograd-mM-pPRECISION, F(M x M, 3 x 3) on the
 * rule's tile (--wtiles: others), and conv.wgemm_*, F(4x4)'s GEMMs alone as a grouped 1x1
 * convolution, and the same GEMMs at K 256, 512 and 1152 in fewer groups. --quick:
 * conv_bench.sh's QUICK shapes, for llvmpipe. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_json.h"
#include "bench/bench_opts.h"
#include "gles/deconv.h"
#include "gles/egl.h"
#include "gles/program.h"
#include "gles/spatial.h"

struct opts {
	int runs, warmup, quick, precision;
	char tiles[OPT_STR_MAX], wtiles[OPT_STR_MAX], only[OPT_STR_MAX], machine[OPT_STR_MAX];
};

#define O(f) offsetof(struct opts, f)
static const struct opt_def opt_table[] = {
	{"runs", OPT_INT, 1, 10000, "10", NULL, "timed runs a variant (the median is reported)",
	 NULL, O(runs)},
	{"warmup", OPT_INT, 0, 1000, "2", NULL, "untimed runs first (the first builds the plan)",
	 NULL, O(warmup)},
	{"quick", OPT_BOOL, 0, 1, "false", NULL, "conv_bench.sh's QUICK shapes (llvmpipe)", NULL,
	 O(quick)},
	{"precision", OPT_INT, -1, 3, "-1", NULL, "only this precision level; -1: 3 and 2", NULL,
	 O(precision)},
	{"tiles", OPT_STRING, 0, 0, "", NULL,
	 "comma-separated tiles (0: the rule, 1..14: spatial_plan_gemm_tiles); empty: all", NULL,
	 O(tiles)},
	{"wtiles", OPT_STRING, 0, 0, "0", NULL,
	 "winograd's GEMM tiles, comma-separated as --tiles (0: the rule); empty: all", NULL,
	 O(wtiles)},
	{"only", OPT_STRING, 0, 0, "", NULL, "workload IDs or prefixes (bench_list_matches)", NULL,
	 O(only)},
	{"machine", OPT_STRING, 0, 0, "", NULL, "the lines' machine; empty: from the renderer", NULL,
	 O(machine)},
};
#undef O

static const char usage[] =
	"usage: conv_tiles [options]\n"
	"gemm's tiles on the conv suite's shapes, one result line each on stdout.\n";

#define WORKS 10

/* One workload: a conv2d (deconv 0) or a transposed convolution through subkernel. */
struct work {
	char id[96];
	int deconv;
	struct spatial_conv c;
	struct deconv_conv d;
};

static int make_work(int quick, struct work *w)
{
	int b = quick ? 4 : 16, ch = quick ? 8 : 128, s = quick ? 16 : 128;
	int n = 0;
	memset(w, 0, WORKS * sizeof *w);
	snprintf(w[n].id, sizeof w[n].id, "conv.conv2d_b%d_c%d_k3_%d", b, ch, s);
	w[n].c = (struct spatial_conv){.batch = b, .in_c = ch, .in_h = s, .in_w = s, .out_c = ch,
	                               .k_h = 3, .k_w = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1,
	                               .stride_w = 1};
	n++;
	int h = quick ? 54 : 1080, wd = quick ? 96 : 1920;
	for (int k = 5; k <= 15; k += 10, n++) {
		snprintf(w[n].id, sizeof w[n].id, "conv.image_k%d_%dp", k, h);
		w[n].c = (struct spatial_conv){.batch = 4, .in_c = 1, .in_h = h, .in_w = wd, .out_c = 1,
		                               .k_h = k, .k_w = k, .pad_h = k / 2, .pad_w = k / 2,
		                               .stride_h = 1, .stride_w = 1};
	}
	int ci = quick ? 8 : 64, co = quick ? 4 : 32;
	for (int k = 4; k >= 3; k--, n++) {
		int sz = (k == 4 ? 256 : 512) / (quick ? 16 : 1);
		snprintf(w[n].id, sizeof w[n].id, "conv.deconv_c%dto%d_k%ds2_%d", ci, co, k, sz);
		w[n].deconv = 1;
		w[n].d = (struct deconv_conv){.batch = 1, .in_c = ci, .in_h = sz, .in_w = sz,
		                              .out_c = co, .k_h = k, .k_w = k, .stride_h = 2,
		                              .stride_w = 2, .pad_h = 1, .pad_w = 1,
		                              .out_pad_h = k == 3, .out_pad_w = k == 3,
		                              .method = DECONV_SUBKERNEL,
		                              .conv_algorithm = SPATIAL_ALG_GEMM, .time_stages = 1};
	}
	/* the first shape's F(4x4, 3x3) GEMMs alone: a 1x1 convolution of 36 groups over its tiles
	 * (what winograd runs between its transforms, read from a tensor instead of its buffer) */
	int t4 = (s + 3) / 4;
	snprintf(w[n].id, sizeof w[n].id, "conv.wgemm_b%d_g36_c%d_%d", b, ch, t4);
	w[n].c = (struct spatial_conv){.batch = b, .in_c = 36 * ch, .in_h = t4, .in_w = t4,
	                               .out_c = 36 * ch, .groups = 36, .k_h = 1, .k_w = 1,
	                               .stride_h = 1, .stride_w = 1};
	n++;
	/* the same 1x1 GEMMs with longer K at fewer groups (K 256, 512, 1152): how a work group's
	 * rate follows its K */
	static const int kg[][2] = {{256, 18}, {512, 9}, {1152, 4}}; /* K, groups */
	for (int i = 0; !quick && i < 3; i++, n++) {
		int kk = kg[i][0], g = kg[i][1];
		snprintf(w[n].id, sizeof w[n].id, "conv.wgemm_b%d_g%d_k%d_%d", b, g, kk, t4);
		w[n].c = (struct spatial_conv){.batch = b, .in_c = g * kk, .in_h = t4, .in_w = t4,
		                               .out_c = g * ch, .groups = g, .k_h = 1, .k_w = 1,
		                               .stride_h = 1, .stride_w = 1};
	}
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static float *rand_floats(size_t n, float scale)
{
	float *p = malloc((n ? n : 1) * sizeof *p);
	unsigned long long s = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; p && i < n; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		p[i] = scale * (float)((double)(s >> 11) / 9007199254740992.0 * 2 - 1);
	}
	return p;
}

/* Runs w (runs + warmup times) on a spatial context with gemm tile `tile` at precision prec;
 * the median GPU ms in *ms and the tile the plan chose in *chosen. 0, or -1 with err. */
static int time_work(struct program_cache *pc, const struct egl_info *info, struct work *w,
                     int tile, int wm, int prec, const struct opts *o, double *ms, char *used,
                     size_t used_len, char err[SPATIAL_ERR_LEN])
{
	struct spatial_opts so = {0};
	so.gemm_tile = tile;
	so.winograd_m = wm;
	so.gemm_half2 = prec == 2; /* the packed kernel's tiles (the product's precision 2 runs
	                              float32 arithmetic: conv_bench.sh's gemm-precision2) */
	struct spatial_ctx *s = NULL;
	struct deconv_ctx *d = NULL;
	if (spatial_ctx_create(pc, info, &so, NULL, &s, err) ||
	    (w->deconv && deconv_ctx_create(pc, info, s, NULL, &d, err))) {
		spatial_ctx_destroy(s);
		return -1;
	}
	int rc = 0, oh, ow, pt, pl;
	size_t nx, nw, ny;
	if (w->deconv) {
		struct deconv_conv *c = &w->d;
		rc = deconv_output(c, &oh, &ow, &pt, &pl, err);
		nx = (size_t)c->batch * c->in_c * c->in_h * c->in_w;
		nw = (size_t)c->in_c * c->out_c * c->k_h * c->k_w;
		ny = (size_t)c->batch * c->out_c * oh * ow;
	} else {
		struct spatial_conv *c = &w->c;
		c->precision = prec, c->time_stages = 1;
		c->algorithm = wm ? SPATIAL_ALG_WINOGRAD : SPATIAL_ALG_GEMM;
		rc = spatial_conv_output(c, &oh, &ow, err);
		nx = (size_t)c->batch * c->in_c * c->in_h * c->in_w;
		nw = (size_t)c->out_c * (c->in_c / (c->groups > 1 ? c->groups : 1)) * c->k_h * c->k_w;
		ny = (size_t)c->batch * c->out_c * oh * ow;
	}
	float *x = rand_floats(nx, 1), *wt = rand_floats(nw, 0.05f), *y = malloc(ny * sizeof *y);
	double *t = malloc((size_t)o->runs * sizeof *t);
	if (!x || !wt || !y || !t) {
		snprintf(err, SPATIAL_ERR_LEN, "out of memory");
		rc = -1;
	}
	for (int i = 0; !rc && i < o->warmup + o->runs; i++) {
		double g = NAN;
		if (w->deconv) {
			struct deconv_stats st;
			rc = deconv_run(d, &w->d, x, wt, NULL, y, &st, err);
			g = st.gpu_ms;
		} else {
			struct spatial_stats st;
			rc = spatial_conv2d(s, &w->c, x, wt, NULL, y, &st, err);
			g = st.gpu_ms;
		}
		if (i >= o->warmup)
			t[i - o->warmup] = g;
	}
	if (!rc) {
		qsort(t, (size_t)o->runs, sizeof *t, cmp_double);
		*ms = t[o->runs / 2];
		struct spatial_geom g;
		memset(&g, 0, sizeof g);
		if (w->deconv) /* the largest subkernel: stride-1 taps ceil(k / 2) */
			g = (struct spatial_geom){.batch = 1, .in_c = w->d.in_c, .out_c = w->d.out_c,
			                          .groups = 1, .k_h = (w->d.k_h + 1) / 2,
			                          .k_w = (w->d.k_w + 1) / 2, .out_h = oh / 2, .out_w = ow / 2};
		else
			g = (struct spatial_geom){.batch = w->c.batch, .in_c = w->c.in_c, .out_c = w->c.out_c,
			                          .groups = w->c.groups > 1 ? w->c.groups : 1,
			                          .k_h = w->c.k_h, .k_w = w->c.k_w,
			                          .out_h = oh, .out_w = ow};
		struct spatial_gemm_tile gt;
		int v = spatial_plan_gemm(&g, tile, &gt);
		if (wm) /* its GEMMs: float32, on the 1x1 convolution of the tiles */
			snprintf(used, used_len, "F(%dx%d, 3x3), float32 GEMMs, tile %d", wm, wm, tile);
		else
			snprintf(used, used_len, "%d: %dx%dx%d / %dx%d%s%s", v, gt.bm, gt.bn, gt.bk, gt.tm,
			         gt.tn, prec == 2 ? (spatial_ctx_caps(s)->half2 ? ", f16vec2"
			                                                         : ", mediump vec2") : "",
			         prec == 2 && gt.a16 ? ", A as halves" : "");
	}
	free(x);
	free(wt);
	free(y);
	free(t);
	deconv_ctx_destroy(d);
	spatial_ctx_destroy(s);
	return rc ? -1 : 0;
}

/* Times w with gemm's tile (wm 0) or winograd's F(wm x wm, 3 x 3) and prints its result line;
 * 1 when it failed. */
static int one_line(struct program_cache *pc, const struct egl_info *info,
                    const struct bench_meta *m, struct work *w, int tile, int wm, int prec,
                    const struct opts *o)
{
	char var[32], used[96] = "", err[SPATIAL_ERR_LEN];
	double ms = NAN;
	if (wm && tile)
		snprintf(var, sizeof var, "winograd-m%d-t%d-p%d", wm, tile, prec);
	else if (wm)
		snprintf(var, sizeof var, "winograd-m%d-p%d", wm, prec);
	else
		snprintf(var, sizeof var, "gemm-t%d-p%d", tile, prec);
	int rc = time_work(pc, info, w, tile, wm, prec, o, &ms, used, sizeof used, err);
	struct bench_line l;
	bench_line_begin(&l, stdout, m, w->id, "fftbloom", var);
	if (!rc)
		bench_metric(&l, "ms", ms);
	bench_detail_str(&l, rc ? "error" : "tile", rc ? err : used);
	bench_detail_num(&l, "precision", prec);
	bench_detail_num(&l, "runs", o->runs);
	bench_line_end(&l, m);
	fflush(stdout);
	fprintf(stderr, "%-28s %-14s %9.4f ms  %s%s\n", w->id, var, ms, rc ? "error: " : "",
	        rc ? err : used);
	return rc != 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	char **pos;
	int npos;
	int prc = bench_opts_parse("conv_tiles", usage, opt_table,
	                           sizeof opt_table / sizeof opt_table[0], &o, sizeof o, NULL, NULL,
	                           NULL, argc, argv, &pos, &npos);
	if (prc)
		return prc == 1 ? 0 : 2;
	free(pos);
	struct egl_opts eo = {EGLP_AUTO, 0, 0, 0};
	struct egl_ctx *ctx;
	char err[EGL_ERR_LEN > SPATIAL_ERR_LEN ? EGL_ERR_LEN : SPATIAL_ERR_LEN];
	if (egl_ctx_create(&eo, NULL, &ctx, err)) {
		fprintf(stderr, "conv_tiles: %s\n", err);
		return 1;
	}
	const struct egl_info *info = egl_ctx_info(ctx);
	struct program_cache *pc;
	if (program_cache_create("", NULL, &pc)) {
		egl_ctx_destroy(ctx);
		return 1;
	}
	struct bench_meta m;
	bench_meta_init(&m, "conv", info->renderer, info->version, "conv_tiles", argc, argv);
	if (o.machine[0])
		snprintf(m.machine, sizeof m.machine, "%.63s", o.machine);
	struct work w[WORKS];
	int nwork = make_work(o.quick, w), failures = 0;
	for (int i = 0; i < nwork; i++) {
		if (!bench_list_matches(o.only, w[i].id))
			continue;
		for (int prec = 3; prec >= 2; prec--) {
			if ((o.precision >= 0 && prec != o.precision) || (w[i].deconv && prec != 3))
				continue; /* the transposed convolution is float32 only */
			for (int tile = 0; tile < SPATIAL_PLAN_GEMM_TILES; tile++) {
				char tn[8];
				snprintf(tn, sizeof tn, "%d", tile);
				if (!o.tiles[0] || bench_list_matches(o.tiles, tn))
					failures += one_line(pc, info, &m, &w[i], tile, 0, prec, &o);
			}
			/* winograd's F(4x4, 3x3) and F(2x2, 3x3) on the 3x3 shape (the rule's tile; the
			 * product's F(4x4) first: a later context's run in one process measured up to 4x
			 * slower, bench/RESULTS.md) */
			for (int wm = 4; !w[i].deconv && w[i].c.k_h == 3 && wm >= 2; wm -= 2)
				for (int tile = 0; tile < SPATIAL_PLAN_GEMM_TILES; tile++) {
					char tn[8];
					snprintf(tn, sizeof tn, "%d", tile);
					if (!o.wtiles[0] || bench_list_matches(o.wtiles, tn))
						failures += one_line(pc, info, &m, &w[i], tile, wm, prec, &o);
				}
		}
	}
	program_cache_destroy(pc);
	egl_ctx_destroy(ctx);
	return failures ? 1 : 0;
}
