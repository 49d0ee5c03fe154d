/* Colour profiles (codec/icc.c) against lcms2's own conversions: Display P3 and Adobe RGB
 * images (their profiles built here with cmsCreateRGBProfile: no Debian package ships them),
 * embedded in PNG (iCCP), JPEG (APP2), WebP (ICCP) and AVIF (ICC and nclx), go through a no-op
 * bloom on the GPU engine (intensity 0) and out as sRGB within 1 code of lcms2's transform
 * to sRGB for in-gamut colours; with the input's profile kept they come back within 1 code of
 * the input. The shift of decoding a P3 image as sRGB (before profiles were read) is printed.
 * PNG gAMA/cHRM, EXR chromaticities; hostile profiles (truncated, huge, malformed tags, wrong
 * colour space, inconsistent JPEG segments) are ignored with a note, never a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <lcms2.h>
#include <math.h>
#include <spng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include <avif/avif.h>
#include <webp/encode.h>
#include <webp/mux.h>

#include "codec/colour.h"
#include "codec/icc.h"
#include "codec/image.h"
#include "gles/bloom.h"
#include "tests/testutil.h"

#define W 61
#define H 37

/* A profile of primaries/white xy (red, green, blue, white) with the sRGB curve (gamma 0) or a
 * pure power gamma, saved to malloc'd bytes. */
/* Profile p with description desc saved to malloc'd bytes (*len of them); p closed. */
static unsigned char *save_profile(cmsHPROFILE p, const char *desc, size_t *len)
{
	cmsMLU *mlu = cmsMLUalloc(NULL, 1);
	cmsMLUsetASCII(mlu, "en", "US", desc);
	cmsWriteTag(p, cmsSigProfileDescriptionTag, mlu);
	cmsMLUfree(mlu);
	cmsUInt32Number n = 0;
	assert_true(cmsSaveProfileToMem(p, NULL, &n));
	unsigned char *b = malloc(n);
	assert_true(cmsSaveProfileToMem(p, b, &n));
	cmsCloseProfile(p);
	*len = n;
	return b;
}

static unsigned char *make_profile(const double xy[8], double gamma, const char *desc,
                                   size_t *len)
{
	cmsCIExyY white = {xy[6], xy[7], 1.0};
	cmsCIExyYTRIPLE prim = {{xy[0], xy[1], 1.0}, {xy[2], xy[3], 1.0}, {xy[4], xy[5], 1.0}};
	static const double srgb[5] = {2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045};
	cmsToneCurve *c = gamma > 0 ? cmsBuildGamma(NULL, gamma)
	                            : cmsBuildParametricToneCurve(NULL, 4, srgb);
	cmsToneCurve *cs[3] = {c, c, c};
	cmsHPROFILE p = cmsCreateRGBProfile(&white, &prim, cs);
	assert_non_null(p);
	unsigned char *b = save_profile(p, desc, len);
	cmsFreeToneCurve(c);
	return b;
}

static const double P3[8] = {0.680, 0.320, 0.265, 0.690, 0.150, 0.060, 0.3127, 0.3290};
static const double ADOBE[8] = {0.64, 0.33, 0.21, 0.71, 0.15, 0.06, 0.3127, 0.3290};

/* Random 8-bit RGB codes: most in the middle of the range (in gamut after conversion), some
 * saturated (out of sRGB's gamut). */
static unsigned char *rand_codes(void)
{
	unsigned char *c = malloc(W * H * 3);
	for (int i = 0; i < W * H * 3; i++)
		c[i] = (unsigned char)(i % 7 == 0 ? tu_uniform() * 256 : 40 + tu_uniform() * 170);
	return c;
}

/* An 8-bit RGB PNG of codes with the iCCP profile, written by libspng directly. */
static unsigned char *png_with(const unsigned char *codes, const unsigned char *icc, size_t icc_len,
                               size_t *len)
{
	spng_ctx *ctx = spng_ctx_new(SPNG_CTX_ENCODER);
	struct spng_ihdr ihdr = {W, H, 8, SPNG_COLOR_TYPE_TRUECOLOR, 0, 0, 0};
	struct spng_iccp iccp = {"test", icc_len, (char *)icc};
	spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1);
	assert_int_equal(spng_set_ihdr(ctx, &ihdr), 0);
	if (icc)
		assert_int_equal(spng_set_iccp(ctx, &iccp), 0);
	assert_int_equal(spng_encode_image(ctx, codes, W * H * 3, SPNG_FMT_PNG,
	                                   SPNG_ENCODE_FINALIZE), 0);
	int e;
	unsigned char *b = spng_get_png_buffer(ctx, len, &e);
	spng_ctx_free(ctx);
	assert_non_null(b);
	return b;
}

