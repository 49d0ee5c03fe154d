/* The FFT convolution bloom: the context and the frame function, which runs as named steps
 * (resolve the kernel, get the plan, find or read the kernel's spectrum, upload, the kernel's
 * spectrum on a miss, the GPU stages, read back), or in tiles (bloom_tiled.c); see bloom.h and
 * bloom_internal.h. */
#include "gles/bloom_internal.h"
#include "gles/jpeg_gpu.h"
#include "gles/jpeg_huffdec.h"

#include "gles/tile.h"
#include "core/kernel_shape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *bloom_strerror(int code)
{
	switch (code) {
	case BLOOM_OK: return "ok";
	case BLOOM_E_ARG: return "bad bloom parameter";
	case BLOOM_E_TOO_LARGE: return "image too large for the GPU";
	case BLOOM_E_GPU: return "GPU failure";
	case BLOOM_E_NOMEM: return "out of memory";
	case BLOOM_E_GPU_MEMORY: return "out of GPU memory";
	case BLOOM_E_CANCELLED: return "cancelled";
	case BLOOM_E_ENTROPY: return "the JPEG scan needs libjpeg's entropy decoding";
	}
	return "unknown error";
}

void bloom_ctx_set_cancel(struct bloom_ctx *b, struct gles_cancel *c)
{
	b->cancel = c;
}

double bloom_ctx_now_ms(const struct bloom_ctx *b)
{
	return b->opts.clock_ms ? b->opts.clock_ms(b->opts.clock_arg) : clock_ms();
}

int bloom_ctx_create(struct program_cache *pc, const struct egl_info *info,
                     const struct bloom_ctx_opts *o, const struct log_sink *log,
                     struct bloom_ctx **out, char err[BLOOM_ERR_LEN])
{
	*out = NULL;
	struct bloom_ctx *b = calloc(1, sizeof *b);
	if (!b) {
		snprintf(err, BLOOM_ERR_LEN, "out of memory");
		return BLOOM_E_NOMEM;
	}
	b->pc = pc;
	b->info = info;
	if (log)
		b->log = *log;
	if (o)
		b->opts = *o;
	if (!b->opts.kernel_cache_bytes)
		b->opts.kernel_cache_bytes = 512u << 20;
	if (!b->opts.max_plans)
		b->opts.max_plans = 8;
	bloom_transfer_init(b);
	b->plans.e = calloc((size_t)b->opts.max_plans, sizeof *b->plans.e);
	if (!b->plans.e || jpeg_gpu_create(pc, &b->log, b->opts.scan_scratch_max, &b->jpeg) ||
	    jpeg_huffdec_create(pc, &b->huffdec) ||
	    gpu_timer_create(info, &b->timer)) {
		bloom_ctx_destroy(b);
		snprintf(err, BLOOM_ERR_LEN, "out of memory");
		return BLOOM_E_NOMEM;
	}
	b->xfer.flags = bloom_buffer(16, GL_DYNAMIC_COPY);
	b->xfer.flags_stage = b->xfer.flags ? bloom_buffer(16, GL_STREAM_READ) : 0;
	if (!b->xfer.flags_stage) {
		bloom_ctx_destroy(b);
		snprintf(err, BLOOM_ERR_LEN, "out of GPU memory");
		return BLOOM_E_NOMEM;
	}
	*out = b;
	return 0;
}

void bloom_ctx_destroy(struct bloom_ctx *b)
{
	if (!b)
		return;
	bloom_rows_tune_free(b);
	for (int i = 0; i < b->plans.n; i++)
		bloom_plan_destroy(b->plans.e[i]);
	free(b->plans.e);
	bloom_wants_free(b);
	bloom_kcache_free(b);
	bloom_presets_free(b);
	bloom_transfer_free(b);
	bloom_progs_drop(b);
	GLuint bufs[] = {b->xfer.flags, b->xfer.flags_stage};
	glDeleteBuffers(2, bufs); /* 0 names are ignored */
	gpu_timer_destroy(b->timer);
	free(b);
}

