/* TIFF through libtiff (Debian 12: 4.5): the first image of a file, striped or tiled, contiguous
 * or planar, any compression libtiff decodes. Gray, gray + alpha, RGB and RGBA at 8 or 16 bits
 * (sRGB codes, as PNG's) or 16, 32 or 64-bit IEEE floats (linear light, as EXR's) are read as
 * they are stored, associated (premultiplied) alpha made straight; other layouts of up to 8 bits a
 * sample (palette, bilevel, 2/4-bit gray, CMYK, YCbCr) through libtiff's RGBA reader. The TIFF
 * orientation tag is applied. Written as one image in strips: 8 or 16-bit sRGB codes, 16-bit half
 * or 32-bit float linear samples, alpha unassociated; uncompressed, deflate or LZW. libtiff's
 * errors and warnings go to the error message, never to stderr. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>

#include "codec/colour.h"
#include "codec/image_codec.h"

const char *const image_tiff_compression_names[IMAGE_TIFF_COMPRESSION_COUNT + 1] = {
	[IMAGE_TIFF_DEFLATE] = "deflate",
	[IMAGE_TIFF_NONE] = "none",
	[IMAGE_TIFF_LZW] = "lzw",
	[IMAGE_TIFF_COMPRESSION_COUNT] = NULL,
};

#define TIFF_MAX_SAMPLES 8            /* samples a pixel read: colour, alpha and extras */
#define TIFF_CHUNK_MIN (64u << 20)    /* a strip or tile may always hold this many bytes */
#define TIFF_STRIP_BYTES (256u << 10) /* the uncompressed size of a strip written */
#define TIFF_FILE_MAX ((uint64_t)8 << 30) /* the largest TIFF written */
/* Deflate's level (libtiff 4.5 deflates with libdeflate): 1, as EXR's half blocks. Measured on
 * the 2-core VM (2026-11-28, a 1080p RGB frame, best of 3, load 1.1): 8-bit 77 ms at level 1
 * against 588 ms at libtiff's default 6 for 11% more bytes; half 187 against 295 ms (under a
 * load of 11: 180 against 1180 ms) for 3% more */
#define TIFF_DEFLATE_LEVEL 1

/* A file in memory that libtiff reads (data) or writes (out, growing; seeks past the end leave
 * zeros). */
struct tiff_io {
	const unsigned char *data;
	size_t len, pos;
	struct image_buf *out;
};

/* What libtiff said: the first error and the first warning, counted. */
struct tiff_said {
	char error[160], warning[160];
	unsigned errors, warnings;
};

static tmsize_t io_read(thandle_t h, void *buf, tmsize_t n)
{
	struct tiff_io *io = h;
	const unsigned char *src = io->out ? io->out->p : io->data;
	size_t len = io->out ? io->out->len : io->len;
	if (n <= 0 || io->pos >= len)
		return 0;
	size_t k = len - io->pos < (size_t)n ? len - io->pos : (size_t)n;
	memcpy(buf, src + io->pos, k);
	io->pos += k;
	return (tmsize_t)k;
}

static tmsize_t io_write(thandle_t h, void *buf, tmsize_t n)
{
	struct tiff_io *io = h;
	struct image_buf *b = io->out;
	if (!b || n < 0 || io->pos > TIFF_FILE_MAX || (uint64_t)n > TIFF_FILE_MAX - io->pos)
		return -1;
	if (io->pos > b->len) { /* a seek past the end: zeros up to it */
		static const unsigned char zero[4096];
		while (b->len < io->pos) {
			size_t k = io->pos - b->len < sizeof zero ? io->pos - b->len : sizeof zero;
			if (image_buf_put(b, zero, k))
				return -1;
		}
	}
	size_t over = b->len - io->pos < (size_t)n ? b->len - io->pos : (size_t)n;
	if (over) /* what overwrites bytes written before */
		memcpy(b->p + io->pos, buf, over);
	if (image_buf_put(b, (const unsigned char *)buf + over, (size_t)n - over))
		return -1;
	io->pos += (size_t)n;
	return n;
}

