/* The bloom's transfers: a frame into GPU memory (float RGBA, or JPEG planes converted on the
 * GPU) and the result back (float, or planes for a JPEG encoder made on the GPU), through
 * buffers mapped once where GL_EXT_buffer_storage allows, upload buffers lent to decoders
 * (bloom_upload.c: the planes decoded where the GPU reads them) and read-back buffers lent to
 * the caller (the planes, coefficients or scan themselves made by jpeg_gpu.c); see
 * bloom_internal.h. */
#include "gles/bloom_internal.h"
#include "gles/jpeg_gpu.h"
#include "gles/jpeg_huffdec.h"

#include "gles/fault.h"
#include "core/parallel.h"

#include <EGL/egl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Static_assert(IMAGE_LOST_RANGE == 2 && IMAGE_LOST_NEGATIVE == 8,
               "yuv_sample.comp's LOST_* constants");
_Static_assert(IMAGE_CLIP_TOL == 1.0f / 1024, "yuv_sample.comp's CLIP_TOL");

void bloom_transfer_init(struct bloom_ctx *b)
{
	b->xfer.upload_dma = b->opts.upload_copy > 0 || (!b->opts.upload_copy && !b->info->software);
	b->xfer.persistent = b->info->buffer_storage && !b->opts.no_persistent_map &&
	                gl_buf_storage_available();
	for (int i = 0; i < BLOOM_LEASES; i++)
		atomic_init(&b->lent.results[i].out, 0);
	bloom_uploads_init(b);
}

void bloom_transfer_free(struct bloom_ctx *b)
{
	int wait_ms = b->opts.destroy_wait_ms > 0 ? b->opts.destroy_wait_ms : BLOOM_DESTROY_WAIT_MS;
	jpeg_gpu_destroy(b->jpeg);
	b->jpeg = NULL;
	jpeg_huffdec_destroy(b->huffdec);
	b->huffdec = NULL;
	GLuint bufs[] = {b->xfer.ystage, b->xfer.yin_dev};
	glDeleteBuffers(2, bufs); /* 0 names are ignored */
	for (int i = 0; i < BLOOM_UPLOADS; i++) {
		gl_fence_free(b->xfer.yin[i].fence);
		if (b->xfer.yin[i].buf)
			glDeleteBuffers(1, &b->xfer.yin[i].buf);
	}
	bloom_staging_free(b);
	/* lent result buffers: a codec thread may still be reading one; wait for them to come back
	 * (wait_ms for all of them), and leave one that does not mapped rather than pull the memory
	 * from under its reader */
	int waited = 0;
	for (int i = 0; i < BLOOM_LEASES; i++) {
		struct bloom_lease *l = &b->lent.results[i];
		for (; waited < wait_ms && atomic_load(&l->out); waited++)
			nanosleep(&(struct timespec){0, 1000000}, NULL);
		if (atomic_load(&l->out))
			log_sinkf(&b->log, LOG_WARN, "bloom: a lent result buffer was not returned "
			          "within %d ms; left mapped", wait_ms);
		else if (l->buf)
			glDeleteBuffers(1, &l->buf);
	}
	bloom_uploads_free(b, wait_ms, waited);
	free(b->xfer.host);
}

void bloom_staging_free(struct bloom_ctx *b)
{
	gl_fence_free(b->xfer.fin.fence); /* a copy in flight still completes: GL defers deletion */
	if (b->xfer.fin.buf)
		glDeleteBuffers(1, &b->xfer.fin.buf);
	memset(&b->xfer.fin, 0, sizeof b->xfer.fin);
}

int bloom_grow_mapped(struct bloom_ctx *b, GLuint *buf, size_t *have, unsigned char **map,
                      size_t bytes, GLbitfield access)
{
	if (bytes <= *have && *buf)
		return 0;
	double t0 = clock_ms();
	if (gl_buf_grow_mapped(buf, have, map, bytes, access))
		return BLOOM_E_NOMEM;
	log_sinkf(&b->log, LOG_DEBUG, "bloom: a mapped %s buffer of %zu bytes made in %.1f ms",
	          access & GL_MAP_READ_BIT ? "read" : "write", bytes, clock_ms() - t0);
	return 0;
}

