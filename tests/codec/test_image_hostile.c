/* Hostile input for every image decoder: truncation at many cut points, flipped bits, absurd and
 * zero sizes in otherwise valid headers, and limits. Each must end in a clean error code with a
 * message naming the format, the output left empty, and (under `make sanitize`) no memory error
 * or leak. Samples come from our encoders and from the fuzz seed corpus, which holds files
 * written by other tools (tiled EXR, CMYK JPEG, palette PNG, ...). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "codec/image.h"
#include "tests/testutil.h"

struct sample {
	char name[96];
	enum image_format f;
	unsigned char *buf;
	size_t len;
};

static struct sample samples[96];
static int nsamples;

static void add_encoded(const char *name, enum image_format f, int w, int h, int ch,
			struct image_encode_opts o)
{
	struct image img;
	char err[IMAGE_ERR_LEN];
	struct sample *s = &samples[nsamples++];
	assert_int_equal(image_alloc(&img, w, h, ch), 0);
	tu_fill_f32(img.pixels, (size_t)w * h * ch, 0, 1);
	for (int i = 0; i < w * h * ch / 3; i++) /* some flat runs for the run-length coders */
		img.pixels[i] = img.pixels[0];
	snprintf(s->name, sizeof s->name, "%s", name);
	s->f = f;
	if (image_encode(&img, f, &o, &s->buf, &s->len, NULL, err))
		fail_msg("%s: %s", name, err);
	image_free(&img);
}

static void add_corpus(const char *dir, enum image_format f)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d)) && nsamples < (int)(sizeof samples / sizeof samples[0])) {
		char path[512];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		FILE *fp = fopen(path, "rb");
		if (!fp)
			continue;
		struct sample *s = &samples[nsamples];
		s->buf = malloc(1 << 16);
		s->len = fread(s->buf, 1, 1 << 16, fp);
		fclose(fp);
		struct image img;
		char err[IMAGE_ERR_LEN];
		/* only seeds that decode are useful here (the corpus may hold broken ones) */
		if (image_sniff(s->buf, s->len) != f || image_decode(s->buf, s->len, NULL, &img, NULL, err)) {
			free(s->buf);
			continue;
		}
		image_free(&img);
		snprintf(s->name, sizeof s->name, "corpus %.80s", e->d_name);
		s->f = f;
		nsamples++;
	}
	closedir(d);
}

static int setup(void **state)
{
	(void)state;
	tu_seed_from_clock();
	struct image_encode_opts def = { .quality = 0 }, png16 = { .bits = 16 },
				 j420 = { .quality = 75, .subsampling = 420 }, exr32 = { .bits = 32 },
				 lossless = { .quality = 100 },
				 avif12 = { .quality = 50, .subsampling = 420, .bits = 12 };
	add_encoded("png8 rgba", IMAGE_FORMAT_PNG, 23, 11, 4, def);
	add_encoded("png16 gray", IMAGE_FORMAT_PNG, 9, 17, 1, png16);
	add_encoded("jpeg rgb 444", IMAGE_FORMAT_JPEG, 33, 20, 3, def);
	add_encoded("jpeg gray 420", IMAGE_FORMAT_JPEG, 17, 9, 1, j420);
	add_encoded("exr half rgba", IMAGE_FORMAT_EXR, 21, 37, 4, def);
	add_encoded("exr float y", IMAGE_FORMAT_EXR, 13, 5, 1, exr32);
	add_encoded("hdr rle", IMAGE_FORMAT_HDR, 40, 6, 3, def);
	add_encoded("hdr flat", IMAGE_FORMAT_HDR, 5, 7, 3, def);
	add_encoded("pfm rgb", IMAGE_FORMAT_PFM, 7, 5, 3, def);
	add_encoded("pfm gray", IMAGE_FORMAT_PFM, 3, 9, 1, def);
	add_encoded("webp lossy rgb", IMAGE_FORMAT_WEBP, 29, 13, 3, def);
	add_encoded("webp lossy rgba", IMAGE_FORMAT_WEBP, 19, 21, 4, def);
	add_encoded("webp lossless rgba", IMAGE_FORMAT_WEBP, 23, 9, 4, lossless);
	add_encoded("avif rgb 444", IMAGE_FORMAT_AVIF, 27, 14, 3, def);
	add_encoded("avif rgba 420 12-bit", IMAGE_FORMAT_AVIF, 13, 17, 4, avif12);
	add_encoded("avif gray lossless", IMAGE_FORMAT_AVIF, 11, 6, 1, lossless);
	add_corpus("tests/fuzz/corpus/png", IMAGE_FORMAT_PNG);
	add_corpus("tests/fuzz/corpus/jpeg", IMAGE_FORMAT_JPEG);
	add_corpus("tests/fuzz/corpus/exr", IMAGE_FORMAT_EXR);
	add_corpus("tests/fuzz/corpus/hdr", IMAGE_FORMAT_HDR);
	add_corpus("tests/fuzz/corpus/pfm", IMAGE_FORMAT_PFM);
	add_corpus("tests/fuzz/corpus/webp", IMAGE_FORMAT_WEBP);
	add_corpus("tests/fuzz/corpus/avif", IMAGE_FORMAT_AVIF);
	print_message("%d samples\n", nsamples);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < nsamples; i++)
		free(samples[i].buf);
	return 0;
}

