/* The tensors and parameters of a convolution as the engine's description of it: the input's
 * rank (3-D: batch 1), the weight's planes against the input's and the groups, the bias's
 * length, and the output's shape, checked before any GPU work. Pure CPU. */
#ifndef FFTBLOOM_CONV_SHAPE_H
#define FFTBLOOM_CONV_SHAPE_H

#include <stddef.h>

#include "gles/deconv.h"
#include "gles/spatial.h"
#include "gles/params.h"

#define CONV_SHAPE_ERR_LEN 512

/* For input x (rank xdim 3 or 4, shape xs), weight (shape ws: Cout, Cin / groups, kH, kW) and a
 * bias of bias_len values (-1: none): the spatial convolution *sc and the output's rank and
 * shape. 0, or -1 with a message naming what does not fit. */
int conv2d_describe(int xdim, const size_t xs[4], const size_t ws[4], long bias_len,
                    const struct conv_params *cp, struct spatial_conv *sc, int *out_ndim,
                    size_t out_shape[4], char err[CONV_SHAPE_ERR_LEN]);

/* The same for the transposed convolution: weight (Cin, Cout / groups, kH, kW). */
int deconv_describe(int xdim, const size_t xs[4], const size_t ws[4], long bias_len,
                    const struct conv_params *cp, struct deconv_conv *dc, int *out_ndim,
                    size_t out_shape[4], char err[CONV_SHAPE_ERR_LEN]);

#endif