void bloom_ctx_stats(const struct bloom_ctx *b, struct bloom_cache_stats *st)
{
	*st = b->st;
	st->kernel_bytes = b->spectra.bytes;
	st->kernel_entries = b->spectra.n;
	st->plan_entries = (size_t)b->plans.n;
	st->plans_wanted = (size_t)bloom_plans_wanted(b, 0);
	st->plans_urgent = (size_t)bloom_plans_wanted(b, 1);
	st->upload_buffers = st->upload_bytes = 0;
	st->staging_bytes = b->xfer.fin.bytes;
	for (int i = 0; b->lent.uploads && i < BLOOM_UPLOAD_SLOTS; i++) {
		size_t have = atomic_load_explicit(&b->lent.uploads[i].bytes, memory_order_relaxed);
		st->upload_buffers += have > 0;
		st->upload_bytes += have;
	}
}

/* The frame's oriented size and channels; BLOOM_E_ARG for an empty or malformed one. */
static int frame_size(const struct bloom_frame *f, int *w, int *h, int *ch,
                      char err[BLOOM_ERR_LEN])
{
	const struct image *in = f ? f->img : NULL;
	const struct yuv_image *y = in || !f ? NULL : f->yuv;
	*w = *h = *ch = 0;
	if (in && in->pixels) {
		*w = in->width, *h = in->height;
		*ch = f->channels ? f->channels : in->channels;
		if (f->channels && in->channels != 4) {
			snprintf(err, BLOOM_ERR_LEN, "a frame widened to RGBA has %d channels",
			         in->channels);
			return BLOOM_E_ARG;
		}
	} else if (y && y->data) {
		int turned = y->orientation >= 5;
		*w = turned ? y->height : y->width;
		*h = turned ? y->width : y->height;
		*ch = y->gray ? 1 : 3;
	}
	if (*w < 1 || *h < 1 || *ch < 1 || *ch > 4) {
		snprintf(err, BLOOM_ERR_LEN, "empty or malformed image");
		return BLOOM_E_ARG;
	}
	return 0;
}

/* The result's channels: the image's, two more when a colour kernel meets a gray image. */
static int result_channels(int in_ch, int gray_kernel)
{
	return !gray_kernel && in_ch <= 2 ? in_ch + 2 : in_ch;
}

/* The bloom's GPU stages, prefilter to composite: their sum is bloom_stats.gpu_ms. */
static double stages_ms(const double ms[GPU_STAGE_COUNT])
{
	double sum = 0;
	for (int s = GPU_STAGE_PREFILTER; s <= GPU_STAGE_COMPOSITE; s++)
		sum += ms[s];
	return sum;
}

int bloom_run(struct bloom_ctx *b, int op, const struct image *in, const struct bloom_kernel *k,
              const struct bloom_params *p, unsigned flags, struct image *out,
              struct bloom_stats *st, char err[BLOOM_ERR_LEN])
{
	struct bloom_frame f = {in, NULL, NULL, 0};
	struct bloom_result r;
	memset(&r, 0, sizeof r);
	int rc = bloom_run_frame(b, op, &f, k, p, flags, &r, st, err);
	/* a probe's results are wrong by design (bloom_ctx_opts.conv_probe, rows_probe) */
	if (!rc && r.nonfinite && !b->opts.conv_probe && !b->opts.rows_probe) {
		snprintf(err, BLOOM_ERR_LEN, "%llu samples of the result are not finite: float32 "
		         "overflowed in the convolution (an image or kernel value near 3.4e38, or "
		         "infinite)", r.nonfinite);
		image_free(&r.img);
		rc = BLOOM_E_ARG;
	}
	*out = r.img;
	return rc;
}

/* Clears the result's outputs, and checks what it asks for. */
static int result_reset(struct bloom_result *res, char err[BLOOM_ERR_LEN])
{
	memset(&res->img, 0, sizeof res->img);
	memset(&res->yuv, 0, sizeof res->yuv);
	res->lease = NULL;
	res->channels = 0;
	res->lost = 0;
	res->nonfinite = 0;
	res->pending = 0;
	res->fence = NULL;
	res->scan = 0;
	if (res->want_yuv && (res->sub_x < 1 || res->sub_x > 2 || res->sub_y < 1 || res->sub_y > 2)) {
		snprintf(err, BLOOM_ERR_LEN, "planes: subsampling %dx%d is not 1 or 2 per axis",
		         res->sub_x, res->sub_y);
		return BLOOM_E_ARG;
	}
	if (res->want_yuv && (res->dct_quality < 0 || res->dct_quality > 100)) {
		snprintf(err, BLOOM_ERR_LEN, "coefficients: quality %d is not 1-100", res->dct_quality);
		return BLOOM_E_ARG;
	}
	return 0;
}