int bloom_ystage_grow(struct bloom_ctx *b, size_t bytes, char err[BLOOM_ERR_LEN])
{
	if (b->xfer.persistent ? bloom_grow_mapped(b, &b->xfer.ystage, &b->xfer.ystage_bytes,
	                                           &b->xfer.ystage_map, bytes, GL_MAP_READ_BIT)
	                       : gl_buf_grow(&b->xfer.ystage, &b->xfer.ystage_bytes, bytes,
	                                     GL_STREAM_READ, NULL)) {
		snprintf(err, BLOOM_ERR_LEN, "planes: out of GPU memory");
		return BLOOM_E_GPU_MEMORY;
	}
	return 0;
}

/* A result buffer of at least `need` bytes to lend: a free one that is large enough, or a free
 * one grown while all of them stay within BLOOM_LEASE_BYTES; NULL when none (without
 * GL_EXT_buffer_storage, all lent, or out of memory): the caller copies the result instead. */
static struct bloom_lease *lease_take(struct bloom_ctx *b, size_t need)
{
	if (!b->xfer.persistent)
		return NULL;
	struct bloom_lease *fit = NULL, *grow = NULL;
	size_t total = 0;
	for (int i = 0; i < BLOOM_LEASES; i++) {
		struct bloom_lease *l = &b->lent.results[i];
		total += l->bytes;
		if (atomic_load_explicit(&l->out, memory_order_acquire))
			continue;
		if (l->buf && l->bytes >= need) {
			if (!fit || l->bytes < fit->bytes)
				fit = l;
		} else if (!grow || l->bytes < grow->bytes) {
			grow = l;
		}
	}
	if (!fit && grow && total - grow->bytes + need <= BLOOM_LEASE_BYTES &&
	    !bloom_grow_mapped(b, &grow->buf, &grow->bytes, &grow->map, need, GL_MAP_READ_BIT))
		fit = grow;
	if (fit)
		atomic_store_explicit(&fit->out, 1, memory_order_relaxed);
	return fit;
}

void bloom_lease_return(struct bloom_lease *l)
{
	if (l)
		atomic_store_explicit(&l->out, 0, memory_order_release);
}

int bloom_result_prepare(struct bloom_ctx *b, struct bloom_result *res, int w, int h, int ch,
                         struct bloom_lease **lease, char err[BLOOM_ERR_LEN])
{
	*lease = NULL;
	if (!res->want_yuv)
		return 0;
	/* planes in a lent buffer, or in memory of the caller's */
	int rc = res->dct_quality
	         ? yuv_image_layout_dct(&res->yuv, w, h, ch <= 2, res->sub_x, res->sub_y,
	                                res->dct_quality)
	         : yuv_image_layout(&res->yuv, w, h, ch <= 2, res->sub_x, res->sub_y);
	if (!rc && !(*lease = res->lend ? lease_take(b, res->yuv.bytes + 12) : NULL) &&
	    !(res->yuv.data = malloc(res->yuv.bytes)))
		rc = IMAGE_E_NOMEM;
	if (rc) {
		snprintf(err, BLOOM_ERR_LEN, "planes: %s", image_strerror(rc));
		return rc == IMAGE_E_NOMEM ? BLOOM_E_NOMEM : BLOOM_E_TOO_LARGE;
	}
	return 0;
}

/* Waits until the commands of the frame that last read upload buffer u are complete, so that
 * it may be written again. 0, or -1 with err naming what (after 60 s, as a hung GPU). */
static int upload_free(struct upload *u, const char *what, char err[BLOOM_ERR_LEN])
{
	int ok = !u->fence || gl_fence_wait(u->fence);
	u->fence = 0;
	if (!ok)
		snprintf(err, BLOOM_ERR_LEN, "%s: the GPU did not finish an earlier frame within 60 s",
		         what);
	return ok ? 0 : -1;
}

/* Waits for every command issued so far to complete: 1 when they have, 0 after 60 s. */
static int fence_wait(void)
{
	return gl_fence_wait(gl_fence_new());
}

/* Pixels of ch channels to RGBA floats (missing alpha is 1, gray fills R, G and B), and back
 * (RGBA to ch channels: R, R and A, RGB, or RGBA), a piece of pixels [i0, i1) a call (par_for). */
