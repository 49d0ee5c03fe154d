/* Images: the shared type, limits, sniffing, format names, file I/O and the dispatch to the
 * per-format codecs in image_<fmt>.c. */
#include "codec/image.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "codec/icc.h"
#include "codec/image_codec.h"

#define IMAGE_FILE_MAX ((size_t)8 << 30) /* a 16384x16384 float32 RGBA EXR is 4 GiB */

int image_fail(char *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, IMAGE_ERR_LEN, fmt, ap);
		va_end(ap);
	}
	return code;
}

int image_buf_put(struct image_buf *b, const void *data, size_t n)
{
	if (n > SIZE_MAX / 2 - b->len)
		return IMAGE_E_NOMEM;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n)
			cap *= 2;
		unsigned char *p = realloc(b->p, cap);
		if (!p)
			return IMAGE_E_NOMEM;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	return 0;
}

const char *image_strerror(int code)
{
	switch (code) {
	case IMAGE_OK: return "success";
	case IMAGE_E_ARG: return "invalid argument";
	case IMAGE_E_NOMEM: return "out of memory";
	case IMAGE_E_IO: return "i/o error";
	case IMAGE_E_UNSUPPORTED: return "unsupported image format";
	case IMAGE_E_CORRUPT: return "corrupt image data";
	case IMAGE_E_TRUNCATED: return "truncated image data";
	case IMAGE_E_TOO_LARGE: return "image too large";
	case IMAGE_E_BUSY: return "no room for the image now";
	case IMAGE_E_EMPTY: return "image has zero size";
	default: return "unknown image error";
	}
}

int image_alloc(struct image *img, int w, int h, int channels)
{
	if (!img)
		return IMAGE_E_ARG;
	memset(img, 0, sizeof *img);
	if (channels < 1 || channels > 4 || w < 0 || h < 0)
		return IMAGE_E_ARG;
	if (w == 0 || h == 0)
		return IMAGE_E_EMPTY;
	size_t n = (size_t)w;
	if (n > SIZE_MAX / (size_t)h / (size_t)channels / sizeof(float))
		return IMAGE_E_TOO_LARGE;
	n *= (size_t)h * (size_t)channels;
	img->pixels = calloc(n, sizeof(float));
	if (!img->pixels)
		return IMAGE_E_NOMEM;
	img->width = w;
	img->height = h;
	img->channels = channels;
	return 0;
}

size_t image_nonfinite(const struct image *img)
{
	size_t n = img && img->pixels ? (size_t)img->width * img->height * img->channels : 0, bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += !isfinite(img->pixels[i]);
	return bad;
}

void image_free(struct image *img)
{
	if (!img)
		return;
	if (img->release)
		img->release(img->owner);
	else
		free(img->pixels);
	memset(img, 0, sizeof *img);
}

int image_alloc_lent(const struct image_memory *mem, struct image *img, int w, int h)
{
	memset(img, 0, sizeof *img);
	if (!mem || !mem->alloc || w < 1 || h < 1 ||
	    (size_t)w > SIZE_MAX / 16 / (size_t)h) /* admitted sizes fit; checked all the same */
		return 0;
	void *owner = NULL;
	void *p = mem->alloc(mem->ctx, (size_t)w * (size_t)h * 16, &owner);
	if (!p)
		return 0;
	img->width = w;
	img->height = h;
	img->channels = 4;
	img->pixels = p;
	img->release = mem->release;
	img->owner = owner;
	return 1;
}

