/* One spatial algorithm run on a plan: the filter (and bias) uploaded for the weights, the
 * input packed into its texture, the convolution dispatched; see spatial_internal.h. */
#include "gles/spatial_internal.h"
#include "gles/gl_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* gl_dispatch_z with the context's device and cancellation: 0 or SPATIAL_E_CANCELLED. */
int spatial_dispatch_z(const struct spatial_ctx *s, const struct spatial_prog *prog, int gx,
                       int gy, long nz)
{
	return gl_dispatch_z(s->info, s->cancel, prog->u[SU_Z0], gx, gy, nz) ? SPATIAL_E_CANCELLED
	                                                                      : 0;
}

static float wround(int level, float v)
{
	return level == SPATIAL_FP16 ? spatial_plan_half(v) : v;
}

/* Where a weight lies in the caller's [out_c][in_c / groups][k_h * k_w] array. */
struct wlayout {
	int cpg, cpo; /* input and output channels per group */
	int kk;       /* taps per channel */
	size_t per;   /* weights per output channel: cpg * kk */
};

static struct wlayout wlayout(const struct spatial_geom *g)
{
	struct wlayout l = {g->in_c / g->groups, g->out_c / g->groups, g->k_h * g->k_w, 0};
	l.per = (size_t)l.cpg * l.kk;
	return l;
}

/* shared: the weights, rounded to the level, into the storage buffer as they are. */
static int filter_shared(struct spatial_ctx *s, struct shape *p, const float *w,
                         char err[SPATIAL_ERR_LEN])
{
	for (size_t i = 0; i < p->host_floats; i++)
		p->host[i] = wround(p->key.level, w[i]);
	return spatial_upload(s, p->fbuf, p->host, p->host_floats * 4, err);
}

/* planes4: the weights into the filter texture, four output planes in a texel's lanes. */
static void filter_texture(struct shape *p, const float *w)
{
	const struct spatial_geom *g = &p->key.g;
	struct wlayout l = wlayout(g);
	int level = p->key.level;
	float *h = p->host;
	memset(h, 0, p->host_floats * sizeof *h);
	for (int co = 0; co < g->out_c; co++) {
		int og = co / 4, o = co % 4, c0 = (co / l.cpo) * l.cpg;
		for (int cl = 0; cl < l.cpg; cl++) {
			int ci = c0 + cl, row = og * p->layers + ci / 4;
			for (int t = 0; t < l.kk; t++)
				h[(((size_t)row * p->ftex_w) + t * 4 + o) * 4 + ci % 4] =
					wround(level, w[(size_t)co * l.per + (size_t)cl * l.kk + t]);
		}
	}
	glActiveTexture(GL_TEXTURE1);
	glBindTexture(GL_TEXTURE_2D, p->ftex);
	glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, p->ftex_w, p->ftex_h, GL_RGBA, GL_FLOAT, h);
}

/* batch4 and interp: each output plane's block (bias, the counts of single taps and fused pairs,
 * then its entries by mode) into the uniform buffer; interp pairs taps where the probed filter
 * resolves them (spatial_plan_entries). Adds the counts to st. */
static int filter_blocks(struct spatial_ctx *s, struct shape *p, const float *w,
                         const float *bias, struct spatial_stats *st, char err[SPATIAL_ERR_LEN])
{
	const struct spatial_geom *g = &p->key.g;
	struct wlayout l = wlayout(g);
	int level = p->key.level;
	int bits = p->linear ? s->caps.filter_bits[level] : 0;
	double tol = spatial_plan_interp_tol(level);
	float *tmp = NULL;
	if (p->mode == MODE_INTERP || p->mode == MODE_IMAGE_INTERP) {
		tmp = malloc((l.per > (size_t)l.kk * 4 ? l.per : (size_t)l.kk * 4) * sizeof *tmp);
		if (!tmp)
			return SPATIAL_E_NOMEM;
	}
	for (int co = 0; co < g->out_c; co++) {
		float *blk = p->host + (size_t)co * p->plane_stride / 4, *f = blk + 4;
		memset(blk, 0, (size_t)p->plane_stride);
		blk[0] = bias ? bias[co] : 0;
		const float *wc = w + (size_t)co * l.per;
		int ns = 0, nf = 0;
		switch (p->mode) {
		case MODE_TAPS:
			for (size_t t = 0; t < l.per; t++)
				f[t] = wround(level, wc[t]);
			break;
		case MODE_IMAGE:
			for (int t = 0; t < l.kk * 4; t++)
				f[t] = wround(level, w[t]);
			break;
		case MODE_INTERP:
			for (size_t t = 0; t < l.per; t++)
				tmp[t] = wround(level, wc[t]);
			spatial_plan_entries(tmp, 1, l.cpg, (co / l.cpo) * l.cpg, g->k_h, g->k_w,
			                     g->dil_h, g->dil_w, bits, tol, f, &ns, &nf);
			break;
		default:
			for (int t = 0; t < l.kk * 4; t++)
				tmp[t] = wround(level, w[t]);
			spatial_plan_entries(tmp, 4, 1, 0, g->k_h, g->k_w, g->dil_h, g->dil_w, bits, tol, f,
			                     &ns, &nf);
			break;
		}
		blk[1] = (float)ns;
		blk[2] = (float)nf;
		if (st)
			st->singles += ns, st->fused += nf;
	}
	free(tmp);
	return spatial_upload(s, p->fbuf, p->host, p->host_floats * 4, err);
}

