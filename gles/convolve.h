/* An image convolved with a kernel image by the method that costs least: the FFT path
 * (gles/bloom.h's convolve) or the direct one (gles/spatial.h's image path), chosen from a
 * cost model calibrated on the context: the direct convolution's GPU time grows with
 * pixels x taps (spatial_image_estimate), the FFT's with n log2 n of the padded size, fitted
 * here to two runs measured the first time a choice is asked. Both compute the same linear
 * convolution (zero outside, the kernel's centre, normalised or not); the FFT path also
 * resizes the kernel (kernel_scale) and takes JPEG planes, so it is the one chosen for those.
 *
 * GL contract: the bloom and spatial contexts' (one context's thread). */
#ifndef FFTBLOOM_CONVOLVE_H
#define FFTBLOOM_CONVOLVE_H

#include "gles/bloom.h"
#include "gles/spatial.h"

#define CONVOLVE_ERR_LEN 512

enum convolve_method { CONVOLVE_AUTO = 0, CONVOLVE_FFT, CONVOLVE_SPATIAL };
#define CONVOLVE_METHOD_COUNT 3
/* "auto", "fft", "spatial", indexed by enum convolve_method, NULL after the last
 * (gles/names.c). */
extern const char *const convolve_method_names[CONVOLVE_METHOD_COUNT + 1];

/* The FFT path's fitted cost: ms = a + b * n log2 n for n padded pixels. */
struct convolve_model {
	int ready;
	double a, b;
};

/* The method for a w x h image and a kw x kh kernel (after kernel_scale) with p: `asked` when
 * it is FFT or SPATIAL, else the one the model predicts faster (calibrating it on first use:
 * two FFT convolutions of 256^2 and 768^2, timed stage by stage; and spatial_image_estimate's
 * two runs). *fft_ms and *spatial_ms (either may be NULL) get the predictions (0 when not
 * computed). Returns 0 or a negative bloom_error with a message. */
int convolve_choose(struct bloom_ctx *b, struct spatial_ctx *s, struct convolve_model *m,
                    int asked, int w, int h, int kw, int kh, const struct bloom_params *p,
                    int *method, double *fft_ms, double *spatial_ms, char err[CONVOLVE_ERR_LEN]);

/* The direct path: in convolved with kernel as bloom_run(BLOOM_OP_CONVOLVE) would (centre,
 * normalize; precision float32), into *out (in tiles where the image exceeds the context's
 * limits: spatial.h). With st (NULL: none), its stages timed and its tiles. Returns 0 or a
 * negative bloom_error. */
int convolve_spatial(struct spatial_ctx *s, const struct image *in, const struct image *kernel,
                     const struct bloom_params *p, struct image *out, struct spatial_stats *st,
                     char err[CONVOLVE_ERR_LEN]);

#endif
