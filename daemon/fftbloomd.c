/* fftbloomd: the render daemon. Makes its GPU context, logs the renderer and serves until
 * SIGTERM or SIGINT. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "daemon/config.h"
#include "daemon/log.h"
#include "gles/egl.h"

static volatile sig_atomic_t g_stop;
static void on_signal(int sig)
{
	g_stop = sig;
}

int main(int argc, char **argv)
{
	struct config cfg;
	char err[OPT_ERR_LEN];
	int npos = 0;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: fftbloomd [options]\n\nEvery option also reads the environment "
			       "variable named after it.\n");
			opts_print_help(stdout, config_table, config_table_len);
			return 0;
		}
	if (config_load(&cfg, argc, argv, 1, &npos, err)) {
		fprintf(stderr, "fftbloomd: %s\n", err);
		return 2;
	}
	if (npos) {
		fprintf(stderr, "fftbloomd: unexpected argument '%s'\n", argv[1]);
		return 2;
	}
	log_setup(cfg.log_level, cfg.log_format == 1);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	struct egl_opts eo = {cfg.gpu.platform, cfg.gpu.device, cfg.gpu.gl_debug};
	struct egl_ctx *ctx;
	char eerr[EGL_ERR_LEN];
	if (egl_ctx_create(&eo, &log_gles_sink, &ctx, eerr)) {
		log_msg(LOG_ERROR, "no OpenGL ES 3.1 context: %s", eerr);
		return 1;
	}
	const struct egl_info *i = egl_ctx_info(ctx);
	log_msg(LOG_INFO, "fftbloomd ready: renderer '%s' (%s) on the %s platform", i->renderer,
	        i->version, i->platform);
	sigset_t none;
	sigemptyset(&none);
	while (!g_stop)
		sigsuspend(&none);
	log_msg(LOG_INFO, "signal %d: shutting down", (int)g_stop);
	egl_ctx_destroy(ctx);
	return 0;
}
