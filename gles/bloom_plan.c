/* The bloom's plans per padded size (FFT axes, fused columns, buffers) and its programs (built
 * on first use, held, uniform locations looked up once); the stages that run on a plan are
 * bloom_stages.c's. See bloom_internal.h. */
#include "gles/bloom_internal.h"

#include "gles/fault.h"
#include "gles/fft_plan.h"
#include "gles/gl_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

static const char *const uniform_names[U_COUNT] = {
	"u_img", "u_pad", "u_threshold", "u_knee", "u_clamp", "u_intensity", "u_mix",
	"u_composite", "u_ksize", "u_src", "u_center", "u_scale", "u_sub", "u_off", "u_stride",
	"u_gray", "u_orient", "u_fancy", "u_cdim", "u_src_stride", "u_dst_stride",
	"u_src_valid", "u_dst_rows", "u_dst_cols", "u_bloom",
};

static const char *const shader_names[SH_COUNT] = {
	"bloom_common+bloom_math+bloom_pack", "bloom_common+bloom_multiply",
	"bloom_common+bloom_math+bloom_composite", "bloom_common+bloom_kernel",
	"bloom_common+yuv_unpack", "transpose",
};

GLuint bloom_buffer(size_t bytes, GLenum usage)
{
	return gl_buf_new(bytes, NULL, usage, NULL);
}

/* The #define preamble and cache key of a shader's variant: the one switch of the bloom shaders
 * (PREFILTER, GRAY or BLOOM) and float16 storage; for the transpose, the element type. */
static void variant_defines(int sh, int variant, int half, char *defs, size_t len, int key[2])
{
	if (sh == SH_TRANSPOSE) {
		static const char *types[2][2] = {{"vec2", "vec4"}, {"uint", "uvec2"}};
		const char *e = types[half ? 1 : 0][variant];
		snprintf(defs, len, "#define E %s\n#define EZERO %s(0)\n", e, e);
		key[0] = variant ? 4 : 2;
	} else {
		snprintf(defs, len,
		         "#define PREFILTER %d\n#define GRAY %d\n#define BLOOM %d\n#define P_F16 %d\n",
		         variant, variant, variant, half);
		key[0] = variant;
	}
	key[1] = half;
}

int bloom_prog(struct bloom_ctx *b, int sh, int variant, int half, const struct bloom_prog **out,
               char err[BLOOM_ERR_LEN])
{
	struct bloom_prog *p = &b->progs[sh][variant != 0][half != 0];
	if (!p->id) {
		char defs[160], perr[PROGRAM_ERR_LEN];
		int key[2];
		unsigned id;
		variant_defines(sh, variant != 0, half != 0, defs, sizeof defs, key);
		if (program_get(b->pc, shader_names[sh], key, sizeof key, defs, &id, perr)) {
			snprintf(err, BLOOM_ERR_LEN, "%s", perr);
			return BLOOM_E_GPU;
		}
		program_hold(b->pc, id); /* dropped by bloom_progs_drop */
		program_uniforms(id, uniform_names, U_COUNT, p->u);
		p->id = id;
	}
	*out = p;
	return 0;
}

void bloom_progs_drop(struct bloom_ctx *b)
{
	for (int sh = 0; sh < SH_COUNT; sh++)
		for (int v = 0; v < 2; v++)
			for (int h = 0; h < 2; h++)
				if (b->progs[sh][v][h].id) {
					program_drop(b->pc, b->progs[sh][v][h].id);
					b->progs[sh][v][h].id = 0;
				}
}

static int fits(const void *ctx, int pw, int ph)
{
	return bloom_fits(ctx, pw, ph);
}

void bloom_tile_padded(const struct bloom_fit *f, int tw, int th, int kw, int kh, int cx, int cy,
                       int *pw, int *ph)
{
	fft_conv_size_fit(f->h, fft_tile_span(f->w, tw, kw, cx), fft_tile_span(f->h, th, kh, cy), fits,
	                  f, pw, ph);
}

/* pw rounded up to whole tiles of 2^log columns. */
static size_t tiled_width(int pw, int log)
{
	size_t tile = (size_t)1 << log;
	return ((size_t)pw + tile - 1) / tile * tile;
}

/* log2 of n columns, at most FFT_TILE_LOG_MAX. */
static int columns_log(int n)
{
	int log = 0;
	while ((2 << log) <= n && log < FFT_TILE_LOG_MAX)
		log++;
	return log;
}

