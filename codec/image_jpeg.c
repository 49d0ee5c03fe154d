/* JPEG through libjpeg-turbo's TurboJPEG API: gray, YCbCr/RGB and CMYK/YCCK on read, with the
 * EXIF orientation applied; gray or RGB on write with a quality and 4:4:4 or 4:2:0 chroma.
 * CMYK is taken as Adobe stores it (inverted), as ImageMagick and Photoshop write it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#include "codec/colour.h"
#include "codec/icc.h"
#include "codec/image_codec.h"

/* The next segment with a length before the scan from *p: 1 with its marker *m, its data *s
 * (*n bytes, past the length) and *p moved past it; 0 at the scan, the end of the image, or
 * a length that does not fit. Fill bytes and markers without a length are stepped over.
 * Bounds-checked: the bytes are untrusted. */
static int jpeg_segment(const unsigned char *b, size_t len, size_t *p, unsigned *m,
			const unsigned char **s, size_t *n)
{
	while (*p + 4 <= len && b[*p] == 0xff) {
		*m = b[*p + 1];
		if (*m == 0xd8 || (*m >= 0xd0 && *m <= 0xd7) || *m == 0x01 || *m == 0xff) {
			*p += *m == 0xff ? 1 : 2;
			continue;
		}
		if (*m == 0xda || *m == 0xd9)
			return 0;
		size_t seg = (size_t)b[*p + 2] << 8 | b[*p + 3];
		if (seg < 2 || seg > len - *p - 2)
			return 0;
		*s = b + *p + 4;
		*n = seg - 2;
		*p += 2 + seg;
		return 1;
	}
	return 0;
}

/* EXIF orientation (1-8) from the first APP1 "Exif" segment before the image data; 1 if none
 * or unreadable. Bounds-checked throughout: the segment is untrusted. */
static int exif_orientation(const unsigned char *b, size_t len)
{
	size_t p = 2, n;
	unsigned m;
	const unsigned char *s;
	while (jpeg_segment(b, len, &p, &m, &s, &n)) {
		if (m == 0xe1 && n >= 14 && !memcmp(s, "Exif\0\0", 6)) {
			const unsigned char *t = s + 6; /* TIFF header */
			size_t tn = n - 6;
			int le;
			if (!memcmp(t, "II*\0", 4))
				le = 1;
			else if (!memcmp(t, "MM\0*", 4))
				le = 0;
			else
				return 1;
#define RD16(q) (le ? (unsigned)(q)[0] | (unsigned)(q)[1] << 8 : (unsigned)(q)[1] | (unsigned)(q)[0] << 8)
#define RD32(q) (le ? (size_t)(q)[0] | (size_t)(q)[1] << 8 | (size_t)(q)[2] << 16 | (size_t)(q)[3] << 24 \
		    : (size_t)(q)[3] | (size_t)(q)[2] << 8 | (size_t)(q)[1] << 16 | (size_t)(q)[0] << 24)
			size_t ifd = RD32(t + 4);
			if (ifd > tn || tn - ifd < 2)
				return 1;
			unsigned count = RD16(t + ifd);
			for (unsigned i = 0; i < count; i++) {
				size_t e = ifd + 2 + (size_t)i * 12;
				if (e > tn || tn - e < 12)
					return 1;
				if (RD16(t + e) == 0x0112 && RD16(t + e + 2) == 3) { /* SHORT */
					unsigned v = RD16(t + e + 8);
					return v >= 1 && v <= 8 ? (int)v : 1;
				}
			}
#undef RD16
#undef RD32
			return 1;
		}
	}
	return 1;
}

/* Applies orientation o to in (w x h) into out, whose size is already swapped for 5-8. */
static void orient(const float *in, int w, int h, int ch, int o, float *out)
{
	int ow = o >= 5 ? h : w, oh = o >= 5 ? w : h;
	for (int y = 0; y < oh; y++)
		for (int x = 0; x < ow; x++) {
			int sx, sy;
			switch (o) {
			case 2: sx = w - 1 - x; sy = y; break;
			case 3: sx = w - 1 - x; sy = h - 1 - y; break;
			case 4: sx = x; sy = h - 1 - y; break;
			case 5: sx = y; sy = x; break;
			case 6: sx = y; sy = h - 1 - x; break;
			case 7: sx = w - 1 - y; sy = h - 1 - x; break;
			case 8: sx = w - 1 - y; sy = x; break;
			default: sx = x; sy = y; break;
			}
			memcpy(out + ((size_t)y * ow + x) * ch, in + ((size_t)sy * w + sx) * ch,
			       (size_t)ch * sizeof(float));
		}
}