/* A failed decode: negative code, empty output, a message naming the format (or saying the
 * bytes are no image at all). */
static void check_failure(const struct sample *s, int rc, const struct image *img, const char *err,
			  const char *what)
{
	if (!(rc < 0 && rc >= IMAGE_E_EMPTY))
		fail_msg("%s %s: code %d", s->name, what, rc);
	assert_null(img->pixels);
	assert_int_equal(img->width, 0);
	char prefix[16];
	snprintf(prefix, sizeof prefix, "%s: ", image_format_name(s->f));
	if (strncmp(err, prefix, strlen(prefix)) && strncmp(err, "image: ", 7))
		fail_msg("%s %s: message '%s' does not name the format", s->name, what, err);
}

/* Offset just past the last IDAT chunk's data in a PNG. */
static size_t png_data_end(const unsigned char *b, size_t len)
{
	size_t p = 8, end = len;
	while (p + 12 <= len) {
		size_t n = (size_t)b[p] << 24 | (size_t)b[p + 1] << 16 | (size_t)b[p + 2] << 8 | b[p + 3];
		if (!memcmp(b + p + 4, "IDAT", 4))
			end = p + 8 + n;
		p += 12 + n;
	}
	return end;
}

static void test_truncated(void **state)
{
	(void)state;
	long checked = 0;
	for (int k = 0; k < nsamples; k++) {
		const struct sample *s = &samples[k];
		struct image full, img;
		char err[IMAGE_ERR_LEN];
		assert_int_equal(image_decode(s->buf, s->len, NULL, &full, NULL, err), 0);
		size_t step = s->len <= 2000 ? 1 : s->len / 1000;
		for (size_t cut = 0; cut < s->len; cut += cut < 300 ? 1 : step) {
			/* a copy of exactly cut bytes, so reading past it is a sanitizer error */
			unsigned char *c = malloc(cut ? cut : 1);
			memcpy(c, s->buf, cut);
			err[0] = 0;
			int rc = image_decode(c, cut, NULL, &img, NULL, err);
			if (rc == 0) {
				/* only a PNG cut after its image data (in the last IDAT's CRC, once
				 * the zlib stream with its own checksum is complete, or in ancillary
				 * chunks after it) may still give the image, and then all of it */
				/* and a mip-mapped EXR cut in the smaller levels, which are not read */
				if (!(s->f == IMAGE_FORMAT_PNG && cut >= png_data_end(s->buf, s->len)) &&
				    !(s->f == IMAGE_FORMAT_EXR && strstr(s->name, "mipmap")))
					fail_msg("%s cut at %zu of %zu decoded", s->name, cut, s->len);
				assert_memory_equal(img.pixels, full.pixels,
						    (size_t)full.width * full.height * full.channels * 4);
				image_free(&img);
			} else {
				char what[32];
				snprintf(what, sizeof what, "cut %zu", cut);
				check_failure(s, rc, &img, err, what);
			}
			free(c);
			checked++;
		}
		image_free(&full);
	}
	print_message("%ld truncated inputs, all refused cleanly\n", checked);
}

