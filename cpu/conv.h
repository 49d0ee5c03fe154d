/* The CPU engine's spatial and transposed convolutions (Torch's SpatialConvolution and
 * PyTorch's conv_transpose2d, the sums gles/spatial.h and gles/deconv.h compute), in float32 on
 * the host: im2col or col2im around the engine's own GEMM (cpu/gemm.h: Debian's serial OpenBLAS
 * is not safe to call from several threads at once), or direct loops (an OpenBLAS saxpy a tap
 * and output row) for conv2d where a group has one or two output planes; split over
 * core/parallel.h's threads, every block's GEMM on its thread at once.
 *
 * Geometry: the caller resolves the problem (Torch or TF padding, output size) with the GPU
 * engine's pure shape helpers (gles/conv_shape.h, spatial_conv_output, deconv_output) and passes
 * core/conv_params.h's structs with the sizes (cpu_conv2d, cpu_conv2d_transpose), or a
 * cpu_conv_geom, the general form both map to.
 *   conv2d:    y[b, co, oy, ox] = bias[co] + sum over ci of co's group, j < k_h, i < k_w of
 *              w[co, ci - gstart, j, i] * x[b, ci, oy*stride_h - pad_h + j*dil_h,
 *                                              ox*stride_w - pad_w + i*dil_w]
 *   transpose: y[b, co, oy, ox] = bias[co] + sum over ci of co's group and (iy, j), (ix, i) with
 *              oy + pad_h = iy*stride_h + j*dil_h, ox + pad_w = ix*stride_w + i*dil_w, of
 *              x[b, ci, iy, ix] * w[ci, co - gstart, j, i]
 * with x zero outside its planes. Every positive out_h, out_w is a well-defined sum; the Torch
 * sizes are (in + 2 pad - dil (k - 1) - 1) / stride + 1 and (in - 1) stride - 2 pad +
 * dil (k - 1) + out_pad + 1.
 *
 * Precision: float32 storage and float32 sums (FMA where the CPU has it), within
 * spatial_plan_bound's float32 bound of the exact sum, which meets every GPU precision level's
 * bound (the GPU's Q2.6 levels also clamp values beyond +-1.984375; the CPU never does; the
 * direct loops skip a zero weight's tap, so there 0 x Inf adds 0 rather than NaN). The
 * blocks a call splits the work into depend on the shape only, never on the threads, so a
 * result is the same bits on any number of threads. */
#ifndef FFTBLOOM_CPU_CONV_H
#define FFTBLOOM_CPU_CONV_H

#include <stddef.h>

#include "core/conv_params.h"

#define CPU_CONV_ERR_LEN 512

enum cpu_conv_error {
	CPU_CONV_OK = 0,
	CPU_CONV_E_ARG = -1,       /* a bad shape or parameter (message names it) */
	CPU_CONV_E_NOMEM = -2,     /* the scratch buffers could not be allocated */
	CPU_CONV_E_TOO_LARGE = -3, /* a tensor beyond CPU_CONV_MAX_ELEMS or a size that overflows */
};

/* The largest element count of any one tensor (the same as the GPU engine's). */
#define CPU_CONV_MAX_ELEMS (1ull << 30)

struct cpu_conv_geom {
	int batch, in_c, in_h, in_w; /* input (B, Cin, H, W), NCHW float32 */
	int out_c, groups;           /* output planes; in_c and out_c multiples of groups (0: 1) */
	int k_h, k_w;                /* conv2d weight (out_c, in_c / groups, k_h, k_w);
	                                transpose weight (in_c, out_c / groups, k_h, k_w) */
	int stride_h, stride_w;      /* >= 1 (0: 1) */
	int dil_h, dil_w;            /* >= 1 (0: 1) */
	int pad_h, pad_w;            /* padding before the first row and column (any sign:
	                                negative crops); Torch's padding, or TF's pad_top/left */
	int out_h, out_w;            /* the output (B, out_c, out_h, out_w), >= 1 */
	int threads;                 /* threads at most (par_each's); 0: par_cores() */
};

/* y = conv2d(x, weight) + bias (NULL: none) into out. 0 or a negative cpu_conv_error with a
 * message; out is then unspecified. Thread-safe (no state). */
int cpu_conv2d_geom(const struct cpu_conv_geom *g, const float *in, const float *weight,
                    const float *bias, float *out, char err[CPU_CONV_ERR_LEN]);

/* y = conv_transpose2d(x, weight) + bias (NULL: none) into out, by col2im over the GEMM. The GPU
 * engine's three methods (zero-insert, overlap-add, subkernel) are the same sums in other orders:
 * on the CPU they all run this one. 0 or a negative cpu_conv_error with a message. */
int cpu_conv2d_transpose_geom(const struct cpu_conv_geom *g, const float *in,
                              const float *weight, const float *bias, float *out,
                              char err[CPU_CONV_ERR_LEN]);

/* The engines' entry points. conv2d as spatial_conv2d takes it (precision and algorithm are
 * ignored: float32 meets every level), out_h and out_w as spatial_conv_output gave them;
 * threads: the most threads to use (0: par_cores(), 1: the calling thread alone). */
int cpu_conv2d(const struct spatial_conv *c, int out_h, int out_w, const float *in,
               const float *weight, const float *bias, float *out, int threads,
               char err[CPU_CONV_ERR_LEN]);

/* The transposed convolution as deconv_run takes it (method and conv_algorithm ignored), with
 * out_h, out_w, pad_top and pad_left as deconv_output gave them (TF modes resolved there). */
int cpu_conv2d_transpose(const struct deconv_conv *c, int out_h, int out_w, int pad_top,
                         int pad_left, const float *in, const float *weight, const float *bias,
                         float *out, int threads, char err[CPU_CONV_ERR_LEN]);

const char *cpu_conv_strerror(int code);

/* 1 when the linked OpenBLAS is its serial build (openblas_get_parallel() == 0), which the
 * engine's own threads require; 0 for a threaded build (pthreads or OpenMP). */
int cpu_conv_blas_serial(void);

/* The kernels OpenBLAS chose for this CPU at load (its core name: "Haswell", "SkylakeX", ...). */
const char *cpu_conv_blas_core(void);

/* 1 with a line in hint when OpenBLAS runs kernels older than the CPU (0.3.21's detection does
 * not know every CPU: on a Sapphire Rapids VM it falls back to Prescott's SSE3 kernels, and its
 * GEMM runs 3-4x slower than with SkylakeX's), naming the OPENBLAS_CORETYPE value that selects
 * kernels the CPU has (read by OpenBLAS when the process starts); else 0. */
int cpu_conv_blas_hint(char *hint, size_t len);

#endif