/* After a failed TurboJPEG decode call of buf: 0 for a warning that leaves the pixels whole,
 * else the error with its message. libjpeg goes on after a warning, padding what it could not
 * decode with gray, which we do not pass off as the picture: only warnings about stray bytes
 * between segments or an odd JFIF version are let by. TurboJPEG keeps the first warning only,
 * so after one of those the file's scans are read again through an error manager that sees
 * them all (image_jpeg_scans_check). */
static int decode_failure(tjhandle tj, const unsigned char *buf, size_t len, char *err)
{
	const char *m = tjGetErrorStr2(tj);
	if (tjGetErrorCode(tj) == TJERR_FATAL)
		return image_fail(err, IMAGE_E_CORRUPT, "jpeg: %s", m);
	if (strstr(m, "Premature end"))
		return image_fail(err, IMAGE_E_TRUNCATED, "jpeg: image data truncated: %s", m);
	if (!strstr(m, "extraneous bytes") && !strstr(m, "JFIF"))
		return image_fail(err, IMAGE_E_CORRUPT, "jpeg: %s", m);
	return image_jpeg_scans_check(buf, len, err);
}

/* A JPEG's header through the decoder tj, its EXIF orientation, and the oriented size checked
 * against lim: 0 or the error with its message. */
struct jpeg_header {
	int w, h, subsamp, cs, orientation;
};

static int read_header(tjhandle tj, const unsigned char *buf, size_t len,
		       const struct image_limits *lim, struct jpeg_header *hd, char *err)
{
	hd->w = hd->h = 0, hd->subsamp = hd->cs = -1;
	if (tjDecompressHeader3(tj, buf, (unsigned long)len, &hd->w, &hd->h, &hd->subsamp, &hd->cs)) {
		const char *m = tjGetErrorStr2(tj);
		return image_fail(err, len < 200 && strstr(m, "end") ? IMAGE_E_TRUNCATED : IMAGE_E_CORRUPT,
				  "jpeg: header: %s", m);
	}
	int o = hd->orientation = exif_orientation(buf, len);
	return image_check_limits(lim, (unsigned long long)(o >= 5 ? hd->h : hd->w),
				  (unsigned long long)(o >= 5 ? hd->w : hd->h), "jpeg", err);
}

/* A decoder for buf, its header read and checked against lim (read_header). Returns 0 with the
 * decoder in *tj (the caller destroys it), or an image_error with err and no decoder. */
static int open_decoder(const unsigned char *buf, size_t len, const struct image_limits *lim,
			tjhandle *tj, struct jpeg_header *hd, char *err)
{
	*tj = NULL;
	if (len > (unsigned long)-1)
		return image_fail(err, IMAGE_E_TOO_LARGE, "jpeg: file too large");
	*tj = tjInitDecompress();
	if (!*tj)
		return image_fail(err, IMAGE_E_NOMEM, "jpeg: cannot create a decoder");
	int rc = read_header(*tj, buf, len, lim, hd, err);
	if (rc) {
		tjDestroy(*tj);
		*tj = NULL;
	}
	return rc;
}

#define ICC_SIG "ICC_PROFILE" /* with its NUL: 12 bytes, then sequence number and count */
#define ICC_SEG_MAX 65519       /* profile bytes in one APP2 segment (65535 - 2 - 14) */

int image_jpeg_icc(const unsigned char *b, size_t len, unsigned char **icc, size_t *icc_len,
		   const char **note)
{
	size_t at[256] = {0}, n[256] = {0}, total = 0;
	int count = 0, seen = 0;
	*icc = NULL;
	*icc_len = 0;
	*note = NULL;
	size_t p = 2, sn;
	unsigned m;
	const unsigned char *s;
	while (jpeg_segment(b, len, &p, &m, &s, &sn)) {
		if (m != 0xe2 || sn <= 14 || memcmp(s, ICC_SIG, 12))
			continue;
		int seq = s[12], cnt = s[13];
		if (!seq || !cnt || seq > cnt || (count && cnt != count) || n[seq]) {
			*note = "inconsistent APP2 ICC_PROFILE segments: the profile was ignored";
			return 0;
		}
		count = cnt;
		at[seq] = (size_t)(s + 14 - b);
		n[seq] = sn - 14;
		total += sn - 14;
		seen++;
	}
	if (!seen)
		return 0;
	if (seen != count) {
		*note = "APP2 ICC_PROFILE segments are missing: the profile was ignored";
		return 0;
	}
	unsigned char *q = malloc(total);
	if (!q)
		return IMAGE_E_NOMEM;
	size_t o = 0;
	for (int i = 1; i <= count; i++) {
		memcpy(q + o, b + at[i], n[i]);
		o += n[i];
	}
	*icc = q;
	*icc_len = total;
	return 1;
}

