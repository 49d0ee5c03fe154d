/* Shared CLI helpers; see cli/common.h. */
#include "cli/common.h"

#include <stdio.h>
#include <string.h>

#include "core/log.h"

int cli_opts_add(struct opt_def *t, size_t *len, const struct opt_def *src, size_t n, size_t base)
{
	if (*len + n > CLI_MAX_OPTS)
		return -1;
	for (size_t i = 0; i < n; i++) {
		t[*len] = src[i];
		t[*len].offset += base;
		(*len)++;
	}
	return 0;
}

/* cli_prepare_argv, rewriting "-o" only where output_flag (the command has --output). */
static int scan_argv(int argc, char **argv, int output_flag)
{
	static char output[] = "--output";
	int help = 0;
	for (int i = 1; i < argc; i++) {
		if (output_flag && !strcmp(argv[i], "-o"))
			argv[i] = output;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			help = 1;
		else if (!strcmp(argv[i], "--"))
			break;
	}
	return help;
}

int cli_prepare_argv(int argc, char **argv)
{
	return scan_argv(argc, argv, 1);
}

void cli_usage(FILE *f, const char *usage, const struct opt_def *t, size_t n)
{
	fputs(usage, f);
	opts_print_help(f, t, n);
}

int cli_parse(const char *name, const char *usage, const struct opt_def *t, size_t n, void *values,
              size_t size, int (*hook)(void *values, void *arg), void *arg, int argc,
              char **argv, int *npos)
{
	if (scan_argv(argc, argv, opts_find(t, n, "output") != NULL)) {
		cli_usage(stdout, usage, t, n);
		return 1;
	}
	char err[OPT_ERR_LEN];
	memset(values, 0, size);
	*npos = 0;
	if (opts_defaults(t, n, values, err) || (hook && hook(values, arg)) ||
	    opts_from_env(t, n, values, err) || opts_from_argv(t, n, values, argc, argv, 1, npos, err)) {
		fprintf(stderr, "fftbloom %s: %s\n", name, err);
		return 2;
	}
	return 0;
}

static int request_flag(void *ctx, const char *name, const char *value, char err[OPT_ERR_LEN])
{
	struct request *req = ctx;
	if (!request_find(name, req->op))
		return OPT_E_UNKNOWN;
	if (!value) {
		snprintf(err, OPT_ERR_LEN, "--%.64s needs a value", name);
		return OPT_E_MISSING;
	}
	char rerr[REQUEST_ERR_LEN];
	if (request_set(req, name, value, REQUEST_SRC_FLAG, rerr)) {
		snprintf(err, OPT_ERR_LEN, "%.250s", rerr);
		return OPT_E_VALUE;
	}
	return 0;
}

int cli_parse_request(const char *name, const char *usage, const struct opt_def *t, size_t n,
                      void *values, size_t size, struct request *req, unsigned op, int argc,
                      char **argv, int *npos)
{
	request_init(req, op);
	if (cli_prepare_argv(argc, argv)) {
		cli_usage(stdout, usage, t, n);
		request_print_help(stdout, op);
		return 1;
	}
	char err[OPT_ERR_LEN];
	memset(values, 0, size);
	*npos = 0;
	if (opts_defaults(t, n, values, err) || opts_from_env(t, n, values, err) ||
	    opts_from_argv_other(t, n, values, argc, argv, 1, npos, request_flag, req, err)) {
		fprintf(stderr, "fftbloom %s: %s\n", name, err);
		return 2;
	}
	return 0;
}

const struct image_limits cli_image_limits = {.max_width = 32768, .max_height = 32768,
                                              .max_pixels = 1ull << 30};

int cli_nonfinite(size_t bad, const char *what, char *err, size_t len)
{
	if (!bad)
		return 0;
	snprintf(err, len, "%s has %zu NaN or infinite samples; every operation refuses them "
	         "(replace them, e.g. with 0)", what, bad);
	return 1;
}

int cli_gpu_open(const struct gpu_config *gc, struct cli_gpu *g)
{
	memset(g, 0, sizeof *g);
	cachedir_driver_setup(gc); /* the CLI opens its GPU on its one thread */
	struct engine_opts eo = {.platform = gc->platform, .device = gc->device,
	                         .gl_debug = gc->gl_debug, .shader_dir = gc->shader_dir,
	                         .frame_bytes = (size_t)gc->frame_memory};
	cachedir_resolve(gc, &g->paths);
	eo.program_cache = g->paths.programs;
	eo.wisdom_file = g->paths.wisdom;
	eo.no_wisdom = g->paths.no_wisdom;
	eo.wisdom_measure = g->paths.named_wisdom ? FFT_WISDOM_MEASURE_NOW : FFT_WISDOM_MEASURE_NEVER;
	static char err[ENGINE_ERR_LEN];
	if (engine_create(&eo, &log_process_sink, &g->engine, err)) {
		fprintf(stderr, "fftbloom: %s\n", err);
		return -1;
	}
	if (gc->require_gpu && engine_info(g->engine)->software) {
		fprintf(stderr, "fftbloom: the context is a software renderer ('%s'), and --require-gpu "
		        "asks for a GPU\n", engine_info(g->engine)->renderer);
		engine_destroy(g->engine);
		g->engine = NULL;
		return -1;
	}
	g->ctx = engine_egl(g->engine);
	g->info = engine_info(g->engine);
	g->pc = engine_programs(g->engine);
	g->wisdom = engine_wisdom(g->engine);
	g->frame_bytes = (size_t)gc->frame_memory;
	return 0;
}

void cli_gpu_close(struct cli_gpu *g)
{
	engine_destroy(g->engine);
	memset(g, 0, sizeof *g);
}
