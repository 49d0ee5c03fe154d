/* Planning for the transposed convolution (gles/deconv.h), pure CPU: the output size and
 * padding of each padding mode (deconv_output), the problem as the methods see it, and the
 * phases of the sub-kernel method. No GL. */
#ifndef FFTBLOOM_DECONV_PLAN_H
#define FFTBLOOM_DECONV_PLAN_H

#include "gles/deconv.h"

/* One axis of the problem: out + pad = in_index * stride + tap * dil. */
struct deconv_axis {
	int in, out, k, s, p, d;
};

struct deconv_problem {
	int batch, in_c, out_c, groups, cpi, cpo; /* cpi, cpo: planes per group in and out */
	struct deconv_axis y, x;
};

/* The problem c poses (deconv_output's sizes, defaults for 0 dilations and groups) after
 * checking the arrays are given and the method and algorithm are known. 0 or DECONV_E_ARG. */
int deconv_plan_problem(const struct deconv_conv *c, const float *in, const float *weight,
                        const float *out, struct deconv_problem *pr, char err[DECONV_ERR_LEN]);

/* The bytes of the problem's three float32 tensors: the input (B, Cin, H, W), the weight (Cin,
 * Cout / groups, kH, kW) and the output (B, Cout, OH, OW), each through the checked multiply
 * (core/checked.h). 0, or DECONV_E_TOO_LARGE with a message when a count or byte size
 * overflows, or a tensor has more than SPATIAL_PLAN_MAX_ELEMS elements (the shaders' indices
 * are 32-bit): a size that would wrap (to 0 even: a 2^64-byte output) is refused here, before
 * any buffer is made from it. */
int deconv_plan_bytes(const struct deconv_problem *pr, size_t *in_b, size_t *w_b, size_t *out_b,
                      char err[DECONV_ERR_LEN]);

/* One phase r of an axis: taps j = j0 + m * s' (m < L) with j * d = r mod s; outputs
 * o = q * s + r - p for q in [qmin, qmin + Q); the input index of tap m is q - e - m * D. */
struct deconv_phase {
	int j0, L, e, qmin, Q, sp, D;
};

void deconv_plan_phase(const struct deconv_axis *a, int r, struct deconv_phase *ph);

#endif
