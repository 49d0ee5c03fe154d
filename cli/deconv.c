/* fftbloom conv2d-transpose: the transposed convolution (gles/deconv.h) on NPY tensors, with
 * torch.nn.functional.conv_transpose2d's semantics (or TensorFlow's SAME / VALID with an output
 * shape): input (B, Cin, H, W) or (Cin, H, W), weight (Cin, Cout / groups, kH, kW), optional
 * bias (Cout); the output float32, 3-D for a 3-D input. --repeat N as conv2d. The driver is
 * cli/conv.c; this file holds what is conv2d-transpose's own. */
#include <stdio.h>

#include "cli/conv.h"
#include "core/log.h"
#include "gles/conv_shape.h"
#include "gles/deconv.h"

_Static_assert(DECONV_ERR_LEN <= CONV_ERR_LEN && CONV_SHAPE_ERR_LEN <= CONV_ERR_LEN,
               "the driver's message buffer holds the engine's messages");

struct deconv_state {
	struct deconv_conv dc;
	struct spatial_ctx *s; /* the convolutions the methods run */
	struct deconv_ctx *d;
	struct deconv_stats st; /* the last run's */
};

static int deconv_shape(void *state, const struct conv_tensors *t, const struct conv_params *p,
                        int time_stages, struct tensor *y, char err[CONV_ERR_LEN])
{
	struct deconv_state *c = state;
	if (deconv_describe(t->x.ndim, t->x.shape, t->w.shape, t->b.data ? (long)t->b.shape[0] : -1,
	                    p, &c->dc, &y->ndim, y->shape, err))
		return -1;
	c->dc.time_stages = time_stages;
	return 0;
}

static int deconv_open(void *state, const struct cli_gpu *g, char err[CONV_ERR_LEN])
{
	struct deconv_state *c = state;
	int e = spatial_ctx_create(g->pc, g->info, NULL, &log_process_sink, &c->s, err);
	return e ? e : deconv_ctx_create(g->pc, g->info, c->s, &log_process_sink, &c->d, err);
}

static int deconv_run_op(void *state, const struct conv_tensors *t, float *y,
                         struct conv_times *tm, char err[CONV_ERR_LEN])
{
	struct deconv_state *c = state;
	int e = deconv_run(c->d, &c->dc, t->x.data, t->w.data, t->b.data, y, &c->st, err);
	*tm = (struct conv_times){.gpu_ms = c->st.gpu_ms, .wall_ms = c->st.wall_ms};
	return e;
}

static void deconv_report(void *state, const struct tensor *y, int reps,
                          const struct conv_times *med, const char *renderer)
{
	const struct deconv_state *c = state;
	const struct deconv_conv *dc = &c->dc;
	char err[DECONV_ERR_LEN];
	int oh = (int)y->shape[y->ndim - 2], ow = (int)y->shape[y->ndim - 1], pt, pl;
	deconv_output(dc, &oh, &ow, &pt, &pl, err);
	fprintf(stderr, "{\"op\":\"conv2d_transpose\",\"input\":[%d,%d,%d,%d],"
	        "\"weight\":[%d,%d,%d,%d],\"output\":[%d,%d],\"stride\":[%d,%d],"
	        "\"padding\":[%d,%d],\"output_padding\":[%d,%d],\"dilation\":[%d,%d],"
	        "\"groups\":%d,\"method\":\"%s\",\"asked\":\"%s\",\"conv_algorithm\":\"%s\","
	        "\"repeat\":%d,\"gpu_ms\":%.4f,\"wall_ms\":%.4f,\"timed\":%s,"
	        "\"renderer\":\"%s\"}\n",
	        dc->batch, dc->in_c, dc->in_h, dc->in_w, dc->in_c, dc->out_c / dc->groups, dc->k_h,
	        dc->k_w, oh, ow, dc->stride_h, dc->stride_w, pt, pl, dc->out_pad_h, dc->out_pad_w,
	        dc->dil_h, dc->dil_w, dc->groups, deconv_method_name(c->st.method),
	        deconv_method_name(dc->method),
	        c->st.method == DECONV_OVERLAP_ADD ? "none"
	                                           : spatial_algorithm_name(c->st.conv_algorithm),
	        reps, med->gpu_ms, med->wall_ms, c->st.timed == GPU_TIMING_QUERIES ? "true" : "false",
	        renderer);
}

static void deconv_close(void *state)
{
	struct deconv_state *c = state;
	deconv_ctx_destroy(c->d);
	spatial_ctx_destroy(c->s);
	c->d = NULL;
	c->s = NULL;
}

static const struct conv_op deconv_op = {
	.cmd = "conv2d-transpose",
	.usage = "usage: fftbloom conv2d-transpose --input X.npy --weight W.npy [--bias B.npy] "
	         "--stride S -o Y.npy [options]\n  Y = conv_transpose2d(X, W) + B as "
	         "torch.nn.functional.conv_transpose2d (or TF's SAME / VALID)\n",
	.weight_shape = "(Cin, Cout / groups, kH, kW)",
	.request = REQUEST_CONV2D_T,
	.finish = 1,
	.state_size = sizeof(struct deconv_state),
	.describe = deconv_shape,
	.open = deconv_open,
	.run = deconv_run_op,
	.strerror = deconv_strerror,
	.report = deconv_report,
	.close = deconv_close,
};

int cli_conv2d_transpose(int argc, char **argv)
{
	return cli_conv_run(&deconv_op, argc, argv);
}