/* The 8-bit RGB codes of a PNG (libspng), malloc'd; *icc_len gets its iCCP's size (0: none). */
static unsigned char *png_codes(const unsigned char *png, size_t len, size_t *icc_len, int *srgb)
{
	spng_ctx *ctx = spng_ctx_new(0);
	spng_set_png_buffer(ctx, png, len);
	size_t n;
	assert_int_equal(spng_decoded_image_size(ctx, SPNG_FMT_RGB8, &n), 0);
	assert_int_equal((int)n, W * H * 3);
	unsigned char *c = malloc(n);
	assert_int_equal(spng_decode_image(ctx, c, n, SPNG_FMT_RGB8, 0), 0);
	struct spng_iccp iccp;
	uint8_t intent;
	*icc_len = spng_get_iccp(ctx, &iccp) ? 0 : iccp.profile_len;
	*srgb = spng_get_srgb(ctx, &intent) == 0;
	spng_ctx_free(ctx);
	return c;
}

/* lcms2's own conversion of codes from profile icc to sRGB (8 bits, relative colorimetric), and
 * which pixels are in sRGB's gamut (the float transform's components within [0, 1] with a
 * quarter code to spare). */
static void lcms_to_srgb(const unsigned char *codes, const unsigned char *icc, size_t icc_len,
                         unsigned char *out, unsigned char *in_gamut)
{
	cmsHPROFILE a = cmsOpenProfileFromMem(icc, (cmsUInt32Number)icc_len), s = cmsCreate_sRGBProfile();
	cmsHTRANSFORM t8 = cmsCreateTransform(a, TYPE_RGB_8, s, TYPE_RGB_8,
	                                      INTENT_RELATIVE_COLORIMETRIC, cmsFLAGS_NOOPTIMIZE);
	cmsHTRANSFORM tf = cmsCreateTransform(a, TYPE_RGB_8, s, TYPE_RGB_FLT,
	                                      INTENT_RELATIVE_COLORIMETRIC, cmsFLAGS_NOOPTIMIZE);
	assert_non_null(t8);
	assert_non_null(tf);
	cmsDoTransform(t8, codes, out, W * H);
	float *f = malloc(W * H * 3 * sizeof *f);
	cmsDoTransform(tf, codes, f, W * H);
	for (int i = 0; i < W * H; i++) {
		in_gamut[i] = 1;
		for (int c = 0; c < 3; c++)
			if (!(f[i * 3 + c] > 0.001f && f[i * 3 + c] < 0.999f))
				in_gamut[i] = 0;
	}
	free(f);
	cmsDeleteTransform(t8);
	cmsDeleteTransform(tf);
	cmsCloseProfile(a);
	cmsCloseProfile(s);
}

static struct program_cache *g_pc;
static struct bloom_ctx *g_b;

static int setup(void **state)
{
	(void)state;
	tu_seed_from_clock();
	struct egl_ctx *ctx = tu_gl_context();
	char err[BLOOM_ERR_LEN];
	if (!ctx || program_cache_create("", NULL, &g_pc) ||
	    bloom_ctx_create(g_pc, egl_ctx_info(ctx), NULL, NULL, &g_b, err))
		g_b = NULL; /* the GPU tests skip */
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	bloom_ctx_destroy(g_b);
	program_cache_destroy(g_pc);
	return 0;
}

/* The engine's no-op bloom: intensity 0 (O = I + 0 * B), a 3x3 grey kernel. */
static void noop_bloom(struct image *img)
{
	if (!g_b)
		return;
	struct image k, out;
	assert_int_equal(image_alloc(&k, 3, 3, 1), 0);
	for (int i = 0; i < 9; i++)
		k.pixels[i] = 1;
	struct bloom_params p;
	tu_params(&p, BLOOM_OP_BLOOM);
	p.intensity = 0;
	char err[BLOOM_ERR_LEN];
	struct bloom_kernel kr = {&k, {0, 0}};
	int rc = bloom_run(g_b, BLOOM_OP_BLOOM, img, &kr, &p, 0, &out, NULL, err);
	if (rc)
		print_error("bloom_run: %s\n", err);
	assert_int_equal(rc, 0);
	image_free(&k);
	image_free(img);
	*img = out;
}

