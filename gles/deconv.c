/* Transposed convolution by zero insertion, overlap-add and sub-kernels; see deconv.h. */
#include "gles/deconv.h"
#include "gles/deconv_plan.h"

#include <GLES3/gl31.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/gl_util.h"
#include "gles/gpu_timer.h"
#include "core/clock.h"

#define MAX_WINNERS 64
#define COL_BYTES_MAX (512ll << 20) /* the overlap-add column buffer, at most */

/* Every uniform of the overlap-add shaders; a program's locations are looked up once. */
enum deconv_uniform {
	DU_B, DU_CIN, DU_CO0, DU_COUT, DU_CPI, DU_CPO, DU_D, DU_GRID, DU_HW, DU_IN, DU_K, DU_KK,
	DU_OFF, DU_OUT, DU_PAD, DU_PLANES, DU_ROWS, DU_S, DU_STEP, DU_Z0,
	DU_COUNT
};

static const char *const uniform_names[DU_COUNT] = {
	"u_b", "u_cin", "u_co0", "u_cout", "u_cpi", "u_cpo", "u_d", "u_grid", "u_hw", "u_in", "u_k",
	"u_kk", "u_off", "u_out", "u_pad", "u_planes", "u_rows", "u_s", "u_step", "u_z0",
};

/* A program held by the context (program_hold) with its uniform locations. */
struct deconv_prog {
	GLuint id;
	GLint u[DU_COUNT];
};
struct dclass {
	int b4, lb, lci, lco, grouped, kh, kw, sh, sw, dilated, lhw, alg;
};

struct deconv_ctx {
	struct program_cache *pc;
	const struct egl_info *info;
	struct log_sink log;
	struct spatial_ctx *sp;
	struct gpu_timer *timer, *mtimer;
	GLuint in_buf, out_buf, w_buf, bias_buf, col_buf; /* device storage (gl_buf_grow_device) */
	struct gl_stage stage; /* their host transfers */
	size_t in_bytes, out_bytes, w_bytes, bias_bytes, col_bytes;
	struct deconv_prog patches, col2im, fill; /* overlap-add and subkernel's bias fill */
	struct {
		struct dclass k;
		int method;
	} win[MAX_WINNERS];
	int nwin, win_next;
	struct gles_cancel *cancel; /* deconv_ctx_set_cancel's; NULL: none */
};

const char *deconv_method_name(int method)
{
	return method >= 0 && method < DECONV_METHOD_COUNT ? deconv_method_names[method] : "?";
}

const char *deconv_strerror(int code)
{
	return spatial_strerror(code);
}

int deconv_ctx_create(struct program_cache *pc, const struct egl_info *info,
                      struct spatial_ctx *sp, const struct log_sink *log, struct deconv_ctx **out,
                      char err[DECONV_ERR_LEN])
{
	*out = NULL;
	struct deconv_ctx *d = calloc(1, sizeof *d);
	if (!d)
		return DECONV_E_NOMEM;
	d->pc = pc;
	d->info = info;
	d->stage.mapped = sp ? spatial_ctx_caps(sp)->persistent_map : 0; /* its choice */
	d->sp = sp;
	if (log)
		d->log = *log;
	int rc = DECONV_E_NOMEM;
	if (gpu_timer_create(info, &d->timer) || gpu_timer_create(info, &d->mtimer))
		goto fail;
	const char *names[3] = {"deconv_patches", "deconv_col2im", "deconv_fill"};
	struct deconv_prog *progs[3] = {&d->patches, &d->col2im, &d->fill};
	char perr[PROGRAM_ERR_LEN];
	int key = 0;
	for (int i = 0; i < 3; i++) {
		unsigned p;
		if (program_get(pc, names[i], &key, sizeof key, "", &p, perr)) {
			snprintf(err, DECONV_ERR_LEN, "%.*s", DECONV_ERR_LEN - 1, perr);
			rc = DECONV_E_GPU;
			goto fail;
		}
		program_hold(pc, p); /* kept across calls: dropped by destroy */
		progs[i]->id = p;
		program_uniforms(p, uniform_names, DU_COUNT, progs[i]->u);
	}
	*out = d;
	return 0;
fail:
	deconv_ctx_destroy(d);
	return rc;
}