size_t bloom_plan_bytes(int pw, int ph, int half)
{
	size_t pitch = pw > FFT_ROUNDS_ABOVE ? tiled_width(pw, columns_log(BLOOM_TILE_COLUMNS))
	                                     : (size_t)pw + (pw & 1);
	return pitch * ph * (half ? 8 : 16) + (size_t)pw * ph * ((half ? 8 : 0) + 3 * 16 + 16);
}

void bloom_release_all(struct bloom_ctx *b)
{
	bloom_rows_tune_free(b); /* its io programs held, and the plans it measures go */
	while (!bloom_release_plan(b)) {
	}
	bloom_kcache_free(b);
	bloom_staging_free(b);
}

void bloom_plan_destroy(struct plan *q)
{
	if (!q)
		return;
	if (q->rows4k != q->rows4) {
		fft_axis_destroy(q->rows4k);
		fft_axis_destroy(q->cols4k);
	}
	fft_axis_destroy(q->rows4);
	fft_axis_destroy(q->cols4);
	fft_axis_destroy(q->rows2);
	fft_axis_destroy(q->cols2);
	fft_conv_destroy(q->conv4);
	fft_conv_destroy(q->conv2);
	fft_conv_destroy(q->conv4p);
	for (int i = 0; i < 2; i++) {
		fft_io_destroy(q->rows_in[i]);
		fft_io_destroy(q->rows_out[i]);
	}
	GLuint bufs[] = {q->padded, q->image, q->out, q->staging, q->q};
	glDeleteBuffers(5, bufs); /* 0 names are ignored */
	free(q);
}

struct plan *bloom_find_plan(const struct bloom_ctx *b, int pw, int ph, int technique, int half)
{
	for (int i = 0; i < b->plans.n; i++) {
		struct plan *q = b->plans.e[i];
		if (q->pw == pw && q->ph == ph && q->technique == technique && q->half == half)
			return q;
	}
	return NULL;
}

int bloom_plan_cached(const struct bloom_ctx *b, int pw, int ph, const struct bloom_params *p)
{
	return bloom_find_plan(b, pw, ph, p->technique, p->precision == BLOOM_FP16) != NULL;
}

/* The plan's FFT axes: the image's (vec4, float16 storage with half, the forward scaled so that
 * float16 spectra stay in range), colour kernels' (vec4 float32: the image's unless half) and
 * gray kernels' (vec2 float32). */
static int make_axes(struct bloom_ctx *b, struct plan *q, char err[FFT_ERR_LEN])
{
	size_t elems = (size_t)q->pw * q->ph;
	int pw = q->pw, ph = q->ph;
	struct fft_opts o4 = {.technique = q->technique, .components = 4, .half = q->half,
	                      .norm_forward = q->half, .pad_from = b->opts.fft_pad_from,
	                      .wisdom = b->opts.wisdom, .split = b->opts.rows_split,
	                      .probe = b->opts.rows_probe};
	struct fft_opts o4k = o4, o2 = o4;
	o4.io = b->opts.ends_in_rows >= 0; /* the image's rows may take the ends (want_io) */
	o4k.half = o4k.norm_forward = 0;
	o2.half = o2.norm_forward = o2.split = 0; /* rows_split measures the image's rows */
	o2.components = 2;
	int rc = fft_axis_create(b->pc, b->info, pw, 0, elems, ph, &o4, &b->log, &q->rows4, err);
	if (!rc)
		rc = fft_axis_create(b->pc, b->info, ph, 1, elems, pw, &o4, &b->log, &q->cols4, err);
	q->rows4k = q->rows4;
	q->cols4k = q->cols4;
	if (!rc && q->half) {
		q->rows4k = q->cols4k = NULL;
		rc = fft_axis_create(b->pc, b->info, pw, 0, elems, ph, &o4k, &b->log, &q->rows4k, err);
		if (!rc)
			rc = fft_axis_create(b->pc, b->info, ph, 1, elems, pw, &o4k, &b->log, &q->cols4k, err);
	}
	if (!rc)
		rc = fft_axis_create(b->pc, b->info, pw, 0, elems, ph, &o2, &b->log, &q->rows2, err);
	if (!rc)
		rc = fft_axis_create(b->pc, b->info, ph, 1, elems, pw, &o2, &b->log, &q->cols2, err);
	return rc;
}

