/* libFuzzer target for the tiff decoder (the body is tests/fuzz/fuzz_image.h). */
#include "tests/fuzz/fuzz_image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_image(data, size, IMAGE_FORMAT_TIFF);
}