int image_jpeg_add_icc(unsigned char **jpeg, size_t *len, const void *icc, size_t icc_len)
{
	const unsigned char *b = *jpeg;
	size_t nseg = (icc_len + ICC_SEG_MAX - 1) / ICC_SEG_MAX;
	if (!b || *len < 4 || b[0] != 0xff || b[1] != 0xd8 || !icc || !icc_len || nseg > 255)
		return IMAGE_E_ARG;
	size_t at = 2; /* after SOI and a JFIF APP0 */
	if (*len >= 6 && b[2] == 0xff && b[3] == 0xe0) {
		size_t seg = (size_t)b[4] << 8 | b[5];
		if (seg + 4 <= *len)
			at = 4 + seg;
	}
	size_t add = icc_len + nseg * 18;
	unsigned char *q = malloc(*len + add);
	if (!q)
		return IMAGE_E_NOMEM;
	memcpy(q, b, at);
	size_t o = at;
	const unsigned char *src = icc;
	for (size_t i = 0; i < nseg; i++) {
		size_t k = icc_len - i * ICC_SEG_MAX < ICC_SEG_MAX ? icc_len - i * ICC_SEG_MAX
								    : ICC_SEG_MAX;
		size_t seg = k + 16;
		q[o++] = 0xff;
		q[o++] = 0xe2;
		q[o++] = (unsigned char)(seg >> 8);
		q[o++] = (unsigned char)seg;
		memcpy(q + o, ICC_SIG, 12);
		o += 12;
		q[o++] = (unsigned char)(i + 1);
		q[o++] = (unsigned char)nseg;
		memcpy(q + o, src + i * ICC_SEG_MAX, k);
		o += k;
	}
	memcpy(q + o, b + at, *len - at);
	free(*jpeg);
	*jpeg = q;
	*len += add;
	return 0;
}

/* 1 when the JPEG embeds a usable profile other than sRGB (its planes cannot carry it), 0
 * when not, IMAGE_E_NOMEM. */
static int icc_not_srgb(const unsigned char *buf, size_t len, int gray)
{
	struct image_colour c;
	const char *note;
	memset(&c, 0, sizeof c);
	int rc = image_jpeg_icc(buf, len, &c.icc, &c.icc_len, &note);
	if (rc <= 0)
		return rc;
	rc = icc_describe(&c, gray ? 1 : 3);
	if (!rc)
		rc = !c.srgb;
	image_colour_free(&c);
	return rc;
}

/* Hands the JPEG's ICC profile to info (image_colour_set_icc), or the reason it was ignored. */
static int jpeg_colour(const unsigned char *buf, size_t len, struct image_info *info)
{
	unsigned char *icc;
	size_t n;
	const char *note;
	if (!info->colour)
		return 0;
	int rc = image_jpeg_icc(buf, len, &icc, &n, &note);
	if (rc < 0)
		return rc;
	if (note)
		snprintf(info->colour->note, sizeof info->colour->note, "%s", note);
	if (rc == 1) {
		rc = image_colour_set_icc(info, icc, n);
		free(icc);
	}
	return rc;
}