void deconv_ctx_destroy(struct deconv_ctx *d)
{
	if (!d)
		return;
	struct deconv_prog *progs[3] = {&d->patches, &d->col2im, &d->fill};
	for (int i = 0; i < 3; i++)
		if (progs[i]->id)
			program_drop(d->pc, progs[i]->id);
	GLuint b[5] = {d->in_buf, d->out_buf, d->w_buf, d->bias_buf, d->col_buf};
	for (int i = 0; i < 5; i++)
		if (b[i])
			glDeleteBuffers(1, &b[i]);
	gl_stage_free(&d->stage);
	gpu_timer_destroy(d->timer);
	gpu_timer_destroy(d->mtimer);
	free(d);
}

void deconv_ctx_set_cancel(struct deconv_ctx *d, struct gles_cancel *c)
{
	d->cancel = c;
}

/* A gl_util buffer call's result: 0, or its failure logged and said in err (DECONV_E_TOO_LARGE
 * for GL_OUT_OF_MEMORY, else DECONV_E_GPU). */
static int buf_said(const struct deconv_ctx *d, int rc, const char *gerr,
                    char err[DECONV_ERR_LEN])
{
	if (!rc)
		return 0;
	snprintf(err, DECONV_ERR_LEN, "%s", gerr);
	log_sinkf(&d->log, LOG_ERROR, "deconv: %s", err);
	return rc == GL_BUF_E_OOM ? DECONV_E_TOO_LARGE : DECONV_E_GPU;
}

/* The shaders' buffers: only shaders and GPU copies write them (the host's data comes through
 * the staging buffers), so the driver keeps them in video memory. */
static int grow(struct deconv_ctx *d, GLuint *buf, size_t *have, size_t need,
                char err[DECONV_ERR_LEN])
{
	char gerr[GL_BUF_ERR_LEN];
	return buf_said(d, gl_buf_grow_device(buf, have, need, d->info->buffer_storage, gerr), gerr,
	                err);
}

static int upload(struct deconv_ctx *d, GLuint dst, const void *src, size_t bytes,
                  char err[DECONV_ERR_LEN])
{
	char gerr[GL_BUF_ERR_LEN];
	return buf_said(d, gl_stage_upload(&d->stage, dst, src, bytes, gerr), gerr, err);
}

/* gl_dispatch_z with the context's device and cancellation: 0 or DECONV_E_CANCELLED. */
static int dispatch_z(const struct deconv_ctx *d, const struct deconv_prog *prog, int gx, int gy,
                      long nz)
{
	return gl_dispatch_z(d->info, d->cancel, prog->u[DU_Z0], gx, gy, nz) ? DECONV_E_CANCELLED : 0;
}

/* Bias (or zeros) into the bias buffer. */
static int upload_bias(struct deconv_ctx *d, const struct deconv_problem *pr, const float *bias,
                       char err[DECONV_ERR_LEN])
{
	size_t nb = (size_t)pr->out_c * 4;
	int rc = grow(d, &d->bias_buf, &d->bias_bytes, nb, err);
	if (rc)
		return rc;
	float *b = calloc((size_t)pr->out_c, sizeof *b);
	if (!b)
		return DECONV_E_NOMEM;
	for (int i = 0; bias && i < pr->out_c; i++)
		b[i] = bias[i];
	rc = upload(d, d->bias_buf, b, nb, err);
	free(b);
	return rc;
}

/* The conv weight (out_c, cpi, kh, kw) of taps j = j0y + (kh - 1 - m) * sy of the transposed
 * weight (in_c, cpo, k_h, k_w) (likewise x): the rotated kernel, or one phase's sub-kernel. */
static float *conv_weight(const struct deconv_problem *pr, const float *w, int kh, int kw, int j0y,
                          int sy, int j0x, int sx)
{
	size_t n = (size_t)pr->out_c * pr->cpi * kh * kw;
	float *wc = malloc((n ? n : 1) * sizeof *wc);
	if (!wc)
		return NULL;
	size_t i = 0;
	for (int co = 0; co < pr->out_c; co++) {
		int g = co / pr->cpo, col = co - g * pr->cpo;
		for (int cl = 0; cl < pr->cpi; cl++) {
			const float *src = w + ((size_t)(g * pr->cpi + cl) * pr->cpo + col) * pr->y.k * pr->x.k;
			for (int m = 0; m < kh; m++)
				for (int l = 0; l < kw; l++)
					wc[i++] = src[(size_t)(j0y + (kh - 1 - m) * sy) * pr->x.k + j0x + (kw - 1 - l) * sx];
		}
	}
	return wc;
}