static toff_t io_seek(thandle_t h, toff_t off, int whence)
{
	struct tiff_io *io = h;
	uint64_t len = io->out ? io->out->len : io->len, base = whence == SEEK_CUR ? io->pos
	                                                        : whence == SEEK_END ? len : 0;
	if ((whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END) ||
	    off > TIFF_FILE_MAX || base + off > TIFF_FILE_MAX)
		return (toff_t)-1;
	io->pos = (size_t)(base + off);
	return io->pos;
}

static int io_close(thandle_t h)
{
	(void)h;
	return 0;
}

static toff_t io_size(thandle_t h)
{
	struct tiff_io *io = h;
	return io->out ? io->out->len : io->len;
}

static int io_map(thandle_t h, void **base, toff_t *size)
{
	(void)h;
	(void)base;
	(void)size;
	return 0; /* not mapped: libtiff reads through io_read */
}

static void io_unmap(thandle_t h, void *base, toff_t size)
{
	(void)h;
	(void)base;
	(void)size;
}

static int said_error(TIFF *t, void *ud, const char *module, const char *fmt, va_list ap)
{
	(void)t;
	(void)module;
	struct tiff_said *s = ud;
	if (!s->errors++) {
		vsnprintf(s->error, sizeof s->error, fmt, ap);
		if (!strncmp(s->error, "tiff: ", 6)) /* libtiff names the file: ours is "tiff" */
			memmove(s->error, s->error + 6, strlen(s->error + 6) + 1);
	}
	return 1; /* handled: not passed on to the global handler */
}

static int said_warning(TIFF *t, void *ud, const char *module, const char *fmt, va_list ap)
{
	(void)t;
	(void)module;
	struct tiff_said *s = ud;
	if (!s->warnings++)
		vsnprintf(s->warning, sizeof s->warning, fmt, ap);
	return 1;
}

/* libtiff's process-wide handlers print to stderr; a message without a TIFF (a few of libtiff's
 * paths) goes to them, so they are silenced once. */
static pthread_once_t quiet_once = PTHREAD_ONCE_INIT;
static void quiet_globals(void)
{
	TIFFSetErrorHandler(NULL);
	TIFFSetWarningHandler(NULL);
}

/* The most libtiff may allocate at once reading a file of len bytes: its buffers hold a
 * compressed strip (at most the file) or, for the RGBA reader, a decoded strip or tile; the
 * pixels are ours, allocated after the limits. A hostile byte count fails there instead of
 * allocating gigabytes. */
#define TIFF_ALLOC_MAX(len) ((tmsize_t)(256u << 20) + 2 * (tmsize_t)(len))

static TIFF *tiff_open(struct tiff_io *io, const char *mode, struct tiff_said *said)
{
	pthread_once(&quiet_once, quiet_globals);
	TIFFOpenOptions *o = TIFFOpenOptionsAlloc();
	if (!o)
		return NULL;
	if (!io->out && io->len < ((size_t)1 << 40))
		TIFFOpenOptionsSetMaxSingleMemAlloc(o, TIFF_ALLOC_MAX(io->len));
	TIFFOpenOptionsSetErrorHandlerExtR(o, said_error, said);
	TIFFOpenOptionsSetWarningHandlerExtR(o, said_warning, said);
	TIFF *t = TIFFClientOpenExt("tiff", mode, io, io_read, io_write, io_seek, io_close, io_size,
	                            io_map, io_unmap, o);
	TIFFOpenOptionsFree(o);
	return t;
}

