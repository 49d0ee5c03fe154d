/* The parameters of a spatial convolution (conv2d) and of a transposed convolution
 * (conv2d-transpose), declared once as option tables: the CLI's long options now, the request
 * table's rows later (query and JSON names with '_' for '-'). Pairs ("P" or "PH,PW") are text
 * in the table and become numbers in conv2d_params_resolve / conv2d_transpose_params_resolve,
 * which check their bounds. The enum indices are gles/spatial.h's and gles/deconv.h's. */
#ifndef FFTBLOOM_CONV_PARAMS_H
#define FFTBLOOM_CONV_PARAMS_H

#include "protocol/opts.h"

#define CONV_PAIR_MAX 65535 /* largest padding, stride, dilation, output-padding */
#define CONV_SHAPE_MAX (1 << 20) /* largest output-shape side */

struct conv2d_params {
	char padding[OPT_STR_MAX], stride[OPT_STR_MAX], dilation[OPT_STR_MAX];
	int groups, precision, algorithm;
};

struct conv2d_transpose_params {
	char stride[OPT_STR_MAX], padding[OPT_STR_MAX], output_padding[OPT_STR_MAX];
	char dilation[OPT_STR_MAX], output_shape[OPT_STR_MAX];
	int groups, method, padding_mode, conv_algorithm;
};

/* Numbers for the engine: (h, w) pairs, the rest as the table's indices. */
struct conv_numbers {
	int pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
	int out_pad_h, out_pad_w; /* transpose */
	int out_h, out_w;         /* transpose: output-shape, 0 and 0 when not given */
	int groups, precision, algorithm, method, padding_mode;
};

extern const struct opt_def conv2d_params_table[];
extern const size_t conv2d_params_table_len;
extern const struct opt_def conv2d_transpose_params_table[];
extern const size_t conv2d_transpose_params_table_len;

/* Parses "N" (both the same) or "H,W" with each in [lo, hi]. 0, or OPT_E_VALUE / OPT_E_BOUNDS
 * with a message naming the parameter. */
int conv_pair_parse(const char *name, const char *text, int lo, int hi, int *h, int *w,
                    char err[OPT_ERR_LEN]);

/* The tables' values as numbers; 0 or an opt_error with a message naming the parameter. */
int conv2d_params_resolve(const struct conv2d_params *p, struct conv_numbers *n,
                          char err[OPT_ERR_LEN]);
int conv2d_transpose_params_resolve(const struct conv2d_transpose_params *p,
                                    struct conv_numbers *n, char err[OPT_ERR_LEN]);

#endif
