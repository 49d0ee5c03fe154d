/* The spatial convolution: the context (limits, probes run at create), the tensor entry
 * points and the host arrays in and out; see spatial.h and spatial_internal.h. */
#include "gles/spatial_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/gl_util.h"
#include "core/checked.h"
#include "core/clock.h"

const char *spatial_strerror(int code)
{
	switch (code) {
	case SPATIAL_OK: return "ok";
	case SPATIAL_E_ARG: return "bad parameter or shape";
	case SPATIAL_E_TOO_LARGE: return "beyond the GPU's limits";
	case SPATIAL_E_UNSUPPORTED: return "the algorithm cannot run this shape";
	case SPATIAL_E_GPU: return "GPU failure";
	case SPATIAL_E_NOMEM: return "out of memory";
	case SPATIAL_E_CANCELLED: return "cancelled";
	}
	return "unknown error";
}

void spatial_ctx_set_cancel(struct spatial_ctx *s, struct gles_cancel *c)
{
	s->cancel = c;
}

const char *spatial_algorithm_name(int alg)
{
	return alg >= 0 && alg < SPATIAL_ALG_COUNT ? spatial_algorithm_names[alg] : "?";
}

const struct spatial_caps *spatial_ctx_caps(const struct spatial_ctx *s)
{
	return &s->caps;
}

/* A gl_util buffer call's result: 0, or its failure logged and said in err (SPATIAL_E_TOO_LARGE
 * for GL_OUT_OF_MEMORY, else SPATIAL_E_GPU). */
static int buf_said(const struct spatial_ctx *s, int rc, const char *gerr,
                    char err[SPATIAL_ERR_LEN])
{
	if (!rc)
		return 0;
	snprintf(err, SPATIAL_ERR_LEN, "%s", gerr);
	log_sinkf(&s->log, LOG_ERROR, "spatial: %s", err);
	return rc == GL_BUF_E_OOM ? SPATIAL_E_TOO_LARGE : SPATIAL_E_GPU;
}

int spatial_grow(const struct spatial_ctx *s, GLuint *buf, size_t *have, size_t need,
                char err[SPATIAL_ERR_LEN])
{
	char gerr[GL_BUF_ERR_LEN];
	int rc = gl_buf_grow_device(buf, have, need, s->info->buffer_storage, gerr);
	return buf_said(s, rc, gerr, err);
}

void spatial_winograd_free(struct spatial_ctx *s)
{
	GLuint bufs[3] = {s->wu_buf, s->wm_buf, s->ww_buf};
	glDeleteBuffers(3, bufs); /* 0 names are ignored */
	s->wu_buf = s->wm_buf = s->ww_buf = 0;
	s->wu_bytes = s->wm_bytes = s->ww_bytes = 0;
}

int spatial_upload(struct spatial_ctx *s, GLuint dst, const void *src, size_t bytes,
                   char err[SPATIAL_ERR_LEN])
{
	char gerr[GL_BUF_ERR_LEN];
	int rc = gl_stage_upload(&s->stage, dst, src, bytes, gerr);
	return buf_said(s, rc, gerr, err);
}

int spatial_download(struct spatial_ctx *s, GLuint src, void *dst, size_t bytes,
                     char err[SPATIAL_ERR_LEN])
{
	char gerr[GL_BUF_ERR_LEN];
	int rc = gl_stage_download(&s->stage, src, dst, bytes, gerr);
	return buf_said(s, rc, gerr, err);
}

