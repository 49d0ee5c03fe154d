/* The engine's vocabulary: the names of its enums, indexed by them and declared beside each
 * enum (fft_plan.h, spatial.h, deconv.h, convolve.h, params.h). The request table (api/), the
 * CLI and the logs spell techniques, algorithms and methods from these arrays alone. No GL here,
 * so what parses requests links without the engine. */
#include "gles/convolve.h"
#include "gles/deconv.h"
#include "gles/fft_plan.h"
#include "gles/params.h"
#include "gles/resample.h"
#include "gles/spatial.h"

/* Each array is sized COUNT + 1, so a name too many does not compile and the slot after the last
 * is NULL; each assert ties a COUNT to its enum's last member, so a member added without a name
 * does not compile either. */

const char *const fft_technique_names[FFT_TECH_COUNT + 1] = {
	[FFT_TECH_AUTO] = "auto",
	[FFT_TECH_SHARED] = "shared",
	[FFT_TECH_GLOBAL] = "global",
	[FFT_TECH_BLOCKED] = "blocked",
};
_Static_assert(FFT_TECH_BLOCKED + 1 == FFT_TECH_COUNT, "one name per fft_technique");

const char *const spatial_algorithm_names[SPATIAL_ALG_COUNT + 1] = {
	[SPATIAL_ALG_AUTO] = "auto",
	[SPATIAL_ALG_BATCH4] = "batch4",
	[SPATIAL_ALG_INTERP] = "interp",
	[SPATIAL_ALG_PLANES4] = "planes4",
	[SPATIAL_ALG_SHARED] = "shared",
	[SPATIAL_ALG_GEMM] = "gemm",
	[SPATIAL_ALG_WINOGRAD] = "winograd",
};
_Static_assert(SPATIAL_ALG_WINOGRAD + 1 == SPATIAL_ALG_COUNT, "one name per spatial_algorithm");
_Static_assert(SPATIAL_FP32 + 1 == SPATIAL_PRECISION_COUNT, "the levels are 0..COUNT-1");

const char *const deconv_method_names[DECONV_METHOD_COUNT + 1] = {
	[DECONV_AUTO] = "auto",
	[DECONV_ZERO_INSERT] = "zero-insert",
	[DECONV_OVERLAP_ADD] = "overlap-add",
	[DECONV_SUBKERNEL] = "subkernel",
};
_Static_assert(DECONV_SUBKERNEL + 1 == DECONV_METHOD_COUNT, "one name per deconv_method");

const char *const deconv_padding_mode_names[DECONV_PAD_MODE_COUNT + 1] = {
	[DECONV_PAD_TORCH] = "torch",
	[DECONV_PAD_TF_SAME] = "tf_same",
	[DECONV_PAD_TF_VALID] = "tf_valid",
};
_Static_assert(DECONV_PAD_TF_VALID + 1 == DECONV_PAD_MODE_COUNT,
               "one name per deconv_padding_mode");

const char *const convolve_method_names[CONVOLVE_METHOD_COUNT + 1] = {
	[CONVOLVE_AUTO] = "auto",
	[CONVOLVE_FFT] = "fft",
	[CONVOLVE_SPATIAL] = "spatial",
};
_Static_assert(CONVOLVE_SPATIAL + 1 == CONVOLVE_METHOD_COUNT, "one name per convolve_method");

const char *const bloom_composite_names[BLOOM_COMPOSITE_COUNT + 1] = {
	[BLOOM_COMPOSITE_ADD] = "add",
	[BLOOM_COMPOSITE_MIX] = "mix",
};
_Static_assert(BLOOM_COMPOSITE_MIX + 1 == BLOOM_COMPOSITE_COUNT, "one name per bloom_composite");

const char *const bloom_normalize_names[BLOOM_NORMALIZE_COUNT + 1] = {
	[BLOOM_NORMALIZE_LUMINANCE] = "luminance",
	[BLOOM_NORMALIZE_NONE] = "none",
};
_Static_assert(BLOOM_NORMALIZE_NONE + 1 == BLOOM_NORMALIZE_COUNT, "one name per bloom_normalize");

const char *const bloom_precision_names[BLOOM_PRECISION_COUNT + 1] = {
	[BLOOM_FP32] = "fp32",
	[BLOOM_FP16] = "fp16",
};
_Static_assert(BLOOM_FP16 + 1 == BLOOM_PRECISION_COUNT, "one name per bloom_precision");

const char *const resample_fit_names[RESAMPLE_FIT_COUNT + 1] = {
	[RESAMPLE_FIT_COVER] = "cover",
	[RESAMPLE_FIT_CONTAIN] = "contain",
	[RESAMPLE_FIT_FILL] = "fill",
	[RESAMPLE_FIT_INSIDE] = "inside",
	[RESAMPLE_FIT_OUTSIDE] = "outside",
};
_Static_assert(RESAMPLE_FIT_OUTSIDE + 1 == RESAMPLE_FIT_COUNT, "one name per resample_fit");

const char *const resample_order_names[RESAMPLE_ORDER_COUNT + 1] = {
	[RESAMPLE_BEFORE] = "before",
	[RESAMPLE_AFTER] = "after",
};
_Static_assert(RESAMPLE_AFTER + 1 == RESAMPLE_ORDER_COUNT, "one name per resample_order");
