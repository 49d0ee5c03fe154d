/* fftbloom convert: reads an image in any supported format (sniffed from its bytes) and writes
 * it in the format named by the output's extension, warning on stderr about what was lost. */
#include <stddef.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "codec/image.h"
#include "core/opts.h"

struct convert_opts {
	char output[OPT_STR_MAX];
	int quality;
	int subsampling; /* index into "444|420" */
	int bits;
	int dither;
	int speed;
	int quiet;
	unsigned long long max_width, max_height, max_pixels;
};

static const struct opt_def convert_table[] = {
	{ "output", OPT_STRING, 0, 0, NULL, NULL,
	  "output file; its extension (.jpg .png .exr .hdr .pfm .webp .avif) picks the format "
	  "(also -o)", NULL, offsetof(struct convert_opts, output) },
	{ "quality", OPT_INT, 0, 100, "0", NULL,
	  "JPEG, WebP or AVIF quality 1-100 (WebP and AVIF: 100 is lossless); 0 = the format's "
	  "default (JPEG 90, WebP 79, AVIF 63)", NULL, offsetof(struct convert_opts, quality) },
	{ "subsampling", OPT_ENUM, 0, 0, "444", "444|420", "JPEG and AVIF chroma subsampling", NULL,
	  offsetof(struct convert_opts, subsampling) },
	{ "bits", OPT_INT, 0, 32, "0",  NULL,
	  "bits per sample: PNG 8 or 16, EXR 16 (half) or 32 (float), AVIF 8, 10 or 12; 0 = PNG 8, "
	  "EXR 16, AVIF 8", NULL, offsetof(struct convert_opts, bits) },
	{ "dither", OPT_BOOL, 0, 0, "0", NULL,
	  "ordered dither on 8-bit output (PNG, JPEG, WebP, AVIF)", NULL,
	  offsetof(struct convert_opts, dither) },
	{ "avif-speed", OPT_INT, 1, 10, "9", NULL,
	  "AVIF encoder speed, 1 (slowest, smallest) to 10 (fastest)", NULL,
	  offsetof(struct convert_opts, speed) },
	{ "quiet", OPT_BOOL, 0, 1, "false", NULL, "no warnings on stderr about what the output lost "
	  "(errors still)", NULL, offsetof(struct convert_opts, quiet) },
	{ "max-width", OPT_SIZE, 1, 2147483647, "32768", NULL, "largest input width accepted", NULL,
	  offsetof(struct convert_opts, max_width) },
	{ "max-height", OPT_SIZE, 1, 2147483647, "32768", NULL, "largest input height accepted",
	  NULL, offsetof(struct convert_opts, max_height) },
	{ "max-pixels", OPT_SIZE, 1, 1e15, "100000000", NULL, "largest input pixel count accepted",
	  NULL, offsetof(struct convert_opts, max_pixels) },
};
#define CONVERT_TABLE_LEN (sizeof convert_table / sizeof convert_table[0])

static const char usage[] =
	"usage: fftbloom convert IN -o OUT [options]\n"
	"Reads IN (JPEG, PNG, OpenEXR, Radiance HDR, PFM, WebP or AVIF, told apart by\n"
	"content) and writes OUT in the format of its extension. Exit status 0 ok,\n"
	"1 failure, 2 usage.\n";

int cli_convert(int argc, char **argv)
{
	struct convert_opts co;
	char err[IMAGE_ERR_LEN];
	int npos;
	int pr = cli_parse("convert", usage, convert_table, CONVERT_TABLE_LEN, &co, sizeof co, NULL,
	                   NULL, argc, argv, &npos);
	if (pr)
		return pr == 1 ? 0 : pr;
	if (npos != 1 || !co.output[0]) {
		fprintf(stderr, "fftbloom convert: %s\n",
			npos > 1 ? "one input file only" : npos ? "no output (-o OUT)" : "no input file");
		cli_usage(stderr, usage, convert_table, CONVERT_TABLE_LEN);
		return 2;
	}
	const char *in = argv[1];
	if (image_format_from_name(co.output) == IMAGE_FORMAT_UNKNOWN) {
		fprintf(stderr, "fftbloom convert: %s: unknown extension (use .jpg .png .exr .hdr .pfm "
			".webp .avif)\n", co.output);
		return 2;
	}
	struct image_limits lim = { .max_width = (unsigned)co.max_width,
	                             .max_height = (unsigned)co.max_height,
	                             .max_pixels = co.max_pixels };
	struct image img;
	struct image_info info;
	int rc = image_read_file(in, &lim, &img, &info, err);
	if (rc) {
		fprintf(stderr, "fftbloom convert: %s: %s\n", in, err);
		return 1;
	}
	struct image_encode_opts eo = { .quality = co.quality, .subsampling = co.subsampling ? 420 : 444,
	                               .bits = co.bits, .dither = co.dither, .speed = co.speed };
	unsigned lost = 0;
	rc = image_write_file(co.output, &img, &eo, &lost, err);
	image_free(&img);
	if (rc) {
		fprintf(stderr, "fftbloom convert: %s: %s\n", co.output, err);
		return rc == IMAGE_E_ARG ? 2 : 1;
	}
	const char *fmt = image_format_name(image_format_from_name(co.output));
	if (co.quiet)
		lost = 0;
	if (lost & IMAGE_LOST_ALPHA)
		fprintf(stderr, "fftbloom convert: warning: alpha dropped (%s has no alpha channel)\n",
			fmt);
	if (lost & IMAGE_LOST_NEGATIVE)
		fprintf(stderr, "fftbloom convert: warning: negative values clipped to 0\n");
	if (lost & IMAGE_LOST_RANGE)
		fprintf(stderr, "fftbloom convert: warning: values out of %s's range clipped "
				"(or NaN/infinity replaced)\n", fmt);
	if ((lost & IMAGE_LOST_PRECISION) && (info.float_format || info.bits > 8))
		fprintf(stderr, "fftbloom convert: warning: precision reduced (%d-bit %s input, %s output)\n",
			info.bits, info.float_format ? "float" : "integer", fmt);
	return 0;
}
