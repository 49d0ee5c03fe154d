/* The bloom's plans per padded size (FFT axes, fused columns, buffers), its programs (built on
 * first use, held, uniform locations looked up once), and the GPU stages from the prefilter to
 * the composite; see bloom_internal.h. */
#include "gles/bloom_internal.h"

#include "gles/fault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const uniform_names[U_COUNT] = {
	"u_img", "u_pad", "u_threshold", "u_knee", "u_clamp", "u_intensity", "u_mix", "u_composite",
	"u_ksize", "u_src", "u_center", "u_scale",
	"u_sub", "u_off", "u_stride", "u_gray", "u_orient", "u_fancy", "u_cdim", "u_dither",
	"u_flags", "u_plane", "u_pdim",
	"u_src_stride", "u_dst_stride", "u_src_valid", "u_dst_rows", "u_dst_cols", "u_quant",
};

static const char *const shader_names[SH_COUNT] = {
	"bloom_common+bloom_math+bloom_pack", "bloom_common+bloom_multiply",
	"bloom_common+bloom_math+bloom_composite", "bloom_common+bloom_kernel",
	"bloom_common+yuv_unpack", "bloom_common+yuv_sample+yuv_pack", "transpose",
	"bloom_common+yuv_sample+jpeg_fdct",
};

GLuint bloom_buffer(size_t bytes, GLenum usage)
{
	GLuint id = 0;
	glGenBuffers(1, &id);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, id);
	glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)bytes, NULL, usage);
	if (glGetError() != GL_NO_ERROR) {
		glDeleteBuffers(1, &id);
		return 0;
	}
	return id;
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

int bloom_padded_size(int n)
{
	return fft_good_size(n);
}

size_t bloom_plan_bytes(int pw, int ph, int half)
{
	return (size_t)pw * ph * ((half ? 8 : 16) + 3 * 16 + 16);
}

void bloom_release_all(struct bloom_ctx *b)
{
	while (!bloom_release_plan(b)) {
	}
	bloom_kcache_free(b);
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
	GLuint bufs[] = {q->padded, q->image, q->out, q->staging, q->q};
	for (int i = 0; i < 5; i++)
		if (bufs[i])
			glDeleteBuffers(1, &bufs[i]);
	free(q);
}

/* The plan of pw x ph with this technique and storage (half: float16), or NULL. */
static struct plan *find_plan(const struct bloom_ctx *b, int pw, int ph, int technique, int half)
{
	for (int i = 0; i < b->nplans; i++) {
		struct plan *q = b->plans[i];
		if (q->pw == pw && q->ph == ph && q->technique == technique && q->half == half)
			return q;
	}
	return NULL;
}

int bloom_plan_cached(const struct bloom_ctx *b, int pw, int ph, const struct bloom_params *p)
{
	return find_plan(b, pw, ph, p->technique, p->precision == BLOOM_FP16) != NULL;
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
	                      .wisdom = b->opts.wisdom};
	struct fft_opts o4k = o4, o2 = o4;
	o4k.half = o4k.norm_forward = 0;
	o2.half = o2.norm_forward = 0;
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

/* Fused columns (transposed spectrum, two columns a work group forward, multiplied, inverse)
 * wherever two columns fit shared memory, as they are at least as fast as separate column passes
 * (bench/RESULTS.md, log of decisions: "fused column pass"); elsewhere the columns run as
 * separate passes. */
static void make_fused(struct bloom_ctx *b, struct plan *q, int programs_only)
{
	struct fft_opts oc = {.technique = FFT_TECH_SHARED, .components = 4, .half = q->half,
	                      .norm_forward = q->half, .pad_from = b->opts.fft_pad_from};
	char cerr[FFT_ERR_LEN];
	if (!fft_conv_create(b->pc, b->info, q->ph, q->pw, 0, &oc, &q->conv4, cerr) &&
	    !fft_conv_create(b->pc, b->info, q->ph, q->pw, 1, &oc, &q->conv2, cerr) &&
	    !programs_only)
		q->q = bloom_buffer((size_t)q->pw * q->ph * (q->half ? 8 : 16), GL_DYNAMIC_COPY);
	if (!q->q) {
		fft_conv_destroy(q->conv4);
		fft_conv_destroy(q->conv2);
		q->conv4 = q->conv2 = NULL;
	}
}