enum image_format image_sniff(const void *buf, size_t len)
{
	const unsigned char *b = buf;
	if (!b)
		return IMAGE_FORMAT_UNKNOWN;
	if (len >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff)
		return IMAGE_FORMAT_JPEG;
	if (len >= 8 && !memcmp(b, "\x89PNG\r\n\x1a\n", 8))
		return IMAGE_FORMAT_PNG;
	if (len >= 4 && !memcmp(b, "\x76\x2f\x31\x01", 4))
		return IMAGE_FORMAT_EXR;
	if (len >= 2 && b[0] == '#' && b[1] == '?')
		return IMAGE_FORMAT_HDR;
	if (len >= 3 && b[0] == 'P' && (b[1] == 'F' || b[1] == 'f') &&
	    (b[2] == '\n' || b[2] == '\r' || b[2] == ' ' || b[2] == '\t'))
		return IMAGE_FORMAT_PFM;
	if (len >= 12 && !memcmp(b, "RIFF", 4) && !memcmp(b + 8, "WEBP", 4))
		return IMAGE_FORMAT_WEBP;
	/* ISO BMFF: a leading ftyp box whose major or a compatible brand is avif (still image) or
	 * avis (sequence); HEIC's brands (heic, mif1 alone) are not AVIF */
	if (len >= 16 && !memcmp(b + 4, "ftyp", 4)) {
		size_t box = (size_t)b[0] << 24 | (size_t)b[1] << 16 | (size_t)b[2] << 8 | b[3];
		if (box > len)
			box = len;
		if (!memcmp(b + 8, "avif", 4) || !memcmp(b + 8, "avis", 4))
			return IMAGE_FORMAT_AVIF;
		for (size_t i = 16; i + 4 <= box; i += 4)
			if (!memcmp(b + i, "avif", 4) || !memcmp(b + i, "avis", 4))
				return IMAGE_FORMAT_AVIF;
		/* HEIF with HEVC (HEIC): its major brand or a compatible one; mif1 / msf1 alone
		 * (a HEIF of any codec) are left to libheif */
		static const char heif[][5] = {"heic", "heix", "heim", "heis", "hevc", "hevx",
		                               "mif1", "msf1"};
		for (size_t k = 0; k < sizeof heif / sizeof heif[0]; k++)
			if (!memcmp(b + 8, heif[k], 4))
				return IMAGE_FORMAT_HEIC;
		for (size_t i = 16; i + 4 <= box; i += 4)
			for (size_t k = 0; k < 4; k++)
				if (!memcmp(b + i, heif[k], 4))
					return IMAGE_FORMAT_HEIC;
	}
	if (len >= 4 && (!memcmp(b, "II", 2) || !memcmp(b, "MM", 2)) &&
	    ((b[0] == 'I' && (b[2] == 42 || b[2] == 43) && b[3] == 0) ||
	     (b[0] == 'M' && b[2] == 0 && (b[3] == 42 || b[3] == 43))))
		return IMAGE_FORMAT_TIFF;
	return IMAGE_FORMAT_UNKNOWN;
}

/* The format table. Sniffing is image_sniff's code; its `magic` text says the same in words. */
static const struct image_format_desc format_table[] = {
	{IMAGE_FORMAT_JPEG, "jpeg", "JPEG", {"image/jpeg", "image/jpg", "image/pjpeg", NULL},
	 {"jpg", "jpeg", "jpe", NULL}, "FF D8 FF", 1, 1, {8}, {8}, 0, 0},
	{IMAGE_FORMAT_PNG, "png", "PNG", {"image/png", NULL}, {"png", NULL},
	 "89 `PNG` 0D 0A 1A 0A", 1, 1, {8, 16}, {8, 16}, 0, 1},
	{IMAGE_FORMAT_EXR, "exr", "OpenEXR", {"image/x-exr", "image/exr", "image/aces", NULL},
	 {"exr", NULL}, "76 2F 31 01", 1, 1, {16, 32}, {16, 32}, 1, 1},
	{IMAGE_FORMAT_HDR, "hdr", "Radiance HDR", {"image/vnd.radiance", "image/x-hdr", NULL},
	 {"hdr", "rgbe", "pic", NULL}, "`#?`", 1, 1, {32}, {32}, 1, 0},
	{IMAGE_FORMAT_PFM, "pfm", "PFM", {"image/x-portable-floatmap", "image/x-pfm", NULL},
	 {"pfm", NULL}, "`PF` or `Pf`, then white space", 1, 1, {32}, {32}, 1, 0},
	{IMAGE_FORMAT_WEBP, "webp", "WebP", {"image/webp", NULL}, {"webp", NULL},
	 "`RIFF`, 4 bytes, `WEBP`", 1, 1, {8}, {8}, 0, 1},
	{IMAGE_FORMAT_AVIF, "avif", "AVIF", {"image/avif", NULL}, {"avif", NULL},
	 "an ISO BMFF `ftyp` box with the brand `avif` or `avis`", 1, 1, {8, 10, 12}, {8, 10, 12},
	 0, 1},
	{IMAGE_FORMAT_TIFF, "tiff", "TIFF", {"image/tiff", "image/tiff-fx", NULL},
	 {"tiff", "tif", NULL}, "`II*` 00 or `MM` 00 `*` (BigTIFF: `+` for `*`)", 1, 1,
	 {8, 16, 32, 64}, {8, 16, 32}, 2, 1},
	{IMAGE_FORMAT_HEIC, "heic", "HEIC", {"image/heic", "image/heif", NULL},
	 {"heic", "heif", "hif", NULL},
	 "an ISO BMFF `ftyp` box with the brand `heic`, `heix`, `heim`, `heis`, `hevc`, `hevx`, "
	 "`mif1` or `msf1` (and none `avif`)", 1, 0, {8, 10, 12}, {0}, 0, 1},
};
#define NFORMATS (sizeof format_table / sizeof format_table[0])