/* A fused column program: gray, or colour with its columns in the pair order or not; in the
 * plan's tiles. */
static int make_conv(struct bloom_ctx *b, struct plan *q, int gray, int pairs,
                     struct fft_conv **out)
{
	struct fft_opts oc = {.technique = FFT_TECH_SHARED, .components = 4, .half = q->half,
	                      .norm_forward = q->half,
	                      .pad_from = b->opts.conv_pad ? -1 : b->opts.fft_pad_from,
	                      .threads = b->opts.conv_threads, .split = b->opts.conv_split,
	                      .probe = b->opts.conv_probe,
	                      .mult_shared = b->opts.conv_mult_shared};
	char cerr[FFT_ERR_LEN];
	int layout = (pairs ? FFT_IO_PAIRS : 0) | FFT_IO_TILES(q->tile_log);
	return fft_conv_create(b->pc, b->info, q->ph, q->pw, gray, layout, &oc, out, cerr);
}

/* Whether the ends go into the rows (make_io): the rule or the option. */
static int want_io(const struct bloom_ctx *b, const struct plan *q)
{
	const struct fft_plan *p = fft_axis_plan(q->rows4);
	return p->shared && (b->opts.ends_in_rows > 0 || (b->opts.ends_in_rows == 0 && p->split));
}

/* The row spectra's tiles where the ends are in the rows and the columns fused in place:
 * log2 of the columns a tile, or 0 for rows a pitch apart. The rule, BLOOM_TILE_COLUMNS: a
 * column's group reads 16 contiguous bytes a row times as many, among its neighbours', where it
 * read them a whole row pitch apart (bench/RESULTS.md, "The row spectra in tiles"). */
static int tile_log(const struct bloom_ctx *b, const struct plan *q)
{
	int log = columns_log(b->opts.spectrum_tiles ? b->opts.spectrum_tiles : BLOOM_TILE_COLUMNS);
	return tiled_width(q->pw, log) * q->ph * (q->half ? 8 : 16) <= (size_t)b->info->max_ssbo_size ? log : 0;
}

/* Fused columns (two columns a work group forward, multiplied, inverse) wherever two columns
 * fit shared memory, as they are at least as fast as separate column passes (bench/RESULTS.md,
 * log of decisions: "fused column pass"); elsewhere the columns run as separate passes. In place
 * where the row spectra are in tiles, or are float32; through a transposed copy for float16 rows
 * a pitch apart, whose 8-byte elements would use a quarter of each 32-byte sector read down a
 * column (bench/RESULTS.md, "The fused columns in place", "The row spectra in tiles");
 * opts.fused_layout overrides. io 0: the rows will not take the ends (no tiles, no pair
 * order). */
static void make_fused(struct bloom_ctx *b, struct plan *q, int programs_only, int io)
{
	int layout = b->opts.fused_layout, tiles = io && want_io(b, q) ? tile_log(b, q) : 0;
	int transposed = layout == BLOOM_FUSED_AUTO ? q->half && !tiles
	                                            : layout == BLOOM_FUSED_TRANSPOSED;
	/* in place with the ends in the rows, colour kernels: the row spectra in the pair order, so
	 * that a group's two columns share each 32-byte sector (bench/RESULTS.md, "Hermitian pairs
	 * side by side"); gray kernels' groups already take neighbours. Its programs are built in
	 * idle time once a colour kernel has run here (bloom_plan_pairs_step), so that a plan of
	 * gray kernels only never compiles them. */
	q->pairs_want = !transposed && io && want_io(b, q) && b->opts.column_pairs == 0;
	q->tile_log = transposed ? 0 : tiles;
	if (!make_conv(b, q, 0, 0, &q->conv4) && !make_conv(b, q, 1, 0, &q->conv2)) {
		q->fused = transposed ? BLOOM_FUSED_TRANSPOSED : BLOOM_FUSED_IN_PLACE;
		if (transposed && !programs_only) {
			q->q = bloom_buffer((size_t)q->pw * q->ph * (q->half ? 8 : 16), GL_DYNAMIC_COPY);
			if (!q->q)
				q->fused = 0;
		}
	}
	if (!q->fused) {
		fft_conv_destroy(q->conv4);
		fft_conv_destroy(q->conv2);
		q->conv4 = q->conv2 = NULL;
		q->pairs_want = 0;
		q->tile_log = 0; /* separate column passes: rows a pitch apart */
	}
}

