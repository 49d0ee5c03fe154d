/* Images: the one in-memory image type (float32 linear light, straight alpha, 1-4 channels) and
 * its codecs: JPEG, PNG, OpenEXR, Radiance HDR, PFM, WebP, AVIF, TIFF and HEIC (read only),
 * chosen by magic bytes on decode. Every
 * decoder checks the size from the header against limits before allocating pixels and treats its
 * input as hostile. No printing; errors are a negative code plus a message naming the format. */
#ifndef FFTBLOOM_IMAGE_H
#define FFTBLOOM_IMAGE_H

#include <stddef.h>
#include <stdint.h>

enum image_format {
	IMAGE_FORMAT_UNKNOWN = 0,
	IMAGE_FORMAT_JPEG,
	IMAGE_FORMAT_PNG,
	IMAGE_FORMAT_EXR,
	IMAGE_FORMAT_HDR,
	IMAGE_FORMAT_PFM,
	IMAGE_FORMAT_WEBP,
	IMAGE_FORMAT_AVIF,
	IMAGE_FORMAT_TIFF,
	IMAGE_FORMAT_HEIC,
};
#define IMAGE_FORMAT_COUNT (IMAGE_FORMAT_HEIC + 1)

/* channels 1-4 (Y, YA, RGB, RGBA); row-major, top row first, interleaved; linear light;
 * straight alpha */
struct image {
	int width, height, channels;
	float *pixels; /* width * height * channels floats, malloc'd (or lent: release) */
	void (*release)(void *owner); /* NULL: pixels are malloc'd. Else they are memory lent by
	                                 an image_memory, which image_free gives back through
	                                 release(owner) instead of freeing it */
	void *owner;
};

/* Memory for a float decode's pixels that the caller lends instead of malloc'd memory (an
 * upload buffer a GPU reads where the frame was decoded): alloc(ctx, bytes, &owner) is called
 * once the header has been read and its size admitted, and returns at least `bytes` of it,
 * setting *owner, or NULL for malloc'd pixels. The decoder only writes the lent memory (it may
 * be mapped for writing only). Lent memory goes back through release(owner) once, when the
 * image is freed (image_free), a failed decode's included. */
struct image_memory {
	void *(*alloc)(void *ctx, size_t bytes, void **owner);
	void (*release)(void *owner);
	void *ctx;
};

/* 0 in a field = use the default; defaults 32768, 32768, 100e6 */
struct image_limits {
	unsigned max_width, max_height;
	unsigned long long max_pixels;
	/* Optional admission hook, called by image_check_limits once a header's size is within
	 * the limits and before any pixel is allocated: 0 lets the decode go on; a negative
	 * image_error (with a message in err) refuses it, and the decoder returns that code. A
	 * decoder may check the same image more than once (an orientation, a fallback decoder):
	 * the hook sees the latest size of the image it admits, not one more image. NULL: none. */
	int (*admit)(void *ctx, unsigned long long w, unsigned long long h, char *err);
	void *admit_ctx;
	int threads; /* threads one decode may split an image across (EXR's chunks): 0 = as
	                core/parallel.h's par_threads and par_each decide, 1 = the calling thread
	                alone; at most PAR_MAX_THREADS */
};
#define IMAGE_DEFAULT_MAX_WIDTH 32768u
#define IMAGE_DEFAULT_MAX_HEIGHT 32768u
#define IMAGE_DEFAULT_MAX_PIXELS 100000000ull

/* What an image's samples mean: the file's colour description as a decoder found it, or the
 * colour an answer is converted to and tagged with (image_encode_opts.colour). Zeroed: sRGB
 * (integer formats) or linear Rec. 709 (float formats), untagged. Held by whoever filled it:
 * image_colour_free. codec/icc.h converts between it and the working space. */
struct image_colour {
	unsigned char *icc;  /* an ICC profile (malloc'd), or NULL */
	size_t icc_len;
	int srgb;            /* 1: it is sRGB (no profile, a PNG sRGB chunk, or a profile equal
	                        to sRGB); no conversion */
	int cicp;            /* 1: nclx / CICP code points below (ITU-T H.273) */
	int primaries, transfer, matrix, full_range;
	int chrm;            /* 1: xy holds primaries and white, CIE xy: red x,y, green x,y,
	                        blue x,y, white x,y (EXR chromaticities, PNG cHRM) */
	float xy[8];
	float gamma;         /* PNG gAMA: the decoding exponent (2.2 for gAMA 0.45455); 0: none */
	int linear;          /* 1: the samples are linear (float formats): curves are not applied */
	char name[64];       /* what it was taken as: "sRGB", "ICC: Display P3", "nclx 12/13/6" */
	char note[160];      /* why the file's description was ignored (then sRGB), or "" */
};