static int make_buffers(struct plan *q)
{
	if (gles_fault_fire(GLES_FAULT_OOM, NULL))
		return BLOOM_E_GPU_MEMORY;
	size_t elems = (size_t)q->pw * q->ph;
	q->padded = bloom_buffer(elems * (q->half ? 8 : 16), GL_DYNAMIC_COPY);
	q->image = q->padded ? bloom_buffer(elems * 16, GL_DYNAMIC_COPY) : 0;
	q->out = q->image ? bloom_buffer(elems * 16, GL_DYNAMIC_COPY) : 0;
	q->staging = q->out ? bloom_buffer(elems * 16, GL_STREAM_READ) : 0;
	return q->staging ? 0 : BLOOM_E_GPU_MEMORY;
}

/* Adds q to the cache, destroying the least recently used plan past opts.max_plans. */
static void cache_insert(struct bloom_ctx *b, struct plan *q)
{
	if (b->nplans == b->opts.max_plans) {
		int lru = 0;
		for (int i = 1; i < b->nplans; i++)
			if (b->plans[i]->last_use < b->plans[lru]->last_use)
				lru = i;
		bloom_plan_destroy(b->plans[lru]);
		b->plans[lru] = b->plans[--b->nplans];
	}
	q->last_use = b->tick;
	b->plans[b->nplans++] = q;
}

/* Builds the plan of padded size pw x ph; 0 or a bloom_error with err. */
static int plan_build(struct bloom_ctx *b, int pw, int ph, int technique, int half,
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
	make_fused(b, q, programs_only);
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
	struct plan *q = find_plan(b, pw, ph, p->technique, p->precision == BLOOM_FP16);
	if (q) {
		q->last_use = b->tick;
		b->st.plan_hits++;
		*out = q;
		return 0;
	}
	b->st.plan_misses++;
	int rc = plan_build(b, pw, ph, p->technique, p->precision == BLOOM_FP16, 0, &q, err);
	if (rc)
		return rc;
	cache_insert(b, q);
	*out = q;
	return 0;
}

/* Tiles whose output and kernel reach fit a fixed padded size: each costs the same. */
struct fixed_size {
	int pw, ph, kw, kh;
};

static double fixed_cost(void *ctx, int tw, int th)
{
	const struct fixed_size *f = ctx;
	return tw + f->kw - 1 <= f->pw && th + f->kh - 1 <= f->ph ? 1.0 : -1.0;
}

