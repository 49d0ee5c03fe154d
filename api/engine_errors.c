/* Engine and codec codes to API error rows; see engine_errors.h. */
#include "api/engine_errors.h"

#include "gles/bloom.h"
#include "gles/resample.h"
#include "gles/spatial.h"
#include "api/errors.h"
#include "codec/image.h"
#include "codec/npy.h"
#include "codec/tensor.h"

struct code_map {
	int rc;    /* the module's code */
	int error; /* enum api_error */
};

static int lookup(const struct code_map *m, int n, int rc, int otherwise)
{
	for (int i = 0; i < n; i++)
		if (m[i].rc == rc)
			return m[i].error;
	return otherwise;
}

#define LOOKUP(m, rc, otherwise) lookup(m, (int)(sizeof m / sizeof m[0]), rc, otherwise)

int engine_errors_bloom(int rc)
{
	static const struct code_map m[] = {
		{BLOOM_E_ARG, API_E_INVALID_REQUEST},
		{BLOOM_E_TOO_LARGE, API_E_TOO_LARGE_FOR_GPU},
		{BLOOM_E_NOMEM, API_E_OUT_OF_MEMORY},
		{BLOOM_E_GPU_MEMORY, API_E_GPU_OUT_OF_MEMORY},
	};
	return LOOKUP(m, rc, API_E_GPU_ERROR);
}

int engine_errors_resample(int rc)
{
	static const struct code_map m[] = {
		{RESAMPLE_E_ARG, API_E_INVALID_REQUEST},
		{RESAMPLE_E_TOO_LARGE, API_E_OUTPUT_TOO_LARGE},
		{RESAMPLE_E_NOMEM, API_E_OUT_OF_MEMORY},
		{RESAMPLE_E_GPU_MEMORY, API_E_GPU_OUT_OF_MEMORY},
		{RESAMPLE_E_GPU_LIMIT, API_E_TOO_LARGE_FOR_GPU},
	};
	return LOOKUP(m, rc, API_E_GPU_ERROR);
}

int engine_errors_spatial(int rc)
{
	static const struct code_map m[] = {
		{SPATIAL_E_ARG, API_E_INVALID_REQUEST},
		{SPATIAL_E_UNSUPPORTED, API_E_INVALID_SHAPE}, /* a shape the algorithm cannot take */
		{SPATIAL_E_TOO_LARGE, API_E_TOO_LARGE_FOR_GPU},
		{SPATIAL_E_NOMEM, API_E_OUT_OF_MEMORY},
	};
	return LOOKUP(m, rc, API_E_GPU_ERROR);
}

int engine_errors_image(int rc)
{
	static const struct code_map m[] = {
		{IMAGE_E_UNSUPPORTED, API_E_UNSUPPORTED_IMAGE},
		{IMAGE_E_TOO_LARGE, API_E_IMAGE_TOO_LARGE},
		{IMAGE_E_NOMEM, API_E_OUT_OF_MEMORY},
		{IMAGE_E_BUSY, API_E_MEMORY_BUDGET},
		{IMAGE_E_EMPTY, API_E_IMAGE_EMPTY},
		{IMAGE_E_TRUNCATED, API_E_IMAGE_TRUNCATED},
	};
	return LOOKUP(m, rc, API_E_IMAGE_CORRUPT);
}

int engine_errors_tensor(int rc)
{
	static const struct code_map m[] = {
		{TENSOR_E_SHAPE, API_E_INVALID_SHAPE},
		{TENSOR_E_TOO_LARGE, API_E_TENSOR_TOO_LARGE},
		{TENSOR_E_NOMEM, API_E_OUT_OF_MEMORY},
	};
	return LOOKUP(m, rc, API_E_TENSOR_CORRUPT);
}

int engine_errors_npy(int rc)
{
	static const struct code_map m[] = {
		{NPY_E_UNSUPPORTED, API_E_INVALID_SHAPE},
		{NPY_E_TOO_LARGE, API_E_TENSOR_TOO_LARGE},
		{NPY_E_NOMEM, API_E_OUT_OF_MEMORY},
	};
	return LOOKUP(m, rc, API_E_TENSOR_CORRUPT);
}
