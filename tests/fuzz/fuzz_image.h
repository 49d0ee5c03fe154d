/* The body of every image decoder's libFuzzer target: a byte string that sniffs as the target's
 * format goes through image_decode (with small limits, so the fuzzer explores parsing, not
 * allocation); a decoded image is encoded again to exercise the writer on what the reader made. */
#ifndef FFTBLOOM_FUZZ_IMAGE_H
#define FFTBLOOM_FUZZ_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "codec/image.h"

static int fuzz_image(const uint8_t *data, size_t size, enum image_format fmt)
{
	if (image_sniff(data, size) != fmt)
		return 0;
	struct image_limits lim = {.max_width = 4096, .max_height = 4096, .max_pixels = 1u << 22};
	struct image img;
	char err[IMAGE_ERR_LEN];
	if (image_decode(data, size, &lim, &img, NULL, err))
		return 0;
	if ((size_t)img.width * (size_t)img.height <= 1u << 16) {
		unsigned char *out;
		size_t len;
		unsigned lost;
		if (!image_encode(&img, fmt, NULL, &out, &len, &lost, err))
			free(out);
	}
	image_free(&img);
	return 0;
}

#endif