int spatial_ctx_create(struct program_cache *pc, const struct egl_info *info,
                       const struct spatial_opts *o, const struct log_sink *log,
                       struct spatial_ctx **out, char err[SPATIAL_ERR_LEN])
{
	*out = NULL;
	err[0] = 0;
	struct spatial_ctx *s = calloc(1, sizeof *s);
	if (!s)
		return SPATIAL_E_NOMEM;
	s->pc = pc;
	s->info = info;
	if (log)
		s->log = *log;
	if (o)
		s->o = *o;
	if (s->o.max_plans <= 0)
		s->o.max_plans = 8;
	if (s->o.max_texture_bytes <= 0)
		s->o.max_texture_bytes = 1ll << 30;
	int rc = SPATIAL_E_NOMEM;
	s->plans = calloc((size_t)s->o.max_plans, sizeof *s->plans);
	if (!s->plans || gpu_timer_create(info, &s->timer) || gpu_timer_create(info, &s->mtimer))
		goto fail;
	struct spatial_caps *c = &s->caps;
	glGetIntegerv(GL_MAX_TEXTURE_SIZE, &c->max_texture_size);
	glGetIntegerv(GL_MAX_ARRAY_TEXTURE_LAYERS, &c->max_layers);
	glGetIntegerv(GL_MAX_UNIFORM_BLOCK_SIZE, &c->max_uniform_block);
	glGetIntegerv(GL_UNIFORM_BUFFER_OFFSET_ALIGNMENT, &c->ubo_align);
	if (c->ubo_align < 16)
		c->ubo_align = 16;
	c->max_ssbo = info->max_ssbo_size;
	c->persistent_map = info->buffer_storage && !s->o.no_persistent_map;
	s->stage.mapped = c->persistent_map;
	GLint n = 0;
	glGetIntegerv(GL_NUM_EXTENSIONS, &n);
	for (GLint i = 0; i < n; i++) {
		const char *e = (const char *)glGetStringi(GL_EXTENSIONS, (GLuint)i);
		if (e && !strcmp(e, "GL_OES_texture_float_linear"))
			c->float_linear = !s->o.no_float_linear;
		if (e && !strcmp(e, "GL_NV_gpu_shader5"))
			c->half2 = !s->o.no_half2;
	}
	struct spatial_prog prog; /* compiled ahead; plans hold them when they use them */
	for (int level = SPATIAL_Q26_HIGHP; level <= SPATIAL_FP32; level++)
		for (int lanes = 0; lanes < 3; lanes++)
			if ((rc = spatial_pack_prog(s, level, lanes, 0, &prog, err)))
				goto fail;
	c->mediump_bits = 10;
	for (int level = 0; level < 4; level++)
		if ((rc = spatial_probe_filter(s, level, err)))
			goto fail;
	*out = s;
	return 0;
fail:
	if (!err[0])
		snprintf(err, SPATIAL_ERR_LEN, "%s", spatial_strerror(rc));
	spatial_ctx_destroy(s);
	return rc;
}

void spatial_ctx_destroy(struct spatial_ctx *s)
{
	if (!s)
		return;
	for (int i = 0; s->plans && i < s->nplans; i++)
		spatial_shape_free(s, &s->plans[i]);
	free(s->plans);
	GLuint bufs[3] = {s->in_buf, s->out_buf, s->bias_buf};
	glDeleteBuffers(3, bufs);
	spatial_winograd_free(s);
	gl_stage_free(&s->stage);
	gpu_timer_destroy(s->timer);
	gpu_timer_destroy(s->mtimer);
	free(s->host);
	free(s);
}

int spatial_check_args(const struct spatial_geom *g, int alg, int level, int image,
                      char err[SPATIAL_ERR_LEN])
{
	char perr[SPATIAL_PLAN_ERR_LEN];
	if (level < 0 || level > 3) {
		snprintf(err, SPATIAL_ERR_LEN, "precision: %d is not 0-3", level);
		return SPATIAL_E_ARG;
	}
	if (alg < 0 || alg >= SPATIAL_ALG_COUNT) {
		snprintf(err, SPATIAL_ERR_LEN, "algorithm: %d is not one of auto|batch4|interp|planes4|shared|gemm|winograd",
		         alg);
		return SPATIAL_E_ARG;
	}
	if (spatial_plan_check(g, perr)) {
		snprintf(err, SPATIAL_ERR_LEN, "%s", perr);
		return SPATIAL_E_ARG;
	}
	(void)image;
	return 0;
}

