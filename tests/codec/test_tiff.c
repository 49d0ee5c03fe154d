/* TIFF and HEIC decoders and the TIFF encoder (codec/image_tiff.c, codec/image_heic.c): round
 * trips of every depth, channel count and compression against the samples written (exact for
 * integer codes, float32 and values half holds; half rounding within half an ulp); layouts the
 * encoder does not write (tiles, planes, associated alpha, MinIsWhite, extra samples, doubles,
 * the eight orientations, palette and 1-bit through the RGBA reader) written here with libtiff
 * and compared with a float64 sRGB decode of their samples; hostile files (every truncation, bit
 * flips, a huge header, absurd tiles) refused with a code, never a crash, and nothing on stderr.
 * Random inputs are fresh each run (seed printed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <tiffio.h>
#include <unistd.h>

#include "codec/image.h"
#include "tests/testutil.h"

/* sRGB code / max to linear light, in double: the IEC 61966-2-1 formula written here */
static double srgb_ref(double s)
{
	return s <= 0.04045 ? s / 12.92 : pow((s + 0.055) / 1.055, 2.4);
}

static unsigned rnd(unsigned n)
{
	unsigned v = (unsigned)(tu_uniform() * n);
	return v < n ? v : n - 1;
}

/* A random finite half's bits (any sign, subnormals included) */
static uint16_t rnd_half(void)
{
	uint16_t h;
	do
		h = (uint16_t)rnd(65536);
	while ((h & 0x7c00) == 0x7c00);
	return h;
}

static double half_ref(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
	return h & 0x8000 ? -v : v;
}

static int encode(const struct image *img, int bits, int half, int comp, unsigned char **buf,
                  size_t *len, unsigned *lost)
{
	struct image_encode_opts o = {.bits = bits, .half = half, .tiff_compression = comp};
	char err[IMAGE_ERR_LEN] = "";
	int rc = image_encode(img, IMAGE_FORMAT_TIFF, &o, buf, len, lost, err);
	if (rc)
		print_message("encode: %s\n", err);
	return rc;
}

/* Every channel count, depth and compression at several sizes (one of several strips): the
 * samples come back bit for bit, with nothing reported lost. */
static void test_roundtrip(void **state)
{
	(void)state;
	static const int sizes[][2] = {{1, 1}, {2, 3}, {17, 5}, {1, 9}, {64, 33}, {300, 301}};
	static const int depth[][2] = {{8, 0}, {16, 0}, {16, 1}, {32, 0}};
	int cases = 0;
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
		for (int ch = 1; ch <= 4; ch++)
			for (int d = 0; d < 4; d++)
				for (int comp = 0; comp < IMAGE_TIFF_COMPRESSION_COUNT; comp++) {
					int w = sizes[s][0], h = sizes[s][1], bits = depth[d][0];
					int half = depth[d][1], alpha = ch == 2 || ch == 4;
					if (s == 5 && comp == IMAGE_TIFF_NONE && ch != 4)
						continue; /* the large size: the compressions at 4 channels */
					struct image img, back;
					assert_int_equal(image_alloc(&img, w, h, ch), 0);
					size_t n = (size_t)w * h * ch;
					for (size_t i = 0; i < n; i++) {
						int is_alpha = alpha && (int)(i % ch) == ch - 1;
						double v;
						if (bits == 8 || (bits == 16 && !half)) {
							unsigned maxc = bits == 8 ? 255 : 65535;
							unsigned c = rnd(maxc + 1);
							v = is_alpha ? (double)c / maxc : srgb_ref((double)c / maxc);
						} else if (half) {
							v = half_ref(rnd_half());
						} else {
							v = (tu_uniform() - 0.3) * 2000.0;
						}
						img.pixels[i] = (float)v;
					}
					unsigned char *buf;
					size_t len;
					unsigned lost = 0;
					assert_int_equal(encode(&img, bits, half, comp, &buf, &len, &lost), 0);
					assert_int_equal(image_sniff(buf, len), IMAGE_FORMAT_TIFF);
					struct image_info info;
					char err[IMAGE_ERR_LEN];
					int rc = image_decode(buf, len, NULL, &back, &info, err);
					if (rc)
						fail_msg("%dx%d ch %d bits %d half %d %s: %s", w, h, ch, bits, half,
						         image_tiff_compression_names[comp], err);
					assert_int_equal(back.width, w);
					assert_int_equal(back.height, h);
					assert_int_equal(back.channels, ch);
					assert_int_equal(info.bits, bits);
					assert_int_equal(info.float_format, bits == 32 || half);
					double maxerr = 0;
					for (size_t i = 0; i < n; i++) {
						/* integer codes: the float the decode makes of the code, within
						 * the rounding of the test's float64 formula to float */
						double e = fabs((double)back.pixels[i] - img.pixels[i]);
						maxerr = e > maxerr ? e : maxerr;
					}
					double tol = bits == 32 || half ? 0 : 6e-8;
					if (!(maxerr <= tol))
						fail_msg("%dx%d ch %d bits %d half %d %s: max error %.3g > %.3g", w,
						         h, ch, bits, half, image_tiff_compression_names[comp],
						         maxerr, tol);
					if (bits == 32 || half)
						assert_int_equal(lost, 0);
					image_free(&back);
					image_free(&img);
					free(buf);
					cases++;
				}
	print_message("%d round trips exact (integer codes within 6e-8 of the float64 formula: "
	              "float rounding)\n", cases);
}

