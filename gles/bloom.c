/* The FFT convolution bloom: the context and the frame function, which runs as named steps
 * (resolve the kernel, get the plan, find or read the kernel's spectrum, upload, the kernel's
 * spectrum on a miss, the GPU stages, read back); see bloom.h and bloom_internal.h. */
#include "gles/bloom_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Static_assert((int)BLOOM_TECH_AUTO == (int)FFT_TECH_AUTO &&
               (int)BLOOM_TECH_SHARED == (int)FFT_TECH_SHARED &&
               (int)BLOOM_TECH_GLOBAL == (int)FFT_TECH_GLOBAL &&
               (int)BLOOM_TECH_BLOCKED == (int)FFT_TECH_BLOCKED,
               "protocol/params.h's enum bloom_technique is fft_plan.h's enum fft_technique");

const char *bloom_strerror(int code)
{
	switch (code) {
	case BLOOM_OK: return "ok";
	case BLOOM_E_ARG: return "bad bloom parameter";
	case BLOOM_E_TOO_LARGE: return "image too large for the GPU";
	case BLOOM_E_GPU: return "GPU failure";
	case BLOOM_E_NOMEM: return "out of memory";
	}
	return "unknown error";
}

double bloom_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int bloom_ctx_create(struct program_cache *pc, const struct egl_info *info,
                     const struct bloom_ctx_opts *o, const struct gles_log *log,
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
	b->plans = calloc((size_t)b->opts.max_plans, sizeof *b->plans);
	if (!b->plans || gpu_timer_create(info, &b->timer)) {
		bloom_ctx_destroy(b);
		snprintf(err, BLOOM_ERR_LEN, "out of memory");
		return BLOOM_E_NOMEM;
	}
	b->flags = bloom_buffer(16, GL_DYNAMIC_COPY);
	b->flags_stage = b->flags ? bloom_buffer(16, GL_STREAM_READ) : 0;
	if (!b->flags_stage) {
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
	for (int i = 0; i < b->nplans; i++)
		bloom_plan_destroy(b->plans[i]);
	free(b->plans);
	bloom_kcache_free(b);
	bloom_presets_free(b);
	bloom_transfer_free(b);
	bloom_progs_drop(b);
	GLuint bufs[] = {b->flags, b->flags_stage};
	for (int i = 0; i < 2; i++)
		if (bufs[i])
			glDeleteBuffers(1, &bufs[i]);
	gpu_timer_destroy(b->timer);
	free(b);
}

void bloom_ctx_stats(const struct bloom_ctx *b, struct bloom_cache_stats *st)
{
	*st = b->st;
	st->kernel_bytes = b->kbytes;
	st->kernel_entries = b->nk;
	st->plan_entries = (size_t)b->nplans;
}

/* The frame's oriented size and channels; BLOOM_E_ARG for an empty or malformed one. */
static int frame_size(const struct bloom_frame *f, int *w, int *h, int *ch,
                      char err[BLOOM_ERR_LEN])
{
	const struct image *in = f ? f->img : NULL;
	const struct yuv_image *y = in || !f ? NULL : f->yuv;
	*w = *h = *ch = 0;
	if (in && in->pixels) {
		*w = in->width, *h = in->height, *ch = in->channels;
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
	struct bloom_frame f = {in, NULL};
	struct bloom_result r;
	memset(&r, 0, sizeof r);
	int rc = bloom_run_frame(b, op, &f, k, p, flags, &r, st, err);
	if (!rc && r.nonfinite) {
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
	if (res->want_yuv && (res->sub_x < 1 || res->sub_x > 2 || res->sub_y < 1 || res->sub_y > 2)) {
		snprintf(err, BLOOM_ERR_LEN, "planes: subsampling %dx%d is not 1 or 2 per axis",
		         res->sub_x, res->sub_y);
		return BLOOM_E_ARG;
	}
	return 0;
}

/* On failure the result's outputs are freed (lent planes given back, not freed). */
static void result_drop(struct bloom_result *res)
{
	image_free(&res->img);
	if (res->lease) {
		res->yuv.data = NULL;
		bloom_lease_return(res->lease);
		res->lease = NULL;
	}
	yuv_image_free(&res->yuv);
}

int bloom_run_frame(struct bloom_ctx *b, int op, const struct bloom_frame *fin,
                    const struct bloom_kernel *k, const struct bloom_params *p, unsigned flags,
                    struct bloom_result *res, struct bloom_stats *st, char err[BLOOM_ERR_LEN])
{
	struct bloom_stats local;
	if (!st)
		st = &local;
	memset(st, 0, sizeof *st);
	double t_start = bloom_now_ms();
	err[0] = 0;
	b->last.valid = 0; /* plans or kernel spectra may be evicted below */
	struct kinfo ki;
	memset(&ki, 0, sizeof ki);
	struct plan *q = NULL;
	struct kentry *ke = NULL;
	struct bloom_lease *lease = NULL; /* taken for this result; moves to res->lease */
	struct gpu_timer *tm = flags & BLOOM_TIME_STAGES ? b->timer : NULL;
	int w = 0, h = 0, in_ch = 0, ch = 0;
	int rc = result_reset(res, err);
	if (!rc)
		rc = frame_size(fin, &w, &h, &in_ch, err);
	/* the kernel, its plan, and its spectrum from the cache or its pixels read now */
	if (!rc)
		rc = bloom_kernel_resolve(b, k, p, w, h, &ki, err);
	if (!rc)
		rc = bloom_plan_get(b, bloom_padded_size(w + ki.kw - 1),
		                    bloom_padded_size(h + ki.kh - 1), p, &q, err);
	if (!rc && !(ke = bloom_kcache_find(b, q, &ki, p)))
		rc = bloom_kernel_pixels(&ki, p, err);
	if (!rc) {
		st->padded_w = q->pw, st->padded_h = q->ph;
		st->kernel_cached = ke != NULL;
		st->gray_kernel = ke ? ke->gray : ki.gray;
		res->channels = ch = result_channels(in_ch, st->gray_kernel);
		rc = bloom_result_prepare(b, res, w, h, ch, &lease, err);
	}
	st->prepare_ms = bloom_now_ms() - t_start;
	/* the GPU's part: upload, the kernel's spectrum on a miss, the stages, read back */
	if (!rc && tm)
		gpu_timer_start(tm);
	if (!rc && !(rc = bloom_upload(b, q, fin, w, h, &st->copy_ms, err)) && tm)
		gpu_timer_mark(tm, GPU_STAGE_UPLOAD);
	if (!rc && !ke && !(rc = bloom_kernel_spectrum(b, q, &ki, p, &ke, err)) && tm)
		gpu_timer_mark(tm, GPU_STAGE_KERNEL);
	if (!rc)
		rc = bloom_stages(b, q, ke, op, p, w, h, tm, st, err);
	if (!rc) { /* what bloom_rerun_stages repeats */
		b->last.q = q, b->last.ke = ke, b->last.op = op, b->last.p = *p;
		b->last.w = w, b->last.h = h, b->last.valid = 1;
		rc = bloom_read_back(b, q, res, w, h, ch, &lease, st, err);
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
	bloom_kinfo_free(&ki);
	st->wall_ms = bloom_now_ms() - t_start;
	return rc;
}

int bloom_rerun_stages(struct bloom_ctx *b, struct bloom_stats *st, char err[BLOOM_ERR_LEN])
{
	memset(st, 0, sizeof *st);
	if (!b->last.valid) {
		snprintf(err, BLOOM_ERR_LEN, "no bloom_run to repeat");
		return BLOOM_E_ARG;
	}
	gpu_timer_start(b->timer);
	int rc = bloom_stages(b, b->last.q, b->last.ke, b->last.op, &b->last.p, b->last.w,
	                      b->last.h, b->timer, st, err);
	int timed = !gpu_timer_read(b->timer, st->stage_ms);
	if (rc)
		return rc;
	st->padded_w = b->last.q->pw, st->padded_h = b->last.q->ph;
	st->gray_kernel = b->last.ke->gray;
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
	int pw = bloom_padded_size(w + ki.kw - 1), ph = bloom_padded_size(h + ki.kh - 1);
	*key = (unsigned long long)pw | (unsigned long long)ph << 20 |
	       (unsigned long long)(p->precision == BLOOM_FP16) << 40 |
	       (unsigned long long)p->technique << 41;
	*known = bloom_plan_cached(b, pw, ph, p);
	return 0;
}

int bloom_warm(struct bloom_ctx *b, int width, int height, int kernel_w, int kernel_h,
               const struct bloom_params *p, char err[BLOOM_ERR_LEN])
{
	struct plan *q = NULL;
	int pw = bloom_padded_size(width + kernel_w - 1), ph = bloom_padded_size(height + kernel_h - 1);
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
		rc = bloom_prog(b, SH_YUV_PACK, 0, 0, &prog, err);
	/* the fused columns' transposes: the image's, and the kernels' (vec2 and vec4 float32) */
	if (!rc && q->conv4)
		rc = bloom_prog(b, SH_TRANSPOSE, 1, half, &prog, err);
	for (int v = 0; !rc && q->conv4 && v < 2; v++)
		rc = bloom_prog(b, SH_TRANSPOSE, v, 0, &prog, err);
	return rc;
}
