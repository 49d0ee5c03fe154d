/* fftbloom conv2d: the spatial convolution (fftbloom_conv2d) on NPY tensors, with
 * torch.nn.functional.conv2d's semantics: input (B, Cin, H, W) or (Cin, H, W), weight (Cout,
 * Cin / groups, kH, kW), optional bias (Cout); the output float32, 3-D for a 3-D input.
 * --repeat N runs it N more times and prints the median GPU time as a JSON line on stderr.
 * The driver is cli/conv.c; this file holds what is conv2d's own. */
#include <stdio.h>

#include "cli/conv.h"

static void conv2d_report(const struct conv_desc *d, const struct fftbloom_conv_stats *st,
                          int reps, const struct conv_times *med, const char *renderer)
{
	const struct fftbloom_conv_params *p = &d->p;
	fprintf(stderr, "{\"op\":\"conv2d\",\"input\":[%d,%d,%d,%d],\"weight\":[%d,%d,%d,%d],"
	        "\"padding\":[%d,%d],\"stride\":[%d,%d],\"dilation\":[%d,%d],\"groups\":%d,"
	        "\"precision\":%d,\"algorithm\":\"%s\",\"asked\":\"%s\",\"repeat\":%d,"
	        "\"gpu_ms\":%.4f,\"conv_ms\":%.4f,\"wall_ms\":%.4f,\"timed\":%s,"
	        "\"renderer\":\"%s\"}\n",
	        d->xs[0], d->xs[1], d->xs[2], d->xs[3], d->ws[0], d->ws[1], d->ws[2], d->ws[3],
	        p->pad_h, p->pad_w, p->stride_h, p->stride_w, p->dilation_h, p->dilation_w,
	        p->groups, p->precision, fftbloom_conv_algorithm_name(st->algorithm),
	        fftbloom_conv_algorithm_name(p->algorithm), reps, med->gpu_ms, med->conv_ms,
	        med->wall_ms, st->timed ? "true" : "false", renderer);
}

static const struct conv_op conv2d_op = {
	.cmd = "conv2d",
	.usage = "usage: fftbloom conv2d --input X.npy --weight W.npy [--bias B.npy] -o Y.npy "
	         "[options]\n  Y = conv2d(X, W) + B, cross-correlation as "
	         "torch.nn.functional.conv2d (float32 or float64 in, float32 out)\n",
	.weight_shape = "(Cout, Cin / groups, kH, kW)",
	.request = REQUEST_CONV2D,
	.finish = 0,
	.transpose = 0,
	.report = conv2d_report,
};

int cli_conv2d(int argc, char **argv)
{
	return cli_conv_run(&conv2d_op, argc, argv);
}
