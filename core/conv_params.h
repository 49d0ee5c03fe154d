/* The convolutions' shapes and parameters as plain numbers, what both engines' conv2d and
 * conv2d_transpose take (here so that both include them). The enums some fields name are the
 * GPU engine's (gles/spatial.h, gles/deconv.h); the CPU engine computes float32 whatever they
 * say. */
#ifndef FFTBLOOM_CONV_PARAMS_H
#define FFTBLOOM_CONV_PARAMS_H

/* A convolution with Torch's parameters. Output (B, out_c, (H + 2 pad_h - dil_h (k_h - 1) - 1)
 * / stride_h + 1, likewise W). */
struct spatial_conv {
	int batch, in_c, in_h, in_w; /* input (B, Cin, H, W): batch 1 for a 3-D input */
	int out_c, k_h, k_w;         /* weight (out_c, in_c / groups, k_h, k_w) */
	int pad_h, pad_w;            /* zero padding, each side */
	int stride_h, stride_w;
	int dil_h, dil_w, groups;    /* 0 means 1 */
	int precision;               /* enum spatial_precision */
	int algorithm;               /* enum spatial_algorithm */
	int time_stages;             /* 1: time the GPU stages into spatial_stats.stage_ms (timer
	                                queries, or a glFinish after each where there are none) */
};

struct deconv_conv {
	int batch, in_c, in_h, in_w; /* input (B, Cin, H, W): batch 1 for a 3-D input */
	int out_c;                   /* output planes: weight.shape[1] * groups */
	int k_h, k_w;                /* weight (in_c, out_c / groups, k_h, k_w) */
	int stride_h, stride_w;      /* >= 1 */
	int pad_h, pad_w;            /* torch: padding (>= 0); TF modes: must be 0 */
	int out_pad_h, out_pad_w;    /* torch: output_padding, below the stride or the dilation;
	                                TF modes: must be 0 */
	int dil_h, dil_w, groups;    /* 0 means 1 */
	int padding_mode;            /* enum deconv_padding_mode */
	int out_h, out_w;            /* TF modes: the output shape (0 and 0: Keras's default, SAME
	                                H * stride, VALID H * stride + max(dk - stride, 0) with
	                                dk = dil (k - 1) + 1); torch: 0, or the size it gives */
	int method;                  /* enum deconv_method */
	int conv_algorithm;          /* enum spatial_algorithm of zero-insert and subkernel */
	int time_stages;             /* 1: time the GPU stages into deconv_stats.stage_ms */
};

#endif
