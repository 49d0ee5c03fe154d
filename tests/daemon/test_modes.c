/* The start's resolution of --compile-mode auto (daemon/modes): process on the GPU engine over a
 * renderer that is no software one with --compile-thread auto, every other case unchanged; and
 * daemon_engine_resolve on this machine's renderer against egl's own answer (a software renderer
 * here in CI keeps auto, a GPU gets process). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/config.h"
#include "daemon/modes.h"
#include "gles/egl.h"
#include "gles/engine.h"

static void test_rule(void **state)
{
	(void)state;
	/* the one case that becomes process */
	assert_int_equal(daemon_compile_mode_resolve(ENGINE_CMODE_AUTO, 0, ENGINE_CHOICE_GPU, 0),
	                 ENGINE_CMODE_PROCESS);
	/* a software renderer, the CPU engine, an explicit --compile-thread: auto stays */
	assert_int_equal(daemon_compile_mode_resolve(ENGINE_CMODE_AUTO, 0, ENGINE_CHOICE_GPU, 1),
	                 ENGINE_CMODE_AUTO);
	assert_int_equal(daemon_compile_mode_resolve(ENGINE_CMODE_AUTO, 0, ENGINE_CHOICE_CPU, 0),
	                 ENGINE_CMODE_AUTO);
	for (int ct = 1; ct <= 2; ct++)
		assert_int_equal(daemon_compile_mode_resolve(ENGINE_CMODE_AUTO, ct, ENGINE_CHOICE_GPU,
		                                             0), ENGINE_CMODE_AUTO);
	/* an explicit mode is never changed */
	int modes[] = {ENGINE_CMODE_PARALLEL, ENGINE_CMODE_THREAD, ENGINE_CMODE_INLINE,
	               ENGINE_CMODE_PROCESS};
	for (size_t i = 0; i < sizeof modes / sizeof *modes; i++)
		for (int soft = 0; soft <= 1; soft++)
			assert_int_equal(daemon_compile_mode_resolve(modes[i], 0, ENGINE_CHOICE_GPU, soft),
			                 modes[i]);
}

/* This machine's renderer of EGL device 0, asked here: 1 software, 0 a GPU, -1 no context. */
static int software_here(const struct gpu_config *gc)
{
	struct egl_opts eo = {.platform = gc->platform, .device_index = 0};
	struct egl_ctx *ctx;
	char err[EGL_ERR_LEN];
	if (egl_ctx_create(&eo, NULL, &ctx, err))
		return -1;
	int soft = egl_ctx_info(ctx)->software;
	egl_ctx_destroy(ctx);
	return soft;
}

/* cfg loaded from the environment (the platform) and these flags */
static void load(struct config *cfg, const char *engine, const char *compile_thread)
{
	char *argv[] = {"test", "--engine", (char *)engine, "--compile-thread",
	                (char *)compile_thread, "--compile-mode", "auto"};
	char err[OPT_ERR_LEN];
	if (config_load(cfg, 7, argv, 1, NULL, err))
		fail_msg("%s", err);
}

static void test_resolve_here(void **state)
{
	(void)state;
	struct config cfg;
	load(&cfg, "gpu", "auto");
	int dev[] = {0}, ndev = 1;
	daemon_engine_resolve(&cfg, dev, &ndev);
	int soft = software_here(&cfg.gpu);
	printf("renderer here: %s; --engine gpu, --compile-mode auto resolves to %d\n",
	       soft < 0 ? "no context" : soft ? "software" : "a GPU", cfg.compile_mode);
	assert_int_equal(cfg.compile_mode, soft == 0 ? ENGINE_CMODE_PROCESS : ENGINE_CMODE_AUTO);
	assert_int_equal(cfg.gpu.engine, ENGINE_CHOICE_GPU);

	/* --compile-thread on: auto stays, whatever the renderer */
	load(&cfg, "gpu", "on");
	daemon_engine_resolve(&cfg, dev, &ndev);
	assert_int_equal(cfg.compile_mode, ENGINE_CMODE_AUTO);

	/* --engine auto: the CPU engine on a software renderer (auto stays), else process */
	load(&cfg, "auto", "auto");
	daemon_engine_resolve(&cfg, dev, &ndev);
	assert_int_equal(cfg.gpu.engine, soft == 0 ? ENGINE_CHOICE_GPU : ENGINE_CHOICE_CPU);
	assert_int_equal(cfg.compile_mode, soft == 0 ? ENGINE_CMODE_PROCESS : ENGINE_CMODE_AUTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_resolve_here),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