struct widen {
	const float *src;
	float *dst;
	int ch;
};

/* 1 when the pixels have four channels both sides: then [i0, i1) copied as they are. */
static int rgba_as_is(const struct widen *c, size_t i0, size_t i1)
{
	if (c->ch != 4)
		return 0;
	memcpy(c->dst + i0 * 4, c->src + i0 * 4, (i1 - i0) * 16);
	return 1;
}

static void widen_pixels(void *ctx, size_t i0, size_t i1)
{
	const struct widen *c = ctx;
	if (rgba_as_is(c, i0, i1))
		return;
	for (size_t i = i0; i < i1; i++) {
		const float *s = c->src + i * c->ch;
		float *d = c->dst + i * 4;
		switch (c->ch) {
		case 1: d[0] = d[1] = d[2] = s[0], d[3] = 1; break;
		case 2: d[0] = d[1] = d[2] = s[0], d[3] = s[1]; break;
		case 3: d[0] = s[0], d[1] = s[1], d[2] = s[2], d[3] = 1; break;
		default: memcpy(d, s, 16);
		}
	}
}

static void narrow_pixels(void *ctx, size_t i0, size_t i1)
{
	const struct widen *c = ctx;
	if (rgba_as_is(c, i0, i1))
		return;
	for (size_t i = i0; i < i1; i++) {
		const float *s = c->src + i * 4;
		float *o = c->dst + i * c->ch;
		switch (c->ch) {
		case 1: o[0] = s[0]; break;
		case 2: o[0] = s[0], o[1] = s[3]; break;
		case 3: o[0] = s[0], o[1] = s[1], o[2] = s[2]; break;
		default: memcpy(o, s, 16);
		}
	}
}

/* Image (1-4 channels) -> RGBA floats in the context's reused host buffer; a 4-channel image is
 * uploaded as it is. */
static const float *to_rgba(struct bloom_ctx *b, const struct image *in)
{
	size_t n = (size_t)in->width * in->height;
	if (in->channels == 4)
		return in->pixels;
	if (n * 16 > b->xfer.host_bytes) {
		float *nb = realloc(b->xfer.host, n * 16);
		if (!nb)
			return NULL;
		b->xfer.host = nb;
		b->xfer.host_bytes = n * 16;
	}
	struct widen c = {in->pixels, b->xfer.host, in->channels};
	par_for(n, BLOOM_PAR_PIXELS, widen_pixels, &c);
	return b->xfer.host;
}

int bloom_upload_read_pixels(struct bloom_ctx *b, const struct bloom_frame *fin,
                             struct image *copy, char err[BLOOM_ERR_LEN])
{
	const struct image *in = fin->img;
	memset(copy, 0, sizeof *copy);
	size_t n = (size_t)in->width * (size_t)in->height;
	if (in->channels != 4 || !bloom_upload_holds(b, fin->upload, in->pixels, n * 16))
		return 0;
	int ch = fin->channels ? fin->channels : 4;
	struct image rgba;
	if (image_alloc(&rgba, in->width, in->height, 4) ||
	    image_alloc(copy, in->width, in->height, ch)) {
		image_free(&rgba);
		snprintf(err, BLOOM_ERR_LEN, "out of memory");
		return BLOOM_E_NOMEM;
	}
	char why[BLOOM_ERR_LEN];
	int rc = bloom_upload_copy_out(b, fin->upload, n * 16, rgba.pixels, why);
	if (rc) {
		snprintf(err, BLOOM_ERR_LEN, "pixels: %.200s", why);
		image_free(&rgba);
		image_free(copy);
		return rc;
	}
	struct widen c = {rgba.pixels, copy->pixels, ch};
	par_for(n, BLOOM_PAR_PIXELS, narrow_pixels, &c);
	image_free(&rgba);
	return 0;
}

_Static_assert(U_OFF == U_SUB + 1 && U_STRIDE == U_SUB + 2 && U_GRAY == U_SUB + 3,
               "jpeg_gpu_set_planes takes the planes' uniforms from U_SUB on");
_Static_assert(B_PLANES == JPEG_B_PLANES && B_OUT == JPEG_B_RESULT,
               "yuv_unpack and yuv_sample bind the planes and the result as jpeg_gpu does");

