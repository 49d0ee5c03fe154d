/* The resampler's GL side: the taps of both axes uploaded, a horizontal pass over every source
 * row into a premultiplied intermediate, a vertical pass into the canvas, read back; see
 * resample.h. */
#include "gles/resample.h"

#include <GLES3/gl31.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "gles/gl_util.h"
#include "gles/program.h"

enum {
	RU_SRC, RU_REGION, RU_CANVAS, RU_OFF, RU_AXIS, RU_SPAN0, RU_W0, RU_TAPS, RU_CHANNELS,
	RU_ALPHA, RU_PREMUL, RU_ROW0, RU_COUNT
};
static const char *const uniform_names[RU_COUNT] = {
	"u_src", "u_region", "u_canvas", "u_off", "u_axis", "u_span0", "u_w0", "u_taps",
	"u_channels", "u_alpha", "u_premul", "u_row0",
};

/* Buffers: the source, the intermediate, the canvas, the spans, the weights. */
enum { RB_SRC, RB_MID, RB_OUT, RB_SPAN, RB_W, RB_COUNT };

struct resample_ctx {
	struct program_cache *pc;
	unsigned prog;
	int u[RU_COUNT];
	GLuint buf[RB_COUNT];
	size_t have[RB_COUNT];
	long long max_ssbo;
	struct log_sink log;
};

int resample_ctx_create(struct program_cache *pc, long long max_ssbo, const struct log_sink *log,
                        struct resample_ctx **out, char err[RESAMPLE_ERR_LEN])
{
	*out = NULL;
	struct resample_ctx *r = calloc(1, sizeof *r);
	if (!r)
		return RESAMPLE_E_NOMEM;
	r->pc = pc;
	r->max_ssbo = max_ssbo;
	if (log)
		r->log = *log;
	int key = 0;
	char perr[PROGRAM_ERR_LEN];
	if (program_get(pc, "resample", &key, sizeof key, "", &r->prog, perr)) {
		snprintf(err, RESAMPLE_ERR_LEN, "%.*s", RESAMPLE_ERR_LEN - 1, perr);
		free(r);
		return RESAMPLE_E_GPU;
	}
	program_hold(pc, r->prog); /* kept across calls: dropped by destroy */
	program_uniforms(r->prog, uniform_names, RU_COUNT, r->u);
	*out = r;
	return 0;
}

void resample_ctx_destroy(struct resample_ctx *r)
{
	if (!r)
		return;
	if (r->prog)
		program_drop(r->pc, r->prog);
	for (int i = 0; i < RB_COUNT; i++)
		if (r->buf[i])
			glDeleteBuffers(1, &r->buf[i]);
	free(r);
}

/* Buffer i holding at least need bytes (within the storage-buffer limit). */
static int grow(struct resample_ctx *r, int i, size_t need, const char *what,
                char err[RESAMPLE_ERR_LEN])
{
	if (r->max_ssbo > 0 && need > (unsigned long long)r->max_ssbo) {
		snprintf(err, RESAMPLE_ERR_LEN, "resize: the %s takes %zu bytes, past the GPU's "
		         "storage-buffer limit of %lld", what, need, r->max_ssbo);
		return RESAMPLE_E_GPU_LIMIT;
	}
	char gerr[GL_BUF_ERR_LEN];
	int rc = gl_buf_grow(&r->buf[i], &r->have[i], need, GL_DYNAMIC_COPY, gerr);
	if (!rc)
		return 0;
	snprintf(err, RESAMPLE_ERR_LEN, "resize: the %s: %s", what, gerr);
	log_sinkf(&r->log, LOG_ERROR, "%s", err);
	return rc == GL_BUF_E_OOM ? RESAMPLE_E_GPU_MEMORY : RESAMPLE_E_GPU;
}

/* Bytes of a w x h image of c channels, checked. */
static int image_bytes(int w, int h, int c, size_t *out)
{
	size_t f[3] = {(size_t)w, (size_t)h, (size_t)c};
	return checked_product_size(f, 3, sizeof(float), out);
}

/* Both axes' taps into the span and weight buffers. */
static int upload_taps(struct resample_ctx *r, const struct resample_axis *ax,
                       const struct resample_axis *ay, char err[RESAMPLE_ERR_LEN])
{
	size_t spans = ((size_t)ax->n_out + ay->n_out) * 2 * sizeof(int);
	size_t nwx = (size_t)ax->n_out * ax->max_taps, nwy = (size_t)ay->n_out * ay->max_taps;
	int rc = grow(r, RB_SPAN, spans, "filter spans", err);
	if (!rc)
		rc = grow(r, RB_W, (nwx + nwy) * sizeof(float), "filter weights", err);
	if (rc)
		return rc;
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, r->buf[RB_SPAN]);
	glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)((size_t)ax->n_out * 2 * sizeof(int)),
	                ax->span);
	glBufferSubData(GL_SHADER_STORAGE_BUFFER, (GLintptr)((size_t)ax->n_out * 2 * sizeof(int)),
	                (GLsizeiptr)((size_t)ay->n_out * 2 * sizeof(int)), ay->span);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, r->buf[RB_W]);
	glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)(nwx * sizeof(float)), ax->w);
	glBufferSubData(GL_SHADER_STORAGE_BUFFER, (GLintptr)(nwx * sizeof(float)),
	                (GLsizeiptr)(nwy * sizeof(float)), ay->w);
	return 0;
}