/* Counts |a - b| > 1 over the in-gamut pixels (all when in_gamut is NULL), prints the largest
 * difference in and out of gamut, returns the count. */
static int compare_codes(const char *what, const unsigned char *a, const unsigned char *b,
                         const unsigned char *in_gamut)
{
	int worst_in = 0, worst_out = 0, bad = 0, nin = 0;
	for (int i = 0; i < W * H; i++) {
		int in = !in_gamut || in_gamut[i];
		nin += in;
		for (int c = 0; c < 3; c++) {
			int d = abs((int)a[i * 3 + c] - (int)b[i * 3 + c]);
			if (in && d > worst_in)
				worst_in = d;
			if (!in && d > worst_out)
				worst_out = d;
			if (in && d > 1 && bad < 4)
				print_message("  pixel %d channel %d: %d against %d\n", i, c,
				              a[i * 3 + c], b[i * 3 + c]);
			bad += in && d > 1;
		}
	}
	print_message("  %s: %d of %d pixels in gamut; largest difference %d codes in gamut, %d "
	              "out of it\n", what, nin, W * H, worst_in, worst_out);
	return bad;
}

/* The shift of taking P3 codes as sRGB: the sRGB codes lcms2 makes of them against the codes
 * themselves (what an answer carried before profiles were read). */
static void print_shift(const char *what, const unsigned char *codes, const unsigned char *ref,
                        const unsigned char *in_gamut, const unsigned char *ours)
{
	double before = 0, after = 0;
	int worst_before = 0, worst_after = 0, n = 0;
	for (int i = 0; i < W * H; i++) {
		if (!in_gamut[i])
			continue;
		n++;
		for (int c = 0; c < 3; c++) {
			int d0 = abs((int)codes[i * 3 + c] - (int)ref[i * 3 + c]);
			int d1 = abs((int)ours[i * 3 + c] - (int)ref[i * 3 + c]);
			before += d0, after += d1;
			worst_before = d0 > worst_before ? d0 : worst_before;
			worst_after = d1 > worst_after ? d1 : worst_after;
		}
	}
	print_message("  %s shift against lcms2's sRGB (in-gamut pixels): decoded as sRGB mean %.2f "
	              "max %d codes; with its profile mean %.3f max %d codes\n", what,
	              before / (3.0 * n), worst_before, after / (3.0 * n), worst_after);
}

/* Decodes file, runs the no-op bloom, encodes as PNG twice (sRGB, and keep_profile), and checks
 * both against lcms2 and against the input codes. */
static void check_file(const char *what, const unsigned char *file, size_t len,
                       const unsigned char *codes, const unsigned char *icc, size_t icc_len,
                       int lossy)
{
	struct image img;
	struct image_info info;
	struct image_colour colour;
	char err[IMAGE_ERR_LEN];
	int rc = image_decode_colour(file, len, NULL, NULL, &img, &info, &colour, err);
	if (rc)
		print_error("%s: %s\n", what, err);
	assert_int_equal(rc, 0);
	print_message("  %s: colour \"%s\"%s%s\n", what, info.colour_name,
	              info.colour_note[0] ? ", note: " : "", info.colour_note);
	assert_int_equal(colour.srgb, 0);
	assert_string_equal(info.colour_note, "");
	noop_bloom(&img);
	/* the codes the file decodes to (lossy formats: what lcms2 is given too) */
	unsigned char *dec = malloc(W * H * 3), *ref = malloc(W * H * 3), *gam = malloc(W * H);
	memcpy(dec, codes, W * H * 3);
	if (lossy) {
		tjhandle tj = tjInitDecompress();
		assert_int_equal(tjDecompress2(tj, file, (unsigned long)len, dec, W, W * 3, H,
		                               TJPF_RGB, TJFLAG_ACCURATEDCT), 0);
		tjDestroy(tj);
	}
	lcms_to_srgb(dec, icc, icc_len, ref, gam);

	/* the default answer: sRGB, tagged with the sRGB chunk */
	unsigned char *png;
	size_t plen, got_icc;
	int srgb;
	unsigned lost;
	struct image_encode_opts eo = {.quality = 0};
	assert_int_equal(image_encode(&img, IMAGE_FORMAT_PNG, &eo, &png, &plen, &lost, err), 0);
	unsigned char *out = png_codes(png, plen, &got_icc, &srgb);
	assert_int_equal(got_icc, 0);
	assert_true(srgb);
	print_shift(what, dec, ref, gam, out);
	assert_int_equal(compare_codes("sRGB answer vs lcms2", out, ref, gam), 0);
	free(png);
	free(out);

	/* keep_profile: the input's profile, embedded, the input's codes back */
	eo.colour = &colour;
	assert_int_equal(image_encode(&img, IMAGE_FORMAT_PNG, &eo, &png, &plen, &lost, err), 0);
	out = png_codes(png, plen, &got_icc, &srgb);
	assert_int_equal(got_icc, icc_len);
	assert_int_equal(compare_codes("keep_profile answer vs input", out, dec, NULL), 0);
	/* and the answer read again is the same colours */
	struct image back;
	struct image_info bi;
	assert_int_equal(image_decode(png, plen, NULL, &back, &bi, err), 0);
	assert_string_equal(bi.colour_name, info.colour_name);
	image_free(&back);
	free(png);
	free(out);
	free(dec);
	free(ref);
	free(gam);
	image_free(&img);
	image_colour_free(&colour);
}