int image_decode_jpeg(const unsigned char *buf, size_t len, const struct image_limits *lim,
		      struct image *out, struct image_info *info, char *err)
{
	unsigned char *raw = NULL;
	struct image tmp = { .pixels = NULL };
	tjhandle tj;
	struct jpeg_header hd;
	int rc = open_decoder(buf, len, lim, &tj, &hd, err);
	if (rc)
		return rc;
	int w = hd.w, h = hd.h, cs = hd.cs, o = hd.orientation;
	int pf, rawch, ch;
	if (cs == TJCS_GRAY) {
		pf = TJPF_GRAY;
		rawch = ch = 1;
	} else if (cs == TJCS_CMYK || cs == TJCS_YCCK) {
		pf = TJPF_CMYK;
		rawch = 4;
		ch = 3;
	} else {
		pf = TJPF_RGB;
		rawch = ch = 3;
	}
	size_t n = (size_t)w * (size_t)h;
	raw = malloc(n * (size_t)rawch);
	if (!raw) {
		rc = image_fail(err, IMAGE_E_NOMEM, "jpeg: cannot allocate %dx%d pixels", w, h);
		goto done;
	}
	if (tjDecompress2(tj, buf, (unsigned long)len, raw, w, w * rawch, h, pf,
			  TJFLAG_ACCURATEDCT | TJFLAG_LIMITSCANS) &&
	    (rc = decode_failure(tj, buf, len, err)))
		goto done;
	rc = image_alloc(&tmp, w, h, ch);
	if (rc) {
		rc = image_fail(err, rc, "jpeg: cannot allocate %dx%d pixels", w, h);
		goto done;
	}
	const float *t = colour_srgb8_table();
	if (pf == TJPF_CMYK) {
		for (size_t i = 0; i < n; i++) {
			const unsigned char *s = raw + i * 4;
			/* inverted CMYK: R = (255 - C)(255 - K) / 255 in stored form c' k' / 255 */
			for (int c = 0; c < 3; c++)
				tmp.pixels[i * 3 + c] = srgb_to_linear((float)(s[c] * s[3]) / (255.0f * 255.0f));
		}
	} else {
		for (size_t i = 0; i < n * (size_t)ch; i++)
			tmp.pixels[i] = t[raw[i]];
	}
	if (o == 1) {
		*out = tmp;
		tmp.pixels = NULL;
	} else {
		rc = image_alloc(out, o >= 5 ? h : w, o >= 5 ? w : h, ch);
		if (rc) {
			rc = image_fail(err, rc, "jpeg: cannot allocate %dx%d pixels", w, h);
			goto done;
		}
		orient(tmp.pixels, w, h, ch, o, out->pixels);
	}
	info->bits = 8;
	info->channels = rawch;
	info->orientation = o;
	if (pf != TJPF_CMYK && (rc = jpeg_colour(buf, len, info)))
		goto done;
	rc = 0;
done:
	if (rc)
		image_free(out);
	image_free(&tmp);
	free(raw);
	tjDestroy(tj);
	return rc;
}

/* What a JPEG is compressed from: packed 8-bit pixels (pixels: TurboJPEG pixel format pf, pitch
 * bytes a row) or, where pixels is NULL, YUV planes (planes, strides) laid out as libjpeg's. */
struct jpeg_source {
	const unsigned char *pixels;
	int pf, pitch;
	const unsigned char *planes[3];
	int strides[3];
};

/* Compresses the w x h source s, subsampled as subsamp, at quality, into a buffer made for the
 * largest JPEG of that size (so TurboJPEG never reallocates it). Returns 0 with the buffer in
 * *out (the caller frees it) and its length in *out_len, or IMAGE_E_NOMEM or IMAGE_E_ARG with
 * err. */
static int compress(struct jpeg_source *s, int w, int h, int subsamp, int quality,
		    unsigned char **out, size_t *out_len, char *err)
{
	unsigned long cap = tjBufSize(w, h, subsamp), jlen = cap;
	unsigned char *jpeg = cap != (unsigned long)-1 ? malloc(cap) : NULL;
	int rc = 0;
	tjhandle tj = jpeg ? tjInitCompress() : NULL;
	if (!tj) {
		rc = image_fail(err, IMAGE_E_NOMEM, "jpeg: cannot create an encoder");
		goto done;
	}
	if (s->pixels ? tjCompress2(tj, s->pixels, w, s->pitch, h, s->pf, &jpeg, &jlen, subsamp,
				    quality, TJFLAG_ACCURATEDCT | TJFLAG_NOREALLOC)
		      : tjCompressFromYUVPlanes(tj, s->planes, w, s->strides, h, subsamp, &jpeg,
						&jlen, quality, TJFLAG_ACCURATEDCT | TJFLAG_NOREALLOC)) {
		rc = image_fail(err, IMAGE_E_ARG, "jpeg: encoding: %s", tjGetErrorStr2(tj));
		goto done;
	}
	*out = jpeg;
	*out_len = jlen;
	jpeg = NULL;
done:
	if (tj)
		tjDestroy(tj);
	free(jpeg);
	return rc;
}

