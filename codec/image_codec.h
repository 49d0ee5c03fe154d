/* Internal to codec/image*.c: the per-format decoders and encoders behind image_decode and
 * image_encode, and the helpers they share (error messages, byte buffers, sample clipping).
 * Not for use outside codec/. */
#ifndef FFTBLOOM_IMAGE_CODEC_H
#define FFTBLOOM_IMAGE_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "codec/image.h"

/* A JPEG already checked by image_decode_jpeg_yuv_into's header path (w x h, gray or YCbCr
 * subsampled sx x sy) decoded to its coefficients in out (memory from mem, else malloc'd): 0,
 * 1 when planes should be decoded instead (nothing kept), or a negative image_error with err. */
int image_jpeg_coefs(const unsigned char *buf, size_t len, int w, int h, int gray, int sx, int sy,
                     const struct yuv_memory *mem, struct yuv_image *out, char *err);

/* What yuv_image_layout and yuv_image_layout_dct share: *y zeroed, then w x h checked
 * (IMAGE_E_EMPTY below 1, IMAGE_E_TOO_LARGE past JPEG's 65535) with sub_x, sub_y (1 or 2, else
 * IMAGE_E_ARG; gray: both 1), and set with orientation 1. The caller lays the planes out and
 * sets bytes. *y stays zeroed on failure. */
int yuv_image_frame(struct yuv_image *y, int w, int h, int gray, int sub_x, int sub_y);

/* 0 when libjpeg reads every scan of buf with no warning past stray bytes between segments or
 * the JFIF version, else IMAGE_E_TRUNCATED or IMAGE_E_CORRUPT with err (the entropy decoding
 * alone, into libjpeg's own arrays). */
int image_jpeg_scans_check(const unsigned char *buf, size_t len, char *err);

/* For decoders: the file's colour description, recorded in info->colour (nothing when it is
 * NULL) for image_decode_colour, which converts the pixels after the decoder returns. The
 * decoder decodes as it would without them (integer samples through the sRGB curve, floats as
 * linear). set_icc copies the profile (bytes as stored, reassembled from chunks); at most once
 * a decode; 0 or IMAGE_E_NOMEM (which the decoder may ignore: then sRGB). set_cicp: nclx code
 * points, used where no profile was given. set_chromaticities: the primaries and white (red,
 * green, blue, white, CIE xy) of a linear float format's samples. */
int image_colour_set_icc(struct image_info *info, const void *icc, size_t len);
void image_colour_set_cicp(struct image_info *info, int primaries, int transfer, int matrix,
			   int full_range);
void image_colour_set_chromaticities(struct image_info *info, const float xy[8]);

/* The ICC profile of a JPEG's APP2 ICC_PROFILE segments, reassembled in sequence order into a
 * malloc'd *icc: 1 with it, 0 when there is none or the segments are inconsistent (missing,
 * duplicated, counts that disagree: then *note says so), IMAGE_E_NOMEM. */
int image_jpeg_icc(const unsigned char *buf, size_t len, unsigned char **icc, size_t *icc_len,
		   const char **note);