static void test_png_p3_adobe(void **state)
{
	(void)state;
	if (!g_b)
		print_message("  (no GL context: the codec round trip alone)\n");
	const double *prims[2] = {P3, ADOBE};
	const char *names[2] = {"Display P3 PNG", "Adobe RGB PNG"};
	for (int k = 0; k < 2; k++) {
		size_t il, len;
		unsigned char *icc = make_profile(prims[k], k ? 563.0 / 256 : 0,
		                                  k ? "Adobe RGB test" : "Display P3 test", &il);
		unsigned char *codes = rand_codes();
		unsigned char *png = png_with(codes, icc, il, &len);
		check_file(names[k], png, len, codes, icc, il, 0);
		free(png);
		free(codes);
		free(icc);
	}
}

static void test_jpeg_p3(void **state)
{
	(void)state;
	size_t il;
	unsigned char *icc = make_profile(P3, 0, "Display P3 test", &il);
	unsigned char *codes = rand_codes();
	tjhandle tj = tjInitCompress();
	unsigned char *jpeg = NULL;
	unsigned long jl = 0;
	assert_int_equal(tjCompress2(tj, codes, W, W * 3, H, TJPF_RGB, &jpeg, &jl, TJSAMP_444, 95,
	                             TJFLAG_ACCURATEDCT), 0);
	tjDestroy(tj);
	unsigned char *j = malloc(jl);
	memcpy(j, jpeg, jl);
	tjFree(jpeg);
	size_t len = jl;
	assert_int_equal(image_jpeg_add_icc(&j, &len, icc, il), 0);
	check_file("Display P3 JPEG", j, len, codes, icc, il, 1);
	/* its planes are not taken for the GPU's conversion (which knows sRGB alone) */
	struct yuv_image y;
	char err[IMAGE_ERR_LEN];
	assert_int_equal(image_decode_jpeg_yuv(j, len, NULL, &y, NULL, err), IMAGE_E_UNSUPPORTED);
	free(j);
	free(codes);
	free(icc);
}

static void test_webp_p3(void **state)
{
	(void)state;
	size_t il;
	unsigned char *icc = make_profile(P3, 0, "Display P3 test", &il);
	unsigned char *codes = rand_codes();
	uint8_t *webp = NULL;
	size_t wl = WebPEncodeLosslessRGB(codes, W, H, W * 3, &webp);
	assert_true(wl > 0);
	WebPData in = {webp, wl}, ic = {icc, il}, res = {0};
	WebPMux *mux = WebPMuxCreate(&in, 0);
	assert_int_equal(WebPMuxSetChunk(mux, "ICCP", &ic, 0), WEBP_MUX_OK);
	assert_int_equal(WebPMuxAssemble(mux, &res), WEBP_MUX_OK);
	WebPMuxDelete(mux);
	WebPFree(webp);
	check_file("Display P3 WebP", res.bytes, res.size, codes, icc, il, 0);
	/* an answer in WebP with the profile kept carries it in ICCP */
	struct image img;
	struct image_colour colour;
	char err[IMAGE_ERR_LEN];
	assert_int_equal(image_decode_colour(res.bytes, res.size, NULL, NULL, &img, NULL, &colour,
	                                     err), 0);
	struct image_encode_opts eo = {.quality = 100, .colour = &colour};
	unsigned char *out;
	size_t ol;
	unsigned lost;
	assert_int_equal(image_encode(&img, IMAGE_FORMAT_WEBP, &eo, &out, &ol, &lost, err), 0);
	struct image back;
	struct image_info bi;
	assert_int_equal(image_decode(out, ol, NULL, &back, &bi, err), 0);
	assert_string_equal(bi.colour_name, "ICC: Display P3 test");
	double worst = 0;
	for (size_t i = 0; i < (size_t)W * H * 3; i++)
		worst = fmax(worst, fabs(back.pixels[i] - img.pixels[i]));
	print_message("  WebP keep_profile round trip: max |linear difference| %.5f\n", worst);
	assert_true(worst < 0.01);
	image_free(&back);
	image_free(&img);
	image_colour_free(&colour);
	free(out);
	WebPDataClear(&res);
	free(codes);
	free(icc);
}

