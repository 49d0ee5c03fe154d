/* Shared CLI helpers; see cli/common.h. */
#include "cli/common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/errors.h"
#include "api/format.h"
#include "core/log.h"

#define CLI_READ_MAX ((size_t)8 << 30)

int cli_read_all(const char *path, unsigned char **data, size_t *len, char *err, size_t elen)
{
	int std = !strcmp(path, "-");
	const char *name = std ? "standard input" : path;
	FILE *f = std ? stdin : fopen(path, "rb");
	if (!f) {
		snprintf(err, elen, "cannot open %.400s: %s", path, strerror(errno));
		return -1;
	}
	size_t cap = 1 << 16, n = 0;
	unsigned char *b = malloc(cap);
	int rc = -1;
	while (b) {
		if (n == cap) {
			unsigned char *c = cap < CLI_READ_MAX ? realloc(b, cap * 2) : NULL;
			if (!c) {
				snprintf(err, elen, "%.400s: too large (8 GiB at most) or out of memory", name);
				break;
			}
			b = c;
			cap *= 2;
		}
		size_t r = fread(b + n, 1, cap - n, f);
		n += r;
		if (r == 0) {
			if (ferror(f))
				snprintf(err, elen, "%.400s: %s", name, strerror(errno));
			else
				rc = 0;
			break;
		}
	}
	if (!b)
		snprintf(err, elen, "%.400s: out of memory", name);
	if (!std)
		fclose(f);
	if (rc) {
		free(b);
		return -1;
	}
	*data = b;
	*len = n;
	return 0;
}