int bloom_plan_borrow(const struct bloom_ctx *b, int w, int h, const struct kinfo *ki,
                      const struct bloom_params *p, int pw, int ph, struct borrow *out)
{
	memset(out, 0, sizeof *out);
	if (!b->opts.borrow_plans || bloom_plan_cached(b, pw, ph, p))
		return 0;
	double limit = (double)BLOOM_BORROW_COST * pw * ph, best = -1;
	int best_tiled = 1;
	for (int i = 0; i < b->nplans; i++) {
		const struct plan *q = b->plans[i];
		if (q->technique != p->technique || q->half != (p->precision == BLOOM_FP16))
			continue;
		double area = (double)q->pw * q->ph, cost;
		int tiled = q->pw < w + ki->kw - 1 || q->ph < h + ki->kh - 1;
		struct tile_grid g;
		memset(&g, 0, sizeof g);
		if (tiled) {
			struct fixed_size f = {q->pw, q->ph, ki->kw, ki->kh};
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

static int same_want(const struct want *a, const struct want *b)
{
	return a->pw == b->pw && a->ph == b->ph && a->technique == b->technique &&
	       a->half == b->half;
}

static void want_kernel_free(struct want *w)
{
	if (w->has_kernel)
		bloom_kinfo_free(&w->k);
	w->has_kernel = 0;
}

int bloom_plans_wanted(const struct bloom_ctx *b)
{
	int n = 0;
	for (int i = 0; i < b->nwants; i++)
		n += !find_plan(b, b->wants[i].pw, b->wants[i].ph, b->wants[i].technique,
		                b->wants[i].half);
	return n;
}

void bloom_wants_free(struct bloom_ctx *b)
{
	for (int i = 0; i < b->nwants; i++)
		want_kernel_free(&b->wants[i]);
	b->nwants = 0;
}

/* Whether w holds ki's kernel with p's spectrum parameters. */
static int same_kernel(const struct want *w, const struct kinfo *ki, const struct bloom_params *p)
{
	return w->has_kernel && w->k.digest[0] == ki->digest[0] && w->k.digest[1] == ki->digest[1] &&
	       w->k.cx == ki->cx && w->k.cy == ki->cy && w->k.kw == ki->kw && w->k.kh == ki->kh &&
	       w->kp.kernel_scale == p->kernel_scale && w->kp.normalize == p->normalize;
}

/* Moves ki's pixels (made now when absent) into w, in place of the kernel it held. */
static void want_take_kernel(struct want *w, struct kinfo *ki, const struct bloom_params *p)
{
	if (same_kernel(w, ki, p))
		return;
	int src_w = ki->rgbl ? ki->src_w : ki->img ? ki->img->width : 0;
	int src_h = ki->rgbl ? ki->src_h : ki->img ? ki->img->height : 0;
	if (!src_w || (size_t)src_w * (size_t)src_h * 16 > BLOOM_WANT_KERNEL_BYTES)
		return;
	char err[BLOOM_ERR_LEN];
	if (!ki->rgbl && bloom_kernel_pixels(ki, p, err)) {
		bloom_kinfo_free(ki); /* the frame ran: its kernel's pixels were sound before */
		return;
	}
	want_kernel_free(w);
	w->k = *ki;
	w->k.img = NULL;
	w->kp = *p;
	w->has_kernel = 1;
	ki->rgbl = NULL;
}

void bloom_plan_want(struct bloom_ctx *b, int pw, int ph, const struct bloom_params *p,
                     struct kinfo *ki)
{
	struct want w;
	memset(&w, 0, sizeof w);
	w.pw = pw, w.ph = ph, w.technique = p->technique, w.half = p->precision == BLOOM_FP16;
	for (int i = 0; i < b->nwants; i++)
		if (same_want(&b->wants[i], &w)) { /* wanted again: now the newest */
			w = b->wants[i];
			memmove(&b->wants[i], &b->wants[i + 1], (size_t)(b->nwants - i - 1) * sizeof w);
			b->nwants--;
			break;
		}
	if (b->nwants == BLOOM_WANTS) {
		want_kernel_free(&b->wants[0]);
		memmove(&b->wants[0], &b->wants[1], (size_t)(BLOOM_WANTS - 1) * sizeof w);
		b->nwants--;
	}
	if (ki)
		want_take_kernel(&w, ki, p);
	b->wants[b->nwants++] = w;
}

/* The step's work under a budget of one program compiled: 1 when it was cut short for it. */
static int step_deferred(struct bloom_ctx *b, int rc)
{
	int deferred = rc && program_cache_refused(b->pc);
	program_cache_budget(b->pc, -1);
	return deferred;
}

/* One idle step for a wish whose plan q is built: the kernel's spectrum at it (a built-in
 * kernel generated first), unless cached; a program compiled at most, the rest in the next
 * steps (*again: the wish stays queued). Returns 1 when it took a step, else 0. */
static int want_spectrum(struct bloom_ctx *b, struct want *w, struct plan *q, int *again)
{
	char err[BLOOM_ERR_LEN];
	double t0 = bloom_now_ms();
	int rc = 0;
	*again = 0;
	if (w->preset_kernel && !w->has_kernel) {
		program_cache_budget(b->pc, 1); /* the preset may need an FFT's programs */
		rc = bloom_kernel_resolve(b, NULL, &w->kp, w->fw, w->fh, &w->k, err);
		if (step_deferred(b, rc)) {
			*again = 1;
			return 1;
		}
		w->preset_kernel = 0;
		if (rc || bloom_kcache_has(b, q, &w->k, &w->kp) ||
		    bloom_kernel_pixels(&w->k, &w->kp, err)) {
			bloom_kinfo_free(&w->k);
			return !rc; /* a preset generated: a step */
		}
		w->k.img = NULL; /* the preset may go; its pixels are in k.rgbl */
		w->has_kernel = 1;
	}
	if (!w->has_kernel || bloom_kcache_has(b, q, &w->k, &w->kp)) {
		want_kernel_free(w);
		return 0;
	}
	struct kentry *ke;
	b->tick++;
	b->last.valid = 0; /* making room may evict the spectrum it names */
	program_cache_budget(b->pc, 1);
	rc = bloom_kernel_spectrum(b, q, &w->k, &w->kp, &ke, err);
	if (step_deferred(b, rc)) {
		*again = 1;
		return 1;
	}
	if (rc)
		gles_logf(&b->log, GLES_LOG_WARN, "bloom: the kernel's spectrum at %dx%d in idle "
		          "time: %s", w->pw, w->ph, err);
	else
		gles_logf(&b->log, GLES_LOG_INFO, "bloom: kernel spectrum at %dx%d made in idle time "
		          "(%.1f ms)", w->pw, w->ph, bloom_now_ms() - t0);
	want_kernel_free(w);
	return 1;
}

/* One idle step: the stages of a plan no frame has run yet, run once on whatever its buffers
 * hold with a kernel spectrum cached at its size (the result is not read), so that the
 * driver's work at a program's first dispatch is not a frame's. Returns 1 when it ran one. */
static int rehearse(struct bloom_ctx *b)
{
	if (b->opts.rehearse < 0 || (!b->opts.rehearse && b->info->software))
		return 0; /* a software renderer compiles every program at its first dispatch: a
		             whole plan's worth would hold one step for seconds */
	for (int i = 0; i < b->nplans; i++) {
		struct plan *q = b->plans[i];
		if (q->rehearsed)
			continue;
		const struct kentry *ke = NULL;
		for (size_t k = 0; k < b->nk && !ke; k++)
			if (b->kc[k].pw == q->pw && b->kc[k].ph == q->ph &&
			    b->kc[k].technique == q->technique && b->kc[k].fused == (q->conv4 != NULL))
				ke = &b->kc[k];
		if (!ke)
			continue; /* no spectrum to run with: the first frame runs it */
		double t0 = bloom_now_ms();
		struct bloom_params p;
		memset(&p, 0, sizeof p);
		p.technique = q->technique, p.normalize = ke->normalize, p.kernel_scale = ke->scale;
		p.precision = q->half ? BLOOM_FP16 : BLOOM_FP32;
		struct bloom_stats st;
		memset(&st, 0, sizeof st);
		char err[BLOOM_ERR_LEN];
		b->last.valid = 0;
		program_cache_budget(b->pc, 1); /* the rest in the next steps */
		int rc = bloom_stages(b, q, ke, BLOOM_OP_BLOOM, &p, q->pw - ke->kw + 1,
		                      q->ph - ke->kh + 1, NULL, &st, err);
		glFlush();
		if (step_deferred(b, rc))
			return 1;
		q->rehearsed = 1;
		if (rc)
			gles_logf(&b->log, GLES_LOG_WARN, "bloom: rehearsing the plan of %dx%d: %s", q->pw,
			          q->ph, err);
		else
			gles_logf(&b->log, GLES_LOG_DEBUG, "bloom: plan of %dx%d rehearsed in idle time "
			          "(%.1f ms)", q->pw, q->ph, bloom_now_ms() - t0);
		return 1;
	}
	return 0;
}

int bloom_build_wanted(struct bloom_ctx *b, int plans_only)
{
	for (int i = b->nwants - 1; plans_only && i >= 0; i--) { /* the newest not built first */
		struct want *w = &b->wants[i];
		if (find_plan(b, w->pw, w->ph, w->technique, w->half))
			continue;
		struct want t = *w; /* to the top, where the loop below takes it */
		memmove(w, w + 1, (size_t)(b->nwants - i - 1) * sizeof *w);
		b->wants[b->nwants - 1] = t;
		break;
	}
	while (b->nwants) {
		struct want w = b->wants[b->nwants - 1];
		struct plan *built = find_plan(b, w.pw, w.ph, w.technique, w.half);
		if (built && plans_only)
			return 0; /* every wish left has its plan: its spectrum waits for idle time */
		b->nwants--;
		if (built) { /* built here in the step before, or since by bloom_warm or a frame
		                without borrowing: the kernel's spectrum, if it came with one */
			int again;
			int stepped = want_spectrum(b, &w, built, &again);
			if (again)
				b->wants[b->nwants++] = w;
			if (stepped)
				return 1;
			continue;
		}
		double t0 = bloom_now_ms();
		struct plan *q;
		char err[BLOOM_ERR_LEN];
		/* a program a step, so that a frame arriving meanwhile waits for one compile at most;
		 * a plan that needs more steps than BLOOM_WANT_STEPS (its programs trimmed away as
		 * they come) is built whole */
		program_cache_budget(b->pc, w.steps < BLOOM_WANT_STEPS ? 1 : -1);
		int rc = plan_build(b, w.pw, w.ph, w.technique, w.half, 0, &q, err);
		int deferred = program_cache_refused(b->pc);
		program_cache_budget(b->pc, -1);
		if (rc && deferred) {
			w.steps++;
			b->wants[b->nwants++] = w; /* the rest in the next steps */
			return 1;
		}
		if (rc) {
			gles_logf(&b->log, GLES_LOG_WARN, "bloom: building the plan of %dx%d in idle "
			          "time: %s", w.pw, w.ph, err);
			want_kernel_free(&w);
			return 1;
		}
		b->tick++;
		b->last.valid = 0; /* cache_insert may destroy the plan it names */
		cache_insert(b, q);
		b->st.plans_built_idle++;
		gles_logf(&b->log, GLES_LOG_INFO, "bloom: plan of %dx%d built in idle time (%d steps, "
		          "the last %.1f ms)", w.pw, w.ph, w.steps + 1, bloom_now_ms() - t0);
		if (w.has_kernel || w.preset_kernel)
			b->wants[b->nwants++] = w; /* its kernel's spectrum in the next step */
		return 1;
	}
	return plans_only ? 0 : rehearse(b);
}

int bloom_ctx_refresh(struct bloom_ctx *b)
{
	if (!b->opts.wisdom)
		return 0;
	unsigned long long gen = fft_wisdom_generation(b->opts.wisdom);
	for (int i = 0; i < b->nplans; i++) {
		struct plan *old = b->plans[i];
		if (!old->provisional || old->wisdom_gen == gen)
			continue;
		int pw = old->pw, ph = old->ph, technique = old->technique, half = old->half;
		unsigned long long last_use = old->last_use;
		struct plan *q;
		char err[BLOOM_ERR_LEN];
		/* the new plan's programs first, a step each, while the old plan serves (a frame
		 * arriving meanwhile waits for one compile at most); past BLOOM_WANT_STEPS, at once */
		program_cache_budget(b->pc, old->refresh_steps < BLOOM_WANT_STEPS ? 1 : -1);
		int rc = plan_build(b, pw, ph, technique, half, 1, &q, err);
		int deferred = program_cache_refused(b->pc);
		program_cache_budget(b->pc, -1);
		if (deferred) {
			old->refresh_steps++;
			return 1;
		}
		/* then the old plan goes, so that the two never hold GPU memory at once */
		b->last.valid = 0;
		bloom_plan_destroy(old);
		if (!rc)
			rc = plan_build(b, pw, ph, technique, half, 0, &q, err);
		if (rc) {
			gles_logf(&b->log, GLES_LOG_WARN, "bloom: rebuilding the plan of %dx%d with "
			          "measured FFT shapes: %s", pw, ph, err);
			b->plans[i] = b->plans[--b->nplans];
			return 1;
		}
		q->last_use = last_use;
		b->plans[i] = q;
		b->st.plan_refreshes++;
		gles_logf(&b->log, GLES_LOG_INFO, "bloom: plan of %dx%d rebuilt with measured FFT "
		          "shapes%s", pw, ph, q->provisional ? " (some still to measure)" : "");
		return 1;
	}
	return 0;
}

int bloom_release_plan(struct bloom_ctx *b)
{
	if (!b->nplans)
		return -1;
	int lru = 0;
	for (int i = 1; i < b->nplans; i++)
		if (b->plans[i]->last_use < b->plans[lru]->last_use)
			lru = i;
	b->last.valid = 0;
	bloom_plan_destroy(b->plans[lru]);
	b->plans[lru] = b->plans[--b->nplans];
	return 0;
}

int bloom_transpose(struct bloom_ctx *b, GLuint src, int src_stride, int src_valid, GLuint dst,
                    int dst_rows, int dst_cols, int comps, int half, char err[BLOOM_ERR_LEN])
{
	const struct bloom_prog *t;
	int rc = bloom_prog(b, SH_TRANSPOSE, comps == 4, half, &t, err);
	if (rc)
		return rc;
	glUseProgram(t->id);
	glUniform1ui(t->u[U_SRC_STRIDE], (GLuint)src_stride);
	glUniform1ui(t->u[U_DST_STRIDE], (GLuint)dst_cols);
	glUniform1ui(t->u[U_SRC_VALID], (GLuint)src_valid);
	glUniform1ui(t->u[U_DST_ROWS], (GLuint)dst_rows);
	glUniform1ui(t->u[U_DST_COLS], (GLuint)dst_cols);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_SRC, src);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_DST, dst);
	glDispatchCompute((GLuint)(dst_rows + 31) / 32, (GLuint)(dst_cols + 31) / 32, 1);
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
	return 0;
}

void bloom_set_sizes(const struct bloom_prog *p, int w, int h, int pw, int ph)
{
	glUseProgram(p->id);
	glUniform2ui(p->u[U_IMG], (GLuint)w, (GLuint)h);
	glUniform2ui(p->u[U_PAD], (GLuint)pw, (GLuint)ph);
}

void bloom_dispatch2d(int w, int h)
{
	glDispatchCompute((GLuint)(w + 15) / 16, (GLuint)(h + 15) / 16, 1);
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
}

/* Closes a stage on the timer, when the call is timed (tm not NULL). */
static void mark(struct gpu_timer *tm, int stage)
{
	if (tm)
		gpu_timer_mark(tm, stage);
}

/* The image packed into the padded buffer (prefiltered for a bloom), zero in the padding. */
static void prefilter(struct plan *q, const struct bloom_prog *pack, const struct bloom_params *p,
                      int w, int h)
{
	bloom_set_sizes(pack, w, h, q->pw, q->ph);
	glUniform1f(pack->u[U_THRESHOLD], (float)p->threshold);
	glUniform1f(pack->u[U_KNEE], (float)p->knee);
	glUniform1f(pack->u[U_CLAMP], (float)p->clamp_max);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_PADDED, q->padded);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_IMAGE, q->image);
	bloom_dispatch2d(q->pw, q->ph);
}