const struct image_format_desc *image_formats(size_t *n)
{
	*n = NFORMATS;
	return format_table;
}

const struct image_format_desc *image_format_desc(enum image_format f)
{
	for (size_t i = 0; i < NFORMATS; i++)
		if (format_table[i].format == f)
			return &format_table[i];
	return NULL;
}

char *image_format_titles(char *buf, size_t len, int write, const char *conj)
{
	size_t total = 0, k = 0, o = 0;
	for (size_t i = 0; i < NFORMATS; i++)
		total += write ? format_table[i].write : format_table[i].read;
	if (len)
		buf[0] = 0;
	for (size_t i = 0; i < NFORMATS && o < len; i++) {
		const struct image_format_desc *d = &format_table[i];
		if (!(write ? d->write : d->read))
			continue;
		const char *sep = !k ? "" : k + 1 == total ? " " : ", ";
		int w = snprintf(buf + o, len - o, "%s%s%s%s", sep, k && k + 1 == total ? conj : "",
		                 k && k + 1 == total ? " " : "", d->title);
		if (w < 0)
			break;
		o += (size_t)w;
		k++;
	}
	return buf;
}

int image_format_writes_bits(enum image_format f, int bits)
{
	const struct image_format_desc *d = image_format_desc(f);
	for (int i = 0; d && d->write && i < 4 && d->write_bits[i]; i++)
		if (d->write_bits[i] == bits)
			return 1;
	return 0;
}

enum image_format image_format_from_name(const char *name)
{
	if (!name)
		return IMAGE_FORMAT_UNKNOWN;
	const char *dot = strrchr(name, '.');
	const char *ext = dot ? dot + 1 : name;
	for (size_t i = 0; i < NFORMATS; i++)
		for (int k = 0; format_table[i].extensions[k]; k++)
			if (!strcasecmp(ext, format_table[i].extensions[k]))
				return format_table[i].format;
	return IMAGE_FORMAT_UNKNOWN;
}

const char *image_format_name(enum image_format f)
{
	const struct image_format_desc *d = image_format_desc(f);
	return d ? d->name : "unknown";
}

int image_check_limits(const struct image_limits *lim, unsigned long long w, unsigned long long h,
		       const char *fmt_name, char err[IMAGE_ERR_LEN])
{
	unsigned long long mw = lim && lim->max_width ? lim->max_width : IMAGE_DEFAULT_MAX_WIDTH;
	unsigned long long mh = lim && lim->max_height ? lim->max_height : IMAGE_DEFAULT_MAX_HEIGHT;
	unsigned long long mp = lim && lim->max_pixels ? lim->max_pixels : IMAGE_DEFAULT_MAX_PIXELS;
	if (w == 0 || h == 0)
		return image_fail(err, IMAGE_E_EMPTY, "%s: image has zero size (%llux%llu)", fmt_name,
				  w, h);
	/* the image type holds int sizes: never more than INT_MAX on an axis */
	if (mw > 0x7fffffff)
		mw = 0x7fffffff;
	if (mh > 0x7fffffff)
		mh = 0x7fffffff;
	if (w > mw)
		return image_fail(err, IMAGE_E_TOO_LARGE, "%s: width %llu exceeds the limit %llu",
				  fmt_name, w, mw);
	if (h > mh)
		return image_fail(err, IMAGE_E_TOO_LARGE, "%s: height %llu exceeds the limit %llu",
				  fmt_name, h, mh);
	if (w * h > mp) /* w, h < 2^31: no overflow */
		return image_fail(err, IMAGE_E_TOO_LARGE,
				  "%s: %llux%llu = %llu pixels exceeds the limit %llu", fmt_name, w, h,
				  w * h, mp);
	/* the float buffer (4 channels at most) must be addressable */
	if (w * h > SIZE_MAX / 4 / sizeof(float))
		return image_fail(err, IMAGE_E_TOO_LARGE, "%s: %llux%llu does not fit in memory",
				  fmt_name, w, h);
	if (lim && lim->admit) {
		int rc = lim->admit(lim->admit_ctx, w, h, err);
		if (rc)
			return rc;
	}
	return 0;
}

