/* fftbloom conv2d and conv2d-transpose: one driver (cli/conv.c) reads the request table's
 * flags and the NPY files, runs the operation (and --repeat N more times), writes the result and
 * the timing line; each subcommand's file (cli/conv2d.c, cli/deconv.c) gives only what differs,
 * as a struct conv_op. Exit codes as cli.h: 0 ok, 1 failure (a file that cannot be read or
 * written, the GPU), 2 usage (options, and tensors whose ranks or shapes do not fit the
 * parameters). */
#ifndef FFTBLOOM_CLI_CONV_H
#define FFTBLOOM_CLI_CONV_H

#include <stddef.h>

#include "cli/common.h"
#include "api/request.h"
#include "codec/tensor.h"

int cli_conv2d(int argc, char **argv);
int cli_conv2d_transpose(int argc, char **argv);

#define CONV_ERR_LEN 512 /* holds the engines' and conv_shape's messages */

struct conv_tensors {
	struct tensor x, w, b; /* b.data NULL when there is no bias */
};

struct conv_times {
	double gpu_ms, conv_ms, wall_ms; /* one run's; conv_ms 0 where the op does not time it */
};

/* What differs between the subcommands. state is the op's own struct (state_size bytes, zeroed
 * by the driver): its engine contexts, the shape description and the last run's stats. The
 * engine calls return 0 or a negative enum spatial_error code (gles/deconv.h shares them),
 * with a message in err where there is one. */
struct conv_op {
	const char *cmd;          /* the subcommand, as messages name it */
	const char *usage;        /* --help's first lines */
	const char *weight_shape; /* the weight's layout in --weight's help */
	unsigned request;         /* enum request_op: the parameters read as flags */
	int finish;               /* 1: request_finish checks the parameters before files are read */
	size_t state_size;
	/* The op's shape description into state (time_stages: time each run's stages) and y's
	 * rank and shape, from the tensors and the parameters. 0, or -1 with a message. */
	int (*describe)(void *state, const struct conv_tensors *t, const struct conv_params *p,
	                int time_stages, struct tensor *y, char err[CONV_ERR_LEN]);
	int (*open)(void *state, const struct cli_gpu *g, char err[CONV_ERR_LEN]);
	int (*run)(void *state, const struct conv_tensors *t, float *y, struct conv_times *tm,
	           char err[CONV_ERR_LEN]);
	const char *(*strerror)(int code);
	/* The JSON line on stderr after --repeat N: med holds the medians of the N runs. */
	void (*report)(void *state, const struct tensor *y, int reps, const struct conv_times *med,
	               const char *renderer);
	void (*close)(void *state); /* frees what open made; safe after a failed or no open */
};

/* The subcommand: parses argv (argv[0] the subcommand) and runs op. Returns the exit code. */
int cli_conv_run(const struct conv_op *op, int argc, char **argv);

#endif
