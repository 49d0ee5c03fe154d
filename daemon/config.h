/* The configuration table: every option of fftbloomd and of the fftbloom CLI's GPU selection,
 * declared once (name, type, bounds, default, help, FFTBLOOM_* variable). Flags, the
 * environment, --help and /v1/info all read it. */
#ifndef FFTBLOOM_CONFIG_H
#define FFTBLOOM_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "protocol/opts.h"

/* Options that choose and set up a GPU context; shared by the daemon and the CLI. */
struct gpu_config {
	int platform;                  /* enum egl_platform: auto|device|surfaceless */
	int device;                    /* EGL device index */
	int gl_debug;                  /* KHR_debug messages to the log */
	char shader_dir[OPT_STR_MAX];  /* load shaders from here instead of the embedded copies */
};

struct config {
	struct gpu_config gpu;
	int log_level;                 /* error|warn|info|debug */
	int log_format;                /* text|json */
};

extern const struct opt_def config_table[];
extern const size_t config_table_len;
extern const struct opt_def gpu_config_table[];
extern const size_t gpu_config_table_len;

/* Defaults, then FFTBLOOM_* variables, then flags from argv[first..]; positional arguments are
 * moved to argv[first..first+*npos). Returns 0 or a negative opt_error with a message in err. */
int config_load(struct config *c, int argc, char **argv, int first, int *npos,
                char err[OPT_ERR_LEN]);
int gpu_config_load(struct gpu_config *c, int argc, char **argv, int first, int *npos,
                    char err[OPT_ERR_LEN]);

#endif