int image_encode_jpeg(const struct image *img, const struct image_encode_opts *o,
		      unsigned char **out, size_t *out_len, unsigned *lost, char *err)
{
	if (o->quality < 1 || o->quality > 100)
		return image_fail(err, IMAGE_E_ARG, "jpeg: quality %d is not in 1-100", o->quality);
	if (o->subsampling != 444 && o->subsampling != 420)
		return image_fail(err, IMAGE_E_ARG, "jpeg: subsampling %d is not 444 or 420",
				  o->subsampling);
	if (img->width > 65535 || img->height > 65535)
		return image_fail(err, IMAGE_E_TOO_LARGE, "jpeg: %dx%d exceeds JPEG's 65535 limit",
				  img->width, img->height);
	int ch = img->channels, gray = ch <= 2, jch = gray ? 1 : 3;
	if (ch == 2 || ch == 4)
		*lost |= IMAGE_LOST_ALPHA;
	*lost |= IMAGE_LOST_PRECISION;
	size_t w = (size_t)img->width, h = (size_t)img->height;
	unsigned char *raw = malloc(w * h * (size_t)jch);
	if (!raw)
		return image_fail(err, IMAGE_E_NOMEM, "jpeg: cannot allocate %zu bytes", w * h * jch);
	const struct colour_srgb8_lut *lut = colour_srgb8_lut();
	const float *s = img->pixels;
	unsigned char *q = raw;
	for (size_t y = 0; y < h; y++)
		for (size_t x = 0; x < w; x++, s += ch)
			for (int c = 0; c < jch; c++) {
				float v = image_clip01(s[c], lost);
				*q++ = o->dither ? colour_linear_to_srgb8_dither(v, (unsigned)x, (unsigned)y)
						 : colour_srgb8_fast(lut, v);
			}
	int subsamp = gray ? TJSAMP_GRAY : o->subsampling == 420 ? TJSAMP_420 : TJSAMP_444;
	struct jpeg_source src = { .pixels = raw, .pf = gray ? TJPF_GRAY : TJPF_RGB,
				   .pitch = (int)(w * jch) };
	int rc = compress(&src, (int)w, (int)h, subsamp, o->quality, out, out_len, err);
	free(raw);
	if (!rc && o->colour && o->colour->icc &&
	    (rc = image_jpeg_add_icc(out, out_len, o->colour->icc, o->colour->icc_len)))
		rc = image_fail(err, rc, "jpeg: cannot add the ICC profile");
	return rc;
}

int yuv_image_frame(struct yuv_image *y, int w, int h, int gray, int sub_x, int sub_y)
{
	memset(y, 0, sizeof *y);
	if (gray)
		sub_x = sub_y = 1;
	if (sub_x < 1 || sub_x > 2 || sub_y < 1 || sub_y > 2)
		return IMAGE_E_ARG;
	if (w < 1 || h < 1)
		return IMAGE_E_EMPTY;
	if (w > 65535 || h > 65535)
		return IMAGE_E_TOO_LARGE;
	y->width = w, y->height = h, y->gray = gray;
	y->sub_x = sub_x, y->sub_y = sub_y;
	y->orientation = 1;
	return 0;
}

int yuv_image_layout(struct yuv_image *y, int w, int h, int gray, int sub_x, int sub_y)
{
	int rc = yuv_image_frame(y, w, h, gray, sub_x, sub_y);
	if (rc)
		return rc;
	sub_x = y->sub_x, sub_y = y->sub_y;
	size_t at = 0;
	for (int p = 0; p < (gray ? 1 : 3); p++) {
		/* as libjpeg: luma padded to whole chroma blocks, chroma the ceiling */
		y->pw[p] = (w + sub_x - 1) / sub_x * (p ? 1 : sub_x);
		y->ph[p] = (h + sub_y - 1) / sub_y * (p ? 1 : sub_y);
		y->stride[p] = (y->pw[p] + 3) & ~3;
		y->offset[p] = at;
		at += (size_t)y->stride[p] * (size_t)y->ph[p];
	}
	y->bytes = at;
	return 0;
}

int yuv_image_alloc(struct yuv_image *y, int w, int h, int gray, int sub_x, int sub_y)
{
	int rc = yuv_image_layout(y, w, h, gray, sub_x, sub_y);
	if (rc)
		return rc;
	y->data = malloc(y->bytes);
	if (!y->data) {
		memset(y, 0, sizeof *y);
		return IMAGE_E_NOMEM;
	}
	return 0;
}

size_t yuv_image_used_bytes(const struct yuv_image *y)
{
	return y->coefs ? y->coef_bytes : y->bytes;
}

void yuv_image_free(struct yuv_image *y)
{
	if (!y)
		return;
	if (y->release)
		y->release(y->owner);
	else
		free(y->data);
	memset(y, 0, sizeof *y);
}

int image_decode_jpeg_yuv(const void *buf, size_t len, const struct image_limits *lim,
			  struct yuv_image *out, struct image_info *info, char err[IMAGE_ERR_LEN])
{
	return image_decode_jpeg_yuv_into(buf, len, lim, NULL, out, info, err);
}

/* Planes laid out for w x h into out: in memory mem lends, else malloc'd. 0 or an image_error. */
static int planes_alloc(const struct yuv_memory *mem, struct yuv_image *out, int w, int h,
			int gray, int sx, int sy)
{
	if (!mem || !mem->alloc)
		return yuv_image_alloc(out, w, h, gray, sx, sy);
	int rc = yuv_image_layout(out, w, h, gray, sx, sy);
	if (rc)
		return rc;
	void *owner = NULL;
	unsigned char *m = mem->alloc(mem->ctx, out->bytes, &owner);
	if (!m) {
		out->data = malloc(out->bytes);
		if (!out->data) {
			memset(out, 0, sizeof *out);
			return IMAGE_E_NOMEM;
		}
		return 0;
	}
	out->data = m;
	out->release = mem->release;
	out->owner = owner;
	return 0;
}

