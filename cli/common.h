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
#include "lib/include/fftbloom.h"

#define CLI_MAX_OPTS 64

/* The rule every subcommand follows (docs/cli.md, "Habits"): a file argument "-" is standard
 * input or output; where the output's format is chosen, --format names it ("-o -" needs it, a
 * file's extension must agree); the exit status is 0 on success, 2 for usage and for what the
 * command as written cannot do (a parameter, shapes: api_error_exit_status), 1 for a failure
 * while running (a file, a decoder, memory, the GPU, the server). Failures that are rows of the
 * HTTP API's error table (api/errors.h) print its code. */

/* All of path, or of standard input for "-", into *data (malloc'd, *len bytes; 8 GiB at most).
 * 0, or -1 with a message naming the file. */
int cli_read_all(const char *path, unsigned char **data, size_t *len, char *err, size_t elen);

/* len bytes to standard output for "-", else to path under a temporary name renamed once
 * complete (a file is never seen half written). 0, or -1 with a message naming the file. */
int cli_write_all(const char *path, const void *data, size_t len, char *err, size_t elen);

/* The image format of an output: format (enum out_format, api/format.h) where not OUT_AUTO,
 * else the path's extension. "-" needs a format, a file's extension must be known and agree
 * with it. 0 (*f set), or -1 with a message (a usage error). */
int cli_output_format(const char *path, int format, enum image_format *f, char *err, size_t elen);

/* Prints "fftbloom CMD: message (code)" for a failure that is row e of the error table (without
 * the code for API_E_NONE: a file or system failure) and returns the exit status:
 * api_error_exit_status(e), 1 for API_E_NONE. */
int cli_fail(const char *cmd, int e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

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
/* As cli_gpu_open, a context of the public library (lib/include/fftbloom.h), which the
 * subcommands ported onto it use instead: gc's platform, device, program cache and FFT wisdom
 * (resolved as cli_gpu_open resolves them), shader folder, frame memory, --require-gpu, and
 * fftbloom_fft's technique (enum fft_technique).
 * 0, or -1 after a message. */
int cli_lib_open(const struct gpu_config *gc, int fft_technique, fftbloom_context **c);
/* The error table's row (api/errors.h) of a library status (enum fftbloom_status). */
int cli_lib_error(int status);
void cli_gpu_close(struct cli_gpu *g);

#endif