/* Frees c's profile and zeroes it; NULL-safe. */
void image_colour_free(struct image_colour *c);
/* *dst = a deep copy of src (src NULL: zeroed). 0 or IMAGE_E_NOMEM (dst zeroed). */
int image_colour_copy(struct image_colour *dst, const struct image_colour *src);

struct image_info {
	enum image_format format;
	int bits;         /* 8, 10 or 12 (avif, heic), 16 (png / tiff / half exr and tiff), 32
	                     (float), 64 (double tiff); 1-8 for a TIFF read as 8-bit codes */
	int channels;     /* as stored: 1-4; palette PNG counts as 3 or 4, CMYK JPEG as 4 */
	int float_format; /* 1 for EXR/HDR/PFM and float TIFF */
	int orientation;  /* EXIF orientation applied (1-8), 1 if none */
	int width, height; /* the image's size, orientation applied (0 until decoded) */
	unsigned long long nonfinite; /* PFM and EXR: the stored samples that are NaN or
	                                 infinite, counted as the decoder writes them (lent memory
	                                 may not be read back); 0 for other formats */
	struct image_colour *colour; /* during a decode: where the decoder records the file's
	                                colour (image_colour_set_icc...); NULL outside one */
	char colour_name[64];        /* what the input's colours were taken as ("sRGB", "ICC:
	                                Display P3", ...): the working space was made from it */
	char colour_note[160];       /* a profile ignored (sRGB assumed) and why, or "" */
};

struct image_encode_opts {
	int quality;     /* JPEG, WebP, AVIF 1-100; 0 = the format's default: JPEG 90, WebP 79,
			    AVIF 63. WebP: libwebp's own 0-100 scale, 100 = lossless. AVIF: the
			    quantizer ((100 - quality) * 63 + 50) / 100 of libavif 1.x's quality,
			    100 = lossless (4:4:4 with the identity matrix) */
	int subsampling; /* JPEG and AVIF 444 or 420 (WebP's lossy coding is always 4:2:0);
			    0 = default 444 */
	int bits;        /* PNG 8 or 16; EXR 16 (half) or 32; AVIF 8, 10 or 12; 0 = PNG 8, EXR 16,
			    AVIF 8 */
	int dither;      /* ordered dither on 8-bit output (PNG 8, JPEG, WebP, AVIF 8) */
	int speed;       /* AVIF: libavif's encoder speed 1 (slow, smaller) - 10 (fastest);
			    0 = default 9 */
	int exr_compression; /* EXR: enum image_exr_compression; 0 = ZIP */
	int threads;     /* threads one encode may split an image across (EXR's chunks): 0 = as
			    core/parallel.h decides, 1 = the calling thread alone */
	int tiff_compression; /* TIFF: enum image_tiff_compression; 0 = deflate */
	int half;        /* TIFF at bits 16: IEEE half floats (linear light, as EXR's) instead of
			    16-bit sRGB codes (TIFF's bits: 8, 16 or 32 (float); 0 = 8) */
	const struct image_colour *colour; /* the colour the answer is converted to and tagged
			    with; NULL: sRGB. image_encode converts the working-space pixels and
			    hands the encoder a non-NULL one (the sRGB description for NULL); where
			    the colour cannot be converted to (a profile without the tables that
			    go that way), the answer is sRGB and colour_note says why */
	char *colour_note; /* NULL, or IMAGE_COLOUR_NOTE_LEN bytes: "" or why colour was not used */
};
#define IMAGE_COLOUR_NOTE_LEN 160

/* The compressions a TIFF answer is written with (image_encode_opts.tiff_compression), named by
 * image_tiff_compression_names (the request's tiff_compression=). Deflate and LZW use the
 * horizontal predictor on integer samples and the floating-point one on floats. */
