/* PNG through libspng: every colour type and bit depth on read (expanded to 8- or 16-bit RGBA by
 * libspng, tRNS applied), gray / gray+alpha / RGB / RGBA at 8 or 16 bits on write. Samples are
 * taken as the file's colour description says (iCCP, else sRGB, else gAMA/cHRM; none: sRGB),
 * converted by image_decode_colour; answers carry an sRGB chunk or an iCCP profile. Alpha is
 * linear. */
#include <spng.h>
#include <stdlib.h>
#include <string.h>

#include "codec/colour.h"
#include "codec/image_codec.h"

#define PNG_CHUNK_MAX (8u << 20)   /* largest ancillary chunk kept in memory */
#define PNG_CACHE_MAX (32u << 20)  /* all ancillary chunks together */

/* Maps a libspng error to ours: running out of input is truncation, the rest corruption. */
static int png_error(int e, const char *what, char *err)
{
	int code = e == SPNG_EMEM ? IMAGE_E_NOMEM
		   : (e == SPNG_IO_EOF || e == SPNG_EOF || e == SPNG_IO_ERROR) ? IMAGE_E_TRUNCATED
		   : e == SPNG_EUSER_WIDTH || e == SPNG_EUSER_HEIGHT || e == SPNG_ECHUNK_LIMITS ?
									    IMAGE_E_TOO_LARGE
									    : IMAGE_E_CORRUPT;
	return image_fail(err, code, "png: %s: %s", what,
			  code == IMAGE_E_TRUNCATED ? "file is truncated" : spng_strerror(e));
}

/* Hands the PNG's colour chunks to info: iCCP first, then sRGB (nothing to convert), then
 * gAMA/cHRM, as the PNG specification orders them. */
static void png_colour(spng_ctx *ctx, struct image_info *info)
{
	struct spng_iccp iccp;
	struct spng_chrm chrm;
	uint8_t intent;
	double gama;
	if (!info->colour)
		return;
	if (!spng_get_iccp(ctx, &iccp) && iccp.profile && iccp.profile_len) {
		image_colour_set_icc(info, iccp.profile, iccp.profile_len);
		return;
	}
	if (!spng_get_srgb(ctx, &intent))
		return;
	if (!spng_get_gama(ctx, &gama) && gama > 0)
		info->colour->gamma = (float)(1.0 / gama);
	if (!spng_get_chrm(ctx, &chrm)) {
		const float xy[8] = {(float)chrm.red_x, (float)chrm.red_y, (float)chrm.green_x,
				     (float)chrm.green_y, (float)chrm.blue_x, (float)chrm.blue_y,
				     (float)chrm.white_point_x, (float)chrm.white_point_y};
		image_colour_set_chromaticities(info, xy);
	}
}

static int decode_png(const unsigned char *buf, size_t len, const struct image_limits *lim,
		      struct image *out, struct image_info *info, char *err)
{
	int rc, e;
	unsigned char *raw = NULL;
	spng_ctx *ctx = spng_ctx_new(0);
	if (!ctx)
		return image_fail(err, IMAGE_E_NOMEM, "png: cannot create a decoder");
	unsigned mw = lim->max_width ? lim->max_width : IMAGE_DEFAULT_MAX_WIDTH;
	unsigned mh = lim->max_height ? lim->max_height : IMAGE_DEFAULT_MAX_HEIGHT;
	if (mw > 0x7fffffff)
		mw = 0x7fffffff;
	if (mh > 0x7fffffff)
		mh = 0x7fffffff;
	spng_set_image_limits(ctx, mw, mh);
	spng_set_chunk_limits(ctx, PNG_CHUNK_MAX, PNG_CACHE_MAX);
	spng_set_option(ctx, SPNG_CHUNK_COUNT_LIMIT, 1000);
	spng_set_png_buffer(ctx, buf, len);

	struct spng_ihdr ihdr;
	e = spng_get_ihdr(ctx, &ihdr);
	if (e) {
		if (e == SPNG_EUSER_WIDTH || e == SPNG_EUSER_HEIGHT || e == SPNG_EWIDTH ||
		    e == SPNG_EHEIGHT) {
			/* report the header's size in our words when we can read it */
			if (len >= 24 && !memcmp(buf + 12, "IHDR", 4)) {
				unsigned long long w = (unsigned long long)buf[16] << 24 | buf[17] << 16 |
						       buf[18] << 8 | buf[19];
				unsigned long long h = (unsigned long long)buf[20] << 24 | buf[21] << 16 |
						       buf[22] << 8 | buf[23];
				rc = image_check_limits(lim, w, h, "png", err);
				if (rc)
					goto done;
			}
		}
		rc = png_error(e, "header", err);
		goto done;
	}
	rc = image_check_limits(lim, ihdr.width, ihdr.height, "png", err);
	if (rc)
		goto done;