/* IEEE half <-> float, bit-exact: subnormals, infinities and NaN kept; round to nearest even. */
static float half_to_float(uint16_t h)
{
	uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
	if (e == 0x1f) {
		u = s | 0x7f800000u | m << 13;
	} else if (e) {
		u = s | (e + 112) << 23 | m << 13;
	} else {
		float f = (float)m * 0x1p-24f; /* subnormal (or zero): exact in float */
		return s ? -f : f;
	}
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static uint16_t float_to_half(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	uint16_t s = (uint16_t)(u >> 16 & 0x8000);
	uint32_t a = u & 0x7fffffffu;
	if (a > 0x7f800000u) /* NaN: a quiet one */
		return s | 0x7e00;
	if (a >= 0x477ff000u) /* 65520 and up round to infinity */
		return s | 0x7c00;
	if (a < 0x38800000u) { /* below half's smallest normal: a multiple of 2^-24 */
		float v;
		memcpy(&v, &a, 4);
		return s | (uint16_t)lrintf(v * 0x1p24f); /* rint: to nearest even */
	}
	uint32_t m = a + 0xc8000fffu + ((a >> 13) & 1); /* rebias by -112 << 23 and round */
	return s | (uint16_t)(m >> 13);
}

/* How a file's samples are read: what each is and where the output's channels come from. */
enum tiff_kind { K_U8, K_U16, K_F16, K_F32, K_F64 };
struct tiff_read {
	int w, h;                 /* as stored */
	int spp, nc, alpha;       /* samples a pixel, colour samples (1 or 3), 1 with alpha */
	int ch;                   /* output channels: nc + alpha */
	enum tiff_kind kind;
	int bytes;                /* a sample's */
	int white;                /* MINISWHITE: 0 is white */
	int assoc;                /* alpha premultiplies the colour */
	int separate;             /* one plane a sample */
	const float *t8, *t16;
	float *px;                /* w x h x ch, as stored */
};

/* One stored sample as a float: an integer colour sample's sRGB code decoded (unless alpha
 * premultiplies it: then its code / max, made straight and decoded afterwards), alpha and
 * float samples as they are. */
static inline float sample(const struct tiff_read *r, const unsigned char *p, int is_alpha)
{
	switch (r->kind) {
	case K_U8: {
		unsigned v = *p;
		if (is_alpha)
			return (float)v / 255.0f;
		if (r->white)
			v = 255 - v;
		return r->assoc ? (float)v / 255.0f : r->t8[v];
	}
	case K_U16: {
		uint16_t v;
		memcpy(&v, p, 2);
		if (is_alpha)
			return (float)v / 65535.0f;
		if (r->white)
			v = (uint16_t)(65535 - v);
		return r->assoc ? (float)v / 65535.0f : r->t16[v];
	}
	case K_F16: {
		uint16_t v;
		memcpy(&v, p, 2);
		float f = half_to_float(v);
		return r->white && !is_alpha ? 1 - f : f;
	}
	case K_F32: {
		float f;
		memcpy(&f, p, 4);
		return r->white && !is_alpha ? 1 - f : f;
	}
	default: {
		double d;
		memcpy(&d, p, 8);
		return (float)(r->white && !is_alpha ? 1 - d : d);
	}
	}
}

/* n pixels of a chunk's row (plane `plane`, or every sample when contiguous) at src into the
 * output from pixel (x, y). */
static void put_row(const struct tiff_read *r, const unsigned char *src, int plane, int x, int y,
                    int n)
{
	float *d = r->px + ((size_t)y * (size_t)r->w + (size_t)x) * (size_t)r->ch;
	if (r->separate) {
		int is_alpha = plane == r->nc;
		for (int i = 0; i < n; i++, src += r->bytes, d += r->ch)
			d[plane] = sample(r, src, is_alpha);
		return;
	}
	size_t step = (size_t)r->spp * (size_t)r->bytes;
	for (int i = 0; i < n; i++, src += step, d += r->ch) {
		for (int c = 0; c < r->ch; c++)
			d[c] = sample(r, src + (size_t)c * (size_t)r->bytes, c == r->nc);
	}
}

/* Associated alpha made straight: colour / alpha (0 where alpha is 0), then an integer file's
 * codes decoded from sRGB. */
static void unpremultiply(const struct tiff_read *r)
{
	size_t n = (size_t)r->w * (size_t)r->h;
	int integer = r->kind == K_U8 || r->kind == K_U16;
	for (float *p = r->px; n--; p += r->ch) {
		float a = p[r->nc];
		for (int c = 0; c < r->nc; c++) {
			float v = a > 0 ? p[c] / a : 0;
			if (integer)
				p[c] = srgb_to_linear(v < 1 ? v : 1);
			else
				p[c] = v;
		}
	}
}

/* The error of a chunk libtiff could not read: truncated when the chunk lies past the file's
 * end, else corrupt, with libtiff's message. */
static int chunk_error(TIFF *t, const struct tiff_io *io, uint32_t idx, const char *what,
                       const struct tiff_said *said, char *err)
{
	uint64_t off = TIFFGetStrileOffset(t, idx), n = TIFFGetStrileByteCount(t, idx);
	int trunc = off >= io->len || n > io->len - off;
	return image_fail(err, trunc ? IMAGE_E_TRUNCATED : IMAGE_E_CORRUPT, "tiff: %s %u: %s", what,
	                  idx, trunc ? "the file ends before it" : said->errors ? said->error
	                                                                        : "cannot decode");
}

/* Reads every strip or tile of the samples r describes into r->px. */
static int read_chunks(TIFF *t, const struct tiff_io *io, struct tiff_read *r,
                       const struct tiff_said *said, char *err)
{
	int tiled = TIFFIsTiled(t);
	uint32_t tw = (uint32_t)r->w, th = 0;
	if (tiled) {
		if (!TIFFGetField(t, TIFFTAG_TILEWIDTH, &tw) || !TIFFGetField(t, TIFFTAG_TILELENGTH, &th))
			return image_fail(err, IMAGE_E_CORRUPT, "tiff: tiles without a size");
	} else {
		TIFFGetFieldDefaulted(t, TIFFTAG_ROWSPERSTRIP, &th);
		if (th > (uint32_t)r->h)
			th = (uint32_t)r->h;
	}
	if (!tw || !th)
		return image_fail(err, IMAGE_E_CORRUPT, "tiff: %s of zero size",
		                  tiled ? "tiles" : "strips");
	/* a chunk as large as the image, or TIFF_CHUNK_MIN, at most: a hostile tile size is not
	 * allocated */
	uint64_t px_bytes = (uint64_t)(r->separate ? 1 : r->spp) * (uint64_t)r->bytes;
	uint64_t image_bytes = (uint64_t)r->w * (uint64_t)r->h * (uint64_t)r->spp * r->bytes;
	uint64_t row_bytes = (uint64_t)tw * px_bytes, chunk = row_bytes * th;
	if (tw > (1u << 24) || th > (1u << 24) ||
	    (chunk > TIFF_CHUNK_MIN && chunk > 2 * image_bytes))
		return image_fail(err, IMAGE_E_CORRUPT, "tiff: %s of %ux%u for an image of %dx%d",
		                  tiled ? "tiles" : "strips", tw, th, r->w, r->h);
	tmsize_t size = tiled ? TIFFTileSize(t) : TIFFStripSize(t);
	if (size <= 0 || (uint64_t)size < chunk)
		return image_fail(err, IMAGE_E_CORRUPT, "tiff: %s size unknown: %s",
		                  tiled ? "tile" : "strip", said->errors ? said->error : "overflow");
	unsigned char *buf = malloc((size_t)size);
	if (!buf)
		return image_fail(err, IMAGE_E_NOMEM, "tiff: cannot allocate %lld bytes",
		                  (long long)size);
	int planes = r->separate ? r->ch : 1, rc = 0;
	for (int p = 0; p < planes && !rc; p++)
		for (uint32_t y = 0; y < (uint32_t)r->h && !rc; y += th)
			for (uint32_t x = 0; x < (uint32_t)r->w && !rc; x += tw) {
				uint32_t idx = tiled ? TIFFComputeTile(t, x, y, 0, (uint16_t)p)
				                     : TIFFComputeStrip(t, y, (uint16_t)p);
				uint32_t rows = (uint32_t)r->h - y < th ? (uint32_t)r->h - y : th;
				uint32_t cols = (uint32_t)r->w - x < tw ? (uint32_t)r->w - x : tw;
				tmsize_t got = tiled ? TIFFReadEncodedTile(t, idx, buf, size)
				                     : TIFFReadEncodedStrip(t, idx, buf, size);
				if (got < 0 || (uint64_t)got < (rows - 1) * row_bytes + cols * px_bytes) {
					rc = chunk_error(t, io, idx, tiled ? "tile" : "strip", said, err);
					break;
				}
				for (uint32_t k = 0; k < rows; k++)
					put_row(r, buf + k * row_bytes, p, (int)x, (int)(y + k), (int)cols);
			}
	free(buf);
	return rc;
}

/* The file's colour description for image_decode (codec/image_codec.h): an integer file's ICC
 * profile (TIFFTAG_ICCPROFILE); a float file's primaries and white point (its samples are
 * linear). */
static void tiff_colour(TIFF *t, int isfloat, struct image_info *info)
{
	uint32_t n = 0;
	void *icc = NULL;
	float *prim = NULL, *white = NULL;
	if (!isfloat && TIFFGetField(t, TIFFTAG_ICCPROFILE, &n, &icc) && icc && n)
		image_colour_set_icc(info, icc, n);
	if (isfloat && TIFFGetField(t, TIFFTAG_PRIMARYCHROMATICITIES, &prim) && prim &&
	    TIFFGetField(t, TIFFTAG_WHITEPOINT, &white) && white) {
		float xy[8] = {prim[0], prim[1], prim[2], prim[3], prim[4], prim[5], white[0], white[1]};
		image_colour_set_chromaticities(info, xy);
	}
}

/* Layouts read as they are stored: 1 with r set, or 0 for libtiff's RGBA reader. */
static int native_layout(TIFF *t, struct tiff_read *r)
{
	uint16_t bps, fmt, photo, spp, planar, nextra = 0, *extra = NULL;
	TIFFGetFieldDefaulted(t, TIFFTAG_BITSPERSAMPLE, &bps);
	TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLEFORMAT, &fmt);
	TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLESPERPIXEL, &spp);
	TIFFGetFieldDefaulted(t, TIFFTAG_PLANARCONFIG, &planar);
	TIFFGetFieldDefaulted(t, TIFFTAG_EXTRASAMPLES, &nextra, &extra);
	if (!TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &photo))
		return 0;
	if (photo == PHOTOMETRIC_RGB)
		r->nc = 3;
	else if (photo == PHOTOMETRIC_MINISBLACK || photo == PHOTOMETRIC_MINISWHITE)
		r->nc = 1;
	else
		return 0;
	if (spp < r->nc || spp > TIFF_MAX_SAMPLES)
		return 0;
	if (fmt == SAMPLEFORMAT_IEEEFP && (bps == 16 || bps == 32 || bps == 64))
		r->kind = bps == 16 ? K_F16 : bps == 32 ? K_F32 : K_F64;
	else if ((fmt == SAMPLEFORMAT_UINT || fmt == SAMPLEFORMAT_VOID) && (bps == 8 || bps == 16))
		r->kind = bps == 8 ? K_U8 : K_U16;
	else
		return 0;
	r->bytes = bps / 8;
	r->spp = spp;
	r->white = photo == PHOTOMETRIC_MINISWHITE;
	r->separate = planar == PLANARCONFIG_SEPARATE;
	/* the first extra sample is alpha when it says so, or unspecified and alone */
	if (spp > r->nc) {
		uint16_t what = nextra && extra ? extra[0] : EXTRASAMPLE_UNSPECIFIED;
		r->alpha = what == EXTRASAMPLE_ASSOCALPHA || what == EXTRASAMPLE_UNASSALPHA ||
		           spp == r->nc + 1;
		r->assoc = r->alpha && what == EXTRASAMPLE_ASSOCALPHA;
	}
	r->ch = r->nc + r->alpha;
	return 1;
}