/* A lossless AVIF of codes tagged with nclx code points (P3-D65, sRGB curve) or an ICC profile. */
static unsigned char *avif_with(const unsigned char *codes, const unsigned char *icc, size_t il,
                                size_t *len)
{
	avifImage *im = avifImageCreate(W, H, 8, AVIF_PIXEL_FORMAT_YUV444);
	im->matrixCoefficients = AVIF_MATRIX_COEFFICIENTS_IDENTITY;
	im->yuvRange = AVIF_RANGE_FULL;
	im->colorPrimaries = icc ? AVIF_COLOR_PRIMARIES_UNSPECIFIED : 12;
	im->transferCharacteristics = icc ? AVIF_TRANSFER_CHARACTERISTICS_UNSPECIFIED
	                                  : AVIF_TRANSFER_CHARACTERISTICS_SRGB;
	if (icc)
		avifImageSetProfileICC(im, icc, il);
	avifRGBImage rgb;
	avifRGBImageSetDefaults(&rgb, im);
	rgb.format = AVIF_RGB_FORMAT_RGB;
	rgb.pixels = (uint8_t *)codes;
	rgb.rowBytes = W * 3;
	assert_int_equal(avifImageRGBToYUV(im, &rgb), AVIF_RESULT_OK);
	avifEncoder *e = avifEncoderCreate();
	e->minQuantizer = e->maxQuantizer = AVIF_QUANTIZER_LOSSLESS;
	e->speed = 10;
	avifRWData out = AVIF_DATA_EMPTY;
	assert_int_equal(avifEncoderWrite(e, im, &out), AVIF_RESULT_OK);
	avifEncoderDestroy(e);
	avifImageDestroy(im);
	unsigned char *b = malloc(out.size);
	memcpy(b, out.data, out.size);
	*len = out.size;
	avifRWDataFree(&out);
	return b;
}

static void test_avif_p3(void **state)
{
	(void)state;
	size_t il, len;
	unsigned char *icc = make_profile(P3, 0, "Display P3 test", &il);
	unsigned char *codes = rand_codes();
	unsigned char *a = avif_with(codes, icc, il, &len);
	check_file("Display P3 AVIF (ICC)", a, len, codes, icc, il, 0);
	free(a);
	/* nclx 12/13: the same colours as the P3 profile (whose curve is sRGB's) */
	a = avif_with(codes, NULL, 0, &len);
	struct image img, ref;
	struct image_info info;
	char err[IMAGE_ERR_LEN];
	assert_int_equal(image_decode(a, len, NULL, &img, &info, err), 0);
	print_message("  AVIF nclx: colour \"%s\"\n", info.colour_name);
	assert_string_equal(info.colour_name, "nclx 12/13/0");
	unsigned char *png = png_with(codes, icc, il, &len);
	assert_int_equal(image_decode(png, len, NULL, &ref, NULL, err), 0);
	double worst = 0;
	for (size_t i = 0; i < (size_t)W * H * 3; i++)
		worst = fmax(worst, fabs(img.pixels[i] - ref.pixels[i]));
	print_message("  AVIF nclx vs the P3 profile: max |linear difference| %.2e\n", worst);
	assert_true(worst < 1e-4);
	image_free(&img);
	image_free(&ref);
	free(png);
	free(a);
	free(codes);
	free(icc);
}

