/* An answer's image format: what format= names, what an Accept header prefers, and what the
 * input's family implies when neither says; and the media type of each. Pure text and enums. */
#ifndef FFTBLOOM_FORMAT_H
#define FFTBLOOM_FORMAT_H

#include "protocol/image.h"

/* An answer's format as asked for; OUT_AUTO follows the input. */
enum out_format {
	OUT_AUTO = 0,
	OUT_JPEG,
	OUT_PNG,   /* 8-bit PNG (via Accept: 16-bit when the input has 16 bits) */
	OUT_PNG16,
	OUT_EXR,
	OUT_HDR,
	OUT_PFM,
};

#define FORMAT_CHOICES "jpeg|png|png16|exr|hdr|pfm"

/* format= value ("jpeg", "jpg", "png", "png16", "exr", "hdr", "pfm", case-insensitive) to an
 * out_format, or -1. */
int format_parse(const char *s);

/* The supported image type with the highest q in an Accept header (ties: the first listed);
 * OUT_AUTO when the header is absent, names only wildcards, or names nothing supported.
 * *png_from_accept is set to 1 when the choice is image/png (depth then follows the input). */
int format_from_accept(const char *accept, int *png_from_accept);

/* The encoder's format and bits for the request's choice and the decoded input's facts:
 * AUTO gives JPEG for JPEG, PNG (16 bits for 16-bit PNG) for PNG, EXR for float formats.
 * png_from_accept: an Accept-chosen PNG keeps 16 bits for a 16-bit input. */
void format_resolve(int out, int png_from_accept, const struct image_info *in,
                    enum image_format *fmt, int *bits);

/* "image/jpeg", "image/png", "image/x-exr", "image/vnd.radiance", "image/x-portable-floatmap" */
const char *format_content_type(enum image_format f);

#endif
