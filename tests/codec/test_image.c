/* Tests for codec/image: the image type, sniffing and names, and round trips through every
 * format and bit depth: bit-exact where the format is lossless for the values given, a PSNR
 * bound for JPEG and lossy WebP and AVIF. Random images are fresh each run (seed printed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/colour.h"
#include "codec/image.h"
#include "core/parallel.h"
#include "tests/testutil.h"
#include "tests/yuv_ref.h"

#include <turbojpeg.h>
#include <jpeglib.h>

static const int sizes[][2] = { { 1, 1 }, { 2, 3 }, { 7, 1 }, { 1, 9 }, { 17, 5 }, { 64, 33 }, { 127, 2 } };
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

static void random_image(struct image *img, int w, int h, int ch, float lo, float hi)
{
	assert_int_equal(image_alloc(img, w, h, ch), 0);
	tu_fill_f32(img->pixels, (size_t)w * h * ch, lo, hi);
}

/* An image whose samples are exactly what an 8- or 16-bit sRGB decode produces: colour channels
 * from the sRGB table, alpha as code / max. */
static void coded_image(struct image *img, int w, int h, int ch, int bits)
{
	const float *t = bits == 8 ? colour_srgb8_table() : colour_srgb16_table();
	unsigned maxc = bits == 8 ? 255 : 65535;
	assert_int_equal(image_alloc(img, w, h, ch), 0);
	size_t n = (size_t)w * h;
	int alpha = ch == 2 || ch == 4;
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < ch; c++) {
			unsigned code = (unsigned)(tu_uniform() * (maxc + 1));
			if (code > maxc)
				code = maxc;
			img->pixels[i * ch + c] = alpha && c == ch - 1 ? (float)code / (float)maxc : t[code];
		}
}

static void assert_same_image(const struct image *a, const struct image *b, const char *what)
{
	assert_int_equal(a->width, b->width);
	assert_int_equal(a->height, b->height);
	assert_int_equal(a->channels, b->channels);
	size_t n = (size_t)a->width * a->height * a->channels;
	for (size_t i = 0; i < n; i++)
		if (memcmp(&a->pixels[i], &b->pixels[i], 4))
			fail_msg("%s %dx%dx%d: sample %zu (x %zu, y %zu): %.9g != %.9g", what, a->width,
				 a->height, a->channels, i, i / a->channels % a->width,
				 i / a->channels / a->width, (double)a->pixels[i], (double)b->pixels[i]);
}

static void roundtrip(const struct image *img, enum image_format f,
		      const struct image_encode_opts *o, struct image *back, struct image_info *info,
		      unsigned *lost)
{
	unsigned char *buf;
	size_t len;
	char err[IMAGE_ERR_LEN];
	int rc = image_encode(img, f, o, &buf, &len, lost, err);
	if (rc)
		fail_msg("encode %s: %s", image_format_name(f), err);
	assert_int_equal(image_sniff(buf, len), f);
	rc = image_decode(buf, len, NULL, back, info, err);
	if (rc)
		fail_msg("decode %s: %s", image_format_name(f), err);
	assert_int_equal(info->format, f);
	assert_int_equal(info->width, back->width);
	assert_int_equal(info->height, back->height);
	free(buf);
}

static void test_alloc(void **state)
{
	(void)state;
	struct image img;
	assert_int_equal(image_alloc(&img, 3, 2, 4), 0);
	for (int i = 0; i < 24; i++)
		assert_true(img.pixels[i] == 0.0f);
	image_free(&img);
	assert_null(img.pixels);
	image_free(NULL);
	assert_int_equal(image_alloc(&img, 0, 2, 1), IMAGE_E_EMPTY);
	assert_int_equal(image_alloc(&img, 2, 2, 5), IMAGE_E_ARG);
	assert_int_equal(image_alloc(&img, 2, 2, 0), IMAGE_E_ARG);
	assert_int_equal(image_alloc(&img, -1, 2, 1), IMAGE_E_ARG);
	assert_null(img.pixels);
	assert_string_equal(image_strerror(IMAGE_E_TRUNCATED), "truncated image data");
}

static void test_limits(void **state)
{
	(void)state;
	char err[IMAGE_ERR_LEN];
	struct image_limits lim = { .max_width = 100, .max_height = 50, .max_pixels = 1000 };
	assert_int_equal(image_check_limits(NULL, 32768, 3051, "x", err), 0);
	assert_int_equal(image_check_limits(NULL, 32768, 3052, "x", err), IMAGE_E_TOO_LARGE);
	assert_int_equal(image_check_limits(NULL, 32769, 1, "x", err), IMAGE_E_TOO_LARGE);
	assert_non_null(strstr(err, "width"));
	assert_int_equal(image_check_limits(NULL, 100000, 100000, "pfm", err), IMAGE_E_TOO_LARGE);
	assert_non_null(strstr(err, "pfm"));
	assert_int_equal(image_check_limits(NULL, 0, 5, "x", err), IMAGE_E_EMPTY);
	assert_int_equal(image_check_limits(&lim, 100, 10, "x", err), 0);
	assert_int_equal(image_check_limits(&lim, 101, 1, "x", err), IMAGE_E_TOO_LARGE);
	assert_int_equal(image_check_limits(&lim, 1, 51, "x", err), IMAGE_E_TOO_LARGE);
	assert_int_equal(image_check_limits(&lim, 50, 21, "x", err), IMAGE_E_TOO_LARGE);
	assert_non_null(strstr(err, "pixels"));
}

static void test_sniff_and_names(void **state)
{
	(void)state;
	assert_int_equal(image_sniff("\xff\xd8\xff\xe0", 4), IMAGE_FORMAT_JPEG);
	assert_int_equal(image_sniff("\x89PNG\r\n\x1a\n", 8), IMAGE_FORMAT_PNG);
	assert_int_equal(image_sniff("\x89PNG\r\n\x1a", 7), IMAGE_FORMAT_UNKNOWN);
	assert_int_equal(image_sniff("\x76\x2f\x31\x01\x02", 5), IMAGE_FORMAT_EXR);
	assert_int_equal(image_sniff("#?RADIANCE\n", 11), IMAGE_FORMAT_HDR);
	assert_int_equal(image_sniff("PF\n", 3), IMAGE_FORMAT_PFM);
	assert_int_equal(image_sniff("Pf\n", 3), IMAGE_FORMAT_PFM);
	assert_int_equal(image_sniff("P6\n", 3), IMAGE_FORMAT_UNKNOWN);
	assert_int_equal(image_sniff("GIF89a", 6), IMAGE_FORMAT_UNKNOWN);
	assert_int_equal(image_sniff(NULL, 0), IMAGE_FORMAT_UNKNOWN);
	assert_int_equal(image_format_from_name("a/b.c/x.EXR"), IMAGE_FORMAT_EXR);
	assert_int_equal(image_format_from_name("png"), IMAGE_FORMAT_PNG);
	assert_int_equal(image_format_from_name("x.jpg"), IMAGE_FORMAT_JPEG);
	assert_int_equal(image_format_from_name("jpeg"), IMAGE_FORMAT_JPEG);
	assert_int_equal(image_format_from_name("y.hdr"), IMAGE_FORMAT_HDR);
	assert_int_equal(image_format_from_name("y.pfm"), IMAGE_FORMAT_PFM);
	assert_int_equal(image_format_from_name("y.WebP"), IMAGE_FORMAT_WEBP);
	assert_int_equal(image_format_from_name("avif"), IMAGE_FORMAT_AVIF);
	assert_string_equal(image_format_name(IMAGE_FORMAT_WEBP), "webp");
	assert_string_equal(image_format_name(IMAGE_FORMAT_AVIF), "avif");
	assert_int_equal(image_sniff("RIFF\x10\0\0\0WEBPVP8 ", 16), IMAGE_FORMAT_WEBP);
	assert_int_equal(image_sniff("RIFF\x10\0\0\0WAVEfmt ", 16), IMAGE_FORMAT_UNKNOWN);
	assert_int_equal(image_sniff("RIFF\x10\0\0\0WEB", 11), IMAGE_FORMAT_UNKNOWN);
	/* AVIF: the ftyp box's major brand, or a compatible brand inside the box only */
	assert_int_equal(image_sniff("\0\0\0\x1c" "ftypavif\0\0\0\0mif1miaf", 24),
			 IMAGE_FORMAT_AVIF);
	assert_int_equal(image_sniff("\0\0\0\x1c" "ftypmif1\0\0\0\0mif1avifmiaf", 28),
			 IMAGE_FORMAT_AVIF);
	assert_int_equal(image_sniff("\0\0\0\x18" "ftypavis\0\0\0\0avis", 24),
			 IMAGE_FORMAT_AVIF);
	assert_int_equal(image_sniff("\0\0\0\x18" "ftypheic\0\0\0\0mif1heic", 28),
			 IMAGE_FORMAT_HEIC); /* HEIC's brands are not AVIF */
	assert_int_equal(image_sniff("\0\0\0\x14" "ftypmif1\0\0\0\0mif1avif", 28),
			 IMAGE_FORMAT_HEIC); /* "avif" lies past the 20-byte box: a mif1 HEIF */
	assert_int_equal(image_format_from_name("y.gif"), IMAGE_FORMAT_UNKNOWN);
	assert_int_equal(image_format_from_name("noext"), IMAGE_FORMAT_UNKNOWN);
	assert_string_equal(image_format_name(IMAGE_FORMAT_EXR), "exr");
	struct image img;
	char err[IMAGE_ERR_LEN];
	assert_int_equal(image_decode("GIF89a....", 10, NULL, &img, NULL, err), IMAGE_E_UNSUPPORTED);
	assert_non_null(strstr(err, "unknown format"));
	assert_int_equal(image_decode("", 0, NULL, &img, NULL, err), IMAGE_E_TRUNCATED);
}

static void test_convert_channels(void **state)
{
	(void)state;
	struct image in, out;
	random_image(&in, 5, 4, 3, 0, 1);
	assert_int_equal(image_convert_channels(&in, 4, &out), 0);
	for (int i = 0; i < 20; i++) {
		assert_memory_equal(&out.pixels[i * 4], &in.pixels[i * 3], 12);
		assert_true(out.pixels[i * 4 + 3] == 1.0f);
	}
	image_free(&out);
	assert_int_equal(image_convert_channels(&in, 1, &out), 0);
	for (int i = 0; i < 20; i++) {
		float *p = &in.pixels[i * 3];
		assert_float_equal(out.pixels[i], 0.2126f * p[0] + 0.7152f * p[1] + 0.0722f * p[2],
				   1e-6);
	}
	image_free(&out);
	image_free(&in);
	random_image(&in, 3, 3, 2, 0, 1);
	assert_int_equal(image_convert_channels(&in, 4, &out), 0);
	for (int i = 0; i < 9; i++) {
		float *p = &out.pixels[i * 4];
		assert_true(p[0] == in.pixels[i * 2] && p[1] == p[0] && p[2] == p[0]);
		assert_true(p[3] == in.pixels[i * 2 + 1]);
	}
	image_free(&out);
	image_free(&in);
}

/* PFM keeps float32 bits exactly, including negative, huge, infinite and NaN values. */
static void test_pfm_roundtrip(void **state)
{
	(void)state;
	for (int s = 0; s < NSIZES; s++)
		for (int ch = 1; ch <= 3; ch += 2) {
			struct image img, back;
			struct image_info info;
			unsigned lost;
			random_image(&img, sizes[s][0], sizes[s][1], ch, -1e4f, 1e4f);
			img.pixels[0] = INFINITY;
			if (img.width * img.height * ch > 2)
				img.pixels[1] = -0.0f, img.pixels[2] = 1e-40f;
			roundtrip(&img, IMAGE_FORMAT_PFM, NULL, &back, &info, &lost);
			assert_int_equal(lost, 0);
			assert_int_equal(info.bits, 32);
			assert_int_equal(info.channels, ch);
			assert_int_equal(info.float_format, 1);
			assert_same_image(&img, &back, "pfm");
			image_free(&img);
			image_free(&back);
		}
	/* 2 and 4 channels: alpha dropped and reported */
	for (int ch = 2; ch <= 4; ch += 2) {
		struct image img, back;
		struct image_info info;
		unsigned lost;
		random_image(&img, 9, 4, ch, 0, 2);
		roundtrip(&img, IMAGE_FORMAT_PFM, NULL, &back, &info, &lost);
		assert_int_equal(lost, IMAGE_LOST_ALPHA);
		assert_int_equal(back.channels, ch - 1);
		for (int i = 0; i < 36; i++)
			assert_memory_equal(&back.pixels[i * (ch - 1)], &img.pixels[i * ch],
					    (size_t)(ch - 1) * 4);
		image_free(&img);
		image_free(&back);
	}
}

/* A PFM built by hand, big-endian (positive scale), 2x2 gray: rows are stored bottom first. */
static void test_pfm_layout(void **state)
{
	(void)state;
	static const unsigned char be[] = "Pf\n2 2\n1.0\n"
					  "\x3f\x80\x00\x00" "\x40\x00\x00\x00"  /* bottom: 1 2 */
					  "\x40\x40\x00\x00" "\x40\x80\x00\x00"; /* top: 3 4 */
	static const unsigned char le[] = "PF 1\t1 -0.5\n"
					  "\x00\x00\x80\x3f" "\x00\x00\x00\x40" "\x00\x00\x40\x40";
	struct image img;
	struct image_info info;
	char err[IMAGE_ERR_LEN];
	assert_int_equal(image_decode(be, sizeof be - 1, NULL, &img, &info, err), 0);
	assert_int_equal(img.channels, 1);
	assert_true(img.pixels[0] == 3 && img.pixels[1] == 4 && img.pixels[2] == 1 &&
		    img.pixels[3] == 2);
	image_free(&img);
	assert_int_equal(image_decode(le, sizeof le - 1, NULL, &img, &info, err), 0);
	assert_int_equal(img.channels, 3);
	assert_true(img.pixels[0] == 1 && img.pixels[1] == 2 && img.pixels[2] == 3);
	image_free(&img);
	/* our writer: little-endian, bottom row first */
	struct image two;
	unsigned char *buf;
	size_t len;
	assert_int_equal(image_alloc(&two, 1, 2, 1), 0);
	two.pixels[0] = 5; /* top */
	two.pixels[1] = 6; /* bottom */
	assert_int_equal(image_encode(&two, IMAGE_FORMAT_PFM, NULL, &buf, &len, NULL, err), 0);
	assert_int_equal(len, strlen("Pf\n1 2\n-1.0\n") + 8);
	assert_memory_equal(buf, "Pf\n1 2\n-1.0\n\x00\x00\xc0\x40\x00\x00\xa0\x40", len);
	free(buf);
	image_free(&two);
}