	struct spng_trns trns;
	int has_trns = spng_get_trns(ctx, &trns) == 0;
	int ct = ihdr.color_type, bits16 = ihdr.bit_depth == 16;
	int stored;
	switch (ct) {
	case SPNG_COLOR_TYPE_GRAYSCALE: stored = 1; break;
	case SPNG_COLOR_TYPE_GRAYSCALE_ALPHA: stored = 2; break;
	case SPNG_COLOR_TYPE_TRUECOLOR: stored = 3; break;
	case SPNG_COLOR_TYPE_INDEXED: stored = 3; break;
	default: stored = 4; break;
	}
	int ch = stored;
	if (has_trns && (stored == 1 || stored == 3))
		ch++;
	int fmt = bits16 ? SPNG_FMT_RGBA16 : SPNG_FMT_RGBA8;
	size_t raw_len;
	e = spng_decoded_image_size(ctx, fmt, &raw_len);
	if (e) {
		rc = png_error(e, "image size", err);
		goto done;
	}
	raw = malloc(raw_len);
	if (!raw) {
		rc = image_fail(err, IMAGE_E_NOMEM, "png: cannot allocate %zu bytes", raw_len);
		goto done;
	}
	rc = image_alloc(out, (int)ihdr.width, (int)ihdr.height, ch);
	if (rc) {
		rc = image_fail(err, rc, "png: cannot allocate %ux%u pixels", ihdr.width, ihdr.height);
		goto done;
	}
	e = spng_decode_image(ctx, raw, raw_len, fmt, SPNG_DECODE_TRNS);
	if (e) {
		rc = png_error(e, "image data", err);
		goto done;
	}
	size_t n = (size_t)ihdr.width * ihdr.height;
	int alpha = ch == 2 || ch == 4, colour = alpha ? ch - 1 : ch;
	float *d = out->pixels;
	if (bits16) {
		const float *t = colour_srgb16_table();
		const uint16_t *s = (const uint16_t *)(const void *)raw;
		for (size_t i = 0; i < n; i++, s += 4, d += ch) {
			for (int c = 0; c < colour; c++)
				d[c] = t[s[c]];
			if (alpha)
				d[ch - 1] = (float)s[3] / 65535.0f;
		}
	} else {
		const float *t = colour_srgb8_table();
		const unsigned char *s = raw;
		for (size_t i = 0; i < n; i++, s += 4, d += ch) {
			for (int c = 0; c < colour; c++)
				d[c] = t[s[c]];
			if (alpha)
				d[ch - 1] = (float)s[3] / 255.0f;
		}
	}
	info->bits = bits16 ? 16 : 8;
	info->channels = ch;
	png_colour(ctx, info);
	rc = 0;
done:
	if (rc)
		image_free(out);
	free(raw);
	spng_ctx_free(ctx);
	return rc;
}

/* A copy of the PNG buf without its iCCP chunks (*copy malloc'd); 1 when it had one, 0 when not
 * (or no memory: nothing to retry). */
static int strip_iccp(const unsigned char *buf, size_t len, unsigned char **copy, size_t *clen)
{
	*copy = NULL;
	if (len < 8 || !(*copy = malloc(len)))
		return 0;
	memcpy(*copy, buf, 8);
	size_t at = 8, n = 8;
	int found = 0;
	while (at + 12 <= len) {
		size_t dl = (size_t)buf[at] << 24 | (size_t)buf[at + 1] << 16 |
			    (size_t)buf[at + 2] << 8 | buf[at + 3];
		size_t cl = dl + 12;
		if (dl > len - at - 12)
			cl = len - at; /* a cut chunk: copied as it is, the decoder says what it is */
		if (!memcmp(buf + at + 4, "iCCP", 4)) {
			found = 1;
		} else {
			memcpy(*copy + n, buf + at, cl);
			n += cl;
		}
		at += cl;
	}
	memcpy(*copy + n, buf + at, len - at);
	*clen = n + (len - at);
	if (!found) {
		free(*copy);
		*copy = NULL;
	}
	return found;
}

/* A PNG that libspng refuses for its iCCP chunk (a profile inflating past the chunk limits,
 * bad zlib in it) is decoded without it: the profile ignored with a note, never the image. */