/* On failure the result's outputs are freed (lent planes given back, not freed). */
static void result_drop(struct bloom_result *res)
{
	if (res->pending)
		gl_fence_free(res->fence);
	res->pending = 0;
	res->fence = NULL;
	image_free(&res->img);
	if (res->lease) {
		res->yuv.data = NULL;
		bloom_lease_return(res->lease);
		res->lease = NULL;
	}
	yuv_image_free(&res->yuv);
}

/* One pass of the frame at a padded size pw x ph that holds it and the kernel's reach: the
 * plan, the kernel's spectrum from the cache or its pixels, the upload, the GPU stages, the
 * read-back. own: pw x ph is the frame's (or its tiles') own size, not a plan it borrows; such
 * a use keeps the plan in use (BLOOM_PLAN_IN_USE_MS). ki stays the caller's. */
int bloom_frame_once(struct bloom_ctx *b, int op, const struct bloom_frame *fin, int w, int h,
                     int in_ch, struct kinfo *ki, const struct bloom_params *p, int pw, int ph,
                     int own, unsigned flags, struct bloom_result *res, struct bloom_stats *st,
                     char err[BLOOM_ERR_LEN])
{
	double t_start = clock_ms();
	struct plan *q = NULL;
	struct kentry *ke = NULL;
	struct bloom_lease *lease = NULL; /* taken for this result; moves to res->lease */
	struct gpu_timer *tm = flags & BLOOM_TIME_STAGES ? b->timer : NULL;
	int ch = 0;
	int rc = bloom_plan_get(b, pw, ph, p, &q, err);
	if (!rc && q->rows_tune &&
	    fft_wisdom_measure(b->opts.wisdom) == FFT_WISDOM_MEASURE_NOW) {
		/* its rows measured before the frame, and the plan made again with their shape */
		q->frame_w = w, q->frame_h = h;
		if (bloom_rows_tune_now(b, q)) {
			bloom_plan_evict(b, q);
			rc = bloom_plan_get(b, pw, ph, p, &q, err);
		}
	}
	if (!rc) /* what its rows are measured on in idle time */
		q->frame_w = w, q->frame_h = h;
	if (!rc && own)
		q->used_ms = bloom_ctx_now_ms(b);
	if (!rc && !(ke = bloom_kcache_find(b, q, ki, p)) && !ki->rgbl)
		rc = bloom_kernel_pixels(ki, p, err);
	st->setup_ms += clock_ms() - t_start;
	if (!rc) {
		st->padded_w = q->pw, st->padded_h = q->ph;
		st->kernel_cached = ke != NULL;
		st->gray_kernel = ke ? ke->gray : ki->gray;
		res->channels = ch = result_channels(in_ch, st->gray_kernel);
		rc = bloom_result_prepare(b, res, w, h, ch, &lease, err);
	}
	st->prepare_ms = clock_ms() - t_start;
	/* the GPU's part: upload, the kernel's spectrum on a miss, the stages, read back */
	if (!rc && tm)
		gpu_timer_start(tm);
	if (!rc && !(rc = bloom_upload(b, q, fin, w, h, &st->copy_ms, err)) && tm)
		gpu_timer_mark(tm, GPU_STAGE_UPLOAD);
	if (!rc && !ke) {
		double t_kernel = clock_ms();
		rc = bloom_kernel_spectrum(b, q, ki, p, &ke, err);
		st->setup_ms += clock_ms() - t_kernel;
		if (!rc && tm)
			gpu_timer_mark(tm, GPU_STAGE_KERNEL);
	}
	if (!rc)
		rc = bloom_stages(b, q, ke, op, p, w, h, tm, st, err);
	if (!rc)
		q->rehearsed = 1;
	if (!rc) { /* what bloom_rerun_stages repeats */
		b->plans.last.q = q, b->plans.last.ke = ke, b->plans.last.op = op, b->plans.last.p = *p;
		b->plans.last.w = w, b->plans.last.h = h, b->plans.last.valid = 1;
		rc = bloom_read_back(b, q, res, w, h, ch, &lease, !tm && (flags & BLOOM_DEFER), tm,
		                     st, err);
	}
	if (!rc && tm) {
		gpu_timer_mark(tm, GPU_STAGE_DOWNLOAD);
		if (!gpu_timer_read(tm, st->stage_ms)) {
			st->timed = gpu_timer_kind(tm);
			st->gpu_ms = stages_ms(st->stage_ms);
		}
	}
	if (!rc && gl_check(&b->log, "bloom")) {
		snprintf(err, BLOOM_ERR_LEN, "GL error during the bloom");
		rc = BLOOM_E_GPU;
	}
	if (rc)
		result_drop(res);
	bloom_lease_return(lease); /* taken but not lent: a failure before the read-back */
	return rc;
}