/* The RGBA reader's image (8-bit codes, alpha premultiplied by libtiff) into out: gray files
 * keep one colour channel. The raster is read in stored order (the orientation is applied by
 * the caller). */
static int read_rgba(TIFF *t, struct image *out, int *bits, const struct tiff_said *said,
                     char *err)
{
	char emsg[1024] = "";
	TIFFRGBAImage img;
	if (!TIFFRGBAImageOK(t, emsg) || !TIFFRGBAImageBegin(&img, t, 0, emsg))
		return image_fail(err, IMAGE_E_UNSUPPORTED, "tiff: %.200s",
		                  emsg[0] ? emsg : said->errors ? said->error : "layout not supported");
	img.req_orientation = ORIENTATION_TOPLEFT;
	img.orientation = ORIENTATION_TOPLEFT; /* rows as stored: no flip */
	uint16_t photo = img.photometric;
	int gray = photo == PHOTOMETRIC_MINISBLACK || photo == PHOTOMETRIC_MINISWHITE;
	int alpha = img.alpha != 0, ch = (gray ? 1 : 3) + alpha, rc;
	uint32_t w = img.width, h = img.height;
	*bits = img.bitspersample < 8 ? img.bitspersample : 8;
	uint32_t *raster = malloc((size_t)w * h * 4);
	if (!raster) {
		TIFFRGBAImageEnd(&img);
		return image_fail(err, IMAGE_E_NOMEM, "tiff: cannot allocate %ux%u pixels", w, h);
	}
	int ok = TIFFRGBAImageGet(&img, raster, w, h);
	TIFFRGBAImageEnd(&img);
	if (!ok) {
		free(raster);
		return image_fail(err, IMAGE_E_CORRUPT, "tiff: %s",
		                  said->errors ? said->error : "cannot decode the image");
	}
	if ((rc = image_alloc(out, (int)w, (int)h, ch))) {
		free(raster);
		return image_fail(err, rc, "tiff: cannot allocate %ux%u pixels", w, h);
	}
	const float *t8 = colour_srgb8_table();
	float *d = out->pixels;
	for (size_t i = 0; i < (size_t)w * h; i++, d += ch) {
		uint32_t p = raster[i];
		unsigned v[3] = {TIFFGetR(p), TIFFGetG(p), TIFFGetB(p)}, a = TIFFGetA(p);
		for (int c = 0; c < (gray ? 1 : 3); c++) {
			if (!alpha || a == 255)
				d[c] = t8[v[c]];
			else
				d[c] = a ? srgb_to_linear(v[c] >= a ? 1.0f : (float)v[c] / (float)a) : 0;
		}
		if (alpha)
			d[ch - 1] = (float)a / 255.0f;
	}
	free(raster);
	return 0;
}