/* One pass: src (sw x sh) filtered along axis into the region (rw x rh at off) of the canvas
 * (cw x ch, written from canvas row row0 on) in dst. */
static void pass(struct resample_ctx *r, GLuint src, GLuint dst, int sw, int sh, int rw, int rh,
                 int cw, int ch, int ox, int oy, int row0, int axis, int span0, int w0, int taps,
                 int channels, int premul)
{
	glUniform1i(r->u[RU_ROW0], row0);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, src);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, dst);
	glUniform2i(r->u[RU_SRC], sw, sh);
	glUniform2i(r->u[RU_REGION], rw, rh);
	glUniform2i(r->u[RU_CANVAS], cw, ch);
	glUniform2i(r->u[RU_OFF], ox, oy);
	glUniform1i(r->u[RU_AXIS], axis);
	glUniform1i(r->u[RU_SPAN0], span0);
	glUniform1i(r->u[RU_W0], w0);
	glUniform1i(r->u[RU_TAPS], taps);
	glUniform1i(r->u[RU_CHANNELS], channels);
	glUniform1i(r->u[RU_ALPHA], channels == 2 || channels == 4 ? channels - 1 : -1);
	glUniform1i(r->u[RU_PREMUL], premul);
	glDispatchCompute((GLuint)(cw + 7) / 8, (GLuint)(ch + 7) / 8, 1);
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
}

int resample_run(struct resample_ctx *r, const struct image *in, const struct resample_geom *g,
                 struct image *out, char err[RESAMPLE_ERR_LEN])
{
	memset(out, 0, sizeof *out);
	int c = in->channels;
	size_t in_bytes, mid_bytes, out_bytes;
	struct resample_axis ax, ay;
	int rc = resample_prepare(in->width, in->height, c, g, &mid_bytes, &out_bytes, &ax, &ay, err);
	if (rc)
		return rc;
	if (image_bytes(in->width, in->height, c, &in_bytes)) {
		snprintf(err, RESAMPLE_ERR_LEN, "resize: sizes overflow");
		rc = RESAMPLE_E_TOO_LARGE;
		goto done;
	}
	/* the input in bands of rows that fit the storage-buffer limit */
	size_t row_bytes = in_bytes / (size_t)in->height;
	int band = in->height;
	if (r->max_ssbo > 0 && in_bytes > (unsigned long long)r->max_ssbo) {
		unsigned long long rows = (unsigned long long)r->max_ssbo / row_bytes;
		if (rows < 1) {
			snprintf(err, RESAMPLE_ERR_LEN, "resize: one row of the input takes %zu bytes, past "
			         "the GPU's storage-buffer limit of %lld", row_bytes, r->max_ssbo);
			rc = RESAMPLE_E_GPU_LIMIT;
			goto done;
		}
		band = (int)rows;
	}
	if ((rc = grow(r, RB_SRC, (size_t)band * row_bytes, "input", err)) ||
	    (rc = grow(r, RB_MID, mid_bytes, "intermediate", err)) ||
	    (rc = grow(r, RB_OUT, out_bytes, "output", err)) || (rc = upload_taps(r, &ax, &ay, err)))
		goto done;
	out->pixels = malloc(out_bytes);
	if (!out->pixels) {
		rc = RESAMPLE_E_NOMEM;
		snprintf(err, RESAMPLE_ERR_LEN, "resize: out of memory");
		goto done;
	}
	glUseProgram(r->prog);
	for (int y0 = 0; y0 < in->height; y0 += band) {
		int n = in->height - y0 < band ? in->height - y0 : band;
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, r->buf[RB_SRC]);
		glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)((size_t)n * row_bytes),
		                (const unsigned char *)in->pixels + (size_t)y0 * row_bytes);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, r->buf[RB_SPAN]);
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 3, r->buf[RB_W]);
		pass(r, r->buf[RB_SRC], r->buf[RB_MID], in->width, n, g->dst_w, n, g->dst_w, n, 0, 0,
		     y0, 0, 0, 0, ax.max_taps, c, 1);
	}
	pass(r, r->buf[RB_MID], r->buf[RB_OUT], g->dst_w, in->height, g->dst_w, g->dst_h, g->out_w,
	     g->out_h, g->dst_x, g->dst_y, 0, 1, ax.n_out, ax.n_out * ax.max_taps, ay.max_taps, c, 0);
	unsigned gl_err = 0;
	if (gl_buf_read(r->buf[RB_OUT], out->pixels, out_bytes, &gl_err)) {
		snprintf(err, RESAMPLE_ERR_LEN, "resize: reading the result back: %s",
		         gl_error_name(gl_err));
		log_sinkf(&r->log, LOG_ERROR, "%s", err);
		free(out->pixels);
		out->pixels = NULL;
		rc = RESAMPLE_E_GPU;
		goto done;
	}
	out->width = g->out_w, out->height = g->out_h, out->channels = c;
done:
	resample_axis_free(&ax);
	resample_axis_free(&ay);
	return rc;
}
