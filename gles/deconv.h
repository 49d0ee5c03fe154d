/* Transposed convolution ("deconvolution") on the GPU with PyTorch's conv_transpose2d
 * semantics, and TensorFlow's SAME / VALID padding with an explicit output shape, by three
 * methods that compute the same sums:
 *   zero-insert  stride - 1 zeros between input pixels, padding, then a stride-1 convolution
 *                with the kernel rotated 180 degrees (a spatial_run with zero insertion, any
 *                spatial algorithm: the inserted zeros are stored in its input texture or
 *                staged in its shared memory, and multiplied like any other input);
 *   overlap-add  Caffe's: each input pixel times the kernel gives a patch (one GEMM pass into a
 *                column buffer), then the patches are summed at stride offsets and cropped.
 *                On a GPU the scatter-add of overlapping patches races; GLES 3.1 has no float
 *                atomics (a compare-and-swap loop on the bits would be slow under contention
 *                and would sum in an order that changes from run to run), so the sum is a
 *                gather, as Caffe's col2im kernel does it: one invocation per output element
 *                adds the patch entries that cover it, in a fixed order: deterministic, no
 *                atomics, no race;
 *   subkernel    the kernel split into stride_h x stride_w small kernels (taps j with
 *                j * dilation = phase mod stride), each a stride-1 convolution of the input
 *                (spatial_run, dilation / gcd(dilation, stride)), whose results land
 *                interleaved in the output (depth-to-space, done by spatial_run's output step
 *                and offset); phases without taps get the bias.
 *   auto         per shape class, each method measured once on first use, the fastest
 *                remembered for the context.
 * For output (oy, ox): out = bias[co] + sum over ci of co's group and taps (j, i) with
 * oy + pad_top = iy * stride_h + j * dil_h (likewise x) of x[ci, iy, ix] * w[ci, co', j, i].
 * All in float32 (spatial precision 3).
 *
 * GL contract: as gles/spatial.h (one context thread; programs, shader-storage bindings 0-4,
 * uniform-buffer binding 0, texture and image units left bound). create compiles the
 * overlap-add programs; buffers grow on first use of a size and are kept. */
#ifndef FFTBLOOM_DECONV_H
#define FFTBLOOM_DECONV_H

#include "gles/spatial.h"

#define DECONV_ERR_LEN SPATIAL_ERR_LEN

/* The same codes as enum spatial_error. */
enum deconv_error {
	DECONV_OK = 0,
	DECONV_E_ARG = SPATIAL_E_ARG,                 /* impossible shape or parameter (message) */
	DECONV_E_TOO_LARGE = SPATIAL_E_TOO_LARGE,
	DECONV_E_UNSUPPORTED = SPATIAL_E_UNSUPPORTED, /* conv_algorithm cannot run a shape */
	DECONV_E_GPU = SPATIAL_E_GPU,
	DECONV_E_NOMEM = SPATIAL_E_NOMEM,
	DECONV_E_CANCELLED = SPATIAL_E_CANCELLED,     /* deconv_ctx_set_cancel's cancellation */
};

enum deconv_method { DECONV_AUTO = 0, DECONV_ZERO_INSERT, DECONV_OVERLAP_ADD, DECONV_SUBKERNEL };
#define DECONV_METHOD_COUNT 4
/* "auto", "zero-insert", "overlap-add", "subkernel", indexed by enum deconv_method, NULL after
 * the last (gles/names.c). */
extern const char *const deconv_method_names[DECONV_METHOD_COUNT + 1];

enum deconv_padding_mode { DECONV_PAD_TORCH = 0, DECONV_PAD_TF_SAME, DECONV_PAD_TF_VALID };
#define DECONV_PAD_MODE_COUNT 3
/* "torch", "tf_same", "tf_valid", indexed by enum deconv_padding_mode, NULL after the last
 * (gles/names.c). */
extern const char *const deconv_padding_mode_names[DECONV_PAD_MODE_COUNT + 1];

