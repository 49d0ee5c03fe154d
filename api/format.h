/* An answer's image format: what format= names, what an Accept header allows and prefers, and
 * what the input's family implies when neither says; and the media type of each. Pure text and
 * enums: the server's choices (--auto-avif) come in as arguments. */
#ifndef FFTBLOOM_FORMAT_H
#define FFTBLOOM_FORMAT_H

#include <stdio.h>

#include "codec/image.h"

/* An answer's format as asked for by format=; OUT_AUTO follows Accept, then the input. */
enum out_format {
	OUT_AUTO = 0,
	OUT_JPEG,
	OUT_PNG,   /* 8-bit PNG (via Accept: 16-bit when the input has 16 bits) */
	OUT_PNG16,
	OUT_EXR,
	OUT_HDR,
	OUT_PFM,
	OUT_WEBP,
	OUT_AVIF,  /* 8-bit AVIF (via Accept: 10-bit when the input has more than 8 bits) */
	OUT_AVIF10,
	OUT_AVIF12,
	OUT_TIFF,    /* 8-bit TIFF (via Accept or the input's family: as deep as the input) */
	OUT_TIFF16,  /* 16-bit integer TIFF */
	OUT_TIFF16F, /* 16-bit half float TIFF */
	OUT_TIFF32,  /* 32-bit float TIFF */
};

#define FORMAT_CHOICES "jpeg|png|png16|exr|hdr|pfm|webp|avif|avif10|avif12|tiff|tiff16|tiff16f|tiff32"

/* format= value (a FORMAT_CHOICES name or "jpg", case-insensitive) to an out_format, or -1. */
int format_parse(const char *s);

/* What an Accept header allows, per format the server makes (indexed by enum image_format). */
struct format_accept {
	int given;                                /* 0: no Accept header (or an empty one) */
	int prefer_avif;                          /* AVIF chosen by Accept like any other type;
	                                             0: only when nothing else is acceptable */
	unsigned short q[IMAGE_FORMAT_COUNT];     /* q in thousandths, 0-1000; 0: not acceptable */
	unsigned short named[IMAGE_FORMAT_COUNT]; /* 1 + the position of the first media range
	                                             naming the format's own type; 0: matched by a
	                                             wildcard at most */
};

enum {
	FORMAT_E_NONE = -1, /* the header accepts none of the formats made (answer 406) */
};

/* Parses an Accept header (NULL or blank: none, anything goes) into *a, with the server's
 * prefer_avif. Each format's q is the q of the most specific range matching one of its media
 * types (its own type, then the image wildcard, then the full wildcard); ranges with a malformed q are ignored.
 * Returns 0, or FORMAT_E_NONE when a header was given and every format's q is 0. */
int format_from_accept(const char *accept, int prefer_avif, struct format_accept *a);

/* The encoder's format and bits (0: the encoder's default) for the request's choice and the
 * decoded input's facts (a TIFF of half floats: format_half). out (format=) other than OUT_AUTO is taken as it is. OUT_AUTO with no
 * Accept header (a NULL or a->given 0) follows the input's family: JPEG, PNG (16 bits for a
 * 16-bit PNG), WebP, AVIF (its depth), EXR for float formats. With one, the acceptable format
 * with the highest q wins; at equal q a type the header names beats one a wildcard matches.
 * Among named types: AVIF (prefer_avif only), then WebP, then the input's family, then the
 * header's order; among wildcard-matched ones: the family, then PNG, JPEG, EXR, HDR, PFM, WebP,
 * AVIF. Without prefer_avif, AVIF is chosen only when it is the input's family or nothing else
 * is acceptable. Formats whose largest side the input's size exceeds (WebP 16383, JPEG 65535,
 * AVIF 65536) are not chosen by Accept; with nothing else acceptable the family is. An
 * Accept-chosen PNG keeps 16 bits for a 16-bit PNG; an Accept-chosen AVIF is 10-bit for an
 * input of more than 8 bits (12 for a 12-bit AVIF). */
void format_resolve(int out, const struct format_accept *a, const struct image_info *in,
                    enum image_format *fmt, int *bits);

/* The bits an answer in fmt keeps of the input (0: the encoder's default), the rule of
 * format_resolve's OUT_AUTO and of the CLI's output chosen by extension: PNG is 16-bit for a
 * 16-bit PNG and 8-bit otherwise; AVIF is 12-bit for a 12-bit AVIF, 10-bit for any other input
 * of more than 8 bits (float formats included) and 8-bit otherwise; TIFF keeps the input's
 * depth: 32 (float32) for a float input but a half-float TIFF, 16 for a 16-bit one (half floats
 * for that TIFF: format_half), else 8; others 0. */
int format_bits(enum image_format fmt, const struct image_info *in);

/* Whether a TIFF answer (fmt, resolved from out as format_resolve does) holds half floats
 * (image_encode_opts.half): format=tiff16f, or a TIFF chosen by Accept or the family for a
 * half-float TIFF input. */
int format_half(int out, enum image_format fmt, const struct image_info *in);

/* What an answer reports of what its encoder lost (IMAGE_LOST_* in lost), written once for the
 * daemon's X-Image-Lost and the CLI's warnings: the losses nobody chose.
 * - bloom 1: range is left out: a bloom adds light to white, and an answer in a format that
 *   stops at 1.0 clips those highlights by design (docs/http-api.md says so once);
 * - precision only when the answer keeps fewer bits than the input had: an 8-bit input in an
 *   8-bit answer (JPEG's lossy coding included) loses none it had; a float or 16-bit input in
 *   an 8-bit answer does. out is the answer's format, bits its encoder bits (0: the default).
 * Range and negative come from the encoders past IMAGE_CLIP_TOL only (codec/image.h). */
unsigned format_lost_reported(unsigned lost, int bloom, const struct image_info *in,
                              enum image_format out, int bits);

/* The media type answers in f carry (the format table's first; "image/jpeg", "image/x-exr"),
 * "application/octet-stream" for IMAGE_FORMAT_UNKNOWN */
const char *format_content_type(enum image_format f);

/* A format table row's list of depths (image_format_desc.read_bits or write_bits, 0-terminated,
 * at most 4) as words, "8, 10 or 12", into buf; returns buf, or "-" when the list is empty. */
const char *format_depths(const unsigned char *bits, char *buf, size_t len);

/* The format table (codec/image.h's image_formats) as a Markdown table: one row a format, its
 * media types, extensions, magic bytes, what is read and written, depths, samples and alpha
 * (fftbloomd --print-formats; docs/formats.md ends with it). */
void format_markdown(FILE *f);

#endif