/* 8- and 16-bit PNG in every channel count: samples that are exact codes come back bit-exact and
 * nothing is reported lost. */
static void test_png_exact(void **state)
{
	(void)state;
	for (int bits = 8; bits <= 16; bits += 8)
		for (int ch = 1; ch <= 4; ch++)
			for (int s = 0; s < NSIZES; s++) {
				struct image img, back;
				struct image_info info;
				struct image_encode_opts o = { .bits = bits };
				unsigned lost;
				coded_image(&img, sizes[s][0], sizes[s][1], ch, bits);
				roundtrip(&img, IMAGE_FORMAT_PNG, &o, &back, &info, &lost);
				assert_int_equal(lost, 0);
				assert_int_equal(info.bits, bits);
				assert_int_equal(info.channels, ch);
				assert_int_equal(info.float_format, 0);
				assert_same_image(&img, &back, bits == 8 ? "png8" : "png16");
				image_free(&img);
				image_free(&back);
			}
}

/* Arbitrary floats: each sample comes back as the nearest code (by the sRGB formula), out of
 * range values are clipped and reported. */
static void test_png_quantise(void **state)
{
	(void)state;
	for (int bits = 8; bits <= 16; bits += 8) {
		struct image img, back;
		struct image_info info;
		struct image_encode_opts o = { .bits = bits };
		unsigned lost;
		random_image(&img, 31, 17, 4, -0.25f, 1.25f);
		roundtrip(&img, IMAGE_FORMAT_PNG, &o, &back, &info, &lost);
		assert_int_equal(lost, IMAGE_LOST_NEGATIVE | IMAGE_LOST_RANGE | IMAGE_LOST_PRECISION);
		double maxerr = 0;
		for (size_t i = 0; i < 31 * 17 * 4; i++) {
			float v = img.pixels[i] < 0 ? 0 : img.pixels[i] > 1 ? 1 : img.pixels[i];
			double e;
			if (i % 4 == 3) { /* alpha: linear steps */
				e = fabs(back.pixels[i] - v) * (bits == 8 ? 255 : 65535);
			} else {
				unsigned want = bits == 8 ? colour_linear_to_srgb8(v)
							  : colour_linear_to_srgb16(v);
				unsigned got = bits == 8 ? colour_linear_to_srgb8(back.pixels[i])
							 : colour_linear_to_srgb16(back.pixels[i]);
				assert_int_equal(got, want);
				e = fabs(linear_to_srgb_d(back.pixels[i]) - linear_to_srgb_d(v)) *
				    (bits == 8 ? 255 : 65535);
			}
			if (e > maxerr)
				maxerr = e;
		}
		/* half a code, plus the float rounding of the decoded value (worst near 1.0 at 16
		 * bits: one float ulp there is about 0.002 of a 16-bit code) */
		double tol = 0.5 + (bits == 8 ? 1e-3 : 5e-3);
		print_message("png%d: max error %.4f codes (limit %.3f)\n", bits, maxerr, tol);
		assert_true(maxerr <= tol);
		image_free(&img);
		image_free(&back);
	}
	struct image img;
	unsigned char *buf;
	size_t len;
	char err[IMAGE_ERR_LEN];
	struct image_encode_opts o = { .bits = 12 };
	random_image(&img, 2, 2, 3, 0, 1);
	assert_int_equal(image_encode(&img, IMAGE_FORMAT_PNG, &o, &buf, &len, NULL, err), IMAGE_E_ARG);
	assert_null(buf);
	image_free(&img);
}

/* Ordered dither: every dithered code is the floor or ceiling of the exact value, and over a
 * flat area the mean of the codes is the exact value within 1/64 code (rounding alone would be
 * off by up to half a code). */
static void test_png_dither(void **state)
{
	(void)state;
	struct image img, back;
	struct image_info info;
	struct image_encode_opts o = { .bits = 8, .dither = 1 };
	unsigned lost;
	float level = 0.2f + 0.5f * (float)tu_uniform();
	assert_int_equal(image_alloc(&img, 16, 16, 1), 0);
	for (int i = 0; i < 256; i++)
		img.pixels[i] = level;
	roundtrip(&img, IMAGE_FORMAT_PNG, &o, &back, &info, &lost);
	double exact = linear_to_srgb_d(level) * 255, sum = 0;
	for (int i = 0; i < 256; i++) {
		unsigned c = colour_linear_to_srgb8(back.pixels[i]);
		assert_true(c == (unsigned)floor(exact) || c == (unsigned)ceil(exact));
		sum += c;
	}
	print_message("dither: level %.4f codes, mean %.4f\n", exact, sum / 256);
	assert_true(fabs(sum / 256 - exact) <= 1.0 / 64 + 1e-9);
	image_free(&img);
	image_free(&back);
}

/* A smooth random image: a few low-frequency waves per channel, sRGB values in [0.05, 0.95]. */
static void smooth_image(struct image *img, int w, int h, int ch)
{
	assert_int_equal(image_alloc(img, w, h, ch), 0);
	for (int c = 0; c < ch; c++) {
		double fx[3], fy[3], ph[3];
		for (int k = 0; k < 3; k++) {
			fx[k] = tu_uniform() * 0.15;
			fy[k] = tu_uniform() * 0.15;
			ph[k] = tu_uniform() * 6.28;
		}
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++) {
				double v = 0.5;
				for (int k = 0; k < 3; k++)
					v += 0.15 * sin(fx[k] * x + fy[k] * y + ph[k]);
				img->pixels[((size_t)y * w + x) * ch + c] =
					c == 3 ? (float)v : (float)srgb_to_linear_d(v);
			}
	}
}

static double psnr_srgb(const struct image *a, const struct image *b, int channels)
{
	double se = 0;
	size_t n = (size_t)a->width * a->height;
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < channels; c++) {
			double d = linear_to_srgb_d(a->pixels[i * a->channels + c]) -
				   linear_to_srgb_d(b->pixels[i * b->channels + c]);
			se += d * d;
		}
	double mse = se / ((double)n * channels);
	return mse > 0 ? 10 * log10(1 / mse) : INFINITY;
}

static void test_jpeg_roundtrip(void **state)
{
	(void)state;
	static const struct {
		int ch, quality, sub;
		double min_psnr;
	} cases[] = {
		{ 3, 0, 0, 38 }, { 3, 90, 420, 34 }, { 3, 100, 444, 45 }, { 3, 50, 444, 32 },
		{ 1, 90, 444, 40 }, { 4, 95, 444, 38 }, { 2, 95, 420, 38 },
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
		for (int s = 0; s < NSIZES; s++) {
			struct image img, back;
			struct image_info info;
			struct image_encode_opts o = { .quality = cases[k].quality, .subsampling = cases[k].sub };
			unsigned lost;
			int ch = cases[k].ch, colour = ch == 2 || ch == 4 ? ch - 1 : ch;
			smooth_image(&img, sizes[s][0] * 2, sizes[s][1] * 2, ch);
			roundtrip(&img, IMAGE_FORMAT_JPEG, &o, &back, &info, &lost);
			assert_int_equal(lost, IMAGE_LOST_PRECISION | (colour != ch ? IMAGE_LOST_ALPHA : 0));
			assert_int_equal(back.channels, colour);
			assert_int_equal(info.channels, colour);
			assert_int_equal(info.orientation, 1);
			assert_int_equal(back.width, img.width);
			assert_int_equal(back.height, img.height);
			double p = psnr_srgb(&img, &back, colour);
			/* a few pixels are all edge: allow tiny images less */
			double bound = cases[k].min_psnr - (img.width * img.height < 256 ? 8 : 0);
			if (s == NSIZES - 1)
				print_message("jpeg ch %d q %d %d: PSNR %.1f dB (bound %.0f)\n", ch,
					      cases[k].quality, cases[k].sub, p, cases[k].min_psnr);
			if (!(p >= bound))
				fail_msg("jpeg ch %d q %d sub %d %dx%d: PSNR %.2f < %.0f", ch,
					 cases[k].quality, cases[k].sub, img.width, img.height, p, bound);
			image_free(&img);
			image_free(&back);
		}
	struct image img;
	unsigned char *buf;
	size_t len;
	char err[IMAGE_ERR_LEN];
	struct image_encode_opts bad_q = { .quality = 101 }, bad_s = { .quality = 90, .subsampling = 422 };
	random_image(&img, 8, 8, 3, 0, 1);
	assert_int_equal(image_encode(&img, IMAGE_FORMAT_JPEG, &bad_q, &buf, &len, NULL, err),
			 IMAGE_E_ARG);
	assert_int_equal(image_encode(&img, IMAGE_FORMAT_JPEG, &bad_s, &buf, &len, NULL, err),
			 IMAGE_E_ARG);
	image_free(&img);
}

/* Values exactly representable in half: 11 significant bits, exponents inside half's range. */
static void half_image(struct image *img, int w, int h, int ch)
{
	assert_int_equal(image_alloc(img, w, h, ch), 0);
	for (size_t i = 0; i < (size_t)w * h * ch; i++) {
		int m = (int)(tu_uniform() * 2048) - 1024, e = (int)(tu_uniform() * 20) - 18;
		img->pixels[i] = ldexpf((float)m, e); /* |m| < 2^11, 2^-18 .. 2^1 scale */
	}
}

/* EXR: half files keep half values exactly, float files keep every float32 bit; channel
 * layouts Y, YA, RGB, RGBA survive. */
/* Largest difference between two images' first `ch` channels in sRGB 8-bit code units. */
static double max_code_diff(const struct image *a, const struct image *b, int ch)
{
	assert_int_equal(a->width, b->width);
	assert_int_equal(a->height, b->height);
	double m = 0;
	size_t n = (size_t)a->width * a->height;
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < ch; c++) {
			double d = fabs(linear_to_srgb_d(a->pixels[i * a->channels + c]) -
					linear_to_srgb_d(b->pixels[i * b->channels + c])) * 255;
			if (!(d <= m))
				m = d;
		}
	return m;
}

/* JPEG planes: every subsampling the planes carry (gray, 4:4:4, 4:2:2, 4:2:0, 4:4:0), odd sizes
 * and every EXIF orientation. The planes, converted by the independent reference (tests/yuv_ref),
 * must match libjpeg's own decode within 1.5 codes: libjpeg rounds the upsampled chroma and the
 * RGB to integers (0.5 code of chroma is 0.89 code of blue), the reference does not. Converted
 * by image_from_yuv (libjpeg's conversion), within 1 code of it. */
static void test_jpeg_yuv(void **state)
{
	(void)state;
	static const int subs[][3] = { { 1, 1, 1 }, { 0, 1, 1 }, { 0, 2, 1 }, { 0, 2, 2 }, { 0, 1, 2 } };
	static const int ysizes[][2] = { { 1, 1 }, { 2, 3 }, { 7, 1 }, { 17, 5 }, { 33, 18 }, { 64, 33 }, { 127, 2 }, { 3, 40 } };
	int k = 0;
	for (size_t u = 0; u < sizeof subs / sizeof subs[0]; u++)
		for (size_t s = 0; s < sizeof ysizes / sizeof ysizes[0]; s++, k++) {
			int gray = subs[u][0], w = ysizes[s][0], h = ysizes[s][1], o = k % 8 + 1;
			struct image img, a, b;
			struct yuv_image planes, back;
			struct image_info info;
			unsigned lost = 0;
			unsigned char *jpeg, *ex;
			size_t len, exlen;
			char err[IMAGE_ERR_LEN];
			/* noise in half the cases: chroma changes between neighbours stress the upsampling */
			if (k & 1)
				random_image(&img, w, h, gray ? 1 : 3, 0, 1);
			else
				smooth_image(&img, w, h, gray ? 1 : 3);
			assert_int_equal(yuv_ref_from_image(&img, gray, subs[u][1], subs[u][2], 0, &planes, &lost), 0);
			assert_int_equal(lost, 0);
			assert_int_equal(image_encode_jpeg_yuv(&planes, 90, &jpeg, &len, err), 0);
			assert_int_equal(yuv_ref_add_exif(jpeg, len, o, &ex, &exlen), 0);
			assert_int_equal(image_decode(ex, exlen, NULL, &a, &info, err), 0);
			assert_int_equal(info.orientation, o);
			int rc = image_decode_jpeg_yuv(ex, exlen, NULL, &back, &info, err);
			if (rc)
				fail_msg("%dx%d sub %dx%d gray %d: %s", w, h, subs[u][1], subs[u][2], gray, err);
			assert_int_equal(back.width, w);
			assert_int_equal(back.height, h);
			assert_int_equal(back.gray, gray);
			assert_int_equal(back.sub_x, gray ? 1 : subs[u][1]);
			assert_int_equal(back.sub_y, gray ? 1 : subs[u][2]);
			assert_int_equal(back.orientation, o);
			assert_int_equal(info.orientation, o);
			/* the answer's size: turned as the float decode turns it */
			assert_int_equal(info.width, a.width);
			assert_int_equal(info.height, a.height);
			assert_int_equal(info.format, IMAGE_FORMAT_JPEG);
			assert_int_equal(info.channels, gray ? 1 : 3);
			for (int p = 0; p < 3; p++) {
				assert_int_equal(back.stride[p] % 4, 0);
				assert_int_equal(back.offset[p] % 4, 0);
			}
			assert_int_equal(yuv_ref_to_image(&back, &b), 0);
			assert_int_equal(b.channels, a.channels);
			double d = max_code_diff(&a, &b, a.channels);
			if (!(d <= 1.5))
				fail_msg("%dx%d sub %dx%d gray %d orientation %d: planes vs libjpeg differ by "
					 "%.2f codes (tolerance 1.5)", w, h, subs[u][1], subs[u][2], gray, o, d);
			/* the CPU conversion (image_from_yuv, libjpeg's own) equals libjpeg's decode */
			struct image c;
			assert_int_equal(image_from_yuv(&back, &c, err), 0);
			assert_int_equal(c.width, a.width);
			assert_int_equal(c.height, a.height);
			assert_int_equal(c.channels, a.channels);
			double dc = max_code_diff(&a, &c, a.channels);
			if (!(dc <= 1.0))
				fail_msg("%dx%d sub %dx%d gray %d orientation %d: image_from_yuv vs libjpeg "
					 "differ by %.2f codes (tolerance 1)", w, h, subs[u][1], subs[u][2], gray,
					 o, dc);
			image_free(&c);
			/* and the planes keep the picture: JPEG at quality 90 */
			if (!(k & 1) && o == 1 && w * h >= 256) {
				double p = psnr_srgb(&img, &a, a.channels);
				if (!(p >= 30))
					fail_msg("%dx%d: PSNR %.1f after planes -> JPEG", w, h, p);
			}
			image_free(&img);
			image_free(&a);
			image_free(&b);
			yuv_image_free(&planes);
			yuv_image_free(&back);
			free(jpeg);
			free(ex);
		}
}

