/* fftbloom conv2d-transpose: the transposed convolution (gles/deconv.h) on NPY tensors, with
 * torch.nn.functional.conv_transpose2d's semantics (or TensorFlow's SAME / VALID with an output
 * shape): input (B, Cin, H, W) or (Cin, H, W), weight (Cin, Cout / groups, kH, kW), optional
 * bias (Cout); the output float32, 3-D for a 3-D input. --repeat N as conv2d. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/common.h"
#include "cli/conv.h"
#include "core/log.h"
#include "gles/conv_shape.h"
#include "gles/deconv.h"
#include "api/request.h"

struct deconv_cli {
	struct gpu_config gpu;
	struct conv_files f;
};

int cli_conv2d_transpose(int argc, char **argv)
{
	const char *cmd = "conv2d-transpose";
	struct opt_def t[CLI_MAX_OPTS];
	size_t n = 0;
	cli_conv_files_opts(t, &n, offsetof(struct deconv_cli, f), "(Cin, Cout / groups, kH, kW)");
	cli_opts_add(t, &n, gpu_config_table, gpu_config_table_len, offsetof(struct deconv_cli, gpu));
	struct deconv_cli c;
	struct request req;
	int npos;
	int pr = cli_parse_request(cmd, "usage: fftbloom conv2d-transpose --input X.npy --weight "
	                           "W.npy [--bias B.npy] --stride S -o Y.npy [options]\n  Y = "
	                           "conv_transpose2d(X, W) + B as "
	                           "torch.nn.functional.conv_transpose2d (or TF's SAME / VALID)\n",
	                           t, n, &c, sizeof c, &req, REQUEST_CONV2D_T, argc, argv, &npos);
	if (pr)
		return pr == 1 ? 0 : pr;
	char rerr[REQUEST_ERR_LEN];
	if (request_finish(&req, 0, rerr)) {
		fprintf(stderr, "fftbloom %s: %s\n", cmd, rerr);
		return 2;
	}
	struct conv_tensors ts;
	int rc = cli_conv_read(cmd, npos, &c.f, &ts);
	if (rc)
		return rc;
	struct deconv_conv dc;
	struct tensor y = {0};
	char err[CONV_SHAPE_ERR_LEN];
	if (deconv_describe(ts.x.ndim, ts.x.shape, ts.w.shape, ts.b.data ? (long)ts.b.shape[0] : -1,
	                    &req.c, &dc, &y.ndim, y.shape, err)) {
		fprintf(stderr, "fftbloom %s: %s\n", cmd, err);
		rc = 2;
		goto out;
	}
	dc.time_stages = c.f.repeat > 0;
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
	struct deconv_ctx *d = NULL;
	int reps = c.f.repeat;
	double *gpu = calloc((size_t)reps + 1, sizeof *gpu), *wall = calloc((size_t)reps + 1, sizeof *wall);
	struct deconv_stats st;
	char derr[DECONV_ERR_LEN];
	int e = gpu && wall ? spatial_ctx_create(g.pc, g.info, NULL, &log_process_sink, &s, derr)
	                    : DECONV_E_NOMEM;
	if (!e)
		e = deconv_ctx_create(g.pc, g.info, s, &log_process_sink, &d, derr);
	for (int i = 0; !e && i <= reps; i++) {
		e = deconv_run(d, &dc, ts.x.data, ts.w.data, ts.b.data, y.data, &st, derr);
		if (i)
			gpu[i - 1] = st.gpu_ms, wall[i - 1] = st.wall_ms;
	}
	if (e) {
		fprintf(stderr, "fftbloom %s: %s\n", cmd, derr[0] ? derr : deconv_strerror(e));
		rc = e == DECONV_E_ARG || e == DECONV_E_UNSUPPORTED ? 2 : 1;
	} else {
		rc = cli_conv_write(cmd, c.f.output, &y);
		int oh = (int)y.shape[y.ndim - 2], ow = (int)y.shape[y.ndim - 1], pt, pl;
		deconv_output(&dc, &oh, &ow, &pt, &pl, derr);
		if (reps > 0)
			fprintf(stderr, "{\"op\":\"conv2d_transpose\",\"input\":[%d,%d,%d,%d],"
			        "\"weight\":[%d,%d,%d,%d],\"output\":[%d,%d],\"stride\":[%d,%d],"
			        "\"padding\":[%d,%d],\"output_padding\":[%d,%d],\"dilation\":[%d,%d],"
			        "\"groups\":%d,\"method\":\"%s\",\"asked\":\"%s\",\"conv_algorithm\":\"%s\","
			        "\"repeat\":%d,\"gpu_ms\":%.4f,\"wall_ms\":%.4f,\"timed\":%s,"
			        "\"renderer\":\"%s\"}\n",
			        dc.batch, dc.in_c, dc.in_h, dc.in_w, dc.in_c, dc.out_c / dc.groups, dc.k_h,
			        dc.k_w, oh, ow, dc.stride_h, dc.stride_w, pt, pl, dc.out_pad_h, dc.out_pad_w,
			        dc.dil_h, dc.dil_w, dc.groups, deconv_method_name(st.method),
			        deconv_method_name(dc.method),
			        st.method == DECONV_OVERLAP_ADD ? "none" : spatial_algorithm_name(st.conv_algorithm),
			        reps, cli_median(gpu, reps), cli_median(wall, reps),
			        st.timed == GPU_TIMING_QUERIES ? "true" : "false", g.info->renderer);
	}
	free(gpu);
	free(wall);
	deconv_ctx_destroy(d);
	spatial_ctx_destroy(s);
	cli_gpu_close(&g);
out:
	cli_conv_free(&ts);
	tensor_free(&y);
	return rc;
}
