/* fftbloom bloom / convolve: the GPU FFT convolution on image files. Parameters are the request
 * table (api/request.h: the HTTP API's, the same names with '-', bounds and messages); the
 * output format is the output's extension (--format for -o -). One frame gets a one-line summary
 * with the padded size and GPU stage times on stderr; several frames or a sequence run through
 * cli/batch.h with one context, its plans and kernel spectrum kept across them. The GPU work is
 * the public library's (fftbloom_bloom, fftbloom_convolve, fftbloom_preset_image). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/batch.h"
#include "cli/cli.h"
#include "cli/client.h"
#include "cli/common.h"
#include "core/log.h"
#include "codec/image.h"
#include "lib/include/fftbloom.h"
#include "api/engine_errors.h"
#include "api/errors.h"
#include "api/format.h"
#include "api/kernel_preset.h"
#include "gles/resample.h"

struct bloom_cli {
	struct gpu_config gpu;
	struct client_config client; /* --server: run on fftbloomd (cli/client.h) */
	char output[OPT_STR_MAX];
	int bits, quiet;
	char frames[OPT_STR_MAX];
	int io_threads, read_ahead, progress;
	char format[OPT_STR_MAX]; /* kernel's --format (bloom's is a request parameter) */
};

static const struct opt_def kernel_format_row = {"format", OPT_STRING, 0, 0, "", NULL,
	"the output's format: " FORMAT_CHOICES "; needed for -o - (standard output), and must "
	"agree with a file's extension", NULL, offsetof(struct bloom_cli, format)};

static const struct opt_def own_table[] = {
	{"output", OPT_STRING, 0, 0, "", NULL,
	 "output image; its extension (.jpg .png .exr .hdr .pfm .webp .avif .tif) picks the format "
	 "(also -o)", NULL, offsetof(struct bloom_cli, output)},
	{"bits", OPT_INT, 0, 32, "0", NULL, "PNG 8 or 16, EXR 16 (half) or 32 (float), AVIF 8, 10 or "
	 "12; 0: as the HTTP API: PNG 16 for a 16-bit PNG input, else 8; EXR 16; AVIF 10 for an "
	 "input of more than 8 bits, else 8", NULL, offsetof(struct bloom_cli, bits)},
	{"quiet", OPT_BOOL, 0, 1, "false", NULL, "no summary line, progress or warnings on stderr "
	 "(errors still)", NULL,
	 offsetof(struct bloom_cli, quiet)},
	{"frames", OPT_STRING, 0, 0, "", NULL, "the frames of a sequence input (IN a pattern: "
	 "shot.####.exr or shot.%04d.exr): 1001-1100, 1-10,20-30, 1-100x2; default: the "
	 "pattern's files on disk", NULL, offsetof(struct bloom_cli, frames)},
	{"io-threads", OPT_INT, 1, 16, "2", NULL, "several frames: threads decoding ahead, and as "
	 "many encoding behind, while the GPU runs", NULL, offsetof(struct bloom_cli, io_threads)},
	{"read-ahead", OPT_INT, 1, 64, "4", NULL, "several frames: frames decoded ahead of the GPU "
	 "(and results waiting for a writer) at most", NULL, offsetof(struct bloom_cli, read_ahead)},
	{"progress", OPT_ENUM, 0, 0, "auto", "auto|bar|lines", "several frames: a progress bar "
	 "(auto: when stderr is a terminal) or a line per frame", NULL,
	 offsetof(struct bloom_cli, progress)},
};

/* What every frame of a command shares. */
struct frames {
	int convolve;                          /* 0: bloom; 1: convolve */
	fftbloom_context *fc;
	const struct fftbloom_image *kernel;   /* NULL: the preset */
	const struct request *req; /* the defaults that depend on the input resolved per frame */
};

