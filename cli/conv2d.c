/* fftbloom conv2d: the spatial convolution (gles/spatial.h) on NPY tensors, with
 * torch.nn.functional.conv2d's semantics: input (B, Cin, H, W) or (Cin, H, W), weight (Cout,
 * Cin / groups, kH, kW), optional bias (Cout); the output float32, 3-D for a 3-D input.
 * --repeat N runs it N more times and prints the median GPU time as a JSON line on stderr.
 * The driver is cli/conv.c; this file holds what is conv2d's own. */
#include <stdio.h>

#include "cli/conv.h"
#include "core/log.h"
#include "gles/conv_shape.h"
#include "gles/spatial.h"

_Static_assert(SPATIAL_ERR_LEN <= CONV_ERR_LEN && CONV_SHAPE_ERR_LEN <= CONV_ERR_LEN,
               "the driver's message buffer holds the engine's messages");

struct conv2d_state {
	struct spatial_conv sc;
	struct spatial_ctx *s;
	struct spatial_stats st; /* the last run's */
};

static int conv2d_shape(void *state, const struct conv_tensors *t, const struct conv_params *p,
                        int time_stages, struct tensor *y, char err[CONV_ERR_LEN])
{
	struct conv2d_state *c = state;
	if (conv2d_describe(t->x.ndim, t->x.shape, t->w.shape, t->b.data ? (long)t->b.shape[0] : -1,
	                    p, &c->sc, &y->ndim, y->shape, err))
		return -1;
	c->sc.time_stages = time_stages;
	return 0;
}

static int conv2d_open(void *state, const struct cli_gpu *g, char err[CONV_ERR_LEN])
{
	struct conv2d_state *c = state;
	return spatial_ctx_create(g->pc, g->info, NULL, &log_process_sink, &c->s, err);
}

static int conv2d_run(void *state, const struct conv_tensors *t, float *y, struct conv_times *tm,
                      char err[CONV_ERR_LEN])
{
	struct conv2d_state *c = state;
	int e = spatial_conv2d(c->s, &c->sc, t->x.data, t->w.data, t->b.data, y, &c->st, err);
	*tm = (struct conv_times){c->st.gpu_ms, c->st.stage_ms[GPU_STAGE_CONV], c->st.wall_ms};
	return e;
}

static void conv2d_report(void *state, const struct tensor *y, int reps,
                          const struct conv_times *med, const char *renderer)
{
	(void)y;
	const struct conv2d_state *c = state;
	const struct spatial_conv *sc = &c->sc;
	fprintf(stderr, "{\"op\":\"conv2d\",\"input\":[%d,%d,%d,%d],\"weight\":[%d,%d,%d,%d],"
	        "\"padding\":[%d,%d],\"stride\":[%d,%d],\"dilation\":[%d,%d],\"groups\":%d,"
	        "\"precision\":%d,\"algorithm\":\"%s\",\"asked\":\"%s\",\"repeat\":%d,"
	        "\"gpu_ms\":%.4f,\"conv_ms\":%.4f,\"wall_ms\":%.4f,\"timed\":%s,"
	        "\"renderer\":\"%s\"}\n",
	        sc->batch, sc->in_c, sc->in_h, sc->in_w, sc->out_c, sc->in_c / sc->groups, sc->k_h,
	        sc->k_w, sc->pad_h, sc->pad_w, sc->stride_h, sc->stride_w, sc->dil_h, sc->dil_w,
	        sc->groups, sc->precision, spatial_algorithm_name(c->st.algorithm),
	        spatial_algorithm_name(sc->algorithm), reps, med->gpu_ms, med->conv_ms, med->wall_ms,
	        c->st.timed == GPU_TIMING_QUERIES ? "true" : "false", renderer);
}

static void conv2d_close(void *state)
{
	struct conv2d_state *c = state;
	spatial_ctx_destroy(c->s);
	c->s = NULL;
}

static const struct conv_op conv2d_op = {
	.cmd = "conv2d",
	.usage = "usage: fftbloom conv2d --input X.npy --weight W.npy [--bias B.npy] -o Y.npy "
	         "[options]\n  Y = conv2d(X, W) + B, cross-correlation as "
	         "torch.nn.functional.conv2d (float32 or float64 in, float32 out)\n",
	.weight_shape = "(Cout, Cin / groups, kH, kW)",
	.request = REQUEST_CONV2D,
	.finish = 0,
	.state_size = sizeof(struct conv2d_state),
	.describe = conv2d_shape,
	.open = conv2d_open,
	.run = conv2d_run,
	.strerror = spatial_strerror,
	.report = conv2d_report,
	.close = conv2d_close,
};

int cli_conv2d(int argc, char **argv)
{
	return cli_conv_run(&conv2d_op, argc, argv);
}