/* PNG gAMA/cHRM: gAMA 0.45455 alone is sRGB (nothing converted); gAMA 1.0 is linear light. */
static void test_png_gama(void **state)
{
	(void)state;
	unsigned char codes[W * H * 3];
	for (int i = 0; i < W * H * 3; i++)
		codes[i] = (unsigned char)(tu_uniform() * 256);
	for (int k = 0; k < 2; k++) {
		spng_ctx *ctx = spng_ctx_new(SPNG_CTX_ENCODER);
		struct spng_ihdr ihdr = {W, H, 8, SPNG_COLOR_TYPE_TRUECOLOR, 0, 0, 0};
		spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1);
		spng_set_ihdr(ctx, &ihdr);
		spng_set_gama(ctx, k ? 1.0 : 0.45455);
		assert_int_equal(spng_encode_image(ctx, codes, sizeof codes, SPNG_FMT_PNG,
		                                   SPNG_ENCODE_FINALIZE), 0);
		size_t len;
		int e;
		unsigned char *png = spng_get_png_buffer(ctx, &len, &e);
		spng_ctx_free(ctx);
		struct image img;
		struct image_info info;
		char err[IMAGE_ERR_LEN];
		assert_int_equal(image_decode(png, len, NULL, &img, &info, err), 0);
		print_message("  gAMA %s: \"%s\"\n", k ? "1.0" : "0.45455", info.colour_name);
		double worst = 0;
		for (int i = 0; i < W * H * 3; i++) {
			double want = k ? codes[i] / 255.0 : srgb_to_linear_d(codes[i] / 255.0);
			worst = fmax(worst, fabs(img.pixels[i] - want));
		}
		print_message("  max |linear - expected| %.2e\n", worst);
		assert_true(worst < 1e-5);
		image_free(&img);
		free(png);
	}
}

/* EXR chromaticities: converted to Rec. 709 on decode, written back with keep_profile. */
static void test_exr_chromaticities(void **state)
{
	(void)state;
	struct image img;
	assert_int_equal(image_alloc(&img, W, H, 3), 0);
	tu_fill_f32(img.pixels, (size_t)W * H * 3, 0, 4);
	/* an EXR in P3 primaries: written through keep_profile's path from a linear description */
	struct image_colour p3 = {.chrm = 1, .linear = 1};
	for (int i = 0; i < 8; i++)
		p3.xy[i] = (float)P3[i];
	snprintf(p3.name, sizeof p3.name, "chromaticities");
	/* encode the working-space image as P3 linear, decode: the working values come back */
	unsigned char *exr;
	size_t len;
	unsigned lost;
	char err[IMAGE_ERR_LEN];
	struct image_encode_opts eo = {.bits = 32, .colour = &p3};
	assert_int_equal(image_encode(&img, IMAGE_FORMAT_EXR, &eo, &exr, &len, &lost, err), 0);
	struct image back;
	struct image_info info;
	struct image_colour c;
	assert_int_equal(image_decode_colour(exr, len, NULL, NULL, &back, &info, &c, err), 0);
	print_message("  EXR: \"%s\"\n", info.colour_name);
	assert_true(c.chrm && !c.srgb);
	double worst = 0;
	for (size_t i = 0; i < (size_t)W * H * 3; i++)
		worst = fmax(worst, fabs(back.pixels[i] - img.pixels[i]) / 4);
	print_message("  EXR P3 chromaticities round trip: max relative difference %.2e\n", worst);
	assert_true(worst < 1e-4);
	/* the stored samples really are P3's: a pure Rec. 709 red is not (1, 0, 0) there */
	image_free(&back);
	image_colour_free(&c);
	free(exr);
	image_free(&img);
}

/* A profile's bytes changed: truncated, its tag count or a tag's offset huge, a CMYK colour
 * space, a device link, random bytes; every one decodes (as sRGB) with a note. */
