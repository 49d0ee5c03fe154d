/* Small pure pieces of the HTTP API, kept apart from libmicrohttpd so they have unit tests:
 * output format negotiation (format=, Accept, the input's family), the --gpus and --warm-sizes
 * lists, CORS origin matching, names, and the constant-time API key comparison. */
#ifndef FFTBLOOM_APIUTIL_H
#define FFTBLOOM_APIUTIL_H

#include <stddef.h>

#include "protocol/image.h"

#define API_ERR_LEN 256

/* An answer's format as asked for; API_OUT_AUTO follows the input. */
enum api_out {
	API_OUT_AUTO = 0,
	API_OUT_JPEG,
	API_OUT_PNG,   /* 8-bit PNG (via Accept: 16-bit when the input has 16 bits) */
	API_OUT_PNG16,
	API_OUT_EXR,
	API_OUT_HDR,
	API_OUT_PFM,
};

#define API_FORMAT_CHOICES "jpeg|png|png16|exr|hdr|pfm"

/* format= value ("jpeg", "jpg", "png", "png16", "exr", "hdr", "pfm", case-insensitive) to an
 * api_out, or -1. */
int api_format_parse(const char *s);

/* The supported image type with the highest q in an Accept header (ties: the first listed);
 * API_OUT_AUTO when the header is absent, names only wildcards, or names nothing supported.
 * *png_from_accept is set to 1 when the choice is image/png (depth then follows the input). */
int api_format_from_accept(const char *accept, int *png_from_accept);

/* The encoder's format and bits for the request's choice and the decoded input's facts:
 * AUTO gives JPEG for JPEG, PNG (16 bits for 16-bit PNG) for PNG, EXR for float formats.
 * png_from_accept: an Accept-chosen PNG keeps 16 bits for a 16-bit input. */
void api_format_resolve(int out, int png_from_accept, const struct image_info *in,
                        enum image_format *fmt, int *bits);

/* "image/jpeg", "image/png", "image/x-exr", "image/vnd.radiance", "image/x-portable-floatmap" */
const char *api_content_type(enum image_format f);

/* Parses --gpus: "all" (every one of device_count devices; one when device_count is 0, so that
 * the auto platform can fall back to a software renderer) or "N[,M...]" without repeats.
 * Returns 0 with *n set, or -1 with a message. */
int api_parse_gpus(const char *s, int device_count, int *list, int max, int *n,
                   char err[API_ERR_LEN]);

/* Parses --warm-sizes "WxH[,WxH...]" (each side 1..max_side); "" gives *n = 0. */
int api_parse_sizes(const char *s, int max_side, int (*wh)[2], int max, int *n,
                    char err[API_ERR_LEN]);

/* 1 when origin is in the comma-separated list (exact match, spaces ignored) or the list is
 * "*"; 0 for an empty list or a NULL origin. */
int api_origin_allowed(const char *list, const char *origin);

/* 1 for 1..64 characters of [A-Za-z0-9._-] not starting with '.': kernel names, request ids. */
int api_valid_name(const char *s);

/* Compares a presented key with the expected one in time that depends only on the expected
 * key's length (not on where they differ). 1 when equal. */
int api_key_equal(const char *given, size_t given_len, const char *expected, size_t expected_len);

#endif