static void test_flipped(void **state)
{
	(void)state;
	long ok = 0, refused = 0;
	for (int k = 0; k < nsamples; k++) {
		const struct sample *s = &samples[k];
		unsigned char *c = malloc(s->len);
		for (int t = 0; t < 300; t++) {
			memcpy(c, s->buf, s->len);
			int nflips = 1 + (int)(tu_uniform() * 3);
			for (int f = 0; f < nflips; f++) {
				size_t span = tu_uniform() < 0.5 && s->len > 256 ? 256 : s->len;
				size_t pos = (size_t)(tu_uniform() * span);
				c[pos] ^= (unsigned char)(1u << (int)(tu_uniform() * 8));
			}
			struct image img;
			char err[IMAGE_ERR_LEN] = "";
			int rc = image_decode(c, s->len, NULL, &img, NULL, err);
			if (rc == 0) {
				assert_non_null(img.pixels);
				assert_true(img.width > 0 && img.height > 0 && img.width <= 32768 &&
					    img.height <= 32768);
				assert_true(img.channels >= 1 && img.channels <= 4);
				image_free(&img);
				ok++;
			} else if (image_sniff(c, s->len) == s->f) {
				check_failure(s, rc, &img, err, "flipped");
				refused++;
			} else {
				assert_true(rc < 0);
				assert_null(img.pixels);
				refused++;
			}
		}
		free(c);
	}
	print_message("flipped bits: %ld decoded anyway, %ld refused cleanly\n", ok, refused);
}

/* Rewrites a PNG's IHDR size and fixes its CRC. */
static void png_set_size(unsigned char *b, uint32_t w, uint32_t h)
{
	for (int i = 0; i < 4; i++) {
		b[16 + i] = (unsigned char)(w >> (24 - 8 * i));
		b[20 + i] = (unsigned char)(h >> (24 - 8 * i));
	}
	uint32_t crc = (uint32_t)crc32(0, b + 12, 17);
	for (int i = 0; i < 4; i++)
		b[29 + i] = (unsigned char)(crc >> (24 - 8 * i));
}

/* Rewrites a JPEG's frame header size (the first SOFn). */
static void jpeg_set_size(unsigned char *b, size_t len, unsigned w, unsigned h)
{
	for (size_t p = 2; p + 9 < len; p++)
		if (b[p] == 0xff && b[p + 1] >= 0xc0 && b[p + 1] <= 0xc2) {
			b[p + 5] = (unsigned char)(h >> 8);
			b[p + 6] = (unsigned char)h;
			b[p + 7] = (unsigned char)(w >> 8);
			b[p + 8] = (unsigned char)w;
			return;
		}
	fail_msg("no SOF marker");
}

/* Rewrites an EXR's dataWindow as (0, 0) - (w - 1, h - 1). */
static void exr_set_size(unsigned char *b, size_t len, int32_t w, int32_t h)
{
	unsigned char *p = memmem(b, len, "dataWindow\0box2i\0", 17);
	assert_non_null(p);
	int32_t box[4] = { 0, 0, w - 1, h - 1 }; /* little-endian host, as the file */
	memcpy(p + 17 + 4, box, 16);
}

