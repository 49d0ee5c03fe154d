/* The GPU JPEG codec, a room of its own: a JPEG answer made from the FFT convolution's result
 * (sample planes by yuv_pack, their quantised DCT coefficients by jpeg_fdct, the coefficients'
 * entropy-coded scan by jpeg_huff and jpeg_huff_out) and a coefficients frame made into planes
 * (jpeg_idct). It owns its buffers and tables, grown on first use and kept; its programs are
 * the bloom context's (bloom_prog), which holds every shader variant against trimming.
 *
 * GL contract: on the bloom context's thread; a call changes the bound program, the
 * GL_SHADER_STORAGE_BUFFER bindings (indexed B_PLANES, B_SAMPLES, B_OUT, B_HUFF, B_HTAB,
 * B_CODED, B_COEFS, and the plain one), GL_COPY_READ_BUFFER and GL_COPY_WRITE_BUFFER. */
#ifndef FFTBLOOM_JPEG_GPU_H
#define FFTBLOOM_JPEG_GPU_H

#include "gles/bloom_internal.h"

struct jpeg_gpu;

/* The codec with no buffer made yet. 0 or BLOOM_E_NOMEM. */
int jpeg_gpu_create(struct jpeg_gpu **out);
/* Deletes its buffers. NULL-safe. */
void jpeg_gpu_destroy(struct jpeg_gpu *j);

/* q->out (w x h) -> planes laid out as y (samples, or quantised DCT coefficients) in the
 * codec's planes buffer (the flags word after them), copied to dst for mapping (a lent buffer,
 * or b->xfer.ystage, which it grows; 0: that); with *entropy, the coefficients' entropy-coded scan
 * goes to dst instead, its length at y->bytes + 8 (0: a row did not fit, the coefficients are
 * there), or, where there is no GPU memory to code them, the coefficients as they are
 * (*entropy then 0). tm (or NULL) is marked after the planes (GPU_STAGE_ANSWER) and the scan
 * (GPU_STAGE_ENTROPY). 0 or a bloom_error with err. */
int jpeg_gpu_make_planes(struct bloom_ctx *b, struct plan *q, const struct yuv_image *y, int w,
                         int h, int dither, int *entropy, GLuint dst, struct gpu_timer *tm,
                         char err[BLOOM_ERR_LEN]);
/* The scan's length jpeg_gpu_make_planes left after y's coefficients in m (0: none), within
 * them. */
size_t jpeg_gpu_coded_bytes(const struct yuv_image *y, const unsigned char *m);

/* For a coefficients frame (codec/image.h, yuv_image.coefs): jpeg_idct's program into *p and
 * the codec's IDCT planes buffer large enough for y's planes. 0 or a bloom_error with err. */
int jpeg_gpu_idct_ready(struct bloom_ctx *b, const struct yuv_image *y,
                        const struct bloom_prog **p, char err[BLOOM_ERR_LEN]);
/* y's planes made from the coefficients in *buf into the IDCT planes buffer, which *buf then
 * names (after a storage barrier). */
void jpeg_gpu_idct(struct jpeg_gpu *j, const struct yuv_image *y, const struct bloom_prog *p,
                   GLuint *buf);

#endif
