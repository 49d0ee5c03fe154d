/* fftbloomd's configuration checks and its modes other than serving; see modes.h. */
#include "daemon/modes.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/errors.h"
#include "api/format.h"
#include "api/openapi.h"
#include "api/operation.h"
#include "core/buildinfo.h"
#include "core/log.h"
#include "core/parallel.h"
#include "daemon/apiutil.h"
#include "daemon/healthcheck.h"
#include "daemon/help.h"
#include "daemon/jobs.h"
#include "daemon/service.h"
#include "gles/egl.h"
#include "gles/engine.h"

int daemon_check_config(const struct config *cfg, int device_count, int *devices, int *ndev,
                        int (*warm)[2], int *nwarm, char *err, size_t len)
{
	char aerr[API_ERR_LEN];
	if (config_engine_check(&cfg->gpu, err, len))
		return -1;
	if (api_parse_gpus(cfg->gpus, device_count, devices, JOBS_MAX_GPUS, ndev, aerr)) {
		snprintf(err, len, "%s", aerr);
		return -1;
	}
	if (api_parse_sizes(cfg->warm_sizes, cfg->max_side, warm, JOBS_MAX_WARM, nwarm, aerr)) {
		snprintf(err, len, "warm-sizes: %s", aerr);
		return -1;
	}
	int spare[JOBS_MAX_SPARE][2], nspare;
	if (strcmp(cfg->spare_plans, "auto") &&
	    api_parse_sizes(cfg->spare_plans, cfg->max_side, spare, JOBS_MAX_SPARE, &nspare, aerr)) {
		snprintf(err, len, "spare-plans: %s", aerr);
		return -1;
	}
	if (*ndev * cfg->gpu_threads > JOBS_MAX_GPUS) {
		snprintf(err, len, "%d devices x %d gpu-threads is more than %d GPU threads", *ndev,
		         cfg->gpu_threads, JOBS_MAX_GPUS);
		return -1;
	}
	for (const char *c = cfg->cache_control; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			snprintf(err, len, "--cache-control holds a control character");
			return -1;
		}
	if (!cfg->tls_cert[0] != !cfg->tls_key[0]) {
		snprintf(err, len, "--tls-cert and --tls-key go together");
		return -1;
	}
	return 0;
}

int daemon_load_config(struct config *cfg, int argc, char **argv, int first)
{
	char err[OPT_ERR_LEN];
	int npos = 0;
	if (config_load(cfg, argc, argv, first, &npos, err)) {
		fprintf(stderr, "fftbloomd: %s\n", err);
		return 2;
	}
	if (npos) {
		fprintf(stderr, "fftbloomd: unexpected argument '%s'\n", argv[first]);
		return 2;
	}
	return 0;
}

/* --health-check without a URL: the daemon's own address from the configuration. */
static int health_check_config(int argc, char **argv, int first)
{
	struct config cfg;
	int rc = daemon_load_config(&cfg, argc, argv, first);
	if (rc)
		return rc;
	char url[600], msg[700];
	if (healthcheck_url(cfg.listen, cfg.port, cfg.tls_cert[0] != 0, "/healthz", url,
	                    sizeof url, msg, sizeof msg)) {
		fprintf(stderr, "fftbloomd: --health-check: %s\n", msg);
		return 2;
	}
	rc = healthcheck(url, 5, msg, sizeof msg);
	fprintf(rc ? stderr : stdout, "%s\n", msg);
	return rc ? 1 : 0;
}

/* --check-config: the configuration as the daemon would take it, as JSON. */
static int check_config_mode(int argc, char **argv, int first)
{
	struct config cfg;
	int rc = daemon_load_config(&cfg, argc, argv, first);
	if (rc)
		return rc;
	int devices[JOBS_MAX_GPUS], ndev, warm[JOBS_MAX_WARM][2], nwarm;
	char err[API_ERR_LEN + 64];
	if (daemon_check_config(&cfg, 1, devices, &ndev, warm, &nwarm, err, sizeof err)) {
		fprintf(stderr, "fftbloomd: %s\n", err);
		return 2;
	}
	json_t *c = json_object();
	for (size_t i = 0; i < config_table_len; i++) {
		char v[OPT_STR_MAX + 32];
		opts_format(&config_table[i], &cfg, v, sizeof v);
		json_object_set_new(c, config_table[i].name, json_string(v));
	}
	json_t *doc = json_pack("{s:b,s:o}", "ok", 1, "configuration", c);
	json_dumpf(doc, stdout, JSON_INDENT(2));
	printf("\n");
	json_decref(doc);
	return 0;
}