static image_decode_fn decoder_of(enum image_format f)
{
	switch (f) {
	case IMAGE_FORMAT_PFM: return image_decode_pfm;
	case IMAGE_FORMAT_PNG: return image_decode_png;
	case IMAGE_FORMAT_JPEG: return image_decode_jpeg;
	case IMAGE_FORMAT_EXR: return image_decode_exr;
	case IMAGE_FORMAT_HDR: return image_decode_hdr;
	case IMAGE_FORMAT_WEBP: return image_decode_webp;
	case IMAGE_FORMAT_AVIF: return image_decode_avif;
	case IMAGE_FORMAT_TIFF: return image_decode_tiff;
	case IMAGE_FORMAT_HEIC: return image_decode_heic;
	default: return NULL;
	}
}

static image_encode_fn encoder_of(enum image_format f)
{
	switch (f) {
	case IMAGE_FORMAT_PFM: return image_encode_pfm;
	case IMAGE_FORMAT_PNG: return image_encode_png;
	case IMAGE_FORMAT_JPEG: return image_encode_jpeg;
	case IMAGE_FORMAT_EXR: return image_encode_exr;
	case IMAGE_FORMAT_HDR: return image_encode_hdr;
	case IMAGE_FORMAT_WEBP: return image_encode_webp;
	case IMAGE_FORMAT_AVIF: return image_encode_avif;
	case IMAGE_FORMAT_TIFF: return image_encode_tiff;
	default: return NULL;
	}
}

void image_colour_free(struct image_colour *c)
{
	if (!c)
		return;
	free(c->icc);
	memset(c, 0, sizeof *c);
}

int image_colour_copy(struct image_colour *dst, const struct image_colour *src)
{
	memset(dst, 0, sizeof *dst);
	if (!src)
		return 0;
	*dst = *src;
	dst->icc = NULL;
	if (src->icc && src->icc_len) {
		if (!(dst->icc = malloc(src->icc_len))) {
			memset(dst, 0, sizeof *dst);
			return IMAGE_E_NOMEM;
		}
		memcpy(dst->icc, src->icc, src->icc_len);
	}
	return 0;
}

int image_colour_set_icc(struct image_info *info, const void *icc, size_t len)
{
	struct image_colour *c = info ? info->colour : NULL;
	if (!c || !icc || !len || c->icc)
		return 0;
	if (len > ICC_MAX_BYTES) { /* kept as its size alone: icc_describe says why it is ignored */
		c->icc_len = len;
		c->icc = malloc(1);
		return c->icc ? 0 : IMAGE_E_NOMEM;
	}
	if (!(c->icc = malloc(len)))
		return IMAGE_E_NOMEM;
	memcpy(c->icc, icc, len);
	c->icc_len = len;
	return 0;
}

void image_colour_set_cicp(struct image_info *info, int primaries, int transfer, int matrix,
			   int full_range)
{
	struct image_colour *c = info ? info->colour : NULL;
	if (!c)
		return;
	c->cicp = 1;
	c->primaries = primaries;
	c->transfer = transfer;
	c->matrix = matrix;
	c->full_range = full_range;
}

void image_colour_set_chromaticities(struct image_info *info, const float xy[8])
{
	struct image_colour *c = info ? info->colour : NULL;
	if (!c)
		return;
	c->chrm = 1;
	memcpy(c->xy, xy, sizeof c->xy);
}

int image_decode(const void *buf, size_t len, const struct image_limits *lim, struct image *out,
		 struct image_info *info, char err[IMAGE_ERR_LEN])
{
	return image_decode_colour(buf, len, lim, NULL, out, info, NULL, err);
}

int image_decode_into(const void *buf, size_t len, const struct image_limits *lim,
		      const struct image_memory *mem, struct image *out, struct image_info *info,
		      char err[IMAGE_ERR_LEN])
{
	return image_decode_colour(buf, len, lim, mem, out, info, NULL, err);
}