enum image_tiff_compression {
	IMAGE_TIFF_DEFLATE = 0, /* Adobe deflate (the default) */
	IMAGE_TIFF_NONE,        /* uncompressed */
	IMAGE_TIFF_LZW,         /* LZW */
	IMAGE_TIFF_COMPRESSION_COUNT
};
/* Indexed by enum image_tiff_compression; NULL after the last. */
extern const char *const image_tiff_compression_names[IMAGE_TIFF_COMPRESSION_COUNT + 1];

/* The compressions an EXR answer is written with (image_encode_opts.exr_compression), named by
 * image_exr_compression_names (the request's exr_compression=). OpenEXRCore 3.1.5 writes no
 * DWAA/DWAB (it reads them). */
enum image_exr_compression {
	IMAGE_EXR_ZIP = 0, /* deflate, 16 scanlines a chunk (the default) */
	IMAGE_EXR_NONE,    /* uncompressed, one scanline a chunk */
	IMAGE_EXR_RLE,     /* run lengths, one scanline a chunk */
	IMAGE_EXR_ZIPS,    /* deflate, one scanline a chunk */
	IMAGE_EXR_PIZ,     /* wavelet + Huffman, 32 scanlines a chunk */
	IMAGE_EXR_COMPRESSION_COUNT
};
/* Indexed by enum image_exr_compression; NULL after the last. */
extern const char *const image_exr_compression_names[IMAGE_EXR_COMPRESSION_COUNT + 1];

/* What an encoder lost, OR-ed into *lost */
enum {
	IMAGE_LOST_ALPHA = 1,     /* the format has no alpha: alpha dropped */
	IMAGE_LOST_RANGE = 2,     /* values above 1 (integer formats) or above the format's
				     largest value clipped; NaN or infinity replaced */
	IMAGE_LOST_PRECISION = 4, /* samples quantised below float32: 8/16-bit codes, half floats,
				     RGBE's shared exponent, JPEG's lossy coding */
	IMAGE_LOST_NEGATIVE = 8,  /* negative values clipped to 0 */
};

/* How far past a format's range a sample may lie before clipping it counts as a loss
 * (IMAGE_LOST_RANGE, IMAGE_LOST_NEGATIVE): 2^-10 in linear light, about a tenth of an 8-bit sRGB
 * code near white. A float computation's rounding (a convolution's 1.0000002, -3e-8) is not a
 * loss. */
#define IMAGE_CLIP_TOL (1.0f / 1024)

#define IMAGE_ERR_LEN 256

enum image_error {
	IMAGE_OK = 0,
	IMAGE_E_ARG = -1,         /* bad argument */
	IMAGE_E_NOMEM = -2,       /* out of memory */
	IMAGE_E_IO = -3,          /* file could not be opened, read or written */
	IMAGE_E_UNSUPPORTED = -4, /* unknown format, or a feature of a known one not supported */
	IMAGE_E_CORRUPT = -5,     /* malformed data */
	IMAGE_E_TRUNCATED = -6,   /* data ends early */
	IMAGE_E_TOO_LARGE = -7,   /* width, height or pixel count above the limits */
	IMAGE_E_EMPTY = -8,       /* zero width or height */
	IMAGE_E_BUSY = -9,        /* refused by the limits' admission hook for now (a memory
				     budget spent): the same image may be accepted later */
};

/* Static description of an image_error code. */
const char *image_strerror(int code);

/* Allocates w x h x channels zeroed pixels into *img (any old contents are not freed).
 * Returns 0, IMAGE_E_ARG (channels not 1-4), IMAGE_E_EMPTY, IMAGE_E_TOO_LARGE (size overflows)
 * or IMAGE_E_NOMEM; on failure *img is zeroed. */
int image_alloc(struct image *img, int w, int h, int channels);

/* Frees the pixels (or gives lent ones back: release) and zeroes the struct; NULL-safe. */
void image_free(struct image *img);
/* A digest of an image's size, channels and float bits (two independent 64-bit streams): what
 * both engines key a kernel's spectra by. */
void image_digest(const struct image *k, uint64_t digest[2]);

/* One row of the format table: what the codecs know of a format. Sniffing, file extensions,
 * media types, /v1/info, the 415 messages, the page's file picker, the OpenAPI document and
 * docs/formats.md all come from it, so a format is added in one place. */
