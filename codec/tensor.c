/* NPY tensors as float32; see tensor.h. */
#include "codec/tensor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "codec/npy.h"

size_t tensor_nonfinite(const struct tensor *t)
{
	size_t n = t && t->data ? tensor_count(t) : 0, bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += !isfinite(t->data[i]);
	return bad;
}

size_t tensor_count(const struct tensor *t)
{
	size_t n;
	return checked_product_size(t->shape, 4, 1, &n) ? 0 : n;
}

int tensor_bytes(const struct tensor *t, size_t *bytes)
{
	return checked_product_size(t->shape, 4, sizeof *t->data, bytes) ? TENSOR_E_TOO_LARGE : 0;
}

void tensor_free(struct tensor *t)
{
	if (!t)
		return;
	free(t->data);
	memset(t, 0, sizeof *t);
}

/* a (decoded, its data freed here) into t as float32, its rank checked. */
static int from_npy(struct npy_array *a, int min_ndim, int max_ndim, const char *what,
                    struct tensor *t, char err[TENSOR_ERR_LEN])
{
	int ok, rc = 0;
	size_t n = npy_count(a, &ok), bytes;
	if (a->dtype != NPY_F32 && a->dtype != NPY_F64) {
		snprintf(err, TENSOR_ERR_LEN, "%s: complex data; float32 or float64 expected", what);
		rc = TENSOR_E_SHAPE;
	} else if (a->ndim < min_ndim || a->ndim > max_ndim) {
		char want[32];
		if (max_ndim == min_ndim)
			snprintf(want, sizeof want, "%d-D", min_ndim);
		else
			snprintf(want, sizeof want, "%d-D %s %d-D", min_ndim,
			         max_ndim == min_ndim + 1 ? "or" : "to", max_ndim);
		snprintf(err, TENSOR_ERR_LEN, "%s: a %d-D array; %s expected", what, a->ndim, want);
		rc = TENSOR_E_SHAPE;
	} else if (!n || !ok) {
		snprintf(err, TENSOR_ERR_LEN, "%s: an empty array", what);
		rc = TENSOR_E_SHAPE;
	} else if (checked_mul_size(n, sizeof *t->data, &bytes) || !(t->data = malloc(bytes))) {
		snprintf(err, TENSOR_ERR_LEN, "%s: out of memory", what);
		rc = TENSOR_E_NOMEM;
	} else {
		t->ndim = a->ndim;
		for (int i = 0; i < 4; i++)
			t->shape[i] = a->shape[i];
		for (size_t i = 0; i < n; i++)
			t->data[i] = a->dtype == NPY_F32 ? ((float *)a->data)[i]
			                                 : (float)((double *)a->data)[i];
	}
	npy_free(a);
	return rc;
}

static int npy_code(int rc)
{
	switch (rc) {
	case NPY_E_NOMEM: return TENSOR_E_NOMEM;
	case NPY_E_TOO_LARGE: return TENSOR_E_TOO_LARGE;
	case NPY_E_IO: return TENSOR_E_IO;
	case NPY_E_UNSUPPORTED: return TENSOR_E_SHAPE;
	default: return TENSOR_E_CORRUPT;
	}
}

int tensor_decode(const void *buf, size_t len, size_t max_bytes, int min_ndim, int max_ndim,
                  const char *what, struct tensor *t, char err[TENSOR_ERR_LEN])
{
	memset(t, 0, sizeof *t);
	struct npy_array a;
	char nerr[NPY_ERR_LEN];
	int rc = npy_decode(buf, len, max_bytes, &a, nerr);
	if (rc) {
		snprintf(err, TENSOR_ERR_LEN, "%s: %s", what, nerr);
		return npy_code(rc);
	}
	return from_npy(&a, min_ndim, max_ndim, what, t, err);
}

int tensor_read_file(const char *path, size_t max_bytes, int min_ndim, int max_ndim,
                     const char *what, struct tensor *t, char err[TENSOR_ERR_LEN])
{
	memset(t, 0, sizeof *t);
	struct npy_array a;
	char nerr[NPY_ERR_LEN];
	int rc = npy_read_file(path, max_bytes, &a, nerr);
	if (rc) {
		snprintf(err, TENSOR_ERR_LEN, "%s %.180s: %s", what, path, nerr);
		return npy_code(rc);
	}
	return from_npy(&a, min_ndim, max_ndim, what, t, err);
}

static void as_npy(const struct tensor *t, struct npy_array *a)
{
	memset(a, 0, sizeof *a);
	a->ndim = t->ndim;
	for (int i = 0; i < 4; i++)
		a->shape[i] = i < t->ndim ? t->shape[i] : 1;
	a->dtype = NPY_F32;
	a->data = t->data;
}

int tensor_encode(const struct tensor *t, unsigned char **out, size_t *len,
                  char err[TENSOR_ERR_LEN])
{
	struct npy_array a;
	as_npy(t, &a);
	char nerr[NPY_ERR_LEN];
	int rc = npy_encode(&a, out, len, nerr);
	if (rc)
		snprintf(err, TENSOR_ERR_LEN, "%s", nerr);
	return rc ? npy_code(rc) : 0;
}

int tensor_write_file(const char *path, const struct tensor *t, char err[TENSOR_ERR_LEN])
{
	struct npy_array a;
	as_npy(t, &a);
	char nerr[NPY_ERR_LEN];
	int rc = npy_write_file(path, &a, nerr);
	if (rc)
		snprintf(err, TENSOR_ERR_LEN, "%.180s: %s", path, nerr);
	return rc ? npy_code(rc) : 0;
}
