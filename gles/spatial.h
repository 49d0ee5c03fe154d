/* Direct spatial convolution on the GPU with Torch's nn.SpatialConvolution semantics
 * (cross-correlation of (B, Cin, H, W) with weights (Cout, Cin, kH, kW), zero padding, stride;
 * also PyTorch's dilation and groups), four algorithms and four precision levels after the
 * libglconv design and an implicit GEMM; and the direct convolution of an image with a kernel image, as the FFT
 * path's convolve computes it, for small kernels.
 *
 * Algorithms (enum spatial_algorithm):
 *   batch4   batch a multiple of 4: four images in the four channels of a texel, the batch's
 *            groups of four tiled in a 2D array texture (one layer per input plane); each output
 *            plane's filter in a uniform block, one dispatch per output plane.
 *   interp   batch4 reading two adjacent taps with one bilinear fetch at a = f2 / (f1 + f2),
 *            weighted by f1 + f2. A pair is fused only where the result stays right
 *            (spatial_plan_fuse): same strict sign (never f1 = -f2 or opposite signs), a on the
 *            grid the texture filter resolves exactly, measured once per context (struct
 *            spatial_caps), and a strictly between the texels; every other tap is a single
 *            texelFetch. RGBA8_SNORM (Q2.6) and RGBA16F are filterable in core GLES 3.x;
 *            where the storage format is not (RGBA32F without OES_texture_float_linear) no
 *            pair fuses: interp then computes what batch4 does.
 *            The texture's sides are powers of two so that fetch coordinates are exact.
 *   planes4  any batch: four input planes in a texel (layers of four planes, images tiled),
 *            the filter in a texture; each invocation computes four output planes.
 *   shared   storage buffers, tiled through shared memory (32 x 8 outputs x up to 8 planes a
 *            work group), no textures.
 *   gemm     implicit GEMM on storage buffers: M = output pixels of the batch, N = a group's
 *            output planes, K = its input planes x taps; a work group computes an M x N tile
 *            (128 x 128 down to 32 x 32, and 256 x 4 for one to four planes: spatial_plan_gemm,
 *            or spatial_opts.gemm_tile) from input patches and filter slices double-buffered in
 *            shared memory, each invocation a register tile of 4x4 to 8x8. At precision 2 the
 *            products are packed float16 pairs (f16vec2 where GL_NV_gpu_shader5 is exposed,
 *            else mediump vec2), summed in float16 over a K-slice and then added into float32.
 *   auto     per shape class (batch, planes, kernel, stride, size buckets and precision), the
 *            candidates that can run it are each measured once on first use and the fastest
 *            is remembered for the context. Every algorithm meets the same error bound, so
 *            what auto picks changes timings, never correctness.
 *
 * Precision levels (enum spatial_precision), after the original: 0 Q2.6 storage with mediump
 * arithmetic, 1 Q2.6 with highp, 2 float16 storage with mediump, 3 float32 with highp.
 * Q2.6 here: codes c in [-127, 127] meaning c / 64, so values lie in [-1.984375, 1.984375]
 * with steps of 1/64; inputs and outputs outside clamp. Q2.6 and float16 apply to the
 * stored input (textures RGBA8_SNORM, RGBA16F; shared: rounded as it is staged) and to the
 * output (rounded as stored, then written as float32); weights stay float32, except at level 2
 * where they are rounded to float16. Each output element is within spatial_plan_bound
 * (gles/spatial_plan.h) of the exact result; measured on llvmpipe (tests/gles/test_spatial.c,
 * 144 taps, inputs in [-1, 1], outputs of RMS about 0.3): relative L2 error 0.9-1.6e-7 at level 3,
 * 0.8-1.3e-3 at level 2 (llvmpipe sums mediump values in float16), 2.4e-2 at levels 0 and 1
 * (max abs 1.1e-2: Q2.6's steps of 1/64). README's "Spatial and transposed convolution" keeps
 * the table.
 *
 * GL contract: one spatial_ctx per GL context, used only on the context's thread. Calls bind
 * programs, shader-storage bindings 0-3, uniform-buffer binding 0, texture units 0-1 and image
 * unit 0, and leave them bound; each ends with a shader-storage barrier. create compiles the
 * packing and probe programs and runs the probes; a convolution program is compiled, and a
 * shape's textures and buffers allocated, when a shape (class) is first used, then cached. */