/* Any float through half: within half an ulp (2^-11 relative for normals, 2^-25 absolute below
 * 2^-14), ties to even; past 65520 infinity and IMAGE_LOST_RANGE; NaN stays NaN. */
static void test_half_rounding(void **state)
{
	(void)state;
	struct image img, back;
	int w = 257, h = 3;
	assert_int_equal(image_alloc(&img, w, h, 1), 0);
	size_t n = (size_t)w * h;
	for (size_t i = 0; i < n; i++)
		img.pixels[i] = (float)(ldexp(tu_uniform() * 2 - 1, (int)rnd(40) - 28));
	img.pixels[0] = 1.0f + 0x1p-11f;     /* a tie: to even, 1 */
	img.pixels[1] = 1.0f + 3 * 0x1p-11f; /* a tie: to even, 1 + 2^-9 */
	img.pixels[2] = 65519.0f;            /* 65504 */
	unsigned char *buf;
	size_t len;
	unsigned lost = 0;
	char err[IMAGE_ERR_LEN];
	assert_int_equal(encode(&img, 16, 1, IMAGE_TIFF_DEFLATE, &buf, &len, &lost), 0);
	assert_true(lost & IMAGE_LOST_PRECISION);
	assert_false(lost & IMAGE_LOST_RANGE);
	assert_int_equal(image_decode(buf, len, NULL, &back, NULL, err), 0);
	free(buf);
	double worst = 0;
	for (size_t i = 0; i < n; i++) {
		double v = img.pixels[i], b = back.pixels[i], e = fabs(b - v);
		double bound = fabs(v) >= 0x1p-14 ? fabs(v) * 0x1p-11 : 0x1p-25;
		if (!(e <= bound))
			fail_msg("sample %zu: %.9g -> %.9g, error %.3g > %.3g", i, v, b, e, bound);
		worst = e / bound > worst ? e / bound : worst;
	}
	assert_true(back.pixels[0] == 1.0f);
	assert_true(back.pixels[1] == 1.0f + 0x1p-9f);
	assert_true(back.pixels[2] == 65504.0f);
	print_message("half: worst error %.3f of half an ulp over %zu samples\n", worst, n);
	image_free(&back);
	img.pixels[3] = 65520.0f;
	img.pixels[4] = NAN;
	assert_int_equal(encode(&img, 16, 1, IMAGE_TIFF_NONE, &buf, &len, &lost), 0);
	assert_true(lost & IMAGE_LOST_RANGE);
	assert_int_equal(image_decode(buf, len, NULL, &back, NULL, err), 0);
	assert_true(isinf(back.pixels[3]) && isnan(back.pixels[4]));
	image_free(&back);
	image_free(&img);
	free(buf);
	/* integer depths clip what lies outside 0-1, and say so */
	assert_int_equal(image_alloc(&img, 2, 1, 1), 0);
	img.pixels[0] = 2.0f;
	img.pixels[1] = -0.5f;
	lost = 0;
	assert_int_equal(encode(&img, 16, 0, IMAGE_TIFF_LZW, &buf, &len, &lost), 0);
	assert_true((lost & IMAGE_LOST_RANGE) && (lost & IMAGE_LOST_NEGATIVE));
	free(buf);
	struct image_encode_opts bad = {.bits = 12};
	assert_int_equal(image_encode(&img, IMAGE_FORMAT_TIFF, &bad, &buf, &len, &lost, err),
	                 IMAGE_E_ARG);
	bad.bits = 8;
	bad.tiff_compression = IMAGE_TIFF_COMPRESSION_COUNT;
	assert_int_equal(image_encode(&img, IMAGE_FORMAT_TIFF, &bad, &buf, &len, &lost, err),
	                 IMAGE_E_ARG);
	image_free(&img);
}

/* A TIFF written here by libtiff: w x h, spp samples of bps bits (sample format fmt) from
 * `samples` (contiguous, rows top first, 1-bit rows packed), with the tags given. */