/* shared and planes4: the bias (or zeros) into the context's bias buffer. */
static int upload_bias(struct spatial_ctx *s, int out_c, const float *bias,
                       char err[SPATIAL_ERR_LEN])
{
	size_t nb = (size_t)out_c * 4;
	int rc = spatial_grow(s, &s->bias_buf, &s->bias_bytes, nb, err);
	if (rc)
		return rc;
	float *b = calloc((size_t)out_c, sizeof *b);
	if (!b)
		return SPATIAL_E_NOMEM;
	for (int co = 0; bias && co < out_c; co++)
		b[co] = bias[co];
	rc = spatial_upload(s, s->bias_buf, b, nb, err);
	free(b);
	return rc;
}

/* gemm: the weights, rounded to the level, as (group, k, n) rows of np4 vec4s (n past the
 * group's planes 0), the bias after them at vec4 boff. */
static int filter_gemm(struct spatial_ctx *s, struct shape *p, const float *w, const float *bias,
                       char err[SPATIAL_ERR_LEN])
{
	const struct spatial_geom *g = &p->gg;
	struct wlayout l = wlayout(g);
	size_t np = (size_t)p->np4 * 4;
	float *h = p->host;
	memset(h, 0, p->host_floats * sizeof *h);
	for (int co = 0; co < g->out_c; co++) {
		int grp = co / l.cpo, n = co % l.cpo;
		for (int k = 0; k < p->kdim; k++)
			h[((size_t)grp * p->kdim + k) * np + n] =
				wround(p->glevel, w[(size_t)co * l.per + (size_t)k]);
		h[(size_t)p->boff * 4 + co] = bias ? bias[co] : 0;
	}
	return spatial_upload(s, p->fbuf, h, p->host_floats * 4, err);
}

/* winograd: the weights (Cout, Cin, 3, 3) into ww_buf, their transforms into gemm's filter on
 * the GPU (the plan's bias rows stay 0), the bias for the output transform. */
static int winograd_weights(struct spatial_ctx *s, struct shape *p, const float *w,
                            const float *bias, char err[SPATIAL_ERR_LEN])
{
	const struct spatial_geom *g = &p->key.g;
	size_t bytes = (size_t)g->out_c * g->in_c * 9 * sizeof *w;
	int rc;
	if ((rc = spatial_grow(s, &s->ww_buf, &s->ww_bytes, bytes, err)) ||
	    (rc = spatial_upload(s, s->ww_buf, w, bytes, err)) ||
	    (rc = upload_bias(s, g->out_c, bias, err)))
		return rc;
	const struct spatial_prog *t = &p->wtp;
	glUseProgram(t->id);
	glUniform1i(t->u[SU_CN], g->in_c);
	glUniform1i(t->u[SU_COUT], g->out_c);
	glUniform1i(t->u[SU_NP4], p->np4);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, s->ww_buf);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, p->fbuf);
	glDispatchCompute((GLuint)((g->in_c + 7) / 8), (GLuint)((p->np4 * 4 + 7) / 8), 1);
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
	return 0;
}