int bloom_io_make(struct bloom_ctx *b, const struct fft_axis *rows, int order, int tile_log,
                  int inverse, struct fft_io **f, struct bloom_prog *pr, char ferr[FFT_ERR_LEN])
{
	int io = (inverse ? FFT_IO_STORE : FFT_IO_LOAD) | (order ? FFT_IO_PAIRS : 0) |
	         FFT_IO_TILES(tile_log);
	if (fft_io_create(b->pc, rows, inverse, io, "bloom_math+bloom_io", 0, f, ferr))
		return -1;
	pr->id = fft_io_program(*f);
	program_uniforms(pr->id, uniform_names, U_COUNT, pr->u);
	return 0;
}

/* One io program of an order (0 natural, 1 pairs): the forward rows with the prefilter (inverse
 * 0) or the inverse rows with the composite (1), and its uniforms. */
static int make_io_one(struct bloom_ctx *b, struct plan *q, int order, int inverse,
                       char ferr[FFT_ERR_LEN])
{
	return bloom_io_make(b, q->rows4, order, q->tile_log, inverse,
	                     inverse ? &q->rows_out[order] : &q->rows_in[order],
	                     inverse ? &q->io_out[order] : &q->io_in[order], ferr);
}

/* The prefilter in the forward rows' loads and the composite in the inverse rows' stores, where
 * the columns are fused (so the padding rows are never read) and the rows run in shared memory
 * in two vec2 rounds: two passes over the frame fewer, measured faster there (2048-4375) and
 * slower where the rows exchange whole vec4 (2048, 2240 when they did; bench/RESULTS.md, "The
 * fused columns in place, their shape"). Where a program cannot be had the passes stay
 * separate, and the fused columns are made again for rows a pitch apart (float16 through the
 * transposed copy, by the rule). */
static void make_io(struct bloom_ctx *b, struct plan *q, int programs_only)
{
	char ferr[FFT_ERR_LEN];
	if (!q->fused || !want_io(b, q))
		return;
	if (make_io_one(b, q, 0, 0, ferr) || make_io_one(b, q, 0, 1, ferr)) {
		int refused = program_cache_refused(b->pc); /* a budget's refusal defers the plan */
		if (!refused)
			log_sinkf(&b->log, LOG_WARN, "padded %dx%d: the prefilter and composite stay "
			          "passes of their own: %s", q->pw, q->ph, ferr);
		fft_io_destroy(q->rows_in[0]);
		fft_io_destroy(q->rows_out[0]);
		q->rows_in[0] = q->rows_out[0] = NULL;
		q->pairs_want = 0;
		if (q->tile_log && !refused) {
			fft_conv_destroy(q->conv4);
			fft_conv_destroy(q->conv2);
			q->conv4 = q->conv2 = NULL;
			q->fused = 0;
			make_fused(b, q, programs_only, 0);
			if (!q->fused)
				log_sinkf(&b->log, LOG_WARN, "padded %dx%d: the columns run as separate "
				          "passes: their fused program for rows a pitch apart cannot be had",
				          q->pw, q->ph);
		}
	}
}

void bloom_plan_pairs_step(struct bloom_ctx *b, struct plan *q)
{
	char ferr[FFT_ERR_LEN];
	int rc = 0;
	if (!q->pairs_want || bloom_plan_pairs(q))
		return;
	if (!q->conv4p)
		rc = make_conv(b, q, 0, 1, &q->conv4p);
	else if (!q->rows_in[1])
		rc = make_io_one(b, q, 1, 0, ferr);
	else
		rc = make_io_one(b, q, 1, 1, ferr);
	if (rc && !program_cache_refused(b->pc)) {
		log_sinkf(&b->log, LOG_WARN, "padded %dx%d: colour kernels keep the natural order "
		          "of the row spectra: a program of the pair order cannot be had", q->pw, q->ph);
		q->pairs_want = 0;
	}
}

static int make_buffers(struct plan *q)
{
	if (gles_fault_fire(GLES_FAULT_OOM, NULL))
		return BLOOM_E_GPU_MEMORY;
	size_t elems = (size_t)q->pw * q->ph;
	q->padded = bloom_buffer((size_t)q->pitch * q->ph * (q->half ? 8 : 16), GL_DYNAMIC_COPY);
	q->image = q->padded ? bloom_buffer(elems * 16, GL_DYNAMIC_COPY) : 0;
	q->out = q->image ? bloom_buffer(elems * 16, GL_DYNAMIC_COPY) : 0;
	q->staging = q->out ? bloom_buffer(elems * 16, GL_STREAM_READ) : 0;
	return q->staging ? 0 : BLOOM_E_GPU_MEMORY;
}