int image_decode_tiff(const unsigned char *buf, size_t len, const struct image_limits *lim,
                      struct image *out, struct image_info *info, char *err)
{
	struct tiff_said said;
	memset(&said, 0, sizeof said);
	struct tiff_io io = {buf, len, 0, NULL};
	struct image stored = {0};
	int rc;
	if (len < 8)
		return image_fail(err, IMAGE_E_TRUNCATED, "tiff: the header is cut short");
	TIFF *t = tiff_open(&io, "rm", &said);
	if (!t) {
		/* what libtiff says when a directory lies past the end of the file */
		int trunc = said.errors && (strstr(said.error, "Cannot read") ||
		                            strstr(said.error, "Can not read") ||
		                            strstr(said.error, "IO error") ||
		                            strstr(said.error, "end of file") ||
		                            strstr(said.error, "Read error"));
		return image_fail(err, trunc ? IMAGE_E_TRUNCATED : IMAGE_E_CORRUPT, "tiff: %s",
		                  said.errors ? said.error : "not a TIFF libtiff opens");
	}
	uint32_t w = 0, h = 0;
	uint16_t o = 1;
	TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &w);
	TIFFGetField(t, TIFFTAG_IMAGELENGTH, &h);
	TIFFGetFieldDefaulted(t, TIFFTAG_ORIENTATION, &o);
	if (o < 1 || o > 8)
		o = 1;
	/* the oriented size, checked before any pixel is allocated */
	if ((rc = image_check_limits(lim, o >= 5 ? h : w, o >= 5 ? w : h, "tiff", err)))
		goto done;
	struct tiff_read r;
	memset(&r, 0, sizeof r);
	r.w = (int)w;
	r.h = (int)h;
	if (native_layout(t, &r)) {
		if ((rc = image_alloc(&stored, r.w, r.h, r.ch))) {
			rc = image_fail(err, rc, "tiff: cannot allocate %ux%u pixels", w, h);
			goto done;
		}
		r.t8 = colour_srgb8_table();
		r.t16 = colour_srgb16_table();
		r.px = stored.pixels;
		if ((rc = read_chunks(t, &io, &r, &said, err)))
			goto done;
		if (r.assoc)
			unpremultiply(&r);
		info->bits = r.bytes * 8;
		info->float_format = r.kind >= K_F16;
		info->channels = r.ch;
		if (info->float_format)
			info->nonfinite = image_nonfinite(&stored);
		tiff_colour(t, info->float_format, info);
	} else {
		int bits = 8;
		if ((rc = read_rgba(t, &stored, &bits, &said, err)))
			goto done;
		info->bits = bits;
		info->channels = stored.channels;
		tiff_colour(t, 0, info);
	}
	if (o == 1) {
		*out = stored;
		memset(&stored, 0, sizeof stored);
	} else {
		int ow = o >= 5 ? stored.height : stored.width, oh = o >= 5 ? stored.width : stored.height;
		if ((rc = image_alloc(out, ow, oh, stored.channels))) {
			rc = image_fail(err, rc, "tiff: cannot allocate %dx%d pixels", ow, oh);
			goto done;
		}
		image_orient(stored.pixels, stored.width, stored.height, stored.channels, o,
		             out->pixels);
	}
	info->orientation = o;
	rc = 0;
