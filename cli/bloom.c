/* fftbloom bloom / convolve: the GPU FFT convolution on image files. Parameters are the request
 * table (protocol/request.h: the HTTP API's, the same names with '-', bounds and messages); the
 * output format is the output's extension. A one-line summary with the padded size and GPU
 * stage times goes to stderr. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/common.h"
#include "daemon/log.h"
#include "gles/bloom.h"
#include "gles/convolve.h"
#include "protocol/image.h"
#include "protocol/kernel_preset.h"

struct bloom_cli {
	struct gpu_config gpu;
	struct client_config client; /* --server: run on fftbloomd (cli/client.h) */
	char output[OPT_STR_MAX];
	int bits, quiet;
};

static const struct opt_def own_table[] = {
	{"output", OPT_STRING, 0, 0, "", NULL,
	 "output image; its extension (.jpg .png .exr .hdr .pfm .webp .avif) picks the format "
	 "(also -o)", NULL, offsetof(struct bloom_cli, output)},
	{"bits", OPT_INT, 0, 32, "0", NULL, "PNG 8 or 16, EXR 16 (half) or 32 (float), AVIF 8, 10 or "
	 "12; 0: PNG 8, EXR 16, AVIF 8", NULL, offsetof(struct bloom_cli, bits)},
	{"quiet", OPT_BOOL, 0, 1, "false", NULL, "no summary line on stderr", NULL,
	 offsetof(struct bloom_cli, quiet)},
};

/* convolve's method other than fft: the model's choice (auto) and, when it is the direct
 * convolution, that. 0 (*method says which ran; the FFT path is the caller's), or 1 after a
 * message. */
static int direct(struct cli_gpu *g, struct bloom_ctx *b, const struct image *in,
                  const struct image *kimg, const struct bloom_params *p, struct spatial_ctx **s,
                  int *method, struct image *out, const char *name)
{
	char err[CONVOLVE_ERR_LEN];
	struct image gen = {0};
	int rc = 0;
	if (!kimg) {
		char berr[BLOOM_ERR_LEN];
		if ((rc = bloom_kernel_preset(b, &p->preset, &gen, berr)))
			snprintf(err, sizeof err, "%.500s", berr);
		kimg = &gen;
	}
	if (!rc)
		rc = spatial_ctx_create(g->pc, g->info, NULL, &log_gles_sink, s, err);
	if (!rc)
		rc = convolve_choose(b, *s, &(struct convolve_model){0}, p->method, in->width,
		                     in->height, kimg->width, kimg->height, p, method, NULL, NULL, err);
	if (!rc && *method == CONVOLVE_SPATIAL)
		rc = convolve_spatial(*s, in, kimg, p, out, NULL, err);
	image_free(&gen);
	if (rc)
		fprintf(stderr, "fftbloom %s: %s\n", name, err);
	return rc ? 1 : 0;
}