int bloom_upload_holds(const struct bloom_ctx *b, const struct bloom_upload *lent,
                       const void *data, size_t bytes)
{
	int mine = 0;
	for (int i = 0; lent && b->lent.uploads && i < BLOOM_UPLOAD_SLOTS; i++)
		mine |= lent == &b->lent.uploads[i];
	return mine && lent->buf && data == (const void *)lent->map &&
	       bytes <= atomic_load_explicit(&lent->bytes, memory_order_relaxed) &&
	       (atomic_load_explicit(&lent->state, memory_order_relaxed) & UPLOAD_LENT);
}

/* 1 when lent is an upload buffer of b, held by its taker, that holds y's planes. */
static int lent_here(const struct bloom_ctx *b, const struct bloom_upload *lent,
                     const struct yuv_image *y)
{
	return bloom_upload_holds(b, lent, y->data, y->bytes);
}

/* Marks lent as read by the commands issued so far: in flight until their fence signals
 * (bloom_upload_tend), however soon its holder gives it back; a frame run again (in tiles)
 * fences it anew. */
static void lent_fence(struct bloom_upload *lent)
{
	gl_fence_free(lent->fence);
	if ((lent->fence = gl_fence_new()))
		atomic_fetch_or_explicit(&lent->state, UPLOAD_FLIGHT, memory_order_relaxed);
	else
		glFinish(); /* no fence: read already */
}

/* Planes -> q->image (w x h linear RGBA, oriented): read in place from lent (an upload buffer
 * of b that holds them), else copied into the next of b->xfer.yin. */
static int upload_planes(struct bloom_ctx *b, struct plan *q, const struct yuv_image *y,
                         struct bloom_upload *lent, int w, int h, double *copy_ms,
                         char err[BLOOM_ERR_LEN])
{
	const struct bloom_prog *p;
	int rc = bloom_prog(b, SH_YUV_UNPACK, 0, 0, &p, err);
	if (!rc && y->coefs)
		rc = jpeg_gpu_idct_ready(b->jpeg, y, err);
	if (rc)
		return rc;
	struct upload *u = NULL;
	GLuint buf;
	size_t used = yuv_image_used_bytes(y); /* what the GPU reads of the data */
	if (lent_here(b, lent, y)) { /* coherent, written before this call: nothing to copy */
		buf = lent->buf;
		b->st.uploads_lent++;
	} else {
		lent = NULL;
		u = &b->xfer.yin[b->xfer.yin_next];
		b->xfer.yin_next = (b->xfer.yin_next + 1) % BLOOM_UPLOADS;
		/* a frame still in flight may read it: its commands complete first (they were issued
		 * BLOOM_UPLOADS frames ago, so this rarely waits) */
		if (upload_free(u, "planes upload", err))
			return BLOOM_E_GPU;
		if (b->xfer.persistent
		    ? bloom_grow_mapped(b, &u->buf, &u->bytes, &u->map, used, GL_MAP_WRITE_BIT)
		    : gl_buf_grow(&u->buf, &u->bytes, used, GL_STREAM_DRAW, NULL)) {
			snprintf(err, BLOOM_ERR_LEN, "planes upload: out of GPU memory");
			return BLOOM_E_GPU_MEMORY;
		}
		double t0 = clock_ms();
		if (u->map) { /* coherent: seen by the commands issued after it */
			memcpy(u->map, y->data, used);
		} else {
			glBindBuffer(GL_SHADER_STORAGE_BUFFER, u->buf);
			glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)used, y->data);
		}
		*copy_ms += clock_ms() - t0;
		buf = u->buf;
		b->st.uploads_copied++;
	}
	bloom_set_sizes(p, w, h, q->pw, q->ph);
	jpeg_gpu_set_planes(&p->u[U_SUB], y);
	glUniform2ui(p->u[U_SRC], (GLuint)y->width, (GLuint)y->height);
	glUniform1i(p->u[U_ORIENT], y->orientation);
	/* libjpeg replicates rather than filters a horizontally halved plane <= 2 samples wide */
	glUniform1i(p->u[U_FANCY], !(y->sub_x == 2 && y->pw[1] <= 2));
	glUniform2i(p->u[U_CDIM], y->pw[1], y->ph[1]);
	/* planes in host memory the GPU would read across the bus pass by pass: one copy into its
	 * own memory first (on the H100, 0.94 against 1.16 ms of the GPU thread a 1080p 4:4:4
	 * frame, 804-808 against 715-723 req/s with lent buffers) */
	if (b->xfer.upload_dma && (lent || (u && u->map)) &&
	    !gl_buf_grow(&b->xfer.yin_dev, &b->xfer.yin_dev_bytes, used, GL_DYNAMIC_COPY, NULL)) {
		glBindBuffer(GL_COPY_READ_BUFFER, buf);
		glBindBuffer(GL_COPY_WRITE_BUFFER, b->xfer.yin_dev);
		glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0,
		                    (GLsizeiptr)used);
		buf = b->xfer.yin_dev;
	}
	if (y->scan) { /* entropy-decoded first; libjpeg decides what it flags */
		struct yuv_image cy;
		rc = jpeg_huffdec_run(b->huffdec, y, buf, &buf, &cy, NULL, err);
		if (rc == JPEG_HUFFDEC_FLAGGED) { /* err says why */
			b->st.entropy_flagged++;
			rc = BLOOM_E_ENTROPY;
		}
		if (!rc)
			jpeg_gpu_idct(b->jpeg, &cy, &buf);
		if (rc && lent)
			glFinish(); /* the buffer goes back read */
		if (rc)
			return rc;
		glUseProgram(p->id);
	} else if (y->coefs) {
		jpeg_gpu_idct(b->jpeg, y, &buf);
		glUseProgram(p->id);
	}
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_IMAGE, q->image);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, B_PLANES, buf);
	bloom_dispatch2d(w, h);
	if (lent) {
		lent_fence(lent); /* until the unpack has read it */
	} else if (u->map && !(u->fence = gl_fence_new())) {
		glFinish(); /* no fence to wait for later */
	}
	return 0;
}

