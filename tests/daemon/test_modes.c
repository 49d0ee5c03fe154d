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

/* --gpus all leaves out the software rasterizers where GPUs are beside them: device 0 is listed
 * by egl_gpu_devices exactly when its extensions do not name EGL_MESA_device_software, and a
 * list of software devices alone keeps "all" (every device, as before). */
static void test_gpus_all(void **state)
{
	(void)state;
	int list[16], n = egl_gpu_devices(list, 16), total = egl_device_count();
	struct egl_opts eo = {.platform = EGLP_DEVICE, .device_index = 0};
	struct egl_ctx *ctx;
	char err[EGL_ERR_LEN];
	if (total < 1 || egl_ctx_create(&eo, NULL, &ctx, err)) {
		printf("no EGL device here: %s\n", total < 1 ? "none enumerated" : err);
		assert_int_equal(n, 0);
		return;
	}
	int soft0 = strstr(egl_ctx_info(ctx)->device_ext, "EGL_MESA_device_software") != NULL;
	egl_ctx_destroy(ctx);
	int listed0 = 0;
	for (int i = 0; i < n; i++)
		listed0 |= list[i] == 0;
	printf("EGL devices here: %d, of them GPUs: %d; device 0 %s\n", total, n,
	       soft0 ? "a software rasterizer" : "a GPU");
	assert_true(n <= total);
	assert_int_equal(listed0, !soft0);
	struct config cfg;
	load(&cfg, "gpu", "auto");
	snprintf(cfg.gpus, sizeof cfg.gpus, "all");
	int count = daemon_gpus_all(&cfg);
	assert_int_equal(count, total);
	if (n == 0 || n == total)
		assert_string_equal(cfg.gpus, "all");
	else
		assert_int_not_equal(strcmp(cfg.gpus, "all"), 0);
	snprintf(cfg.gpus, sizeof cfg.gpus, "0");
	assert_int_equal(daemon_gpus_all(&cfg), 0);
	assert_string_equal(cfg.gpus, "0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_resolve_here),
		cmocka_unit_test(test_gpus_all),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