static int decode_raw(const void *buf, size_t len, const struct image_limits *lim,
		      const struct image_memory *mem, struct image *out, struct image_info *info,
		      struct image_colour *c, char err[IMAGE_ERR_LEN]);
static int decode_pixels(const void *buf, size_t len, const struct image_limits *lim,
			 const struct image_memory *mem, struct image *out, struct image_info *info,
			 struct image_colour *c, char err[IMAGE_ERR_LEN]);

int image_decode_colour(const void *buf, size_t len, const struct image_limits *lim,
			const struct image_memory *mem, struct image *out, struct image_info *info,
			struct image_colour *colour, char err[IMAGE_ERR_LEN])
{
	struct image_info tmp;
	struct image_colour c;
	memset(&c, 0, sizeof c);
	if (colour)
		memset(colour, 0, sizeof *colour);
	if (!info)
		info = &tmp;
	int rc = decode_raw(buf, len, lim, mem, out, info, &c, err);
	if (!rc && !c.srgb && out->release) {
		/* lent memory is not read back: a frame to convert is decoded again into pixels
		 * of its own */
		image_free(out);
		image_colour_free(&c);
		rc = decode_raw(buf, len, lim, NULL, out, info, &c, err);
	}
	if (!rc && !c.srgb && (rc = icc_to_working(out, &c)))
		rc = image_fail(err, rc, "%s: out of memory converting colours",
				image_format_name(info->format));
	if (rc) {
		image_free(out);
		image_colour_free(&c);
		return rc;
	}
	snprintf(info->colour_name, sizeof info->colour_name, "%s", c.name);
	snprintf(info->colour_note, sizeof info->colour_note, "%s", c.note);
	if (colour)
		*colour = c;
	else
		image_colour_free(&c);
	return 0;
}

/* The decoder's pixels as it makes them, and the file's colour description in *c (described:
 * c->srgb set where nothing needs converting). */
static int decode_raw(const void *buf, size_t len, const struct image_limits *lim,
		      const struct image_memory *mem, struct image *out, struct image_info *info,
		      struct image_colour *c, char err[IMAGE_ERR_LEN])
{
	int rc = decode_pixels(buf, len, lim, mem, out, info, c, err);
	info->colour = NULL;
	if (rc)
		return rc;
	c->linear = info->float_format;
	if ((rc = icc_describe(c, out->channels)))
		return image_fail(err, rc, "%s: out of memory reading its colour profile",
				  image_format_name(info->format));
	return 0;
}

static int decode_pixels(const void *buf, size_t len, const struct image_limits *lim,
			 const struct image_memory *mem, struct image *out, struct image_info *info,
			 struct image_colour *c, char err[IMAGE_ERR_LEN])
{
	struct image_limits dl = { .max_pixels = 0 };
	if (!out)
		return image_fail(err, IMAGE_E_ARG, "image: no output image");
	memset(out, 0, sizeof *out);
	memset(info, 0, sizeof *info);
	image_colour_free(c);
	info->colour = c;
	info->orientation = 1;
	if (!buf || !len)
		return image_fail(err, IMAGE_E_TRUNCATED, "image: empty input");
	enum image_format f = image_sniff(buf, len);
	image_decode_fn dec = decoder_of(f);
	if (!dec) {
		const unsigned char *b = buf;
		if (f != IMAGE_FORMAT_UNKNOWN)
			return image_fail(err, IMAGE_E_UNSUPPORTED, "%s: decoding is not built in",
					  image_format_name(f));
		char titles[160];
		return image_fail(err, IMAGE_E_UNSUPPORTED,
				  "image: unknown format (first bytes %02x %02x %02x %02x); "
				  "%s are supported", b[0], len > 1 ? b[1] : 0, len > 2 ? b[2] : 0,
				  len > 3 ? b[3] : 0, image_format_titles(titles, sizeof titles, 0, "and"));
	}
	info->format = f;
	lim = lim ? lim : &dl;
	int rc = f == IMAGE_FORMAT_PFM   ? image_decode_pfm_into(buf, len, lim, mem, out, info, err)
		 : f == IMAGE_FORMAT_EXR ? image_decode_exr_into(buf, len, lim, mem, out, info, err)
					 : dec(buf, len, lim, out, info, err);
	if (rc) {
		image_free(out);
		return rc;
	}
	info->width = out->width;
	info->height = out->height;
	return 0;
}