/* Coefficient planes (yuv_image_layout_dct): the quantisation tables are ITU T.81 Annex K's
 * scaled as the IJG encoder scales them (independent reference: tests/yuv_ref.c), at every
 * quality; the layout is whole MCUs; coefficients computed by the double-precision reference
 * from planes encode to a JPEG that decodes to the same size and subsampling within 0.1 dB PSNR
 * of libjpeg-turbo's own encode of those planes (a CPU DCT against libjpeg's, so the
 * entropy-coding path is checked apart from the GPU; a tiny image's samples within 2 codes of
 * that encode's instead); a quality other than the coefficients',
 * a layout that is not theirs, and qualities past 1-100 are refused. */
static void test_jpeg_dct(void **state)
{
	(void)state;
	unsigned short lt[64], ct[64];
	for (int q = 1; q <= 100; q++) {
		assert_int_equal(image_jpeg_quant_tables(q, lt, ct), 0);
		for (int i = 0; i < 64; i++)
			if (lt[i] != yuv_ref_quant(q, 0, i) || ct[i] != yuv_ref_quant(q, 1, i))
				fail_msg("quality %d entry %d: %u %u, Annex K scaled %d %d", q, i, lt[i], ct[i],
				         yuv_ref_quant(q, 0, i), yuv_ref_quant(q, 1, i));
	}
	assert_int_equal(image_jpeg_quant_tables(0, lt, ct), IMAGE_E_ARG);
	assert_int_equal(image_jpeg_quant_tables(101, lt, ct), IMAGE_E_ARG);
	struct yuv_image y;
	assert_int_equal(yuv_image_layout_dct(&y, 33, 17, 0, 2, 2, 90), 0);
	assert_int_equal(y.pw[0], 6), assert_int_equal(y.ph[0], 4);
	assert_int_equal(y.pw[1], 3), assert_int_equal(y.ph[1], 2);
	assert_int_equal(y.stride[0], 6 * 128);
	assert_int_equal(y.bytes, (size_t)(24 + 6 + 6) * 128);
	assert_int_equal(yuv_image_layout_dct(&y, 33, 17, 0, 1, 1, 0), IMAGE_E_ARG);
	assert_int_equal(yuv_image_layout_dct(&y, 0, 17, 0, 1, 1, 90), IMAGE_E_EMPTY);
	static const struct { int w, h, ch, sx, sy, q; } cases[] = {
		{ 160, 96, 3, 1, 1, 90 }, { 160, 96, 3, 2, 2, 75 }, { 161, 97, 3, 1, 1, 75 }, { 161, 97, 3, 2, 2, 90 }, { 161, 97, 3, 2, 2, 75 }, { 150, 90, 3, 2, 1, 100 },
		{ 150, 90, 3, 1, 2, 40 }, { 99, 70, 1, 1, 1, 90 }, { 3, 5, 3, 2, 2, 90 },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		struct image img;
		smooth_image(&img, cases[c].w, cases[c].h, cases[c].ch);
		struct yuv_image planes, coef, back;
		struct image_info info;
		unsigned lost = 0;
		char err[IMAGE_ERR_LEN];
		int gray = cases[c].ch == 1;
		assert_int_equal(yuv_ref_from_image(&img, gray, cases[c].sx, cases[c].sy, 0, &planes, &lost), 0);
		assert_int_equal(yuv_ref_dct(&planes, cases[c].q, &coef), 0);
		double p[2];
		size_t n[2];
		struct yuv_image dec[2];
		for (int k = 0; k < 2; k++) {
			unsigned char *jpeg;
			if (image_encode_jpeg_yuv(k ? &planes : &coef, cases[c].q, &jpeg, &n[k], err))
				fail_msg("encode: %s", err);
			assert_int_equal(image_decode_jpeg_yuv(jpeg, n[k], NULL, &dec[k], &info, err), 0);
			back = dec[k];
			assert_int_equal(back.width, cases[c].w), assert_int_equal(back.height, cases[c].h);
			assert_int_equal(back.gray, gray);
			assert_int_equal(back.sub_x, planes.sub_x), assert_int_equal(back.sub_y, planes.sub_y);
			assert_int_equal(back.bytes, planes.bytes);
			double se = 0;
			size_t ns = 0;
			for (int q = 0; q < (gray ? 1 : 3); q++)
				for (int j = 0; j < planes.ph[q]; j++)
					for (int i = 0; i < planes.pw[q]; i++, ns++) {
						size_t at = planes.offset[q] + (size_t)j * planes.stride[q] + i;
						se += (double)(back.data[at] - planes.data[at]) * (back.data[at] - planes.data[at]);
					}
			p[k] = se ? 10 * log10(255.0 * 255.0 * (double)ns / se) : 99;
			free(jpeg);
		}
		/* the two decodes sample by sample: the DCTs (exact here, libjpeg's integer one there)
		 * round a coefficient apart now and then, a code or two in the samples it touches */
		int maxd = 0;
		for (int q = 0; q < (gray ? 1 : 3); q++)
			for (int j = 0; j < planes.ph[q]; j++)
				for (int i = 0; i < planes.pw[q]; i++) {
					size_t at = planes.offset[q] + (size_t)j * planes.stride[q] + i;
					int d = abs((int)dec[0].data[at] - (int)dec[1].data[at]);
					maxd = d > maxd ? d : maxd;
				}
		yuv_image_free(&dec[0]);
		yuv_image_free(&dec[1]);
		print_message("coefficients %dx%d sub %dx%d q %d: %.2f dB (%zu bytes), libjpeg %.2f dB "
		              "(%zu bytes); decodes at most %d codes apart\n", cases[c].w, cases[c].h,
		              cases[c].sx, cases[c].sy, cases[c].q, p[0], n[0], p[1], n[1], maxd);
		/* PSNR within 0.1 dB where it is a statistic (a plane of 64 blocks or more); over the
		 * few dozen samples of a tiny image one code moves it by a dB either way, so there the
		 * decodes are held to what one coefficient a quantisation step apart makes: at most
		 * the largest step times an AC basis function's peak (1/4), and a code of rounding */
		unsigned short qt[2][64];
		assert_int_equal(image_jpeg_quant_tables(cases[c].q, qt[0], qt[1]), 0);
		int step = 0;
		for (int t = 0; t < 2; t++)
			for (int i = 0; i < 64; i++)
				step = qt[t][i] > step ? qt[t][i] : step;
		int bound = 1 + (step + 3) / 4;
		if (planes.pw[0] * planes.ph[0] >= 64 * 64 ? p[0] < p[1] - 0.1 : maxd > bound)
			fail_msg("%.3f dB against libjpeg's %.3f, samples up to %d codes apart (bound %d)",
			         p[0], p[1], maxd, bound);
		/* refused: another quality, a layout that is not the coefficients' */
		unsigned char *jpeg = NULL;
		size_t len = 0;
		assert_int_equal(image_encode_jpeg_yuv(&coef, cases[c].q == 90 ? 80 : 90, &jpeg, &len, err),
		                 IMAGE_E_ARG);
		coef.bytes -= 128;
		assert_int_equal(image_encode_jpeg_yuv(&coef, cases[c].q, &jpeg, &len, err), IMAGE_E_ARG);
		assert_null(jpeg);
		coef.bytes += 128;
		yuv_image_free(&coef);
		yuv_image_free(&planes);
		image_free(&img);
	}
}

/* An already coded scan (yuv_image.coded) gets the headers libjpeg writes before it: the whole
 * file byte for byte libjpeg's own with restart_in_rows = 1, its scan taken as the input, in
 * every subsampling, gray, sizes off the MCU grid, qualities 1-100 (baseline tables: 8-bit
 * entries). Sides past libjpeg's 65500 are refused. The Huffman codes exported for the GPU are
 * libjpeg's standard tables (ITU T.81 Annex K). */
static void test_jpeg_coded(void **state)
{
	(void)state;
	static const struct { int w, h, ch, sx, sy, q; } cases[] = {
		{ 160, 96, 3, 1, 1, 90 }, { 161, 97, 3, 2, 2, 75 }, { 150, 90, 3, 2, 1, 100 },
		{ 150, 90, 3, 1, 2, 40 }, { 99, 70, 1, 1, 1, 90 },  { 3, 5, 3, 2, 2, 1 },
		{ 1, 1, 1, 1, 1, 50 },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		struct image img;
		smooth_image(&img, cases[c].w, cases[c].h, cases[c].ch);
		struct yuv_image planes, coef;
		unsigned lost = 0;
		char err[IMAGE_ERR_LEN];
		assert_int_equal(yuv_ref_from_image(&img, cases[c].ch == 1, cases[c].sx, cases[c].sy, 0,
		                                    &planes, &lost), 0);
		assert_int_equal(yuv_ref_dct(&planes, cases[c].q, &coef), 0);
		unsigned char *ref, *mine;
		size_t rlen, mlen, at, n;
		assert_int_equal(yuv_ref_jpeg_rows(&coef, &ref, &rlen), 0);
		assert_int_equal(image_jpeg_scan(ref, rlen, &at, &n), 0);
		size_t a2, n2; /* cut: no EOI */
		assert_int_equal(image_jpeg_scan(ref, rlen - 1, &a2, &n2), IMAGE_E_CORRUPT);
		assert_int_equal(image_jpeg_scan(ref, at - 1, &a2, &n2), IMAGE_E_CORRUPT);
		assert_true(n <= coef.bytes);
		memcpy(coef.data, ref + at, n);
		coef.coded = n;
		if (image_encode_jpeg_yuv(&coef, cases[c].q, &mine, &mlen, err))
			fail_msg("coded %dx%d: %s", cases[c].w, cases[c].h, err);
		if (mlen != rlen || memcmp(mine, ref, rlen)) {
			size_t d = 0;
			while (d < mlen && d < rlen && mine[d] == ref[d])
				d++;
			fail_msg("coded %dx%d sub %dx%d q %d: %zu bytes against libjpeg's %zu, first "
			         "difference at %zu", cases[c].w, cases[c].h, cases[c].sx, cases[c].sy,
			         cases[c].q, mlen, rlen, d);
		}
		/* a length past the coefficients' room is refused */
		unsigned char *bad = NULL;
		size_t blen = 0;
		coef.coded = coef.bytes + 1;
		assert_int_equal(image_encode_jpeg_yuv(&coef, cases[c].q, &bad, &blen, err), IMAGE_E_ARG);
		assert_null(bad);
		if (c == 0) { /* a side past 65500 (the layout allows 65535) */
			struct yuv_image wide;
			assert_int_equal(yuv_image_layout_dct(&wide, 65501, 8, 1, 1, 1, cases[c].q), 0);
			wide.data = coef.data; /* never read: refused first */
			wide.coded = 16;
			assert_int_equal(image_encode_jpeg_yuv(&wide, cases[c].q, &bad, &blen, err),
			                 IMAGE_E_TOO_LARGE);
			assert_null(bad);
		}
		free(mine);
		free(ref);
		yuv_image_free(&coef);
		yuv_image_free(&planes);
		image_free(&img);
	}
	/* Annex K.3's first codes: DC luma category 0 is 00, AC luma EOB 1010, ZRL 11111111001 */
	uint32_t codes[IMAGE_JPEG_HUFF_CODES];
	assert_int_equal(image_jpeg_huff_codes(codes), 0);
	assert_int_equal(codes[0], 0u | 2u << 16);
	assert_int_equal(codes[32], 0xau | 4u << 16);
	assert_int_equal(codes[32 + 0xf0], 0x7f9u | 11u << 16);
	assert_int_equal(codes[16], 0u | 2u << 16);      /* DC chroma 0: 00 */
	assert_int_equal(codes[288], 0u | 2u << 16);     /* AC chroma EOB: 00 */
	assert_int_equal(codes[32 + 0x01], 0u | 2u << 16); /* AC luma 0/1: 00 */
}

/* A 40x24 CMYK JPEG (TurboJPEG writes it as YCCK), tjFree'd by the caller. */
static unsigned char *cmyk_jpeg(unsigned long *len)
{
	unsigned char cmyk[40 * 24 * 4];
	for (size_t i = 0; i < sizeof cmyk; i++)
		cmyk[i] = (unsigned char)(i * 7);
	tjhandle tj = tjInitCompress();
	unsigned char *cj = NULL;
	*len = 0;
	assert_int_equal(tjCompress2(tj, cmyk, 40, 160, 24, TJPF_CMYK, &cj, len, TJSAMP_444, 90, 0), 0);
	tjDestroy(tj);
	return cj;
}

/* What the planes cannot carry is refused as unsupported (the caller falls back to the full
 * decode); bad input fails as in image_decode and leaves nothing allocated. */
