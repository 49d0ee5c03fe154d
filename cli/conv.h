/* fftbloom conv2d and conv2d-transpose (cli/conv2d.c, cli/deconv.c), and what they share
 * (cli/tensor.c): the file options, reading the tensors, writing the result. Exit codes as
 * cli.h: 0 ok, 1 failure (a file that cannot be read or written, the GPU), 2 usage (options,
 * and tensors whose ranks or shapes do not fit the parameters). */
#ifndef FFTBLOOM_CLI_CONV_H
#define FFTBLOOM_CLI_CONV_H

#include <stddef.h>

#include "core/opts.h"
#include "codec/tensor.h"

int cli_conv2d(int argc, char **argv);
int cli_conv2d_transpose(int argc, char **argv);

/* The command's own options: files and --repeat. */
struct conv_files {
	char input[OPT_STR_MAX], weight[OPT_STR_MAX], bias[OPT_STR_MAX], output[OPT_STR_MAX];
	int repeat;
};

/* Adds the --input, --weight (described as weight_shape), --bias, --output and --repeat rows
 * to t, for a struct conv_files at offset base. */
void cli_conv_files_opts(struct opt_def *t, size_t *n, size_t base, const char *weight_shape);

struct conv_tensors {
	struct tensor x, w, b; /* b.data NULL when there is no bias */
};

/* Checks the files were named (npos: positional arguments, none taken) and reads the input
 * (3-D or 4-D), weight (4-D) and bias (1-D). Returns 0, or the exit code after a message
 * "fftbloom CMD: ..." (everything freed). */
int cli_conv_read(const char *cmd, int npos, const struct conv_files *f, struct conv_tensors *t);
void cli_conv_free(struct conv_tensors *t);

/* Writes y; 0, or 1 with a message. */
int cli_conv_write(const char *cmd, const char *path, const struct tensor *y);

/* Median of n values (sorted in place); 0 for n = 0. */
double cli_median(double *v, int n);

#endif
