/* The conv2d and conv2d-transpose parameter tables; see conv_params.h. */
#include "protocol/conv_params.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define C(f) offsetof(struct conv2d_params, f)
#define T(f) offsetof(struct conv2d_transpose_params, f)

const struct opt_def conv2d_params_table[] = {
	{"padding", OPT_STRING, 0, 32, "0", NULL,
	 "zero padding on each side: P, or PH,PW (0-65535)", NULL, C(padding)},
	{"stride", OPT_STRING, 0, 32, "1", NULL, "stride: S, or SH,SW (1-65535)", NULL, C(stride)},
	{"dilation", OPT_STRING, 0, 32, "1", NULL,
	 "spacing of the kernel taps: D, or DH,DW (1-65535; Torch7's SpatialConvolution has none, "
	 "PyTorch's conv2d does)", NULL, C(dilation)},
	{"groups", OPT_INT, 1, 65536, "1", NULL,
	 "input and output planes split into this many groups (PyTorch's groups)", NULL, C(groups)},
	{"precision", OPT_INT, 0, 3, "3", NULL,
	 "0: Q2.6 storage (8-bit, values in [-1.98, 1.98], clamped), mediump arithmetic; 1: Q2.6, "
	 "highp; 2: float16 storage, mediump; 3: float32", NULL, C(precision)},
	{"algorithm", OPT_ENUM, 0, 0, "auto", "auto|batch4|interp|planes4|shared",
	 "batch4: four images a texel (batch a multiple of 4), filters in uniform blocks; interp: "
	 "batch4 with pairs of taps read by one bilinear fetch where the precision level's error "
	 "allows; planes4: four input "
	 "planes a texel, filters in a texture, any batch; shared: storage buffers through shared "
	 "memory; auto: the fastest measured for the shape", NULL, C(algorithm)},
};
const size_t conv2d_params_table_len = sizeof conv2d_params_table / sizeof conv2d_params_table[0];

const struct opt_def conv2d_transpose_params_table[] = {
	{"stride", OPT_STRING, 0, 32, "1", NULL, "stride: S, or SH,SW (1-65535)", NULL, T(stride)},
	{"padding", OPT_STRING, 0, 32, "0", NULL,
	 "PyTorch's padding: dilation * (kernel - 1) - P zeros around the zero-inserted input: P, "
	 "or PH,PW (0-65535)", NULL, T(padding)},
	{"output-padding", OPT_STRING, 0, 32, "0", NULL,
	 "PyTorch's output_padding, rows and columns added at the bottom and right: OP, or OPH,OPW "
	 "(each below the stride or the dilation)", NULL, T(output_padding)},
	{"dilation", OPT_STRING, 0, 32, "1", NULL, "spacing of the kernel taps: D, or DH,DW", NULL,
	 T(dilation)},
	{"groups", OPT_INT, 1, 65536, "1", NULL,
	 "groups (the weight is (in, out / groups, kH, kW))", NULL, T(groups)},
	{"method", OPT_ENUM, 0, 0, "auto", "auto|zero-insert|overlap-add|subkernel",
	 "zero-insert: zeros between input pixels, then a stride-1 convolution; overlap-add: patches "
	 "summed at stride offsets (gathered, no atomics); subkernel: stride^2 small kernels and "
	 "depth-to-space; auto: the fastest measured for the shape", NULL, T(method)},
	{"padding-mode", OPT_ENUM, 0, 0, "torch", "torch|tf_same|tf_valid",
	 "torch: padding and output-padding as PyTorch; tf_same, tf_valid: TensorFlow's SAME and "
	 "VALID for output-shape (SAME puts the odd padding pixel at the bottom and right)", NULL,
	 T(padding_mode)},
	{"output-shape", OPT_STRING, 0, 32, "", NULL,
	 "TF modes: the output H,W (default: SAME in * stride, VALID in * stride + max(kernel - "
	 "stride, 0), as Keras)", NULL, T(output_shape)},
	{"conv-algorithm", OPT_ENUM, 0, 0, "auto", "auto|batch4|interp|planes4|shared",
	 "the spatial convolution algorithm under zero-insert and subkernel (conv2d's --algorithm)",
	 NULL, T(conv_algorithm)},
};
const size_t conv2d_transpose_params_table_len =
	sizeof conv2d_transpose_params_table / sizeof conv2d_transpose_params_table[0];