int image_encode(const struct image *img, enum image_format fmt, const struct image_encode_opts *o,
		 unsigned char **out, size_t *out_len, unsigned *lost, char err[IMAGE_ERR_LEN])
{
	unsigned lost_tmp;
	struct image_encode_opts opts = { .quality = 0 };
	if (!out || !out_len)
		return image_fail(err, IMAGE_E_ARG, "image: no output buffer");
	*out = NULL;
	*out_len = 0;
	if (!lost)
		lost = &lost_tmp;
	*lost = 0;
	if (!img || !img->pixels || img->channels < 1 || img->channels > 4 || img->width <= 0 ||
	    img->height <= 0)
		return image_fail(err, img && img->pixels && img->channels >= 1 && img->channels <= 4 &&
					       img->width >= 0 && img->height >= 0 ?
					  IMAGE_E_EMPTY : IMAGE_E_ARG,
				  "image: nothing to encode (no pixels, zero size or bad channel count)");
	if ((size_t)img->width > SIZE_MAX / (size_t)img->height / 4 / sizeof(float))
		return image_fail(err, IMAGE_E_TOO_LARGE, "image: size overflows");
	if (o)
		opts = *o;
	if (opts.quality == 0)
		opts.quality = fmt == IMAGE_FORMAT_WEBP ? 79 : fmt == IMAGE_FORMAT_AVIF ? 63 : 90;
	if (opts.subsampling == 0)
		opts.subsampling = 444;
	image_encode_fn enc = encoder_of(fmt);
	if (!enc)
		return image_fail(err, IMAGE_E_UNSUPPORTED, "%s: encoding is not supported",
				  image_format_name(fmt));
	/* the answer's colour: sRGB unless asked; float formats keep linear values, so only a
	 * linear description (an EXR's chromaticities) converts them, and only such converts
	 * integer formats' */
	const struct image_format_desc *fd = image_format_desc(fmt);
	int fl = fd && (fd->float_samples == 1 ||
	                (fd->float_samples == 2 && (opts.bits == 32 || (opts.bits == 16 && opts.half))));
	const struct image_colour *target = opts.colour;
	if (!target || target->srgb || (fl ? !target->linear : target->linear) ||
	    (!target->icc && !target->cicp && !target->chrm && !(target->gamma > 0)))
		target = icc_srgb();
	struct image conv = {.pixels = NULL};
	if (opts.colour_note)
		opts.colour_note[0] = 0;
	if (target != icc_srgb()) {
		char cerr[IMAGE_ERR_LEN];
		int rc = icc_from_working(img, target, !fl && (opts.bits == 0 || opts.bits == 8),
					  &conv, cerr);
		if (rc == IMAGE_E_ARG) { /* a profile nothing converts to: the answer in sRGB */
			if (opts.colour_note)
				snprintf(opts.colour_note, IMAGE_COLOUR_NOTE_LEN,
					 "keep_profile: %.100s; the answer is sRGB", cerr);
			target = icc_srgb();
		} else if (rc) {
			snprintf(err, IMAGE_ERR_LEN, "%s", cerr);
			return rc;
		} else {
			img = &conv;
		}
	}
	opts.colour = target;
	int rc = enc(img, &opts, out, out_len, lost, err);
	image_free(&conv);
	if (rc) {
		free(*out);
		*out = NULL;
		*out_len = 0;
	}
	return rc;
}

/* Reads a whole file; *len is its size. */
static int slurp(const char *path, unsigned char **data, size_t *len, char *err)
{
	*data = NULL;
	*len = 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return image_fail(err, IMAGE_E_IO, "cannot open %s: %s", path, strerror(errno));
	struct image_buf b = { NULL, 0, 0 };
	unsigned char chunk[65536];
	size_t n;
	int rc = 0;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
		if (b.len + n > IMAGE_FILE_MAX) {
			rc = image_fail(err, IMAGE_E_TOO_LARGE, "%s is larger than 8 GiB", path);
			break;
		}
		if (image_buf_put(&b, chunk, n)) {
			rc = image_fail(err, IMAGE_E_NOMEM, "cannot hold %s in memory", path);
			break;
		}
	}
	if (!rc && ferror(f))
		rc = image_fail(err, IMAGE_E_IO, "cannot read %s: %s", path, strerror(errno));
	fclose(f);
	if (rc) {
		free(b.p);
		return rc;
	}
	*data = b.p;
	*len = b.len;
	return 0;
}

