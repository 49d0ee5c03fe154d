/* Sized outputs' geometry and filter taps, pure CPU and shared by both engines' resamplers
 * (gles/resample.h on the GPU, cpu/resample.h on the host): sharp's fit modes (cover, contain,
 * fill, inside, outside) as a source window mapped onto a canvas, the bloom kernel's scale at
 * the output size, and the separable Lanczos-3 taps of an axis (core/resample_plan.c). */
#ifndef FFTBLOOM_RESAMPLE_GEOM_H
#define FFTBLOOM_RESAMPLE_GEOM_H

#include <stddef.h>

#define RESAMPLE_ERR_LEN 256
#define RESAMPLE_MAX_SIDE 16384 /* an output side at most (the requests' bound) */
#define RESAMPLE_DPR_MAX 4.0    /* device pixel ratio: 1-4 (as browsers' srcset densities) */
#define RESAMPLE_LOBES 3        /* Lanczos-3: the filter spans 3 source pixels each side at 1:1 */

enum resample_error {
	RESAMPLE_OK = 0,
	RESAMPLE_E_ARG = -1,       /* no box, a side below 1, a bad fit or dpr */
	RESAMPLE_E_TOO_LARGE = -2, /* an output side past RESAMPLE_MAX_SIDE */
	RESAMPLE_E_NOMEM = -3,
	RESAMPLE_E_GPU = -4,       /* a program or a GL call failed (message says which) */
	RESAMPLE_E_GPU_MEMORY = -5,/* the GPU could not allocate a buffer */
	RESAMPLE_E_GPU_LIMIT = -6, /* the intermediate or the output past the GPU's storage-buffer
	                              limit (the input goes up in bands of rows that fit) */
};
const char *resample_strerror(int code);

/* sharp's fit modes (what requests call them: resample_fit_names, gles/names.c). */
enum resample_fit {
	RESAMPLE_FIT_COVER = 0, /* fills the box, aspect kept, the overflow cropped at the centre */
	RESAMPLE_FIT_CONTAIN,   /* inside the box, aspect kept, letterboxed with (0,0,0,0) bars */
	RESAMPLE_FIT_FILL,      /* stretched to the box */
	RESAMPLE_FIT_INSIDE,    /* inside the box, aspect kept, no bars, never enlarged */
	RESAMPLE_FIT_OUTSIDE,   /* covers the box, aspect kept, nothing cropped, never below it */
};
#define RESAMPLE_FIT_COUNT 5

/* When a sized bloom resizes: before (the input resized, the bloom at the output size with its
 * kernel scaled to match) or after (the bloom at the input size, its result resized). */
enum resample_order { RESAMPLE_BEFORE = 0, RESAMPLE_AFTER };
#define RESAMPLE_ORDER_COUNT 2

/* What one resize does: the source window (src_x, src_y, src_w, src_h; pixels, fractional)
 * of the input is mapped onto the rectangle (dst_x, dst_y, dst_w, dst_h) of an out_w x out_h
 * canvas; canvas pixels outside the rectangle (contain's bars) are 0 in every channel. */
struct resample_geom {
	int out_w, out_h;
	int dst_x, dst_y, dst_w, dst_h;
	double src_x, src_y, src_w, src_h;
};

/* The geometry of a box: width and height (0: not given; one alone keeps the aspect, and then
 * every fit gives that width or height except inside, which never enlarges), both multiplied by
 * dpr (1-RESAMPLE_DPR_MAX) and rounded, for an in_w x in_h input. Every output side is at least
 * 1. Returns 0, RESAMPLE_E_ARG (no width nor height, or a bad input) or RESAMPLE_E_TOO_LARGE
 * (an output side past RESAMPLE_MAX_SIDE), with g zeroed on failure. */
int resample_fit(int in_w, int in_h, int width, int height, double dpr, int fit,
                 struct resample_geom *g);

/* 1 when g changes nothing (the identity: same size, whole image, no bars). */
int resample_is_identity(const struct resample_geom *g, int in_w, int in_h);

/* The scale a bloom's kernel takes at the output size: sqrt(sx * sy) of the image's own scale
 * (dst_w / src_w, dst_h / src_h), equal to both for every fit that keeps the aspect. */
double resample_scale(const struct resample_geom *g);

/* The kernel_scale (gles/params.h: the kernel's larger side as a multiple of the image's
 * shorter side) that makes a kw x kh kernel, asked for with kernel_scale for the in_w x in_h
 * input (0: its own size), span resample_scale(g) times its size at the input once the bloom
 * runs on g's canvas: so a bloom at the output size looks as the input's bloom resized. An odd
 * kernel's new larger side is the odd number nearest below-or-at n + 1 (n the scaled size: 2
 * floor(n / 2) + 1), so that its centre stays on a pixel. */
double resample_kernel_scale(double kernel_scale, int kw, int kh, int in_w, int in_h,
                             const struct resample_geom *g);

/* One axis's filter taps (pure CPU): output i (0..n_out-1) sums count[i] source pixels from
 * first[i] with weights w[i * max_taps + k], which add up to 1. */
struct resample_axis {
	int n_out, max_taps;
	int *span;  /* n_out pairs (first, count) */
	float *w;   /* n_out * max_taps */
};
/* The taps of dst output pixels over the source window [src0, src0 + src_len) of an axis of
 * in_n pixels: output i's centre maps to src0 + (i + 0.5) * src_len / dst; the Lanczos-3
 * filter is widened by src_len / dst when that is above 1; taps outside [0, in_n) are
 * dropped and the rest renormalised. Returns 0 or RESAMPLE_E_NOMEM / RESAMPLE_E_ARG. */
int resample_axis_plan(int in_n, double src0, double src_len, int dst, struct resample_axis *a);
void resample_axis_free(struct resample_axis *a);

/* Checks g against an in_w x in_h input of c channels (1-4) and sets the bytes of the
 * intermediate (g's dst_w x in_h) and of the output canvas, in float32. 0, or RESAMPLE_E_ARG
 * (not a valid geometry) / RESAMPLE_E_TOO_LARGE (sizes overflow) with err. */
int resample_geom_check(int in_w, int in_h, int c, const struct resample_geom *g,
                        size_t *mid_bytes, size_t *out_bytes, char err[RESAMPLE_ERR_LEN]);

/* What either engine's resampler does first: resample_geom_check, then both axes' taps for g
 * (resample_axis_plan on x, then y; resample_axis_free both after). 0, or an error with err
 * (nothing to free then). */
int resample_prepare(int in_w, int in_h, int c, const struct resample_geom *g, size_t *mid_bytes,
                     size_t *out_bytes, struct resample_axis *ax, struct resample_axis *ay,
                     char err[RESAMPLE_ERR_LEN]);

#endif