static void test_jpeg_yuv_errors(void **state)
{
	(void)state;
	struct image img;
	struct yuv_image y, planes;
	struct image_info info;
	char err[IMAGE_ERR_LEN];
	unsigned char *jpeg;
	size_t len;
	unsigned lost = 0;
	smooth_image(&img, 40, 24, 3);
	unsigned long cl;
	unsigned char *cj = cmyk_jpeg(&cl);
	assert_int_equal(image_decode_jpeg_yuv(cj, cl, NULL, &y, &info, err), IMAGE_E_UNSUPPORTED);
	assert_null(y.data);
	print_message("cmyk: %s\n", err);
	tjFree(cj);
	/* not a JPEG */
	assert_int_equal(image_decode_jpeg_yuv("\x89PNG\r\n\x1a\n", 8, NULL, &y, &info, err),
			 IMAGE_E_UNSUPPORTED);
	/* truncated, and limits on the oriented size */
	assert_int_equal(yuv_ref_from_image(&img, 0, 2, 2, 0, &planes, &lost), 0);
	assert_int_equal(image_encode_jpeg_yuv(&planes, 90, &jpeg, &len, err), 0);
	for (size_t cut = 0; cut < len; cut += len / 7 + 1) {
		int rc = image_decode_jpeg_yuv(jpeg, cut, NULL, &y, &info, err);
		if (!(rc == IMAGE_E_TRUNCATED || rc == IMAGE_E_CORRUPT || rc == IMAGE_E_UNSUPPORTED ||
		      rc == IMAGE_E_EMPTY || rc == IMAGE_E_TOO_LARGE))
			fail_msg("cut at %zu of %zu: %d %s", cut, len, rc, err);
		assert_null(y.data);
	}
	struct image_limits lim = { .max_width = 30 };
	assert_int_equal(image_decode_jpeg_yuv(jpeg, len, &lim, &y, &info, err), IMAGE_E_TOO_LARGE);
	unsigned char *ex;
	size_t exlen;
	assert_int_equal(yuv_ref_add_exif(jpeg, len, 6, &ex, &exlen), 0); /* 24 x 40 once turned */
	lim.max_width = 30;
	assert_int_equal(image_decode_jpeg_yuv(ex, exlen, &lim, &y, &info, err), 0);
	yuv_image_free(&y);
	assert_int_equal(image_encode_jpeg_yuv(&planes, 0, &jpeg, &len, err), IMAGE_E_ARG);
	free(ex);
	free(jpeg);
	yuv_image_free(&planes);
	/* allocation arguments */
	assert_int_equal(yuv_image_alloc(&y, 0, 5, 0, 1, 1), IMAGE_E_EMPTY);
	assert_int_equal(yuv_image_alloc(&y, 5, 5, 0, 3, 1), IMAGE_E_ARG);
	assert_int_equal(yuv_image_alloc(&y, 70000, 5, 0, 1, 1), IMAGE_E_TOO_LARGE);
	assert_int_equal(yuv_image_alloc(&y, 5, 3, 0, 2, 2), 0);
	assert_int_equal(y.pw[1], 3);
	assert_int_equal(y.ph[1], 2);
	assert_int_equal(y.pw[0], 6);
	assert_int_equal(y.ph[0], 4);
	assert_int_equal(y.stride[0], 8);
	assert_int_equal(y.bytes, 8 * 4 + 4 * 2 * 2);
	yuv_image_free(&y);
	image_free(&img);
}

/* Memory a caller lends for decoded planes (struct yuv_memory): a fixed buffer, or none. */
struct lender {
	unsigned char *mem;
	size_t cap, asked;
	int allocs, releases;
};

static void *lend_alloc(void *ctx, size_t bytes, void **owner)
{
	struct lender *l = ctx;
	l->allocs++;
	l->asked = bytes;
	*owner = l;
	return bytes <= l->cap ? l->mem : NULL;
}

static void lend_release(void *owner)
{
	struct lender *l = owner;
	l->releases++;
}

/* Planes decoded into memory the caller lends (image_decode_jpeg_yuv_into): the same samples as
 * malloc'd planes, the memory given back once when they are freed, never freed itself; malloc'd
 * when the lender has none large enough; given back when the decode fails after taking it
 * (truncated scan data), and not asked for when it fails before (its header, or the limits). */
static void test_jpeg_yuv_into(void **state)
{
	(void)state;
	static const int subs[][3] = { { 1, 1, 1 }, { 0, 1, 1 }, { 0, 2, 2 }, { 0, 2, 1 } };
	char err[IMAGE_ERR_LEN];
	for (size_t u = 0; u < sizeof subs / sizeof subs[0]; u++) {
		struct image img;
		struct yuv_image planes, a, b;
		unsigned lost = 0;
		unsigned char *jpeg;
		size_t len;
		random_image(&img, 45, 29, subs[u][0] ? 1 : 3, 0, 1);
		assert_int_equal(yuv_ref_from_image(&img, subs[u][0], subs[u][1], subs[u][2], 0, &planes,
						    &lost), 0);
		assert_int_equal(image_encode_jpeg_yuv(&planes, 85, &jpeg, &len, err), 0);
		assert_int_equal(image_decode_jpeg_yuv(jpeg, len, NULL, &a, NULL, err), 0);
		struct lender l = { malloc(a.bytes + 64), a.bytes + 64, 0, 0, 0 };
		struct yuv_memory mem = { lend_alloc, lend_release, &l };
		assert_int_equal(image_decode_jpeg_yuv_into(jpeg, len, NULL, &mem, &b, NULL, err), 0);
		assert_int_equal(l.allocs, 1);
		assert_int_equal(l.asked, a.bytes);
		assert_ptr_equal(b.data, l.mem);
		assert_int_equal(b.bytes, a.bytes);
		for (int p = 0; p < (a.gray ? 1 : 3); p++)
			for (int r = 0; r < a.ph[p]; r++)
				assert_memory_equal(a.data + a.offset[p] + (size_t)r * a.stride[p],
						    b.data + b.offset[p] + (size_t)r * b.stride[p], (size_t)a.pw[p]);
		yuv_image_free(&b); /* given back, not freed (ASan would see a double free below) */
		assert_int_equal(l.releases, 1);
		assert_null(b.data);
		/* none large enough: malloc'd, as without a lender */
		l.cap = a.bytes - 1;
		assert_int_equal(image_decode_jpeg_yuv_into(jpeg, len, NULL, &mem, &b, NULL, err), 0);
		assert_true(b.data != l.mem && !b.release);
		yuv_image_free(&b);
		assert_int_equal(l.releases, 1);
		/* cut in the scan data: taken, then given back */
		l.cap = a.bytes;
		l.allocs = l.releases = 0;
		assert_true(image_decode_jpeg_yuv_into(jpeg, len * 3 / 4, NULL, &mem, &b, NULL, err) != 0);
		assert_int_equal(l.allocs, 1);
		assert_int_equal(l.releases, 1);
		assert_null(b.data);
		/* refused by the limits, or a header cut: never taken */
		struct image_limits lim = { .max_width = 10 };
		assert_int_equal(image_decode_jpeg_yuv_into(jpeg, len, &lim, &mem, &b, NULL, err),
				 IMAGE_E_TOO_LARGE);
		assert_true(image_decode_jpeg_yuv_into(jpeg, 20, NULL, &mem, &b, NULL, err) != 0);
		assert_int_equal(l.allocs, 1);
		assert_int_equal(l.releases, 1);
		free(l.mem);
		free(jpeg);
		yuv_image_free(&a);
		yuv_image_free(&planes);
		image_free(&img);
	}
}

/* The planes of a and b (same layout) compared sample by sample: the largest difference, and
 * how many differ. */
static int planes_diff(const struct yuv_image *a, const struct yuv_image *b, long *ndiff)
{
	int worst = 0;
	*ndiff = 0;
	for (int p = 0; p < (a->gray ? 1 : 3); p++)
		for (int r = 0; r < a->ph[p]; r++)
			for (int x = 0; x < a->pw[p]; x++) {
				int d = abs((int)a->data[a->offset[p] + (size_t)r * a->stride[p] + x] -
				            (int)b->data[b->offset[p] + (size_t)r * b->stride[p] + x]);
				*ndiff += d != 0;
				worst = d > worst ? d : worst;
			}
	return worst;
}

/* A JPEG through TurboJPEG from an 8-bit RGB or gray image, baseline or progressive. */
static unsigned char *tj_jpeg(const struct image *img, int subsamp, int quality, int progressive,
                              unsigned long *len)
{
	int w = img->width, h = img->height, ch = img->channels;
	unsigned char *px = malloc((size_t)w * h * ch), *out = NULL;
	for (size_t i = 0; i < (size_t)w * h * ch; i++)
		px[i] = (unsigned char)lrintf(img->pixels[i] * 255);
	tjhandle tj = tjInitCompress();
	*len = 0;
	assert_int_equal(tjCompress2(tj, px, w, 0, h, ch == 1 ? TJPF_GRAY : TJPF_RGB, &out, len,
	                             subsamp, quality, progressive ? TJFLAG_PROGRESSIVE : 0), 0);
	tjDestroy(tj);
	free(px);
	return out;
}

/* Frames decoded to their coefficients (image_decode_jpeg_coefs_into): every subsampling the
 * planes carry, sizes from 1x1 to off-grid, smooth and noisy content, quality 75 to 100,
 * baseline and progressive; the inverse DCT on the CPU (yuv_coefs_to_planes, float32 as the
 * GPU's) against libjpeg's own planes (its accurate integer IDCT): within 1 of 255 in every
 * sample. The layout: the planes' fields as the planes decode's, offsets multiples of 4, the
 * overflow records sorted and used where an AC coefficient passes 8 bits, one component's after
 * another's; noise at quality 100 (more than half the blocks wide): decoded to planes instead,
 * libjpeg's own. image_from_yuv converts the coefficients. */
static void test_jpeg_coefs(void **state)
{
	(void)state;
	static const int subs[][2] = { { TJSAMP_GRAY, 1 }, { TJSAMP_444, 3 }, { TJSAMP_422, 3 },
	                               { TJSAMP_420, 3 }, { TJSAMP_440, 3 } };
	static const int dims[][2] = { { 1, 1 }, { 2, 3 }, { 17, 5 }, { 33, 18 }, { 64, 33 },
	                                { 127, 2 }, { 3, 40 }, { 161, 97 } };
	static const int qualities[] = { 75, 90, 95, 100 };
	char err[IMAGE_ERR_LEN];
	int k = 0, with_records = 0, packed = 0, fell_back = 0, worst_all = 0;
	long differing = 0, samples = 0;
	for (size_t u = 0; u < sizeof subs / sizeof subs[0]; u++)
		for (size_t s = 0; s < sizeof dims / sizeof dims[0]; s++)
			for (int prog = 0; prog < 2; prog++, k++) {
				int w = dims[s][0], h = dims[s][1], q = qualities[k % 4], noisy = k % 3 == 0;
				struct image img;
				if (noisy)
					random_image(&img, w, h, subs[u][1], 0, 1);
				else
					smooth_image(&img, w, h, subs[u][1]);
				unsigned long len;
				unsigned char *jpeg = tj_jpeg(&img, subs[u][0], q, prog, &len);
				struct yuv_image a, c, cp;
				struct image_info ia, ic;
				assert_int_equal(image_decode_jpeg_yuv(jpeg, len, NULL, &a, &ia, err), 0);
				int rc = image_decode_jpeg_coefs_into(jpeg, len, NULL, NULL, &c, &ic, err);
				if (rc)
					fail_msg("%dx%d subsamp %d q%d prog %d: %s", w, h, subs[u][0], q, prog, err);
				assert_memory_equal(&ia, &ic, sizeof ia);
				assert_int_equal(c.width, a.width);
				assert_int_equal(c.gray, a.gray);
				assert_int_equal(c.sub_x, a.sub_x);
				assert_int_equal(c.sub_y, a.sub_y);
				for (int p = 0; p < 3; p++) {
					assert_int_equal(c.pw[p], a.pw[p]);
					assert_int_equal(c.ph[p], a.ph[p]);
					assert_int_equal(c.stride[p], a.stride[p]);
					assert_int_equal(c.offset[p], a.offset[p]);
				}
				if (!c.coefs) { /* too many wide blocks: the planes themselves */
					fell_back++;
					long nd;
					assert_int_equal(c.bytes, a.bytes);
					assert_int_equal(planes_diff(&a, &c, &nd), 0);
				} else {
					packed++;
					assert_int_equal(c.planes_bytes, a.bytes);
					assert_true(c.coef_bytes <= c.bytes);
					for (int p = 0; p < (c.gray ? 1 : 3); p++) {
						const struct yuv_coefs *cf = &c.cf[p];
						assert_true(cf->bw * 8 >= c.pw[p] && cf->bh * 8 >= c.ph[p]);
						assert_true(cf->dc % 4 == 0 && cf->ac % 4 == 0 && cf->ovf % 4 == 0 &&
						            cf->quant % 4 == 0);
						assert_true(cf->novf <= 2 * cf->bw * cf->bh);
						/* the records one component's after another's, the last ending what
						 * the frame uses of its room */
						size_t end = cf->ovf + (size_t)cf->novf * YUV_COEF_OVF_BYTES;
						assert_int_equal(end, p + 1 < (c.gray ? 1 : 3) ? c.cf[p + 1].ovf
						                                              : c.coef_bytes);
						with_records += cf->novf > 0;
						uint64_t prev = 0;
						for (int i = 0; i < cf->novf; i++) { /* sorted, each flagged, wide */
							uint32_t r[2], dc;
							memcpy(r, c.data + cf->ovf + (size_t)i * YUV_COEF_OVF_BYTES, 8);
							uint64_t key = (uint64_t)r[0] << 8 | (r[1] & 0xffffu);
							int v = (int16_t)(uint16_t)(r[1] >> 16), zz = (int)(r[1] & 0xffffu);
							assert_true(r[0] < (uint32_t)(cf->bw * cf->bh) && (!i || key > prev));
							assert_true(zz >= 1 && zz < 64 && (v < -128 || v > 127));
							memcpy(&dc, c.data + cf->dc + (size_t)r[0] * 4, 4);
							assert_int_equal(dc >> 16, 1);
							prev = key;
						}
					}
					assert_int_equal(yuv_coefs_to_planes(&c, &cp), 0);
					long nd;
					int worst = planes_diff(&a, &cp, &nd);
					if (worst > 1)
						fail_msg("%dx%d subsamp %d q%d prog %d: the inverse DCT differs from "
						         "libjpeg's by %d (tolerance 1)", w, h, subs[u][0], q, prog,
						         worst);
					worst_all = worst > worst_all ? worst : worst_all;
					differing += nd;
					for (int p = 0; p < (a.gray ? 1 : 3); p++)
						samples += (long)a.pw[p] * a.ph[p];
					/* image_from_yuv converts them as it converts the planes */
					struct image fa, fc;
					assert_int_equal(image_from_yuv(&cp, &fa, err), 0);
					assert_int_equal(image_from_yuv(&c, &fc, err), 0);
					assert_int_equal(fa.width, fc.width);
					assert_memory_equal(fa.pixels, fc.pixels,
					                    (size_t)fa.width * fa.height * fa.channels * sizeof(float));
					image_free(&fa), image_free(&fc);
					yuv_image_free(&cp);
				}
				yuv_image_free(&a), yuv_image_free(&c);
				tjFree(jpeg);
				image_free(&img);
			}
	print_message("coefficients: %d frames packed (%d components with overflow records), %d "
	              "decoded to planes; the inverse DCT differs from libjpeg's in %ld of %ld "
	              "samples, by at most %d\n", packed, with_records, fell_back, differing, samples,
	              worst_all);
	assert_true(packed >= 60 && with_records >= 1 && fell_back >= 1);
}

