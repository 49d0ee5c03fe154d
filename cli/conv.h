/* fftbloom conv2d and conv2d-transpose (cli/conv2d.c, cli/deconv.c), and the NPY
 * tensor helpers they share (cli/tensor.c). Exit codes as cli.h: 0 ok, 1 failure (a file
 * that cannot be read or written, the GPU), 2 usage (options, and tensors whose ranks or shapes
 * do not fit the parameters). */
#ifndef FFTBLOOM_CLI_CONV_H
#define FFTBLOOM_CLI_CONV_H

#include <stddef.h>

#include "protocol/npy.h"

int cli_conv2d(int argc, char **argv);
int cli_conv2d_transpose(int argc, char **argv);

/* Reads a float32 or float64 NPY of rank min_ndim..max_ndim (0 elements refused) into a new
 * float32 array *data (free it) with its shape in *a (a->data freed). Prints "fftbloom CMD:
 * WHAT PATH: reason" and returns 1 (unreadable) or 2 (dtype, rank, empty) on failure. */
int cli_tensor_read(const char *cmd, const char *what, const char *path, int min_ndim,
                    int max_ndim, struct npy_array *a, float **data);

/* Writes float32 data of the given shape; 0, or 1 with a message. */
int cli_tensor_write(const char *cmd, const char *path, int ndim, const size_t *shape,
                     float *data);

/* Median of n values (sorted in place); 0 for n = 0. */
double cli_median(double *v, int n);

#endif