static const struct sample *find(const char *name)
{
	for (int k = 0; k < nsamples; k++)
		if (!strcmp(samples[k].name, name))
			return &samples[k];
	fail_msg("no sample %s", name);
	return NULL;
}

static int decode_copy(const struct sample *s, void (*edit)(unsigned char *, size_t, long, long),
		       long w, long h, char *err)
{
	unsigned char *c = malloc(s->len);
	memcpy(c, s->buf, s->len);
	edit(c, s->len, w, h);
	struct image img;
	int rc = image_decode(c, s->len, NULL, &img, NULL, err);
	if (rc)
		check_failure(s, rc, &img, err, "resized");
	image_free(&img);
	free(c);
	return rc;
}

static void edit_png(unsigned char *b, size_t len, long w, long h)
{
	(void)len;
	png_set_size(b, (uint32_t)w, (uint32_t)h);
}
static void edit_jpeg(unsigned char *b, size_t len, long w, long h)
{
	jpeg_set_size(b, len, (unsigned)w, (unsigned)h);
}
static void edit_exr(unsigned char *b, size_t len, long w, long h)
{
	exr_set_size(b, len, (int32_t)w, (int32_t)h);
}
static void webp_set_size(unsigned char *b, size_t len, long w, long h);
static void avif_set_size(unsigned char *b, size_t len, long w, long h);

struct admit_log {
	int calls;
	unsigned long long w, h;
	int refuse;
};

static int admit(void *ctx, unsigned long long w, unsigned long long h, char *err)
{
	struct admit_log *a = ctx;
	a->calls++;
	a->w = w, a->h = h;
	if (a->refuse) {
		snprintf(err, IMAGE_ERR_LEN, "budget spent");
		return IMAGE_E_BUSY;
	}
	return 0;
}

/* Rewrites a WebP's size: the VP8X canvas (24-bit width - 1, height - 1) when there is one,
 * else the VP8 key frame header's 14-bit width and height. */
static void webp_set_size(unsigned char *b, size_t len, long w, long h)
{
	assert_true(len > 30);
	if (!memcmp(b + 12, "VP8X", 4)) {
		unsigned long w1 = (unsigned long)w - 1, h1 = (unsigned long)h - 1;
		for (int i = 0; i < 3; i++) {
			b[24 + i] = (unsigned char)(w1 >> (8 * i));
			b[27 + i] = (unsigned char)(h1 >> (8 * i));
		}
		return;
	}
	assert_memory_equal(b + 12, "VP8 ", 4);
	assert_memory_equal(b + 23, "\x9d\x01\x2a", 3);
	b[26] = (unsigned char)w;
	b[27] = (unsigned char)((w >> 8) & 0x3f);
	b[28] = (unsigned char)h;
	b[29] = (unsigned char)((h >> 8) & 0x3f);
}

/* Rewrites an AVIF's ispe box (the size the container states). */
static void avif_set_size(unsigned char *b, size_t len, long w, long h)
{
	unsigned char *p = memmem(b, len, "ispe", 4);
	assert_non_null(p);
	for (int i = 0; i < 4; i++) {
		p[8 + i] = (unsigned char)((unsigned long)w >> (24 - 8 * i));
		p[12 + i] = (unsigned char)((unsigned long)h >> (24 - 8 * i));
	}
}