int daemon_run_mode(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			help_usage();
			return 0;
		}
		if (!strcmp(a, "--help=json"))
			return help_json();
		if (!strcmp(a, "--help=env")) {
			help_env();
			return 0;
		}
		if (!strcmp(a, "--version")) {
			char line[256];
			buildinfo_line("fftbloomd", line, sizeof line);
			printf("%s\n", line);
			return 0;
		}
		if (!strcmp(a, "--print-openapi")) {
			json_t *doc = openapi_document(FFTBLOOMD_VERSION, 0, 0);
			int rc = doc && !json_dumpf(doc, stdout, JSON_INDENT(2)) ? 0 : 1;
			printf("\n");
			json_decref(doc);
			return rc;
		}
		if (!strcmp(a, "--print-errors") || !strcmp(a, "--print-operations") ||
		    !strcmp(a, "--print-formats")) {
			if (!strcmp(a, "--print-errors"))
				api_errors_markdown(stdout);
			else if (!strcmp(a, "--print-formats"))
				format_markdown(stdout);
			else
				operations_markdown(stdout);
			return fflush(stdout) ? 1 : 0;
		}
		if (!strcmp(a, "--check-config")) {
			argv[i] = argv[0];
			return check_config_mode(argc - i, argv + i, 1);
		}
		if (!strcmp(a, "--health-check")) {
			if (i + 1 < argc && (!strncmp(argv[i + 1], "http://", 7) ||
			                     !strncmp(argv[i + 1], "https://", 8))) {
				char msg[512];
				int rc = healthcheck(argv[i + 1], 5, msg, sizeof msg);
				fprintf(rc ? stderr : stdout, "%s\n", msg);
				return rc ? 1 : 0;
			}
			argv[i] = argv[0];
			return health_check_config(argc - i, argv + i, 1);
		}
	}
	return -1;
}

#define ASK_TIMEOUT_MS 30000 /* a child that has not answered by then is killed */

/* Asks a question in a child process, so that this process loads no GL driver it may not use
 * (and the supervisor none before it forks its workers): ask(arg, out) runs there and fills
 * len bytes of out, which come back here. Returns 0 with out filled, -1 when no answer came. */
static int ask_forked(void (*ask)(const void *arg, void *out), const void *arg, void *out,
                      size_t len)
{
	int p[2];
	if (pipe(p))
		return -1;
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (!pid) {
		close(p[0]);
		ask(arg, out);
		ssize_t w = write(p[1], out, len);
		_exit(w == (ssize_t)len ? 0 : 1);
	}
	close(p[1]);
	/* a driver that hangs in the child: no answer after ASK_TIMEOUT_MS (the start's signals
	 * are blocked meanwhile) */
	struct pollfd pf = {p[0], POLLIN, 0};
	int rc = poll(&pf, 1, ASK_TIMEOUT_MS) == 1 && read(p[0], out, len) == (ssize_t)len ? 0 : -1;
	close(p[0]);
	if (rc)
		kill(pid, SIGKILL);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return rc;
}

/* The EGL devices as the child sees them: how many, and which are no software rasterizer. */
struct device_list {
	int total;
	int n;
	int dev[JOBS_MAX_GPUS];
};

static void ask_devices(const void *arg, void *out)
{
	(void)arg;
	struct device_list *l = out;
	l->total = egl_device_count();
	l->n = egl_gpu_devices(l->dev, JOBS_MAX_GPUS);
}

int daemon_gpus_all(struct config *cfg)
{
	if (strcmp(cfg->gpus, "all"))
		return 0;
	struct device_list l;
	if (ask_forked(ask_devices, NULL, &l, sizeof l) || l.total < 1)
		return 1;
	if (l.n < 1 || l.n >= l.total || l.n > JOBS_MAX_GPUS)
		return l.total; /* all GPUs, or none (a software renderer serves as before) */
	size_t at = 0;
	for (int i = 0; i < l.n; i++)
		at += (size_t)snprintf(cfg->gpus + at, sizeof cfg->gpus - at, "%s%d", i ? "," : "",
		                       l.dev[i]);
	log_msg(LOG_INFO, "--gpus all: the %d EGL devices that are GPUs (%s), not the %d software "
	        "rasterizer%s", l.n, cfg->gpus, l.total - l.n, l.total - l.n == 1 ? "" : "s");
	return l.total;
}