static int run(int op, int argc, char **argv)
{
	const char *name = op == BLOOM_OP_BLOOM ? "bloom" : "convolve";
	struct opt_def t[CLI_MAX_OPTS];
	size_t n = 0;
	cli_opts_add(t, &n, own_table, sizeof own_table / sizeof own_table[0], 0);
	cli_opts_add(t, &n, gpu_config_table, gpu_config_table_len, offsetof(struct bloom_cli, gpu));
	cli_opts_add(t, &n, client_table, client_table_len, offsetof(struct bloom_cli, client));
	struct bloom_cli c;
	struct request req;
	char err[BLOOM_ERR_LEN];
	int npos;
	const char *usage = op == BLOOM_OP_BLOOM
		? "usage: fftbloom bloom IN -o OUT [--kernel FILE | --kernel-preset NAME[:k=v,...]] "
		  "[options]\n  O = I + intensity * (prefilter(I) conv normalised kernel)\n"
		: "usage: fftbloom convolve IN --kernel FILE -o OUT [options]\n"
		  "  O = I conv kernel (linear, zero outside the image; not normalised unless "
		  "--normalize luminance)\n";
	unsigned rop = op == BLOOM_OP_BLOOM ? REQUEST_BLOOM : REQUEST_CONVOLVE;
	int cr = client_run(name, rop, t, n, &c, sizeof c, argc, argv);
	if (cr != CLIENT_LOCAL)
		return cr;
	int pr = cli_parse_request(name, usage, t, n, &c, sizeof c, &req, rop, argc, argv, &npos);
	if (pr)
		return pr == 1 ? 0 : pr;
	if (npos != 1 || !c.output[0]) {
		fprintf(stderr, "fftbloom %s: need one input image and -o OUTPUT (see --help)\n", name);
		return 2;
	}
	if (op == BLOOM_OP_CONVOLVE && !req.kernel[0] && !request_given(&req, "kernel-preset")) {
		fprintf(stderr, "fftbloom convolve: --kernel FILE (or --kernel-preset) is required\n");
		return 2;
	}
	char rerr[REQUEST_ERR_LEN];
	if (request_finish(&req, 0, rerr)) {
		fprintf(stderr, "fftbloom %s: %s\n", name, rerr);
		return 2;
	}
	if (request_given(&req, "format")) {
		fprintf(stderr, "fftbloom %s: the output file's extension is its format (no "
		        "--format)\n", name);
		return 2;
	}
	if (image_format_from_name(c.output) == IMAGE_FORMAT_UNKNOWN) {
		fprintf(stderr, "fftbloom %s: %s: unknown output extension (.jpg .png .exr .hdr .pfm "
		        ".webp .avif)\n", name, c.output);
		return 2;
	}
	log_setup(LOG_WARN, 0);
	struct image in = {0}, kimg = {0}, out = {0};
	struct image_info info;
	int rc = 1;
	if (image_read_file(argv[1], NULL, &in, &info, err)) {
		fprintf(stderr, "fftbloom %s: %s: %s\n", name, argv[1], err);
		return 1;
	}
	if (req.kernel[0] && image_read_file(req.kernel, NULL, &kimg, NULL, err)) {
		fprintf(stderr, "fftbloom %s: kernel %s: %s\n", name, req.kernel, err);
		image_free(&in);
		return 1;
	}
	struct cli_gpu g;
	struct bloom_ctx *b = NULL;
	struct spatial_ctx *s = NULL;
	if (cli_gpu_open(&c.gpu, &g))
		goto out;
	struct bloom_ctx_opts bo = {.wisdom = g.wisdom};
	if (bloom_ctx_create(g.pc, g.info, &bo, &log_gles_sink, &b, err)) {
		fprintf(stderr, "fftbloom %s: %s\n", name, err);
		goto out;
	}
	struct bloom_kernel k = {kimg.pixels ? &kimg : NULL, {0, 0}};
	struct bloom_stats st;
	memset(&st, 0, sizeof st);
	int method = CONVOLVE_FFT;
	if (op == BLOOM_OP_CONVOLVE && req.p.method != CONVOLVE_FFT &&
	    (rc = direct(&g, b, &in, k.img, &req.p, &s, &method, &out, name)) != 0)
		goto out;
	rc = 1;
	if (method == CONVOLVE_FFT &&
	    bloom_run(b, op, &in, &k, &req.p, c.quiet ? 0 : BLOOM_TIME_STAGES, &out, &st, err)) {
		fprintf(stderr, "fftbloom %s: %s\n", name, err);
		goto out;
	}
	struct image_encode_opts eo = {.quality = req.quality, .bits = c.bits};
	unsigned lost = 0;
	if (image_write_file(c.output, &out, &eo, &lost, err)) {
		fprintf(stderr, "fftbloom %s: %s: %s\n", name, c.output, err);
		goto out;
	}
	if (lost & (IMAGE_LOST_RANGE | IMAGE_LOST_NEGATIVE))
		fprintf(stderr, "fftbloom %s: warning: %s clipped values outside its range\n", name,
		        c.output);
	if (!c.quiet && method == CONVOLVE_SPATIAL) {
		fprintf(stderr, "%s %dx%d: direct (spatial) convolution\n", name, in.width, in.height);
	} else if (!c.quiet) { /* the stages that ran, by name */
		char tiles[48] = "";
		if (st.tiles_x * st.tiles_y > 1)
			snprintf(tiles, sizeof tiles, " in %dx%d tiles", st.tiles_x, st.tiles_y);
		fprintf(stderr, "%s %dx%d:%s padded %dx%d, %s kernel%s, GPU %.2f ms (%s:", name, in.width,
		        in.height, tiles, st.padded_w, st.padded_h, st.gray_kernel ? "grayscale" : "colour",
		        st.kernel_cached ? " (cached)" : "", st.gpu_ms,
		        st.timed == GPU_TIMING_QUERIES ? "timer queries" : "wall clock");
		for (int s = 0, first = 1; s < GPU_STAGE_COUNT; s++)
			if (st.stage_ms[s] > 0) {
				fprintf(stderr, "%s %s %.2f", first ? "" : ",", gpu_stage_names[s], st.stage_ms[s]);
				first = 0;
			}
		fprintf(stderr, ")\n");
	}
	rc = 0;
out:
	spatial_ctx_destroy(s);
	bloom_ctx_destroy(b);
	if (g.ctx)
		cli_gpu_close(&g);
	image_free(&in);
	image_free(&kimg);
	image_free(&out);
	return rc;
}