int image_decode_png(const unsigned char *buf, size_t len, const struct image_limits *lim,
		     struct image *out, struct image_info *info, char *err)
{
	int rc = decode_png(buf, len, lim, out, info, err);
	unsigned char *copy;
	size_t clen;
	if ((rc != IMAGE_E_CORRUPT && rc != IMAGE_E_TOO_LARGE) || !strip_iccp(buf, len, &copy, &clen))
		return rc;
	struct image_colour *c = info ? info->colour : NULL;
	image_colour_free(c);
	char e2[IMAGE_ERR_LEN];
	int rc2 = decode_png(copy, clen, lim, out, info, e2);
	free(copy);
	if (rc2)
		return rc;
	if (c) {
		image_colour_free(c);
		c->srgb = 1;
		snprintf(c->name, sizeof c->name, "sRGB");
		snprintf(c->note, sizeof c->note, "the iCCP chunk was ignored (%.110s)", err);
	}
	err[0] = 0;
	return 0;
}

int image_encode_png(const struct image *img, const struct image_encode_opts *o,
		     unsigned char **out, size_t *out_len, unsigned *lost, char *err)
{
	int bits = o->bits ? o->bits : 8;
	if (bits != 8 && bits != 16)
		return image_fail(err, IMAGE_E_ARG, "png: %d bits per sample is not 8 or 16", bits);
	int ch = img->channels, alpha = ch == 2 || ch == 4;
	size_t w = (size_t)img->width, h = (size_t)img->height, n = w * h * (size_t)ch;
	size_t bps = (size_t)bits / 8;
	unsigned char *raw = malloc(n * bps);
	if (!raw)
		return image_fail(err, IMAGE_E_NOMEM, "png: cannot allocate %zu bytes", n * bps);
	const float *t8 = colour_srgb8_table(), *t16 = colour_srgb16_table();
	const struct colour_srgb8_lut *lut = colour_srgb8_lut();
	const float *s = img->pixels;
	unsigned char *q = raw;
	int inexact = 0; /* some sample is not exactly what its code decodes to */
	for (size_t y = 0; y < h; y++)
		for (size_t x = 0; x < w; x++)
			for (int c = 0; c < ch; c++, s++) {
				float v = image_clip01(*s, lost);
				int is_alpha = alpha && c == ch - 1;
				if (bits == 8) {
					uint8_t u = is_alpha ? colour_unorm8(v)
						    : o->dither ? colour_linear_to_srgb8_dither(
								  v, (unsigned)x, (unsigned)y)
								: colour_srgb8_fast(lut, v);
					inexact |= (is_alpha ? (float)u / 255.0f : t8[u]) != v;
					*q++ = u;
				} else {
					uint16_t u = is_alpha ? colour_unorm16(v) : colour_linear_to_srgb16(v);
					inexact |= (is_alpha ? (float)u / 65535.0f : t16[u]) != v;
					/* libspng 0.7 takes 16-bit SPNG_FMT_PNG samples host-endian
					 * and writes them big-endian */
					memcpy(q, &u, 2);
					q += 2;
				}
			}
	if (inexact)
		*lost |= IMAGE_LOST_PRECISION;

	int rc = 0, e;
	spng_ctx *ctx = spng_ctx_new(SPNG_CTX_ENCODER);
	if (!ctx) {
		free(raw);
		return image_fail(err, IMAGE_E_NOMEM, "png: cannot create an encoder");
	}
	static const uint8_t types[5] = { 0, SPNG_COLOR_TYPE_GRAYSCALE,
					  SPNG_COLOR_TYPE_GRAYSCALE_ALPHA, SPNG_COLOR_TYPE_TRUECOLOR,
					  SPNG_COLOR_TYPE_TRUECOLOR_ALPHA };
	struct spng_ihdr ihdr = { (uint32_t)w, (uint32_t)h, (uint8_t)bits, types[ch], 0, 0, 0 };
	spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1);
	spng_set_option(ctx, SPNG_IMG_COMPRESSION_LEVEL, 6);
	struct spng_iccp iccp = {"ICC profile", 0, NULL};
	if (o->colour && !o->colour->srgb && o->colour->icc) {
		iccp.profile = (char *)o->colour->icc;
		iccp.profile_len = o->colour->icc_len;
	}
	if ((e = spng_set_ihdr(ctx, &ihdr)) ||
	    (e = iccp.profile ? spng_set_iccp(ctx, &iccp) : spng_set_srgb(ctx, 0)) ||
	    (e = spng_encode_image(ctx, raw, n * bps, SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE))) {
		rc = image_fail(err, e == SPNG_EMEM ? IMAGE_E_NOMEM : IMAGE_E_ARG, "png: encoding: %s",
				spng_strerror(e));
		goto done;
	}
	*out = spng_get_png_buffer(ctx, out_len, &e);
	if (!*out)
		rc = image_fail(err, IMAGE_E_NOMEM, "png: no output buffer: %s", spng_strerror(e));
done:
	free(raw);
	spng_ctx_free(ctx);
	return rc;
}