int bloom_upload(struct bloom_ctx *b, struct plan *q, const struct bloom_frame *in, int w, int h,
                 double *copy_ms, char err[BLOOM_ERR_LEN])
{
	if (!in->img)
		return upload_planes(b, q, in->yuv, in->upload, w, h, copy_ms, err);
	double t0 = clock_ms();
	size_t bytes = (size_t)w * h * 16;
	struct upload *u = &b->xfer.fin;
	if (in->img->channels == 4 &&
	    bloom_upload_holds(b, in->upload, in->img->pixels, bytes)) {
		/* decoded as RGBA where the GPU reads it (coherent, written before this call):
		 * one GPU copy into the frame's buffer, nothing on the CPU */
		glBindBuffer(GL_COPY_READ_BUFFER, in->upload->buf);
		glBindBuffer(GL_COPY_WRITE_BUFFER, q->image);
		glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0,
		                    (GLsizeiptr)bytes);
		lent_fence(in->upload);
		b->st.uploads_lent++;
		*copy_ms += clock_ms() - t0;
		return 0;
	}
	/* on a software renderer too, though its GPU copy is one more CPU copy (a few ms against
	 * seconds of compute): the tests run this path there */
	if (b->xfer.persistent && bytes <= BLOOM_FLOAT_MAPPED_MAX) {
		/* the frame before may still be copying out of it: its copy runs after the stages of
		 * the frame before it, so with frames in flight (JPEG answers) this waits for those */
		if (upload_free(u, "upload", err))
			return BLOOM_E_GPU;
		if (!bloom_grow_mapped(b, &u->buf, &u->bytes, &u->map, bytes, GL_MAP_WRITE_BIT)) {
			struct widen c = {in->img->pixels, (float *)(void *)u->map, in->img->channels};
			par_for((size_t)w * h, BLOOM_PAR_PIXELS, widen_pixels, &c);
			glBindBuffer(GL_COPY_READ_BUFFER, u->buf); /* coherent: seen by what follows */
			glBindBuffer(GL_COPY_WRITE_BUFFER, q->image);
			glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0,
			                    (GLsizeiptr)bytes);
			if (!(u->fence = gl_fence_new()))
				glFinish(); /* no fence to wait for later */
			*copy_ms += clock_ms() - t0;
			return 0;
		} /* no mapped buffer that large: the driver copies it, as without buffer_storage */
	}
	const float *rgba = to_rgba(b, in->img);
	if (!rgba) {
		snprintf(err, BLOOM_ERR_LEN, "out of memory");
		return BLOOM_E_NOMEM;
	}
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, q->image);
	glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)w * h * 16, rgba);
	*copy_ms += clock_ms() - t0;
	return 0;
}