int bloom_plan_lru(const struct bloom_ctx *b)
{
	int lru = b->plans.n ? 0 : -1;
	for (int i = 1; i < b->plans.n; i++)
		if (b->plans.e[i]->last_use < b->plans.e[lru]->last_use)
			lru = i;
	return lru;
}

void bloom_cache_insert(struct bloom_ctx *b, struct plan *q)
{
	if (b->plans.n == b->opts.max_plans) {
		int lru = bloom_plan_lru(b);
		bloom_plan_destroy(b->plans.e[lru]);
		b->plans.e[lru] = b->plans.e[--b->plans.n];
	}
	q->last_use = b->tick;
	q->used_ms = bloom_ctx_now_ms(b);
	b->plans.e[b->plans.n++] = q;
}

int bloom_plan_build(struct bloom_ctx *b, int pw, int ph, int technique, int half,
                     int programs_only, struct plan **out, char err[BLOOM_ERR_LEN])
{
	size_t elems = (size_t)pw * ph;
	if (elems * 16 > (size_t)b->info->max_ssbo_size) {
		snprintf(err, BLOOM_ERR_LEN, "padded size %dx%d needs a %zu MiB buffer; this GPU's "
		         "storage-buffer limit is %lld MiB", pw, ph, (elems * 16) >> 20,
		         b->info->max_ssbo_size >> 20);
		return BLOOM_E_TOO_LARGE;
	}
	struct plan *q = calloc(1, sizeof *q);
	if (!q)
		return BLOOM_E_NOMEM;
	q->pw = pw;
	q->ph = ph;
	q->technique = technique;
	q->half = half;
	char ferr[FFT_ERR_LEN];
	int rc = make_axes(b, q, ferr);
	if (rc) {
		snprintf(err, BLOOM_ERR_LEN, "FFT plan for %dx%d: %.3900s", pw, ph, ferr);
		bloom_plan_destroy(q);
		return rc == FFT_E_LIMIT ? BLOOM_E_TOO_LARGE : BLOOM_E_GPU;
	}
	struct fft_axis *axes[] = {q->rows4, q->cols4, q->rows4k, q->cols4k, q->rows2, q->cols2};
	for (size_t i = 0; i < sizeof axes / sizeof axes[0]; i++)
		q->provisional |= fft_axis_provisional(axes[i]);
	q->wisdom_gen = b->opts.wisdom ? fft_wisdom_generation(b->opts.wisdom) : 0;
	make_fused(b, q, programs_only, 1);
	make_io(b, q, programs_only);
	/* the io rows' own shape measured where the wisdom measures and has none for it (the
	 * plan rebuilt once it has: bloom_ctx_refresh) */
	q->rows_tune = q->rows_in[0] && q->rows_out[0] && fft_axis_io_unmeasured(q->rows4) &&
	               !b->opts.rows_split &&
	               fft_wisdom_measure(b->opts.wisdom) != FFT_WISDOM_MEASURE_NEVER;
	/* an even pitch where the row spectra are read by the FFT passes only: a column's group then
	 * reads whole 32-byte sectors on every row, not only every other (bench/RESULTS.md, "An even
	 * row pitch") */
	q->pitch = pw + (pw % 2 && q->fused == BLOOM_FUSED_IN_PLACE && q->rows_in[0] &&
	                 q->rows_out[0] && b->opts.even_pitch == 0 &&
	                 (elems + ph) * (half ? 8 : 16) <= (size_t)b->info->max_ssbo_size);
	if (q->tile_log) /* whole tiles (tile_log checked that they fit) */
		q->pitch = (int)tiled_width(pw, q->tile_log);
	if (program_cache_refused(b->pc)) { /* the fused columns are deferred, not impossible */
		snprintf(err, BLOOM_ERR_LEN, "padded size %dx%d: %s", pw, ph,
		         program_strerror(PROGRAM_E_BUDGET));
		bloom_plan_destroy(q);
		return BLOOM_E_GPU;
	}
	if (programs_only) {
		bloom_plan_destroy(q);
		*out = NULL;
		return 0;
	}
	if (make_buffers(q)) {
		snprintf(err, BLOOM_ERR_LEN, "padded size %dx%d: out of GPU memory (%zu MiB for its "
		         "buffers)", pw, ph, bloom_plan_bytes(pw, ph, q->half) >> 20);
		bloom_plan_destroy(q);
		return BLOOM_E_GPU_MEMORY;
	}
	*out = q;
	return 0;
}

