/* Tensors for the convolutions: an NPY (float32 or float64, rank 1-4) as float32 with its
 * shape, and back. The daemon's /v1/conv2d routes and the CLI's conv2d subcommands read and
 * write their inputs and outputs through it. */
#ifndef FFTBLOOM_TENSOR_H
#define FFTBLOOM_TENSOR_H

#include <stddef.h>

#define TENSOR_ERR_LEN 512

enum tensor_error {
	TENSOR_OK = 0,
	TENSOR_E_CORRUPT = -1,   /* not an NPY, or a malformed or truncated one */
	TENSOR_E_SHAPE = -2,     /* complex data, a rank outside the expected, no elements */
	TENSOR_E_TOO_LARGE = -3, /* more data than max_bytes */
	TENSOR_E_NOMEM = -4,
	TENSOR_E_IO = -5,        /* a file that cannot be read or written */
};

struct tensor {
	int ndim;        /* 1-4 */
	size_t shape[4]; /* unused axes 1 */
	float *data;     /* C order, malloc'd */
};

/* Decodes an NPY of rank min_ndim..max_ndim into t (float64 converted). what names it in the
 * message ("input", "weight", "bias"). max_bytes bounds the NPY's data (0: none), checked from
 * its header before anything is allocated. Returns 0 or a negative tensor_error. */
int tensor_decode(const void *buf, size_t len, size_t max_bytes, int min_ndim, int max_ndim,
                  const char *what, struct tensor *t, char err[TENSOR_ERR_LEN]);
int tensor_read_file(const char *path, size_t max_bytes, int min_ndim, int max_ndim,
                     const char *what, struct tensor *t, char err[TENSOR_ERR_LEN]);

/* Encodes t as a float32 NPY (*out malloc'd) or writes it to a file. */
int tensor_encode(const struct tensor *t, unsigned char **out, size_t *len,
                  char err[TENSOR_ERR_LEN]);
int tensor_write_file(const char *path, const struct tensor *t, char err[TENSOR_ERR_LEN]);

/* Elements of t (the product of its shape), 0 when the product overflows (checked: a shape
 * from a request never wraps to a small count). */
size_t tensor_count(const struct tensor *t);

/* The elements of t that are NaN or infinite (refused as image_nonfinite's are). */
size_t tensor_nonfinite(const struct tensor *t);

/* *bytes = t's float32 data size from its shape: 0, or TENSOR_E_TOO_LARGE when it overflows
 * (*bytes SIZE_MAX). Where a reservation or an allocation is made from a shape, use this. */
int tensor_bytes(const struct tensor *t, size_t *bytes);

void tensor_free(struct tensor *t); /* NULL-safe; zeroes it */

#endif