static void test_absurd_sizes(void **state)
{
	(void)state;
	char err[IMAGE_ERR_LEN];
	struct image img;
	const struct sample *png = find("png8 rgba"), *jpg = find("jpeg rgb 444"),
			    *exr = find("exr half rgba");
	assert_int_equal(decode_copy(png, edit_png, 100000, 100000, err), IMAGE_E_TOO_LARGE);
	print_message("png 100000x100000: %s\n", err);
	assert_int_equal(decode_copy(png, edit_png, 20000, 20000, err), IMAGE_E_TOO_LARGE);
	assert_int_equal(decode_copy(png, edit_png, 0, 11, err), IMAGE_E_EMPTY);
	assert_int_equal(decode_copy(png, edit_png, 23, 0, err), IMAGE_E_EMPTY);
	assert_int_equal(decode_copy(jpg, edit_jpeg, 65000, 65000, err), IMAGE_E_TOO_LARGE);
	print_message("jpeg 65000x65000: %s\n", err);
	assert_int_equal(decode_copy(jpg, edit_jpeg, 40000, 10, err), IMAGE_E_TOO_LARGE);
	int rc = decode_copy(jpg, edit_jpeg, 0, 20, err);
	assert_true(rc == IMAGE_E_EMPTY || rc == IMAGE_E_CORRUPT);
	print_message("jpeg width 0: %s\n", err);
	assert_int_equal(decode_copy(exr, edit_exr, 100000, 100000, err), IMAGE_E_TOO_LARGE);
	print_message("exr 100000x100000: %s\n", err);
	assert_int_equal(decode_copy(exr, edit_exr, 20000, 20000, err), IMAGE_E_TOO_LARGE);
	rc = decode_copy(exr, edit_exr, 0, 37, err);
	assert_true(rc == IMAGE_E_EMPTY || rc == IMAGE_E_CORRUPT);
	print_message("exr width 0: %s\n", err);
	/* WebP states at most 16383 a side (VP8) or 2^24 (VP8X canvas) */
	const struct sample *wl = find("webp lossy rgb"), *wa = find("webp lossy rgba"),
			    *av = find("avif rgb 444");
	assert_int_equal(decode_copy(wl, webp_set_size, 16383, 16383, err), IMAGE_E_TOO_LARGE);
	print_message("webp 16383x16383: %s\n", err);
	assert_true(decode_copy(wa, webp_set_size, 1 << 24, 1 << 24, err) < 0);
	print_message("webp (VP8X) 16777216x16777216: %s\n", err);
	rc = decode_copy(wl, webp_set_size, 0, 13, err);
	assert_true(rc == IMAGE_E_EMPTY || rc == IMAGE_E_CORRUPT);
	/* a canvas larger than its frame, within the limits */
	rc = decode_copy(wa, webp_set_size, 2000, 2000, err);
	assert_true(rc < 0);
	print_message("webp grown canvas: %s\n", err);
	assert_int_equal(decode_copy(av, avif_set_size, 100000, 100000, err), IMAGE_E_TOO_LARGE);
	print_message("avif 100000x100000: %s\n", err);
	assert_int_equal(decode_copy(av, avif_set_size, 20000, 20000, err), IMAGE_E_TOO_LARGE);
	print_message("avif 20000x20000: %s\n", err);
	rc = decode_copy(av, avif_set_size, 0, 14, err);
	assert_true(rc == IMAGE_E_EMPTY || rc == IMAGE_E_CORRUPT);
	print_message("avif width 0: %s\n", err);
	/* an AV1 frame far larger than the container's ispe: the limits reach the AV1 decoder,
	 * which refuses the frame before allocating it (a 1200x1000 flat frame is a few hundred
	 * bytes) */
	{
		struct image big;
		unsigned char *enc;
		size_t elen;
		struct image_encode_opts q10 = { .quality = 10 };
		assert_int_equal(image_alloc(&big, 1200, 1000, 1), 0);
		for (size_t i = 0; i < 1200 * 1000; i++)
			big.pixels[i] = 0.25f;
		assert_int_equal(image_encode(&big, IMAGE_FORMAT_AVIF, &q10, &enc, &elen, NULL, err), 0);
		image_free(&big);
		avif_set_size(enc, elen, 16, 12);
		struct admit_log a = {0};
		struct image_limits lim = { .max_pixels = 100000, .admit = admit, .admit_ctx = &a };
		rc = image_decode(enc, elen, &lim, &img, NULL, err);
		print_message("avif 1200x1000 frame in a 16x12 ispe (%zu bytes), limit 100000 pixels: "
			      "%s\n", elen, err);
		assert_true(rc < 0);
		assert_null(img.pixels);
		assert_int_equal(a.calls, 1);
		assert_true(a.w == 16 && a.h == 12);
		free(enc);
	}
	/* a data window that fits the limits but not the file's chunks */
	rc = decode_copy(exr, edit_exr, 2000, 2000, err);
	assert_true(rc < 0);
	print_message("exr grown window: %s\n", err);

	static const char *text[][2] = {
		{ "PF\n100000 100000\n-1.0\n", "exceeds" }, { "Pf\n0 5\n-1.0\n", "zero" },
		{ "Pf\n5 0\n-1.0\n", "zero" },
		{ "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 100000 +X 100000\n", "exceeds" },
		{ "#?RADIANCE\n\n-Y 0 +X 10\n", "zero" },
		{ "#?RADIANCE\n\n+X 99999999999 -Y 2\n", "resolution" },
		{ "PF\n99999999999999999999 1\n-1.0\n", "width" },
		{ "PF\n3 3\n0\n", "scale" }, { "PF\n3 3\nnan\n", "scale" },
	};
	for (size_t i = 0; i < sizeof text / sizeof text[0]; i++) {
		char buf[256];
		size_t l = strlen(text[i][0]);
		memcpy(buf, text[i][0], l);
		memset(buf + l, 0x40, 64); /* a little pixel data */
		rc = image_decode(buf, l + 64, NULL, &img, NULL, err);
		assert_true(rc < 0);
		assert_null(img.pixels);
		if (!strstr(err, text[i][1]))
			fail_msg("'%s': message '%s' lacks '%s'", text[i][0], err, text[i][1]);
		if (!strcmp(text[i][1], "exceeds"))
			assert_int_equal(rc, IMAGE_E_TOO_LARGE);
		if (!strcmp(text[i][1], "zero"))
			assert_int_equal(rc, IMAGE_E_EMPTY);
	}
}