#ifndef FFTBLOOM_SPATIAL_H
#define FFTBLOOM_SPATIAL_H

#include "core/conv_params.h"
#include "gles/cancel.h"
#include "gles/egl.h"
#include "gles/gpu_timer.h"
#include "gles/program.h"
#include "gles/spatial_plan.h"
#include "codec/image.h"

#define SPATIAL_ERR_LEN 512

enum spatial_error {
	SPATIAL_OK = 0,
	SPATIAL_E_ARG = -1,         /* a bad parameter or shape (message names it): client error */
	SPATIAL_E_TOO_LARGE = -2,   /* beyond this context's limits (texture size, layers,
	                               storage-block or uniform-block size, work groups) */
	SPATIAL_E_UNSUPPORTED = -3, /* the algorithm asked for cannot run this shape (batch4 and
	                               interp: batch not a multiple of 4; images: planes4, shared) */
	SPATIAL_E_GPU = -4,         /* a GL or program failure: server error */
	SPATIAL_E_NOMEM = -5,
	SPATIAL_E_CANCELLED = -6,   /* the cancellation set by spatial_ctx_set_cancel asked it to
	                               stop: work not issued yet was abandoned, no result */
};

enum spatial_algorithm {
	SPATIAL_ALG_AUTO = 0,
	SPATIAL_ALG_BATCH4 = 1,
	SPATIAL_ALG_INTERP = 2,
	SPATIAL_ALG_PLANES4 = 3,
	SPATIAL_ALG_SHARED = 4,
	SPATIAL_ALG_GEMM = 5,
	SPATIAL_ALG_WINOGRAD = 6, /* 3x3, stride 1, precisions 2 and 3: F(4x4, 3x3) on gemm */
};
#define SPATIAL_ALG_COUNT 7
/* "auto", "batch4", "interp", "planes4", "shared", "gemm", "winograd", indexed by enum
 * spatial_algorithm, NULL after the last (gles/names.c). */
extern const char *const spatial_algorithm_names[SPATIAL_ALG_COUNT + 1];

enum spatial_precision {
	SPATIAL_Q26_MEDIUMP = 0,
	SPATIAL_Q26_HIGHP = 1,
	SPATIAL_FP16 = 2,
	SPATIAL_FP32 = 3,
};
#define SPATIAL_PRECISION_COUNT 4 /* the levels are numbers 0..3 to a client, not names */

struct spatial_opts {
	int max_plans;             /* shapes kept with their textures and buffers; 0: 8 */
	int no_float_linear;       /* 1: behave as if OES_texture_float_linear were missing
	                              (tests the interpolator's fallback) */
	long long max_texture_bytes; /* largest input texture, and winograd's largest transformed
	                                tensor; 0: 1 GiB */
	unsigned long long frame_bytes; /* images: GPU memory one pass may take (32 bytes a
	                                   pixel); larger images run in overlap-save tiles
	                                   (gles/tile.h), as do those beyond the device's limits.
	                                   0: the limits only */
	int gemm_tile;             /* gemm's tile: 0 the rule (spatial_plan_gemm), else an entry
	                              1..SPATIAL_PLAN_GEMM_TILES - 1 of spatial_plan_gemm_tiles */
	int no_half2;              /* 1: gemm's precision-2 kernel without GL_NV_gpu_shader5 (its
	                              mediump vec2 form) even where the extension is exposed */
	int winograd_m;            /* winograd's output block: 2 (F(2x2, 3x3)) or 4; 0: 4 */
	int no_persistent_map;     /* 1: host arrays through the driver's buffer updates and maps
	                              (gl_stage unmapped) even with GL_EXT_buffer_storage */
	int gemm_half2;            /* 1: gemm at precision 2 in packed float16 arithmetic; 0: in
	                              float32 on the level's float16 inputs and weights (as
	                              accurate or better), which ran faster on NVIDIA's GLES driver
	                              (its f16vec2 and mediump arithmetic at 0.12-0.16x float32's
	                              multiply-add rate: bench/fma_probe) and on llvmpipe */
};

