/* What fftbloom conv2d and conv2d-transpose share; see conv.h. */
#include "cli/conv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/common.h"

void cli_conv_files_opts(struct opt_def *t, size_t *n, size_t base, const char *weight_shape)
{
	static char weight_help[128];
	snprintf(weight_help, sizeof weight_help, "weight .npy: %s", weight_shape);
#define F(f) offsetof(struct conv_files, f)
	const struct opt_def rows[] = {
		{"input", OPT_STRING, 0, 0, "", NULL, "input .npy: (B, Cin, H, W) or (Cin, H, W)", NULL,
		 F(input)},
		{"weight", OPT_STRING, 0, 0, "", NULL, weight_help, NULL, F(weight)},
		{"bias", OPT_STRING, 0, 0, "", NULL, "bias .npy: (Cout), optional", NULL, F(bias)},
		{"output", OPT_STRING, 0, 0, "", NULL, "output .npy (float32) (also -o)", NULL, F(output)},
		{"repeat", OPT_INT, 0, 100000, "0", NULL,
		 "run N more times and print the median GPU time as a JSON line on stderr", NULL,
		 F(repeat)},
	};
#undef F
	cli_opts_add(t, n, rows, sizeof rows / sizeof rows[0], base);
}

void cli_conv_free(struct conv_tensors *t)
{
	tensor_free(&t->x);
	tensor_free(&t->w);
	tensor_free(&t->b);
}

int cli_conv_read(const char *cmd, int npos, const struct conv_files *f, struct conv_tensors *t)
{
	memset(t, 0, sizeof *t);
	if (npos || !f->input[0] || !f->weight[0] || !f->output[0]) {
		fprintf(stderr, "fftbloom %s: need --input, --weight and -o OUTPUT (see --help)\n", cmd);
		return 2;
	}
	char err[TENSOR_ERR_LEN];
	size_t max = (size_t)4 << 30;
	int rc = tensor_read_file(f->input, max, 3, 4, "input", &t->x, err);
	if (!rc)
		rc = tensor_read_file(f->weight, max, 4, 4, "weight", &t->w, err);
	if (!rc && f->bias[0])
		rc = tensor_read_file(f->bias, max, 1, 1, "bias", &t->b, err);
	if (!rc)
		return 0;
	fprintf(stderr, "fftbloom %s: %s\n", cmd, err);
	cli_conv_free(t);
	return rc == TENSOR_E_IO || rc == TENSOR_E_NOMEM ? 1 : 2;
}

int cli_conv_write(const char *cmd, const char *path, const struct tensor *y)
{
	char err[TENSOR_ERR_LEN];
	if (tensor_write_file(path, y, err)) {
		fprintf(stderr, "fftbloom %s: %s\n", cmd, err);
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
