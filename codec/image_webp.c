/* WebP through libwebp: still images, lossy (VP8, 4:2:0) or lossless (VP8L), with alpha, read
 * and written as 8-bit. Gray is written as RGB (WebP has no gray mode) and read back as RGB.
 * Animated files are refused; an ICCP chunk's profile is handed over (image_colour_set_icc),
 * else the samples are sRGB, and an answer in another colour carries its profile in ICCP. */
#include <stdlib.h>
#include <string.h>
#include <webp/decode.h>
#include <webp/encode.h>
#include <webp/mux.h>

#include "codec/colour.h"
#include "codec/image_codec.h"

/* Lossy coding trades speed for size in libwebp's method 0-6 (its default 4). */
#define WEBP_METHOD 4

static int webp_status(VP8StatusCode s, const char *what, char *err)
{
	int code = s == VP8_STATUS_OUT_OF_MEMORY ? IMAGE_E_NOMEM
		   : s == VP8_STATUS_NOT_ENOUGH_DATA ? IMAGE_E_TRUNCATED
		   : s == VP8_STATUS_UNSUPPORTED_FEATURE ? IMAGE_E_UNSUPPORTED
							: IMAGE_E_CORRUPT;
	static const char *names[] = { "ok", "out of memory", "invalid parameter",
				       "bitstream error", "unsupported feature", "suspended",
				       "user abort", "not enough data" };
	unsigned i = (unsigned)s;
	return image_fail(err, code, "webp: %s: %s", what,
			  i < sizeof names / sizeof names[0] ? names[i] : "error");
}

/* Hands an extended WebP's ICCP chunk to info. Chunks are walked bounds-checked: fourcc,
 * little-endian size, data padded to even. */
static void webp_colour(const unsigned char *b, size_t len, struct image_info *info)
{
	size_t p = 12;
	while (p + 8 <= len) {
		size_t n = (size_t)b[p + 4] | (size_t)b[p + 5] << 8 | (size_t)b[p + 6] << 16 |
			   (size_t)b[p + 7] << 24;
		if (n > len - p - 8)
			return;
		if (!memcmp(b + p, "ICCP", 4)) {
			image_colour_set_icc(info, b + p + 8, n);
			return;
		}
		p += 8 + n + (n & 1);
	}
}

int image_decode_webp(const unsigned char *buf, size_t len, const struct image_limits *lim,
		      struct image *out, struct image_info *info, char *err)
{
	WebPBitstreamFeatures f;
	VP8StatusCode s = WebPGetFeatures(buf, len, &f);
	if (s != VP8_STATUS_OK)
		return webp_status(s, "header", err);
	if (f.has_animation)
		return image_fail(err, IMAGE_E_UNSUPPORTED, "webp: animated WebP is not supported");
	int rc = image_check_limits(lim, (unsigned long long)f.width, (unsigned long long)f.height,
				    "webp", err);
	if (rc)
		return rc;
	int ch = f.has_alpha ? 4 : 3;
	size_t w = (size_t)f.width, h = (size_t)f.height, stride = w * (size_t)ch;
	unsigned char *raw = malloc(stride * h);
	if (!raw)
		return image_fail(err, IMAGE_E_NOMEM, "webp: cannot allocate %zu bytes", stride * h);
	rc = image_alloc(out, f.width, f.height, ch);
	if (rc) {
		free(raw);
		return image_fail(err, rc, "webp: cannot allocate %dx%d pixels", f.width, f.height);
	}
	/* decoded straight into raw: libwebp allocates no output of its own */
	WebPDecoderConfig cfg;
	if (!WebPInitDecoderConfig(&cfg)) {
		free(raw);
		image_free(out);
		return image_fail(err, IMAGE_E_ARG, "webp: the library's version does not match");
	}
	cfg.output.colorspace = ch == 4 ? MODE_RGBA : MODE_RGB;
	cfg.output.is_external_memory = 1;
	cfg.output.u.RGBA.rgba = raw;
	cfg.output.u.RGBA.stride = (int)stride;
	cfg.output.u.RGBA.size = stride * h;
	s = WebPDecode(buf, len, &cfg);
	WebPFreeDecBuffer(&cfg.output);
	if (s != VP8_STATUS_OK) {
		free(raw);
		image_free(out);
		return webp_status(s, "image data", err);
	}
	const float *t = colour_srgb8_table();
	const unsigned char *p = raw;
	float *d = out->pixels;
	for (size_t i = 0; i < w * h; i++, p += ch, d += ch) {
		d[0] = t[p[0]];
		d[1] = t[p[1]];
		d[2] = t[p[2]];
		if (ch == 4)
			d[3] = (float)p[3] / 255.0f;
	}
	free(raw);
	info->bits = 8;
	info->channels = ch;
	webp_colour(buf, len, info);
	return 0;
}

static int webp_write(const uint8_t *data, size_t size, const WebPPicture *pic)
{
	return image_buf_put(pic->custom_ptr, data, size) == 0;
}