static int run_zero_insert(struct deconv_ctx *d, const struct deconv_problem *pr, const float *w,
                           const float *bias, int alg, int *used_alg, char err[DECONV_ERR_LEN])
{
	struct spatial_geom g = {
		.batch = pr->batch, .in_c = pr->in_c, .in_h = pr->y.in, .in_w = pr->x.in,
		.out_c = pr->out_c, .groups = pr->groups, .k_h = pr->y.k, .k_w = pr->x.k,
		.stride_h = 1, .stride_w = 1, .dil_h = pr->y.d, .dil_w = pr->x.d,
		.up_h = pr->y.s, .up_w = pr->x.s,
		.org_y = pr->y.p - (pr->y.k - 1) * pr->y.d, .org_x = pr->x.p - (pr->x.k - 1) * pr->x.d,
		.out_h = pr->y.out, .out_w = pr->x.out, .dst_h = pr->y.out, .dst_w = pr->x.out,
		.dst_sy = 1, .dst_sx = 1,
	};
	float *wc = conv_weight(pr, w, pr->y.k, pr->x.k, 0, 1, 0, 1);
	if (!wc)
		return DECONV_E_NOMEM;
	struct spatial_stats st;
	int rc = spatial_run(d->sp, &g, alg, SPATIAL_FP32, wc, bias, d->in_buf, d->out_buf, &st, err);
	*used_alg = st.algorithm;
	free(wc);
	return rc;
}

static int run_subkernel(struct deconv_ctx *d, const struct deconv_problem *pr, const float *w,
                         const float *bias, int alg, int *used_alg, char err[DECONV_ERR_LEN])
{
	int rc = 0, filled = 0;
	for (int ry = 0; ry < pr->y.s && !rc; ry++)
		for (int rx = 0; rx < pr->x.s && !rc; rx++) {
			struct deconv_phase py, px;
			deconv_plan_phase(&pr->y, ry, &py);
			deconv_plan_phase(&pr->x, rx, &px);
			if (!py.Q || !px.Q)
				continue; /* no output lands in this phase */
			int oy0 = py.qmin * pr->y.s + ry - pr->y.p, ox0 = px.qmin * pr->x.s + rx - pr->x.p;
			if (!py.L || !px.L) { /* no tap: the bias alone */
				if (!filled && (rc = upload_bias(d, pr, bias, err)))
					return rc;
				filled = 1;
				glUseProgram(d->fill.id);
				glUniform2i(d->fill.u[DU_GRID], px.Q, py.Q);
				glUniform2i(d->fill.u[DU_OUT], pr->x.out, pr->y.out);
				glUniform2i(d->fill.u[DU_STEP], pr->x.s, pr->y.s);
				glUniform2i(d->fill.u[DU_OFF], ox0, oy0);
				glUniform1i(d->fill.u[DU_COUT], pr->out_c);
				glUniform1i(d->fill.u[DU_PLANES], pr->batch * pr->out_c);
				glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 3, d->bias_buf);
				glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 4, d->out_buf);
				rc = dispatch_z(d, &d->fill, (px.Q + 7) / 8, (py.Q + 7) / 8,
				                (long)pr->batch * pr->out_c);
				glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
				continue;
			}
			struct spatial_geom g = {
				.batch = pr->batch, .in_c = pr->in_c, .in_h = pr->y.in, .in_w = pr->x.in,
				.out_c = pr->out_c, .groups = pr->groups, .k_h = py.L, .k_w = px.L,
				.stride_h = 1, .stride_w = 1, .dil_h = py.D, .dil_w = px.D, .up_h = 1, .up_w = 1,
				.org_y = py.qmin - py.e - (py.L - 1) * py.D,
				.org_x = px.qmin - px.e - (px.L - 1) * px.D,
				.out_h = py.Q, .out_w = px.Q, .dst_h = pr->y.out, .dst_w = pr->x.out,
				.dst_sy = pr->y.s, .dst_sx = pr->x.s, .dst_oy = oy0, .dst_ox = ox0,
			};
			float *wc = conv_weight(pr, w, py.L, px.L, py.j0, py.sp, px.j0, px.sp);
			if (!wc)
				return DECONV_E_NOMEM;
			struct spatial_stats st;
			rc = spatial_run(d->sp, &g, alg, SPATIAL_FP32, wc, bias, d->in_buf, d->out_buf, &st,
			                 err);
			*used_alg = st.algorithm;
			free(wc);
		}
	return rc;
}