int spatial_can_run(struct spatial_ctx *s, const struct spatial_geom *g, int algorithm,
                    int precision, char err[SPATIAL_ERR_LEN])
{
	int rc = spatial_check_args(g, algorithm, precision, 0, err);
	if (rc)
		return rc;
	if (algorithm == SPATIAL_ALG_AUTO) {
		snprintf(err, SPATIAL_ERR_LEN, "spatial_can_run asks about one algorithm, not auto");
		return SPATIAL_E_ARG;
	}
	struct shape_key pk;
	struct shape tmp;
	memset(&pk, 0, sizeof pk);
	pk.g = *g, pk.alg = algorithm, pk.level = precision;
	return spatial_shape_layout(s, &pk, &tmp, err);
}

int spatial_run(struct spatial_ctx *s, const struct spatial_geom *g, int algorithm,
                int precision, const float *weight, const float *bias, unsigned in_buf,
                unsigned out_buf, struct spatial_stats *st, char err[SPATIAL_ERR_LEN])
{
	err[0] = 0;
	if (st)
		memset(st, 0, sizeof *st);
	int rc = spatial_check_args(g, algorithm, precision, 0, err);
	if (rc)
		return rc;
	double t0 = clock_ms();
	rc = spatial_run_any(s, g, algorithm, precision, 0, weight, bias, in_buf, out_buf, NULL, st, err);
	if (st)
		st->wall_ms = clock_ms() - t0;
	return rc;
}

/* ---- host arrays in and out ---- */

/* A caller's GL buffer copied on the GPU into (into 1) or out of one of the engine's. */
static int copy_gl(GLuint from, GLuint to, size_t bytes, int into, char err[SPATIAL_ERR_LEN])
{
	int rc = gl_buf_copy_said(from, to, bytes, into, err, SPATIAL_ERR_LEN);
	return !rc ? 0 : rc == -1 ? SPATIAL_E_ARG : SPATIAL_E_GPU;
}

/* Uploads (in, or copies in_gl on the GPU when in is NULL), resolves auto, runs (timed: each
 * stage marked), downloads (to out, or copies into out_gl when out is NULL). */
static int run_io(struct spatial_ctx *s, const struct spatial_geom *g, int alg, int level,
                  int image, const void *in, GLuint in_gl, size_t in_bytes, const float *w,
                  const float *bias, void *out, GLuint out_gl, size_t out_bytes, int timed,
                  struct spatial_stats *st, char err[SPATIAL_ERR_LEN])
{
	struct gpu_timer *tm = timed ? s->timer : NULL;
	double t0 = clock_ms();
	int rc;
	if ((rc = spatial_grow(s, &s->in_buf, &s->in_bytes, in_bytes, err)) ||
	    (rc = spatial_grow(s, &s->out_buf, &s->out_bytes, out_bytes, err)))
		return rc;
	if ((rc = in ? spatial_upload(s, s->in_buf, in, in_bytes, err)
	             : copy_gl(in_gl, s->in_buf, in_bytes, 1, err)))
		return rc;
	st->upload_ms = clock_ms() - t0;
	if (alg == SPATIAL_ALG_AUTO &&
	    (rc = spatial_resolve(s, g, level, image, w, bias, s->in_buf, s->out_buf, &alg, st, err)))
		return rc;
	if ((rc = spatial_run_any(s, g, alg, level, image, w, bias, s->in_buf, s->out_buf, tm, st, err)))
		return rc;
	double t1 = clock_ms();
	if (!out)
		rc = copy_gl(s->out_buf, out_gl, out_bytes, 0, err);
	else
		rc = spatial_download(s, s->out_buf, out, out_bytes, err);
	st->download_ms = clock_ms() - t1;
	if (tm) {
		gpu_timer_mark(tm, GPU_STAGE_DOWNLOAD);
		if (!gpu_timer_read(tm, st->stage_ms)) {
			st->timed = gpu_timer_kind(tm);
			st->gpu_ms = st->stage_ms[GPU_STAGE_PACK] + st->stage_ms[GPU_STAGE_CONV];
		}
	}
	st->wall_ms = clock_ms() - t0;
	return rc;
}