struct layout {
	int w, h, spp, bps;
	uint16_t fmt, photo, planar, comp, orient, nextra, extra[2];
	int tile; /* tile side (a multiple of 16), 0: strips of 3 rows */
	const uint16_t *map; /* palette: 3 x 2^bps entries */
};

static unsigned char *write_tiff(const struct layout *L, const unsigned char *samples,
                                 size_t *len)
{
	char path[] = "/tmp/fftbloom-tiff-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	TIFF *t = TIFFOpen(path, "w");
	assert_non_null(t);
	TIFFSetField(t, TIFFTAG_IMAGEWIDTH, (uint32_t)L->w);
	TIFFSetField(t, TIFFTAG_IMAGELENGTH, (uint32_t)L->h);
	TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)L->spp);
	TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, (uint16_t)L->bps);
	TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, L->fmt ? L->fmt : SAMPLEFORMAT_UINT);
	TIFFSetField(t, TIFFTAG_PHOTOMETRIC, L->photo);
	TIFFSetField(t, TIFFTAG_PLANARCONFIG, L->planar ? L->planar : PLANARCONFIG_CONTIG);
	TIFFSetField(t, TIFFTAG_COMPRESSION, L->comp ? L->comp : COMPRESSION_NONE);
	if (L->orient)
		TIFFSetField(t, TIFFTAG_ORIENTATION, L->orient);
	if (L->nextra)
		TIFFSetField(t, TIFFTAG_EXTRASAMPLES, L->nextra, L->extra);
	if (L->map)
		TIFFSetField(t, TIFFTAG_COLORMAP, L->map, L->map + (1 << L->bps),
		             L->map + 2 * (1 << L->bps));
	int sep = L->planar == PLANARCONFIG_SEPARATE, planes = sep ? L->spp : 1;
	size_t bpp = (size_t)(sep ? 1 : L->spp) * (size_t)L->bps; /* bits a pixel in a plane */
	size_t sb = (size_t)L->bps / 8;
	if (L->tile) {
		TIFFSetField(t, TIFFTAG_TILEWIDTH, (uint32_t)L->tile);
		TIFFSetField(t, TIFFTAG_TILELENGTH, (uint32_t)L->tile);
		size_t tb = (size_t)L->tile * L->tile * bpp / 8;
		unsigned char *tile = malloc(tb);
		for (int p = 0; p < planes; p++)
			for (int y0 = 0; y0 < L->h; y0 += L->tile)
				for (int x0 = 0; x0 < L->w; x0 += L->tile) {
					memset(tile, 0xee, tb); /* outside the image: junk the decoder skips */
					for (int y = y0; y < y0 + L->tile && y < L->h; y++)
						for (int x = x0; x < x0 + L->tile && x < L->w; x++) {
							size_t src = ((size_t)y * L->w + x) * L->spp + (sep ? p : 0);
							size_t dst = ((size_t)(y - y0) * L->tile + (x - x0)) * bpp / 8;
							memcpy(tile + dst, samples + src * sb, bpp / 8);
						}
					assert_true(TIFFWriteTile(t, tile, (uint32_t)x0, (uint32_t)y0, 0,
					                          (uint16_t)p) >= 0);
				}
		free(tile);
	} else {
		TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 3);
		size_t rb = ((size_t)L->w * bpp + 7) / 8;
		unsigned char *row = malloc(rb);
		for (int p = 0; p < planes; p++)
			for (int y = 0; y < L->h; y++) {
				if (sep) {
					for (int x = 0; x < L->w; x++)
						memcpy(row + (size_t)x * sb,
						       samples + (((size_t)y * L->w + x) * L->spp + p) * sb, sb);
				} else {
					memcpy(row, samples + (size_t)y * rb, rb);
				}
				assert_true(TIFFWriteScanline(t, row, (uint32_t)y, (uint16_t)p) >= 0);
			}
		free(row);
	}
	TIFFClose(t);
	FILE *f = fopen(path, "rb");
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	unsigned char *buf = malloc((size_t)st.st_size);
	assert_int_equal(fread(buf, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	unlink(path);
	*len = (size_t)st.st_size;
	return buf;
}

/* Decodes buf and compares it with want (w x h x ch, oriented), within tol. */
static void expect(const unsigned char *buf, size_t len, const double *want, int w, int h,
                   int ch, double tol, const char *what)
{
	struct image img;
	char err[IMAGE_ERR_LEN];
	int rc = image_decode(buf, len, NULL, &img, NULL, err);
	if (rc)
		fail_msg("%s: %s", what, err);
	if (img.width != w || img.height != h || img.channels != ch)
		fail_msg("%s: %dx%dx%d, not %dx%dx%d", what, img.width, img.height, img.channels, w, h,
		         ch);
	double maxerr = 0;
	for (size_t i = 0; i < (size_t)w * h * ch; i++) {
		double e = fabs(img.pixels[i] - want[i]);
		if (!(e <= tol))
			fail_msg("%s: sample %zu: %.9g, want %.9g", what, i, (double)img.pixels[i], want[i]);
		maxerr = e > maxerr ? e : maxerr;
	}
	print_message("%-34s %dx%dx%d: max error %.3g (tolerance %.3g)\n", what, w, h, ch, maxerr,
	              tol);
	image_free(&img);
}

/* The layouts of other writers: tiles, planes, associated alpha, MinIsWhite, extra samples,
 * doubles, palette and 1-bit gray. */
static void test_layouts(void **state)
{
	(void)state;
	enum { W = 37, H = 29 };
	uint16_t s16[W * H * 5];
	double want[W * H * 4];
	unsigned char s8[W * H * 5];
	size_t len;
	unsigned char *buf;
	for (int i = 0; i < W * H * 5; i++) {
		s16[i] = (uint16_t)rnd(65536);
		s8[i] = (unsigned char)rnd(256);
	}
	/* 16-bit RGBA tiled and planar, deflate: straight alpha */
	for (int v = 0; v < 2; v++) {
		struct layout L = {W, H, 4, 16, 0, PHOTOMETRIC_RGB, v ? PLANARCONFIG_SEPARATE : 0,
		                   COMPRESSION_ADOBE_DEFLATE, 0, 1, {EXTRASAMPLE_UNASSALPHA, 0},
		                   v ? 0 : 16, NULL};
		buf = write_tiff(&L, (const unsigned char *)s16, &len);
		for (int i = 0; i < W * H * 4; i++)
			want[i] = i % 4 == 3 ? s16[i] / 65535.0 : srgb_ref(s16[i] / 65535.0);
		expect(buf, len, want, W, H, 4, 1e-6, v ? "rgba16 planar deflate" : "rgba16 tiled 16");
		free(buf);
	}
	/* 8-bit RGBA, associated alpha, planar tiles, LZW: colour / alpha, then decoded */
	{
		struct layout L = {W, H, 4, 8, 0, PHOTOMETRIC_RGB, PLANARCONFIG_SEPARATE,
		                   COMPRESSION_LZW, 0, 1, {EXTRASAMPLE_ASSOCALPHA, 0}, 32, NULL};
		unsigned char pm[W * H * 4];
		for (int i = 0; i < W * H; i++) {
			unsigned a = s8[i * 4 + 3];
			for (int c = 0; c < 3; c++)
				pm[i * 4 + c] = (unsigned char)(s8[i * 4 + c] * a / 255);
			pm[i * 4 + 3] = (unsigned char)a;
			for (int c = 0; c < 3; c++)
				want[i * 4 + c] = a ? srgb_ref(fmin(1.0, pm[i * 4 + c] / (double)a)) : 0;
			want[i * 4 + 3] = a / 255.0;
		}
		buf = write_tiff(&L, pm, &len);
		expect(buf, len, want, W, H, 4, 1e-6, "rgba8 associated planar tiles");
		free(buf);
	}
	/* float RGBA associated: colour / alpha in linear light */
	{
		struct layout L = {W, H, 4, 32, SAMPLEFORMAT_IEEEFP, PHOTOMETRIC_RGB, 0,
		                   COMPRESSION_NONE, 0, 1, {EXTRASAMPLE_ASSOCALPHA, 0}, 0, NULL};
		float f[W * H * 4];
		for (int i = 0; i < W * H; i++) {
			float a = (float)(tu_uniform() * 0.9 + 0.1);
			for (int c = 0; c < 3; c++) {
				double straight = tu_uniform() * 4;
				f[i * 4 + c] = (float)(straight * a);
				want[i * 4 + c] = (double)f[i * 4 + c] / a;
			}
			f[i * 4 + 3] = a;
			want[i * 4 + 3] = a;
		}
		buf = write_tiff(&L, (const unsigned char *)f, &len);
		expect(buf, len, want, W, H, 4, 1e-6, "float32 rgba associated");
		free(buf);
	}
	/* MinIsWhite 8 and 16-bit gray; gray + 2 extra samples (the first alpha, unspecified but
	 * not alone: the second is ignored) */
	{
		struct layout L = {W, H, 1, 8, 0, PHOTOMETRIC_MINISWHITE, 0, COMPRESSION_PACKBITS, 0,
		                   0, {0, 0}, 0, NULL};
		for (int i = 0; i < W * H; i++)
			want[i] = srgb_ref((255 - s8[i]) / 255.0);
		buf = write_tiff(&L, s8, &len);
		expect(buf, len, want, W, H, 1, 1e-6, "gray8 miniswhite packbits");
		free(buf);
		L.bps = 16;
		L.comp = COMPRESSION_LZW;
		for (int i = 0; i < W * H; i++)
			want[i] = srgb_ref((65535 - s16[i]) / 65535.0);
		buf = write_tiff(&L, (const unsigned char *)s16, &len);
		expect(buf, len, want, W, H, 1, 1e-6, "gray16 miniswhite lzw");
		free(buf);
		struct layout X = {W, H, 3, 8, 0, PHOTOMETRIC_MINISBLACK, 0, COMPRESSION_NONE, 0, 2,
		                   {EXTRASAMPLE_UNASSALPHA, EXTRASAMPLE_UNSPECIFIED}, 0, NULL};
		for (int i = 0; i < W * H; i++) {
			want[i * 2] = srgb_ref(s8[i * 3] / 255.0);
			want[i * 2 + 1] = s8[i * 3 + 1] / 255.0;
		}
		buf = write_tiff(&X, s8, &len);
		expect(buf, len, want, W, H, 2, 1e-6, "gray + alpha + an extra sample");
		free(buf);
	}
	/* doubles, RGB, big-endian: linear as they are */
	{
		double dv[W * H * 3];
		for (int i = 0; i < W * H * 3; i++)
			want[i] = dv[i] = (double)(float)((tu_uniform() - 0.5) * 100);
		struct layout L = {W, H, 3, 64, SAMPLEFORMAT_IEEEFP, PHOTOMETRIC_RGB, 0,
		                   COMPRESSION_ADOBE_DEFLATE, 0, 0, {0, 0}, 0, NULL};
		buf = write_tiff(&L, (const unsigned char *)dv, &len);
		expect(buf, len, want, W, H, 3, 0, "float64 rgb deflate");
		free(buf);
	}
	/* palette (4-bit) and 1-bit gray: libtiff's RGBA reader, 8-bit codes */
	{
		uint16_t map[3 * 16];
		for (int i = 0; i < 48; i++)
			map[i] = (uint16_t)(rnd(256) * 257);
		unsigned char packed[(W + 1) / 2 * H];
		for (int y = 0; y < H; y++)
			for (int x = 0; x < W; x++) {
				unsigned idx = s8[y * W + x] & 15;
				unsigned char *b = &packed[y * ((W + 1) / 2) + x / 2];
				*b = x % 2 ? (unsigned char)((*b & 0xf0) | idx) : (unsigned char)(idx << 4);
				for (int c = 0; c < 3; c++)
					want[(y * W + x) * 3 + c] = srgb_ref((map[c * 16 + idx] >> 8) / 255.0);
			}
		struct layout L = {W, H, 1, 4, 0, PHOTOMETRIC_PALETTE, 0, COMPRESSION_LZW, 0, 0,
		                   {0, 0}, 0, map};
		buf = write_tiff(&L, packed, &len);
		expect(buf, len, want, W, H, 3, 1e-6, "palette 4-bit lzw (RGBA reader)");
		free(buf);
		unsigned char bits[(W + 7) / 8 * H];
		memset(bits, 0, sizeof bits);
		for (int y = 0; y < H; y++)
			for (int x = 0; x < W; x++) {
				int on = s8[y * W + x] & 1;
				bits[y * ((W + 7) / 8) + x / 8] |= (unsigned char)(on << (7 - x % 8));
				want[y * W + x] = on;
			}
		struct layout B = {W, H, 1, 1, 0, PHOTOMETRIC_MINISBLACK, 0, COMPRESSION_CCITTFAX4, 0,
		                   0, {0, 0}, 0, NULL};
		buf = write_tiff(&B, bits, &len);
		expect(buf, len, want, W, H, 1, 0, "bilevel group 4 (RGBA reader)");
		free(buf);
	}
}

/* The eight orientations: each file's pixel (x, y) is where the orientation puts it, the
 * size swapped for 5-8 (the rule written here from TIFF 6.0's words). */
static void test_orientations(void **state)
{
	(void)state;
	enum { W = 5, H = 3 };
	unsigned char s[W * H];
	for (int i = 0; i < W * H; i++)
		s[i] = (unsigned char)(i * 17);
	for (int o = 1; o <= 8; o++) {
		struct layout L = {W, H, 1, 8, 0, PHOTOMETRIC_MINISBLACK, 0, 0, (uint16_t)o, 0, {0, 0},
		                   0, NULL};
		size_t len;
		unsigned char *buf = write_tiff(&L, s, &len);
		int ow = o >= 5 ? H : W, oh = o >= 5 ? W : H;
		double want[W * H];
		/* stored row r, column c: where it shows (TIFF 6.0: 0th row / 0th column is) */
		for (int r = 0; r < H; r++)
			for (int c = 0; c < W; c++) {
				int x, y;
				switch (o) {
				case 1: x = c; y = r; break;         /* top, left */
				case 2: x = W - 1 - c; y = r; break; /* top, right */
				case 3: x = W - 1 - c; y = H - 1 - r; break;
				case 4: x = c; y = H - 1 - r; break;
				case 5: x = r; y = c; break;         /* left, top */
				case 6: x = H - 1 - r; y = c; break; /* right, top */
				case 7: x = H - 1 - r; y = W - 1 - c; break;
				default: x = r; y = W - 1 - c; break; /* left, bottom */
				}
				want[y * ow + x] = srgb_ref(s[r * W + c] / 255.0);
			}
		char what[32];
		snprintf(what, sizeof what, "orientation %d", o);
		expect(buf, len, want, ow, oh, 1, 1e-6, what);
		free(buf);
	}
}

static int admitted_w, admitted_h;
static int refuse(void *ctx, unsigned long long w, unsigned long long h, char *err)
{
	(void)ctx;
	admitted_w = (int)w;
	admitted_h = (int)h;
	snprintf(err, IMAGE_ERR_LEN, "no room");
	return IMAGE_E_BUSY;
}

/* Reads a committed seed file (the tests run from the repository's root); NULL if absent. */
static unsigned char *seed(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	unsigned char *b = malloc(1 << 20);
	*len = fread(b, 1, 1 << 20, f);
	fclose(f);
	return b;
}

/* image_decode with stderr going to quiet_fd (what a decoder prints is kept there). */
static int quiet_fd = -1;
static int quiet_decode(const unsigned char *b, size_t len, const struct image_limits *lim,
                        struct image *img, char *err)
{
	fflush(stderr);
	int saved = dup(2);
	dup2(quiet_fd, 2);
	int rc = image_decode(b, len, lim, img, NULL, err);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	return rc;
}

/* Every truncation and 300 random byte changes of a file: a code or an image, no crash; a
 * decode that fails never leaves pixels. A truncation decodes only when what it cut was
 * metadata the image does not need (a TIFF's trailing tag values): then to the whole size. */
static void mangle(const unsigned char *good, size_t len, const char *what)
{
	unsigned char *b = malloc(len);
	int codes[16] = {0}, whole = 0;
	struct image full;
	char err[IMAGE_ERR_LEN];
	assert_int_equal(quiet_decode(good, len, NULL, &full, err), 0);
	for (size_t cut = 0; cut < len; cut += 1 + cut / 64) {
		struct image img;
		int rc = quiet_decode(good, cut, NULL, &img, err);
		if (!rc && img.width == full.width && img.height == full.height &&
		    img.channels == full.channels) {
			whole++;
			image_free(&img);
			continue;
		}
		if (!(rc < 0 && rc >= IMAGE_E_BUSY))
			fail_msg("%s cut to %zu bytes: %d %s", what, cut, rc, rc ? err : "decoded");
		assert_null(img.pixels);
		codes[-rc]++;
	}
	image_free(&full);
	int ok = 0;
	for (int k = 0; k < 300; k++) {
		memcpy(b, good, len);
		for (int j = 0; j < 1 + (int)rnd(4); j++)
			b[8 + rnd((unsigned)len - 8)] ^= (unsigned char)(1 + rnd(255));
		struct image img;
		int rc = quiet_decode(b, len, NULL, &img, err);
		assert_true(rc <= 0 && rc >= IMAGE_E_BUSY);
		ok += rc == 0;
		image_free(&img);
	}
	print_message("%s (%zu bytes): truncations refused as truncated %d, corrupt %d, unsupported "
	              "%d, other %d, whole (metadata cut) %d; of 300 mangled copies %d decoded\n",
	              what, len, codes[-IMAGE_E_TRUNCATED], codes[-IMAGE_E_CORRUPT],
	              codes[-IMAGE_E_UNSUPPORTED], codes[1] + codes[2] + codes[3] + codes[7] + codes[8],
	              whole, ok);
	free(b);
}

/* Hostile files: refused with a code, limits before any allocation (the hook sees the
 * header's size), and libtiff prints nothing on stderr. libde265 1.0.11 prints a few of its
 * HEVC parameter-set errors ("SPS error: ...") with fprintf(stderr), which nothing turns off:
 * those lines are counted and shown, not failed. */
static void test_hostile(void **state)
{
	(void)state;
	char path[] = "/tmp/fftbloom-tiff-stderr-XXXXXX";
	int fd = quiet_fd = mkstemp(path);
	assert_true(fd >= 0);
	struct image img;
	assert_int_equal(image_alloc(&img, 61, 45, 4), 0);
	tu_fill_f32(img.pixels, (size_t)61 * 45 * 4, 0, 1);
	for (int comp = 0; comp < IMAGE_TIFF_COMPRESSION_COUNT; comp++) {
		unsigned char *buf;
		size_t len;
		unsigned lost;
		assert_int_equal(encode(&img, 16, 0, comp, &buf, &len, &lost), 0);
		mangle(buf, len, image_tiff_compression_names[comp]);
		free(buf);
	}
	image_free(&img);
	static const char *seeds[] = {"tests/fuzz/corpus/tiff/tiled_zip.tif",
	                              "tests/fuzz/corpus/tiff/ycbcr_jpeg.tif",
	                              "tests/fuzz/corpus/tiff/bilevel_g4.tif"};
	for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
		size_t len;
		unsigned char *b = seed(seeds[i], &len);
		if (b)
			mangle(b, len, seeds[i]);
		free(b);
	}
	/* a header of 100000 x 3 and one of 3000 x 2000 against limits and the hook */
	struct layout L = {7, 3, 1, 8, 0, PHOTOMETRIC_MINISBLACK, 0, 0, 0, 0, {0, 0}, 0, NULL};
	unsigned char s[21] = {0};
	size_t len;
	unsigned char *buf = write_tiff(&L, s, &len);
	char err[IMAGE_ERR_LEN];
	struct image_limits lim = {.admit = refuse};
	assert_int_equal(quiet_decode(buf, len, &lim, &img, err), IMAGE_E_BUSY);
	assert_true(admitted_w == 7 && admitted_h == 3);
	for (size_t i = 0; i + 12 <= len; i++) { /* the width tag (256, LONG or SHORT) */
		if (buf[i] == 0 && buf[i + 1] == 1 && (i & 1) == 0 && buf[i + 2] == 3) {
			uint32_t big = 60000; /* SHORT: 60000 wide */
			memcpy(buf + i + 8, &big, 2);
			break;
		}
		if (buf[i] == 0 && buf[i + 1] == 1 && buf[i + 2] == 4) {
			uint32_t big = 100000;
			memcpy(buf + i + 8, &big, 4);
			break;
		}
	}
	struct image_limits small = {.max_width = 50000};
	int rc = quiet_decode(buf, len, &small, &img, err);
	assert_int_equal(rc, IMAGE_E_TOO_LARGE);
	assert_non_null(strstr(err, "tiff"));
	free(buf);
	/* tiles far larger than the image */
	struct layout T = {3, 2, 1, 8, 0, PHOTOMETRIC_MINISBLACK, 0, 0, 0, 0, {0, 0}, 16, NULL};
	buf = write_tiff(&T, s, &len);
	assert_int_equal(quiet_decode(buf, len, NULL, &img, err), 0);
	image_free(&img);
	for (size_t i = 0; i + 12 <= len; i++)
		if ((buf[i] == 0x42 && buf[i + 1] == 1) || (buf[i] == 0x43 && buf[i + 1] == 1)) {
			uint32_t huge = 1u << 20; /* tile width / length 322, 323 */
			memcpy(buf + i + 8, &huge, buf[i + 2] == 3 ? 2 : 4);
		}
	rc = quiet_decode(buf, len, NULL, &img, err);
	assert_true(rc < 0);
	print_message("huge tiles: %s\n", err);
	free(buf);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	if (st.st_size) {
		char cmd[96];
		snprintf(cmd, sizeof cmd, "head -c 2000 %s", path);
		(void)!system(cmd);
	}
	assert_int_equal(st.st_size, 0);
	static const char *heic[] = {"tests/fuzz/corpus/heic/rgba.heic",
	                             "tests/fuzz/corpus/heic/rgb10.heic"};
	for (size_t i = 0; i < sizeof heic / sizeof heic[0]; i++) {
		unsigned char *b = seed(heic[i], &len);
		if (b)
			mangle(b, len, heic[i]);
		free(b);
	}
	/* grid items that are each other's tiles (libheif 1.15 recursed until the stack ran out:
	 * found by the fuzz target): refused before libheif decodes */
	unsigned char *cyc = seed("tests/fuzz/corpus/heic/dimg_cycle.heic", &len);
	if (cyc) {
		assert_int_equal(quiet_decode(cyc, len, NULL, &img, err), IMAGE_E_CORRUPT);
		assert_non_null(strstr(err, "cycle"));
		free(cyc);
	}
	/* the same through an auxl reference whose box size lies (libheif reads it anyway) */
	cyc = seed("tests/fuzz/corpus/heic/auxl_cycle_badsize.heic", &len);
	if (cyc) {
		assert_int_equal(quiet_decode(cyc, len, NULL, &img, err), IMAGE_E_CORRUPT);
		free(cyc);
	}
	/* a HEIC seed against limits */
	unsigned char *h = seed("tests/fuzz/corpus/heic/rgb420.heic", &len);
	if (h) {
		struct image_limits tiny = {.max_width = 8};
		assert_int_equal(quiet_decode(h, len, &tiny, &img, err), IMAGE_E_TOO_LARGE);
		admitted_w = 0;
		assert_int_equal(quiet_decode(h, len, &lim, &img, err), IMAGE_E_BUSY);
		assert_true(admitted_w == 16 && admitted_h == 12);
		assert_int_equal(quiet_decode(h, len, NULL, &img, err), 0);
		image_free(&img);
		/* every ispe declaring sides past the limits (2^32-1: libheif's own limit, reported
		 * as a memory error; 40000: past the side; 30000: past the pixels only): too large,
		 * never out of memory */
		static const uint32_t sides[] = {0xffffffffu, 40000, 30000};
		for (size_t k = 0; k < sizeof sides / sizeof sides[0]; k++) {
			unsigned char *big = malloc(len);
			assert_non_null(big);
			memcpy(big, h, len);
			int boxes = 0;
			for (size_t i = 0; i + 16 <= len; i++)
				if (!memcmp(big + i, "ispe", 4)) {
					for (int b = 0; b < 8; b++) /* after version and flags: width, height */
						big[i + 8 + b] = (unsigned char)(sides[k] >> (24 - 8 * (b & 3)));
					boxes++;
				}
			assert_true(boxes > 0);
			rc = quiet_decode(big, len, NULL, &img, err);
			print_message("ispe %ux%u (%d boxes): %d, %s\n", sides[k], sides[k], boxes, rc, err);
			assert_int_equal(rc, IMAGE_E_TOO_LARGE);
			assert_non_null(strstr(err, "heic"));
			free(big);
		}
		free(h);
	}
	off_t tiff_bytes = st.st_size;
	assert_int_equal(fstat(fd, &st), 0);
	close(fd);
	FILE *f = fopen(path, "r");
	char line[256];
	int lines = 0;
	while (f && fgets(line, sizeof line, f))
		if (lines++ < 3)
			print_message("libde265 on stderr: %s", line);
	if (f)
		fclose(f);
	unlink(path);
	print_message("stderr: %lld bytes from the TIFF decodes, %d lines from the HEIC ones\n",
	              (long long)tiff_bytes, lines);
}