static int run_overlap_add(struct deconv_ctx *d, const struct deconv_problem *pr, const float *w,
                           const float *bias, char err[DECONV_ERR_LEN])
{
	int kk = pr->y.k * pr->x.k, hw = pr->y.in * pr->x.in;
	size_t wn = (size_t)pr->in_c * pr->cpo * kk;
	long long limit = d->info->max_ssbo_size < COL_BYTES_MAX ? d->info->max_ssbo_size : COL_BYTES_MAX;
	long long per_plane = (long long)kk * hw * 4;
	if (per_plane > limit || (long long)wn * 4 > d->info->max_ssbo_size) {
		snprintf(err, DECONV_ERR_LEN, "overlap-add: one output plane's patches (%lld bytes) "
		         "exceed the storage-block limit (%lld bytes)", per_plane, limit);
		return DECONV_E_TOO_LARGE;
	}
	int chunk = (int)(limit / per_plane);
	chunk = chunk > pr->out_c ? pr->out_c : chunk;
	int rc;
	if ((rc = grow(d, &d->w_buf, &d->w_bytes, wn * 4, err)) ||
	    (rc = grow(d, &d->col_buf, &d->col_bytes, (size_t)chunk * per_plane, err)) ||
	    (rc = upload_bias(d, pr, bias, err)) || (rc = upload(d, d->w_buf, w, wn * 4, err)))
		return rc;
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, d->in_buf);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, d->w_buf);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, d->col_buf);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 3, d->bias_buf);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 4, d->out_buf);
	glUseProgram(d->patches.id);
	glUniform1i(d->patches.u[DU_HW], hw);
	glUniform1i(d->patches.u[DU_CIN], pr->in_c);
	glUniform1i(d->patches.u[DU_CPI], pr->cpi);
	glUniform1i(d->patches.u[DU_CPO], pr->cpo);
	glUniform1i(d->patches.u[DU_KK], kk);
	glUseProgram(d->col2im.id);
	glUniform2i(d->col2im.u[DU_IN], pr->x.in, pr->y.in);
	glUniform2i(d->col2im.u[DU_OUT], pr->x.out, pr->y.out);
	glUniform2i(d->col2im.u[DU_S], pr->x.s, pr->y.s);
	glUniform2i(d->col2im.u[DU_PAD], pr->x.p, pr->y.p);
	glUniform2i(d->col2im.u[DU_D], pr->x.d, pr->y.d);
	glUniform2i(d->col2im.u[DU_K], pr->x.k, pr->y.k);
	glUniform1i(d->col2im.u[DU_COUT], pr->out_c);
	rc = 0;
	for (int b = 0; b < pr->batch && !rc; b++)
		for (int co0 = 0; co0 < pr->out_c && !rc; co0 += chunk) {
			int cc = pr->out_c - co0 < chunk ? pr->out_c - co0 : chunk;
			glUseProgram(d->patches.id);
			glUniform1i(d->patches.u[DU_B], b);
			glUniform1i(d->patches.u[DU_CO0], co0);
			glUniform1i(d->patches.u[DU_ROWS], cc * kk);
			long rows = (long)cc * kk, maxy = d->info->max_group_count[1];
			GLint lz = d->patches.u[DU_Z0];
			for (long r0 = 0; r0 < rows && !rc; r0 += maxy) {
				if (gles_cancelled(d->cancel)) {
					rc = DECONV_E_CANCELLED;
					break;
				}
				glUniform1i(lz, (int)r0);
				glDispatchCompute((GLuint)(hw + 63) / 64, (GLuint)(rows - r0 < maxy ? rows - r0 : maxy), 1);
			}
			glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
			if (rc)
				break;
			glUseProgram(d->col2im.id);
			glUniform1i(d->col2im.u[DU_B], b);
			glUniform1i(d->col2im.u[DU_CO0], co0);
			rc = dispatch_z(d, &d->col2im, (pr->x.out + 7) / 8, (pr->y.out + 7) / 8, cc);
			glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
		}
	if (rc)
		snprintf(err, DECONV_ERR_LEN, "overlap-add: cancelled between dispatches");
	return rc;
}