struct image_format_desc {
	enum image_format format;
	const char *name;                  /* "jpeg": /v1/info's and format='s name */
	const char *title;                 /* "JPEG", "OpenEXR": what messages call it */
	const char *media_types[4];        /* NULL-terminated; the first is what answers carry */
	const char *extensions[4];         /* without the dot, NULL-terminated; the first is
	                                      the usual one */
	const char *magic;                 /* what image_sniff looks for, in words */
	int read, write;                   /* 1: image_decode reads it / image_encode writes it */
	unsigned char read_bits[4];        /* sample depths read, ascending, 0-terminated */
	unsigned char write_bits[4];       /* depths written (image_encode_opts.bits), the
	                                      default first, 0-terminated */
	int float_samples;                 /* 1: samples are floats (16: half, 32: float32);
	                                      2: integers at 8 and 16 bits, floats at 32 (and
	                                      16-bit half floats by image_encode_opts.half) */
	int alpha;                         /* an alpha channel is kept both ways */
};

/* The format table, in the order formats are listed; *n rows. */
const struct image_format_desc *image_formats(size_t *n);

/* The row of f, or NULL for IMAGE_FORMAT_UNKNOWN. */
const struct image_format_desc *image_format_desc(enum image_format f);

/* Writes the titles of the formats read (write 0) or written (write 1) into buf as a list
 * joined by ", " with conj before the last ("JPEG, PNG, ... or AVIF" for conj "or"), cut to
 * len - 1 characters. Returns buf. */
char *image_format_titles(char *buf, size_t len, int write, const char *conj);

/* 1 when the depth `bits` is one f writes, else 0. */
int image_format_writes_bits(enum image_format f, int bits);

/* The samples of img (alpha included) that are NaN or infinite: float inputs with any are
 * refused by every operation (docs/http-api.md, "NaN and infinity"). 0 for an empty image. */
size_t image_nonfinite(const struct image *img);

/* Format from the leading magic bytes; IMAGE_FORMAT_UNKNOWN if none matches. */
enum image_format image_sniff(const void *buf, size_t len);

/* Format from a file name's extension or a bare name: "x.exr", "png", "jpg", "jpeg", "hdr",
 * "pfm", "webp", "avif" (case-insensitive; also "jpe", "rgbe", "pic"). */
enum image_format image_format_from_name(const char *name_or_ext);

/* "jpeg", "png", "exr", "hdr", "pfm", "webp", "avif", or "unknown" */
const char *image_format_name(enum image_format f);

/* Checks a header's size against lim (NULL = defaults): 0, IMAGE_E_EMPTY or IMAGE_E_TOO_LARGE
 * with a message naming fmt_name in err. Decoders call it before allocating; callers may too. */
int image_check_limits(const struct image_limits *lim, unsigned long long w, unsigned long long h,
		       const char *fmt_name, char err[IMAGE_ERR_LEN]);

/* Decodes an image of any supported format, chosen by magic bytes. Integer formats are converted
 * from sRGB to linear (alpha stays linear); float formats are taken as linear. On failure returns
 * a negative image_error, writes a message naming the format and the problem, and leaves *out
 * zeroed. */
int image_decode(const void *buf, size_t len, const struct image_limits *lim, struct image *out,
		 struct image_info *info, char err[IMAGE_ERR_LEN]);

/* As image_decode, with the pixels of a PFM or an OpenEXR frame in memory mem lends: when its
 * alloc lends w * h * 16 bytes, the decoder writes the frame there as interleaved RGBA float32
 * (out->channels 4: gray copied to R, G and B, a missing alpha 1; info->channels still says
 * what the file stores), the layout a GPU reads; the samples are the same floats image_decode
 * gives. mem NULL, its alloc returning NULL, or another format: as image_decode. On failure
 * lent memory has been given back already. */
int image_decode_into(const void *buf, size_t len, const struct image_limits *lim,
		      const struct image_memory *mem, struct image *out, struct image_info *info,
		      char err[IMAGE_ERR_LEN]);

/* Encodes img in fmt. *out is malloc'd (the caller frees it). What the format could not keep is
 * OR-ed into *lost (IMAGE_LOST_*; *lost is cleared first). Returns 0 or a negative image_error. */