/* The output of c and the padding before the first row and column: torch: out = (in - 1) *
 * stride - 2 pad + dil (k - 1) + out_pad + 1, pad_top = pad; TF SAME: pad_top = floor(max((in
 * - 1) stride + dk - out, 0) / 2) (the odd pixel at the bottom / right), VALID: 0. Errors
 * (DECONV_E_ARG, message): non-positive sizes, planes not divisible by groups, output_padding
 * neither below the stride nor below the dilation, an output below 1x1, a TF output shape the
 * input does not give (SAME: ceil(out / stride) = in; VALID: ceil((out - dk + 1) / stride) =
 * in), padding or output_padding given with a TF mode. */
int deconv_output(const struct deconv_conv *c, int *out_h, int *out_w, int *pad_top,
                  int *pad_left, char err[DECONV_ERR_LEN]);

struct deconv_stats {
	int method;         /* the method that produced the result */
	int conv_algorithm; /* zero-insert, subkernel: the spatial algorithm of the (last) conv */
	int measured;       /* 1: auto measured the methods during this call */
	int timed;          /* enum gpu_timing: how stage_ms were taken (none unless time_stages) */
	double stage_ms[GPU_STAGE_COUNT]; /* with time_stages: deconv, download */
	double gpu_ms;      /* with time_stages: the method's GPU work, without the transfers */
	double upload_ms;   /* host clock: the input copied into GPU memory */
	double download_ms; /* host clock: the result read back into host memory (or copied to
	                       the caller's GL buffer), its wait for the GPU's work included */
	double wall_ms;     /* host clock, the whole call */
};

struct deconv_ctx;

/* sp: the spatial context the zero-insert and subkernel methods run on (not owned; same GL
 * context and thread); host arrays in and out go its way (spatial_caps.persistent_map), the
 * driver's buffer updates and maps without one. */
int deconv_ctx_create(struct program_cache *pc, const struct egl_info *info,
                      struct spatial_ctx *sp, const struct log_sink *log, struct deconv_ctx **out,
                      char err[DECONV_ERR_LEN]);
void deconv_ctx_destroy(struct deconv_ctx *d); /* NULL-safe */

/* The cancellation deconv_run looks at before each further dispatch, its own and those of the
 * spatial runs underneath (which look at the spatial context's: set both, as engine_set_cancel
 * does). NULL: none; not owned. A run it stops returns DECONV_E_CANCELLED, no result. */
void deconv_ctx_set_cancel(struct deconv_ctx *d, struct gles_cancel *c);

/* out = conv_transpose2d(in, weight) + bias, float32 NCHW host arrays: in (B, Cin, H, W),
 * weight (Cin, Cout / groups, kH, kW), bias (Cout) or NULL, out (B, Cout, OH, OW) as
 * deconv_output gives. 0 or a negative deconv_error with a message; st may be NULL. */
int deconv_run(struct deconv_ctx *d, const struct deconv_conv *c, const float *in,
               const float *weight, const float *bias, float *out, struct deconv_stats *st,
               char err[DECONV_ERR_LEN]);

/* As deconv_run, with the input and the output in GL buffer objects of this context's share
 * group (read and written from offset 0, each at least the tensor's bytes: else DECONV_E_ARG),
 * copied on the GPU into and out of the engine's buffers, with no host transfer; weight and bias
 * stay host arrays. A shader's writes to in_buf must be made visible by the caller first
 * (glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT)); out_buf is written by a buffer copy. Binds
 * GL_COPY_READ_BUFFER and GL_COPY_WRITE_BUFFER. */
int deconv_run_gl(struct deconv_ctx *d, const struct deconv_conv *c, unsigned in_buf,
                  const float *weight, const float *bias, unsigned out_buf,
                  struct deconv_stats *st, char err[DECONV_ERR_LEN]);

/* deconv_method_names[method]; "?" out of range */
const char *deconv_method_name(int method);
const char *deconv_strerror(int code);

#endif
