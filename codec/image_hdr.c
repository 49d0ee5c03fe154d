/* Radiance HDR (RGBE): header lines, a resolution line in any of the eight orientations, and
 * scanlines flat, old-style run-length or new-style (per component) run-length encoded. Values
 * follow Radiance's own convention: decode (m + 0.5) * 2^(e - 136), encode by truncation, so
 * decoding and re-encoding gives the same bytes. EXPOSURE and XYZE files are not interpreted. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/image_codec.h"

#define HDR_HEADER_MAX 65536

static float rgbe_component(unsigned m, unsigned e)
{
	return e ? ldexpf((float)m + 0.5f, (int)e - 136) : 0.0f;
}

/* Reads one header line (without '\n') into line; returns 0, or -1 if the input ends first. */
static int read_line(const unsigned char *b, size_t len, size_t *pos, char *line, size_t cap)
{
	size_t p = *pos, n = 0;
	while (p < len && b[p] != '\n') {
		if (n + 1 < cap)
			line[n++] = (char)b[p];
		p++;
	}
	if (p >= len)
		return -1;
	line[n] = 0;
	if (n && line[n - 1] == '\r')
		line[n - 1] = 0;
	*pos = p + 1;
	return 0;
}

/* Decodes one scanline of n pixels into rgbe (4 bytes per pixel); advances *pos. */
static int read_scanline(const unsigned char *b, size_t len, size_t *pos, unsigned char *rgbe,
			 size_t n, char *err)
{
	size_t p = *pos;
	if (n >= 8 && n <= 0x7fff && len - p >= 4 && b[p] == 2 && b[p + 1] == 2 && !(b[p + 2] & 0x80)) {
		size_t w = (size_t)b[p + 2] << 8 | b[p + 3];
		if (w != n)
			return image_fail(err, IMAGE_E_CORRUPT,
					  "hdr: run-length scanline says width %zu, header says %zu", w, n);
		p += 4;
		for (int c = 0; c < 4; c++)
			for (size_t x = 0; x < n;) {
				if (p >= len)
					return image_fail(err, IMAGE_E_TRUNCATED, "hdr: file ends inside a scanline");
				unsigned k = b[p++];
				if (k > 128) { /* a run */
					k -= 128;
					if (k > n - x)
						return image_fail(err, IMAGE_E_CORRUPT, "hdr: run overflows the scanline");
					if (p >= len)
						return image_fail(err, IMAGE_E_TRUNCATED, "hdr: file ends inside a run");
					unsigned char v = b[p++];
					for (unsigned i = 0; i < k; i++)
						rgbe[(x++) * 4 + c] = v;
				} else { /* literals */
					if (k == 0 || k > n - x)
						return image_fail(err, IMAGE_E_CORRUPT, "hdr: bad literal count %u", k);
					if (len - p < k)
						return image_fail(err, IMAGE_E_TRUNCATED, "hdr: file ends inside literals");
					for (unsigned i = 0; i < k; i++)
						rgbe[(x++) * 4 + c] = b[p++];
				}
			}
		*pos = p;
		return 0;
	}
	/* flat, with old-style runs: (1, 1, 1, k) repeats the previous pixel k << shift times */
	int shift = 0;
	for (size_t x = 0; x < n;) {
		if (len - p < 4)
			return image_fail(err, IMAGE_E_TRUNCATED, "hdr: file ends inside a scanline");
		const unsigned char *q = b + p;
		p += 4;
		if (q[0] == 1 && q[1] == 1 && q[2] == 1) {
			if (x == 0 || shift > 16)
				return image_fail(err, IMAGE_E_CORRUPT, "hdr: bad old-style run");
			size_t k = (size_t)q[3] << shift;
			if (k > n - x)
				return image_fail(err, IMAGE_E_CORRUPT, "hdr: run overflows the scanline");
			for (size_t i = 0; i < k; i++, x++)
				memcpy(rgbe + x * 4, rgbe + (x - 1) * 4, 4);
			shift += 8;
		} else {
			memcpy(rgbe + x * 4, q, 4);
			x++;
			shift = 0;
		}
	}
	*pos = p;
	return 0;
}