int image_encode_webp(const struct image *img, const struct image_encode_opts *o,
		      unsigned char **out, size_t *out_len, unsigned *lost, char *err)
{
	if (o->quality < 1 || o->quality > 100)
		return image_fail(err, IMAGE_E_ARG, "webp: quality %d is not in 1-100", o->quality);
	if (img->width > WEBP_MAX_DIMENSION || img->height > WEBP_MAX_DIMENSION)
		return image_fail(err, IMAGE_E_TOO_LARGE, "webp: %dx%d exceeds WebP's %d limit",
				  img->width, img->height, WEBP_MAX_DIMENSION);
	int lossless = o->quality == 100;
	int ch = img->channels, alpha = ch == 2 || ch == 4, colour = alpha ? ch - 1 : ch;
	int wch = alpha ? 4 : 3;
	size_t w = (size_t)img->width, h = (size_t)img->height;
	unsigned char *raw = malloc(w * h * (size_t)wch);
	if (!raw)
		return image_fail(err, IMAGE_E_NOMEM, "webp: cannot allocate %zu bytes",
				  w * h * (size_t)wch);
	const float *t8 = colour_srgb8_table();
	const struct colour_srgb8_lut *lut = colour_srgb8_lut();
	const float *s = img->pixels;
	unsigned char *q = raw;
	int inexact = 0;
	for (size_t y = 0; y < h; y++)
		for (size_t x = 0; x < w; x++, s += ch, q += wch) {
			for (int c = 0; c < colour; c++) {
				float v = image_clip01(s[c], lost);
				uint8_t u = o->dither ? colour_linear_to_srgb8_dither(v, (unsigned)x,
										      (unsigned)y)
						      : colour_srgb8_fast(lut, v);
				inexact |= t8[u] != v;
				q[c] = u;
			}
			if (colour == 1)
				q[1] = q[2] = q[0];
			if (alpha) {
				float v = image_clip01(s[ch - 1], lost);
				uint8_t u = colour_unorm8(v);
				inexact |= (float)u / 255.0f != v;
				q[3] = u;
			}
		}
	/* lossy coding always loses; lossless only what 8-bit codes could not hold */
	if (inexact || !lossless)
		*lost |= IMAGE_LOST_PRECISION;

	struct image_buf b = { NULL, 0, 0 };
	WebPConfig cfg;
	WebPPicture pic;
	int rc = 0, pic_ok = 0;
	if (!WebPConfigInit(&cfg) || !WebPPictureInit(&pic)) {
		rc = image_fail(err, IMAGE_E_ARG, "webp: the library's version does not match");
		goto done;
	}
	cfg.lossless = lossless;
	cfg.quality = lossless ? 75.0f : (float)o->quality; /* lossless: effort, not fidelity */
	cfg.method = WEBP_METHOD;
	cfg.alpha_quality = 100; /* alpha coded losslessly */
	cfg.exact = lossless;     /* keep the colour under transparent pixels */
	pic.use_argb = lossless;
	pic.width = (int)w;
	pic.height = (int)h;
	pic.writer = webp_write;
	pic.custom_ptr = &b;
	pic_ok = 1;
	if (!WebPValidateConfig(&cfg)) {
		rc = image_fail(err, IMAGE_E_ARG, "webp: invalid encoder settings");
		goto done;
	}
	if (!(alpha ? WebPPictureImportRGBA(&pic, raw, (int)(w * 4))
		    : WebPPictureImportRGB(&pic, raw, (int)(w * 3)))) {
		rc = image_fail(err, IMAGE_E_NOMEM, "webp: cannot import %zux%zu pixels", w, h);
		goto done;
	}
	if (!WebPEncode(&cfg, &pic)) {
		rc = image_fail(err, pic.error_code == VP8_ENC_ERROR_OUT_OF_MEMORY ||
					     pic.error_code == VP8_ENC_ERROR_BITSTREAM_OUT_OF_MEMORY ?
					     IMAGE_E_NOMEM : IMAGE_E_ARG,
				"webp: encoding failed (libwebp error %d)", (int)pic.error_code);
		goto done;
	}
	if (o->colour && !o->colour->srgb && o->colour->icc) {
		/* the profile in an ICCP chunk: libwebpmux makes the file extended (VP8X) */
		WebPData in = {b.p, b.len}, icc = {o->colour->icc, o->colour->icc_len}, res = {0};
		WebPMux *mux = WebPMuxCreate(&in, 0);
		int ok = mux && WebPMuxSetChunk(mux, "ICCP", &icc, 0) == WEBP_MUX_OK &&
			 WebPMuxAssemble(mux, &res) == WEBP_MUX_OK;
		WebPMuxDelete(mux);
		if (!ok) {
			WebPDataClear(&res);
			rc = image_fail(err, IMAGE_E_NOMEM, "webp: cannot add the ICC profile");
			goto done;
		}
		free(b.p);
		b.p = NULL;
		if (!(b.p = malloc(res.size))) {
			WebPDataClear(&res);
			rc = image_fail(err, IMAGE_E_NOMEM, "webp: cannot add the ICC profile");
			goto done;
		}
		memcpy(b.p, res.bytes, res.size);
		b.len = res.size;
		WebPDataClear(&res);
	}
	*out = b.p;
	*out_len = b.len;
	b.p = NULL;
done:
	if (pic_ok)
		WebPPictureFree(&pic);
	free(b.p);
	free(raw);
	return rc;
}
