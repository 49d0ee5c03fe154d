/* fftbloom conv2d: the spatial convolution (gles/spatial.h) on NPY tensors, with
 * torch.nn.functional.conv2d's semantics: input (B, Cin, H, W) or (Cin, H, W), weight (Cout,
 * Cin / groups, kH, kW), optional bias (Cout); the output float32, 3-D for a 3-D input.
 * --repeat N runs it N more times and prints the median GPU time as a JSON line on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/cli_common.h"
#include "daemon/cli_conv.h"
#include "daemon/log.h"
#include "gles/spatial.h"
#include "protocol/conv_params.h"

_Static_assert(SPATIAL_ALG_SHARED == 4 && SPATIAL_FP32 == 3,
               "protocol/conv_params.c's algorithm names and precision levels follow gles/spatial.h");

struct conv2d_cli {
	struct gpu_config gpu;
	struct conv2d_params p;
	char input[OPT_STR_MAX], weight[OPT_STR_MAX], bias[OPT_STR_MAX], output[OPT_STR_MAX];
	int repeat;
};

#define O(f) offsetof(struct conv2d_cli, f)
static const struct opt_def own_table[] = {
	{"input", OPT_STRING, 0, 0, "", NULL, "input .npy: (B, Cin, H, W) or (Cin, H, W)", NULL,
	 O(input)},
	{"weight", OPT_STRING, 0, 0, "", NULL, "weight .npy: (Cout, Cin / groups, kH, kW)", NULL,
	 O(weight)},
	{"bias", OPT_STRING, 0, 0, "", NULL, "bias .npy: (Cout), optional", NULL, O(bias)},
	{"output", OPT_STRING, 0, 0, "", NULL, "output .npy (float32) (also -o)", NULL, O(output)},
	{"repeat", OPT_INT, 0, 100000, "0", NULL,
	 "run N more times and print the median GPU time as a JSON line on stderr", NULL, O(repeat)},
};

int cli_conv2d(int argc, char **argv)
{
	const char *cmd = "conv2d";
	struct opt_def t[CLI_MAX_OPTS];
	size_t n = 0;
	cli_opts_add(t, &n, own_table, sizeof own_table / sizeof own_table[0], 0);
	cli_opts_add(t, &n, conv2d_params_table, conv2d_params_table_len, O(p));
	cli_opts_add(t, &n, gpu_config_table, gpu_config_table_len, O(gpu));
	struct conv2d_cli c;
	int npos;
	int pr = cli_parse(cmd, "usage: fftbloom conv2d --input X.npy --weight W.npy [--bias B.npy] "
	                   "-o Y.npy [options]\n  Y = conv2d(X, W) + B, cross-correlation as "
	                   "torch.nn.functional.conv2d (float32 or float64 in, float32 out)\n",
	                   t, n, &c, sizeof c, NULL, NULL, argc, argv, &npos);
	if (pr)
		return pr == 1 ? 0 : pr;
	if (npos || !c.input[0] || !c.weight[0] || !c.output[0]) {
		fprintf(stderr, "fftbloom conv2d: need --input, --weight and -o OUTPUT (see --help)\n");
		return 2;
	}
	struct conv_numbers cn;
	char oerr[OPT_ERR_LEN];
	if (conv2d_params_resolve(&c.p, &cn, oerr)) {
		fprintf(stderr, "fftbloom conv2d: %s\n", oerr);
		return 2;
	}
	log_setup(LOG_WARN, 0);
	struct npy_array xa, wa, ba;
	float *x = NULL, *w = NULL, *b = NULL, *y = NULL;
	int rc = cli_tensor_read(cmd, "input", c.input, 3, 4, &xa, &x);
	if (!rc)
		rc = cli_tensor_read(cmd, "weight", c.weight, 4, 4, &wa, &w);
	if (!rc && c.bias[0])
		rc = cli_tensor_read(cmd, "bias", c.bias, 1, 1, &ba, &b);
	if (rc)
		goto out;
	int three = xa.ndim == 3;
	struct spatial_conv sc = {
		.batch = three ? 1 : (int)xa.shape[0], .in_c = (int)xa.shape[three ? 0 : 1],
		.in_h = (int)xa.shape[three ? 1 : 2], .in_w = (int)xa.shape[three ? 2 : 3],
		.out_c = (int)wa.shape[0], .k_h = (int)wa.shape[2], .k_w = (int)wa.shape[3],
		.pad_h = cn.pad_h, .pad_w = cn.pad_w, .stride_h = cn.stride_h, .stride_w = cn.stride_w,
		.dil_h = cn.dil_h, .dil_w = cn.dil_w, .groups = cn.groups, .precision = cn.precision,
		.algorithm = cn.algorithm, .time_stages = c.repeat > 0,
	};
	rc = 2;
	if (wa.shape[1] * (size_t)cn.groups != (size_t)sc.in_c) {
		fprintf(stderr, "fftbloom conv2d: the weight (%zu, %zu, %zu, %zu) with %d group(s) "
		        "takes %zu input planes; the input has %d\n", wa.shape[0], wa.shape[1],
		        wa.shape[2], wa.shape[3], cn.groups, wa.shape[1] * cn.groups, sc.in_c);
		goto out;
	}
	if (b && ba.shape[0] != (size_t)sc.out_c) {
		fprintf(stderr, "fftbloom conv2d: the bias has %zu values; the weight has %d output "
		        "planes\n", ba.shape[0], sc.out_c);
		goto out;
	}
	char err[SPATIAL_ERR_LEN];
	int oh, ow;
	if (spatial_conv_output(&sc, &oh, &ow, err)) {
		fprintf(stderr, "fftbloom conv2d: %s\n", err);
		goto out;
	}
	size_t ny = (size_t)sc.batch * sc.out_c * oh * ow;
	if (!(y = malloc(ny * sizeof *y))) {
		fprintf(stderr, "fftbloom conv2d: out of memory\n");
		rc = 1;
		goto out;
	}
	struct cli_gpu g;
	rc = 1;
	if (cli_gpu_open(&c.gpu, &g))
		goto out;
	struct spatial_ctx *s = NULL;
	double *gpu = calloc((size_t)c.repeat + 1, sizeof *gpu), *conv = calloc((size_t)c.repeat + 1, sizeof *conv),
	       *wall = calloc((size_t)c.repeat + 1, sizeof *wall);
	struct spatial_stats st;
	int e = gpu && conv && wall ? spatial_ctx_create(g.pc, g.info, NULL, &log_gles_sink, &s, err)
	                            : SPATIAL_E_NOMEM;
	for (int i = 0; !e && i <= c.repeat; i++) {
		e = spatial_conv2d(s, &sc, x, w, b, y, &st, err);
		if (i)
			gpu[i - 1] = st.gpu_ms, conv[i - 1] = st.stage_ms[GPU_STAGE_CONV], wall[i - 1] = st.wall_ms;
	}
	if (e) {
		fprintf(stderr, "fftbloom conv2d: %s\n", err[0] ? err : spatial_strerror(e));
		rc = e == SPATIAL_E_ARG || e == SPATIAL_E_UNSUPPORTED ? 2 : 1;
	} else {
		size_t shape[4] = {(size_t)sc.batch, (size_t)sc.out_c, (size_t)oh, (size_t)ow};
		rc = cli_tensor_write(cmd, c.output, three ? 3 : 4, three ? shape + 1 : shape, y);
		if (c.repeat > 0)
			fprintf(stderr, "{\"op\":\"conv2d\",\"input\":[%d,%d,%d,%d],\"weight\":[%d,%d,%d,%d],"
			        "\"padding\":[%d,%d],\"stride\":[%d,%d],\"dilation\":[%d,%d],\"groups\":%d,"
			        "\"precision\":%d,\"algorithm\":\"%s\",\"asked\":\"%s\",\"repeat\":%d,"
			        "\"gpu_ms\":%.4f,\"conv_ms\":%.4f,\"wall_ms\":%.4f,\"timed\":%s,"
			        "\"renderer\":\"%s\"}\n",
			        sc.batch, sc.in_c, sc.in_h, sc.in_w, sc.out_c, sc.in_c / cn.groups, sc.k_h,
			        sc.k_w, cn.pad_h, cn.pad_w, cn.stride_h, cn.stride_w, cn.dil_h, cn.dil_w,
			        cn.groups, cn.precision, spatial_algorithm_name(st.algorithm),
			        spatial_algorithm_name(cn.algorithm), c.repeat, cli_median(gpu, c.repeat),
			        cli_median(conv, c.repeat), cli_median(wall, c.repeat),
			        st.timed == GPU_TIMING_QUERIES ? "true" : "false", g.info->renderer);
	}
	free(gpu);
	free(conv);
	free(wall);
	spatial_ctx_destroy(s);
	cli_gpu_close(&g);
out:
	free(x);
	free(w);
	free(b);
	free(y);
	return rc;
}
