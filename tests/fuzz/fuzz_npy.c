/* libFuzzer target for the NPY decoder: any byte string through npy_decode with a 64 MiB data
 * limit; a decoded array is encoded and decoded again, and must come back the same. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npy_array a, b;
	char err[NPY_ERR_LEN];
	if (npy_decode(data, size, 64u << 20, &a, err))
		return 0;
	unsigned char *out;
	size_t len;
	if (npy_encode(&a, &out, &len, err))
		abort(); /* whatever decodes must encode */
	if (npy_decode(out, len, 0, &b, err))
		abort();
	size_t bytes = npy_count(&a, NULL) * npy_dtype_size(a.dtype);
	if (b.ndim != a.ndim || b.dtype != a.dtype || memcmp(a.shape, b.shape, sizeof a.shape) ||
	    memcmp(a.data, b.data, bytes))
		abort();
	free(out);
	npy_free(&a);
	npy_free(&b);
	return 0;
}