/* The planes, or with coefs the coefficients where they pack. */
static int decode_yuv(const void *buf, size_t len, const struct image_limits *lim,
		      const struct yuv_memory *mem, struct yuv_image *out, struct image_info *info,
		      int coefs, char err[IMAGE_ERR_LEN])
{
	struct image_limits dl = { .max_pixels = 0 };
	struct image_info li;
	memset(out, 0, sizeof *out);
	if (!info)
		info = &li;
	memset(info, 0, sizeof *info);
	if (!lim)
		lim = &dl;
	if (image_sniff(buf, len) != IMAGE_FORMAT_JPEG)
		return image_fail(err, IMAGE_E_UNSUPPORTED, "jpeg planes: not a JPEG");
	tjhandle tj;
	struct jpeg_header hd;
	int rc = open_decoder(buf, len, lim, &tj, &hd, err);
	if (rc)
		return rc;
	int w = hd.w, h = hd.h, subsamp = hd.subsamp, cs = hd.cs, o = hd.orientation;
	int sx, sy, gray = 0;
	switch (subsamp) {
	case TJSAMP_GRAY: gray = 1, sx = sy = 1; break;
	case TJSAMP_444: sx = sy = 1; break;
	case TJSAMP_422: sx = 2, sy = 1; break;
	case TJSAMP_420: sx = sy = 2; break;
	case TJSAMP_440: sx = 1, sy = 2; break;
	default:
		rc = image_fail(err, IMAGE_E_UNSUPPORTED, "jpeg planes: subsampling %d not carried",
				subsamp);
		goto done;
	}
	if (cs == TJCS_CMYK || cs == TJCS_YCCK || (!gray && cs != TJCS_YCbCr)) {
		rc = image_fail(err, IMAGE_E_UNSUPPORTED, "jpeg planes: colour space %d not carried",
				cs);
		goto done;
	}
	if ((rc = icc_not_srgb(buf, len, gray))) {
		if (rc > 0)
			rc = image_fail(err, IMAGE_E_UNSUPPORTED, "jpeg planes: a profile other than "
					"sRGB is converted on the CPU");
		goto done;
	}
	if (coefs == 2) { /* the scan for the GPU; libjpeg's coefficients for what it does not take */
		rc = image_jpeg_scan_prepare(buf, len, w, h, gray, sx, sy, mem, out, err);
		if (rc <= 0)
			goto decoded;
	}
	if (coefs) {
		rc = image_jpeg_coefs(buf, len, w, h, gray, sx, sy, mem, out, err);
		if (rc <= 0)
			goto decoded;
	}
	rc = planes_alloc(mem, out, w, h, gray, sx, sy);
	if (rc) {
		rc = image_fail(err, rc, "jpeg: cannot allocate %dx%d planes", w, h);
		goto done;
	}
	/* the library's plane sizes must be the ones the planes were laid out for */
	for (int p = 0; p < (gray ? 1 : 3); p++)
		if (tjPlaneWidth(p, w, subsamp) != out->pw[p] || tjPlaneHeight(p, h, subsamp) != out->ph[p]) {
			rc = image_fail(err, IMAGE_E_UNSUPPORTED, "jpeg planes: unexpected plane size");
			goto done;
		}
	unsigned char *planes[3] = { out->data, NULL, NULL };
	int strides[3] = { out->stride[0], 0, 0 };
	for (int p = 1; p < 3 && !gray; p++)
		planes[p] = out->data + out->offset[p], strides[p] = out->stride[p];
	if (tjDecompressToYUVPlanes(tj, buf, (unsigned long)len, planes, w, strides, h,
				    TJFLAG_ACCURATEDCT | TJFLAG_LIMITSCANS) &&
	    (rc = decode_failure(tj, buf, len, err)))
		goto done;
	rc = 0;
decoded:
	if (rc)
		goto done;
	out->orientation = o;
	info->format = IMAGE_FORMAT_JPEG;
	info->bits = 8;
	info->channels = gray ? 1 : 3;
	info->orientation = o;
	info->width = o >= 5 ? h : w;
	info->height = o >= 5 ? w : h;
	rc = 0;
done:
	if (rc)
		yuv_image_free(out);
	tjDestroy(tj);
	return rc;
}

