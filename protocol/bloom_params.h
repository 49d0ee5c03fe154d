/* The parameters of a bloom or convolve request, declared once as an option table: the CLI's
 * long options and the HTTP API's query / JSON names (with '_' for '-') are the same names with
 * the same bounds and messages. */
#ifndef FFTBLOOM_BLOOM_PARAMS_H
#define FFTBLOOM_BLOOM_PARAMS_H

#include "protocol/opts.h"

enum bloom_op { BLOOM_OP_BLOOM = 0, BLOOM_OP_CONVOLVE = 1 };
enum bloom_composite { BLOOM_COMPOSITE_ADD = 0, BLOOM_COMPOSITE_MIX };
enum bloom_normalize { BLOOM_NORMALIZE_LUMINANCE = 0, BLOOM_NORMALIZE_NONE };
enum bloom_precision { BLOOM_FP32 = 0, BLOOM_FP16 };
enum bloom_pad { BLOOM_PAD_GOOD = 0, BLOOM_PAD_POW2 };
enum bloom_center_mode { BLOOM_CENTER_DEFAULT = 0, BLOOM_CENTER_PIXEL, BLOOM_CENTER_UV };

struct bloom_params {
	char kernel[OPT_STR_MAX];        /* CLI: a kernel image file; HTTP: a registered name */
	char kernel_preset[OPT_STR_MAX]; /* NAME[:k=v,...]: gaussian, glare, aperture */
	double threshold, knee, clamp_max, intensity, mix, kernel_scale;
	int composite, normalize, precision, pad, technique, twiddles;
	char kernel_center[OPT_STR_MAX]; /* "X,Y" pixels or "uv:U,V" */
};

extern const struct opt_def bloom_params_table[];
extern const size_t bloom_params_table_len;

/* Defaults for the operation: convolve does not normalise unless asked; bloom does. */
int bloom_params_defaults(struct bloom_params *p, int op);

/* Parses kernel_center: *mode BLOOM_CENTER_DEFAULT when empty. Returns 0 or OPT_E_VALUE with a
 * message naming the parameter. */
int bloom_params_center(const struct bloom_params *p, int *mode, double *x, double *y,
                        char err[OPT_ERR_LEN]);

#endif