/* A progressive file whose first warning is harmless (stray bytes before its second scan) and
 * which is cut short after it: libjpeg pads what it could not decode with gray, and TurboJPEG
 * reports the first warning only; the float, planes and coefficient decoders all refuse it as
 * truncated, and take the whole file with the stray bytes. */
static void test_jpeg_late_warning(void **state)
{
	(void)state;
	char err[IMAGE_ERR_LEN];
	struct image img, f;
	smooth_image(&img, 64, 48, 3);
	unsigned long len;
	unsigned char *jpeg = tj_jpeg(&img, TJSAMP_420, 90, 1, &len);
	size_t sos = 2, at; /* the second scan's marker */
	int scans = 0;
	for (; sos + 1 < len; sos++)
		if (jpeg[sos] == 0xff && jpeg[sos + 1] == 0xda && ++scans == 2)
			break;
	at = sos;
	assert_true(scans == 2 && sos + 100 < len);
	unsigned char *bad = malloc(len + 2);
	memcpy(bad, jpeg, at);
	bad[at] = 0x12, bad[at + 1] = 0x34;
	memcpy(bad + at + 2, jpeg + at, len - at);
	for (int cut = 0; cut < 2; cut++) {
		/* cut inside the second scan's data */
		size_t n = cut ? sos + 2 + 40 : len + 2;
		struct yuv_image y;
		int rr[3];
		rr[0] = image_decode(bad, n, NULL, &f, NULL, err);
		if (!rr[0])
			image_free(&f);
		rr[1] = image_decode_jpeg_yuv(bad, n, NULL, &y, NULL, err);
		yuv_image_free(&y);
		rr[2] = image_decode_jpeg_coefs_into(bad, n, NULL, NULL, &y, NULL, err);
		yuv_image_free(&y);
		for (int i = 0; i < 3; i++)
			if (cut ? rr[i] != IMAGE_E_TRUNCATED : rr[i] != 0)
				fail_msg("%s file, decoder %d: %d (%s)", cut ? "cut" : "whole", i, rr[i], err);
		if (cut)
			print_message("stray bytes, then a cut scan: %s\n", err);
	}
	free(bad);
	tjFree(jpeg);
	image_free(&img);
}

/* A progressive JPEG through libjpeg (jpeg_simple_progression) of a smooth 64x48 4:2:0 image,
 * its first `scans` scans only (0: all). */
static unsigned char *lj_progressive(int scans, unsigned long *len)
{
	struct image img;
	smooth_image(&img, 64, 48, 3);
	unsigned char *px = malloc((size_t)64 * 48 * 3), *out = NULL;
	for (size_t i = 0; i < (size_t)64 * 48 * 3; i++)
		px[i] = (unsigned char)lrintf(img.pixels[i] * 255);
	struct jpeg_compress_struct c;
	struct jpeg_error_mgr e;
	c.err = jpeg_std_error(&e);
	jpeg_create_compress(&c);
	*len = 0;
	jpeg_mem_dest(&c, &out, len);
	c.image_width = 64, c.image_height = 48, c.input_components = 3, c.in_color_space = JCS_RGB;
	jpeg_set_defaults(&c);
	jpeg_set_quality(&c, 90, TRUE);
	jpeg_simple_progression(&c);
	if (scans)
		c.num_scans = scans;
	jpeg_start_compress(&c, TRUE);
	for (int y = 0; y < 48; y++) {
		JSAMPROW row = px + (size_t)y * 64 * 3;
		jpeg_write_scanlines(&c, &row, 1);
	}
	jpeg_finish_compress(&c);
	jpeg_destroy_compress(&c);
	free(px);
	image_free(&img);
	return out;
}

/* A progressive file that leaves coefficients unrefined (its DC scan alone, at Al 1) is decoded
 * to planes, libjpeg's own (its decoder smooths such blocks); the whole progression packs. */
static void test_jpeg_coefs_progressive(void **state)
{
	(void)state;
	char err[IMAGE_ERR_LEN];
	for (int scans = 1; scans >= 0; scans--) {
		unsigned long len;
		unsigned char *jpeg = lj_progressive(scans, &len);
		struct yuv_image a, c, cp;
		assert_int_equal(image_decode_jpeg_yuv(jpeg, len, NULL, &a, NULL, err), 0);
		assert_int_equal(image_decode_jpeg_coefs_into(jpeg, len, NULL, NULL, &c, NULL, err), 0);
		long nd;
		if (scans) {
			assert_false(c.coefs);
			assert_int_equal(planes_diff(&a, &c, &nd), 0);
		} else {
			assert_true(c.coefs);
			assert_int_equal(yuv_coefs_to_planes(&c, &cp), 0);
			assert_true(planes_diff(&a, &cp, &nd) <= 1);
			yuv_image_free(&cp);
		}
		yuv_image_free(&a), yuv_image_free(&c);
		free(jpeg);
	}
}

/* The coefficients' errors and memory: into lent memory (asked for the layout's bytes, given back
 * once), malloc'd when the lender has none; cut scan data fails (TRUNCATED or CORRUPT) and gives
 * the memory back; limits and what the planes cannot carry (CMYK) refuse before any; the
 * inverse DCT refuses a frame of planes and a flagged block without its record. */
static void test_jpeg_coefs_errors(void **state)
{
	(void)state;
	char err[IMAGE_ERR_LEN];
	struct image img;
	smooth_image(&img, 45, 29, 3);
	for (int prog = 0; prog < 2; prog++) {
		unsigned long len;
		unsigned char *jpeg = tj_jpeg(&img, TJSAMP_420, 90, prog, &len);
		struct yuv_image a, b;
		assert_int_equal(image_decode_jpeg_coefs_into(jpeg, len, NULL, NULL, &a, NULL, err), 0);
		assert_true(a.coefs);
		size_t need = (size_t)a.cf[0].ovf;
		for (int c = 0; c < 3; c++)
			need += (size_t)2 * a.cf[c].bw * a.cf[c].bh * YUV_COEF_OVF_BYTES;
		struct lender l = { malloc(need), need, 0, 0, 0 };
		struct yuv_memory mem = { lend_alloc, lend_release, &l };
		assert_int_equal(image_decode_jpeg_coefs_into(jpeg, len, NULL, &mem, &b, NULL, err), 0);
		assert_int_equal(l.allocs, 1);
		assert_int_equal(l.asked, need);
		assert_ptr_equal(b.data, l.mem);
		assert_int_equal(b.bytes, a.bytes);
		assert_int_equal(b.coef_bytes, a.coef_bytes);
		/* the same words, but for the overflow room's unused part */
		assert_memory_equal(a.data, b.data, a.cf[0].ovf);
		for (int p = 0; p < 3; p++) {
			assert_int_equal(a.cf[p].novf, b.cf[p].novf);
			assert_memory_equal(a.data + a.cf[p].ovf, b.data + b.cf[p].ovf,
			                    (size_t)a.cf[p].novf * YUV_COEF_OVF_BYTES);
		}
		yuv_image_free(&b);
		assert_int_equal(l.releases, 1);
		l.cap = need - 1; /* none large enough: malloc'd */
		assert_int_equal(image_decode_jpeg_coefs_into(jpeg, len, NULL, &mem, &b, NULL, err), 0);
		assert_true(b.data != l.mem && !b.release && b.coefs);
		yuv_image_free(&b);
		l.cap = need;
		l.allocs = l.releases = 0;
		for (unsigned long cut = len / 2; cut < len - 2; cut += len / 9 + 1) {
			int rc = image_decode_jpeg_coefs_into(jpeg, cut, NULL, &mem, &b, NULL, err);
			if (rc != IMAGE_E_TRUNCATED && rc != IMAGE_E_CORRUPT)
				fail_msg("prog %d cut at %lu of %lu: %d %s", prog, cut, len, rc, err);
			assert_null(b.data);
		}
		assert_int_equal(l.allocs, l.releases);
		struct image_limits lim = { .max_width = 10 };
		assert_int_equal(image_decode_jpeg_coefs_into(jpeg, len, &lim, &mem, &b, NULL, err),
		                 IMAGE_E_TOO_LARGE);
		assert_int_equal(l.allocs, l.releases);
		/* a flagged block without its record; planes are not coefficients */
		struct yuv_image bad = a, cp;
		bad.data = malloc(a.bytes);
		memcpy(bad.data, a.data, a.bytes);
		bad.cf[0].novf = 0;
		uint32_t dc = 1u << 16;
		memcpy(bad.data + bad.cf[0].dc, &dc, 4);
		assert_int_equal(yuv_coefs_to_planes(&bad, &cp), IMAGE_E_CORRUPT);
		assert_null(cp.data);
		free(bad.data);
		struct yuv_image planes;
		assert_int_equal(image_decode_jpeg_yuv(jpeg, len, NULL, &planes, NULL, err), 0);
		assert_int_equal(yuv_coefs_to_planes(&planes, &cp), IMAGE_E_ARG);
		yuv_image_free(&planes);
		free(l.mem);
		yuv_image_free(&a);
		tjFree(jpeg);
	}
	image_free(&img);
	/* CMYK: not carried */
	unsigned long cl;
	unsigned char *cj = cmyk_jpeg(&cl);
	struct yuv_image y;
	assert_int_equal(image_decode_jpeg_coefs_into(cj, cl, NULL, NULL, &y, NULL, err),
	                 IMAGE_E_UNSUPPORTED);
	assert_null(y.data);
	tjFree(cj);
}

static void test_exr_roundtrip(void **state)
{
	(void)state;
	for (int bits = 16; bits <= 32; bits += 16)
		for (int ch = 1; ch <= 4; ch++)
			for (int s = 0; s < NSIZES; s++) {
				struct image img, back;
				struct image_info info;
				struct image_encode_opts o = { .bits = bits };
				unsigned lost;
				if (bits == 16)
					half_image(&img, sizes[s][0], sizes[s][1], ch);
				else
					random_image(&img, sizes[s][0], sizes[s][1], ch, -1e6f, 1e6f);
				roundtrip(&img, IMAGE_FORMAT_EXR, bits == 16 ? NULL : &o, &back, &info,
					  &lost);
				assert_int_equal(lost, 0);
				assert_int_equal(info.bits, bits);
				assert_int_equal(info.channels, ch);
				assert_int_equal(info.float_format, 1);
				assert_same_image(&img, &back, bits == 16 ? "exr half" : "exr float");
				image_free(&img);
				image_free(&back);
			}
	/* half: what does not fit is reported */
	struct image img, back;
	struct image_info info;
	unsigned lost;
	half_image(&img, 4, 4, 3);
	img.pixels[0] = 1.0f + 1.0f / 4096; /* needs 13 bits */
	roundtrip(&img, IMAGE_FORMAT_EXR, NULL, &back, &info, &lost);
	assert_int_equal(lost, IMAGE_LOST_PRECISION);
	assert_true(back.pixels[0] == 1.0f);
	image_free(&back);
	img.pixels[0] = 1e6f;
	roundtrip(&img, IMAGE_FORMAT_EXR, NULL, &back, &info, &lost);
	assert_true(lost & IMAGE_LOST_RANGE);
	assert_true(isinf(back.pixels[0]));
	image_free(&back);
	image_free(&img);
}

/* Float frames decoded into memory the caller lends (image_decode_into): PFM (gray, RGB) and
 * EXR (Y, YA, RGB, RGBA; half and float; uncompressed, ZIP and PIZ) written as RGBA float32,
 * every sample the same bits as image_decode's widened (gray to R, G and B, a missing alpha 1),
 * the lent memory (filled with NaN first) written everywhere; the memory given back once when
 * the image is freed, or when a decode fails after taking it; malloc'd (the stored channels)
 * when the lender has none large enough; not asked for when the limits refuse the frame. */