int bloom_run_frame(struct bloom_ctx *b, int op, const struct bloom_frame *fin,
                    const struct bloom_kernel *k, const struct bloom_params *p, unsigned flags,
                    struct bloom_result *res, struct bloom_stats *st, char err[BLOOM_ERR_LEN])
{
	struct bloom_stats local;
	if (!st)
		st = &local;
	memset(st, 0, sizeof *st);
	double t_start = clock_ms();
	err[0] = 0;
	b->plans.last.valid = 0; /* plans or kernel spectra may be evicted below */
	bloom_upload_tend(b);
	struct kinfo ki;
	memset(&ki, 0, sizeof ki);
	int w = 0, h = 0, in_ch = 0;
	int rc = result_reset(res, err);
	if (!rc)
		rc = frame_size(fin, &w, &h, &in_ch, err);
	if (!rc) /* at the whole frame's size: kernel_scale is relative to it */
		rc = bloom_kernel_resolve(b, k, p, w, h, &ki, err);
	if (rc) {
		bloom_kinfo_free(&ki);
		st->wall_ms = clock_ms() - t_start;
		return rc;
	}
	struct bloom_fit f = {b, &ki, p->precision == BLOOM_FP16, b->opts.frame_bytes, w, h};
	int pw, ph;
	bloom_tile_padded(&f, w, h, ki.kw, ki.kh, ki.cx, ki.cy, &pw, &ph);
	size_t budget = b->opts.frame_bytes, used = bloom_plan_bytes(pw, ph, f.half);
	int tiled = !bloom_fits(&f, pw, ph), short_of_memory = 0;
	struct borrow bw; /* a plan of another size, when pw x ph has none */
	if (tiled || !bloom_plan_borrow(b, w, h, &ki, p, pw, ph, &bw))
		memset(&bw, 0, sizeof bw);
	char first[BLOOM_ERR_LEN] = "";
	for (int attempt = 0;; attempt++) {
		if (tiled || bw.tiled) {
			rc = bloom_run_tiled(b, op, fin, w, h, &ki, p, budget, tiled ? NULL : &bw, flags,
			                     res, st, &used, err);
		} else {
			rc = bloom_frame_once(b, op, fin, w, h, in_ch, &ki, p, bw.pw ? bw.pw : pw,
			                      bw.pw ? bw.ph : ph, !bw.pw, flags, res, st, err);
			st->tiles_x = st->tiles_y = 1;
		}
		if (rc == BLOOM_E_TOO_LARGE && short_of_memory) {
			/* tiles small enough for the memory left would not hold the kernel */
			rc = BLOOM_E_GPU_MEMORY;
			snprintf(err, BLOOM_ERR_LEN, "%.3000s (also in tiles down to %zu KiB)", first,
			         budget >> 10);
			break;
		}
		if (rc != BLOOM_E_GPU_MEMORY && !(rc == BLOOM_E_TOO_LARGE && !tiled))
			break;
		if (rc == BLOOM_E_GPU_MEMORY && !short_of_memory) {
			short_of_memory = 1;
			snprintf(first, sizeof first, "%s", err);
		}
		if (attempt == 3 || used < 4096) {
			if (rc == BLOOM_E_GPU_MEMORY) {
				bloom_release_all(b); /* leave nothing half-made behind */
				snprintf(err, BLOOM_ERR_LEN, "%.3000s (also in tiles down to %zu KiB)",
				         first, budget >> 10);
			}
			break;
		}
		/* exhausted GPU memory, or a limit the plan met: in tiles a quarter the plan's size */
		log_sinkf(&b->log, LOG_WARN, "bloom %dx%d: %s; again in tiles of at most %zu MiB",
		          w, h, err, (used / 4) >> 20);
		if (rc == BLOOM_E_GPU_MEMORY)
			bloom_release_all(b);
		b->plans.last.valid = 0;
		budget = used / 4;
		tiled = 1;
		memset(&bw, 0, sizeof bw);
		memset(st, 0, sizeof *st);
		err[0] = 0;
		result_reset(res, err);
	}
	if (!rc && bw.pw) { /* its own plan comes in idle time */
		st->borrowed = 1;
		st->own_w = pw, st->own_h = ph;
		b->st.plans_borrowed++;
		bloom_plan_want(b, pw, ph, p, &ki, bw.tiled || (double)bw.pw * bw.ph >
		                                          BLOOM_BORROW_WHOLE_COST * pw * ph);
	}
	bloom_kinfo_free(&ki);
	st->wall_ms = clock_ms() - t_start;
	return rc;
}