static void test_hostile_profiles(void **state)
{
	(void)state;
	size_t il, len;
	unsigned char *icc = make_profile(P3, 0, "Display P3 test", &il);
	unsigned char *codes = rand_codes();
	unsigned char *bad = malloc(il + 64);
	for (int k = 0; k < 8; k++) {
		memcpy(bad, icc, il);
		size_t bl = il;
		const char *what = "";
		switch (k) {
		case 0: bl = il / 2; what = "truncated"; break;
		case 1: bl = 100; what = "shorter than a header"; break;
		case 2: bad[128] = bad[129] = bad[130] = 0xff; what = "tag count 2^32-ish"; break;
		case 3: bad[136] = 0x7f; what = "first tag's offset far past the end"; break;
		case 4: memcpy(bad + 16, "CMYK", 4); what = "CMYK colour space"; break;
		case 5: memcpy(bad + 12, "link", 4); what = "device link"; break;
		case 6:
			for (size_t i = 0; i < il; i++)
				bad[i] = (unsigned char)(tu_uniform() * 256);
			what = "random bytes";
			break;
		case 7:
			bad[140] = 0x7f, bad[141] = 0xff;
			what = "first tag's size huge";
			break;
		}
		unsigned char *png = png_with(codes, bad, bl, &len);
		struct image img;
		struct image_info info;
		char err[IMAGE_ERR_LEN];
		int rc = image_decode(png, len, NULL, &img, &info, err);
		print_message("  %s: rc %d, \"%s\", note \"%s\"\n", what, rc, info.colour_name,
		              info.colour_note);
		assert_int_equal(rc, 0);
		/* the image is there: as sRGB when the profile was refused */
		if (info.colour_note[0])
			for (int i = 0; i < W * H * 3; i++)
				assert_true(img.pixels[i] == colour_srgb8_table()[codes[i]]);
		image_free(&img);
		free(png);
	}
	/* a JPEG's APP2 segments: one of two missing */
	tjhandle tj = tjInitCompress();
	unsigned char *jpeg = NULL;
	unsigned long jl = 0;
	assert_int_equal(tjCompress2(tj, codes, W, W * 3, H, TJPF_RGB, &jpeg, &jl, TJSAMP_444, 90, 0),
	                 0);
	tjDestroy(tj);
	unsigned char *j = malloc(jl);
	memcpy(j, jpeg, jl);
	tjFree(jpeg);
	len = jl;
	assert_int_equal(image_jpeg_add_icc(&j, &len, icc, il), 0);
	/* the segment says "1 of 2" */
	unsigned char *seg = memmem(j, len, "ICC_PROFILE", 12);
	assert_non_null(seg);
	seg[13] = 2;
	struct image img;
	struct image_info info;
	char err[IMAGE_ERR_LEN];
	assert_int_equal(image_decode(j, len, NULL, &img, &info, err), 0);
	print_message("  JPEG: note \"%s\"\n", info.colour_note);
	assert_true(strstr(info.colour_note, "missing") != NULL);
	image_free(&img);
	int rc_big;
	/* an iCCP chunk inflating past libspng's chunk limits (40 MB of profile, a few KB deflated):
	 * the profile ignored with a note, the image decoded as sRGB */
	size_t bl = (size_t)40 << 20;
	unsigned char *bomb = calloc(1, bl);
	assert_non_null(bomb);
	memcpy(bomb, icc, il);
	unsigned char *bpng = png_with(codes, bomb, bl, &len);
	free(bomb);
	rc_big = image_decode(bpng, len, NULL, &img, &info, err);
	print_message("  iCCP of 40 MB inflated (%zu bytes of PNG): rc %d, note \"%s\"\n", len, rc_big,
	              info.colour_note);
	assert_int_equal(rc_big, 0);
	assert_non_null(strstr(info.colour_note, "iCCP"));
	for (int i = 0; i < W * H * 3; i++)
		assert_true(img.pixels[i] == colour_srgb8_table()[codes[i]]);
	image_free(&img);
	free(bpng);
	/* a profile past ICC_MAX_BYTES is not parsed */
	struct image_colour big = {.icc = calloc(1, ICC_MAX_BYTES + 1), .icc_len = ICC_MAX_BYTES + 1};
	assert_int_equal(icc_describe(&big, 3), 0);
	assert_true(big.srgb && strstr(big.note, "4 MiB"));
	image_colour_free(&big);
	free(j);
	free(bad);
	free(codes);
	free(icc);
}

/* keep_profile with a profile lcms2 can convert from but not to (an AToB0 table alone, no
 * BToA0, no matrix and curves): the answer is sRGB, tagged so, with a note; never an error. */