/* One integer of a pair: the whole of [s, e) in [lo, hi]. */
static int parse_int(const char *s, const char *e, int lo, int hi, int *v)
{
	if (s == e || e - s > 12)
		return OPT_E_VALUE;
	char buf[16];
	memcpy(buf, s, (size_t)(e - s));
	buf[e - s] = 0;
	char *end;
	errno = 0;
	long x = strtol(buf, &end, 10);
	if (*end || errno || buf[0] == '+' || buf[0] == ' ')
		return OPT_E_VALUE;
	if (x < lo || x > hi)
		return OPT_E_BOUNDS;
	*v = (int)x;
	return 0;
}

int conv_pair_parse(const char *name, const char *text, int lo, int hi, int *h, int *w,
                    char err[OPT_ERR_LEN])
{
	const char *comma = strchr(text, ',');
	const char *end = text + strlen(text);
	int rc = parse_int(text, comma ? comma : end, lo, hi, h);
	if (!rc)
		rc = comma ? parse_int(comma + 1, end, lo, hi, w) : 0;
	if (!rc && !comma)
		*w = *h;
	if (rc == OPT_E_VALUE)
		snprintf(err, OPT_ERR_LEN, "%s: '%.40s' is not N or N,M", name, text);
	else if (rc)
		snprintf(err, OPT_ERR_LEN, "%s: '%.40s' is out of bounds [%d, %d]", name, text, lo, hi);
	return rc;
}

int conv2d_params_resolve(const struct conv2d_params *p, struct conv_numbers *n,
                          char err[OPT_ERR_LEN])
{
	memset(n, 0, sizeof *n);
	int rc = conv_pair_parse("padding", p->padding, 0, CONV_PAIR_MAX, &n->pad_h, &n->pad_w, err);
	if (!rc)
		rc = conv_pair_parse("stride", p->stride, 1, CONV_PAIR_MAX, &n->stride_h, &n->stride_w, err);
	if (!rc)
		rc = conv_pair_parse("dilation", p->dilation, 1, CONV_PAIR_MAX, &n->dil_h, &n->dil_w, err);
	n->groups = p->groups;
	n->precision = p->precision;
	n->algorithm = p->algorithm;
	return rc;
}

int conv2d_transpose_params_resolve(const struct conv2d_transpose_params *p,
                                    struct conv_numbers *n, char err[OPT_ERR_LEN])
{
	memset(n, 0, sizeof *n);
	int rc = conv_pair_parse("stride", p->stride, 1, CONV_PAIR_MAX, &n->stride_h, &n->stride_w, err);
	if (!rc)
		rc = conv_pair_parse("padding", p->padding, 0, CONV_PAIR_MAX, &n->pad_h, &n->pad_w, err);
	if (!rc)
		rc = conv_pair_parse("output-padding", p->output_padding, 0, CONV_PAIR_MAX, &n->out_pad_h,
		                     &n->out_pad_w, err);
	if (!rc)
		rc = conv_pair_parse("dilation", p->dilation, 1, CONV_PAIR_MAX, &n->dil_h, &n->dil_w, err);
	if (!rc && p->output_shape[0]) {
		if (!strchr(p->output_shape, ',')) {
			snprintf(err, OPT_ERR_LEN, "output-shape: '%.40s' is not H,W", p->output_shape);
			return OPT_E_VALUE;
		}
		rc = conv_pair_parse("output-shape", p->output_shape, 1, CONV_SHAPE_MAX, &n->out_h,
		                     &n->out_w, err);
	}
	if (!rc && p->output_shape[0] && p->padding_mode == 0) {
		snprintf(err, OPT_ERR_LEN, "output-shape is for padding-mode tf_same or tf_valid");
		return OPT_E_VALUE;
	}
	n->groups = p->groups;
	n->method = p->method;
	n->padding_mode = p->padding_mode;
	n->algorithm = p->conv_algorithm;
	n->precision = 3;
	return rc;
}