/* What the context measured and allows. */
struct spatial_caps {
	int max_texture_size, max_layers, max_uniform_block, ubo_align;
	long long max_ssbo;
	int float_linear;      /* RGBA32F is filterable (OES_texture_float_linear) */
	int filter_bits[4];    /* per level: fractional bits of a at which the interpolator fuses
	                          pairs (0: none; probed: the filter is within the level's tolerance
	                          of exact interpolation on that grid) */
	double filter_dev[4];  /* the probe's largest deviation on that grid, relative */
	int mediump_bits;      /* mantissa bits the error bound assumes of mediump arithmetic: 10,
	                          GLSL ES's minimum (llvmpipe sums texture-fed mediump values in
	                          float16; a driver that does better only beats the bound) */
	int half2;             /* gemm's precision 2 uses GL_NV_gpu_shader5's f16vec2 (1), or
	                          mediump vec2 (0: the extension missing, refused by the compiler,
	                          or spatial_opts.no_half2) */
	int persistent_map;    /* host arrays in and out through staging buffers mapped once
	                          (gl_stage's mapped way: GL_EXT_buffer_storage, unless
	                          spatial_opts.no_persistent_map); a deconv context on this one
	                          does the same */
};

struct spatial_stats {
	int algorithm;   /* the algorithm that produced the result */
	int measured;    /* 1: auto measured its candidates during this call */
	int timed;       /* enum gpu_timing: how stage_ms were taken (none unless time_stages) */
	double stage_ms[GPU_STAGE_COUNT]; /* with time_stages: pack, conv, download */
	double gpu_ms;   /* with time_stages: pack + conv, the GPU's work without the transfers */
	double upload_ms;/* host clock: the input copied into GPU memory */
	double download_ms; /* host clock: the result read back into host memory (or copied to
	                       the caller's GL buffer), its wait for the GPU's work included */
	double wall_ms;  /* host clock, the whole call */
	long singles, fused; /* interp: taps read alone and pairs fused, over all output planes */
	int tiles_x, tiles_y;  /* images: the tiles the image ran in (1 x 1 untiled) */
	unsigned conv_program, pack_program; /* the programs that ran (program cache ids; 0: none,
	                                        as gemm's and shared's pack): one id is one (shader,
	                                        key), so one set of defines, whichever path chose
	                                        the algorithm */
};

struct spatial_ctx;

int spatial_ctx_create(struct program_cache *pc, const struct egl_info *info,
                       const struct spatial_opts *o, const struct log_sink *log,
                       struct spatial_ctx **out, char err[SPATIAL_ERR_LEN]);
void spatial_ctx_destroy(struct spatial_ctx *s); /* NULL-safe */
const struct spatial_caps *spatial_ctx_caps(const struct spatial_ctx *s);

const char *spatial_strerror(int code);

/* The cancellation the context's runs look at before each further dispatch (NULL: none; not
 * owned, kept until set again). A run it stops returns SPATIAL_E_CANCELLED. */
void spatial_ctx_set_cancel(struct spatial_ctx *s, struct gles_cancel *c);
/* spatial_algorithm_names[alg]; "?" out of range */
const char *spatial_algorithm_name(int alg);

/* The output size of c, or SPATIAL_E_ARG with a message (non-positive sizes, planes not
 * divisible by groups, an output below 1x1). */
int spatial_conv_output(const struct spatial_conv *c, int *out_h, int *out_w,
                        char err[SPATIAL_ERR_LEN]);

/* y = conv2d(x, weight) + bias, float32 NCHW host arrays: in (B, Cin, H, W), weight (Cout,
 * Cin / groups, kH, kW), bias (Cout) or NULL, out (B, Cout, OH, OW). 0 or a negative
 * spatial_error with a message; st may be NULL. */
int spatial_conv2d(struct spatial_ctx *s, const struct spatial_conv *c, const float *in,
                   const float *weight, const float *bias, float *out, struct spatial_stats *st,
                   char err[SPATIAL_ERR_LEN]);