int image_decode_jpeg_yuv_into(const void *buf, size_t len, const struct image_limits *lim,
			       const struct yuv_memory *mem, struct yuv_image *out,
			       struct image_info *info, char err[IMAGE_ERR_LEN])
{
	return decode_yuv(buf, len, lim, mem, out, info, 0, err);
}

int image_decode_jpeg_coefs_into(const void *buf, size_t len, const struct image_limits *lim,
				 const struct yuv_memory *mem, struct yuv_image *out,
				 struct image_info *info, char err[IMAGE_ERR_LEN])
{
	return decode_yuv(buf, len, lim, mem, out, info, 1, err);
}

int image_decode_jpeg_scan_into(const void *buf, size_t len, const struct image_limits *lim,
				const struct yuv_memory *mem, struct yuv_image *out,
				struct image_info *info, char err[IMAGE_ERR_LEN])
{
	return decode_yuv(buf, len, lim, mem, out, info, 2, err);
}

/* One chroma plane upsampled to the luma grid (cw x ch samples to (cw * sx) x (ch * sy)) as
 * libjpeg's decoder does it: its "fancy" triangle filters (jdsample.c: h2v1, h2v2 with 9-3-3-1
 * weights, h1v2) with their integer rounding and edge rules; replication for horizontally
 * halved planes at most 2 samples wide, which libjpeg does not filter. */
static void upsample(const unsigned char *in, int stride, int cw, int ch, int sx, int sy,
		     unsigned char *out, int ow)
{
	int fancy = sx == 1 || cw > 2;
	for (int r = 0; r < ch * sy; r++) {
		int y = r / sy, v = r % sy;
		const unsigned char *i0 = in + (size_t)y * stride;
		/* the neighbouring row: above for the upper output row, below for the lower;
		 * replicated at the plane's top and bottom */
		int ny = v == 0 ? (y > 0 ? y - 1 : 0) : (y + 1 < ch ? y + 1 : ch - 1);
		const unsigned char *i1 = in + (size_t)ny * stride;
		unsigned char *o = out + (size_t)r * ow;
		if (!fancy || (sx == 1 && sy == 1)) {
			for (int x = 0; x < cw * sx; x++)
				o[x] = i0[x / sx];
		} else if (sy == 1) { /* h2v1 */
			o[0] = i0[0];
			o[1] = (unsigned char)((i0[0] * 3 + i0[1] + 2) >> 2);
			for (int x = 1; x < cw - 1; x++) {
				int c = i0[x] * 3;
				o[2 * x] = (unsigned char)((c + i0[x - 1] + 1) >> 2);
				o[2 * x + 1] = (unsigned char)((c + i0[x + 1] + 2) >> 2);
			}
			o[2 * cw - 2] = (unsigned char)((i0[cw - 1] * 3 + i0[cw - 2] + 1) >> 2);
			o[2 * cw - 1] = i0[cw - 1];
		} else if (sx == 1) { /* h1v2 */
			int bias = v == 0 ? 1 : 2;
			for (int x = 0; x < cw; x++)
				o[x] = (unsigned char)((i0[x] * 3 + i1[x] + bias) >> 2);
		} else { /* h2v2 */
			int last, cur = i0[0] * 3 + i1[0], next = i0[1] * 3 + i1[1];
			o[0] = (unsigned char)((cur * 4 + 8) >> 4);
			o[1] = (unsigned char)((cur * 3 + next + 7) >> 4);
			last = cur, cur = next;
			for (int x = 1; x < cw - 1; x++) {
				next = i0[x + 1] * 3 + i1[x + 1];
				o[2 * x] = (unsigned char)((cur * 3 + last + 8) >> 4);
				o[2 * x + 1] = (unsigned char)((cur * 3 + next + 7) >> 4);
				last = cur, cur = next;
			}
			o[2 * cw - 2] = (unsigned char)((cur * 3 + last + 8) >> 4);
			o[2 * cw - 1] = (unsigned char)((cur * 4 + 7) >> 4);
		}
	}
}

