/* The built-in kernels' pixels (core/engine_params.h's struct kernel_preset), the same for both
 * engines: gaussian and glare made here; the aperture's mask and the steps around its 2D FFT,
 * which each engine runs on its own (the GPU's fft, FFTW). Pure arithmetic on float arrays. */
#ifndef FFTBLOOM_KERNEL_SHAPE_H
#define FFTBLOOM_KERNEL_SHAPE_H

#include <stddef.h>

#include "core/engine_params.h"

/* Wavelengths (nm) the aperture kernel is resampled for; green is the reference. */
#define LAMBDA_R 630.0
#define LAMBDA_G 532.0
#define LAMBDA_B 465.0

/* ks->size^2 RGB floats: a gaussian of ks->sigma; a glare (a bright core, a soft halo, and
 * streaks that fade with distance, slightly bluer at the tips). Peak at (size/2, size/2). */
void kshape_gaussian(const struct kernel_preset *ks, float *rgb);
void kshape_glare(const struct kernel_preset *ks, float *rgb);

/* The aperture's FFT grid side for a kernel of `size`: the 7-smooth length >= 2 size of least
 * length x passes (fft_smooth_size; not fft_good_size, whose costs may change: the grid shapes
 * the image). */
int kshape_aperture_grid(int size);
/* The aperture's mask (coverage of each pixel by the polygon or circle, 4x4 supersampled,
 * centred at f/2) as the real parts of f x f complex floats (re, im pairs); mask must be
 * zeroed by the caller. */
void kshape_aperture_mask(const struct kernel_preset *ks, int f, float *mask);
/* What the GPU's aperture.comp does, on the CPU: from the f x f unshifted spectrum S of the
 * mask, size^2 RGBA floats of |S|^2 sampled (bilinear, periodic) at ((x, y) - size/2) *
 * LAMBDA_G / lambda_c per channel (alpha 0). */
void kshape_aperture_sample(const float *spectrum, int f, int size, float *rgba);
/* The sampled power (size^2 RGBA) to the kernel (size^2 RGB): each channel to unit sum, then
 * scaled so that the peak of green is 1 (the energy per channel is the same: the colour comes
 * from the spread alone). */
void kshape_aperture_finish(const float *rgba, int size, float *rgb);

/* The kernel centre p asks for in pixels of a kw x kh kernel (default floor(w/2), floor(h/2);
 * uv scaled and clamped): the one rule for both engines' FFT and direct convolutions. -1 with a
 * message (err of err_len bytes) when a pixel centre lies past the kernel or a value is negative
 * or not a number, else 0. */
int kshape_center(const struct bloom_params *p, int kw, int kh, int *cx, int *cy, char *err,
                  size_t err_len);
/* The centre p asks for, or the default (kw / 2, kh / 2) where it lies outside the kernel: for
 * sizing a frame's plan ahead of the run that refuses such a centre. */
void kshape_center_or_default(const struct bloom_params *p, int kw, int kh, int *cx, int *cy);
/* The kernel's size (*kw, *kh) and centre as used on a w x h image: kernel_scale makes its larger
 * side S times the image's shorter side, and the centre moves with it. -1 with a message (a
 * centre outside, a scaled kernel past 16384 a side), else 0. */
int kshape_geometry(const struct bloom_params *p, int src_w, int src_h, int w, int h, int *kw,
                    int *kh, int *cx, int *cy, char *err, size_t err_len);
/* Pixel (i, j) of a src_w x src_h kernel of `ch` float channels resampled to kw x kh (the GPU's
 * bloom_kernel.comp): the source pixels under its footprint weighted by their overlap (area
 * averaging when shrinking, bilinear-like when growing), so that every channel keeps its sum.
 * out gets ch values. */
void kshape_resample(const float *src, int src_w, int src_h, int ch, int kw, int kh, int i, int j,
                     float *out);

#endif
