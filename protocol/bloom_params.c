/* The bloom / convolve parameter table; see bloom_params.h. */
#include "protocol/bloom_params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P(f) offsetof(struct bloom_params, f)

const struct opt_def bloom_params_table[] = {
	{"kernel", OPT_STRING, 0, 0, "", NULL,
	 "kernel image (CLI: a file in any supported format; HTTP: a name registered with PUT /v1/kernels)",
	 NULL, P(kernel)},
	{"kernel-preset", OPT_STRING, 0, 200, "", NULL,
	 "built-in kernel NAME[:k=v,...]: gaussian:sigma=S, glare:core=,halo=,streaks=,length=,rotation=, "
	 "aperture:blades=,rotation=,size= (default aperture when no kernel is given)",
	 NULL, P(kernel_preset)},
	{"threshold", OPT_DOUBLE, 0, 65504, "1", NULL,
	 "bloom: keep what is brighter than this (0 keeps everything)", NULL, P(threshold)},
	{"knee", OPT_DOUBLE, 0, 65504, "0.5", NULL, "bloom: width of the soft threshold", NULL, P(knee)},
	{"clamp-max", OPT_DOUBLE, 1e-6, 3.4e38, "65472", NULL,
	 "bloom: clamp prefiltered values to this (65472: the fp16 maximum)", NULL, P(clamp_max)},
	{"intensity", OPT_DOUBLE, 0, 1000, "1", NULL, "bloom: O = I + intensity * B (composite add)",
	 NULL, P(intensity)},
	{"composite", OPT_ENUM, 0, 0, "add", "add|mix", "bloom: add the bloom, or mix it in", NULL,
	 P(composite)},
	{"mix", OPT_DOUBLE, 0, 1, "0.5", NULL, "bloom: O = (1-mix) * I + mix * B (composite mix)", NULL,
	 P(mix)},
	{"kernel-scale", OPT_DOUBLE, 0, 8, "0", NULL,
	 "resize the kernel so its larger side spans S times the image's shorter side (0: own size)",
	 NULL, P(kernel_scale)},
	{"kernel-center", OPT_STRING, 0, 64, "", NULL,
	 "kernel centre: X,Y in pixels or uv:U,V (default: pixel floor(w/2), floor(h/2))", NULL,
	 P(kernel_center)},
	{"normalize", OPT_ENUM, 0, 0, "luminance", "luminance|none",
	 "divide the kernel by the sum of its Rec. 709 luminance (bloom default; convolve: none)", NULL,
	 P(normalize)},
	{"precision", OPT_ENUM, 0, 0, "fp32", "fp32|fp16",
	 "spectra stored as float32, or float16 with float32 arithmetic", NULL, P(precision)},
	{"pad", OPT_ENUM, 0, 0, "good", "good|pow2",
	 "padded size per axis: the cheapest native FFT length, or the next power of two", NULL, P(pad)},
	{"technique", OPT_ENUM, 0, 0, "auto", "auto|shared|global|blocked",
	 "FFT technique: shared memory where a signal fits, global-memory passes, or blocked "
	 "(columns in sweeps of passes through shared memory; rows as auto)", NULL, P(technique)},
	{"twiddles", OPT_ENUM, 0, 0, "computed", "computed|table", "FFT twiddles: computed or a table",
	 NULL, P(twiddles)},
};
const size_t bloom_params_table_len = sizeof bloom_params_table / sizeof bloom_params_table[0];

int bloom_params_defaults(struct bloom_params *p, int op)
{
	char err[OPT_ERR_LEN];
	memset(p, 0, sizeof *p);
	int rc = opts_defaults(bloom_params_table, bloom_params_table_len, p, err);
	if (op == BLOOM_OP_CONVOLVE)
		p->normalize = BLOOM_NORMALIZE_NONE;
	return rc;
}

int bloom_params_center(const struct bloom_params *p, int *mode, double *x, double *y,
                        char err[OPT_ERR_LEN])
{
	const char *s = p->kernel_center;
	*mode = BLOOM_CENTER_DEFAULT;
	*x = *y = 0;
	if (!*s)
		return 0;
	int uv = 0;
	if (!strncmp(s, "uv:", 3)) {
		uv = 1;
		s += 3;
	}
	char *end;
	double a = strtod(s, &end);
	if (end == s || *end != ',')
		goto bad;
	s = end + 1;
	double b = strtod(s, &end);
	if (end == s || *end || a != a || b != b)
		goto bad;
	if (uv && (a < 0 || a > 1 || b < 0 || b > 1)) {
		snprintf(err, OPT_ERR_LEN, "kernel-center: uv coordinates must lie in [0, 1]");
		return OPT_E_BOUNDS;
	}
	if (!uv && (a < 0 || b < 0 || a > 1e6 || b > 1e6)) {
		snprintf(err, OPT_ERR_LEN, "kernel-center: pixel coordinates must be >= 0");
		return OPT_E_BOUNDS;
	}
	*mode = uv ? BLOOM_CENTER_UV : BLOOM_CENTER_PIXEL;
	*x = a;
	*y = b;
	return 0;
bad:
	snprintf(err, OPT_ERR_LEN, "kernel-center: '%.64s' is not X,Y or uv:U,V", p->kernel_center);
	return OPT_E_VALUE;
}
