/* The GPU JPEG codec, a room of its own: a JPEG answer made from the FFT convolution's result
 * (sample planes by yuv_pack, their quantised DCT coefficients by jpeg_fdct, the coefficients'
 * entropy-coded scan by jpeg_huff and jpeg_huff_out) and a coefficients frame made into planes
 * (jpeg_idct). It owns its buffers and tables, grown on first use and kept, and its programs:
 * got from the program cache by jpeg_gpu_warm (or at their first use) and held against its
 * trimming until destroy.
 *
 * GL contract: on the thread of the context that owns the program cache; a call changes the
 * bound program, the GL_SHADER_STORAGE_BUFFER bindings (indexed JPEG_B_*, and the plain one),
 * GL_COPY_READ_BUFFER and GL_COPY_WRITE_BUFFER. Errors are the engine's (enum bloom_error). */
#ifndef FFTBLOOM_JPEG_GPU_H
#define FFTBLOOM_JPEG_GPU_H

#include <GLES3/gl31.h>
#include <stddef.h>

#include "codec/image.h"
#include "core/log.h"
#include "gles/bloom.h"
#include "gles/gpu_timer.h"
#include "gles/program.h"

/* binding points of the codec's shaders (yuv_sample, jpeg_fdct, jpeg_huff, jpeg_huff_out,
 * jpeg_idct); JPEG_B_RESULT and JPEG_B_PLANES are the bloom shaders' too */
#define JPEG_B_RESULT 7   /* the RGBA result yuv_pack reads */
#define JPEG_B_PLANES 9   /* planes or coefficients */
#define JPEG_B_SAMPLES 10 /* jpeg_fdct's sample planes */
#define JPEG_B_HUFF 12    /* jpeg_huff's segments */
#define JPEG_B_HTAB 13    /* jpeg_huff's codes */
#define JPEG_B_CODED 14   /* jpeg_huff_out's scan */
#define JPEG_B_COEFS 15   /* jpeg_idct's coefficients */

struct jpeg_gpu;

/* The codec with no buffer or program made yet; its programs come from pc (which must outlive
 * it), its debug lines go to log (NULL: none). scan_scratch_max: GPU memory a scan's coding may
 * take at most (0: what a buffer can hold). 0 or BLOOM_E_NOMEM. */
int jpeg_gpu_create(struct program_cache *pc, const struct log_sink *log, size_t scan_scratch_max,
                    struct jpeg_gpu **out);
/* Drops its programs and deletes its buffers. NULL-safe. */
void jpeg_gpu_destroy(struct jpeg_gpu *j);
/* Gets and holds every program of the codec, so that no frame compiles one. 0 or BLOOM_E_GPU
 * with the build log. */
int jpeg_gpu_warm(struct jpeg_gpu *j, char err[BLOOM_ERR_LEN]);

/* The RGBA result (w x h in a pw x ph padded layout, in buffer `result`) -> planes laid out as
 * y (samples, or quantised DCT coefficients) in the codec's planes buffer (the flags word after
 * them), copied to dst for mapping (at least jpeg_gpu_stage_bytes); with *entropy, the
 * coefficients' entropy-coded scan goes to dst instead, its length at y->bytes + 8 (0: a row did
 * not fit, the coefficients are there), or, where there is no GPU memory to code them, the
 * coefficients as they are (*entropy then 0). tm (or NULL) is marked after the planes
 * (GPU_STAGE_ANSWER) and the scan (GPU_STAGE_ENTROPY). 0 or a bloom_error with err. */
int jpeg_gpu_make_planes(struct jpeg_gpu *j, GLuint result, int pw, int ph,
                         const struct yuv_image *y, int w, int h, int dither, int *entropy,
                         GLuint dst, struct gpu_timer *tm, char err[BLOOM_ERR_LEN]);
/* The bytes jpeg_gpu_make_planes copies to dst for y (entropy: whether a scan is asked for). */
size_t jpeg_gpu_stage_bytes(const struct yuv_image *y, int entropy);
/* The scan's length jpeg_gpu_make_planes left after y's coefficients in m (0: none), within
 * them. */
size_t jpeg_gpu_coded_bytes(const struct yuv_image *y, const unsigned char *m);

/* For a coefficients frame (codec/image.h, yuv_image.coefs): jpeg_idct's program and the
 * codec's IDCT planes buffer large enough for y's planes. 0 or a bloom_error with err. */
int jpeg_gpu_idct_ready(struct jpeg_gpu *j, const struct yuv_image *y, char err[BLOOM_ERR_LEN]);
/* y's planes made from the coefficients in *buf (with y->scan, in jpeg_huffdec's layout: 64
 * int32 a block from cf.ac) into the IDCT planes buffer, which *buf then
 * names (after a storage barrier); after jpeg_gpu_idct_ready. */
void jpeg_gpu_idct(struct jpeg_gpu *j, const struct yuv_image *y, GLuint *buf);

/* The planes' layout uniforms (u_sub, u_off, u_stride, u_gray) of the bound program, which
 * yuv_sample and yuv_unpack share: their locations, then y. */
void jpeg_gpu_set_planes(const GLint loc[4], const struct yuv_image *y);

#endif
