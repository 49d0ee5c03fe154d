/* The GPU's JPEG entropy decoder: a baseline scan as codec/image.h's struct yuv_scan lays it
 * out (image_decode_jpeg_scan_into) decoded to quantised DCT coefficients by jpeg_huffdec.comp
 * (Weissenberger and Schmidt's self-synchronising parallel decoding), for jpeg_gpu_idct. It
 * owns its buffers, grown on first use and kept, and its program, got from the program cache
 * and held until destroy.
 *
 * GL contract: on the thread of the context that owns the program cache; a call changes the
 * bound program, the GL_SHADER_STORAGE_BUFFER bindings (indexed JPEG_B_HUFF, JPEG_B_HTAB,
 * JPEG_B_CODED, and the plain one), GL_COPY_READ_BUFFER and GL_COPY_WRITE_BUFFER. Errors are
 * the engine's (enum bloom_error). */
#ifndef FFTBLOOM_JPEG_HUFFDEC_H
#define FFTBLOOM_JPEG_HUFFDEC_H

#include <GLES3/gl31.h>

#include "codec/image.h"
#include "gles/bloom.h"
#include "gles/gpu_timer.h"
#include "gles/program.h"

#define JPEG_HUFFDEC_FLAGGED 1 /* jpeg_huffdec_run: the scan is not what libjpeg decodes
                                  cleanly; libjpeg decides */

struct jpeg_huffdec;

/* The decoder with no buffer or program made yet; its program comes from pc (which must
 * outlive it). 0 or BLOOM_E_NOMEM. */
int jpeg_huffdec_create(struct program_cache *pc, struct jpeg_huffdec **out);
/* Drops its program and deletes its buffers. NULL-safe. */
void jpeg_huffdec_destroy(struct jpeg_huffdec *h);
/* Gets and holds its program. 0 or BLOOM_E_GPU with the build log. */
int jpeg_huffdec_warm(struct jpeg_huffdec *h, char err[BLOOM_ERR_LEN]);

/* y's scan (y->scan; its data's bytes in buffer scan) decoded to coefficients in a buffer of
 * the decoder's, which *coefs then names, described by *cy (y with the components' cf giving
 * the coefficients' offsets there: 64 int32 a block, jpeg_gpu_idct's wide layout). Waits for
 * the GPU to say whether the scan decoded cleanly: 0, JPEG_HUFFDEC_FLAGGED when it did not (an
 * invalid code, a coefficient index past 63, a segment that ends early or late, states that did
 * not settle), or a bloom_error with err. tm (or NULL) is marked after the first decode
 * (GPU_STAGE_HUFF_DECODE), the sync rounds (GPU_STAGE_HUFF_SYNC) and the rest (GPU_STAGE_HUFF_WRITE). */
int jpeg_huffdec_run(struct jpeg_huffdec *h, const struct yuv_image *y, GLuint scan,
                     GLuint *coefs, struct yuv_image *cy, struct gpu_timer *tm,
                     char err[BLOOM_ERR_LEN]);

#endif