int image_encode(const struct image *img, enum image_format fmt, const struct image_encode_opts *o,
		 unsigned char **out, size_t *out_len, unsigned *lost, char err[IMAGE_ERR_LEN]);

/* As image_decode_into; with colour non-NULL, *colour receives the input's colour description
 * as it was applied (the caller frees it: image_colour_free; sRGB with a note when the file's
 * was ignored). Every decode converts the pixels into the working space: linear light,
 * Rec. 709 / sRGB primaries, D65 white, unclamped (wide-gamut colours as negative
 * components). */
int image_decode_colour(const void *buf, size_t len, const struct image_limits *lim,
			const struct image_memory *mem, struct image *out, struct image_info *info,
			struct image_colour *colour, char err[IMAGE_ERR_LEN]);

/* Adds an ICC profile to a JPEG after its SOI and JFIF APP0 (APP2 ICC_PROFILE segments of at
 * most 65519 bytes of the profile each): *jpeg is replaced (realloc'd), *len updated. 0,
 * IMAGE_E_ARG (not a JPEG, or a profile of more than 255 segments) or IMAGE_E_NOMEM. */
int image_jpeg_add_icc(unsigned char **jpeg, size_t *len, const void *icc, size_t icc_len);

/* As image_decode, from a file (the file's size is bounded by 2 GiB). */
int image_read_file(const char *path, const struct image_limits *lim, struct image *out,
		    struct image_info *info, char err[IMAGE_ERR_LEN]);

/* As image_encode to a file; the format comes from the extension (IMAGE_E_UNSUPPORTED if it
 * names none). */
int image_write_file(const char *path, const struct image *img, const struct image_encode_opts *o,
		     unsigned *lost, char err[IMAGE_ERR_LEN]);

/* Copies in into a new image with `channels` channels: gray is replicated to RGB, a missing alpha
 * becomes 1, RGB becomes gray by Rec. 709 luminance (0.2126, 0.7152, 0.0722), and a dropped
 * alpha is discarded. Returns 0 or a negative image_error; *out is zeroed on failure. */
int image_convert_channels(const struct image *in, int channels, struct image *out);

/* A JPEG component's quantised DCT coefficients in a yuv_image's data (its coefs form), for
 * a GPU to read as 32-bit words (all offsets multiples of 4, little-endian): bw x bh blocks (the
 * component's whole MCUs, as libjpeg's arrays), block b = row * bw + column. At dc + 4b a word:
 * bits 0-15 the DC coefficient (int16), bit 16 set when an AC coefficient of the block is past
 * 8 bits. At ac + 64b the AC coefficients as int8, saturated, in natural (row-major) order
 * (byte 0 unused). At ovf, novf records of YUV_COEF_OVF_BYTES, one for each AC coefficient past
 * 8 bits, sorted by block and index: the block (uint32), then the index (uint16, natural order)
 * and the coefficient (int16). At quant the component's quantisation table, 64 uint16 in
 * natural order. A sample is then 128 + the inverse DCT of coefficient x table, rounded and
 * clamped to 0-255. */
#define YUV_COEF_OVF_BYTES 8
struct yuv_coefs {
	int bw, bh, novf;
	size_t dc, ac, ovf, quant;
};

/* A baseline JPEG's scan as the GPU's entropy decoder reads it (yuv_image.scan), all offsets
 * in bytes of data, multiples of 4, words little-endian: at tables, 8 Huffman tables of
 * YUV_SCAN_TABLE_WORDS words (DC tables 0-3, AC tables 4-7; those the scan does not use are
 * zero): a 9-bit lookup table (YUV_SCAN_LUT_BITS: entry v is length << 8 | symbol of the code
 * that v's leading bits spell, 0 where the code is longer), maxcode[0..16] (int32, -1: no code of
 * that length), valoffset[0..16] (int32) and the 256 symbols, as libjpeg's jdhuff.c derives
 * them; at segs, nseg + 1 words, the first bit of each restart segment in the bytes and then the
 * bits in all, followed by nseg + 1 words, the first chunk (of chunk_bits) of each segment
 * and then the chunks in all; at bytes, the scan with its stuffed zero bytes and its restart
 * markers taken out, four bytes a word, the first byte in the word's top bits, then two zero
 * words. */
