/* AVIF through libavif (Debian 12: 0.11.1, encoding with libaom, decoding with dav1d): still
 * images, 8, 10 or 12 bits, gray (4:0:0), 4:2:0 or 4:4:4, with alpha. Written as sRGB (CICP
 * 1/13/6, full range); read as sRGB whatever the file's transfer says, except that PQ and HLG
 * (HDR) files are refused. An image sequence gives its first frame. Two things this module
 * cannot change: libavif 0.11 aborts the process when malloc fails inside it (sizes are bounded
 * by the limits before any decoding), and dav1d's default logger writes a line to stderr for
 * corrupt AV1 data (libavif 0.11 does not expose dav1d's logger setting). */
#include <avif/avif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/colour.h"
#include "codec/image_codec.h"

/* libavif's speed 0-10 (libaom's cpu-used underneath). 9, imgproxy's default too: 0.14 s of
 * one core's time for a 1080p photograph at quality 63, about what WebP takes (README) */
#define AVIF_SPEED_OURS 9

/* Past AV1 level 6's largest picture (MaxPicSize 8192x4352 samples) libaom 3.6 writes frames
 * that dav1d and libheif cannot decode (issue 35: 5972x5972 failed, 5970x5970 did not). Larger
 * images are written as a grid (HEIF's 'grid' item) of cells of at most AVIF_CELL_MAX_SAMPLES,
 * each an AV1 frame of its own that every decoder reads; a decoder puts them back together. */
#define AVIF_FRAME_MAX_SAMPLES 35651584ull
#define AVIF_CELL_MAX_SAMPLES (4096ull * 4096)
#define AVIF_CELL_SIDE 4096u /* the cells' side where they cannot divide the image evenly */
#define AVIF_GRID_MAX 256u   /* cells, rows or columns (HEIF's 8-bit fields; our array) */

/* The grid of an image of w x h: 1 x 1 up to AVIF_FRAME_MAX_SAMPLES; else the fewest cols x rows
 * cells of tw x th that divide the image evenly, as MIAF wants them (at least 64 a side; even
 * sides under 4:2:0, whose grids need an even image too: *pf becomes 4:4:4 for an odd-sized
 * one). Returns 1 when no such division exists: then cells of AVIF_CELL_SIDE, the right column
 * and bottom row narrower, which libavif 0.11 pads to the full cell. */
static int avif_grid(uint32_t w, uint32_t h, avifPixelFormat *pf, uint32_t *cols, uint32_t *rows,
		     uint32_t *tw, uint32_t *th)
{
	*cols = *rows = 1;
	*tw = w;
	*th = h;
	if ((unsigned long long)w * h <= AVIF_FRAME_MAX_SAMPLES)
		return 0;
	if (*pf == AVIF_PIXEL_FORMAT_YUV420 && ((w | h) & 1))
		*pf = AVIF_PIXEL_FORMAT_YUV444;
	unsigned even = *pf == AVIF_PIXEL_FORMAT_YUV420;
	unsigned long long best = 0;
	for (uint32_t c = 1; c <= AVIF_GRID_MAX; c++) {
		uint32_t cw = w / c;
		if (w % c || cw < 64 || (even && cw % 2))
			continue;
		for (uint32_t r = 1; r <= AVIF_GRID_MAX; r++) {
			uint32_t rh = h / r;
			if (h % r || rh < 64 || (even && rh % 2) ||
			    (unsigned long long)cw * rh > AVIF_CELL_MAX_SAMPLES)
				continue;
			if ((unsigned long long)c * r > AVIF_GRID_MAX)
				break;
			if (!best || (unsigned long long)c * r < best) {
				best = (unsigned long long)c * r;
				*cols = c;
				*rows = r;
				*tw = cw;
				*th = rh;
			}
			break; /* more rows only add cells */
		}
	}
	if (best)
		return 0;
	/* over 35.6 Mpixel with sides up to 65536 makes both sides at least 544: cells over 64 */
	*cols = (w + AVIF_CELL_SIDE - 1) / AVIF_CELL_SIDE;
	*rows = (h + AVIF_CELL_SIDE - 1) / AVIF_CELL_SIDE;
	*tw = (w + *cols - 1) / *cols;
	*th = (h + *rows - 1) / *rows;
	*tw += *tw & even;
	*th += *th & even;
	return 1;
}

