/* Helpers shared by the subcommands of the fftbloom CLI: option parsing with --help, "-o" as
 * "--output", option tables merged from the shared ones (GPU selection, bloom parameters) plus
 * the command's own, and opening the GPU context with a program cache. */
#ifndef FFTBLOOM_CLI_COMMON_H
#define FFTBLOOM_CLI_COMMON_H

#include <stddef.h>
#include <stdio.h>

#include "core/cachedir.h"
#include "core/config.h"
#include "gles/egl.h"
#include "gles/engine.h"
#include "gles/fft.h"
#include "gles/program.h"
#include "gles/wisdom.h"
#include "codec/image.h"
#include "api/request.h"

#define CLI_MAX_OPTS 64

/* Appends n definitions to t (count *len), their offsets moved by base. Returns 0 or -1. */
int cli_opts_add(struct opt_def *t, size_t *len, const struct opt_def *src, size_t n, size_t base);

/* Rewrites "-o" to "--output" in argv, and returns 1 when "--help" or "-h" is present. */
int cli_prepare_argv(int argc, char **argv);

/* Prints usage (text) and then the option table t to f: what --help shows. */
void cli_usage(FILE *f, const char *usage, const struct opt_def *t, size_t n);

/* Parses a subcommand's options. With --help (or -h) before "--" prints cli_usage to stdout
 * and returns 1 (the command exits 0). "-o" stands for "--output" where t has that option.
 * Otherwise: values zeroed, defaults, then hook(values, arg) if given, the options'
 * environment variables, flags; positional arguments counted in *npos. A bad option prints
 * "fftbloom NAME: message" and returns 2 (the exit status for usage errors); success is 0. */
int cli_parse(const char *name, const char *usage, const struct opt_def *t, size_t n, void *values,
              size_t size, int (*hook)(void *values, void *arg), void *arg, int argc,
              char **argv, int *npos);

/* As cli_parse, and the request parameters of op (api/request.h) as flags into *req
 * (initialised for op first): --help lists them after the command's own options. */
int cli_parse_request(const char *name, const char *usage, const struct opt_def *t, size_t n,
                      void *values, size_t size, struct request *req, unsigned op, int argc,
                      char **argv, int *npos);

struct cli_gpu {
	struct engine *engine;     /* owns the others (gles/engine.h) */
	struct egl_ctx *ctx;
	const struct egl_info *info;
	struct program_cache *pc;
	struct fft_wisdom *wisdom; /* NULL with --fft-wisdom builtin */
	struct cachedir_paths paths; /* where programs and wisdom persist (core/cachedir.h) */
	size_t frame_bytes;        /* --gpu-frame-memory: for the contexts a command makes itself */
};

/* The images a command reads: 32768 a side and 2^30 pixels (a 16384x16384 frame and more; the
 * decoded floats are the memory bound: 16 GiB for RGBA at the limit). The HTTP API's limits are
 * the daemon's options. */
extern const struct image_limits cli_image_limits;

/* Opens the context the options ask for; prints the reason on failure (returns -1). A shape no
 * wisdom holds is measured before use only when --fft-wisdom names a file; otherwise it runs the
 * built-in rule. */
/* The one rule for NaN and infinity in an input (the HTTP API's 422 input_not_finite): 0 when
 * bad is 0, else 1 with "WHAT has BAD NaN or infinite samples; ..." in err (exit status 1). */
int cli_nonfinite(size_t bad, const char *what, char *err, size_t len);

int cli_gpu_open(const struct gpu_config *gc, struct cli_gpu *g);
void cli_gpu_close(struct cli_gpu *g);

#endif