#define YUV_SCAN_TABLE_WORDS 832
#define YUV_SCAN_LUT_BITS 9
#define YUV_SCAN_CHUNK_BITS 1024 /* the chunks' bits image_decode_jpeg_scan_into cuts */
#define YUV_SCAN_MCU_BLOCKS 6
struct yuv_scan {
	int nseg;            /* restart segments (1 without restart markers) */
	int ri;              /* MCUs a segment but the last (the restart interval, else them all) */
	int mcux, mcuy;      /* MCUs across and down */
	int nblk;            /* blocks an MCU */
	int chunk_bits;      /* bits a chunk (a decoding thread's share of a segment) */
	int nchunks;         /* chunks in all segments */
	unsigned char bcomp[YUV_SCAN_MCU_BLOCKS]; /* each block of an MCU: its component */
	unsigned char bx[YUV_SCAN_MCU_BLOCKS], by[YUV_SCAN_MCU_BLOCKS]; /* its place within the
	                                                                  component's part */
	unsigned char hs[3], vs[3]; /* each component's blocks across and down an MCU */
	unsigned char dctab[3], actab[3]; /* each component's tables (0-3, 4-7) */
	size_t tables, segs, bytes; /* offsets in data */
	size_t nbytes;       /* the scan's bytes (unstuffed) */
};

/* A JPEG's samples before colour conversion: the Y, Cb, Cr planes (JFIF: full-range BT.601)
 * with the chroma subsampled sub_x x sub_y (1 or 2 each), or Y alone for a gray JPEG. Decoding
 * to planes leaves the chroma upsampling, the colour conversion, the sRGB decode and the EXIF
 * orientation to whoever converts them (the GPU); encoding from planes skips the CPU's colour
 * conversion and downsampling. One allocation; each plane's rows are padded to a multiple of 4
 * bytes, so a GPU can read the planes as 32-bit words. */
struct yuv_image {
	int width, height;  /* luma size as stored (before the orientation) */
	int gray;           /* 1: Y only */
	int sub_x, sub_y;   /* chroma subsampling factors (1 when gray) */
	int orientation;    /* EXIF orientation (1-8) the converter applies; 1: none */
	int pw[3], ph[3];   /* plane sizes in samples (0 for absent planes) */
	int stride[3];      /* bytes per plane row, a multiple of 4 */
	size_t offset[3];   /* plane starts in data, multiples of 4 */
	size_t bytes;       /* the planes' total size */
	int dct_quality;    /* 0: planes of samples. 1-100: each plane is instead its component's
	                       quantised DCT coefficients, as libjpeg's encoder makes them before
	                       the entropy coding, with libjpeg's tables at this quality
	                       (yuv_image_layout_dct) */
	size_t coded;       /* with dct_quality: 0, or data holds instead the first `coded` bytes
	                       of those coefficients' entropy-coded scan: baseline, libjpeg's
	                       standard Huffman tables, a restart interval of one MCU row (RSTn
	                       between rows), as libjpeg writes it with restart_in_rows = 1 */
	int coefs;          /* 1: data holds instead the quantised DCT coefficients a JPEG decode
	                       made (image_decode_jpeg_coefs_into), laid out by cf; the plane fields
	                       describe the planes they make (planes_bytes of them), bytes is the
	                       room data has (the worst case's), and coef_bytes what they use of it */
	size_t planes_bytes, coef_bytes;
	struct yuv_coefs cf[3];
	int scan;           /* with coefs: data holds instead the frame's entropy-coded scan for
	                       the GPU to decode (image_decode_jpeg_scan_into), laid out by sc; cf
	                       gives each component's blocks (bw, bh) and its quantisation table
	                       (quant), the other offsets unused */
	struct yuv_scan sc;
	unsigned char *data;
	void (*release)(void *owner); /* NULL: data is malloc'd. Else data is memory lent by a
	                                 yuv_memory, which yuv_image_free gives back through
	                                 release(owner) instead of freeing it */
	void *owner;
};

/* Memory for a decode's planes that the caller lends instead of malloc'd memory (an upload
 * buffer a GPU reads where the planes were decoded): alloc(ctx, bytes, &owner) is called once
 * the header has been read and its size admitted, and returns at least `bytes` of it, setting
 * *owner, or NULL for malloc'd planes. Lent memory goes back through release(owner) once, when
 * the planes are freed (yuv_image_free), a failed decode's included. */
