/* fftbloom conv2d-transpose: the transposed convolution (fftbloom_conv2d_transpose) on NPY
 * tensors, with torch.nn.functional.conv_transpose2d's semantics (or TensorFlow's SAME / VALID
 * with an output shape): input (B, Cin, H, W) or (Cin, H, W), weight (Cin, Cout / groups, kH, kW), optional
 * bias (Cout); the output float32, 3-D for a 3-D input. --repeat N as conv2d. The driver is
 * cli/conv.c; this file holds what is conv2d-transpose's own. */
#include <stdio.h>

#include "cli/conv.h"

/* The padding before the first row (or column) the output had: torch's padding, TF SAME's
 * floor(max((in - 1) stride + dk - out, 0) / 2), TF VALID's 0 (the library's rule). */
static int pad_before(int mode, int pad, int in, int stride, int k, int dil, int out)
{
	if (mode == 0)
		return pad;
	if (mode == 2)
		return 0;
	int dk = dil * (k - 1) + 1, total = (in - 1) * stride + dk - out;
	return total > 0 ? total / 2 : 0;
}

static void deconv_report(const struct conv_desc *d, const struct fftbloom_conv_stats *st,
                          int reps, const struct conv_times *med, const char *renderer)
{
	const struct fftbloom_conv_params *p = &d->p;
	int oh = d->ys[2], ow = d->ys[3];
	int pt = pad_before(p->padding_mode, p->pad_h, d->xs[2], p->stride_h, d->ws[2],
	                    p->dilation_h, oh);
	int pl = pad_before(p->padding_mode, p->pad_w, d->xs[3], p->stride_w, d->ws[3],
	                    p->dilation_w, ow);
	fprintf(stderr, "{\"op\":\"conv2d_transpose\",\"input\":[%d,%d,%d,%d],"
	        "\"weight\":[%d,%d,%d,%d],\"output\":[%d,%d],\"stride\":[%d,%d],"
	        "\"padding\":[%d,%d],\"output_padding\":[%d,%d],\"dilation\":[%d,%d],"
	        "\"groups\":%d,\"method\":\"%s\",\"asked\":\"%s\",\"conv_algorithm\":\"%s\","
	        "\"repeat\":%d,\"gpu_ms\":%.4f,\"wall_ms\":%.4f,\"timed\":%s,"
	        "\"renderer\":\"%s\"}\n",
	        d->xs[0], d->xs[1], d->xs[2], d->xs[3], d->ws[0], d->ws[1], d->ws[2], d->ws[3], oh,
	        ow, p->stride_h, p->stride_w, pt, pl, p->output_pad_h, p->output_pad_w,
	        p->dilation_h, p->dilation_w, p->groups, fftbloom_conv_method_name(st->method),
	        fftbloom_conv_method_name(p->method),
	        st->algorithm ? fftbloom_conv_algorithm_name(st->algorithm) : "none", reps,
	        med->gpu_ms, med->wall_ms, st->timed ? "true" : "false", renderer);
}

static const struct conv_op deconv_op = {
	.cmd = "conv2d-transpose",
	.usage = "usage: fftbloom conv2d-transpose --input X.npy --weight W.npy [--bias B.npy] "
	         "--stride S -o Y.npy [options]\n  Y = conv_transpose2d(X, W) + B as "
	         "torch.nn.functional.conv_transpose2d (or TF's SAME / VALID)\n",
	.weight_shape = "(Cin, Cout / groups, kH, kW)",
	.request = REQUEST_CONV2D_T,
	.finish = 1,
	.transpose = 1,
	.report = deconv_report,
};

int cli_conv2d_transpose(int argc, char **argv)
{
	return cli_conv_run(&deconv_op, argc, argv);
}