/* The library's parameters for the request's (bp: its numbers), the preset into *ps. */
static void lib_params(const struct bloom_params *bp, int convolve, int timed,
                       struct fftbloom_bloom_params *p, struct fftbloom_preset *ps)
{
	fftbloom_bloom_params_init(p, convolve);
	p->threshold = bp->threshold, p->knee = bp->knee, p->clamp_max = bp->clamp_max;
	p->intensity = bp->intensity, p->mix = bp->mix, p->kernel_scale = bp->kernel_scale;
	p->composite = bp->composite, p->normalize = bp->normalize, p->precision = bp->precision;
	p->method = bp->method, p->technique = bp->technique;
	p->center_mode = bp->center.mode, p->center_x = bp->center.x, p->center_y = bp->center.y;
	p->time_stages = timed;
	const struct kernel_preset *k = &bp->preset;
	if (k->kind == KERNEL_NONE) {
		p->preset = NULL; /* the default: aperture */
		return;
	}
	*ps = (struct fftbloom_preset){k->kind, k->size, k->sigma, k->core, k->halo, k->halo_gain,
	                               k->streaks, k->length, k->rotation, k->blades, k->radius};
	p->preset = ps;
}

/* One frame on the GPU (batch_frame_fn): bloom, or convolve by the method asked; the note is
 * the padded size, the kernel's kind and whether its spectrum came from the cache, and when
 * timed the GPU stages by name. */