struct yuv_memory {
	void *(*alloc)(void *ctx, size_t bytes, void **owner);
	void (*release)(void *owner);
	void *ctx;
};

/* Allocates planes for a w x h image: gray, or chroma subsampled sub_x x sub_y (1 or 2 each;
 * planes of ceil(w / sub_x) x ceil(h / sub_y)). Returns 0, IMAGE_E_ARG, IMAGE_E_EMPTY,
 * IMAGE_E_TOO_LARGE or IMAGE_E_NOMEM; *y is zeroed on failure. As libjpeg lays planes out, the
 * luma plane is padded to whole chroma blocks (ceil(w / sub_x) * sub_x wide): its extra columns
 * and rows repeat the edge. */
int yuv_image_alloc(struct yuv_image *y, int w, int h, int gray, int sub_x, int sub_y);
/* As yuv_image_alloc, without allocating: every field but data (NULL), for planes that live in
 * memory the caller provides (y->bytes of it). */
int yuv_image_layout(struct yuv_image *y, int w, int h, int gray, int sub_x, int sub_y);
/* NULL-safe; frees data, or gives lent memory back (release); zeroes the struct */
void yuv_image_free(struct yuv_image *y);
/* The bytes of data the frame uses: its coefficients' (coef_bytes of the room) or its planes'. */
size_t yuv_image_used_bytes(const struct yuv_image *y);
/* As yuv_image_layout, for coefficients quantised at quality (1-100): each component a whole
 * number of MCUs of 8x8 blocks, pw[p] x ph[p] blocks (luma ceil(w / (8 sub_x)) * sub_x across,
 * chroma ceil(w / (8 sub_x)); rows alike), each block 64 int16 in natural (row-major, not
 * zigzag) order, a row of blocks stride[p] = pw[p] * 128 bytes. What lies past the image's
 * samples is as libjpeg pads it: the edge sample repeated. */
int yuv_image_layout_dct(struct yuv_image *y, int w, int h, int gray, int sub_x, int sub_y,
                         int quality);
/* libjpeg's quantisation tables at quality 1-100 (jpeg_set_quality, baseline-limited), luma and
 * chroma, in natural order. 0 or IMAGE_E_ARG. */
int image_jpeg_quant_tables(int quality, unsigned short luma[64], unsigned short chroma[64]);
/* The Huffman codes libjpeg's encoder uses by default (its standard tables), as code | size << 16
 * by symbol: DC luma at [0, 16), DC chroma at [16, 32), AC luma at [32, 288), AC chroma at
 * [288, 544); an unused symbol's size is 0. 0 or IMAGE_E_NOMEM. */
#define IMAGE_JPEG_HUFF_CODES 544
int image_jpeg_huff_codes(uint32_t codes[IMAGE_JPEG_HUFF_CODES]);
/* Zigzag position -> natural (row-major) index of a block's 64 coefficients. */
extern const unsigned char image_jpeg_natural[64];
/* The entropy-coded scan of a baseline JPEG of one scan: the bytes after its SOS segment up to
 * its final EOI, at *at, *n of them. 0 or IMAGE_E_CORRUPT. */
int image_jpeg_scan(const unsigned char *jpeg, size_t len, size_t *at, size_t *n);

/* Decodes a JPEG to its planes (no colour conversion or upsampling; the EXIF orientation is
 * recorded, not applied; limits apply to the oriented size). IMAGE_E_UNSUPPORTED for what the
 * planes cannot carry (CMYK/YCCK, 4:1:1 and other subsamplings beyond 2x2, a non-JPEG): the
 * caller decodes with image_decode instead. Other errors as image_decode. */
int image_decode_jpeg_yuv(const void *buf, size_t len, const struct image_limits *lim,
			  struct yuv_image *out, struct image_info *info, char err[IMAGE_ERR_LEN]);
/* As image_decode_jpeg_yuv, into memory mem lends (NULL, or its alloc returning NULL: malloc'd
 * planes as image_decode_jpeg_yuv's). On failure lent memory has been given back already. */
int image_decode_jpeg_yuv_into(const void *buf, size_t len, const struct image_limits *lim,
			       const struct yuv_memory *mem, struct yuv_image *out,
			       struct image_info *info, char err[IMAGE_ERR_LEN]);