int image_decode_hdr(const unsigned char *b, size_t len, const struct image_limits *lim,
		     struct image *out, struct image_info *info, char *err)
{
	size_t pos = 0;
	char line[256];
	int have_format = 0;
	for (;;) {
		if (pos > HDR_HEADER_MAX)
			return image_fail(err, IMAGE_E_CORRUPT, "hdr: header longer than %d bytes",
					  HDR_HEADER_MAX);
		if (read_line(b, len, &pos, line, sizeof line))
			return image_fail(err, IMAGE_E_TRUNCATED, "hdr: file ends inside the header");
		if (!line[0])
			break;
		if (!strncmp(line, "FORMAT=", 7)) {
			if (strcmp(line + 7, "32-bit_rle_rgbe"))
				return image_fail(err, IMAGE_E_UNSUPPORTED,
						  "hdr: FORMAT=%.40s is not supported (only 32-bit_rle_rgbe)",
						  line + 7);
			have_format = 1;
		}
	}
	(void)have_format; /* Radiance treats a missing FORMAT as RGBE */
	if (read_line(b, len, &pos, line, sizeof line))
		return image_fail(err, IMAGE_E_TRUNCATED, "hdr: file ends before the resolution line");
	char s1, a1, s2, a2;
	unsigned long n1, n2;
	int used = 0;
	if (sscanf(line, " %c%c %lu %c%c %lu %n", &s1, &a1, &n1, &s2, &a2, &n2, &used) != 6 ||
	    line[used] || (s1 != '+' && s1 != '-') || (s2 != '+' && s2 != '-') ||
	    !((a1 == 'Y' && a2 == 'X') || (a1 == 'X' && a2 == 'Y')) || n1 > 0x7fffffff ||
	    n2 > 0x7fffffff)
		return image_fail(err, IMAGE_E_CORRUPT, "hdr: bad resolution line '%.60s'", line);
	int transposed = a1 == 'X';
	unsigned long w = transposed ? n1 : n2, h = transposed ? n2 : n1;
	struct image_limits bare = {.max_pixels = 0};
	if (lim)
		bare = *lim;
	bare.admit = NULL; /* the size against the limits first, admission after the next check */
	int rc = image_check_limits(&bare, w, h, "hdr", err);
	if (rc)
		return rc;
	/* Radiance's run-length scanlines hold at most 127 samples in 2 bytes, about 16 pixels a
	 * byte; only old-style runs (a repeat count shifted by 8 bits per record) pack more, and
	 * no writer in use relies on them for that. A header promising more than 64 pixels a byte
	 * of the file is a decompression bomb, refused before anything is reserved or allocated. */
	if ((unsigned long long)w * h / 64 > (unsigned long long)(len - pos) + 64)
		return image_fail(err, IMAGE_E_CORRUPT, "hdr: %lux%lu pixels cannot come from %zu "
				  "bytes of scanlines (more than 64 pixels a byte)", w, h, len - pos);
	rc = image_check_limits(lim, w, h, "hdr", err);
	if (rc)
		return rc;
	/* every scanline needs at least 4 bytes per pixel flat or 4 + 4 * (n/128) packed: catch
	 * a header promising far more than the file holds before allocating */
	if ((len - pos) / 4 < n1)
		return image_fail(err, IMAGE_E_TRUNCATED, "hdr: %zu bytes cannot hold %lu scanlines",
				  len - pos, n1);
	unsigned char *rgbe = malloc((size_t)n2 * 4);
	if (!rgbe)
		return image_fail(err, IMAGE_E_NOMEM, "hdr: cannot allocate a scanline");
	rc = image_alloc(out, (int)w, (int)h, 3);
	if (rc) {
		free(rgbe);
		return image_fail(err, rc, "hdr: cannot allocate %lux%lu pixels", w, h);
	}
	for (size_t i = 0; i < n1; i++) {
		rc = read_scanline(b, len, &pos, rgbe, n2, err);
		if (rc)
			break;
		for (size_t j = 0; j < n2; j++) {
			size_t x, y;
			if (!transposed) {
				y = s1 == '-' ? i : n1 - 1 - i;
				x = s2 == '+' ? j : n2 - 1 - j;
			} else {
				x = s1 == '+' ? i : n1 - 1 - i;
				y = s2 == '-' ? j : n2 - 1 - j;
			}
			float *d = out->pixels + (y * w + x) * 3;
			const unsigned char *q = rgbe + j * 4;
			for (int c = 0; c < 3; c++)
				d[c] = rgbe_component(q[c], q[3]);
		}
	}
	free(rgbe);
	if (rc) {
		image_free(out);
		return rc;
	}
	info->bits = 32;
	info->channels = 3;
	info->float_format = 1;
	return 0;
}

/* Radiance's float -> RGBE: the largest component sets the shared exponent; mantissas are
 * truncated. Values that cannot be kept are clipped and reported. */
