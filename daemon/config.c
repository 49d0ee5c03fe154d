/* The one table of options; see config.h. */
#include "daemon/config.h"

#include <string.h>

#define GPU_OPTS(T, base)                                                                   \
	{"platform", OPT_ENUM, 0, 0, "auto", "auto|device|surfaceless",                         \
	 "EGL platform: auto tries the device platform, then Mesa surfaceless", "FFTBLOOM_PLATFORM", \
	 offsetof(T, base platform)},                                                            \
	{"device", OPT_INT, 0, 63, "0", NULL, "EGL device index for the device platform",        \
	 "FFTBLOOM_DEVICE", offsetof(T, base device)},                                           \
	{"gl-debug", OPT_BOOL, 0, 1, "false", NULL, "KHR_debug context, GL messages to the log",  \
	 "FFTBLOOM_GL_DEBUG", offsetof(T, base gl_debug)},                                       \
	{"shader-dir", OPT_STRING, 0, 0, "", NULL,                                               \
	 "debug: load NAME.comp shaders from this folder instead of the built-in copies",        \
	 "FFTBLOOM_SHADER_DIR", offsetof(T, base shader_dir)}

const struct opt_def config_table[] = {
	GPU_OPTS(struct config, gpu.),
	{"log-level", OPT_ENUM, 0, 0, "info", "error|warn|info|debug", "least severe message logged",
	 "FFTBLOOM_LOG_LEVEL", offsetof(struct config, log_level)},
	{"log-format", OPT_ENUM, 0, 0, "text", "text|json", "log lines as text or one JSON object each",
	 "FFTBLOOM_LOG_FORMAT", offsetof(struct config, log_format)},
};
const size_t config_table_len = sizeof config_table / sizeof config_table[0];

const struct opt_def gpu_config_table[] = {
	GPU_OPTS(struct gpu_config, ),
};
const size_t gpu_config_table_len = sizeof gpu_config_table / sizeof gpu_config_table[0];

static int load(const struct opt_def *t, size_t n, void *v, int argc, char **argv, int first,
                int *npos, char err[OPT_ERR_LEN])
{
	int rc = opts_defaults(t, n, v, err);
	if (!rc)
		rc = opts_from_env(t, n, v, err);
	if (!rc)
		rc = opts_from_argv(t, n, v, argc, argv, first, npos, err);
	return rc;
}

int config_load(struct config *c, int argc, char **argv, int first, int *npos,
                char err[OPT_ERR_LEN])
{
	memset(c, 0, sizeof *c);
	return load(config_table, config_table_len, c, argc, argv, first, npos, err);
}

int gpu_config_load(struct gpu_config *c, int argc, char **argv, int first, int *npos,
                    char err[OPT_ERR_LEN])
{
	memset(c, 0, sizeof *c);
	return load(gpu_config_table, gpu_config_table_len, c, argc, argv, first, npos, err);
}