static void test_sniff(void **state)
{
	(void)state;
	assert_int_equal(image_sniff("II*\0", 4), IMAGE_FORMAT_TIFF);
	assert_int_equal(image_sniff("MM\0*", 4), IMAGE_FORMAT_TIFF);
	assert_int_equal(image_sniff("II+\0", 4), IMAGE_FORMAT_TIFF);
	assert_int_equal(image_sniff("MM\0+", 4), IMAGE_FORMAT_TIFF);
	assert_int_equal(image_sniff("MM*\0", 4), IMAGE_FORMAT_UNKNOWN);
	assert_int_equal(image_sniff("II\0*", 4), IMAGE_FORMAT_UNKNOWN);
	assert_int_equal(image_sniff("\0\0\0\x18" "ftypheic\0\0\0\0mif1heic", 24), IMAGE_FORMAT_HEIC);
	assert_int_equal(image_sniff("\0\0\0\x18" "ftypmif1\0\0\0\0mif1heic", 24), IMAGE_FORMAT_HEIC);
	assert_int_equal(image_sniff("\0\0\0\x18" "ftypmif1\0\0\0\0mif1avif", 24), IMAGE_FORMAT_AVIF);
	assert_int_equal(image_sniff("\0\0\0\x18" "ftypabcd\0\0\0\0xxxxheic", 24), IMAGE_FORMAT_HEIC);
	assert_int_equal(image_format_from_name("x.TIF"), IMAGE_FORMAT_TIFF);
	assert_int_equal(image_format_from_name("x.heic"), IMAGE_FORMAT_HEIC);
	char err[IMAGE_ERR_LEN];
	struct image img = {0};
	unsigned char *out;
	size_t len;
	assert_int_equal(image_alloc(&img, 1, 1, 3), 0);
	assert_int_equal(image_encode(&img, IMAGE_FORMAT_HEIC, NULL, &out, &len, NULL, err),
	                 IMAGE_E_UNSUPPORTED);
	image_free(&img);
}

int main(void)
{
	tu_seed_from_clock();
	tu_test_filter();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sniff),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_half_rounding),
		cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_orientations),
		cmocka_unit_test(test_hostile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