static int run_method(struct deconv_ctx *d, const struct deconv_problem *pr, int method, int alg,
                      const float *w, const float *bias, int *used_alg, char err[DECONV_ERR_LEN])
{
	int rc;
	*used_alg = 0;
	err[0] = 0;
	switch (method) {
	case DECONV_ZERO_INSERT: rc = run_zero_insert(d, pr, w, bias, alg, used_alg, err); break;
	case DECONV_OVERLAP_ADD: rc = run_overlap_add(d, pr, w, bias, err); break;
	default: rc = run_subkernel(d, pr, w, bias, alg, used_alg, err); break;
	}
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
	if (rc == DECONV_E_CANCELLED && !err[0])
		snprintf(err, DECONV_ERR_LEN, "%s: cancelled between dispatches",
		         deconv_method_name(method));
	if (!rc && gl_check(&d->log, "transposed convolution")) {
		snprintf(err, DECONV_ERR_LEN, "%s: a GL error", deconv_method_name(method));
		rc = DECONV_E_GPU;
	}
	return rc;
}

static int log2_ceil(long long v)
{
	int l = 0;
	while ((1ll << l) < v && l < 62)
		l++;
	return l;
}

/* auto: a remembered method for the shape class, or each measured (a run, then a timed run). */
static int resolve(struct deconv_ctx *d, const struct deconv_problem *pr, int alg, const float *w,
                   const float *bias, int *method, int *measured, char err[DECONV_ERR_LEN])
{
	struct dclass k;
	memset(&k, 0, sizeof k);
	k.b4 = pr->batch % 4 == 0, k.lb = log2_ceil(pr->batch), k.lci = log2_ceil(pr->cpi);
	k.lco = log2_ceil(pr->out_c), k.grouped = pr->groups > 1, k.kh = pr->y.k, k.kw = pr->x.k;
	k.sh = pr->y.s, k.sw = pr->x.s, k.dilated = pr->y.d > 1 || pr->x.d > 1;
	k.lhw = log2_ceil((long long)pr->y.out * pr->x.out), k.alg = alg;
	for (int i = 0; i < d->nwin; i++)
		if (!memcmp(&d->win[i].k, &k, sizeof k)) {
			*method = d->win[i].method;
			return 0;
		}
	double best_ms = INFINITY;
	int best = 0, first_rc = 0, used;
	for (int m = DECONV_ZERO_INSERT; m < DECONV_METHOD_COUNT; m++) {
		char merr[DECONV_ERR_LEN];
		int rc = run_method(d, pr, m, alg, w, bias, &used, merr);
		if (!rc) {
			double ms[GPU_STAGE_COUNT];
			gpu_timer_start(d->mtimer);
			rc = run_method(d, pr, m, alg, w, bias, &used, merr);
			gpu_timer_mark(d->mtimer, GPU_STAGE_DECONV);
			double t = gpu_timer_read(d->mtimer, ms) ? INFINITY : ms[GPU_STAGE_DECONV];
			log_sinkf(&d->log, LOG_DEBUG, "deconv auto: %s %.3f ms", deconv_method_name(m), t);
			if (!rc && (!best || t < best_ms))
				best_ms = t, best = m;
		}
		if (rc && rc != DECONV_E_TOO_LARGE && rc != DECONV_E_UNSUPPORTED)
			return snprintf(err, DECONV_ERR_LEN, "%s", merr), rc;
		if (rc && !first_rc) {
			first_rc = rc;
			snprintf(err, DECONV_ERR_LEN, "%s", merr);
		}
	}
	if (!best)
		return first_rc;
	*measured = 1;
	int slot = d->nwin < MAX_WINNERS ? d->nwin++ : d->win_next++ % MAX_WINNERS;
	d->win[slot].k = k;
	d->win[slot].method = best;
	*method = best;
	return 0;
}

/* A caller's GL buffer copied on the GPU into (into 1) or out of one of the engine's. */
static int copy_gl(GLuint from, GLuint to, size_t bytes, int into, char err[DECONV_ERR_LEN])
{
	int rc = gl_buf_copy_said(from, to, bytes, into, err, DECONV_ERR_LEN);
	return !rc ? 0 : rc == -1 ? DECONV_E_ARG : DECONV_E_GPU;
}