/* Limits from the caller: one pixel too many on either axis or in total is refused before any
 * pixel is decoded; exactly at the limit is accepted. */
static void test_limits(void **state)
{
	(void)state;
	for (int k = 0; k < nsamples; k++) {
		const struct sample *s = &samples[k];
		struct image img;
		struct image_info info;
		char err[IMAGE_ERR_LEN];
		assert_int_equal(image_decode(s->buf, s->len, NULL, &img, &info, err), 0);
		unsigned w = (unsigned)img.width, h = (unsigned)img.height;
		image_free(&img);
		struct image_limits exact = { .max_width = w, .max_height = h,
					      .max_pixels = (unsigned long long)w * h };
		assert_int_equal(image_decode(s->buf, s->len, &exact, &img, NULL, err), 0);
		image_free(&img);
		struct image_limits lw = { .max_width = w - 1 ? w - 1 : 0, .max_height = h },
				    lh = { .max_width = w, .max_height = h - 1 ? h - 1 : 0 },
				    lp = { .max_pixels = (unsigned long long)w * h - 1 };
		if (w > 1) {
			assert_int_equal(image_decode(s->buf, s->len, &lw, &img, NULL, err),
					 IMAGE_E_TOO_LARGE);
			assert_non_null(strstr(err, "width"));
		}
		if (h > 1)
			assert_int_equal(image_decode(s->buf, s->len, &lh, &img, NULL, err),
					 IMAGE_E_TOO_LARGE);
		if (w * h > 1)
			assert_int_equal(image_decode(s->buf, s->len, &lp, &img, NULL, err),
					 IMAGE_E_TOO_LARGE);
		assert_null(img.pixels);
	}
}

/* The admission hook sees every sample's size from its header, before any pixel: a refusal
 * comes back as the decoder's result with nothing allocated. */