int cli_write_all(const char *path, const void *data, size_t len, char *err, size_t elen)
{
	int std = !strcmp(path, "-");
	char tmp[4200];
	FILE *fp = stdout;
	if (!std) {
		snprintf(tmp, sizeof tmp, "%s.part%ld", path, (long)getpid());
		fp = fopen(tmp, "wb");
		if (!fp) {
			snprintf(err, elen, "cannot create %.400s: %s", tmp, strerror(errno));
			return -1;
		}
	}
	int bad = len && fwrite(data, 1, len, fp) != len;
	bad |= std ? fflush(fp) != 0 : fclose(fp) != 0;
	if (bad) {
		snprintf(err, elen, "cannot write %.400s: %s", std ? "standard output" : path,
		         strerror(errno));
		if (!std)
			unlink(tmp);
		return -1;
	}
	if (!std && rename(tmp, path)) {
		snprintf(err, elen, "cannot rename %.200s to %.200s: %s", tmp, path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

int cli_output_format(const char *path, int format, enum image_format *f, char *err, size_t elen)
{
	int std = !strcmp(path, "-");
	enum image_format ext = std ? IMAGE_FORMAT_UNKNOWN : image_format_from_name(path);
	if (std && format == OUT_AUTO) {
		snprintf(err, elen, "-o - (standard output) needs --format (%s)", FORMAT_CHOICES);
		return -1;
	}
	if (!std && ext == IMAGE_FORMAT_UNKNOWN) {
		snprintf(err, elen, "%.300s: unknown output extension (.jpg .png .exr .hdr .pfm .webp "
		         ".avif .tif)", path);
		return -1;
	}
	*f = ext;
	if (format != OUT_AUTO) {
		struct image_info none = {0};
		int bits;
		format_resolve(format, NULL, &none, f, &bits);
		if (!std && *f != ext) {
			snprintf(err, elen, "--format %s disagrees with the output %.300s (the file's "
			         "extension is its format; --format is for -o -)", image_format_name(*f),
			         path);
			return -1;
		}
	}
	return 0;
}

int cli_fail(const char *cmd, int e, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (e == API_E_NONE) {
		fprintf(stderr, "fftbloom %s: %s\n", cmd, msg);
		return 1;
	}
	fprintf(stderr, "fftbloom %s: %s (%s)\n", cmd, msg, api_error(e)->code);
	return api_error_exit_status(e);
}

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

/* config_engine_check on the parsed values of a table that has the GPU options (found by the
 * offset of its "engine" row): -1 with err for --engine cpu --require-gpu. */
static int engine_usage(const struct opt_def *t, size_t n, const void *values,
                        char err[OPT_ERR_LEN])
{
	const struct opt_def *d = opts_find(t, n, "engine");
	if (!d)
		return 0;
	const struct gpu_config *gc =
		(const void *)((const char *)values + d->offset - offsetof(struct gpu_config, engine));
	return config_engine_check(gc, err, OPT_ERR_LEN);
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
	    opts_from_env(t, n, values, err) || opts_from_argv(t, n, values, argc, argv, 1, npos, err) ||
	    engine_usage(t, n, values, err)) {
		fprintf(stderr, "fftbloom %s: %s\n", name, err);
		return 2;
	}
	return 0;
}

static int request_flag(void *ctx, const char *name, const char *value, char err[OPT_ERR_LEN])
{
	struct request *req = ctx;
	const struct request_param *d = request_find(name, req->op);
	if (!d)
		return OPT_E_UNKNOWN;
	if (!value && d->o.type == OPT_BOOL)
		value = "1"; /* a bare boolean flag */
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
	    opts_from_argv_other(t, n, values, argc, argv, 1, npos, request_flag, req, err) ||
	    engine_usage(t, n, values, err)) {
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

int cli_lib_open(const struct gpu_config *gc, int fft_technique, fftbloom_context **c)
{
	cachedir_driver_setup(gc); /* the CLI opens its GPU on its one thread */
	struct cachedir_paths paths;
	cachedir_resolve(gc, &paths);
	struct fftbloom_context_opts o;
	fftbloom_context_opts_init(&o);
	o.platform = gc->platform, o.gpu = gc->device, o.gl_debug = gc->gl_debug;
	o.shader_dir = gc->shader_dir[0] ? gc->shader_dir : NULL;
	o.program_cache = paths.programs[0] ? paths.programs : NULL;
	o.wisdom_file = paths.wisdom[0] ? paths.wisdom : NULL;
	o.wisdom = paths.no_wisdom ? FFTBLOOM_WISDOM_RULES :
	           paths.named_wisdom ? FFTBLOOM_WISDOM_MEASURE : FFTBLOOM_WISDOM_SHIPPED;
	o.frame_bytes = (size_t)gc->frame_memory;
	o.fft_technique = fft_technique;
	_Static_assert((int)ENGINE_CHOICE_GPU == FFTBLOOM_ENGINE_GPU &&
	               (int)ENGINE_CHOICE_CPU == FFTBLOOM_ENGINE_CPU, "the engines are the library's");
	/* --require-gpu asks for the GPU engine, which then refuses a software renderer */
	o.engine = gc->require_gpu && gc->engine == ENGINE_CHOICE_AUTO ? FFTBLOOM_ENGINE_GPU
	                                                                : gc->engine;
	char err[FFTBLOOM_MESSAGE_LEN];
	if (fftbloom_context_create(&o, c, err, sizeof err)) {
		fprintf(stderr, "fftbloom: %s\n", err);
		return -1;
	}
	if (gc->require_gpu && fftbloom_context_software(*c)) {
		fprintf(stderr, "fftbloom: the context is a software renderer ('%s'), and --require-gpu "
		        "asks for a GPU\n", fftbloom_context_renderer(*c));
		fftbloom_context_destroy(*c);
		*c = NULL;
		return -1;
	}
	return 0;
}

int cli_lib_error(int status)
{
	switch (status) {
	case FFTBLOOM_E_ARG: return API_E_INVALID_REQUEST;
	case FFTBLOOM_E_UNSUPPORTED: return API_E_INVALID_SHAPE; /* a shape the algorithm cannot take */
	case FFTBLOOM_E_TOO_LARGE: return API_E_TOO_LARGE_FOR_GPU;
	case FFTBLOOM_E_NOMEM: return API_E_OUT_OF_MEMORY;
	case FFTBLOOM_E_GPU_MEMORY: return API_E_GPU_OUT_OF_MEMORY;
	case FFTBLOOM_E_NOT_FINITE: return API_E_INVALID_REQUEST;
	}
	return API_E_GPU_ERROR;
}

void cli_gpu_close(struct cli_gpu *g)
{
	engine_destroy(g->engine);
	memset(g, 0, sizeof *g);
}
