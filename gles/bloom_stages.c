/* The bloom's GPU stages, from the prefilter to the composite, on a plan (bloom_plan.c), with
 * their helpers: the transpose, sizes and dispatches, the io rows with the prefilter and
 * composite in them; see bloom_internal.h. */
#include "gles/bloom_internal.h"

#include "gles/gl_util.h"

#include <stdio.h>

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

/* The elements between the padded buffer's rows, or between its tiles (ph rows each). */
static int spectrum_stride(const struct plan *q)
{
	return q->tile_log ? q->ph << q->tile_log : q->pitch;
}

/* Fused columns: each group runs two columns of the row spectra forward, multiplies, and back,
 * only the image's rows loaded (the rest is zero) and stored (only they are read after). In
 * place, or with the columns made rows of q->q first and the image's rows brought back after. */
static int fused_columns(struct bloom_ctx *b, struct plan *q, const struct kentry *ke, int order,
                         int h, struct gpu_timer *tm, char err[BLOOM_ERR_LEN])
{
	struct fft_conv *c = ke->gray ? q->conv2 : order ? q->conv4p : q->conv4;
	if (q->fused == BLOOM_FUSED_IN_PLACE) {
		int rc = fft_conv_execute(c, q->padded, ke->spectrum, 1, h, spectrum_stride(q))
		         ? BLOOM_E_GPU : 0;
		if (rc)
			snprintf(err, BLOOM_ERR_LEN, "the fused column pass failed");
		mark(tm, GPU_STAGE_FUSED_COLS);
		return rc;
	}
	int rc = bloom_transpose(b, q->padded, q->pw, h, q->q, q->pw, q->ph, 4, q->half, err);
	mark(tm, GPU_STAGE_TRANSPOSE);
	if (!rc && fft_conv_execute(c, q->q, ke->spectrum, 0, h, 0)) {
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

/* The composite's uniforms and buffers (the flags zeroed) on program comp. */
static void composite_setup(struct bloom_ctx *b, struct plan *q, const struct bloom_prog *comp,
                            const struct bloom_params *p, int w, int h)
{
	GLuint zero[4] = {0, 0, 0, 0};
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, b->xfer.flags);
	glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, sizeof zero, zero);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_FLAGS, b->xfer.flags);
	bloom_set_sizes(comp, w, h, q->pw, q->ph);
	glUniform1f(comp->u[U_INTENSITY], (float)p->intensity);
	glUniform1f(comp->u[U_MIX], (float)p->mix);
	glUniform1i(comp->u[U_COMPOSITE], p->composite);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_IMAGE, q->image);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_OUT, q->out);
}

/* The result composited into q->out (a bloom: with the image; convolve: as it is), counting
 * the samples that came out non-finite in b->xfer.flags. */
static void composite(struct bloom_ctx *b, struct plan *q, const struct bloom_prog *comp,
                      const struct bloom_params *p, int w, int h)
{
	composite_setup(b, q, comp, p, w, h);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_PADDED, q->padded);
	bloom_dispatch2d(w, h);
}

int bloom_rows_in(struct plan *q, struct fft_io *f, const struct bloom_prog *pr,
                  const struct bloom_params *p, int bloom, int w, int h)
{
	bloom_set_sizes(pr, w, h, q->pw, q->ph);
	glUniform1f(pr->u[U_THRESHOLD], (float)p->threshold);
	glUniform1f(pr->u[U_KNEE], (float)p->knee);
	glUniform1f(pr->u[U_CLAMP], (float)p->clamp_max);
	glUniform1i(pr->u[U_BLOOM], bloom);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_IMAGE, q->image);
	return fft_io_execute(f, q->padded, 0, (size_t)spectrum_stride(q), h);
}

int bloom_rows_out(struct bloom_ctx *b, struct plan *q, struct fft_io *f,
                   const struct bloom_prog *pr, const struct bloom_params *p, int bloom, int w,
                   int h)
{
	composite_setup(b, q, pr, p, w, h);
	glUniform1i(pr->u[U_BLOOM], bloom);
	return fft_io_execute(f, q->padded, 0, (size_t)spectrum_stride(q), h);
}

int bloom_stages(struct bloom_ctx *b, struct plan *q, const struct kentry *ke, int op,
                 const struct bloom_params *p, int w, int h, struct gpu_timer *tm,
                 struct bloom_stats *st, char err[BLOOM_ERR_LEN])
{
	const struct bloom_prog *pack = NULL, *mult = NULL, *comp = NULL;
	int bloom = op == BLOOM_OP_BLOOM, rc;
	st->fused = q->fused;
	st->ends_in_rows = q->rows_in[0] && q->rows_out[0];
	int order = st->ends_in_rows && bloom_plan_pairs(q) && !ke->gray; /* the spectra's order */
	st->column_pairs = order;
	st->column_multiply = !q->fused ? BLOOM_MULTIPLY_PASS
	                      : b->opts.conv_mult_shared || b->opts.conv_probe ? BLOOM_MULTIPLY_SHARED
	                      : ke->gray || !b->info->subgroup_pairs ? BLOOM_MULTIPLY_REGISTERS
	                                                             : BLOOM_MULTIPLY_SHUFFLES;
	st->row_pitch = q->pitch;
	st->tile_columns = q->tile_log ? 1 << q->tile_log : 0;
	st->row_threads = fft_axis_plan(q->rows4)->shared ? fft_axis_plan(q->rows4)->threads : 0;
	q->colour_seen |= !ke->gray;
	/* the programs of the passes that run */
	if ((!st->ends_in_rows && ((rc = bloom_prog(b, SH_PACK, bloom, q->half, &pack, err)) ||
	                           (rc = bloom_prog(b, SH_COMPOSITE, bloom, q->half, &comp, err)))) ||
	    (!st->fused && (rc = bloom_prog(b, SH_MULTIPLY, ke->gray, q->half, &mult, err))))
		return rc;
	if (!st->ends_in_rows) {
		prefilter(q, pack, p, w, h);
		mark(tm, GPU_STAGE_PREFILTER);
	}
	/* forward: rows of the image only (the rows below it are all padding), then the columns */
	if (st->ends_in_rows ? bloom_rows_in(q, q->rows_in[order], &q->io_in[order], p, bloom, w, h)
	                     : fft_axis_execute(q->rows4, q->padded, 0, (size_t)q->pw, 1, h, 0)) {
		snprintf(err, BLOOM_ERR_LEN, "row FFT failed");
		return BLOOM_E_GPU;
	}
	mark(tm, GPU_STAGE_ROWS);
	rc = st->fused ? fused_columns(b, q, ke, order, h, tm, err)
	               : separate_columns(q, ke, mult, w, h, tm, err);
	if (rc)
		return rc;
	/* inverse: the rows the output needs */
	if (st->ends_in_rows ? bloom_rows_out(b, q, q->rows_out[order], &q->io_out[order], p,
	                                      bloom, w, h)
	                     : fft_axis_execute(q->rows4, q->padded, 0, (size_t)q->pw, 1, h, 1)) {
		snprintf(err, BLOOM_ERR_LEN, "inverse row FFT failed");
		return BLOOM_E_GPU;
	}
	mark(tm, GPU_STAGE_IROWS);
	if (!st->ends_in_rows) {
		composite(b, q, comp, p, w, h);
		mark(tm, GPU_STAGE_COMPOSITE);
	}
	return 0;
}