static void test_admission_hook(void **state)
{
	(void)state;
	for (int k = 0; k < nsamples; k++) {
		const struct sample *s = &samples[k];
		struct image img;
		char err[IMAGE_ERR_LEN];
		struct admit_log a = {0};
		struct image_limits lim = { .admit = admit, .admit_ctx = &a };
		assert_int_equal(image_decode(s->buf, s->len, &lim, &img, NULL, err), 0);
		assert_true(a.calls >= 1);
		assert_int_equal(a.w, (unsigned long long)img.width);
		assert_int_equal(a.h, (unsigned long long)img.height);
		image_free(&img);
		a.refuse = 1;
		assert_int_equal(image_decode(s->buf, s->len, &lim, &img, NULL, err), IMAGE_E_BUSY);
		assert_null(img.pixels);
		assert_non_null(strstr(err, "budget"));
	}
}

/* A Radiance file whose header promises far more pixels than its bytes could carry (old-style
 * runs repeat a pixel 255 << 16 times in 4 bytes) is refused from its header. */
static void test_hdr_bomb(void **state)
{
	(void)state;
	char head[128];
	int hl = snprintf(head, sizeof head, "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 4000 +X 4000\n");
	size_t len = (size_t)hl + 4000 * 16;
	unsigned char *buf = calloc(1, len);
	assert_non_null(buf);
	memcpy(buf, head, (size_t)hl);
	for (size_t i = (size_t)hl; i + 16 <= len; i += 16) { /* a pixel, then runs of 255<<16, <<8 */
		memcpy(buf + i, "\x80\x80\x80\x81\x01\x01\x01\x3c\x01\x01\x01\x0b\x01\x01\x01\x9e", 16);
	}
	struct image img;
	char err[IMAGE_ERR_LEN];
	struct admit_log a = {0};
	struct image_limits lim = { .admit = admit, .admit_ctx = &a };
	int rc = image_decode(buf, len, &lim, &img, NULL, err);
	printf("hdr bomb of %zu bytes: %s\n", len, err);
	assert_int_equal(rc, IMAGE_E_CORRUPT);
	assert_int_equal(a.calls, 0);
	assert_non_null(strstr(err, "pixels a byte"));
	free(buf);
}

/* Right magic, then nothing sensible. */
static void test_garbage_after_magic(void **state)
{
	(void)state;
	static const struct {
		const char *b;
		size_t len;
	} magic[] = { { "\xff\xd8\xff", 3 }, { "\x89PNG\r\n\x1a\n", 8 },
		      { "\x76\x2f\x31\x01", 4 }, { "#?RADIANCE\n", 11 }, { "PF\n", 3 },
		      { "RIFF\x40\x02\0\0WEBPVP8 ", 16 }, { "RIFF\x40\x02\0\0WEBPVP8L", 16 },
		      { "RIFF\x40\x02\0\0WEBPVP8X", 16 },
		      { "\0\0\0\x1c" "ftypavif\0\0\0\0avifmif1miaf", 28 } };
	for (size_t m = 0; m < sizeof magic / sizeof magic[0]; m++)
		for (int t = 0; t < 200; t++) {
			unsigned char buf[600];
			size_t ml = magic[m].len, n = ml + (size_t)(tu_uniform() * 570);
			memcpy(buf, magic[m].b, ml);
			for (size_t i = ml; i < n; i++)
				buf[i] = (unsigned char)(tu_uniform() * 256);
			struct image img;
			char err[IMAGE_ERR_LEN];
			int rc = image_decode(buf, n, NULL, &img, NULL, err);
			if (rc == 0)
				image_free(&img);
			else
				assert_null(img.pixels);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_truncated),     cmocka_unit_test(test_flipped),
		cmocka_unit_test(test_absurd_sizes),  cmocka_unit_test(test_limits),
		cmocka_unit_test(test_garbage_after_magic),
		cmocka_unit_test(test_admission_hook), cmocka_unit_test(test_hdr_bomb),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