/* The result as planes: made on the GPU, then read where they are mapped (a lent buffer, which
 * moves to res->lease, or the mapped staging buffer) or copied out of a mapping per frame.
 * *t_read: when the CPU began waiting for them. */
static int read_planes(struct bloom_ctx *b, struct plan *q, struct bloom_result *res, int w,
                       int h, int ch, struct bloom_lease **lease, int defer, struct gpu_timer *tm,
                       struct bloom_stats *st, double *t_read, char err[BLOOM_ERR_LEN])
{
	struct bloom_lease *l = *lease;
	int entropy = res->entropy && res->yuv.dct_quality;
	int rc = l ? 0 : bloom_ystage_grow(b, jpeg_gpu_stage_bytes(&res->yuv, entropy), err);
	if (!rc)
		rc = jpeg_gpu_make_planes(b->jpeg, q->out, q->pw, q->ph, &res->yuv, w, h, res->dither,
		                          &entropy, l ? l->buf : b->xfer.ystage, tm, err);
	if (rc)
		return rc;
	res->scan = entropy;
	if (defer && l && l->map) {
		/* the composite's count goes beside the flags word, so it is the frame's own however
		 * many frames follow before it is read; bloom_result_finish reads both */
		glBindBuffer(GL_COPY_READ_BUFFER, b->xfer.flags);
		glBindBuffer(GL_COPY_WRITE_BUFFER, l->buf);
		glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0,
		                    (GLintptr)res->yuv.bytes + 4, 4);
		glMemoryBarrier(GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT_EXT);
		GLsync f = gl_fence_new();
		if (!f) {
			snprintf(err, BLOOM_ERR_LEN, "reading the planes: no fence: %s",
			         gl_error_name(glGetError()));
			return BLOOM_E_GPU;
		}
		glFlush(); /* the GPU starts on it while the caller goes on */
		*t_read = clock_ms();
		res->yuv.data = l->map;
		res->lease = l;
		*lease = NULL;
		res->fence = f;
		res->pending = 1;
		res->lost = IMAGE_LOST_PRECISION | (ch == 2 || ch == 4 ? IMAGE_LOST_ALPHA : 0);
		return 0;
	}
	double t0 = *t_read = clock_ms();
	const unsigned char *m, *map = l ? l->map : b->xfer.ystage_map;
	unsigned gl_err = 0;
	if (map) { /* kept mapped: wait for the copy, then read */
		glMemoryBarrier(GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT_EXT);
		m = fence_wait() ? map : NULL;
	} else {
		m = gl_buf_map_read(GL_SHADER_STORAGE_BUFFER, l ? l->buf : b->xfer.ystage,
		                    res->yuv.bytes + (entropy ? 12 : 4), &gl_err);
	}
	st->wait_ms = clock_ms() - t0;
	if (!m) {
		snprintf(err, BLOOM_ERR_LEN, "reading the planes: %s", map
		         ? "the GPU did not finish within 60 s" : gl_error_name(gl_err));
		return BLOOM_E_GPU;
	}
	if (entropy)
		res->yuv.coded = jpeg_gpu_coded_bytes(&res->yuv, m);
	if (l) { /* the planes stay where the GPU put them, lent to the caller */
		res->yuv.data = l->map;
		res->lease = l;
		*lease = NULL;
	} else {
		double t1 = clock_ms();
		memcpy(res->yuv.data, m, res->yuv.coded ? res->yuv.coded : res->yuv.bytes);
		st->copy_ms += clock_ms() - t1;
	}
	uint32_t flags;
	memcpy(&flags, m + res->yuv.bytes, 4);
	res->lost = flags | IMAGE_LOST_PRECISION | (ch == 2 || ch == 4 ? IMAGE_LOST_ALPHA : 0);
	if (!map)
		gl_buf_unmap(GL_SHADER_STORAGE_BUFFER);
	return 0;
}

