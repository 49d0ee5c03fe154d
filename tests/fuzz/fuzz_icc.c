/* libFuzzer target for the colour-profile parser (codec/icc.c): the input is an embedded ICC
 * profile as a decoder hands it over. It is described for an RGB and a grey image; where it is
 * kept (not reset to sRGB with a note), a small image goes into the working space and back out
 * to it (8-bit codes and floats). Checks: a description is either kept (name set, no note) or
 * reset to sRGB with a note and no profile; conversions either succeed with every sample finite
 * or fail with a message; an image taken back out of a kept profile is within [0, 1]. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/colour.h"
#include "codec/icc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(const uint8_t *data, size_t size, int channels)
{
	struct image_colour c;
	memset(&c, 0, sizeof c);
	if (!(c.icc = malloc(size ? size : 1)))
		return;
	memcpy(c.icc, data, size);
	c.icc_len = size;
	if (icc_describe(&c, channels)) {
		image_colour_free(&c);
		return;
	}
	if (c.note[0] && (c.icc || !c.srgb))
		abort(); /* a refused profile leaves sRGB */
	if (!c.name[0])
		abort();
	struct image img, out;
	if (image_alloc(&img, 7, 3, channels)) {
		image_free(&img);
		image_colour_free(&c);
		return;
	}
	size_t n = 7 * 3 * (size_t)channels;
	for (size_t i = 0; i < n; i++) /* 8-bit codes (the decoders' table values) and others */
		img.pixels[i] = i % 3 ? colour_srgb8_table()[(i * 37 + size) & 255] : (float)i / n;
	if (icc_to_working(&img, &c) == 0) {
		for (size_t i = 0; i < n; i++)
			if (!c.note[0] && !isfinite(img.pixels[i]) && !c.srgb)
				abort();
		char err[IMAGE_ERR_LEN];
		for (int b8 = 0; b8 < 2 && !c.srgb; b8++) {
			for (size_t i = 0; i < n; i++)
				if (!isfinite(img.pixels[i]))
					img.pixels[i] = 0.5f;
			if (icc_from_working(&img, &c, b8, &out, err) == 0) {
				for (size_t i = 0; i < n; i++)
					if (!(out.pixels[i] >= 0 && out.pixels[i] <= 1))
						abort();
				image_free(&out);
			} else if (!err[0]) {
				abort();
			}
		}
	}
	image_free(&img);
	image_colour_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one(data, size, 3);
	one(data, size, 1);
	return 0;
}