static void test_float_into(void **state)
{
	(void)state;
	static const struct { enum image_format f; int ch, bits, comp; } cases[] = {
		{ IMAGE_FORMAT_PFM, 1, 32, 0 }, { IMAGE_FORMAT_PFM, 3, 32, 0 },
		{ IMAGE_FORMAT_EXR, 1, 16, IMAGE_EXR_NONE }, { IMAGE_FORMAT_EXR, 2, 32, IMAGE_EXR_ZIP },
		{ IMAGE_FORMAT_EXR, 3, 16, IMAGE_EXR_ZIP }, { IMAGE_FORMAT_EXR, 3, 32, IMAGE_EXR_NONE },
		{ IMAGE_FORMAT_EXR, 4, 16, IMAGE_EXR_PIZ }, { IMAGE_FORMAT_EXR, 4, 32, IMAGE_EXR_ZIP },
	};
	char err[IMAGE_ERR_LEN];
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
		for (int s = 0; s < NSIZES; s++) {
			int w = sizes[s][0], h = sizes[s][1], ch = cases[k].ch;
			struct image img, a, b;
			struct image_info ia, ib;
			unsigned lost;
			unsigned char *buf;
			size_t len;
			random_image(&img, w, h, ch, -2, 4);
			img.pixels[0] = NAN; /* counted as decoded */
			img.pixels[(size_t)w * h * ch - 1] = INFINITY;
			struct image_encode_opts o = { .bits = cases[k].bits,
						       .exr_compression = cases[k].comp };
			assert_int_equal(image_encode(&img, cases[k].f, &o, &buf, &len, &lost, err), 0);
			assert_int_equal(image_decode(buf, len, NULL, &a, &ia, err), 0);
			size_t n = (size_t)w * h;
			struct lender l = { malloc(n * 16), n * 16, 0, 0, 0 };
			for (size_t i = 0; i < n * 4; i++)
				((float *)(void *)l.mem)[i] = NAN;
			struct image_memory mem = { lend_alloc, lend_release, &l };
			int rc = image_decode_into(buf, len, NULL, &mem, &b, &ib, err);
			if (rc)
				fail_msg("%s %dx%dx%d: %s", image_format_name(cases[k].f), w, h, ch, err);
			assert_int_equal(l.allocs, 1);
			assert_int_equal(l.asked, n * 16);
			assert_ptr_equal(b.pixels, l.mem);
			assert_int_equal(b.channels, 4);
			assert_int_equal(ib.channels, ia.channels);
			assert_int_equal(ib.bits, ia.bits);
			assert_int_equal(ib.nonfinite, image_nonfinite(&a));
			assert_int_equal(ia.nonfinite, ib.nonfinite);
			for (size_t i = 0; i < n; i++) {
				const float *p = a.pixels + i * a.channels;
				float want[4] = { p[0], p[0], p[0], 1 };
				if (a.channels >= 3)
					memcpy(want, p, 12);
				if (a.channels == 2 || a.channels == 4)
					want[3] = p[a.channels - 1];
				if (memcmp(want, b.pixels + i * 4, 16))
					fail_msg("%s %dx%dx%d bits %d: pixel %zu: %g %g %g %g, lent %g %g "
						 "%g %g", image_format_name(cases[k].f), w, h, ch,
						 cases[k].bits, i, (double)want[0], (double)want[1],
						 (double)want[2], (double)want[3], (double)b.pixels[i * 4],
						 (double)b.pixels[i * 4 + 1], (double)b.pixels[i * 4 + 2],
						 (double)b.pixels[i * 4 + 3]);
			}
			image_free(&b); /* given back, not freed (ASan would see a double free below) */
			assert_int_equal(l.releases, 1);
			assert_null(b.pixels);
			/* none large enough: malloc'd, as image_decode's */
			l.cap = n * 16 - 1;
			assert_int_equal(image_decode_into(buf, len, NULL, &mem, &b, NULL, err), 0);
			assert_true(b.pixels != (float *)(void *)l.mem && !b.release);
			assert_same_image(&a, &b, "not lent");
			image_free(&b);
			assert_int_equal(l.releases, 1);
			/* cut in the pixels: taken, then given back */
			l.cap = n * 16;
			l.allocs = l.releases = 0;
			assert_true(image_decode_into(buf, len - 1, NULL, &mem, &b, NULL, err) != 0);
			assert_int_equal(l.allocs, l.releases);
			assert_null(b.pixels);
			/* refused by the limits: never taken */
			l.allocs = l.releases = 0;
			struct image_limits lim = { .max_pixels = n - 1 };
			if (n > 1)
				assert_int_equal(image_decode_into(buf, len, &lim, &mem, &b, NULL, err),
						 IMAGE_E_TOO_LARGE);
			assert_int_equal(l.allocs, 0);
			free(l.mem);
			free(buf);
			image_free(&a);
			image_free(&img);
		}
}

/* Every exr_compression written and read back exactly (half samples that half holds, float32
 * bits), at odd sizes of one to several blocks (ZIP 16 lines, PIZ 32, the others 1); the same
 * bytes whether a frame's blocks are encoded on one thread or several, the same pixels however
 * many threads decode them, and a file cut short refused on any; and each written file read by
 * OpenEXR's own C++ library (exrmaketiled, which retiles it: 16x16 tiles, our tiled decode)
 * where it is installed. */
static void test_exr_compressions(void **state)
{
	(void)state;
	static const int esz[][2] = { { 1, 1 }, { 7, 3 }, { 33, 17 }, { 65, 70 }, { 130, 97 } };
	char dir[] = "/tmp/fftbloom-exr-XXXXXX";
	assert_non_null(mkdtemp(dir));
	int tool = access("/usr/bin/exrmaketiled", X_OK) == 0;
	if (!tool)
		print_message("exrmaketiled (Debian's openexr) not installed: OpenEXR's reading and "
			      "tiled inputs not checked\n");
	for (int c = 0; c < IMAGE_EXR_COMPRESSION_COUNT; c++)
		for (int bits = 16; bits <= 32; bits += 16)
			for (int ch = 1; ch <= 4; ch++)
				for (size_t s = 0; s < sizeof esz / sizeof esz[0]; s++) {
					struct image img, back;
					struct image_info info;
					struct image_encode_opts o = { .bits = bits, .exr_compression = c };
					unsigned lost;
					int w = esz[s][0], h = esz[s][1];
					if (bits == 16)
						half_image(&img, w, h, ch);
					else
						random_image(&img, w, h, ch, -1e6f, 1e6f);
					roundtrip(&img, IMAGE_FORMAT_EXR, &o, &back, &info, &lost);
					assert_int_equal(lost, 0);
					assert_int_equal(info.bits, bits);
					assert_int_equal(info.channels, ch);
					assert_same_image(&img, &back, image_exr_compression_names[c]);
					image_free(&back);
					if (tool && ch >= 3 && s == 3) { /* OpenEXR's reading, tiles */
						unsigned char *buf;
						size_t len;
						char err[IMAGE_ERR_LEN], in[64], out[64], cmd[200];
						assert_int_equal(image_encode(&img, IMAGE_FORMAT_EXR, &o, &buf,
									      &len, &lost, err), 0);
						snprintf(in, sizeof in, "%s/s.exr", dir);
						snprintf(out, sizeof out, "%s/t.exr", dir);
						FILE *f = fopen(in, "wb");
						assert_non_null(f);
						assert_int_equal(fwrite(buf, 1, len, f), len);
						assert_int_equal(fclose(f), 0);
						free(buf);
						snprintf(cmd, sizeof cmd, "exrmaketiled -t 16 16 -z %s %s %s "
							 ">/dev/null 2>&1", c == IMAGE_EXR_ZIPS ? "zip"
							 : image_exr_compression_names[c], in, out);
						if (system(cmd))
							fail_msg("OpenEXR cannot read our %s file: %s",
								 image_exr_compression_names[c], cmd);
						struct image_limits lim = { 0 };
						for (int t = 1; t <= 4; t += 3) {
							lim.threads = t;
							assert_int_equal(image_read_file(out, &lim, &back, &info,
											 err), 0);
							assert_same_image(&img, &back, "exr retiled by OpenEXR");
							image_free(&back);
						}
						unlink(in);
						unlink(out);
					}
					image_free(&img);
				}
	/* threads: a frame of 17 ZIP blocks (33 lines a chunk of ZIPS/RLE/none, 9 PIZ) */
	for (int c = 0; c < IMAGE_EXR_COMPRESSION_COUNT; c++)
		for (int bits = 16; bits <= 32; bits += 16) {
			struct image img;
			half_image(&img, 301, 263, 4);
			unsigned char *b1, *bn;
			size_t l1, ln;
			unsigned lost1 = 0, lostn = 0;
			char err[IMAGE_ERR_LEN];
			struct image_encode_opts o = { .bits = bits, .exr_compression = c, .threads = 1 };
			assert_int_equal(image_encode(&img, IMAGE_FORMAT_EXR, &o, &b1, &l1, &lost1, err), 0);
			o.threads = PAR_MAX_THREADS;
			assert_int_equal(image_encode(&img, IMAGE_FORMAT_EXR, &o, &bn, &ln, &lostn, err), 0);
			assert_int_equal(l1, ln);
			assert_memory_equal(b1, bn, l1);
			assert_int_equal(lost1, lostn);
			struct image a, b;
			struct image_info info;
			struct image_limits lim = { .threads = 1 };
			assert_int_equal(image_decode(b1, l1, &lim, &a, &info, err), 0);
			lim.threads = PAR_MAX_THREADS;
			assert_int_equal(image_decode(b1, l1, &lim, &b, &info, err), 0);
			assert_memory_equal(a.pixels, b.pixels,
					    (size_t)a.width * a.height * a.channels * sizeof(float));
			assert_same_image(&img, &b, "exr threads");
			/* cut short anywhere past the header: refused on any number of threads, each
			 * thread's chunk failing or not */
			for (int k = 1; k < 8; k++) {
				struct image t;
				size_t cut = l1 * (size_t)k / 8;
				int rc = image_decode(b1, cut, &lim, &t, &info, err);
				if (rc != IMAGE_E_TRUNCATED && rc != IMAGE_E_CORRUPT)
					fail_msg("exr %s cut to %zu of %zu bytes: %d (%s)",
						 image_exr_compression_names[c], cut, l1, rc, err);
				assert_null(t.pixels);
			}
			print_message("exr %s %d-bit 301x263 RGBA: %zu bytes, the same on 1 and %d "
				      "threads\n", image_exr_compression_names[c], bits, l1,
				      PAR_MAX_THREADS);
			free(b1);
			free(bn);
			image_free(&a);
			image_free(&b);
			image_free(&img);
		}
	assert_int_equal(rmdir(dir), 0);
}

/* Random valid RGBE pixels (largest mantissa >= 128, as every encoder writes them), with runs so
 * the run-length coder has something to do. */
static void random_rgbe(unsigned char *q, size_t n)
{
	for (size_t i = 0; i < n; i++, q += 4) {
		if (i && tu_uniform() < 0.3) {
			memcpy(q, q - 4, 4);
			continue;
		}
		int big = (int)(tu_uniform() * 3);
		for (int c = 0; c < 3; c++)
			q[c] = (unsigned char)(c == big ? 128 + tu_uniform() * 128 : tu_uniform() * 256);
		q[3] = (unsigned char)(100 + tu_uniform() * 60);
		if (tu_uniform() < 0.05)
			memset(q, 0, 4);
	}
}

static size_t hdr_file(unsigned char *f, const char *res, const unsigned char *rgbe, size_t n)
{
	size_t l = (size_t)sprintf((char *)f, "#?RADIANCE\n# made by hand\nFORMAT=32-bit_rle_rgbe\n\n%s\n", res);
	memcpy(f + l, rgbe, n * 4); /* flat */
	return l + n * 4;
}

/* HDR: decoding RGBE and encoding again gives the same RGBE bytes (flat and run-length widths),
 * and the decoded values are Radiance's (m + 0.5) * 2^(e - 136). */
static void test_hdr_roundtrip(void **state)
{
	(void)state;
	for (int s = 0; s < NSIZES; s++) {
		size_t w = (size_t)sizes[s][0] * 3, h = (size_t)sizes[s][1], n = w * h;
		unsigned char *rgbe = malloc(n * 4), *file = malloc(n * 4 + 256), *enc;
		size_t len, elen;
		struct image img, back;
		struct image_info info;
		char err[IMAGE_ERR_LEN], res[64];
		unsigned lost;
		random_rgbe(rgbe, n);
		snprintf(res, sizeof res, "-Y %zu +X %zu", h, w);
		len = hdr_file(file, res, rgbe, n);
		assert_int_equal(image_decode(file, len, NULL, &img, &info, err), 0);
		assert_int_equal(info.format, IMAGE_FORMAT_HDR);
		assert_int_equal(img.channels, 3);
		for (size_t i = 0; i < n; i++)
			for (int c = 0; c < 3; c++) {
				float want = rgbe[i * 4 + 3] ? ldexpf(rgbe[i * 4 + c] + 0.5f, rgbe[i * 4 + 3] - 136) : 0;
				assert_true(img.pixels[i * 3 + c] == want);
			}
		assert_int_equal(image_encode(&img, IMAGE_FORMAT_HDR, NULL, &enc, &elen, &lost, err), 0);
		assert_int_equal(lost, 0);
		if (w >= 8) { /* run-length coded: each scanline opens with 2 2 width */
			const unsigned char *d = (const unsigned char *)strstr((const char *)enc, " +X ");
			d = (const unsigned char *)strchr((const char *)d, '\n') + 1;
			assert_true(d[0] == 2 && d[1] == 2 && (d[2] << 8 | d[3]) == (int)w);
		}
		assert_int_equal(image_decode(enc, elen, NULL, &back, &info, err), 0);
		assert_same_image(&img, &back, "hdr");
		/* narrow images are written flat: the bytes after the header are the input's (the
		 * wider ones decode to the same floats, which for valid RGBE means the same bytes) */
		if (w < 8)
			assert_memory_equal(enc + elen - n * 4, rgbe, n * 4);
		free(enc);
		image_free(&img);
		image_free(&back);
		free(rgbe);
		free(file);
	}
	/* arbitrary floats: within RGBE's precision (8-bit mantissa of the largest component) */
	struct image img, back;
	struct image_info info;
	unsigned lost;
	random_image(&img, 40, 9, 3, 0, 1000);
	img.pixels[5] = -1;
	roundtrip(&img, IMAGE_FORMAT_HDR, NULL, &back, &info, &lost);
	assert_int_equal(lost, IMAGE_LOST_PRECISION | IMAGE_LOST_NEGATIVE);
	for (int i = 0; i < 40 * 9; i++) {
		float *a = &img.pixels[i * 3], *b = &back.pixels[i * 3];
		float mx = fmaxf(a[0], fmaxf(a[1], a[2]));
		for (int c = 0; c < 3; c++)
			if (!(fabsf(b[c] - fmaxf(a[c], 0)) <= mx / 128))
				fail_msg("hdr pixel %d.%d: %g -> %g", i, c, (double)a[c], (double)b[c]);
	}
	image_free(&img);
	image_free(&back);
	/* gray in, gray replicated out; alpha reported */
	random_image(&img, 3, 3, 2, 0, 1);
	roundtrip(&img, IMAGE_FORMAT_HDR, NULL, &back, &info, &lost);
	assert_true(lost & IMAGE_LOST_ALPHA);
	assert_true(back.pixels[0] == back.pixels[1] && back.pixels[1] == back.pixels[2]);
	image_free(&img);
	image_free(&back);
}

