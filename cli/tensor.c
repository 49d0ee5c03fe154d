/* NPY tensors for the convolution subcommands; see cli_conv.h. */
#include "cli/conv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_tensor_read(const char *cmd, const char *what, const char *path, int min_ndim,
                    int max_ndim, struct npy_array *a, float **data)
{
	char err[NPY_ERR_LEN];
	*data = NULL;
	int rc = npy_read_file(path, (size_t)4 << 30, a, err);
	if (rc) {
		fprintf(stderr, "fftbloom %s: %s %s: %s\n", cmd, what, path, err);
		return rc == NPY_E_IO ? 1 : 2;
	}
	int ok;
	size_t n = npy_count(a, &ok);
	if (a->dtype != NPY_F32 && a->dtype != NPY_F64) {
		fprintf(stderr, "fftbloom %s: %s %s: complex data; float32 or float64 expected\n", cmd,
		        what, path);
		rc = 2;
	} else if (a->ndim < min_ndim || a->ndim > max_ndim) {
		char want[32];
		if (max_ndim == min_ndim)
			snprintf(want, sizeof want, "%d-D", min_ndim);
		else
			snprintf(want, sizeof want, "%d-D %s %d-D", min_ndim,
			         max_ndim == min_ndim + 1 ? "or" : "to", max_ndim);
		fprintf(stderr, "fftbloom %s: %s %s: a %d-D array; %s expected\n", cmd, what, path,
		        a->ndim, want);
		rc = 2;
	} else if (!n || !ok) {
		fprintf(stderr, "fftbloom %s: %s %s: empty array\n", cmd, what, path);
		rc = 2;
	} else if (!(*data = malloc(n * sizeof **data))) {
		fprintf(stderr, "fftbloom %s: out of memory\n", cmd);
		rc = 1;
	} else {
		for (size_t i = 0; i < n; i++)
			(*data)[i] = a->dtype == NPY_F32 ? ((float *)a->data)[i] : (float)((double *)a->data)[i];
	}
	free(a->data);
	a->data = NULL;
	if (rc) {
		free(*data);
		*data = NULL;
	}
	return rc;
}

int cli_tensor_write(const char *cmd, const char *path, int ndim, const size_t *shape,
                     float *data)
{
	struct npy_array a;
	memset(&a, 0, sizeof a);
	a.ndim = ndim;
	for (int i = 0; i < 4; i++)
		a.shape[i] = i < ndim ? shape[i] : 1;
	a.dtype = NPY_F32;
	a.data = data;
	char err[NPY_ERR_LEN];
	if (npy_write_file(path, &a, err)) {
		fprintf(stderr, "fftbloom %s: %s: %s\n", cmd, path, err);
		return 1;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double cli_median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