/* The result as a float image of ch channels, through the staging copy of q->out. *t_read:
 * when the CPU began waiting for it. */
static int read_float(struct plan *q, struct image *out, int w, int h, int ch,
                      struct bloom_stats *st, double *t_read, char err[BLOOM_ERR_LEN])
{
	glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
	glBindBuffer(GL_COPY_READ_BUFFER, q->out);
	glBindBuffer(GL_COPY_WRITE_BUFFER, q->staging);
	glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, (GLsizeiptr)w * h * 16);
	*t_read = clock_ms();
	unsigned gl_err = 0;
	const float *m = gl_buf_map_read(GL_SHADER_STORAGE_BUFFER, q->staging, (size_t)w * h * 16,
	                                 &gl_err);
	double t0 = clock_ms();
	st->wait_ms = t0 - *t_read;
	if (!m) {
		snprintf(err, BLOOM_ERR_LEN, "reading the result: %s", gl_error_name(gl_err));
		return BLOOM_E_GPU;
	}
	/* every sample is written below: no zeroing (calloc of a 1080p float frame is 25-33 MB) */
	out->pixels = malloc((size_t)w * h * ch * sizeof(float));
	out->width = w, out->height = h, out->channels = ch;
	if (!out->pixels) {
		memset(out, 0, sizeof *out);
		gl_buf_unmap(GL_SHADER_STORAGE_BUFFER);
		return BLOOM_E_NOMEM;
	}
	struct widen c = {m, out->pixels, ch};
	par_for((size_t)w * h, BLOOM_PAR_PIXELS, narrow_pixels, &c);
	gl_buf_unmap(GL_SHADER_STORAGE_BUFFER);
	st->copy_ms += clock_ms() - t0;
	return 0;
}

/* The composite's count of non-finite samples (its commands are complete by now). */
static unsigned long long read_nonfinite(struct bloom_ctx *b)
{
	GLuint count = 0;
	glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
	glBindBuffer(GL_COPY_READ_BUFFER, b->xfer.flags);
	glBindBuffer(GL_COPY_WRITE_BUFFER, b->xfer.flags_stage);
	glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, 4);
	if (gl_buf_read(b->xfer.flags_stage, &count, sizeof count, NULL))
		count = 0;
	return count;
}

int bloom_read_back(struct bloom_ctx *b, struct plan *q, struct bloom_result *res, int w, int h,
                    int ch, struct bloom_lease **lease, int defer, struct gpu_timer *tm,
                    struct bloom_stats *st, char err[BLOOM_ERR_LEN])
{
	double hang;
	if (gles_fault_fire(GLES_FAULT_HANG, &hang)) { /* as a GPU that does not finish */
		struct timespec ts = {(time_t)hang, (long)((hang - (double)(time_t)hang) * 1e9)};
		nanosleep(&ts, NULL);
	}
	double t_read = clock_ms();
	int rc = res->want_yuv ? read_planes(b, q, res, w, h, ch, lease, defer, tm, st, &t_read, err)
	                       : read_float(q, &res->img, w, h, ch, st, &t_read, err);
	if (!rc && !res->pending)
		res->nonfinite = read_nonfinite(b);
	st->readback_ms = clock_ms() - t_read;
	return rc;
}

int bloom_result_finish(struct bloom_result *res, double *wait_ms, char err[BLOOM_ERR_LEN])
{
	if (!res->pending)
		return 0;
	double t0 = clock_ms();
	int done = gl_fence_wait(res->fence);
	if (wait_ms)
		*wait_ms += clock_ms() - t0;
	res->fence = NULL;
	res->pending = 0;
	if (!done) {
		snprintf(err, BLOOM_ERR_LEN, "reading the planes: the GPU did not finish within 60 s");
		res->yuv.data = NULL;
		bloom_lease_return(res->lease);
		res->lease = NULL;
		yuv_image_free(&res->yuv);
		return BLOOM_E_GPU;
	}
	uint32_t word[2];
	memcpy(word, (const unsigned char *)res->yuv.data + res->yuv.bytes, sizeof word);
	res->lost |= word[0];
	res->nonfinite = word[1];
	if (res->scan)
		res->yuv.coded = jpeg_gpu_coded_bytes(&res->yuv, res->yuv.data);
	return 0;
}