/* Writes "fmt..." into err (if not NULL) and returns code. */
int image_fail(char *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Growable byte buffer for encoders. */
struct image_buf {
	unsigned char *p;
	size_t len, cap;
};
int image_buf_put(struct image_buf *b, const void *data, size_t n); /* 0 or IMAGE_E_NOMEM */

/* A sample for an integer format: clamps to [0,1], OR-ing LOST_NEGATIVE / LOST_RANGE into *lost
 * when it lay more than IMAGE_CLIP_TOL outside (NaN gives 0 and LOST_RANGE). */
static inline float image_clip01(float v, unsigned *lost)
{
	if (v >= 0 && v <= 1)
		return v;
	if (v < 0) {
		if (v < -IMAGE_CLIP_TOL)
			*lost |= IMAGE_LOST_NEGATIVE;
		return 0;
	}
	if (!(v <= 1 + IMAGE_CLIP_TOL))
		*lost |= IMAGE_LOST_RANGE;
	return v > 1 ? 1 : 0;
}

/* Each decoder: buf/len is the whole file, lim is never NULL, info is never NULL. On failure the
 * decoder frees what it allocated and leaves *out zeroed. */
typedef int (*image_decode_fn)(const unsigned char *buf, size_t len, const struct image_limits *lim,
			       struct image *out, struct image_info *info, char *err);
/* The float decoders that take lent memory (image_decode_into); mem may be NULL. */
int image_decode_pfm_into(const unsigned char *buf, size_t len, const struct image_limits *lim,
			  const struct image_memory *mem, struct image *out,
			  struct image_info *info, char *err);
int image_decode_exr_into(const unsigned char *buf, size_t len, const struct image_limits *lim,
			  const struct image_memory *mem, struct image *out,
			  struct image_info *info, char *err);
/* w x h RGBA pixels (w, h admitted already) in memory mem lends: 1 with *img set (4 channels,
 * the contents undefined: the decoder writes every sample), 0 when none is lent (mem NULL or
 * its alloc NULL; *img zeroed), for the decoder to image_alloc as usual. */
int image_alloc_lent(const struct image_memory *mem, struct image *img, int w, int h);

/* Each encoder: img is valid (checked by image_encode), o is never NULL (defaults filled in),
 * lost is never NULL. */
typedef int (*image_encode_fn)(const struct image *img, const struct image_encode_opts *o,
			       unsigned char **out, size_t *out_len, unsigned *lost, char *err);

int image_decode_pfm(const unsigned char *buf, size_t len, const struct image_limits *lim,
		     struct image *out, struct image_info *info, char *err);
int image_encode_pfm(const struct image *img, const struct image_encode_opts *o,
		     unsigned char **out, size_t *out_len, unsigned *lost, char *err);
int image_decode_hdr(const unsigned char *buf, size_t len, const struct image_limits *lim,
		     struct image *out, struct image_info *info, char *err);
int image_encode_hdr(const struct image *img, const struct image_encode_opts *o,
		     unsigned char **out, size_t *out_len, unsigned *lost, char *err);
int image_decode_png(const unsigned char *buf, size_t len, const struct image_limits *lim,
		     struct image *out, struct image_info *info, char *err);
int image_encode_png(const struct image *img, const struct image_encode_opts *o,
		     unsigned char **out, size_t *out_len, unsigned *lost, char *err);
int image_decode_jpeg(const unsigned char *buf, size_t len, const struct image_limits *lim,
		      struct image *out, struct image_info *info, char *err);
int image_encode_jpeg(const struct image *img, const struct image_encode_opts *o,
		      unsigned char **out, size_t *out_len, unsigned *lost, char *err);
int image_decode_exr(const unsigned char *buf, size_t len, const struct image_limits *lim,
		     struct image *out, struct image_info *info, char *err);
int image_encode_exr(const struct image *img, const struct image_encode_opts *o,
		     unsigned char **out, size_t *out_len, unsigned *lost, char *err);
int image_decode_webp(const unsigned char *buf, size_t len, const struct image_limits *lim,
		      struct image *out, struct image_info *info, char *err);
int image_encode_webp(const struct image *img, const struct image_encode_opts *o,
		      unsigned char **out, size_t *out_len, unsigned *lost, char *err);
int image_decode_avif(const unsigned char *buf, size_t len, const struct image_limits *lim,
		      struct image *out, struct image_info *info, char *err);
int image_encode_avif(const struct image *img, const struct image_encode_opts *o,
		      unsigned char **out, size_t *out_len, unsigned *lost, char *err);

int image_decode_tiff(const unsigned char *buf, size_t len, const struct image_limits *lim,
		      struct image *out, struct image_info *info, char *err);
int image_encode_tiff(const struct image *img, const struct image_encode_opts *o,
		      unsigned char **out, size_t *out_len, unsigned *lost, char *err);
int image_decode_heic(const unsigned char *buf, size_t len, const struct image_limits *lim,
		      struct image *out, struct image_info *info, char *err);

/* Applies orientation o (EXIF's and TIFF's 1-8) to in (w x h, ch channels) into out, whose size
 * is already swapped for 5-8. */
void image_orient(const float *in, int w, int h, int ch, int o, float *out);

/* image_encode_jpeg_yuv for coefficient planes (y->dct_quality set; image_jpeg_dct.c). */
int image_encode_jpeg_dct(const struct yuv_image *y, int quality, unsigned char **out,
                          size_t *out_len, char err[IMAGE_ERR_LEN]);

#endif