static void to_rgbe(const float *rgb, int gray, unsigned char *q, unsigned *lost)
{
	float v[3];
	for (int c = 0; c < 3; c++) {
		float x = rgb[gray ? 0 : c];
		if (isnan(x)) {
			*lost |= IMAGE_LOST_RANGE;
			x = 0;
		} else if (x < 0) {
			if (x < -IMAGE_CLIP_TOL)
				*lost |= IMAGE_LOST_NEGATIVE;
			x = 0;
		} else if (x > 1.7e38f) {
			*lost |= IMAGE_LOST_RANGE;
			x = 1.7e38f;
		}
		v[c] = x;
	}
	float mx = fmaxf(v[0], fmaxf(v[1], v[2]));
	if (mx < 1e-38f) {
		memset(q, 0, 4);
		if (mx > 0)
			*lost |= IMAGE_LOST_PRECISION;
		return;
	}
	int e;
	double scale = frexp(mx, &e) * 256.0 / mx;
	for (int c = 0; c < 3; c++) {
		double m = floor(v[c] * scale);
		q[c] = (unsigned char)(m > 255 ? 255 : m);
	}
	q[3] = (unsigned char)(e + 128);
	for (int c = 0; c < 3; c++)
		if (rgbe_component(q[c], q[3]) != v[c])
			*lost |= IMAGE_LOST_PRECISION;
}

/* New-style run-length encoding of one component of a scanline. */
static int rle_component(struct image_buf *o, const unsigned char *rgbe, size_t n, int c)
{
	size_t x = 0;
	while (x < n) {
		/* find the next run of at least 4 */
		size_t run_start = x, run_len = 0;
		while (run_start < n) {
			run_len = 1;
			while (run_start + run_len < n && run_len < 127 &&
			       rgbe[(run_start + run_len) * 4 + c] == rgbe[run_start * 4 + c])
				run_len++;
			if (run_len >= 4)
				break;
			run_start += run_len;
		}
		if (run_start >= n)
			run_len = 0;
		/* literals before the run, at most 128 at a time */
		while (x < run_start) {
			size_t k = run_start - x > 128 ? 128 : run_start - x;
			unsigned char hdr = (unsigned char)k;
			if (image_buf_put(o, &hdr, 1))
				return IMAGE_E_NOMEM;
			for (size_t i = 0; i < k; i++)
				if (image_buf_put(o, &rgbe[(x + i) * 4 + c], 1))
					return IMAGE_E_NOMEM;
			x += k;
		}
		if (run_len >= 4) {
			unsigned char pair[2] = { (unsigned char)(128 + run_len), rgbe[run_start * 4 + c] };
			if (image_buf_put(o, pair, 2))
				return IMAGE_E_NOMEM;
			x = run_start + run_len;
		}
	}
	return 0;
}

int image_encode_hdr(const struct image *img, const struct image_encode_opts *o,
		     unsigned char **out, size_t *out_len, unsigned *lost, char *err)
{
	(void)o;
	int ch = img->channels, gray = ch <= 2;
	if (ch == 2 || ch == 4)
		*lost |= IMAGE_LOST_ALPHA;
	size_t w = (size_t)img->width, h = (size_t)img->height;
	struct image_buf b = { NULL, 0, 0 };
	char hdr[128];
	int hl = snprintf(hdr, sizeof hdr, "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y %zu +X %zu\n", h,
			  w);
	unsigned char *rgbe = malloc(w * 4);
	if (!rgbe || image_buf_put(&b, hdr, (size_t)hl))
		goto nomem;
	int rle = w >= 8 && w <= 0x7fff;
	for (size_t y = 0; y < h; y++) {
		const float *s = img->pixels + y * w * (size_t)ch;
		for (size_t x = 0; x < w; x++)
			to_rgbe(s + x * (size_t)ch, gray, rgbe + x * 4, lost);
		if (rle) {
			unsigned char start[4] = { 2, 2, (unsigned char)(w >> 8), (unsigned char)w };
			if (image_buf_put(&b, start, 4))
				goto nomem;
			for (int c = 0; c < 4; c++)
				if (rle_component(&b, rgbe, w, c))
					goto nomem;
		} else if (image_buf_put(&b, rgbe, w * 4)) {
			goto nomem;
		}
	}
	free(rgbe);
	*out = b.p;
	*out_len = b.len;
	return 0;
nomem:
	free(rgbe);
	free(b.p);
	return image_fail(err, IMAGE_E_NOMEM, "hdr: out of memory");
}