/* All eight resolution-line orientations, and old-style runs. */
static void test_hdr_layouts(void **state)
{
	(void)state;
	/* a 3 wide, 2 high image with pixel values 1..6 in reading order (top-left first) */
	static const struct {
		const char *res;
		int order[6]; /* file pixel k holds image pixel order[k] */
	} cases[] = {
		{ "-Y 2 +X 3", { 1, 2, 3, 4, 5, 6 } }, { "-Y 2 -X 3", { 3, 2, 1, 6, 5, 4 } },
		{ "+Y 2 +X 3", { 4, 5, 6, 1, 2, 3 } }, { "+Y 2 -X 3", { 6, 5, 4, 3, 2, 1 } },
		{ "+X 3 -Y 2", { 1, 4, 2, 5, 3, 6 } }, { "+X 3 +Y 2", { 4, 1, 5, 2, 6, 3 } },
		{ "-X 3 -Y 2", { 3, 6, 2, 5, 1, 4 } }, { "-X 3 +Y 2", { 6, 3, 5, 2, 4, 1 } },
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		unsigned char rgbe[24], file[256];
		for (int i = 0; i < 6; i++) {
			rgbe[i * 4] = rgbe[i * 4 + 1] = rgbe[i * 4 + 2] = (unsigned char)(128 + cases[k].order[i]);
			rgbe[i * 4 + 3] = 136;
		}
		size_t len = hdr_file(file, cases[k].res, rgbe, 6);
		struct image img;
		char err[IMAGE_ERR_LEN];
		assert_int_equal(image_decode(file, len, NULL, &img, NULL, err), 0);
		assert_int_equal(img.width, 3);
		assert_int_equal(img.height, 2);
		for (int i = 0; i < 6; i++)
			if (img.pixels[i * 3] != 128 + i + 1 + 0.5f)
				fail_msg("%s: pixel %d is %g", cases[k].res, i, (double)img.pixels[i * 3]);
		image_free(&img);
	}
	/* old-style run: pixel, then (1,1,1,3) repeats it 3 times, then (1,1,1,1) 1 << 8 more */
	unsigned char file[512];
	size_t l = (size_t)sprintf((char *)file, "#?RGBE\n\n-Y 1 +X 260\n");
	const unsigned char px[12] = { 200, 100, 50, 130, 1, 1, 1, 3, 1, 1, 1, 1 };
	memcpy(file + l, px, 12);
	struct image img;
	char err[IMAGE_ERR_LEN];
	assert_int_equal(image_decode(file, l + 12, NULL, &img, NULL, err), 0);
	for (int x = 0; x < 260; x++)
		assert_true(img.pixels[x * 3] == ldexpf(200.5f, -6) && img.pixels[x * 3 + 2] == ldexpf(50.5f, -6));
	image_free(&img);
	l = (size_t)sprintf((char *)file, "#?RADIANCE\nFORMAT=32-bit_rle_xyze\n\n-Y 1 +X 1\n");
	assert_int_equal(image_decode(file, l + 4, NULL, &img, NULL, err), IMAGE_E_UNSUPPORTED);
	assert_non_null(strstr(err, "xyze"));
}

/* Colour channels of `back` (RGB for a gray input: all three against the gray) against `img`, in
 * sRGB units: PSNR, and the largest alpha error against the 8-bit or deeper code of the input. */
static double psnr_colour(const struct image *img, const struct image *back)
{
	int ci = img->channels, cb = back->channels;
	int colour = ci == 2 || ci == 4 ? ci - 1 : ci, bcolour = cb == 2 || cb == 4 ? cb - 1 : cb;
	double se = 0;
	size_t n = (size_t)img->width * img->height;
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < bcolour; c++) {
			double d = linear_to_srgb_d(img->pixels[i * ci + (colour == 1 ? 0 : c)]) -
				   linear_to_srgb_d(back->pixels[i * cb + c]);
			se += d * d;
		}
	double mse = se / ((double)n * bcolour);
	return mse > 0 ? 10 * log10(1 / mse) : INFINITY;
}

static double alpha_err(const struct image *img, const struct image *back, unsigned maxc)
{
	double m = 0;
	size_t n = (size_t)img->width * img->height;
	for (size_t i = 0; i < n; i++) {
		double a = img->pixels[i * img->channels + img->channels - 1];
		double want = floor(a * maxc + 0.5) / maxc;
		double e = fabs(back->pixels[i * back->channels + back->channels - 1] - want);
		if (!(e <= m))
			m = e;
	}
	return m;
}

/* WebP lossy: every channel layout at several qualities and odd sizes; the colour within a PSNR
 * bound, gray comes back as RGB, alpha exact (coded losslessly), precision reported. */
