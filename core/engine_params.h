/* The parameters of an image operation as plain numbers, what both engines (gles/, cpu/) take:
 * filled by the request table (api/request.h) from a query string, form fields, a params JSON
 * object or the CLI's flags. No strings from a client reach an engine. Pure data, here so that
 * both engines include it (gles/params.h adds the names requests use). */
#ifndef FFTBLOOM_ENGINE_PARAMS_H
#define FFTBLOOM_ENGINE_PARAMS_H

enum bloom_op { BLOOM_OP_BLOOM = 0, BLOOM_OP_CONVOLVE = 1 };
enum bloom_composite { BLOOM_COMPOSITE_ADD = 0, BLOOM_COMPOSITE_MIX };
enum bloom_normalize { BLOOM_NORMALIZE_LUMINANCE = 0, BLOOM_NORMALIZE_NONE };
enum bloom_precision { BLOOM_FP32 = 0, BLOOM_FP16 };
#define BLOOM_COMPOSITE_COUNT 2
#define BLOOM_NORMALIZE_COUNT 2
#define BLOOM_PRECISION_COUNT 2
enum kernel_center_mode { KERNEL_CENTER_DEFAULT = 0, KERNEL_CENTER_PIXEL, KERNEL_CENTER_UV };
enum kernel_kind { KERNEL_NONE = 0, KERNEL_GAUSSIAN, KERNEL_GLARE, KERNEL_APERTURE };

/* Where the kernel's centre lies: the default pixel (floor(w/2), floor(h/2)), a pixel, or a
 * point in [0,1]^2 of the kernel. */
struct kernel_center {
	int mode;    /* enum kernel_center_mode */
	double x, y; /* PIXEL: pixels; UV: fractions */
};

/* A built-in kernel (gles/kernel_presets.h makes it). Parsed from "NAME[:key=value,...]" by
 * api/kernel_preset.h; zeroed where a kind does not use a field, so that two equal
 * presets compare equal byte for byte (memcmp) when both were zeroed first. */
struct kernel_preset {
	int kind;        /* enum kernel_kind; KERNEL_NONE: none given */
	int size;        /* kernel side in pixels (odd) */
	double sigma;    /* gaussian: standard deviation in pixels */
	double core;     /* glare: core radius (gaussian sigma) in pixels */
	double halo;     /* glare: halo sigma in pixels */
	double halo_gain;/* glare: halo weight relative to the core */
	int streaks;     /* glare: number of streaks (through the centre, so pairs) */
	double length;   /* glare: streak length as a fraction of the half size */
	double rotation; /* glare / aperture: degrees */
	int blades;      /* aperture: polygon sides (0: a circle) */
	double radius;   /* aperture: aperture radius as a fraction of the FFT grid */
};

struct bloom_params {
	double threshold;    /* bloom: prefilter keeps what is brighter */
	double knee;         /* bloom: soft threshold's width */
	double clamp_max;    /* bloom: prefiltered values clamped to this */
	double intensity;    /* bloom: O = I + intensity * B (add) */
	double mix;          /* bloom: O = (1 - mix) I + mix B (mix) */
	double kernel_scale; /* kernel's larger side = S x the image's shorter side; 0: own size */
	int composite;       /* enum bloom_composite */
	int normalize;       /* enum bloom_normalize */
	int precision;       /* enum bloom_precision: the image spectrum's storage */
	int technique;       /* gles/fft_plan.h's enum fft_technique (auto: measured or planned) */
	int method;          /* convolve: auto|fft|spatial (gles/convolve.h's enum convolve_method) */
	struct kernel_center center;
	struct kernel_preset preset; /* the built-in kernel when no kernel image is given; kind
	                                KERNEL_NONE: the default (aperture) */
};

/* A spatial convolution (conv2d) or a transposed one (conv2d-transpose) as numbers: each pair
 * (height, width). The enums are gles/spatial.h's and gles/deconv.h's. */
struct conv_params {
	int pad_h, pad_w;         /* zero padding each side (transpose: PyTorch's padding) */
	int stride_h, stride_w;   /* >= 1 */
	int dil_h, dil_w;         /* >= 1 */
	int out_pad_h, out_pad_w; /* transpose: PyTorch's output_padding */
	int out_h, out_w;         /* transpose, TF modes: the output's size (0, 0: Keras's default) */
	int groups;               /* >= 1 */
	int precision;            /* conv2d: 0 Q2.6 mediump, 1 Q2.6 highp, 2 float16, 3 float32 */
	int algorithm;            /* the spatial algorithm: auto|batch4|interp|planes4|shared|gemm|winograd */
	int method;               /* transpose: auto|zero-insert|overlap-add|subkernel */
	int padding_mode;         /* transpose: torch|tf_same|tf_valid */
};

#endif