static int avif_error(avifResult r, const char *what, const avifDiagnostics *diag, char *err)
{
	int code = r == AVIF_RESULT_OUT_OF_MEMORY ? IMAGE_E_NOMEM
		   : r == AVIF_RESULT_TRUNCATED_DATA ? IMAGE_E_TRUNCATED
		   : r == AVIF_RESULT_NOT_IMPLEMENTED || r == AVIF_RESULT_UNSUPPORTED_DEPTH ||
				   r == AVIF_RESULT_NO_CODEC_AVAILABLE ? IMAGE_E_UNSUPPORTED
								      : IMAGE_E_CORRUPT;
	const char *detail = diag && diag->error[0] ? diag->error : "";
	return image_fail(err, code, "avif: %s: %s%s%.160s", what, avifResultToString(r),
			  *detail ? ": " : "", detail);
}

/* The decoder's limits from ours: libavif checks them while parsing (dav1d too, for frames). */
static void decoder_limits(avifDecoder *d, const struct image_limits *lim)
{
	unsigned long long mw = lim->max_width ? lim->max_width : IMAGE_DEFAULT_MAX_WIDTH;
	unsigned long long mh = lim->max_height ? lim->max_height : IMAGE_DEFAULT_MAX_HEIGHT;
	unsigned long long mp = lim->max_pixels ? lim->max_pixels : IMAGE_DEFAULT_MAX_PIXELS;
	unsigned long long md = mw > mh ? mw : mh;
	if (mp > AVIF_DEFAULT_IMAGE_SIZE_LIMIT)
		mp = AVIF_DEFAULT_IMAGE_SIZE_LIMIT;
	if (md > AVIF_DEFAULT_IMAGE_DIMENSION_LIMIT)
		md = AVIF_DEFAULT_IMAGE_DIMENSION_LIMIT;
	d->imageSizeLimit = (uint32_t)mp;
	d->imageDimensionLimit = (uint32_t)md;
}

