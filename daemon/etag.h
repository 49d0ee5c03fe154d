/* The entity tags of GET render answers: a SHA-256 over everything an answer's bytes depend on,
 * so that a CDN or browser can revalidate a render URL (If-None-Match) and be answered 304 with
 * no GPU work. The inputs: the engine (the daemon's executable, its GPUs' renderer and driver, the
 * options that change pixels: see etag_engine), the stored image's digest, the kernel (a named
 * kernel's pixel digest, else the built-in preset as parsed), every parameter as parsed (numbers
 * from struct request, not the query's text, so that equivalent queries share a tag), and the
 * answer's encoder format, bit depth and quality. Pure code over GnuTLS's SHA-256. */
#ifndef FFTBLOOM_ETAG_H
#define FFTBLOOM_ETAG_H

#include <stdint.h>

#include "api/request.h"

#define ETAG_LEN 37 /* 'W/"', 32 hex digits (128 bits of the SHA-256), '"', NUL */

struct etag_render {
	const unsigned char *engine;  /* 32 bytes from etag_engine */
	const unsigned char *image;   /* 32 bytes: SHA-256 of the stored image's encoded bytes */
	const uint64_t *kernel;       /* a named kernel's digest (2 words; bloom_kernel_digest), or
	                                 NULL: req->p.preset is the kernel */
	const struct request *req;    /* the parameters as parsed; req->op is the operation */
	int format;                   /* enum image_format of the answer */
	int bits;                     /* its bits per sample as the encoder takes them */
	int quality;                  /* its quality (JPEG), resolved against the server default */
	const struct format_accept *accept; /* NULL where format, bits and quality are the
	                                 answer's; else (an origin's image, not decoded yet) format
	                                 is the request's format= (OUT_AUTO included), bits 0,
	                                 quality the request's or the defaults', and the Accept
	                                 header's preferences, which with the image resolve the
	                                 answer's format, go in too */
};

/* The weak entity tag (W/"0123..."), into out. Weak, since two renders with the same inputs are
 * the same picture but not always the same bytes: a frame run on a borrowed plan or in tiles
 * differs from one on its own plan in the last bits of a few pixels (up to a few JPEG codes).
 * Returns 0 or -1 (GnuTLS failed). */
int etag_render_tag(const struct etag_render *in, char out[ETAG_LEN]);

/* The whole SHA-256 that etag_render_tag's tag is the first half of: a --result-cache key.
 * Returns 0 or -1. */
int etag_render_digest(const struct etag_render *in, unsigned char out[32]);

/* The engine's digest: facts (text naming the GPUs' renderers and drivers and the options that
 * change pixels), and the bytes of the executable at exe_path (NULL: none), so that a new build
 * or driver changes every tag. Returns 0, or -1 when exe_path cannot be read (out then covers
 * the facts alone). */
int etag_engine(const char *exe_path, const char *facts, unsigned char out[32]);

#endif