/* As image_decode_jpeg_yuv_into, the frame's quantised DCT coefficients instead of its planes
 * (out->coefs; libjpeg's entropy decoding alone, the inverse DCT left to the GPU): for a
 * baseline or progressive 8-bit JPEG whose planes image_decode_jpeg_yuv_into would carry. The
 * memory asked of mem (out->bytes) is the room for records of two wide coefficients a block (84
 * bytes a block); out->coef_bytes is what the frame uses of it (68-70 bytes a block at quality
 * 90, against 64 samples). A frame with more (noise at quality 100), or a progressive one that
 * leaves coefficients unrefined (libjpeg's decoder smooths those), is decoded to planes instead
 * (out->coefs 0). */
int image_decode_jpeg_coefs_into(const void *buf, size_t len, const struct image_limits *lim,
				 const struct yuv_memory *mem, struct yuv_image *out,
				 struct image_info *info, char err[IMAGE_ERR_LEN]);
/* As image_decode_jpeg_coefs_into, for the GPU's entropy decoder: for a baseline (SOF0/SOF1,
 * 8-bit, Huffman) JPEG of one interleaved scan of all its components (grey, or YCbCr with the
 * chroma 1x1 and the luma 1x1, 2x1, 1x2 or 2x2), with or without restart markers, out->scan is
 * set and data holds the scan as struct yuv_scan describes it: its headers parsed, its bytes
 * unstuffed and copied, nothing entropy-decoded. Whatever else (progressive, arithmetic,
 * 12-bit, a scan a component, a marker inside the scan, a restart marker out of sequence or
 * missing, an invalid Huffman table, a truncated scan) is decoded as image_decode_jpeg_coefs_into
 * does, so the answer is libjpeg's. */
int image_decode_jpeg_scan_into(const void *buf, size_t len, const struct image_limits *lim,
				const struct yuv_memory *mem, struct yuv_image *out,
				struct image_info *info, char err[IMAGE_ERR_LEN]);
/* The scan of a baseline JPEG as image_decode_jpeg_scan_into lays it out (w x h, gray or chroma
 * subsampled sx x sy as the frame must be), into memory from mem (NULL: malloc'd). 0 with out
 * set (scan, coefs and the planes' layout), 1 when the file is not one it takes (out zeroed,
 * no memory held), or IMAGE_E_NOMEM / IMAGE_E_TOO_LARGE with err. */
int image_jpeg_scan_prepare(const unsigned char *buf, size_t len, int w, int h, int gray, int sx,
			    int sy, const struct yuv_memory *mem, struct yuv_image *out,
			    char err[IMAGE_ERR_LEN]);

/* A scan's segments (y->scan) cut again into chunks of chunk_bits (a multiple of 32, 64 to
 * 65536): the chunk table in data, chunk_bits and nchunks. 0 or IMAGE_E_ARG. */
int image_jpeg_scan_chunks(struct yuv_image *y, int chunk_bits);

/* The planes a coefs-form frame makes (its inverse DCT on the CPU, in float32 as the GPU's pass
 * does) into new malloc'd planes out. 0, IMAGE_E_ARG (not coefs), IMAGE_E_NOMEM or
 * IMAGE_E_CORRUPT (a flagged block without its record). */
int yuv_coefs_to_planes(const struct yuv_image *in, struct yuv_image *out);

/* Planes to a float image on the CPU as a JPEG decode would have made it: libjpeg's chroma
 * upsampling and colour conversion, the sRGB decode, the EXIF orientation applied. 0 or a
 * negative image_error. */
int image_from_yuv(const struct yuv_image *y, struct image *out, char err[IMAGE_ERR_LEN]);

/* Encodes planes as a JPEG (quality 1-100; the subsampling as the planes are, or gray).
 * Coefficient planes (dct_quality) are entropy-coded as they are (libjpeg's
 * jpeg_write_coefficients, read in place), or, when already coded (y->coded), given the
 * headers libjpeg would write before that scan: quality must be theirs, else IMAGE_E_ARG.
 * Returns 0 or a negative image_error; *out is malloc'd. */
int image_encode_jpeg_yuv(const struct yuv_image *y, int quality, unsigned char **out,
			  size_t *out_len, char err[IMAGE_ERR_LEN]);

#endif