int image_decode_avif(const unsigned char *buf, size_t len, const struct image_limits *lim,
		      struct image *out, struct image_info *info, char *err)
{
	avifRGBImage rgb;
	memset(&rgb, 0, sizeof rgb);
	avifDecoder *d = avifDecoderCreate();
	if (!d)
		return image_fail(err, IMAGE_E_NOMEM, "avif: cannot create a decoder");
	d->maxThreads = 1;
	/* dav1d where libavif has it (Debian's does, and picks it first): it refuses frames over
	 * imageSizeLimit before allocating them, whatever the container says; libaom's decoder
	 * has no such limit */
	if (avifCodecName(AVIF_CODEC_CHOICE_DAV1D, AVIF_CODEC_FLAG_CAN_DECODE))
		d->codecChoice = AVIF_CODEC_CHOICE_DAV1D;
	d->ignoreExif = AVIF_TRUE;
	d->ignoreXMP = AVIF_TRUE;
	decoder_limits(d, lim);
	int rc;
	avifResult r = avifDecoderSetIOMemory(d, buf, len);
	if (r == AVIF_RESULT_OK)
		r = avifDecoderParse(d);
	if (r != AVIF_RESULT_OK) {
		/* a size over the limits given to libavif is reported in our words: libavif's
		 * message ends in the size, "... dimensions are too large [WxH]" */
		const char *sz = strstr(d->diag.error, "too large [");
		unsigned long long w, h;
		if (sz && sscanf(sz, "too large [%llux%llu]", &w, &h) == 2) {
			struct image_limits nl = *lim;
			nl.admit = NULL;
			if ((rc = image_check_limits(&nl, w, h, "avif", err)) == 0)
				rc = image_fail(err, IMAGE_E_TOO_LARGE, "avif: %s", d->diag.error);
			goto done;
		}
		rc = avif_error(r, "header", &d->diag, err);
		goto done;
	}
	/* the container's size, before any AV1 data is decoded */
	if ((rc = image_check_limits(lim, d->image->width, d->image->height, "avif", err)))
		goto done;
	avifTransferCharacteristics tc = d->image->transferCharacteristics;
	if (tc == AVIF_TRANSFER_CHARACTERISTICS_SMPTE2084 || tc == AVIF_TRANSFER_CHARACTERISTICS_HLG) {
		rc = image_fail(err, IMAGE_E_UNSUPPORTED, "avif: %s (HDR) transfer is not supported",
				tc == AVIF_TRANSFER_CHARACTERISTICS_HLG ? "HLG" : "PQ");
		goto done;
	}
	r = avifDecoderNextImage(d);
	if (r != AVIF_RESULT_OK) {
		rc = avif_error(r, "image data", &d->diag, err);
		goto done;
	}
	const avifImage *im = d->image;
	if (im->icc.size)
		image_colour_set_icc(info, im->icc.data, im->icc.size);
	else
		image_colour_set_cicp(info, im->colorPrimaries, im->transferCharacteristics,
				      im->matrixCoefficients, im->yuvRange == AVIF_RANGE_FULL);
	/* the frame's size is the one converted: checked again (the hook sees the latest size) */
	if ((rc = image_check_limits(lim, im->width, im->height, "avif", err)))
		goto done;
	int gray = im->yuvFormat == AVIF_PIXEL_FORMAT_YUV400, alpha = im->alphaPlane != NULL;
	int ch = (gray ? 1 : 3) + alpha, deep = im->depth > 8;
	avifRGBImageSetDefaults(&rgb, im);
	rgb.format = alpha ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
	rgb.depth = deep ? 16 : 8; /* 10 and 12 bits rescaled to 16 by libavif */
	int rch = alpha ? 4 : 3;
	size_t w = im->width, h = im->height, bps = deep ? 2 : 1;
	rgb.rowBytes = (uint32_t)(w * (size_t)rch * bps);
	rgb.pixels = malloc((size_t)rgb.rowBytes * h);
	if (!rgb.pixels) {
		rc = image_fail(err, IMAGE_E_NOMEM, "avif: cannot allocate %zu bytes",
				(size_t)rgb.rowBytes * h);
		goto done;
	}
	r = avifImageYUVToRGB(im, &rgb);
	if (r != AVIF_RESULT_OK) {
		rc = avif_error(r, "colour conversion", NULL, err);
		goto done;
	}
	if ((rc = image_alloc(out, (int)w, (int)h, ch))) {
		rc = image_fail(err, rc, "avif: cannot allocate %zux%zu pixels", w, h);
		goto done;
	}
	const float *t8 = colour_srgb8_table(), *t16 = colour_srgb16_table();
	float *px = out->pixels;
	int colour = gray ? 1 : 3;
	for (size_t y = 0; y < h; y++) {
		const unsigned char *row = rgb.pixels + y * rgb.rowBytes;
		for (size_t x = 0; x < w; x++, px += ch) {
			for (int c = 0; c < colour; c++) {
				if (deep) {
					uint16_t v;
					memcpy(&v, row + (x * (size_t)rch + (size_t)c) * 2, 2);
					px[c] = t16[v];
				} else {
					px[c] = t8[row[x * (size_t)rch + (size_t)c]];
				}
			}
			if (alpha) {
				if (deep) {
					uint16_t v;
					memcpy(&v, row + (x * 4 + 3) * 2, 2);
					px[ch - 1] = (float)v / 65535.0f;
				} else {
					px[ch - 1] = (float)row[x * 4 + 3] / 255.0f;
				}
			}
		}
	}
	info->bits = (int)im->depth;
	info->channels = ch;
	rc = 0;
done:
	if (rc)
		image_free(out);
	free(rgb.pixels);
	avifDecoderDestroy(d);
	return rc;
}