int bloom_rerun_stages(struct bloom_ctx *b, struct bloom_stats *st, char err[BLOOM_ERR_LEN])
{
	memset(st, 0, sizeof *st);
	if (!b->plans.last.valid) {
		snprintf(err, BLOOM_ERR_LEN, "no bloom_run to repeat");
		return BLOOM_E_ARG;
	}
	gpu_timer_start(b->timer);
	int rc = bloom_stages(b, b->plans.last.q, b->plans.last.ke, b->plans.last.op,
	                      &b->plans.last.p, b->plans.last.w, b->plans.last.h, b->timer, st, err);
	int timed = !gpu_timer_read(b->timer, st->stage_ms);
	if (rc)
		return rc;
	st->padded_w = b->plans.last.q->pw, st->padded_h = b->plans.last.q->ph;
	st->gray_kernel = b->plans.last.ke->gray;
	st->kernel_cached = 1;
	if (timed) {
		st->timed = gpu_timer_kind(b->timer);
		st->gpu_ms = stages_ms(st->stage_ms);
	}
	if (gl_check(&b->log, "bloom stages")) {
		snprintf(err, BLOOM_ERR_LEN, "GL error during the bloom");
		return BLOOM_E_GPU;
	}
	return 0;
}

int bloom_plan_known(struct bloom_ctx *b, const struct bloom_frame *in,
                     const struct bloom_kernel *k, const struct bloom_params *p, int *known,
                     unsigned long long *key, char err[BLOOM_ERR_LEN])
{
	*known = 0;
	*key = 0;
	int w, h, ch;
	struct kinfo ki;
	int rc = frame_size(in, &w, &h, &ch, err);
	if (!rc)
		rc = bloom_kernel_resolve(b, k, p, w, h, &ki, err);
	if (rc)
		return rc;
	struct bloom_fit f = {b, &ki, p->precision == BLOOM_FP16, b->opts.frame_bytes, w, h};
	int pw, ph;
	bloom_tile_padded(&f, w, h, ki.kw, ki.kh, ki.cx, ki.cy, &pw, &ph);
	*key = (unsigned long long)pw | (unsigned long long)ph << 20 |
	       (unsigned long long)(p->precision == BLOOM_FP16) << 40 |
	       (unsigned long long)p->technique << 41;
	*known = bloom_plan_cached(b, pw, ph, p);
	return 0;
}

/* The padded size of a whole width x height frame with a kernel_w x kernel_h kernel centred as
 * p asks, under *f, the frame's memory bound (filled in). */
static void frame_padded(const struct bloom_ctx *b, const struct bloom_params *p, int width,
                         int height, int kernel_w, int kernel_h, struct bloom_fit *f, int *pw,
                         int *ph)
{
	int cx, cy;
	kshape_center_or_default(p, kernel_w, kernel_h, &cx, &cy);
	*f = (struct bloom_fit){b, NULL, p->precision == BLOOM_FP16, b->opts.frame_bytes, width,
	                        height};
	bloom_tile_padded(f, width, height, kernel_w, kernel_h, cx, cy, pw, ph);
}

/* bloom_want and bloom_want_padded once the padded size is known: queued with p's built-in
 * kernel for a frame of width x height, unless it does not fit or would evict a plan. */