/* Fills and uploads the plan's filter (and bias) for these weights. */
static int upload_filter(struct spatial_ctx *s, struct shape *p, const float *w, const float *bias,
                         struct spatial_stats *st, char err[SPATIAL_ERR_LEN])
{
	switch (p->key.alg) {
	case SPATIAL_ALG_GEMM:
		return filter_gemm(s, p, w, bias, err);
	case SPATIAL_ALG_WINOGRAD:
		return winograd_weights(s, p, w, bias, err);
	case SPATIAL_ALG_SHARED: {
		int rc = filter_shared(s, p, w, err);
		return rc ? rc : upload_bias(s, p->key.g.out_c, bias, err);
	}
	case SPATIAL_ALG_PLANES4:
		filter_texture(p, w);
		return upload_bias(s, p->key.g.out_c, bias, err);
	default:
		return filter_blocks(s, p, w, bias, st, err);
	}
}

static void set_dst(const struct spatial_prog *prog, const struct spatial_geom *g)
{
	glUniform2i(prog->u[SU_GRID], g->out_w, g->out_h);
	glUniform2i(prog->u[SU_DST], g->dst_w, g->dst_h);
	glUniform2i(prog->u[SU_DST_S], g->dst_sx, g->dst_sy);
	glUniform2i(prog->u[SU_DST_O], g->dst_ox, g->dst_oy);
	glUniform2i(prog->u[SU_STRIDE], g->stride_w, g->stride_h);
	glUniform2i(prog->u[SU_DIL], g->dil_w, g->dil_h);
	glUniform2i(prog->u[SU_K], g->k_w, g->k_h);
}

static void set_src(const struct spatial_prog *prog, const struct spatial_geom *g)
{
	glUniform2i(prog->u[SU_SRC], g->in_w, g->in_h);
	glUniform2i(prog->u[SU_UP], g->up_w, g->up_h);
	glUniform1i(prog->u[SU_SB], g->batch);
	glUniform1i(prog->u[SU_SC], g->in_c);
}

/* Runs plan p on in_buf into out_buf. tm: a timer sequence the caller started, on which the
 * pack and the convolution are marked apart; NULL: untimed. */
/* The texture algorithms' input: the source windows packed into the plan's texture. */
static int pack_input(struct spatial_ctx *s, struct shape *p, GLuint in_buf)
{
	const struct spatial_geom *g = &p->key.g;
	const struct spatial_prog *pk = &p->pack;
	glUseProgram(pk->id);
	set_src(pk, g);
	glUniform2i(pk->u[SU_TILE], p->tile_w, p->tile_h);
	glUniform2i(pk->u[SU_ORG], g->org_x, g->org_y);
	glUniform1i(pk->u[SU_TILES_X], p->tiles_x);
	glUniform1i(pk->u[SU_TILES], p->tiles);
	glUniform1i(pk->u[SU_LAYERS], p->layers);
	glUniform1f(pk->u[SU_SCALE], p->key.level <= SPATIAL_Q26_HIGHP ? 64.0f / 127.0f : 1.0f);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, in_buf); /* images: unused there */
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, in_buf);
	glBindImageTexture(0, p->tex, 0, GL_TRUE, 0, GL_WRITE_ONLY, p->tex_fmt);
	int rc = spatial_dispatch_z(s, pk, (p->tile_w + 7) / 8, (p->tile_h + 7) / 8,
	                            (long)p->tiles * p->layers);
	glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT);
	return rc;
}

/* The storage-buffer algorithms' common uniforms and bindings: the source at 0, buffers b1 and b2
 * at 1 and 2, the output at 3. */
static void set_buffers(const struct spatial_prog *prog, const struct spatial_geom *g,
                        GLuint in_buf, GLuint b1, GLuint b2, GLuint out_buf)
{
	set_src(prog, g);
	glUniform2i(prog->u[SU_ORG], g->org_x, g->org_y);
	glUniform1i(prog->u[SU_COUT], g->out_c);
	glUniform1i(prog->u[SU_CPG_IN], g->in_c / g->groups);
	glUniform1i(prog->u[SU_CPG_OUT], g->out_c / g->groups);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, in_buf);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, b1);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, b2);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 3, out_buf);
}