static void test_webp_lossy(void **state)
{
	(void)state;
	static const struct {
		int ch, quality;
		double min_psnr;
	} cases[] = {
		{ 3, 0, 35 }, { 3, 90, 37 }, { 3, 50, 32 }, { 1, 90, 42 }, { 4, 90, 37 }, { 2, 79, 38 },
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
		for (int s = 0; s < NSIZES; s++) {
			struct image img, back;
			struct image_info info;
			struct image_encode_opts o = { .quality = cases[k].quality };
			unsigned lost;
			int ch = cases[k].ch, alpha = ch == 2 || ch == 4;
			smooth_image(&img, sizes[s][0] * 2, sizes[s][1] * 2, ch);
			roundtrip(&img, IMAGE_FORMAT_WEBP, &o, &back, &info, &lost);
			assert_int_equal(lost, IMAGE_LOST_PRECISION);
			assert_int_equal(back.channels, alpha ? 4 : 3);
			assert_int_equal(info.channels, back.channels);
			assert_int_equal(info.bits, 8);
			assert_int_equal(back.width, img.width);
			assert_int_equal(back.height, img.height);
			double p = psnr_colour(&img, &back);
			/* tiny or thin images are mostly edge: allow them less */
			int thin = img.width * img.height < 1024 || img.width < 8 || img.height < 8;
			double bound = cases[k].min_psnr - (thin ? 8 : 0);
			double ae = alpha ? alpha_err(&img, &back, 255) : 0;
			if (s == 5 || !(p >= bound) || !(ae <= 1e-6)) /* 128x66 */
				print_message("webp ch %d q %d %dx%d: PSNR %.1f dB (bound %.0f), alpha "
					      "error %.2g\n", ch, cases[k].quality, img.width,
					      img.height, p, bound, ae);
			assert_true(p >= bound);
			assert_true(ae <= 1e-6);
			image_free(&img);
			image_free(&back);
		}
}

/* WebP at quality 100 is lossless: 8-bit codes come back exactly (gray in all three channels),
 * nothing reported lost; other values come back as their nearest code. */
static void test_webp_lossless(void **state)
{
	(void)state;
	struct image_encode_opts o = { .quality = 100 };
	for (int ch = 1; ch <= 4; ch++)
		for (int s = 0; s < NSIZES; s++) {
			struct image img, back, want;
			struct image_info info;
			unsigned lost;
			coded_image(&img, sizes[s][0], sizes[s][1], ch, 8);
			roundtrip(&img, IMAGE_FORMAT_WEBP, &o, &back, &info, &lost);
			assert_int_equal(lost, 0);
			assert_int_equal(image_convert_channels(&img, back.channels, &want), 0);
			assert_same_image(&want, &back, "webp lossless");
			image_free(&want);
			image_free(&img);
			image_free(&back);
		}
	struct image img, back;
	struct image_info info;
	unsigned lost;
	random_image(&img, 29, 13, 4, -0.25f, 1.25f);
	roundtrip(&img, IMAGE_FORMAT_WEBP, &o, &back, &info, &lost);
	assert_int_equal(lost, IMAGE_LOST_NEGATIVE | IMAGE_LOST_RANGE | IMAGE_LOST_PRECISION);
	for (size_t i = 0; i < 29 * 13 * 4; i++) {
		float v = img.pixels[i] < 0 ? 0 : img.pixels[i] > 1 ? 1 : img.pixels[i];
		if (i % 4 == 3)
			assert_true(fabs(back.pixels[i] - v) <= 0.5 / 255 + 1e-6);
		else
			assert_int_equal(colour_linear_to_srgb8(back.pixels[i]),
					 colour_linear_to_srgb8(v));
	}
	image_free(&img);
	image_free(&back);
}

/* AVIF lossy: 8, 10 and 12 bits, 4:4:4 and 4:2:0, gray (4:0:0, read back as gray) and alpha
 * (coded losslessly: exact to the code); colour within a PSNR bound; precision reported. */
static void test_avif_lossy(void **state)
{
	(void)state;
	static const struct {
		int ch, quality, sub, bits;
		double min_psnr;
	} cases[] = {
		{ 3, 0, 444, 0, 38 },  { 3, 90, 420, 8, 41 }, { 3, 40, 444, 8, 34 },
		{ 1, 80, 444, 8, 43 }, { 4, 80, 420, 8, 38 }, { 2, 63, 444, 8, 40 },
		{ 3, 80, 444, 10, 42 }, { 4, 80, 420, 12, 40 },
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
		for (int s = 0; s < NSIZES; s++) {
			struct image img, back;
			struct image_info info;
			struct image_encode_opts o = { .quality = cases[k].quality,
						       .subsampling = cases[k].sub,
						       .bits = cases[k].bits };
			unsigned lost;
			int ch = cases[k].ch, alpha = ch == 2 || ch == 4;
			int bits = cases[k].bits ? cases[k].bits : 8;
			smooth_image(&img, sizes[s][0] * 2, sizes[s][1] * 2, ch);
			roundtrip(&img, IMAGE_FORMAT_AVIF, &o, &back, &info, &lost);
			assert_int_equal(lost, IMAGE_LOST_PRECISION);
			assert_int_equal(back.channels, ch);
			assert_int_equal(info.channels, ch);
			assert_int_equal(info.bits, bits);
			assert_int_equal(back.width, img.width);
			assert_int_equal(back.height, img.height);
			double p = psnr_colour(&img, &back);
			int thin = img.width * img.height < 1024 || img.width < 8 || img.height < 8;
			/* thin images: the codec's block edges, and at 4:2:0 one chroma sample for
			 * the whole of a 2x2 image (its PSNR is the random colours' spread, 32.8 dB
			 * seen), cost more than on a photograph */
			double bound = cases[k].min_psnr - (thin ? (cases[k].sub == 420 ? 12 : 8) : 0);
			/* deeper codes come back through 16-bit ones: a 16-bit step more */
			double ae = alpha ? alpha_err(&img, &back, (1u << bits) - 1) : 0;
			double atol = bits == 8 ? 1e-6 : 1.0 / 65535;
			if (s == 5 || !(p >= bound) || !(ae <= atol)) /* 128x66 */
				print_message("avif ch %d q %d %d %d-bit %dx%d: PSNR %.1f dB (bound "
					      "%.0f), alpha error %.2g\n", ch, cases[k].quality,
					      cases[k].sub, bits, img.width, img.height, p, bound, ae);
			assert_true(p >= bound);
			assert_true(ae <= atol);
			image_free(&img);
			image_free(&back);
		}
}

/* AVIF at quality 100 is lossless (4:4:4, identity matrix; gray as 4:0:0): 8-bit codes come
 * back exactly. 10 and 12 bits keep each sample to half their step (plus the 16-bit step
 * they are read back through), finer than 8 bits could. */
static void test_avif_lossless(void **state)
{
	(void)state;
	for (int ch = 1; ch <= 4; ch++)
		for (int s = 0; s < NSIZES; s++) {
			struct image img, back;
			struct image_info info;
			struct image_encode_opts o = { .quality = 100 };
			unsigned lost;
			coded_image(&img, sizes[s][0], sizes[s][1], ch, 8);
			/* libavif stores no alpha plane for an opaque image (it comes back with one
			 * channel less, nothing lost): one transparent sample keeps it, whatever the
			 * random codes (a 1x1 image was opaque one run in 256) */
			if (ch == 2 || ch == 4)
				img.pixels[ch - 1] = 0.0f;
			roundtrip(&img, IMAGE_FORMAT_AVIF, &o, &back, &info, &lost);
			assert_int_equal(lost, 0);
			assert_same_image(&img, &back, "avif lossless");
			image_free(&img);
			image_free(&back);
		}
	for (int bits = 10; bits <= 12; bits += 2) {
		struct image img, back;
		struct image_info info;
		struct image_encode_opts o = { .quality = 100, .bits = bits };
		unsigned lost;
		unsigned maxc = (1u << bits) - 1;
		random_image(&img, 37, 11, 4, 0, 1);
		roundtrip(&img, IMAGE_FORMAT_AVIF, &o, &back, &info, &lost);
		assert_int_equal(lost, IMAGE_LOST_PRECISION);
		assert_int_equal(info.bits, bits);
		double maxerr = 0;
		for (size_t i = 0; i < 37 * 11 * 4; i++) {
			double e = i % 4 == 3 ? fabs(back.pixels[i] - img.pixels[i])
					      : fabs(linear_to_srgb_d(back.pixels[i]) -
						     linear_to_srgb_d(img.pixels[i]));
			if (!(e <= maxerr))
				maxerr = e;
		}
		double tol = 0.5 / maxc + 1.0 / 65535;
		print_message("avif lossless %d-bit: max error %.3g (limit %.3g; 8-bit would be "
			      "%.3g)\n", bits, maxerr, tol, 0.5 / 255);
		assert_true(maxerr <= tol);
		image_free(&img);
		image_free(&back);
	}
}

/* What WebP and AVIF cannot keep is reported; bad settings are refused. */
static void test_webp_avif_lost_and_errors(void **state)
{
	(void)state;
	struct image img, back;
	struct image_info info;
	unsigned lost;
	char err[IMAGE_ERR_LEN];
	unsigned char *buf;
	size_t len;
	random_image(&img, 9, 8, 3, -0.5f, 2.0f);
	img.pixels[4] = NAN;
	roundtrip(&img, IMAGE_FORMAT_WEBP, NULL, &back, &info, &lost);
	assert_int_equal(lost, IMAGE_LOST_NEGATIVE | IMAGE_LOST_RANGE | IMAGE_LOST_PRECISION);
	image_free(&back);
	roundtrip(&img, IMAGE_FORMAT_AVIF, NULL, &back, &info, &lost);
	assert_int_equal(lost, IMAGE_LOST_NEGATIVE | IMAGE_LOST_RANGE | IMAGE_LOST_PRECISION);
	image_free(&back);
	static const struct {
		enum image_format f;
		struct image_encode_opts o;
		const char *what;
	} bad[] = {
		{ IMAGE_FORMAT_WEBP, { .quality = 101 }, "quality" },
		{ IMAGE_FORMAT_AVIF, { .quality = 101 }, "quality" },
		{ IMAGE_FORMAT_AVIF, { .bits = 9 }, "bits" },
		{ IMAGE_FORMAT_AVIF, { .bits = 16 }, "bits" },
		{ IMAGE_FORMAT_AVIF, { .speed = 11 }, "speed" },
		{ IMAGE_FORMAT_AVIF, { .subsampling = 422 }, "subsampling" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(image_encode(&img, bad[i].f, &bad[i].o, &buf, &len, NULL, err),
				 IMAGE_E_ARG);
		assert_null(buf);
		assert_non_null(strstr(err, bad[i].what));
	}
	image_free(&img);
	random_image(&img, 16384, 1, 1, 0, 1);
	assert_int_equal(image_encode(&img, IMAGE_FORMAT_WEBP, NULL, &buf, &len, NULL, err),
			 IMAGE_E_TOO_LARGE);
	assert_non_null(strstr(err, "16383"));
	image_free(&img);
}

static void test_file_io(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_image.XXXXXX", path[128], err[IMAGE_ERR_LEN];
	assert_non_null(mkdtemp(dir));
	struct image img, back;
	struct image_info info;
	random_image(&img, 13, 7, 3, -2, 2);
	snprintf(path, sizeof path, "%s/a.pfm", dir);
	assert_int_equal(image_write_file(path, &img, NULL, NULL, err), 0);
	assert_int_equal(image_read_file(path, NULL, &back, &info, err), 0);
	assert_same_image(&img, &back, "pfm file");
	image_free(&back);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof path, "%s/a.gif", dir);
	assert_int_equal(image_write_file(path, &img, NULL, NULL, err), IMAGE_E_UNSUPPORTED);
	assert_non_null(strstr(err, "extension"));
	snprintf(path, sizeof path, "%s/missing.pfm", dir);
	assert_int_equal(image_read_file(path, NULL, &back, &info, err), IMAGE_E_IO);
	snprintf(path, sizeof path, "%s/no/such/dir.pfm", dir);
	assert_int_equal(image_write_file(path, &img, NULL, NULL, err), IMAGE_E_IO);
	image_free(&img);
	assert_int_equal(rmdir(dir), 0);
}

/* A smooth 8-bit-coded image, cheap at tens of Mpixel: a separable sum of two sines a channel as
 * sRGB codes (alpha as code / 255). */
static void smooth_coded_image(struct image *img, int w, int h, int ch)
{
	assert_int_equal(image_alloc(img, w, h, ch), 0);
	const float *t8 = colour_srgb8_table();
	float *row = malloc(sizeof(float) * (size_t)w * 4), *col = malloc(sizeof(float) * (size_t)h * 4);
	assert_non_null(row);
	assert_non_null(col);
	for (int c = 0; c < ch; c++) {
		double fx = 0.002 + tu_uniform() * 0.01, fy = 0.002 + tu_uniform() * 0.01;
		double px = tu_uniform() * 6.28, py = tu_uniform() * 6.28;
		for (int x = 0; x < w; x++)
			row[(size_t)x * 4 + c] = (float)(0.2 * sin(fx * x + px));
		for (int y = 0; y < h; y++)
			col[(size_t)y * 4 + c] = (float)(0.5 + 0.2 * sin(fy * y + py));
	}
	int alpha = ch == 2 || ch == 4;
	for (int y = 0; y < h; y++) {
		float *px = img->pixels + (size_t)y * w * ch;
		for (int x = 0; x < w; x++, px += ch)
			for (int c = 0; c < ch; c++) {
				int code = (int)((row[(size_t)x * 4 + c] + col[(size_t)y * 4 + c]) * 255 + 0.5f);
				px[c] = alpha && c == ch - 1 ? (float)code / 255.0f : t8[code];
			}
	}
	free(row);
	free(col);
}

/* Largest difference in 8-bit sRGB codes between two images of the same shape over the rows
 * every 7th and those beside a grid seam (multiples of 2048 and 4096 give or take one, where
 * cells of up to 4096 meet), and the PSNR over them. */
static void code_error(const struct image *a, const struct image *b, int *maxd, double *psnr)
{
	const struct colour_srgb8_lut *lut = colour_srgb8_lut();
	int ch = a->channels, alpha = ch == 2 || ch == 4;
	double se = 0;
	size_t n = 0;
	*maxd = 0;
	for (int y = 0; y < a->height; y++) {
		int seam = 0;
		for (int d = -1; d <= 1; d++)
			for (int k = 2; k <= 5; k++)
				seam |= (y + d) > 0 && (y + d) % (a->height / k) == 0;
		if (y % 7 && !seam && y % 2048 > 1 && y % 2048 < 2047)
			continue;
		const float *pa = a->pixels + (size_t)y * a->width * ch;
		const float *pb = b->pixels + (size_t)y * b->width * ch;
		for (size_t i = 0; i < (size_t)a->width * ch; i++) {
			int last = alpha && (int)(i % ch) == ch - 1;
			int ca = last ? (int)(pa[i] * 255 + 0.5f) : colour_srgb8_fast(lut, pa[i]);
			int cb = last ? (int)(pb[i] * 255 + 0.5f) : colour_srgb8_fast(lut, pb[i]);
			int d = abs(ca - cb);
			if (d > *maxd)
				*maxd = d;
			se += (double)d * d;
			n++;
		}
	}
	double mse = se / ((double)n * 255 * 255);
	*psnr = mse > 0 ? 10 * log10(1 / mse) : INFINITY;
}

/* AVIF past AV1 level 6's largest picture (8192x4352 samples): written as a grid of cells that
 * libavif's own decoder (dav1d) and libheif read back whole (issue 35, item 6: 5972x5972 came
 * out as one frame neither could decode). An even 4:2:0 image in equal cells (3 x 2), and one
 * with two prime sides, whose cells cannot divide it (libavif pads the right and
 * bottom ones) and whose 4:2:0 is made 4:4:4 (MIAF's grids place 4:2:0 chroma at even sizes
 * only); each within 8 codes of 8-bit sRGB anywhere and 40 dB over the rows checked. */
static void test_avif_grid(void **state)
{
	(void)state;
	static const struct {
		int w, h, ch, sub;
		int heif; /* libheif's decode too (it writes a 36 Mpixel PNG: 10 s) */
	} cases[] = { { 8194, 4352, 3, 420, 0 }, { 5981, 5987, 3, 420, 1 } };
	char dir[] = "/tmp/fftbloom-avif-grid-XXXXXX";
	assert_non_null(mkdtemp(dir));
	int heif = access("/usr/bin/heif-convert", X_OK) == 0;
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		struct image img, back;
		struct image_info info;
		struct image_encode_opts o = { .quality = 80, .subsampling = cases[k].sub, .speed = 10 };
		unsigned char *buf;
		size_t len;
		unsigned lost = 0;
		char err[IMAGE_ERR_LEN];
		smooth_coded_image(&img, cases[k].w, cases[k].h, cases[k].ch);
		int rc = image_encode(&img, IMAGE_FORMAT_AVIF, &o, &buf, &len, &lost, err);
		if (rc)
			fail_msg("encode %dx%d: %s", cases[k].w, cases[k].h, err);
		/* the primary item is a grid: its type is in the item info box near the start */
		assert_non_null(memmem(buf, len < 4096 ? len : 4096, "grid", 4));
		rc = image_decode(buf, len, NULL, &back, &info, err);
		if (rc)
			fail_msg("decode %dx%d: %s", cases[k].w, cases[k].h, err);
		assert_int_equal(back.width, img.width);
		assert_int_equal(back.height, img.height);
		assert_int_equal(back.channels, img.channels);
		int maxd;
		double p;
		code_error(&img, &back, &maxd, &p);
		print_message("avif grid %dx%d ch %d %d: %zu bytes, max %d codes, PSNR %.1f dB (limits "
			      "8, 40)\n", img.width, img.height, img.channels, cases[k].sub, len, maxd, p);
		assert_true(maxd <= 8);
		assert_true(p >= 40);
		image_free(&back);
		if (heif && cases[k].heif) {
			char in[64], out[64], cmd[200];
			snprintf(in, sizeof in, "%s/g.avif", dir);
			snprintf(out, sizeof out, "%s/g.png", dir);
			FILE *f = fopen(in, "wb");
			assert_non_null(f);
			assert_int_equal(fwrite(buf, 1, len, f), len);
			assert_int_equal(fclose(f), 0);
			snprintf(cmd, sizeof cmd, "heif-convert %s %s >/dev/null 2>&1", in, out);
			assert_int_equal(system(cmd), 0);
			struct image_limits lim = { 0 };
			assert_int_equal(image_read_file(out, &lim, &back, &info, err), 0);
			assert_int_equal(back.width, img.width);
			assert_int_equal(back.height, img.height);
			code_error(&img, &back, &maxd, &p);
			print_message("  libheif (heif-convert to PNG): max %d codes, PSNR %.1f dB\n", maxd,
				      p);
			assert_true(maxd <= 8);
			assert_true(p >= 40);
			image_free(&back);
			unlink(in);
			unlink(out);
		}
		free(buf);
		image_free(&img);
	}
	assert_int_equal(rmdir(dir), 0);
	if (!heif)
		skip(); /* dav1d's decode passed; libheif's could not be run (libheif-examples) */
}

static int setup(void **state)
{
	(void)state;
	tu_seed_from_clock();
	return 0;
}

/* Clipping within IMAGE_CLIP_TOL of [0, 1] (a convolution's rounding) is no loss; past it is,
 * in every integer format. */
static void test_clip_tolerance(void **state)
{
	(void)state;
	static const enum image_format fmts[] = {IMAGE_FORMAT_PNG, IMAGE_FORMAT_JPEG,
	                                         IMAGE_FORMAT_WEBP, IMAGE_FORMAT_AVIF};
	for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++) {
		struct image img, back;
		struct image_info info;
		unsigned lost;
		random_image(&img, 16, 16, 3, 0.0f, 1.0f);
		img.pixels[0] = 1 + IMAGE_CLIP_TOL * 0.9f;
		img.pixels[1] = -IMAGE_CLIP_TOL * 0.9f;
		roundtrip(&img, fmts[f], NULL, &back, &info, &lost);
		printf("%s within the tolerance: lost %u\n", image_format_name(fmts[f]), lost);
		assert_int_equal(lost & (IMAGE_LOST_RANGE | IMAGE_LOST_NEGATIVE), 0);
		image_free(&back);
		img.pixels[0] = 1 + IMAGE_CLIP_TOL * 1.5f;
		img.pixels[1] = -IMAGE_CLIP_TOL * 1.5f;
		roundtrip(&img, fmts[f], NULL, &back, &info, &lost);
		assert_int_equal(lost & (IMAGE_LOST_RANGE | IMAGE_LOST_NEGATIVE),
		                 IMAGE_LOST_RANGE | IMAGE_LOST_NEGATIVE);
		image_free(&back);
		image_free(&img);
	}
}

int main(void)
{
	tu_test_filter();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_sniff_and_names),
		cmocka_unit_test(test_convert_channels),
		cmocka_unit_test(test_pfm_roundtrip),
		cmocka_unit_test(test_pfm_layout),
		cmocka_unit_test(test_png_exact),
		cmocka_unit_test(test_clip_tolerance),
		cmocka_unit_test(test_png_quantise),
		cmocka_unit_test(test_png_dither),
		cmocka_unit_test(test_jpeg_roundtrip),
		cmocka_unit_test(test_jpeg_yuv),
		cmocka_unit_test(test_jpeg_yuv_errors),
		cmocka_unit_test(test_jpeg_yuv_into),
		cmocka_unit_test(test_jpeg_coefs),
		cmocka_unit_test(test_jpeg_coefs_errors),
		cmocka_unit_test(test_jpeg_coefs_progressive),
		cmocka_unit_test(test_jpeg_late_warning),
		cmocka_unit_test(test_jpeg_dct),
		cmocka_unit_test(test_jpeg_coded),
		cmocka_unit_test(test_exr_roundtrip),
		cmocka_unit_test(test_exr_compressions),
		cmocka_unit_test(test_float_into),
		cmocka_unit_test(test_hdr_roundtrip),
		cmocka_unit_test(test_hdr_layouts),
		cmocka_unit_test(test_webp_lossy),
		cmocka_unit_test(test_webp_lossless),
		cmocka_unit_test(test_avif_lossy),
		cmocka_unit_test(test_avif_lossless),
		cmocka_unit_test(test_webp_avif_lost_and_errors),
		cmocka_unit_test(test_avif_grid),
		cmocka_unit_test(test_file_io),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