int image_from_yuv(const struct yuv_image *y, struct image *out, char err[IMAGE_ERR_LEN])
{
	memset(out, 0, sizeof *out);
	if (!y || !y->data || y->width < 1 || y->height < 1)
		return image_fail(err, IMAGE_E_EMPTY, "planes: empty");
	if (y->coefs) { /* their planes first */
		struct yuv_image planes;
		int rc = yuv_coefs_to_planes(y, &planes);
		if (rc)
			return image_fail(err, rc, "planes: the coefficients' inverse DCT failed");
		rc = image_from_yuv(&planes, out, err);
		yuv_image_free(&planes);
		return rc;
	}
	int w = y->width, h = y->height, ch = y->gray ? 1 : 3, o = y->orientation;
	int sx = y->gray ? 1 : y->sub_x, sy = y->gray ? 1 : y->sub_y;
	if (sx < 1 || sx > 2 || sy < 1 || sy > 2)
		return image_fail(err, IMAGE_E_ARG, "planes: subsampling %dx%d", sx, sy);
	/* libjpeg's chroma planes are ceil(w / sx) x ceil(h / sy); upsampled, they cover the
	 * luma plane's whole chroma blocks */
	int cw = (w + sx - 1) / sx, chh = (h + sy - 1) / sy, uw = cw * sx;
	size_t n = (size_t)w * (size_t)h;
	struct image tmp = { .pixels = NULL };
	unsigned char *up = y->gray ? NULL : malloc((size_t)uw * chh * sy * 2);
	int rc = y->gray || up ? image_alloc(&tmp, w, h, ch) : IMAGE_E_NOMEM;
	if (rc) {
		free(up);
		return image_fail(err, rc, "planes: cannot allocate %dx%d pixels", w, h);
	}
	const float *t = colour_srgb8_table();
	const unsigned char *yp = y->data + y->offset[0];
	if (y->gray) {
		for (int r = 0; r < h; r++)
			for (int x = 0; x < w; x++)
				tmp.pixels[(size_t)r * w + x] = t[yp[(size_t)r * y->stride[0] + x]];
	} else {
		unsigned char *cb = up, *cr = up + (size_t)uw * chh * sy;
		upsample(y->data + y->offset[1], y->stride[1], cw, chh, sx, sy, cb, uw);
		upsample(y->data + y->offset[2], y->stride[2], cw, chh, sx, sy, cr, uw);
		/* libjpeg's integer JFIF YCbCr -> RGB (jdcolor.c: 16-bit fixed point tables) */
		enum { SCALE = 16 };
		const long half = 1L << (SCALE - 1);
#define FIXED(x) ((long)((x) * (1L << SCALE) + 0.5))
		for (int r = 0; r < h; r++)
			for (int x = 0; x < w; x++) {
				int Y = yp[(size_t)r * y->stride[0] + x];
				long b = cb[(size_t)r * uw + x] - 128, c = cr[(size_t)r * uw + x] - 128;
				long rr = Y + ((FIXED(1.40200) * c + half) >> SCALE);
				long gg = Y + ((-FIXED(0.34414) * b - FIXED(0.71414) * c + half) >> SCALE);
				long bb = Y + ((FIXED(1.77200) * b + half) >> SCALE);
				float *d = tmp.pixels + ((size_t)r * w + x) * 3;
				d[0] = t[rr < 0 ? 0 : rr > 255 ? 255 : rr];
				d[1] = t[gg < 0 ? 0 : gg > 255 ? 255 : gg];
				d[2] = t[bb < 0 ? 0 : bb > 255 ? 255 : bb];
			}
#undef FIXED
	}
	free(up);
	(void)n;
	if (o <= 1) {
		*out = tmp;
		return 0;
	}
	rc = image_alloc(out, o >= 5 ? h : w, o >= 5 ? w : h, ch);
	if (rc) {
		image_free(&tmp);
		return image_fail(err, rc, "planes: cannot allocate %dx%d pixels", w, h);
	}
	orient(tmp.pixels, w, h, ch, o, out->pixels);
	image_free(&tmp);
	return 0;
}

int image_encode_jpeg_yuv(const struct yuv_image *y, int quality, unsigned char **out,
			  size_t *out_len, char err[IMAGE_ERR_LEN])
{
	if (quality < 1 || quality > 100)
		return image_fail(err, IMAGE_E_ARG, "jpeg: quality %d is not in 1-100", quality);
	if (y->dct_quality)
		return image_encode_jpeg_dct(y, quality, out, out_len, err);
	int subsamp;
	if (y->gray)
		subsamp = TJSAMP_GRAY;
	else if (y->sub_x == 1)
		subsamp = y->sub_y == 1 ? TJSAMP_444 : TJSAMP_440;
	else
		subsamp = y->sub_y == 1 ? TJSAMP_422 : TJSAMP_420;
	if (!y->data || y->width < 1 || y->height < 1)
		return image_fail(err, IMAGE_E_ARG, "jpeg: empty planes");
	struct jpeg_source src = { .planes = { y->data }, .strides = { y->stride[0] } };
	for (int p = 1; p < 3 && !y->gray; p++)
		src.planes[p] = y->data + y->offset[p], src.strides[p] = y->stride[p];
	return compress(&src, y->width, y->height, subsamp, quality, out, out_len, err);
}