/* deconv_run with host arrays (in, out) or GL buffers (in_gl, out_gl where in, out NULL). */
static int run_io(struct deconv_ctx *d, const struct deconv_conv *c, const float *in,
                  GLuint in_gl, const float *weight, const float *bias, float *out, GLuint out_gl,
                  struct deconv_stats *st, char err[DECONV_ERR_LEN])
{
	struct deconv_stats local;
	if (!st)
		st = &local;
	memset(st, 0, sizeof *st);
	err[0] = 0;
	double t0 = clock_ms();
	struct deconv_problem pr;
	/* the problem needs to know the arrays are there; GL buffers are checked at their copy */
	int rc = deconv_plan_problem(c, in ? in : in_gl ? weight : NULL, weight,
	                             out ? out : out_gl ? weight : NULL, &pr, err);
	if (rc)
		return rc;
	size_t in_b, w_b, out_b; /* checked: a 2^64-byte output must not wrap to 0 bytes */
	if ((rc = deconv_plan_bytes(&pr, &in_b, &w_b, &out_b, err)))
		return rc;
	if ((long long)in_b > d->info->max_ssbo_size || (long long)out_b > d->info->max_ssbo_size) {
		snprintf(err, DECONV_ERR_LEN, "a tensor of %zu bytes exceeds the storage-block limit "
		         "(%lld bytes)", in_b > out_b ? in_b : out_b, d->info->max_ssbo_size);
		return DECONV_E_TOO_LARGE;
	}
	if ((rc = grow(d, &d->in_buf, &d->in_bytes, in_b, err)) ||
	    (rc = grow(d, &d->out_buf, &d->out_bytes, out_b, err)))
		return rc;
	if ((rc = in ? upload(d, d->in_buf, in, in_b, err) : copy_gl(in_gl, d->in_buf, in_b, 1, err)))
		return rc;
	st->upload_ms = clock_ms() - t0;
	int method = c->method, alg = c->conv_algorithm;
	if (method == DECONV_AUTO &&
	    (rc = resolve(d, &pr, alg, weight, bias, &method, &st->measured, err)))
		return rc;
	st->method = method;
	struct gpu_timer *tm = c->time_stages ? d->timer : NULL;
	if (tm)
		gpu_timer_start(tm);
	rc = run_method(d, &pr, method, alg, weight, bias, &st->conv_algorithm, err);
	if (tm)
		gpu_timer_mark(tm, GPU_STAGE_DECONV);
	double t1 = clock_ms();
	if (!rc && out) {
		char gerr[GL_BUF_ERR_LEN];
		rc = buf_said(d, gl_stage_download(&d->stage, d->out_buf, out, out_b, gerr), gerr, err);
	} else if (!rc) {
		rc = copy_gl(d->out_buf, out_gl, out_b, 0, err);
	}
	st->download_ms = clock_ms() - t1;
	if (tm) {
		gpu_timer_mark(tm, GPU_STAGE_DOWNLOAD);
		if (!gpu_timer_read(tm, st->stage_ms)) {
			st->timed = gpu_timer_kind(tm);
			st->gpu_ms = st->stage_ms[GPU_STAGE_DECONV];
		}
	}
	st->wall_ms = clock_ms() - t0;
	return rc;
}

int deconv_run(struct deconv_ctx *d, const struct deconv_conv *c, const float *in,
               const float *weight, const float *bias, float *out, struct deconv_stats *st,
               char err[DECONV_ERR_LEN])
{
	return run_io(d, c, in, 0, weight, bias, out, 0, st, err);
}

int deconv_run_gl(struct deconv_ctx *d, const struct deconv_conv *c, unsigned in_buf,
                  const float *weight, const float *bias, unsigned out_buf,
                  struct deconv_stats *st, char err[DECONV_ERR_LEN])
{
	if (!in_buf || !out_buf) {
		if (st)
			memset(st, 0, sizeof *st);
		snprintf(err, DECONV_ERR_LEN, "no input or output buffer");
		return DECONV_E_ARG;
	}
	return run_io(d, c, NULL, in_buf, weight, bias, NULL, out_buf, st, err);
}