/* shared: tiles of outputs, their windows staged through shared memory from the storage buffer. */
static int conv_shared(struct spatial_ctx *s, struct shape *p, GLuint in_buf, GLuint out_buf)
{
	const struct spatial_geom *g = &p->key.g;
	const struct spatial_prog *prog = &p->conv;
	set_buffers(prog, g, in_buf, p->fbuf, s->bias_buf, out_buf);
	glUniform2i(prog->u[SU_WIN], p->win_w, p->win_h);
	glUniform1i(prog->u[SU_NCB], p->ncb);
	glUniform1i(prog->u[SU_CHUNK], p->chunk);
	glUniform1i(prog->u[SU_BATCH], g->batch);
	return spatial_dispatch_z(s, prog, (g->out_w + SPATIAL_PLAN_TILE_X - 1) / SPATIAL_PLAN_TILE_X,
	                          (g->out_h + SPATIAL_PLAN_TILE_Y - 1) / SPATIAL_PLAN_TILE_Y,
	                          (long)g->batch * p->ncb);
}

/* gemm: BM x BN tiles of (pixels x a group's planes), one z slice a group. */
static int conv_gemm(struct spatial_ctx *s, struct shape *p, GLuint in_buf, GLuint out_buf)
{
	const struct spatial_geom *g = &p->gg;
	const struct spatial_prog *prog = &p->conv;
	set_buffers(prog, g, in_buf, p->fbuf, p->kbuf, out_buf);
	glUniform1i(prog->u[SU_KDIM], p->kdim);
	glUniform1i(prog->u[SU_M], g->batch * g->out_h * g->out_w);
	glUniform1i(prog->u[SU_NP4], p->np4);
	glUniform1i(prog->u[SU_BOFF], p->boff);
	return spatial_dispatch_z(s, prog, p->gx, p->gy, g->groups);
}

/* winograd: the input's transforms into wu_buf, the T GEMMs into wm_buf (gemm on the plan's
 * 1x1 geometry), the output's transforms with the bias into out_buf. */
static int conv_winograd(struct spatial_ctx *s, struct shape *p, GLuint in_buf, GLuint out_buf,
                         char err[SPATIAL_ERR_LEN])
{
	const struct spatial_geom *g = &p->key.g;
	int rc;
	if ((rc = spatial_grow(s, &s->wu_buf, &s->wu_bytes, p->wu_floats * 4, err)) ||
	    (rc = spatial_grow(s, &s->wm_buf, &s->wm_bytes, p->wm_floats * 4, err)))
		return rc;
	int gx = (p->wtiles_x + 7) / 8, gy = (p->wtiles_y + 7) / 8;
	const struct spatial_prog *in = &p->pack, *out = &p->post;
	glUseProgram(in->id);
	set_src(in, g);
	glUniform2i(in->u[SU_ORG], g->org_x, g->org_y);
	glUniform2i(in->u[SU_TILES], p->wtiles_x, p->wtiles_y);
	glUniform1i(in->u[SU_CN], g->in_c);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, in_buf);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, s->wu_buf);
	if ((rc = spatial_dispatch_z(s, in, gx, gy, (long)g->batch * g->in_c)))
		return rc;
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
	glUseProgram(p->conv.id);
	set_dst(&p->conv, &p->gg);
	if ((rc = conv_gemm(s, p, s->wu_buf, s->wm_buf)))
		return rc;
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
	glUseProgram(out->id);
	set_dst(out, g);
	glUniform2i(out->u[SU_TILES], p->wtiles_x, p->wtiles_y);
	glUniform1i(out->u[SU_CN], g->out_c);
	glUniform1i(out->u[SU_COUT], g->out_c);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, s->wm_buf);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, s->bias_buf);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 3, out_buf);
	return spatial_dispatch_z(s, out, gx, gy, (long)g->batch * g->out_c);
}

/* The texture algorithms: planes4 four output planes an invocation from the filter texture;
 * batch4 and interp one dispatch per output plane with its uniform block bound. */