int bloom_plan_get(struct bloom_ctx *b, int pw, int ph, const struct bloom_params *p,
                   struct plan **out, char err[BLOOM_ERR_LEN])
{
	b->tick++;
	struct plan *q = bloom_find_plan(b, pw, ph, p->technique, p->precision == BLOOM_FP16);
	if (q) {
		q->last_use = b->tick;
		b->st.plan_hits++;
		*out = q;
		return 0;
	}
	b->st.plan_misses++;
	int rc = bloom_plan_build(b, pw, ph, p->technique, p->precision == BLOOM_FP16, 0, &q, err);
	if (rc)
		return rc;
	bloom_cache_insert(b, q);
	*out = q;
	return 0;
}

/* Tiles whose output and kernel reach fit a fixed padded size (fft_tile_span: a tile that is
 * a whole side of the w x h frame needs that side's span): each costs the same. */
struct fixed_size {
	int pw, ph, kw, kh, cx, cy, w, h;
};

static double fixed_cost(void *ctx, int tw, int th)
{
	const struct fixed_size *f = ctx;
	return fft_tile_span(f->w, tw, f->kw, f->cx) <= f->pw &&
	       fft_tile_span(f->h, th, f->kh, f->cy) <= f->ph ? 1.0 : -1.0;
}

int bloom_plan_borrow(const struct bloom_ctx *b, int w, int h, const struct kinfo *ki,
                      const struct bloom_params *p, int pw, int ph, struct borrow *out)
{
	memset(out, 0, sizeof *out);
	if (!b->opts.borrow_plans || bloom_plan_cached(b, pw, ph, p))
		return 0;
	double limit = (double)BLOOM_BORROW_COST * pw * ph, best = -1;
	int best_tiled = 1;
	/* on a GPU, past the limit, the cheapest plan still: its FFTs take milliseconds where the
	 * frame's own plan's compiles take seconds (a software renderer's FFTs take as long) */
	for (int pass = 0; pass < 2 && best < 0; pass++, limit = HUGE_VAL)
	for (int i = 0; i < b->plans.n && (pass == 0 || !b->info->software); i++) {
		const struct plan *q = b->plans.e[i];
		if (q->technique != p->technique || q->half != (p->precision == BLOOM_FP16))
			continue;
		double area = (double)q->pw * q->ph, cost;
		int tiled = q->pw < fft_conv_span(w, ki->kw, ki->cx) ||
		            q->ph < fft_conv_span(h, ki->kh, ki->cy);
		struct tile_grid g;
		memset(&g, 0, sizeof g);
		if (tiled) {
			struct fixed_size f = {q->pw, q->ph, ki->kw, ki->kh, ki->cx, ki->cy, w, h};
			if (tile_grid_choose(w, h, ki->kw, ki->kh, ki->cx, ki->cy, 0, fixed_cost, &f, &g))
				continue; /* no tile of TILE_MIN_SIDE holds with the kernel's reach */
			cost = area * tile_count(&g);
		} else {
			cost = area;
		}
		/* the whole frame first (no tile copies on the CPU), then the fewest pixels */
		if (cost > limit || (best >= 0 && (tiled > best_tiled ||
		                                   (tiled == best_tiled && cost >= best))))
			continue;
		best = cost;
		best_tiled = tiled;
		out->pw = q->pw, out->ph = q->ph, out->tiled = tiled, out->g = g;
	}
	return best >= 0;
}

void bloom_plan_evict(struct bloom_ctx *b, struct plan *q)
{
	for (int i = 0; i < b->plans.n; i++)
		if (b->plans.e[i] == q) {
			b->plans.last.valid = 0;
			bloom_plan_destroy(q);
			b->plans.e[i] = b->plans.e[--b->plans.n];
			return;
		}
}

int bloom_release_plan(struct bloom_ctx *b)
{
	int lru = bloom_plan_lru(b);
	if (lru < 0)
		return -1;
	b->plans.last.valid = 0;
	bloom_plan_destroy(b->plans.e[lru]);
	b->plans.e[lru] = b->plans.e[--b->plans.n];
	return 0;
}