done:
	image_free(&stored);
	TIFFClose(t);
	return rc;
}

int image_encode_tiff(const struct image *img, const struct image_encode_opts *o,
                      unsigned char **out, size_t *out_len, unsigned *lost, char *err)
{
	int bits = o->bits ? o->bits : 8, half = bits == 16 && o->half;
	if (bits != 8 && bits != 16 && bits != 32)
		return image_fail(err, IMAGE_E_ARG,
		                  "tiff: %d bits per sample is not 8, 16 (integer or half) or 32 (float)",
		                  bits);
	if (o->tiff_compression < 0 || o->tiff_compression >= IMAGE_TIFF_COMPRESSION_COUNT)
		return image_fail(err, IMAGE_E_ARG, "tiff: no compression %d", o->tiff_compression);
	static const uint16_t comps[IMAGE_TIFF_COMPRESSION_COUNT] = {
		[IMAGE_TIFF_DEFLATE] = COMPRESSION_ADOBE_DEFLATE, [IMAGE_TIFF_NONE] = COMPRESSION_NONE,
		[IMAGE_TIFF_LZW] = COMPRESSION_LZW};
	uint16_t comp = comps[o->tiff_compression];
	int ch = img->channels, alpha = ch == 2 || ch == 4, isfloat = bits == 32 || half;
	size_t w = (size_t)img->width, h = (size_t)img->height, bps = (size_t)bits / 8;
	size_t row_bytes = w * (size_t)ch * bps;
	uint64_t total = (uint64_t)row_bytes * h;
	if (w > 0xffffffffu || h > 0xffffffffu || total > TIFF_FILE_MAX - (1u << 20))
		return image_fail(err, IMAGE_E_TOO_LARGE, "tiff: %zux%zu at %d bits is past %llu GiB",
		                  w, h, bits, (unsigned long long)(TIFF_FILE_MAX >> 30));
	uint32_t rps = (uint32_t)(TIFF_STRIP_BYTES / row_bytes);
	if (rps < 1)
		rps = 1;
	if (rps > h)
		rps = (uint32_t)h;
	struct tiff_said said;
	memset(&said, 0, sizeof said);
	struct image_buf b = {NULL, 0, 0};
	struct tiff_io io = {NULL, 0, 0, &b};
	/* classic TIFF holds 4 GiB of offsets: BigTIFF past 2 GiB of samples */
	TIFF *t = tiff_open(&io, total > (1u << 31) ? "w8" : "w", &said);
	if (!t)
		return image_fail(err, IMAGE_E_NOMEM, "tiff: cannot create a writer: %s",
		                  said.errors ? said.error : "out of memory");
	unsigned char *strip = malloc((size_t)rps * row_bytes);
	int rc = 0;
	if (!strip) {
		rc = image_fail(err, IMAGE_E_NOMEM, "tiff: cannot allocate a strip");
		goto done;
	}
	uint16_t extra = EXTRASAMPLE_UNASSALPHA;
	int ok = TIFFSetField(t, TIFFTAG_IMAGEWIDTH, (uint32_t)w) &&
	         TIFFSetField(t, TIFFTAG_IMAGELENGTH, (uint32_t)h) &&
	         TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)ch) &&
	         TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, (uint16_t)bits) &&
	         TIFFSetField(t, TIFFTAG_SAMPLEFORMAT,
	                      isfloat ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT) &&
	         TIFFSetField(t, TIFFTAG_PHOTOMETRIC,
	                      ch >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK) &&
	         TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG) &&
	         TIFFSetField(t, TIFFTAG_ORIENTATION, ORIENTATION_TOPLEFT) &&
	         TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, rps) &&
	         TIFFSetField(t, TIFFTAG_COMPRESSION, comp) &&
	         (!alpha || TIFFSetField(t, TIFFTAG_EXTRASAMPLES, 1, &extra)) &&
	         /* the answer's colour (image_encode converted the pixels to it): an integer
	          * file's ICC profile (sRGB's by default), a float file's primaries */
	         (isfloat || !o->colour || !o->colour->icc ||
	          TIFFSetField(t, TIFFTAG_ICCPROFILE, (uint32_t)o->colour->icc_len,
	                       o->colour->icc)) &&
	         (!isfloat || !o->colour || !o->colour->chrm ||
	          (TIFFSetField(t, TIFFTAG_PRIMARYCHROMATICITIES, o->colour->xy) &&
	           TIFFSetField(t, TIFFTAG_WHITEPOINT, o->colour->xy + 6))) &&
	         (comp != COMPRESSION_ADOBE_DEFLATE ||
	          TIFFSetField(t, TIFFTAG_ZIPQUALITY, TIFF_DEFLATE_LEVEL)) &&
	         (comp == COMPRESSION_NONE ||
	          TIFFSetField(t, TIFFTAG_PREDICTOR,
	                       isfloat ? PREDICTOR_FLOATINGPOINT : PREDICTOR_HORIZONTAL));
	if (!ok) {
		rc = image_fail(err, IMAGE_E_ARG, "tiff: %s", said.errors ? said.error : "bad field");
		goto done;
	}
	const struct colour_srgb8_lut *lut = colour_srgb8_lut();
	const float *t8 = colour_srgb8_table(), *t16 = colour_srgb16_table();
	const float *s = img->pixels;
	int inexact = 0;
	for (uint32_t y0 = 0, k = 0; y0 < h; y0 += rps, k++) {
		uint32_t rows = h - y0 < rps ? (uint32_t)(h - y0) : rps;
		unsigned char *q = strip;
		for (uint32_t y = y0; y < y0 + rows; y++)
			for (size_t x = 0; x < w; x++)
				for (int c = 0; c < ch; c++, s++) {
					int is_alpha = alpha && c == ch - 1;
					if (bits == 32) {
						memcpy(q, s, 4);
						q += 4;
					} else if (half) {
						uint16_t u = float_to_half(*s);
						float back = half_to_float(u);
						if (!(back == *s) && !(isnan(back) && isnan(*s)))
							*lost |= isinf(back) ? IMAGE_LOST_RANGE
							                     : IMAGE_LOST_PRECISION;
						memcpy(q, &u, 2);
						q += 2;
					} else if (bits == 8) {
						float v = image_clip01(*s, lost);
						uint8_t u = is_alpha ? colour_unorm8(v)
						            : o->dither ? colour_linear_to_srgb8_dither(v, (unsigned)x, y)
						                        : colour_srgb8_fast(lut, v);
						inexact |= (is_alpha ? (float)u / 255.0f : t8[u]) != v;
						*q++ = u;
					} else {
						float v = image_clip01(*s, lost);
						uint16_t u = is_alpha ? colour_unorm16(v) : colour_linear_to_srgb16(v);
						inexact |= (is_alpha ? (float)u / 65535.0f : t16[u]) != v;
						memcpy(q, &u, 2);
						q += 2;
					}
				}
		if (TIFFWriteEncodedStrip(t, k, strip, (tmsize_t)((size_t)rows * row_bytes)) < 0) {
			rc = image_fail(err, IMAGE_E_NOMEM, "tiff: writing strip %u: %s", k,
			                said.errors ? said.error : "failed");
			goto done;
		}
	}
	if (inexact)
		*lost |= IMAGE_LOST_PRECISION;
	if (!TIFFWriteDirectory(t)) {
		rc = image_fail(err, IMAGE_E_NOMEM, "tiff: writing the directory: %s",
		                said.errors ? said.error : "failed");
		goto done;
	}
done:
	TIFFClose(t); /* flushes nothing more: the directory is written */
	free(strip);
	if (rc) {
		free(b.p);
		return rc;
	}
	*out = b.p;
	*out_len = b.len;
	return 0;
}
