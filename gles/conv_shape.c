/* Convolution shapes; see conv_shape.h. */
#include "gles/conv_shape.h"

#include <stdio.h>
#include <string.h>

#include "core/checked.h"

#define SIDE_MAX (1 << 24) /* a tensor axis the engine takes: the int fields hold it */

static int axes(int xdim, const size_t xs[4], const size_t ws[4], size_t d[4], char *err)
{
	int three = xdim == 3;
	d[0] = three ? 1 : xs[0];
	d[1] = xs[three ? 0 : 1];
	d[2] = xs[three ? 1 : 2];
	d[3] = xs[three ? 2 : 3];
	for (int i = 0; i < 4; i++)
		if (d[i] > SIDE_MAX || ws[i] > SIDE_MAX) {
			snprintf(err, CONV_SHAPE_ERR_LEN, "a tensor axis of more than %d", SIDE_MAX);
			return -1;
		}
	return 0;
}

int conv2d_describe(int xdim, const size_t xs[4], const size_t ws[4], long bias_len,
                    const struct conv_params *cp, struct spatial_conv *sc, int *out_ndim,
                    size_t out_shape[4], char err[CONV_SHAPE_ERR_LEN])
{
	size_t d[4];
	if (axes(xdim, xs, ws, d, err))
		return -1;
	memset(sc, 0, sizeof *sc);
	*sc = (struct spatial_conv){
		.batch = (int)d[0], .in_c = (int)d[1], .in_h = (int)d[2], .in_w = (int)d[3],
		.out_c = (int)ws[0], .k_h = (int)ws[2], .k_w = (int)ws[3], .pad_h = cp->pad_h,
		.pad_w = cp->pad_w, .stride_h = cp->stride_h, .stride_w = cp->stride_w,
		.dil_h = cp->dil_h, .dil_w = cp->dil_w, .groups = cp->groups,
		.precision = cp->precision, .algorithm = cp->algorithm,
	};
	size_t planes_in;
	if (checked_mul_size(ws[1], (size_t)cp->groups, &planes_in) || planes_in != d[1]) {
		snprintf(err, CONV_SHAPE_ERR_LEN, "the weight (%zu, %zu, %zu, %zu) with %d group(s) "
		         "takes %zu input planes; the input has %zu", ws[0], ws[1], ws[2], ws[3],
		         cp->groups, planes_in, d[1]);
		return -1;
	}
	if (bias_len >= 0 && (size_t)bias_len != ws[0]) {
		snprintf(err, CONV_SHAPE_ERR_LEN, "the bias has %ld values; the weight has %zu output "
		         "planes", bias_len, ws[0]);
		return -1;
	}
	int oh, ow;
	char serr[SPATIAL_ERR_LEN];
	if (spatial_conv_output(sc, &oh, &ow, serr)) {
		snprintf(err, CONV_SHAPE_ERR_LEN, "%s", serr);
		return -1;
	}
	*out_ndim = xdim;
	size_t full[4] = {(size_t)sc->batch, (size_t)sc->out_c, (size_t)oh, (size_t)ow};
	memcpy(out_shape, xdim == 3 ? full + 1 : full, (size_t)xdim * sizeof *full);
	for (int i = xdim; i < 4; i++)
		out_shape[i] = 1;
	return 0;
}

int deconv_describe(int xdim, const size_t xs[4], const size_t ws[4], long bias_len,
                    const struct conv_params *cp, struct deconv_conv *dc, int *out_ndim,
                    size_t out_shape[4], char err[CONV_SHAPE_ERR_LEN])
{
	size_t d[4], out_c;
	if (axes(xdim, xs, ws, d, err))
		return -1;
	/* the output planes, weight.shape[1] x groups: an int, never a wrapped one */
	if (checked_mul_size(ws[1], (size_t)(cp->groups > 0 ? cp->groups : 1), &out_c) ||
	    out_c > SIDE_MAX) {
		snprintf(err, CONV_SHAPE_ERR_LEN, "the weight's %zu output planes x %d groups make "
		         "more than %d output planes", ws[1], cp->groups, SIDE_MAX);
		return -1;
	}
	memset(dc, 0, sizeof *dc);
	*dc = (struct deconv_conv){
		.batch = (int)d[0], .in_c = (int)d[1], .in_h = (int)d[2], .in_w = (int)d[3],
		.out_c = (int)out_c, .k_h = (int)ws[2], .k_w = (int)ws[3],
		.stride_h = cp->stride_h, .stride_w = cp->stride_w, .pad_h = cp->pad_h,
		.pad_w = cp->pad_w, .out_pad_h = cp->out_pad_h, .out_pad_w = cp->out_pad_w,
		.dil_h = cp->dil_h, .dil_w = cp->dil_w, .groups = cp->groups,
		.padding_mode = cp->padding_mode, .out_h = cp->out_h, .out_w = cp->out_w,
		.method = cp->method, .conv_algorithm = cp->algorithm,
	};
	if (ws[0] != d[1]) {
		snprintf(err, CONV_SHAPE_ERR_LEN, "the weight (%zu, %zu, %zu, %zu) expects %zu input "
		         "planes; the input has %zu (the weight is (in, out / groups, kH, kW), as "
		         "PyTorch's)", ws[0], ws[1], ws[2], ws[3], ws[0], d[1]);
		return -1;
	}
	if (bias_len >= 0 && (size_t)bias_len != (size_t)dc->out_c) {
		snprintf(err, CONV_SHAPE_ERR_LEN, "the bias has %ld values; there are %d output planes",
		         bias_len, dc->out_c);
		return -1;
	}
	int oh, ow, pt, pl;
	char derr[DECONV_ERR_LEN];
	if (deconv_output(dc, &oh, &ow, &pt, &pl, derr)) {
		snprintf(err, CONV_SHAPE_ERR_LEN, "%s", derr);
		return -1;
	}
	*out_ndim = xdim;
	size_t full[4] = {(size_t)dc->batch, (size_t)dc->out_c, (size_t)oh, (size_t)ow};
	memcpy(out_shape, xdim == 3 ? full + 1 : full, (size_t)xdim * sizeof *full);
	for (int i = xdim; i < 4; i++)
		out_shape[i] = 1;
	return 0;
}
