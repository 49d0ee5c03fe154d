/* Small pure pieces of the HTTP API, kept apart from libmicrohttpd so they have unit tests: the
 * --gpus and --warm-sizes lists, CORS origin matching, names, UTF-8 cleaning and answers'
 * default qualities. */
#ifndef FFTBLOOM_APIUTIL_H
#define FFTBLOOM_APIUTIL_H

#include <stddef.h>

#include "core/config.h"
#include "codec/image.h"

#define API_ERR_LEN 256

/* Parses --gpus: "all" (every one of device_count devices; one when device_count is 0, so that
 * the auto platform can fall back to a software renderer) or "N[,M...]"; a device listed
 * twice gets two workers (two processes on one GPU).
 * Returns 0 with *n set, or -1 with a message. */
int api_parse_gpus(const char *s, int device_count, int *list, int max, int *n,
                   char err[API_ERR_LEN]);

/* Parses a list of sizes "WxH[,WxH...]" (--warm-sizes, --spare-plans; each side 1..max_side, at
 * most max); "" gives *n = 0. The message does not name the option: callers prefix it. */
int api_parse_sizes(const char *s, int max_side, int (*wh)[2], int max, int *n,
                    char err[API_ERR_LEN]);

/* 1 when origin is in the comma-separated list (exact match, spaces ignored) or the list is
 * "*"; 0 for an empty list or a NULL origin. */
int api_origin_allowed(const char *list, const char *origin);

/* 1 for 1..64 characters of [A-Za-z0-9._-] not starting with '.': kernel names, request ids. */
int api_valid_name(const char *s);

/* An answer's quality when its request gives none: --webp-quality, --avif-quality, or
 * --jpeg-quality for JPEG and every other format (fmt: enum image_format). */
int api_default_quality(const struct config *c, int fmt);

/* Replaces in place every byte of s that does not belong to a well-formed UTF-8 sequence
 * (overlong forms, surrogates and code points past U+10FFFF included) with '?', so that text
 * echoing a client's bytes can go into JSON. */
void api_utf8_clean(char *s);

#endif
