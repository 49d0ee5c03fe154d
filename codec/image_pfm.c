/* PFM (portable float map): "PF" (RGB) or "Pf" (gray), width, height, and a scale whose sign
 * gives the byte order (negative: little-endian), then float32 rows from bottom to top. The
 * scale's magnitude is ignored, as by most readers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "codec/image_codec.h"

static int is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Reads one whitespace-delimited token (after skipping whitespace) into tok. */
static int token(const unsigned char *b, size_t len, size_t *pos, char *tok, size_t cap)
{
	size_t p = *pos, n = 0;
	while (p < len && is_space(b[p]))
		p++;
	while (p < len && !is_space(b[p])) {
		if (n + 1 >= cap)
			return -1;
		tok[n++] = (char)b[p++];
	}
	tok[n] = 0;
	*pos = p;
	return n ? 0 : -1;
}

static int parse_dim(const char *t, unsigned long long *v)
{
	if (!*t || strlen(t) > 12)
		return -1;
	unsigned long long x = 0;
	for (; *t; t++) {
		if (*t < '0' || *t > '9')
			return -1;
		x = x * 10 + (unsigned)(*t - '0');
	}
	*v = x;
	return 0;
}

int image_decode_pfm(const unsigned char *b, size_t len, const struct image_limits *lim,
		     struct image *out, struct image_info *info, char *err)
{
	return image_decode_pfm_into(b, len, lim, NULL, out, info, err);
}

int image_decode_pfm_into(const unsigned char *b, size_t len, const struct image_limits *lim,
			  const struct image_memory *mem, struct image *out,
			  struct image_info *info, char *err)
{
	int ch = b[1] == 'F' ? 3 : 1;
	size_t pos = 2;
	char tok[64];
	unsigned long long w, h;
	if (token(b, len, &pos, tok, sizeof tok) || parse_dim(tok, &w))
		return image_fail(err, pos >= len ? IMAGE_E_TRUNCATED : IMAGE_E_CORRUPT,
				  "pfm: bad width in the header");
	if (token(b, len, &pos, tok, sizeof tok) || parse_dim(tok, &h))
		return image_fail(err, pos >= len ? IMAGE_E_TRUNCATED : IMAGE_E_CORRUPT,
				  "pfm: bad height in the header");
	if (token(b, len, &pos, tok, sizeof tok))
		return image_fail(err, pos >= len ? IMAGE_E_TRUNCATED : IMAGE_E_CORRUPT,
				  "pfm: bad scale in the header");
	char *end;
	double scale = strtod(tok, &end);
	if (*end || !isfinite(scale) || scale == 0)
		return image_fail(err, IMAGE_E_CORRUPT, "pfm: scale '%s' is not a nonzero number", tok);
	if (pos >= len)
		return image_fail(err, IMAGE_E_TRUNCATED, "pfm: file ends after the header");
	pos++; /* the single whitespace character ending the header */
	int rc = image_check_limits(lim, w, h, "pfm", err);
	if (rc)
		return rc;
	size_t row, need; /* within the limits already; checked all the same (a header's sizes) */
	if (checked_mul_size((size_t)w, (size_t)ch, &row) ||
	    checked_product_size((const size_t[]){row, (size_t)h}, 2, 4, &need))
		return image_fail(err, IMAGE_E_TOO_LARGE, "pfm: %llux%llu overflows", w, h);
	if (len - pos < need)
		return image_fail(err, IMAGE_E_TRUNCATED, "pfm: %zu bytes of pixel data, %llux%llu needs %zu",
				  len - pos, w, h, need);
	/* lent: RGBA (gray to R, G and B; alpha 1), written once, never read */
	int lent = image_alloc_lent(mem, out, (int)w, (int)h);
	if (!lent && (rc = image_alloc(out, (int)w, (int)h, ch)))
		return image_fail(err, rc, "pfm: cannot allocate %llux%llu pixels", w, h);
	int little = scale < 0;
	const unsigned char *p = b + pos;
	size_t out_row = lent ? (size_t)w * 4 : row;
	unsigned long long bad = 0;
	for (size_t y = 0; y < h; y++) {
		float *d = out->pixels + ((size_t)h - 1 - y) * out_row; /* rows bottom to top */
		for (size_t x = 0; x < w; x++) {
			float px[4] = {0, 0, 0, 1};
			for (int c = 0; c < ch; c++, p += 4) {
				uint32_t u = little ? (uint32_t)p[0] | (uint32_t)p[1] << 8 |
							      (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
						    : (uint32_t)p[3] | (uint32_t)p[2] << 8 |
							      (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
				memcpy(&px[c], &u, 4);
				bad += !isfinite(px[c]);
			}
			if (!lent) {
				memcpy(d + x * ch, px, (size_t)ch * 4);
				continue;
			}
			if (ch == 1)
				px[1] = px[2] = px[0];
			memcpy(d + x * 4, px, 16);
		}
	}
	info->bits = 32;
	info->channels = ch;
	info->nonfinite = bad;
	info->float_format = 1;
	return 0;
}

int image_encode_pfm(const struct image *img, const struct image_encode_opts *o,
		     unsigned char **out, size_t *out_len, unsigned *lost, char *err)
{
	(void)o;
	int ch = img->channels >= 3 ? 3 : 1;
	if (img->channels == 2 || img->channels == 4)
		*lost |= IMAGE_LOST_ALPHA;
	char hdr[64];
	int hl = snprintf(hdr, sizeof hdr, "P%c\n%d %d\n-1.0\n", ch == 3 ? 'F' : 'f', img->width,
			  img->height);
	size_t w = (size_t)img->width, h = (size_t)img->height, row = w * (size_t)ch;
	size_t total = (size_t)hl + row * h * 4;
	unsigned char *p = malloc(total);
	if (!p)
		return image_fail(err, IMAGE_E_NOMEM, "pfm: cannot allocate %zu bytes", total);
	memcpy(p, hdr, (size_t)hl);
	unsigned char *q = p + hl;
	for (size_t y = 0; y < h; y++) {
		const float *s = img->pixels + (h - 1 - y) * w * (size_t)img->channels;
		for (size_t x = 0; x < w; x++, s += img->channels)
			for (int c = 0; c < ch; c++, q += 4) {
				uint32_t u;
				memcpy(&u, &s[c], 4);
				q[0] = (unsigned char)u;
				q[1] = (unsigned char)(u >> 8);
				q[2] = (unsigned char)(u >> 16);
				q[3] = (unsigned char)(u >> 24);
			}
	}
	*out = p;
	*out_len = total;
	return 0;
}