/* As spatial_conv2d, with the input and the output in GL buffer objects of this context's share
 * group (in_buf read and out_buf written from offset 0, each at least the tensor's bytes: else
 * SPATIAL_E_ARG), copied on the GPU into and out of the engine's buffers, with no host transfer;
 * weight and bias stay host arrays. A shader's writes to in_buf must be made visible by the
 * caller (glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT)) first; out_buf is written by a buffer
 * copy, seen by every command issued after the call. Binds GL_COPY_READ_BUFFER and
 * GL_COPY_WRITE_BUFFER. */
int spatial_conv2d_gl(struct spatial_ctx *s, const struct spatial_conv *c, unsigned in_buf,
                      const float *weight, const float *bias, unsigned out_buf,
                      struct spatial_stats *st, char err[SPATIAL_ERR_LEN]);

/* ---- images: the FFT path's convolve (gles/bloom.h, BLOOM_OP_CONVOLVE), computed directly:
 * O[y, x] = sum over j, i of I[y - (j - cy), x - (i - cx)] * K[j, i], zero outside the image,
 * output at the image's size. The image becomes RGBA as there (1 channel: gray in R, G, B and
 * alpha 1; 2: gray and alpha; 3: alpha 1), non-finite samples count as 0. A kernel of 1-2
 * channels, or whose R, G and B are equal everywhere, applies its first channel to all four;
 * otherwise R, G, B apply to R, G, B and the Rec. 709 luminance (0.2126 R + 0.7152 G +
 * 0.0722 B) to alpha. The result has the image's channels, two more when a colour kernel meets
 * a 1-2 channel image (as the FFT path), the missing alpha not returned. The kernel is used at
 * its own size (the FFT path's kernel-scale resampling is not done here). ---- */
struct spatial_image_opts {
	int center_x, center_y; /* kernel centre in pixels; -1: floor(kw / 2), floor(kh / 2) */
	int normalize;          /* 1: divide the kernel by the sum of its luminance */
	int precision;          /* enum spatial_precision */
	int algorithm;          /* auto, batch4 (direct fetches) or interp */
	int time_stages;        /* as spatial_conv.time_stages */
};

/* Writes a new image into *out (free with image_free). 0 or a negative spatial_error:
 * SPATIAL_E_ARG for a bad image, kernel (not finite), centre, or a luminance summing to 0
 * with normalize. */
int spatial_convolve_image(struct spatial_ctx *s, const struct image *in,
                           const struct image *kernel, const struct spatial_image_opts *o,
                           struct image *out, struct spatial_stats *st,
                           char err[SPATIAL_ERR_LEN]);

/* A cost estimate for the spatial-vs-FFT choice: the GPU milliseconds of
 * spatial_convolve_image's direct algorithm for a w x h image and a kw x kh kernel at a
 * precision, from a line a + b * w * h * kw * kh fitted to two runs measured on this context
 * the first time a precision is asked (then remembered). 0 or a negative spatial_error. */
int spatial_image_estimate(struct spatial_ctx *s, int w, int h, int kw, int kh, int precision,
                           double *ms, char err[SPATIAL_ERR_LEN]);

/* ---- GPU-resident tensors (gles/deconv builds on these) ---- */

/* 0 when `algorithm` (not auto) can run g at this precision on this context; otherwise
 * SPATIAL_E_UNSUPPORTED or SPATIAL_E_TOO_LARGE with the reason. */
int spatial_can_run(struct spatial_ctx *s, const struct spatial_geom *g, int algorithm,
                    int precision, char err[SPATIAL_ERR_LEN]);

/* Runs g (spatial_plan.h) from the source tensor in shader-storage buffer in_buf (float32
 * NCHW) into out_buf (float32, (B, out_c, dst_h, dst_w)), writing exactly the grid's elements.
 * weight and bias (NULL: 0) are host arrays, uploaded on every call. 0 or a negative
 * spatial_error; st may be NULL. */
int spatial_run(struct spatial_ctx *s, const struct spatial_geom *g, int algorithm,
                int precision, const float *weight, const float *bias, unsigned in_buf,
                unsigned out_buf, struct spatial_stats *st, char err[SPATIAL_ERR_LEN]);

#endif
