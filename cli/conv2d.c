/* fftbloom conv2d: the spatial convolution (gles/spatial.h) on NPY tensors, with
 * torch.nn.functional.conv2d's semantics: input (B, Cin, H, W) or (Cin, H, W), weight (Cout,
 * Cin / groups, kH, kW), optional bias (Cout); the output float32, 3-D for a 3-D input.
 * --repeat N runs it N more times and prints the median GPU time as a JSON line on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/common.h"
#include "cli/conv.h"
#include "core/log.h"
#include "gles/conv_shape.h"
#include "gles/spatial.h"
#include "api/request.h"

struct conv2d_cli {
	struct gpu_config gpu;
	struct conv_files f;
};

int cli_conv2d(int argc, char **argv)
{
	const char *cmd = "conv2d";
	struct opt_def t[CLI_MAX_OPTS];
	size_t n = 0;
	cli_conv_files_opts(t, &n, offsetof(struct conv2d_cli, f), "(Cout, Cin / groups, kH, kW)");
	cli_opts_add(t, &n, gpu_config_table, gpu_config_table_len, offsetof(struct conv2d_cli, gpu));
	struct conv2d_cli c;
	struct request req;
	int npos;
	int pr = cli_parse_request(cmd, "usage: fftbloom conv2d --input X.npy --weight W.npy [--bias "
	                           "B.npy] -o Y.npy [options]\n  Y = conv2d(X, W) + B, "
	                           "cross-correlation as torch.nn.functional.conv2d (float32 or "
	                           "float64 in, float32 out)\n", t, n, &c, sizeof c, &req,
	                           REQUEST_CONV2D, argc, argv, &npos);
	if (pr)
		return pr == 1 ? 0 : pr;
	struct conv_tensors ts;
	int rc = cli_conv_read(cmd, npos, &c.f, &ts);
	if (rc)
		return rc;
	struct spatial_conv sc;
	struct tensor y = {0};
	char err[CONV_SHAPE_ERR_LEN];
	if (conv2d_describe(ts.x.ndim, ts.x.shape, ts.w.shape, ts.b.data ? (long)ts.b.shape[0] : -1,
	                    &req.c, &sc, &y.ndim, y.shape, err)) {
		fprintf(stderr, "fftbloom %s: %s\n", cmd, err);
		rc = 2;
		goto out;
	}
	sc.time_stages = c.f.repeat > 0;
	size_t y_bytes;
	if (tensor_bytes(&y, &y_bytes)) { /* checked: a shape that overflows is refused */
		fprintf(stderr, "fftbloom %s: the output's size overflows\n", cmd);
		rc = 2;
		goto out;
	}
	rc = 1;
	if (!(y.data = malloc(y_bytes))) {
		fprintf(stderr, "fftbloom %s: out of memory\n", cmd);
		goto out;
	}
	struct cli_gpu g;
	if (cli_gpu_open(&c.gpu, &g))
		goto out;
	struct spatial_ctx *s = NULL;
	int reps = c.f.repeat;
	double *gpu = calloc((size_t)reps + 1, sizeof *gpu), *conv = calloc((size_t)reps + 1, sizeof *conv),
	       *wall = calloc((size_t)reps + 1, sizeof *wall);
	struct spatial_stats st;
	char serr[SPATIAL_ERR_LEN];
	int e = gpu && conv && wall ? spatial_ctx_create(g.pc, g.info, NULL, &log_process_sink, &s, serr)
	                            : SPATIAL_E_NOMEM;
	for (int i = 0; !e && i <= reps; i++) {
		e = spatial_conv2d(s, &sc, ts.x.data, ts.w.data, ts.b.data, y.data, &st, serr);
		if (i)
			gpu[i - 1] = st.gpu_ms, conv[i - 1] = st.stage_ms[GPU_STAGE_CONV], wall[i - 1] = st.wall_ms;
	}
	if (e) {
		fprintf(stderr, "fftbloom %s: %s\n", cmd, serr[0] ? serr : spatial_strerror(e));
		rc = e == SPATIAL_E_ARG || e == SPATIAL_E_UNSUPPORTED ? 2 : 1;
	} else {
		rc = cli_conv_write(cmd, c.f.output, &y);
		if (reps > 0)
			fprintf(stderr, "{\"op\":\"conv2d\",\"input\":[%d,%d,%d,%d],\"weight\":[%d,%d,%d,%d],"
			        "\"padding\":[%d,%d],\"stride\":[%d,%d],\"dilation\":[%d,%d],\"groups\":%d,"
			        "\"precision\":%d,\"algorithm\":\"%s\",\"asked\":\"%s\",\"repeat\":%d,"
			        "\"gpu_ms\":%.4f,\"conv_ms\":%.4f,\"wall_ms\":%.4f,\"timed\":%s,"
			        "\"renderer\":\"%s\"}\n",
			        sc.batch, sc.in_c, sc.in_h, sc.in_w, sc.out_c, sc.in_c / sc.groups, sc.k_h,
			        sc.k_w, sc.pad_h, sc.pad_w, sc.stride_h, sc.stride_w, sc.dil_h, sc.dil_w,
			        sc.groups, sc.precision, spatial_algorithm_name(st.algorithm),
			        spatial_algorithm_name(sc.algorithm), reps, cli_median(gpu, reps),
			        cli_median(conv, reps), cli_median(wall, reps), st.timed == GPU_TIMING_QUERIES ? "true" : "false",
			        g.info->renderer);
	}
	free(gpu);
	free(conv);
	free(wall);
	spatial_ctx_destroy(s);
	cli_gpu_close(&g);
out:
	cli_conv_free(&ts);
	tensor_free(&y);
	return rc;
}