/* Fused columns: the row spectra's columns become rows of q->q (zero past the image's rows,
 * never read); each group runs two of them forward, multiplies, and back; then the image's
 * rows come back to the padded buffer. */
static int fused_columns(struct bloom_ctx *b, struct plan *q, const struct kentry *ke, int h,
                         struct gpu_timer *tm, char err[BLOOM_ERR_LEN])
{
	int rc = bloom_transpose(b, q->padded, q->pw, h, q->q, q->pw, q->ph, 4, q->half, err);
	mark(tm, GPU_STAGE_TRANSPOSE);
	if (!rc && fft_conv_execute(ke->gray ? q->conv2 : q->conv4, q->q, ke->spectrum)) {
		snprintf(err, BLOOM_ERR_LEN, "the fused column pass failed");
		rc = BLOOM_E_GPU;
	}
	mark(tm, GPU_STAGE_FUSED_COLS);
	if (!rc)
		rc = bloom_transpose(b, q->q, q->ph, q->pw, q->padded, h, q->pw, 4, q->half, err);
	mark(tm, GPU_STAGE_TRANSPOSE_BACK);
	return rc;
}

/* Separate columns: every column forward, the multiply, every column back. */
static int separate_columns(struct plan *q, const struct kentry *ke,
                            const struct bloom_prog *mult, int w, int h, struct gpu_timer *tm,
                            char err[BLOOM_ERR_LEN])
{
	int pw = q->pw, ph = q->ph;
	int rc = fft_axis_execute(q->cols4, q->padded, 0, 1, (size_t)pw, pw, 0);
	mark(tm, GPU_STAGE_COLS);
	if (!rc) {
		bloom_set_sizes(mult, w, h, pw, ph);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_PADDED, q->padded);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_SPECTRUM, ke->spectrum);
		bloom_dispatch2d(pw, ph);
	}
	mark(tm, GPU_STAGE_MULTIPLY);
	if (!rc)
		rc = fft_axis_execute(q->cols4, q->padded, 0, 1, (size_t)pw, pw, 1);
	mark(tm, GPU_STAGE_ICOLS);
	if (rc) {
		snprintf(err, BLOOM_ERR_LEN, "column FFT failed: %s", fft_strerror(rc));
		return BLOOM_E_GPU;
	}
	return 0;
}