int cli_bloom(int argc, char **argv)
{
	return run(BLOOM_OP_BLOOM, argc, argv);
}

int cli_convolve(int argc, char **argv)
{
	return run(BLOOM_OP_CONVOLVE, argc, argv);
}

/* fftbloom kernel SPEC -o OUT: writes a built-in kernel as an image (EXR/PFM keep its range). */
int cli_kernel(int argc, char **argv)
{
	struct opt_def t[CLI_MAX_OPTS];
	size_t n = 0;
	cli_opts_add(t, &n, own_table, 1, 0); /* --output */
	cli_opts_add(t, &n, gpu_config_table, gpu_config_table_len, offsetof(struct bloom_cli, gpu));
	struct bloom_cli c;
	char err[BLOOM_ERR_LEN];
	int npos;
	if (cli_prepare_argv(argc, argv)) {
		printf("usage: fftbloom kernel NAME[:key=value,...] -o OUT.exr\n  the built-in kernels "
		       "and their keys (the same as --kernel-preset's):\n");
		kernel_preset_print_help(stdout);
		opts_print_help(stdout, t, n);
		return 0;
	}
	int pr = cli_parse("kernel", "", t, n, &c, sizeof c, NULL, NULL, argc, argv, &npos);
	if (pr)
		return pr == 1 ? 0 : pr;
	if (npos != 1 || !c.output[0]) {
		fprintf(stderr, "fftbloom kernel: need one kernel spec and -o OUTPUT (see --help)\n");
		return 2;
	}
	struct kernel_preset ks;
	char kerr[KERNEL_PRESET_ERR_LEN];
	if (kernel_preset_parse(argv[1], &ks, kerr)) {
		fprintf(stderr, "fftbloom kernel: %s\n", kerr);
		return 2;
	}
	log_setup(LOG_WARN, 0);
	struct cli_gpu g;
	struct bloom_ctx *b = NULL;
	struct image k = {0};
	int rc = 1;
	if (cli_gpu_open(&c.gpu, &g))
		return 1;
	if (bloom_ctx_create(g.pc, g.info, NULL, &log_gles_sink, &b, err) ||
	    bloom_kernel_preset(b, &ks, &k, err)) {
		fprintf(stderr, "fftbloom kernel: %s\n", err);
		goto out;
	}
	struct image_encode_opts eo = {.bits = 32};
	if (image_write_file(c.output, &k, &eo, NULL, err)) {
		fprintf(stderr, "fftbloom kernel: %s: %s\n", c.output, err);
		goto out;
	}
	rc = 0;
out:
	image_free(&k);
	bloom_ctx_destroy(b);
	cli_gpu_close(&g);
	return rc;
}