int image_encode_avif(const struct image *img, const struct image_encode_opts *o,
		      unsigned char **out, size_t *out_len, unsigned *lost, char *err)
{
	if (o->quality < 1 || o->quality > 100)
		return image_fail(err, IMAGE_E_ARG, "avif: quality %d is not in 1-100", o->quality);
	int bits = o->bits ? o->bits : 8;
	if (bits != 8 && bits != 10 && bits != 12)
		return image_fail(err, IMAGE_E_ARG, "avif: %d bits per sample is not 8, 10 or 12",
				  bits);
	if (o->subsampling != 444 && o->subsampling != 420)
		return image_fail(err, IMAGE_E_ARG, "avif: subsampling %d is not 444 or 420",
				  o->subsampling);
	int speed = o->speed ? o->speed : AVIF_SPEED_OURS;
	if (speed < 1 || speed > 10)
		return image_fail(err, IMAGE_E_ARG, "avif: speed %d is not in 1-10", speed);
	if (img->width > 65536 || img->height > 65536)
		return image_fail(err, IMAGE_E_TOO_LARGE, "avif: %dx%d exceeds AV1's 65536 limit",
				  img->width, img->height);
	int lossless = o->quality == 100;
	int ch = img->channels, alpha = ch == 2 || ch == 4, colour = alpha ? ch - 1 : ch;
	avifPixelFormat pf = colour == 1 ? AVIF_PIXEL_FORMAT_YUV400
			     : lossless || o->subsampling == 444 ? AVIF_PIXEL_FORMAT_YUV444
								 : AVIF_PIXEL_FORMAT_YUV420;
	size_t w = (size_t)img->width, h = (size_t)img->height, rch = alpha ? 4 : 3;
	size_t bps = bits > 8 ? 2 : 1;
	uint32_t cols, rows, tw, th; /* a padded grid: 16 x 16 at most */
	int padded = avif_grid((uint32_t)w, (uint32_t)h, &pf, &cols, &rows, &tw, &th);
	uint32_t ncell = cols * rows;
	/* libavif 0.11.1 pads a narrower cell into a new image with its own defaults for the colour
	 * description (fixed in 1.0), which the decoder then finds unlike the other cells: with
	 * padding, every cell carries those defaults (primaries, transfer and matrix unspecified,
	 * which libavif reads as sRGB's and BT.709's), and lossless RGB is coded through that
	 * matrix at quantizer 0 (and reported as losing precision) */
	if (padded && lossless && colour != 1)
		lossless = 0;
	int rc = 0;
	avifEncoder *e = NULL;
	avifRWData data = AVIF_DATA_EMPTY;
	avifRGBImage rgb;
	memset(&rgb, 0, sizeof rgb);
	avifImage *cells[AVIF_GRID_MAX];
	memset(cells, 0, sizeof cells);
	avifImage *im = avifImageCreate((uint32_t)w, (uint32_t)h, (uint32_t)bits, pf);
	if (!im)
		return image_fail(err, IMAGE_E_NOMEM, "avif: cannot create an image");
	if (!padded) { /* else avifImageCreate's defaults, as the padded cells' */
		im->colorPrimaries = AVIF_COLOR_PRIMARIES_BT709;
		im->transferCharacteristics = AVIF_TRANSFER_CHARACTERISTICS_SRGB;
	}
	/* lossless keeps RGB as it is (identity: G, B, R in the Y, U, V planes); gray has Y only */
	im->matrixCoefficients = lossless && colour != 1 ? AVIF_MATRIX_COEFFICIENTS_IDENTITY
			       : padded			 ? AVIF_MATRIX_COEFFICIENTS_UNSPECIFIED
							 : AVIF_MATRIX_COEFFICIENTS_BT601;
	im->yuvRange = AVIF_RANGE_FULL;
	const struct image_colour *oc = o->colour;
	if (oc && !oc->srgb && oc->icc) {
		avifImageSetProfileICC(im, oc->icc, oc->icc_len);
	} else if (oc && !oc->srgb && oc->cicp && !padded) {
		im->colorPrimaries = (avifColorPrimaries)oc->primaries;
		im->transferCharacteristics = (avifTransferCharacteristics)oc->transfer;
	}

	avifRGBImageSetDefaults(&rgb, im);
	rgb.format = alpha ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
	rgb.depth = (uint32_t)bits;
	rgb.rowBytes = (uint32_t)(w * rch * bps);
	rgb.pixels = malloc((size_t)rgb.rowBytes * h);
	if (!rgb.pixels) {
		rc = image_fail(err, IMAGE_E_NOMEM, "avif: cannot allocate %zu bytes",
				(size_t)rgb.rowBytes * h);
		goto done;
	}
	const float *t8 = colour_srgb8_table();
	const struct colour_srgb8_lut *lut = colour_srgb8_lut();
	const unsigned maxc = (1u << bits) - 1;
	const float *s = img->pixels;
	int inexact = bits > 8; /* 10 and 12-bit codes are read back through 16-bit ones */
	for (size_t y = 0; y < h; y++) {
		unsigned char *row = rgb.pixels + y * rgb.rowBytes;
		for (size_t x = 0; x < w; x++, s += ch) {
			unsigned code[4];
			for (int c = 0; c < colour; c++) {
				float v = image_clip01(s[c], lost);
				if (bits == 8) {
					code[c] = o->dither ? colour_linear_to_srgb8_dither(
								      v, (unsigned)x, (unsigned)y)
							    : colour_srgb8_fast(lut, v);
					inexact |= t8[code[c]] != v;
				} else {
					code[c] = colour_linear_to_srgb_max(v, maxc);
				}
			}
			for (int c = colour; c < 3; c++)
				code[c] = code[0];
			if (alpha) {
				float v = image_clip01(s[ch - 1], lost);
				code[3] = (unsigned)((double)v * maxc + 0.5); /* in double: exact ties */
				inexact |= (float)code[3] / (float)maxc != v;
			}
			for (size_t c = 0; c < rch; c++) {
				if (bps == 1) {
					row[x * rch + c] = (unsigned char)code[c];
				} else {
					uint16_t u = (uint16_t)code[c];
					memcpy(row + (x * rch + c) * 2, &u, 2);
				}
			}
		}
	}
	/* lossy coding always loses; lossless only what the integer codes could not hold */
	if (inexact || !lossless)
		*lost |= IMAGE_LOST_PRECISION;
	avifResult r = AVIF_RESULT_OK;
	if (ncell == 1) {
		r = avifImageRGBToYUV(im, &rgb);
	} else {
		/* each cell converted from its window of the RGB rows: cells start on even pixels,
		 * so 4:2:0's chroma is what the whole image's would be */
		for (uint32_t i = 0; i < ncell && r == AVIF_RESULT_OK; i++) {
			uint32_t x0 = (i % cols) * tw, y0 = (i / cols) * th;
			uint32_t cw = i % cols == cols - 1 ? (uint32_t)w - x0 : tw;
			uint32_t chh = i / cols == rows - 1 ? (uint32_t)h - y0 : th;
			cells[i] = avifImageCreate(cw, chh, (uint32_t)bits, pf);
			if (!cells[i]) {
				rc = image_fail(err, IMAGE_E_NOMEM, "avif: cannot create a grid cell");
				goto done;
			}
			cells[i]->colorPrimaries = im->colorPrimaries;
			cells[i]->transferCharacteristics = im->transferCharacteristics;
			cells[i]->matrixCoefficients = im->matrixCoefficients;
			cells[i]->yuvRange = im->yuvRange;
			if (im->icc.size)
				avifImageSetProfileICC(cells[i], im->icc.data, im->icc.size);
			avifRGBImage crgb = rgb;
			crgb.width = cw;
			crgb.height = chh;
			crgb.pixels = rgb.pixels + (size_t)y0 * rgb.rowBytes + (size_t)x0 * rch * bps;
			r = avifImageRGBToYUV(cells[i], &crgb);
		}
	}
	if (r != AVIF_RESULT_OK) {
		rc = avif_error(r, "colour conversion", NULL, err);
		goto done;
	}
	e = avifEncoderCreate();
	if (!e) {
		rc = image_fail(err, IMAGE_E_NOMEM, "avif: cannot create an encoder");
		goto done;
	}
	/* libaom where libavif has it (Debian's does, and picks it first): the speeds measured */
	if (avifCodecName(AVIF_CODEC_CHOICE_AOM, AVIF_CODEC_FLAG_CAN_ENCODE))
		e->codecChoice = AVIF_CODEC_CHOICE_AOM;
	e->maxThreads = 1; /* a server encodes several answers at once, one a thread */
	e->speed = speed;
	/* libavif 1.x's quality: quantizer ((100 - q) * 63 + 50) / 100; 100 -> 0, lossless */
	int qz = ((100 - o->quality) * 63 + 50) / 100;
	e->minQuantizer = e->maxQuantizer = qz;
	e->minQuantizerAlpha = e->maxQuantizerAlpha = AVIF_QUANTIZER_LOSSLESS; /* as avifenc */
	if (ncell == 1) {
		r = avifEncoderWrite(e, im, &data);
	} else {
		r = avifEncoderAddImageGrid(e, cols, rows, (const avifImage *const *)cells,
					    AVIF_ADD_IMAGE_FLAG_SINGLE);
		if (r == AVIF_RESULT_OK)
			r = avifEncoderFinish(e, &data);
	}
	if (r != AVIF_RESULT_OK) {
		rc = avif_error(r, "encoding", &e->diag, err);
		if (rc == IMAGE_E_CORRUPT)
			rc = IMAGE_E_ARG;
		goto done;
	}
	*out = malloc(data.size);
	if (!*out) {
		rc = image_fail(err, IMAGE_E_NOMEM, "avif: cannot allocate %zu bytes", data.size);
		goto done;
	}
	memcpy(*out, data.data, data.size);
	*out_len = data.size;
done:
	avifRWDataFree(&data);
	if (e)
		avifEncoderDestroy(e);
	free(rgb.pixels);
	for (uint32_t i = 0; i < ncell; i++)
		if (cells[i])
			avifImageDestroy(cells[i]);
	avifImageDestroy(im);
	return rc;
}