/* The result composited into q->out (a bloom: with the image; convolve: as it is), counting
 * the samples that came out non-finite in b->flags. */
static void composite(struct bloom_ctx *b, struct plan *q, const struct bloom_prog *comp,
                      const struct bloom_params *p, int w, int h)
{
	GLuint zero[4] = {0, 0, 0, 0};
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, b->flags);
	glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, sizeof zero, zero);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_FLAGS, b->flags);
	bloom_set_sizes(comp, w, h, q->pw, q->ph);
	glUniform1f(comp->u[U_INTENSITY], (float)p->intensity);
	glUniform1f(comp->u[U_MIX], (float)p->mix);
	glUniform1i(comp->u[U_COMPOSITE], p->composite);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_PADDED, q->padded);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_IMAGE, q->image);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_OUT, q->out);
	bloom_dispatch2d(w, h);
}

int bloom_stages(struct bloom_ctx *b, struct plan *q, const struct kentry *ke, int op,
                 const struct bloom_params *p, int w, int h, struct gpu_timer *tm,
                 struct bloom_stats *st, char err[BLOOM_ERR_LEN])
{
	const struct bloom_prog *pack, *mult, *comp;
	int bloom = op == BLOOM_OP_BLOOM, rc;
	if ((rc = bloom_prog(b, SH_PACK, bloom, q->half, &pack, err)) ||
	    (rc = bloom_prog(b, SH_MULTIPLY, ke->gray, q->half, &mult, err)) ||
	    (rc = bloom_prog(b, SH_COMPOSITE, bloom, q->half, &comp, err)))
		return rc;
	st->fused = q->conv4 != NULL;
	prefilter(q, pack, p, w, h);
	mark(tm, GPU_STAGE_PREFILTER);
	/* forward: rows of the image only (the rows below it are all padding), then the columns */
	if (fft_axis_execute(q->rows4, q->padded, 0, (size_t)q->pw, 1, h, 0)) {
		snprintf(err, BLOOM_ERR_LEN, "row FFT failed");
		return BLOOM_E_GPU;
	}
	mark(tm, GPU_STAGE_ROWS);
	rc = st->fused ? fused_columns(b, q, ke, h, tm, err)
	               : separate_columns(q, ke, mult, w, h, tm, err);
	if (rc)
		return rc;
	/* inverse: the rows the output needs */
	if (fft_axis_execute(q->rows4, q->padded, 0, (size_t)q->pw, 1, h, 1)) {
		snprintf(err, BLOOM_ERR_LEN, "inverse row FFT failed");
		return BLOOM_E_GPU;
	}
	mark(tm, GPU_STAGE_IROWS);
	composite(b, q, comp, p, w, h);
	mark(tm, GPU_STAGE_COMPOSITE);
	return 0;
}