int spatial_run_host(struct spatial_ctx *s, const struct spatial_geom *g, int alg, int level,
                    int image, const void *in, size_t in_bytes, const float *w, const float *bias,
                    void *out, size_t out_bytes, int timed, struct spatial_stats *st,
                    char err[SPATIAL_ERR_LEN])
{
	return run_io(s, g, alg, level, image, in, 0, in_bytes, w, bias, out, 0, out_bytes, timed, st,
	              err);
}

/* spatial_conv2d with host arrays (in, out) or GL buffers (in_gl, out_gl where in, out NULL). */
static int conv2d_io(struct spatial_ctx *s, const struct spatial_conv *c, const float *in,
                     GLuint in_gl, const float *weight, const float *bias, float *out,
                     GLuint out_gl, struct spatial_stats *st, char err[SPATIAL_ERR_LEN])
{
	struct spatial_stats local;
	if (!st)
		st = &local;
	memset(st, 0, sizeof *st);
	err[0] = 0;
	int oh, ow, rc = spatial_conv_output(c, &oh, &ow, err);
	if (rc)
		return rc;
	if ((!in && !in_gl) || !weight || (!out && !out_gl)) {
		snprintf(err, SPATIAL_ERR_LEN, "no input, weight or output array");
		return SPATIAL_E_ARG;
	}
	struct spatial_geom g = {
		.batch = c->batch, .in_c = c->in_c, .in_h = c->in_h, .in_w = c->in_w,
		.out_c = c->out_c, .groups = c->groups ? c->groups : 1, .k_h = c->k_h, .k_w = c->k_w,
		.stride_h = c->stride_h, .stride_w = c->stride_w,
		.dil_h = c->dil_h ? c->dil_h : 1, .dil_w = c->dil_w ? c->dil_w : 1,
		.up_h = 1, .up_w = 1, .org_y = -c->pad_h, .org_x = -c->pad_w,
		.out_h = oh, .out_w = ow, .dst_h = oh, .dst_w = ow, .dst_sy = 1, .dst_sx = 1,
	};
	if ((rc = spatial_check_args(&g, c->algorithm, c->precision, 0, err)))
		return rc;
	/* checked (spatial_check_args bounds the counts to 2^30 already: this keeps it so) */
	size_t in_b, out_b;
	const size_t in_d[4] = {(size_t)c->batch, (size_t)c->in_c, (size_t)c->in_h, (size_t)c->in_w};
	const size_t out_d[4] = {(size_t)c->batch, (size_t)c->out_c, (size_t)oh, (size_t)ow};
	if (checked_product_size(in_d, 4, 4, &in_b) | checked_product_size(out_d, 4, 4, &out_b) ||
	    (long long)in_b > s->caps.max_ssbo || (long long)out_b > s->caps.max_ssbo) {
		snprintf(err, SPATIAL_ERR_LEN, "a tensor of %zu bytes exceeds the storage-block limit "
		         "(%lld bytes)", in_b > out_b ? in_b : out_b, s->caps.max_ssbo);
		return SPATIAL_E_TOO_LARGE;
	}
	return run_io(s, &g, c->algorithm, c->precision, 0, in, in_gl, in_b, weight, bias, out, out_gl,
	              out_b, c->time_stages, st, err);
}

int spatial_conv2d(struct spatial_ctx *s, const struct spatial_conv *c, const float *in,
                   const float *weight, const float *bias, float *out, struct spatial_stats *st,
                   char err[SPATIAL_ERR_LEN])
{
	if (!in || !out) {
		if (st)
			memset(st, 0, sizeof *st);
		snprintf(err, SPATIAL_ERR_LEN, "no input, weight or output array");
		return SPATIAL_E_ARG;
	}
	return conv2d_io(s, c, in, 0, weight, bias, out, 0, st, err);
}

int spatial_conv2d_gl(struct spatial_ctx *s, const struct spatial_conv *c, unsigned in_buf,
                      const float *weight, const float *bias, unsigned out_buf,
                      struct spatial_stats *st, char err[SPATIAL_ERR_LEN])
{
	return conv2d_io(s, c, NULL, in_buf, weight, bias, NULL, out_buf, st, err);
}