static int want_queued(struct bloom_ctx *b, const struct bloom_fit *f, int pw, int ph, int width,
                       int height, const struct bloom_params *p)
{
	if (pw < 1 || ph < 1 || !bloom_fits(f, pw, ph))
		return BLOOM_E_TOO_LARGE;
	if (bloom_find_plan(b, pw, ph, p->technique, p->precision == BLOOM_FP16))
		return 0; /* planned already */
	if (b->plans.n + bloom_plans_wanted(b, 0) >= b->opts.max_plans)
		return BLOOM_E_NOMEM;
	bloom_plan_want(b, pw, ph, p, NULL, 0);
	struct want *w = &b->idle.w[b->idle.n - 1]; /* the newest: this one */
	if (!w->has_kernel) {
		w->preset_kernel = 1;
		w->fw = width, w->fh = height;
		w->kp = *p;
	}
	return 0;
}

int bloom_want(struct bloom_ctx *b, int width, int height, int kernel_w, int kernel_h,
               const struct bloom_params *p)
{
	if (width < 1 || height < 1 || kernel_w < 1 || kernel_h < 1)
		return BLOOM_E_ARG;
	int pw, ph;
	struct bloom_fit f;
	frame_padded(b, p, width, height, kernel_w, kernel_h, &f, &pw, &ph);
	return want_queued(b, &f, pw, ph, width, height, p);
}

int bloom_want_padded(struct bloom_ctx *b, int pw, int ph, int width, int height,
                      const struct bloom_params *p)
{
	if (width < 1 || height < 1)
		return BLOOM_E_ARG;
	struct bloom_fit f = {b, NULL, p->precision == BLOOM_FP16, b->opts.frame_bytes, width,
	                      height};
	return want_queued(b, &f, pw, ph, width, height, p);
}

int bloom_warm(struct bloom_ctx *b, int width, int height, int kernel_w, int kernel_h,
               const struct bloom_params *p, char err[BLOOM_ERR_LEN])
{
	struct plan *q = NULL;
	int pw, ph;
	struct bloom_fit f;
	frame_padded(b, p, width, height, kernel_w, kernel_h, &f, &pw, &ph);
	int rc = bloom_plan_get(b, pw, ph, p, &q, err), half = q && q->half;
	const struct bloom_prog *prog;
	for (int v = 0; !rc && v < 2; v++) {
		rc = bloom_prog(b, SH_PACK, v, half, &prog, err);
		if (!rc)
			rc = bloom_prog(b, SH_MULTIPLY, v, half, &prog, err);
		if (!rc)
			rc = bloom_prog(b, SH_COMPOSITE, v, half, &prog, err);
		if (!rc)
			rc = bloom_prog(b, SH_KERNEL, v, 0, &prog, err);
	}
	if (!rc)
		rc = bloom_prog(b, SH_YUV_UNPACK, 0, 0, &prog, err);
	if (!rc)
		rc = jpeg_gpu_warm(b->jpeg, err);
	if (!rc)
		rc = jpeg_huffdec_warm(b->huffdec, err);
	/* the fused columns' transposes: the image's, and the kernels' (vec2 and vec4 float32) */
	if (!rc && q->conv4)
		rc = bloom_prog(b, SH_TRANSPOSE, 1, half, &prog, err);
	for (int v = 0; !rc && q->conv4 && v < 2; v++)
		rc = bloom_prog(b, SH_TRANSPOSE, v, 0, &prog, err);
	return rc;
}

void bloom_ctx_limits(const struct bloom_ctx *b, struct bloom_limits *l)
{
	size_t by_buffer = (size_t)b->info->max_ssbo_size / 16;
	/* a pixel's bytes (an even width's: no wider pitch) */
	size_t by_budget = b->opts.frame_bytes ? b->opts.frame_bytes / (bloom_plan_bytes(2, 1, 0) / 2)
	                                       : by_buffer;
	l->untiled_pixels = by_buffer < by_budget ? by_buffer : by_budget;
	struct bloom_fit f = {b, NULL, 0, b->opts.frame_bytes, 0, 0};
	int lo = 0, hi = 1 << 16; /* the largest side whose smallest tiles' plan fits */
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2, n = fft_smallest_size(mid + TILE_MIN_SIDE - 1);
		if (n > 0 && bloom_fits(&f, n, n))
			lo = mid;
		else
			hi = mid - 1;
	}
	l->max_kernel_side = lo;
}