static void test_keep_profile_one_way(void **state)
{
	(void)state;
	cmsHPROFILE h = cmsCreateProfilePlaceholder(NULL);
	cmsSetProfileVersion(h, 4.3);
	cmsSetDeviceClass(h, cmsSigDisplayClass);
	cmsSetColorSpace(h, cmsSigRgbData);
	cmsSetPCS(h, cmsSigXYZData);
	cmsPipeline *pipe = cmsPipelineAlloc(NULL, 3, 3);
	static const double m[9] = {0.4361, 0.3851, 0.1431, 0.2225, 0.7169, 0.0606, 0.0139, 0.0971,
	                            0.7141};
	/* lutAtoBType: B curves after the matrix are required (identity curves here) */
	cmsPipelineInsertStage(pipe, cmsAT_END, cmsStageAllocToneCurves(NULL, 3, NULL));
	cmsPipelineInsertStage(pipe, cmsAT_END, cmsStageAllocMatrix(NULL, 3, 3, m, NULL));
	cmsPipelineInsertStage(pipe, cmsAT_END, cmsStageAllocToneCurves(NULL, 3, NULL));
	assert_true(cmsWriteTag(h, cmsSigAToB0Tag, pipe));
	cmsPipelineFree(pipe);
	size_t n;
	unsigned char *icc = save_profile(h, "one way", &n);
	unsigned char *codes = rand_codes();
	size_t len, olen;
	unsigned char *png = png_with(codes, icc, n, &len);
	struct image img;
	struct image_info info;
	struct image_colour colour;
	char err[IMAGE_ERR_LEN], note[IMAGE_COLOUR_NOTE_LEN] = "x";
	assert_int_equal(image_decode_colour(png, len, NULL, NULL, &img, &info, &colour, err), 0);
	print_message("  decoded as \"%s\" (note \"%s\")\n", info.colour_name, info.colour_note);
	struct image_encode_opts eo = {.colour = &colour, .colour_note = note};
	unsigned char *out;
	int rc = image_encode(&img, IMAGE_FORMAT_PNG, &eo, &out, &olen, NULL, err);
	print_message("  keep_profile: rc %d, note \"%s\"\n", rc, note);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(note, "sRGB"));
	size_t icc_out;
	int srgb;
	unsigned char *back = png_codes(out, olen, &icc_out, &srgb);
	assert_true(srgb && icc_out == 0); /* tagged sRGB, not with the profile */
	free(back);
	free(out);
	/* a profile that converts both ways leaves the note empty */
	struct image_encode_opts plain = {.colour_note = note};
	assert_int_equal(image_encode(&img, IMAGE_FORMAT_PNG, &plain, &out, &olen, NULL, err), 0);
	assert_string_equal(note, "");
	free(out);
	image_free(&img);
	image_colour_free(&colour);
	free(png);
	free(codes);
	free(icc);
}

/* An answer's default tags: JPEG carries lcms2's sRGB profile, PNG the sRGB chunk. */
static void test_default_tags(void **state)
{
	(void)state;
	struct image img;
	assert_int_equal(image_alloc(&img, 8, 8, 3), 0);
	tu_fill_f32(img.pixels, 8 * 8 * 3, 0, 1);
	unsigned char *out;
	size_t len;
	unsigned lost;
	char err[IMAGE_ERR_LEN];
	assert_int_equal(image_encode(&img, IMAGE_FORMAT_JPEG, NULL, &out, &len, &lost, err), 0);
	unsigned char *icc;
	size_t il;
	const struct image_colour *s = icc_srgb();
	assert_non_null(s->icc);
	assert_non_null(memmem(out, len, "ICC_PROFILE", 12));
	assert_non_null(memmem(out, len, s->icc, s->icc_len));
	struct image back;
	struct image_info bi;
	assert_int_equal(image_decode(out, len, NULL, &back, &bi, err), 0);
	print_message("  JPEG answer: \"%s\" (%zu profile bytes)\n", bi.colour_name, s->icc_len);
	assert_string_equal(bi.colour_name, "ICC: sRGB built-in");
	image_free(&back);
	(void)icc;
	(void)il;
	free(out);
	image_free(&img);
}

int main(void)
{
	tu_test_filter();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_png_p3_adobe),
		cmocka_unit_test(test_jpeg_p3),
		cmocka_unit_test(test_webp_p3),
		cmocka_unit_test(test_avif_p3),
		cmocka_unit_test(test_png_gama),
		cmocka_unit_test(test_exr_chromaticities),
		cmocka_unit_test(test_hostile_profiles),
		cmocka_unit_test(test_keep_profile_one_way),
		cmocka_unit_test(test_default_tags),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