static int run_frame(void *arg, const struct image *in, const struct image_info *info,
                     int timed, struct image *out, char *note, size_t note_len, char *msg,
                     size_t msg_len)
{
	struct frames *f = arg;
	struct request req = *f->req;
	request_resolve_input(&req, request_input_kind(info));
	/* a sized answer (gles/resample.h): the frame resized before the operation, its kernel
	 * scaled to match, or the result after (the daemon's rule, daemon/gpu_jobs.c) */
	struct resample_geom geo;
	int sized = request_sized(&req);
	if (sized && resample_fit(in->width, in->height, req.width, req.height, req.dpr, req.fit,
	                          &geo)) {
		snprintf(msg, msg_len, "width=%d height=%d dpr=%g: the answer would have a side above "
		         "%d", req.width, req.height, req.dpr, RESAMPLE_MAX_SIDE);
		return cli_lib_error(FFTBLOOM_E_ARG);
	}
	sized = sized && !resample_is_identity(&geo, in->width, in->height);
	struct fftbloom_resize rz = {geo.out_w, geo.out_h, geo.dst_x, geo.dst_y, geo.dst_w,
	                             geo.dst_h, geo.src_x, geo.src_y, geo.src_w, geo.src_h};
	struct fftbloom_image fin = {in->width, in->height, in->channels, in->pixels}, fout;
	struct fftbloom_image small = {0, 0, 0, NULL};
	int e = 0;
	if (sized && req.resize == RESAMPLE_BEFORE) {
		const struct fftbloom_image *k = f->kernel;
		int kw = k ? k->width : req.p.preset.size, kh = k ? k->height : req.p.preset.size;
		if (resample_scale(&geo) != 1.0 || req.p.kernel_scale > 0)
			req.p.kernel_scale = resample_kernel_scale(req.p.kernel_scale, kw, kh, in->width,
			                                           in->height, &geo);
		e = fftbloom_resize(f->fc, &fin, &rz, &small);
		fin = small;
	}
	struct fftbloom_bloom_params p;
	struct fftbloom_preset ps;
	lib_params(&req.p, f->convolve, timed, &p, &ps);
	struct fftbloom_bloom_stats st;
	if (!e)
		e = f->convolve ? fftbloom_convolve(f->fc, &fin, f->kernel, &p, &fout, &st)
		                : fftbloom_bloom(f->fc, &fin, f->kernel, &p, &fout, &st);
	fftbloom_image_free(&small);
	if (!e && sized && req.resize == RESAMPLE_AFTER) {
		struct fftbloom_image full = fout;
		e = fftbloom_resize(f->fc, &full, &rz, &fout);
		fftbloom_image_free(&full);
	}
	if (e) {
		snprintf(msg, msg_len, "%s", fftbloom_context_message(f->fc));
		return cli_lib_error(e);
	}
	*out = (struct image){.width = fout.width, .height = fout.height, .channels = fout.channels, .pixels = fout.data};
	if (st.method == FFTBLOOM_METHOD_SPATIAL) {
		snprintf(note, note_len, " direct (spatial) convolution");
		return 0;
	}
	char tiles[48] = "";
	if (st.tiles_x * st.tiles_y > 1)
		snprintf(tiles, sizeof tiles, " in %dx%d tiles", st.tiles_x, st.tiles_y);
	size_t n = (size_t)snprintf(note, note_len, "%s padded %dx%d, %s kernel%s", tiles,
	                            st.padded_w, st.padded_h,
	                            st.gray_kernel ? "grayscale" : "colour",
	                            st.kernel_cached ? " (cached)" : "");
	if (!timed || n >= note_len)
		return 0;
	/* the total is the sum of the stages listed: the kernel's spectrum, the upload and the
	 * read-back included, which the stats' gpu_ms (prefilter to composite) leaves out */
	double total = 0;
	for (int s = 0; fftbloom_stage_name(s); s++)
		total += st.stage_ms[s] > 0 ? st.stage_ms[s] : 0;
	n += (size_t)snprintf(note + n, note_len - n, ", %s %.2f ms (%s:",
	                      strcmp(fftbloom_context_engine(f->fc), "cpu") ? "GPU" : "CPU engine",
	                      total, st.timed == 1 ? "timer queries" : "wall clock");
	for (int s = 0, first = 1; fftbloom_stage_name(s) && n < note_len; s++)
		if (st.stage_ms[s] > 0) { /* the stages that ran, by name */
			n += (size_t)snprintf(note + n, note_len - n, "%s %s %.2f", first ? "" : ",",
			                      fftbloom_stage_name(s), st.stage_ms[s]);
			first = 0;
		}
	if (n < note_len)
		snprintf(note + n, note_len - n, ")");
	return 0;
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
	char err[FFTBLOOM_MESSAGE_LEN];
	int npos;
	const char *usage = op == BLOOM_OP_BLOOM
		? "usage: fftbloom bloom IN -o OUT [--kernel FILE | --kernel-preset NAME[:k=v,...]] "
		  "[options]\n  O = I + intensity * (prefilter(I) conv normalised kernel)\n"
		: "usage: fftbloom convolve IN --kernel FILE -o OUT [options]\n"
		  "  O = I conv kernel (linear, zero outside the image; not normalised unless "
		  "--normalize luminance)\n";
	const char *usage_more =
		"  IN - -o - --format png: standard input and output (the input's format sniffed)\n"
		"  IN... -o DIR: several frames, each written to DIR under its name\n"
		"  shot.####.exr -o out/shot.####.exr [--frames 1001-1100]: a sequence ('#' digits or\n"
		"    %04d; without --frames the frames on disk); the GPU context, plans and kernel\n"
		"    spectrum are kept across frames while threads decode ahead and encode behind.\n"
		"  Several frames: a failed frame is reported and the others go on; exit 1 names the\n"
		"  frames that failed, 130 after Ctrl-C (the frames read are finished).\n";
	char full_usage[2048];
	snprintf(full_usage, sizeof full_usage, "%s%s", usage, usage_more);
	unsigned rop = op == BLOOM_OP_BLOOM ? REQUEST_BLOOM : REQUEST_CONVOLVE;
	int cr = client_run(name, rop, t, n, &c, sizeof c, argc, argv);
	if (cr != CLIENT_LOCAL)
		return cr;
	int pr = cli_parse_request(name, full_usage, t, n, &c, sizeof c, &req, rop, argc, argv,
	                           &npos);
	if (pr)
		return pr == 1 ? 0 : pr;
	if (npos < 1 || !c.output[0]) {
		fprintf(stderr, "fftbloom %s: need an input image (or several, or a sequence) and -o "
		        "OUTPUT (see --help)\n", name);
		return 2;
	}
	if (c.client.kernel_name[0]) {
		fprintf(stderr, "fftbloom %s: --kernel-name names a kernel registered on a server: it "
		        "needs --server (locally, --kernel FILE)\n", name);
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
	struct batch_list list;
	char berr[BATCH_ERR_LEN];
	int lr = batch_list_make(argv + 1, npos, c.output, c.frames, &list, berr);
	if (lr) {
		fprintf(stderr, "fftbloom %s: %s\n", name, berr);
		return lr < 0 ? 2 : 1;
	}
	struct batch_opts bo = {.name = name, .format = req.format, .bits = c.bits,
	                        .quality = req.quality, .exr_compression = req.exr_compression,
	                        .tiff_compression = req.tiff_compression,
	                        .keep_profile = req.keep_profile,
	                        .threads = c.io_threads,
	                        .ahead = c.read_ahead, .quiet = c.quiet,
	                        .bloom = op == BLOOM_OP_BLOOM,
	                        .progress = c.progress == 1   ? BATCH_PROGRESS_BAR
	                                    : c.progress == 2 ? BATCH_PROGRESS_LINES
	                                                      : BATCH_PROGRESS_AUTO};
	if (batch_check_formats(&list, &bo, berr)) {
		fprintf(stderr, "fftbloom %s: %s\n", name, berr);
		batch_list_free(&list);
		return 2;
	}
	if (batch_output_folders(&list, berr)) {
		fprintf(stderr, "fftbloom %s: %s\n", name, berr);
		batch_list_free(&list);
		return 1;
	}
	log_setup(LOG_WARN, 0);
	struct image kimg = {0};
	int rc = 1;
	if (req.kernel[0] && (image_read_file(req.kernel, &cli_image_limits, &kimg, NULL, err) ||
	                      cli_nonfinite(image_nonfinite(&kimg), "the kernel", err, sizeof err))) {
		fprintf(stderr, "fftbloom %s: kernel %s: %s\n", name, req.kernel, err);
		image_free(&kimg);
		batch_list_free(&list);
		return 1;
	}
	struct fftbloom_image klib = {kimg.width, kimg.height, kimg.channels, kimg.pixels};
	struct frames f = {.convolve = op == BLOOM_OP_CONVOLVE, .kernel = kimg.pixels ? &klib : NULL,
	                   .req = &req};
	if (cli_lib_open(&c.gpu, 0, &f.fc))
		goto out;
	bo.frame = run_frame;
	bo.arg = &f;
	rc = batch_run(&list, &bo);
out:
	fftbloom_context_destroy(f.fc);
	image_free(&kimg);
	batch_list_free(&list);
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

/* kernel's --bits: the depth written, checked against the format table */
static const struct opt_def kernel_bits_opt = {
	"bits", OPT_INT, 0, 32, "0", NULL, "sample depth written, one the format writes (PNG 8 "
	"or 16, AVIF 8, 10 or 12, JPEG and WebP 8, EXR 16 or 32, HDR and PFM 32); 0: the "
	"format's deepest. Integer formats hold 0-1: the kernel is scaled so that its peak is 1 "
	"(said on stderr); float formats keep its values", NULL, offsetof(struct bloom_cli, bits)};

/* The depth a kernel in fmt is written at: *bits (0: the format's deepest) when fmt writes it.
 * 0, or 2 with a message on stderr naming the depths fmt writes. */
static int kernel_depth(enum image_format fmt, int *bits)
{
	const struct image_format_desc *d = image_format_desc(fmt);
	if (!d || !d->write)
		return 0; /* the encoder names what it writes */
	int deepest = 0;
	for (int i = 0; i < 4 && d->write_bits[i]; i++)
		deepest = d->write_bits[i] > deepest ? d->write_bits[i] : deepest;
	if (!*bits)
		*bits = deepest;
	if (image_format_writes_bits(d->format, *bits))
		return 0;
	char list[40];
	fprintf(stderr, "fftbloom kernel: --bits %d: %s writes %s bits per sample\n", *bits,
	        d->title, format_depths(d->write_bits, list, sizeof list));
	return 2;
}

/* A kernel for an integer format: scaled so that its peak is 1, the largest value the format
 * holds, and said on stderr with the factor that undoes it. */
static void kernel_fit(struct image *k, enum image_format fmt, int bits)
{
	const struct image_format_desc *d = image_format_desc(fmt);
	if (!d || d->float_samples == 1 || (d->float_samples == 2 && bits == 32))
		return;
	size_t n = (size_t)k->width * (size_t)k->height * (size_t)k->channels;
	float peak = 0;
	for (size_t i = 0; i < n; i++)
		peak = k->pixels[i] > peak ? k->pixels[i] : peak;
	if (!(peak > 0) || peak == 1)
		return;
	for (size_t i = 0; i < n; i++)
		k->pixels[i] /= peak;
	fprintf(stderr, "fftbloom kernel: scaled by %g so that its peak is 1 in %d-bit %s (bloom "
	        "normalises a kernel; convolve takes it as it is: multiply by %g for the "
	        "original)\n", 1 / peak, bits, d->title, peak);
}

/* fftbloom kernel SPEC -o OUT: writes a built-in kernel as an image, at the depth --bits
 * chooses among the format's (float formats keep its range). */
int cli_kernel(int argc, char **argv)
{
	struct opt_def t[CLI_MAX_OPTS];
	size_t n = 0;
	cli_opts_add(t, &n, own_table, 1, 0); /* --output */
	cli_opts_add(t, &n, &kernel_bits_opt, 1, 0);
	cli_opts_add(t, &n, &kernel_format_row, 1, 0);
	cli_opts_add(t, &n, gpu_config_table, gpu_config_table_len, offsetof(struct bloom_cli, gpu));
	struct bloom_cli c;
	char err[FFTBLOOM_MESSAGE_LEN];
	int npos;
	if (cli_prepare_argv(argc, argv)) {
		printf("usage: fftbloom kernel NAME[:key=value,...] -o OUT.exr [--bits N]   (-o - "
		       "--format exr: standard output)\n  the built-in kernels and their keys (the same "
		       "as --kernel-preset's):\n");
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
	int format = c.format[0] ? format_parse(c.format) : OUT_AUTO;
	enum image_format f = IMAGE_FORMAT_UNKNOWN;
	if (format < 0 || cli_output_format(c.output, format, &f, err, sizeof err)) {
		if (format < 0)
			snprintf(err, sizeof err, "--format %.100s: not one of %s", c.format,
			         FORMAT_CHOICES);
		fprintf(stderr, "fftbloom kernel: %s\n", err);
		return 2;
	}
	if (kernel_depth(f, &c.bits))
		return 2;
	log_setup(LOG_WARN, 0);
	fftbloom_context *fc = NULL;
	struct image k = {0};
	int rc = 1;
	if (cli_lib_open(&c.gpu, 0, &fc))
		return 1;
	struct fftbloom_preset ps = {ks.kind, ks.size, ks.sigma, ks.core, ks.halo, ks.halo_gain,
	                             ks.streaks, ks.length, ks.rotation, ks.blades, ks.radius};
	struct fftbloom_image kl;
	if (fftbloom_preset_image(fc, &ps, &kl)) {
		fprintf(stderr, "fftbloom kernel: %s\n", fftbloom_context_message(fc));
		goto out;
	}
	k = (struct image){.width = kl.width, .height = kl.height, .channels = kl.channels, .pixels = kl.data};
	kernel_fit(&k, f, c.bits);
	/* lossless where the format can be (WebP, AVIF), JPEG at its best */
	struct image_encode_opts eo = {.bits = c.bits, .quality = 100};
	unsigned char *data;
	size_t len;
	if ((rc = image_encode(&k, f, &eo, &data, &len, NULL, err))) {
		rc = cli_fail("kernel", rc == IMAGE_E_ARG ? API_E_INVALID_REQUEST : API_E_ENCODE_FAILED,
		              "%s: %s", c.output, err);
		goto out;
	}
	rc = cli_write_all(c.output, data, len, err, sizeof err);
	free(data);
	if (rc) {
		rc = cli_fail("kernel", API_E_NONE, "%s", err);
		goto out;
	}
	rc = 0;
out:
	image_free(&k);
	fftbloom_context_destroy(fc);
	return rc;
}
