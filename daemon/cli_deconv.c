/* fftbloom conv2d-transpose: the transposed convolution (gles/deconv.h) on NPY tensors, with
 * torch.nn.functional.conv_transpose2d's semantics (or TensorFlow's SAME / VALID with an output
 * shape): input (B, Cin, H, W) or (Cin, H, W), weight (Cin, Cout / groups, kH, kW), optional
 * bias (Cout); the output float32, 3-D for a 3-D input. --repeat N as conv2d. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/cli_common.h"
#include "daemon/cli_conv.h"
#include "daemon/log.h"
#include "gles/deconv.h"
#include "protocol/conv_params.h"

_Static_assert(DECONV_SUBKERNEL == 3 && DECONV_PAD_TF_VALID == 2,
               "protocol/conv_params.c's method and padding-mode names follow gles/deconv.h");

struct deconv_cli {
	struct gpu_config gpu;
	struct conv2d_transpose_params p;
	char input[OPT_STR_MAX], weight[OPT_STR_MAX], bias[OPT_STR_MAX], output[OPT_STR_MAX];
	int repeat;
};

#define O(f) offsetof(struct deconv_cli, f)
static const struct opt_def own_table[] = {
	{"input", OPT_STRING, 0, 0, "", NULL, "input .npy: (B, Cin, H, W) or (Cin, H, W)", NULL,
	 O(input)},
	{"weight", OPT_STRING, 0, 0, "", NULL, "weight .npy: (Cin, Cout / groups, kH, kW)", NULL,
	 O(weight)},
	{"bias", OPT_STRING, 0, 0, "", NULL, "bias .npy: (Cout), optional", NULL, O(bias)},
	{"output", OPT_STRING, 0, 0, "", NULL, "output .npy (float32) (also -o)", NULL, O(output)},
	{"repeat", OPT_INT, 0, 100000, "0", NULL,
	 "run N more times and print the median GPU time as a JSON line on stderr", NULL, O(repeat)},
};

int cli_conv2d_transpose(int argc, char **argv)
{
	const char *cmd = "conv2d-transpose";
	struct opt_def t[CLI_MAX_OPTS];
	size_t n = 0;
	cli_opts_add(t, &n, own_table, sizeof own_table / sizeof own_table[0], 0);
	cli_opts_add(t, &n, conv2d_transpose_params_table, conv2d_transpose_params_table_len, O(p));
	cli_opts_add(t, &n, gpu_config_table, gpu_config_table_len, O(gpu));
	struct deconv_cli c;
	int npos;
	int pr = cli_parse(cmd, "usage: fftbloom conv2d-transpose --input X.npy --weight W.npy "
	                   "[--bias B.npy] --stride S -o Y.npy [options]\n  Y = conv_transpose2d(X, "
	                   "W) + B as torch.nn.functional.conv_transpose2d (or TF's SAME / VALID)\n",
	                   t, n, &c, sizeof c, NULL, NULL, argc, argv, &npos);
	if (pr)
		return pr == 1 ? 0 : pr;
	if (npos || !c.input[0] || !c.weight[0] || !c.output[0]) {
		fprintf(stderr, "fftbloom %s: need --input, --weight and -o OUTPUT (see --help)\n", cmd);
		return 2;
	}
	struct conv_numbers cn;
	char oerr[OPT_ERR_LEN];
	if (conv2d_transpose_params_resolve(&c.p, &cn, oerr)) {
		fprintf(stderr, "fftbloom %s: %s\n", cmd, oerr);
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
	struct deconv_conv dc = {
		.batch = three ? 1 : (int)xa.shape[0], .in_c = (int)xa.shape[three ? 0 : 1],
		.in_h = (int)xa.shape[three ? 1 : 2], .in_w = (int)xa.shape[three ? 2 : 3],
		.out_c = (int)(wa.shape[1] * (size_t)cn.groups), .k_h = (int)wa.shape[2],
		.k_w = (int)wa.shape[3], .stride_h = cn.stride_h, .stride_w = cn.stride_w,
		.pad_h = cn.pad_h, .pad_w = cn.pad_w, .out_pad_h = cn.out_pad_h, .out_pad_w = cn.out_pad_w,
		.dil_h = cn.dil_h, .dil_w = cn.dil_w, .groups = cn.groups,
		.padding_mode = cn.padding_mode, .out_h = cn.out_h, .out_w = cn.out_w,
		.method = cn.method, .conv_algorithm = cn.algorithm, .time_stages = c.repeat > 0,
	};
	rc = 2;
	if (wa.shape[0] != (size_t)dc.in_c) {
		fprintf(stderr, "fftbloom %s: the weight (%zu, %zu, %zu, %zu) expects %zu input planes; "
		        "the input has %d (the weight is (in, out / groups, kH, kW), as PyTorch's)\n", cmd,
		        wa.shape[0], wa.shape[1], wa.shape[2], wa.shape[3], wa.shape[0], dc.in_c);
		goto out;
	}
	if (b && ba.shape[0] != (size_t)dc.out_c) {
		fprintf(stderr, "fftbloom %s: the bias has %zu values; there are %d output planes\n", cmd,
		        ba.shape[0], dc.out_c);
		goto out;
	}
	char err[DECONV_ERR_LEN];
	int oh, ow, pt, pl;
	if (deconv_output(&dc, &oh, &ow, &pt, &pl, err)) {
		fprintf(stderr, "fftbloom %s: %s\n", cmd, err);
		goto out;
	}
	size_t ny = (size_t)dc.batch * dc.out_c * oh * ow;
	if (!(y = malloc(ny * sizeof *y))) {
		fprintf(stderr, "fftbloom %s: out of memory\n", cmd);
		rc = 1;
		goto out;
	}
	struct cli_gpu g;
	rc = 1;
	if (cli_gpu_open(&c.gpu, &g))
		goto out;
	struct spatial_ctx *s = NULL;
	struct deconv_ctx *d = NULL;
	double *gpu = calloc((size_t)c.repeat + 1, sizeof *gpu), *wall = calloc((size_t)c.repeat + 1, sizeof *wall);
	struct deconv_stats st;
	int e = gpu && wall ? spatial_ctx_create(g.pc, g.info, NULL, &log_gles_sink, &s, err)
	                    : DECONV_E_NOMEM;
	if (!e)
		e = deconv_ctx_create(g.pc, g.info, s, &log_gles_sink, &d, err);
	for (int i = 0; !e && i <= c.repeat; i++) {
		e = deconv_run(d, &dc, x, w, b, y, &st, err);
		if (i)
			gpu[i - 1] = st.gpu_ms, wall[i - 1] = st.wall_ms;
	}
	if (e) {
		fprintf(stderr, "fftbloom %s: %s\n", cmd, err[0] ? err : deconv_strerror(e));
		rc = e == DECONV_E_ARG || e == DECONV_E_UNSUPPORTED ? 2 : 1;
	} else {
		size_t shape[4] = {(size_t)dc.batch, (size_t)dc.out_c, (size_t)oh, (size_t)ow};
		rc = cli_tensor_write(cmd, c.output, three ? 3 : 4, three ? shape + 1 : shape, y);
		if (c.repeat > 0)
			fprintf(stderr, "{\"op\":\"conv2d_transpose\",\"input\":[%d,%d,%d,%d],"
			        "\"weight\":[%d,%d,%d,%d],\"output\":[%d,%d],\"stride\":[%d,%d],"
			        "\"padding\":[%d,%d],\"output_padding\":[%d,%d],\"dilation\":[%d,%d],"
			        "\"groups\":%d,\"method\":\"%s\",\"asked\":\"%s\",\"conv_algorithm\":\"%s\","
			        "\"repeat\":%d,\"gpu_ms\":%.4f,\"wall_ms\":%.4f,\"timed\":%s,"
			        "\"renderer\":\"%s\"}\n",
			        dc.batch, dc.in_c, dc.in_h, dc.in_w, dc.in_c, dc.out_c / cn.groups, dc.k_h,
			        dc.k_w, oh, ow, cn.stride_h, cn.stride_w, pt, pl, cn.out_pad_h, cn.out_pad_w,
			        cn.dil_h, cn.dil_w, cn.groups, deconv_method_name(st.method),
			        deconv_method_name(cn.method),
			        st.method == DECONV_OVERLAP_ADD ? "none" : spatial_algorithm_name(st.conv_algorithm),
			        c.repeat, cli_median(gpu, c.repeat), cli_median(wall, c.repeat),
			        st.timed == GPU_TIMING_QUERIES ? "true" : "false", g.info->renderer);
	}
	free(gpu);
	free(wall);
	deconv_ctx_destroy(d);
	spatial_ctx_destroy(s);
	cli_gpu_close(&g);
out:
	free(x);
	free(w);
	free(b);
	free(y);
	return rc;
}
