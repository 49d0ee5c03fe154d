/* fftbloom convert: reads an image in any supported format (sniffed from its bytes) and writes
 * it in the format named by the output's extension, warning on stderr about what was lost. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "api/engine_errors.h"
#include "api/errors.h"
#include "api/format.h"
#include "codec/image.h"
#include "core/opts.h"

struct convert_opts {
	char output[OPT_STR_MAX];
	char format[OPT_STR_MAX]; /* a format_parse name; "": the output's extension */
	int quality;
	int subsampling; /* index into "444|420" */
	int bits;
	int dither;
	int speed;
	int exr_compression; /* enum image_exr_compression */
	int tiff_compression; /* enum image_tiff_compression */
	int keep_profile;
	int quiet;
	unsigned long long max_width, max_height, max_pixels;
};

static const struct opt_def convert_table[] = {
	{ "output", OPT_STRING, 0, 0, NULL, NULL,
	  "output file; its extension (.jpg .png .exr .hdr .pfm .webp .avif .tif) picks the format "
	  "(also -o; - is standard output, with --format)", NULL,
	  offsetof(struct convert_opts, output) },
	{ "format", OPT_STRING, 0, 0, "", NULL, "the output's format: " FORMAT_CHOICES " (png16, "
	  "avif10/12 and tiff16/tiff32 set --bits; tiff16f is half floats); needed for -o -, and must agree with a file's extension",
	  NULL, offsetof(struct convert_opts, format) },
	{ "quality", OPT_INT, 0, 100, "0", NULL,
	  "JPEG, WebP or AVIF quality 1-100 (WebP and AVIF: 100 is lossless); 0 = the format's "
	  "default (JPEG 90, WebP 79, AVIF 63)", NULL, offsetof(struct convert_opts, quality) },
	{ "subsampling", OPT_ENUM, 0, 0, "444", "444|420", "JPEG and AVIF chroma subsampling", NULL,
	  offsetof(struct convert_opts, subsampling) },
	{ "bits", OPT_INT, 0, 32, "0",  NULL,
	  "bits per sample: PNG 8 or 16, EXR 16 (half) or 32 (float), AVIF 8, 10 or 12, TIFF 8, 16 "
	  "or 32 (float); 0 = PNG 8, EXR 16, AVIF 8, TIFF 8", NULL, offsetof(struct convert_opts, bits) },
	{ "dither", OPT_BOOL, 0, 0, "0", NULL,
	  "ordered dither on 8-bit output (PNG, JPEG, WebP, AVIF)", NULL,
	  offsetof(struct convert_opts, dither) },
	{ "avif-speed", OPT_INT, 1, 10, "9", NULL,
	  "AVIF encoder speed, 1 (slowest, smallest) to 10 (fastest)", NULL,
	  offsetof(struct convert_opts, speed) },
	{ "exr-compression", OPT_NAMES, 0, 0, "zip", OPT_NAMES_OF(image_exr_compression_names),
	  "EXR compression: zip, none, rle, zips or piz (no DWA: OpenEXRCore 3.1.5 writes none)",
	  NULL, offsetof(struct convert_opts, exr_compression) },
	{ "tiff-compression", OPT_NAMES, 0, 0, "deflate", OPT_NAMES_OF(image_tiff_compression_names),
	  "TIFF compression: deflate, none or lzw", NULL,
	  offsetof(struct convert_opts, tiff_compression) },
	{ "keep-profile", OPT_BOOL, 0, 1, "false", NULL, "the output in the input's colour "
	  "profile, embedded (default: converted to sRGB and tagged so)", NULL,
	  offsetof(struct convert_opts, keep_profile) },
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
	"Reads IN (JPEG, PNG, OpenEXR, Radiance HDR, PFM, WebP, AVIF, TIFF or HEIC, told apart by\n"
	"content; - is standard input) and writes OUT in the format of its extension\n"
	"(or --format; -o - is standard output). Exit status 0 ok, 1 failure, 2 usage.\n";

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
	int format = co.format[0] ? format_parse(co.format) : OUT_AUTO;
	enum image_format f;
	if (format < 0) {
		fprintf(stderr, "fftbloom convert: --format %s: not one of %s\n", co.format,
		        FORMAT_CHOICES);
		return 2;
	}
	if (cli_output_format(co.output, format, &f, err, sizeof err)) {
		fprintf(stderr, "fftbloom convert: %s\n", err);
		return 2;
	}
	struct image_limits lim = { .max_width = (unsigned)co.max_width,
	                             .max_height = (unsigned)co.max_height,
	                             .max_pixels = co.max_pixels };
	struct image img;
	struct image_info info;
	struct image_colour colour;
	unsigned char *data;
	size_t len;
	if (cli_read_all(in, &data, &len, err, sizeof err))
		return cli_fail("convert", API_E_NONE, "%s", err);
	int rc = image_decode_colour(data, len, &lim, NULL, &img, &info, &colour, err);
	free(data);
	if (rc)
		return cli_fail("convert", engine_errors_image(rc), "%s: %s", in, err);
	if (info.colour_note[0] && !co.quiet)
		fprintf(stderr, "fftbloom convert: warning: %s: %s\n", in, info.colour_note);
	int bits = 0; /* the encoder's default, or the depth --format names */
	if (format != OUT_AUTO)
		format_resolve(format, NULL, &info, &f, &bits);
	struct image_encode_opts eo = { .quality = co.quality, .subsampling = co.subsampling ? 420 : 444,
	                               .bits = co.bits ? co.bits : bits, .dither = co.dither,
	                               .speed = co.speed, .exr_compression = co.exr_compression,
	                               .tiff_compression = co.tiff_compression,
	                               .half = format_half(format, f, &info),
	                               .colour = co.keep_profile ? &colour : NULL };
	unsigned lost = 0;
	char cnote[IMAGE_COLOUR_NOTE_LEN] = "";
	eo.colour_note = cnote;
	rc = image_encode(&img, f, &eo, &data, &len, &lost, err);
	if (!rc && cnote[0] && !co.quiet)
		fprintf(stderr, "fftbloom convert: warning: %s: %s\n", co.output, cnote);
	image_free(&img);
	image_colour_free(&colour);
	if (rc) {
		fprintf(stderr, "fftbloom convert: %s: %s\n", co.output, err);
		return rc == IMAGE_E_ARG ? 2 : 1;
	}
	rc = cli_write_all(co.output, data, len, err, sizeof err);
	free(data);
	if (rc)
		return cli_fail("convert", API_E_NONE, "%s", err);
	const char *fmt = image_format_name(f);
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
