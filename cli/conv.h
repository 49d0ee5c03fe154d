/* fftbloom conv2d and conv2d-transpose: one driver (cli/conv.c) reads the request table's
 * flags and the NPY files, runs the operation (and --repeat N more times), writes the result and
 * the timing line, through the public library (fftbloom_conv2d, fftbloom_conv2d_transpose); each
 * subcommand's file (cli/conv2d.c, cli/deconv.c) gives only what differs, as a struct conv_op. Exit codes as cli.h: 0 ok, 1 failure (a file that cannot be read or
 * written, the GPU), 2 usage (options, and tensors whose ranks or shapes do not fit the
 * parameters). */
#ifndef FFTBLOOM_CLI_CONV_H
#define FFTBLOOM_CLI_CONV_H

#include <stddef.h>

#include "cli/common.h"
#include "api/request.h"
#include "codec/tensor.h"
#include "lib/include/fftbloom.h"

int cli_conv2d(int argc, char **argv);
int cli_conv2d_transpose(int argc, char **argv);

struct conv_tensors {
	struct tensor x, w, b; /* b.data NULL when there is no bias */
};

struct conv_times {
	double gpu_ms, conv_ms, wall_ms; /* one run's; conv_ms 0 where the op does not time it */
};

/* What the shapes and parameters come to: the library's 4-D shapes (a 3-D input is batch 1) and
 * parameters, and the output's shape. */
struct conv_desc {
	int xs[4], ws[4], ys[4];         /* input, weight, output (B, C, H, W) */
	struct fftbloom_conv_params p;
};

struct conv_op {
	const char *cmd;          /* the subcommand, as messages name it */
	const char *usage;        /* --help's first lines */
	const char *weight_shape; /* the weight's layout in --weight's help */
	unsigned request;         /* enum request_op: the parameters read as flags */
	int finish;               /* 1: request_finish checks the parameters before files are read */
	int transpose;            /* 0: fftbloom_conv2d; 1: fftbloom_conv2d_transpose */
	/* The JSON line on stderr after --repeat N: med holds the medians of the N runs, st the
	 * last run's. */
	void (*report)(const struct conv_desc *d, const struct fftbloom_conv_stats *st, int reps,
	               const struct conv_times *med, const char *renderer);
};

int cli_conv_run(const struct conv_op *op, int argc, char **argv);

#endif