static int conv_texture(struct spatial_ctx *s, struct shape *p, GLuint out_buf)
{
	const struct spatial_geom *g = &p->key.g;
	const struct spatial_prog *prog = &p->conv;
	int cpg = g->in_c / g->groups, cpo = g->out_c / g->groups;
	glActiveTexture(GL_TEXTURE0);
	glBindTexture(GL_TEXTURE_2D_ARRAY, p->tex);
	glUniform1i(prog->u[SU_IN], 0);
	glUniform2i(prog->u[SU_TILE], p->tile_w, p->tile_h);
	glUniform1i(prog->u[SU_TILES_X], p->tiles_x);
	glUniform1i(prog->u[SU_COUT], g->out_c);
	glUniform1i(prog->u[SU_BATCH], g->batch);
	glUniform1f(prog->u[SU_SCALE], p->key.level <= SPATIAL_Q26_HIGHP ? 127.0f / 64.0f : 1.0f);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, out_buf);
	int gx = (g->out_w + 7) / 8, gy = (g->out_h + 7) / 8;
	if (p->key.alg == SPATIAL_ALG_PLANES4) {
		glActiveTexture(GL_TEXTURE1);
		glBindTexture(GL_TEXTURE_2D, p->ftex);
		glUniform1i(prog->u[SU_FILT], 1);
		glUniform1i(prog->u[SU_C4], p->layers);
		glUniform1i(prog->u[SU_G4], (g->out_c + 3) / 4);
		glUniform1i(prog->u[SU_CPG_IN], cpg);
		glUniform1i(prog->u[SU_CPG_OUT], cpo);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, s->bias_buf);
		return spatial_dispatch_z(s, prog, gx, gy, (long)g->batch * ((g->out_c + 3) / 4));
	}
	glUniform2f(prog->u[SU_TEXINV], 1.0f / p->tex_w, 1.0f / p->tex_h);
	glUniform1i(prog->u[SU_CN], cpg);
	for (int co = 0; co < g->out_c; co++) {
		if (gles_cancelled(s->cancel)) /* one dispatch an output plane: each a check */
			return SPATIAL_E_CANCELLED;
		glBindBufferRange(GL_UNIFORM_BUFFER, 0, p->fbuf, (GLintptr)co * p->plane_stride,
		                  p->block_bytes);
		glUniform1i(prog->u[SU_CO], co);
		glUniform1i(prog->u[SU_C0], (co / cpo) * cpg);
		glDispatchCompute((GLuint)gx, (GLuint)gy, (GLuint)p->tiles);
	}
	return 0;
}

int spatial_run_shape(struct spatial_ctx *s, struct shape *p, const float *w, const float *bias,
                      GLuint in_buf, GLuint out_buf, struct gpu_timer *tm,
                      struct spatial_stats *st, char err[SPATIAL_ERR_LEN])
{
	if (gles_cancelled(s->cancel)) {
		snprintf(err, SPATIAL_ERR_LEN, "cancelled before the convolution");
		return SPATIAL_E_CANCELLED;
	}
	int rc = upload_filter(s, p, w, bias, st, err);
	if (rc)
		return rc;
	int alg = p->key.alg;
	if (alg != SPATIAL_ALG_SHARED && alg != SPATIAL_ALG_GEMM && alg != SPATIAL_ALG_WINOGRAD)
		rc = pack_input(s, p, in_buf);
	if (tm)
		gpu_timer_mark(tm, GPU_STAGE_PACK);
	if (alg == SPATIAL_ALG_WINOGRAD && !rc) {
		if ((rc = conv_winograd(s, p, in_buf, out_buf, err)) && rc != SPATIAL_E_CANCELLED)
			return rc; /* its buffers could not grow */
	} else if (!rc) {
		glUseProgram(p->conv.id);
		set_dst(&p->conv, &p->gg);
		rc = alg == SPATIAL_ALG_SHARED ? conv_shared(s, p, in_buf, out_buf)
		   : alg == SPATIAL_ALG_GEMM   ? conv_gemm(s, p, in_buf, out_buf)
		                               : conv_texture(s, p, out_buf);
	}
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
	if (tm)
		gpu_timer_mark(tm, GPU_STAGE_CONV);
	if (rc) { /* SPATIAL_E_CANCELLED: what was issued runs out; the result is not read */
		snprintf(err, SPATIAL_ERR_LEN, "%s: cancelled between dispatches",
		         spatial_algorithm_name(p->key.alg));
		return rc;
	}
	if (gl_check(&s->log, "spatial convolution")) {
		snprintf(err, SPATIAL_ERR_LEN, "%s: a GL error during the convolution",
		         spatial_algorithm_name(p->key.alg));
		return SPATIAL_E_GPU;
	}
	return 0;
}
