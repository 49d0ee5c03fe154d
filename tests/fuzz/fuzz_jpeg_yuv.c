/* libFuzzer target for the daemon's default JPEG path: a byte string that sniffs as JPEG goes
 * through image_decode_jpeg_yuv (small limits); decoded planes must have a consistent layout,
 * the float decoder (--jpeg-planes=false, the CLI) must accept the same file at the same oriented
 * size, and the planes are encoded again with image_encode_jpeg_yuv (quality 100), decoded, and
 * must come back with the same size and subsampling and within a few codes of the first decode.
 * The same bytes decoded to coefficients (--jpeg-gpu-idct, the default): where that succeeds,
 * within its room, with the planes' layout, and its CPU inverse DCT makes planes (a corrupt
 * file's samples may differ: libjpeg wraps what passes 0-255, the float path clamps). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "codec/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant: says which, and aborts (libFuzzer keeps the input as a crash). */
static void fail(const char *why, const char *err)
{
	fprintf(stderr, "fuzz_jpeg_yuv: %s%s%s\n", why, err ? ": " : "", err ? err : "");
	abort();
}

/* Largest difference between two decodes of the same planes, each plane over its visible
 * samples only (the luma plane's padding to whole chroma blocks is the codec's to fill). At
 * quality 100 every quantiser step is 1: the error is the DCT's rounding, about a code. */
#define ROUNDTRIP_MAX_DIFF 8

static int plane_count(const struct yuv_image *y)
{
	return y->gray ? 1 : 3;
}

/* The layout's invariants: planes in order, inside y->bytes, rows padded to 4 bytes, luma
 * covering the image and chroma its ceiling per subsampling factor. */
static int layout_ok(const struct yuv_image *y)
{
	size_t at = 0;
	if (y->width < 1 || y->height < 1 || y->sub_x < 1 || y->sub_x > 2 || y->sub_y < 1 ||
	    y->sub_y > 2 || y->orientation < 1 || y->orientation > 8 || !y->data)
		return 0;
	for (int p = 0; p < plane_count(y); p++) {
		int cw = (y->width + y->sub_x - 1) / y->sub_x, ch = (y->height + y->sub_y - 1) / y->sub_y;
		if (p ? y->pw[p] != cw || y->ph[p] != ch : y->pw[p] < y->width || y->ph[p] < y->height)
			return 0;
		if (y->stride[p] < y->pw[p] || y->stride[p] % 4 || y->offset[p] % 4 || y->offset[p] < at)
			return 0;
		at = y->offset[p] + (size_t)y->stride[p] * (size_t)y->ph[p];
	}
	return at <= y->bytes;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (image_sniff(data, size) != IMAGE_FORMAT_JPEG)
		return 0;
	struct image_limits lim = {.max_width = 4096, .max_height = 4096, .max_pixels = 1u << 22};
	struct yuv_image a, b;
	struct image_info info;
	char err[IMAGE_ERR_LEN];
	if (image_decode_jpeg_yuv(data, size, &lim, &a, &info, err))
		return 0;
	int ow = a.orientation >= 5 ? a.height : a.width, oh = a.orientation >= 5 ? a.width : a.height;
	if (!layout_ok(&a) || info.format != IMAGE_FORMAT_JPEG || info.bits != 8 ||
	    info.channels != (a.gray ? 1 : 3) || info.orientation != a.orientation ||
	    (unsigned)ow > lim.max_width || (unsigned)oh > lim.max_height ||
	    (unsigned long long)ow * (unsigned long long)oh > lim.max_pixels)
		fail("decoded planes break the layout or the limits", NULL);
	struct yuv_image co, cp;
	if (!image_decode_jpeg_coefs_into(data, size, &lim, NULL, &co, NULL, err)) {
		if (co.width != a.width || co.height != a.height || co.gray != a.gray ||
		    co.sub_x != a.sub_x || co.sub_y != a.sub_y || co.orientation != a.orientation ||
		    (co.coefs && (co.coef_bytes > co.bytes || co.planes_bytes != a.bytes)))
			fail("the coefficients' frame differs from the planes'", NULL);
		if (co.coefs) {
			if (yuv_coefs_to_planes(&co, &cp) || !layout_ok(&cp))
				fail("the coefficients make no planes", NULL);
			yuv_image_free(&cp);
		}
		yuv_image_free(&co);
	}
	struct image f;
	if (image_decode(data, size, &lim, &f, NULL, err))
		fail("the planes decoded; the float decoder refuses the file", err);
	if (f.width != ow || f.height != oh)
		fail("the float decoder gives another size than the planes", NULL);
	image_free(&f);
	if ((size_t)a.width * (size_t)a.height > 1u << 16) {
		yuv_image_free(&a);
		return 0;
	}
	unsigned char *out;
	size_t len;
	if (image_encode_jpeg_yuv(&a, 100, &out, &len, err))
		fail("planes that decoded do not encode", err);
	if (image_decode_jpeg_yuv(out, len, &lim, &b, NULL, err))
		fail("the encoded planes do not decode", err);
	if (b.width != a.width || b.height != a.height || b.gray != a.gray || b.sub_x != a.sub_x ||
	    b.sub_y != a.sub_y || b.orientation != 1 || !layout_ok(&b))
		fail("the round trip changed the size, subsampling or layout", NULL);
	for (int p = 0; p < plane_count(&a); p++) {
		int w = p ? a.pw[p] : a.width, h = p ? a.ph[p] : a.height;
		for (int r = 0; r < h; r++)
			for (int c = 0; c < w; c++) {
				int d = a.data[a.offset[p] + (size_t)r * a.stride[p] + c] -
				        b.data[b.offset[p] + (size_t)r * b.stride[p] + c];
				if (d > ROUNDTRIP_MAX_DIFF || d < -ROUNDTRIP_MAX_DIFF) {
					fprintf(stderr, "plane %d (%d, %d): %d codes apart\n", p, c, r, d);
					fail("the round trip moved a sample too far", NULL);
				}
			}
	}
	free(out);
	yuv_image_free(&a);
	yuv_image_free(&b);
	return 0;
}