int image_read_file(const char *path, const struct image_limits *lim, struct image *out,
		    struct image_info *info, char err[IMAGE_ERR_LEN])
{
	unsigned char *data;
	size_t len;
	if (out)
		memset(out, 0, sizeof *out);
	if (!path || !out)
		return image_fail(err, IMAGE_E_ARG, "image: no path or output image");
	int rc = slurp(path, &data, &len, err);
	if (rc)
		return rc;
	rc = image_decode(data, len, lim, out, info, err);
	free(data);
	return rc;
}

int image_write_file(const char *path, const struct image *img, const struct image_encode_opts *o,
		     unsigned *lost, char err[IMAGE_ERR_LEN])
{
	if (!path)
		return image_fail(err, IMAGE_E_ARG, "image: no path");
	enum image_format f = image_format_from_name(path);
	if (f == IMAGE_FORMAT_UNKNOWN) {
		char exts[120] = "";
		for (size_t i = 0, at = 0; i < NFORMATS && at < sizeof exts; i++)
			if (format_table[i].write)
				at += (size_t)snprintf(exts + at, sizeof exts - at, "%s.%s", at ? " " : "",
				                      format_table[i].extensions[0]);
		return image_fail(err, IMAGE_E_UNSUPPORTED, "%s: unknown image extension (use %s)",
				  path, exts);
	}
	unsigned char *data;
	size_t len;
	int rc = image_encode(img, f, o, &data, &len, lost, err);
	if (rc)
		return rc;
	FILE *fp = fopen(path, "wb");
	if (!fp) {
		free(data);
		return image_fail(err, IMAGE_E_IO, "cannot create %s: %s", path, strerror(errno));
	}
	int bad = fwrite(data, 1, len, fp) != len;
	free(data);
	if (fclose(fp) || bad)
		return image_fail(err, IMAGE_E_IO, "cannot write %s: %s", path, strerror(errno));
	return 0;
}

int image_convert_channels(const struct image *in, int channels, struct image *out)
{
	if (!out)
		return IMAGE_E_ARG;
	memset(out, 0, sizeof *out);
	if (!in || !in->pixels || in->channels < 1 || in->channels > 4)
		return IMAGE_E_ARG;
	int rc = image_alloc(out, in->width, in->height, channels);
	if (rc)
		return rc;
	size_t n = (size_t)in->width * (size_t)in->height;
	int ci = in->channels, co = channels;
	int in_alpha = ci == 2 || ci == 4, out_alpha = co == 2 || co == 4;
	for (size_t i = 0; i < n; i++) {
		const float *s = in->pixels + i * (size_t)ci;
		float *d = out->pixels + i * (size_t)co;
		float r, g, b, a = in_alpha ? s[ci - 1] : 1.0f;
		if (ci >= 3) {
			r = s[0];
			g = s[1];
			b = s[2];
		} else {
			r = g = b = s[0];
		}
		if (co >= 3) {
			d[0] = r;
			d[1] = g;
			d[2] = b;
		} else {
			d[0] = ci >= 3 ? 0.2126f * r + 0.7152f * g + 0.0722f * b : r;
		}
		if (out_alpha)
			d[co - 1] = a;
	}
	return 0;
}

void image_digest(const struct image *k, uint64_t digest[2])
{
	/* two independent 64-bit multiply-xorshift streams over the header and the float bits */
	uint64_t h1 = 0x243F6A8885A308D3ull, h2 = 0x13198A2E03707344ull;
	uint32_t head[3] = {(uint32_t)k->width, (uint32_t)k->height, (uint32_t)k->channels};
	size_t n = (size_t)k->width * k->height * k->channels;
	for (size_t i = 0; i < 3 + n; i++) {
		uint32_t w;
		if (i < 3)
			w = head[i];
		else
			memcpy(&w, &k->pixels[i - 3], 4);
		h1 = (h1 ^ w) * 0x9E3779B97F4A7C15ull;
		h1 ^= h1 >> 29;
		h2 = (h2 + w) * 0xC2B2AE3D27D4EB4Full;
		h2 ^= h2 >> 31;
	}
	digest[0] = h1 ^ (h1 >> 32);
	digest[1] = h2 ^ (h2 >> 33);
}