/* A question for the child: the GL renderers of n listed EGL devices on gc's platform. */
struct ask_devs {
	const struct gpu_config *gc;
	const int *devices;
	int n;
};

/* Its answer: why each device is no GPU, "" for a GPU. */
struct renderers {
	char why[JOBS_MAX_GPUS][160];
};

/* In the child: each device's context made, looked at and let go in turn. */
static void ask_renderers(const void *arg, void *out)
{
	const struct ask_devs *a = arg;
	struct renderers *r = out;
	memset(r, 0, sizeof *r);
	for (int i = 0; i < a->n && i < JOBS_MAX_GPUS; i++) {
		struct egl_opts eo = {.platform = a->gc->platform, .device_index = a->devices[i]};
		struct egl_ctx *ctx;
		static char err[EGL_ERR_LEN];
		if (egl_ctx_create(&eo, NULL, &ctx, err)) {
			snprintf(r->why[i], sizeof r->why[i], "no GL context could be made");
			continue;
		}
		if (egl_ctx_info(ctx)->software)
			snprintf(r->why[i], sizeof r->why[i], "the GL renderer '%.100s' is a software one",
			         egl_ctx_info(ctx)->renderer);
		egl_ctx_destroy(ctx);
	}
}

int daemon_compile_mode_resolve(int compile_mode, int compile_thread, int engine, int software)
{
	if (compile_mode != ENGINE_CMODE_AUTO || compile_thread || engine == ENGINE_CHOICE_CPU ||
	    software)
		return compile_mode;
	return ENGINE_CMODE_PROCESS;
}

/* Resolves --engine (auto: the CPU engine on a software renderer or without a context, asked
 * of the first listed device; with --require-gpu, the GPU engine) and --compile-mode auto
 * (process when every listed device is a GPU and the supervisor has the slots, two a device),
 * both from one child process's look at the devices (no answer: the GPU engine, which says
 * why, and the compile mode unchanged), and says which at start. The CPU engine decodes and
 * encodes every frame on the host (no JPEG planes, no lent upload buffers) and runs one worker
 * thread, whose FFTs take the cores the codec threads leave (core/parallel.h). */
void daemon_engine_resolve(struct config *cfg, const int *devices, int *ndev)
{
	char why[300] = "--engine cpu";
	int cmode = cfg->compile_mode;
	int all = cfg->gpu.engine != ENGINE_CHOICE_CPU &&
	          daemon_compile_mode_resolve(cmode, cfg->compile_thread, ENGINE_CHOICE_GPU, 0) != cmode;
	int ask = all || (cfg->gpu.engine == ENGINE_CHOICE_AUTO && !cfg->gpu.require_gpu);
	struct renderers r;
	struct ask_devs a = {&cfg->gpu, devices, all ? *ndev : 1};
	int answered = ask && !ask_forked(ask_renderers, &a, &r, sizeof r);
	if (cfg->gpu.engine == ENGINE_CHOICE_AUTO) {
		int cpu = !cfg->gpu.require_gpu && answered && r.why[0][0];
		if (cpu)
			snprintf(why, sizeof why, "%s", r.why[0]);
		cfg->gpu.engine = cpu ? ENGINE_CHOICE_CPU : ENGINE_CHOICE_GPU;
	}
	if (cfg->gpu.engine != ENGINE_CHOICE_CPU) {
		int software = !answered;
		for (int i = 0; all && answered && i < *ndev && i < JOBS_MAX_GPUS; i++)
			software |= r.why[i][0] != 0;
		if (all && !software && 2 * *ndev > SERVICE_MAX_WORKERS)
			log_msg(LOG_WARN, "--compile-mode auto: %d GPUs would take %d worker slots with "
			        "process, more than %d: idle work in the serving processes (parallel)",
			        *ndev, 2 * *ndev, SERVICE_MAX_WORKERS);
		else if (all)
			cfg->compile_mode = daemon_compile_mode_resolve(cmode, cfg->compile_thread,
			                                                cfg->gpu.engine, software);
		log_msg(LOG_INFO, "engine: gpu (GLES)%s", cfg->compile_mode != cmode
		        ? "; idle work in a successor process (--compile-mode auto on a GPU: process)"
		        : "");
		return;
	}
	cfg->jpeg_planes = 0;
	cfg->jpeg_upload_lease = 0;
	cfg->float_upload_lease = 0;
	cfg->gpu_threads = 1;
	cfg->gpu_depth = 1;
	*ndev = 1;
	log_msg(LOG_INFO, "engine: cpu (FFTW on %ld cores: %s)", par_cores(), why);
}
