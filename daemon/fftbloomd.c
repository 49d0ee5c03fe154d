/* fftbloomd: the render daemon. Reads the configuration table, starts one GPU thread per GPU,
 * the codec pool and the HTTP server, and serves until SIGTERM, SIGINT or SIGQUIT; then stops
 * accepting, finishes the accepted requests (up to --drain-timeout) and exits 0. SIGHUP reloads
 * --kernel-dir; SIGUSR1 logs the daemon's state; SIGUSR2 and SIGPIPE are ignored. */
#include <errno.h>
#include <pthread.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/apiutil.h"
#include "daemon/config.h"
#include "daemon/healthcheck.h"
#include "daemon/jobs.h"
#include "daemon/kernels.h"
#include "daemon/log.h"
#include "daemon/metrics.h"
#include "daemon/server.h"
#include "gles/egl.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	nanosleep(&ts, NULL);
}

/* Reads a whole (small) file into a NUL-terminated malloc'd string. */
static char *read_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			if (cap > (16u << 20)) { /* keys and certificates are small */
				free(buf);
				fclose(f);
				return NULL;
			}
			char *b = realloc(buf, cap);
			if (!b) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = b;
		}
		size_t r = fread(buf + n, 1, 4096, f);
		n += r;
		if (r < 4096)
			break;
	}
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

/* SIGHUP: --kernel-dir again; on a failure the registry stays as it was. */
static void reload_kernels(const struct config *cfg, struct kernels *kernels)
{
	if (!cfg->kernel_dir[0]) {
		log_msg(LOG_INFO, "SIGHUP: no --kernel-dir to reload");
		return;
	}
	struct image_limits lim = {(unsigned)cfg->max_side, (unsigned)cfg->max_side,
	                           cfg->kernel_max_pixels < cfg->max_pixels
	                           ? cfg->kernel_max_pixels : cfg->max_pixels, NULL, NULL};
	char kerr[KERNELS_ERR_LEN];
	int loaded, removed;
	if (kernels_load_dir(kernels, cfg->kernel_dir, &lim, &loaded, &removed, kerr))
		log_msg(LOG_ERROR, "SIGHUP: kernels kept as they were: %s", kerr);
	else
		log_msg(LOG_INFO, "SIGHUP: kernel-dir %s reloaded: %d kernels registered, %d removed",
		        cfg->kernel_dir, loaded, removed);
}

/* SIGUSR1: one line of the daemon's state. */
static void log_state(struct jobs *jobs, struct kernels *kernels, struct server *server)
{
	struct jobs_status st;
	jobs_status(jobs, &st);
	size_t nk, kb;
	kernels_totals(kernels, &nk, &kb);
	char why[160];
	int ready = jobs_ready(jobs, why, sizeof why);
	log_msg(LOG_INFO, "state: %s; queue %d of %d, %d in flight, %d connections with a request, "
	        "%llu of %llu MiB of the memory budget reserved, %zu named kernels (%zu KiB)",
	        ready ? "ready" : why, st.queued, st.queue_size, st.in_flight, server_active(server),
	        st.memory_used >> 20, st.memory_budget >> 20, nk, kb >> 10);
	for (int i = 0; i < st.ngpus; i++)
		log_msg(LOG_INFO, "state: gpu %d: %s%s, %llu jobs, %llu failures, %.1f s busy, "
		        "heartbeat %.1f s ago, %u programs", i, st.gpu[i].alive ? "alive" : "down",
		        st.gpu[i].busy ? " and busy" : "", st.gpu[i].jobs, st.gpu[i].failures,
		        st.gpu[i].busy_s, st.gpu[i].heartbeat_age, st.gpu[i].programs.count);
}

static void usage(void)
{
	printf("usage: fftbloomd [options]\n"
	       "       fftbloomd --health-check URL   (exit 0 when URL, default path /readyz, "
	       "answers 200)\n\nEvery option also reads the environment variable named after it.\n");
	opts_print_help(stdout, config_table, config_table_len);
}

int main(int argc, char **argv)
{
	/* Frames are tens of MB: glibc would mmap each and unmap it when freed, so every request
	 * would fault its buffers in page by page. Keep freed blocks in the heap for the next one. */
	mallopt(M_MMAP_THRESHOLD, 512 << 20);
	mallopt(M_TRIM_THRESHOLD, 1024 << 20);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage();
			return 0;
		}
		if (!strcmp(argv[i], "--health-check")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "fftbloomd: --health-check needs a URL\n");
				return 2;
			}
			char msg[512];
			int rc = healthcheck(argv[i + 1], 5, msg, sizeof msg);
			fprintf(rc ? stderr : stdout, "%s\n", msg);
			return rc ? 1 : 0;
		}
	}
	struct config cfg;
	char err[OPT_ERR_LEN];
	int npos = 0;
	if (config_load(&cfg, argc, argv, 1, &npos, err)) {
		fprintf(stderr, "fftbloomd: %s\n", err);
		return 2;
	}
	if (npos) {
		fprintf(stderr, "fftbloomd: unexpected argument '%s'\n", argv[1]);
		return 2;
	}
	log_setup(cfg.log_level, cfg.log_format == 1);

	/* Signals go to this thread alone, through sigtimedwait; every thread started later
	 * inherits the mask. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGUSR2, SIG_IGN);

	int devices[JOBS_MAX_GPUS], ndev;
	char aerr[API_ERR_LEN];
	int count = strcmp(cfg.gpus, "all") ? 0 : egl_device_count();
	if (api_parse_gpus(cfg.gpus, count, devices, JOBS_MAX_GPUS, &ndev, aerr)) {
		fprintf(stderr, "fftbloomd: %s\n", aerr);
		return 2;
	}
	if (ndev * cfg.gpu_threads > JOBS_MAX_GPUS) {
		fprintf(stderr, "fftbloomd: %d devices x %d gpu-threads is more than %d GPU threads\n",
		        ndev, cfg.gpu_threads, JOBS_MAX_GPUS);
		return 2;
	}
	for (int i = ndev - 1; i >= 0; i--) /* device order kept: 0,0,1,1 */
		for (int t = 0; t < cfg.gpu_threads; t++)
			devices[i * cfg.gpu_threads + t] = devices[i];
	ndev *= cfg.gpu_threads;
	int warm[JOBS_MAX_WARM][2], nwarm;
	if (api_parse_sizes(cfg.warm_sizes, cfg.max_side, warm, JOBS_MAX_WARM, &nwarm, aerr)) {
		fprintf(stderr, "fftbloomd: %s\n", aerr);
		return 2;
	}
	if (!cfg.tls_cert[0] != !cfg.tls_key[0]) {
		fprintf(stderr, "fftbloomd: --tls-cert and --tls-key go together\n");
		return 2;
	}

	int rc = 1;
	char *api_key = NULL, *cert = NULL, *key = NULL;
	size_t api_key_len = 0;
	struct kernels *kernels = NULL;
	struct metrics *metrics = NULL;
	struct jobs *jobs = NULL;
	struct server *server = NULL;
	if (cfg.api_key_file[0]) {
		api_key = read_text(cfg.api_key_file, &api_key_len);
		while (api_key && api_key_len && strchr(" \t\r\n", api_key[api_key_len - 1]))
			api_key[--api_key_len] = 0;
		if (!api_key || !api_key_len) {
			log_msg(LOG_ERROR, "api-key-file: cannot read a key from '%s'", cfg.api_key_file);
			goto out;
		}
	}
	if (cfg.tls_cert[0]) {
		cert = read_text(cfg.tls_cert, NULL);
		key = read_text(cfg.tls_key, NULL);
		if (!cert || !key) {
			log_msg(LOG_ERROR, "cannot read %s", cert ? cfg.tls_key : cfg.tls_cert);
			goto out;
		}
	}
	if (kernels_create(cfg.max_kernels, cfg.kernel_memory, &kernels) ||
	    metrics_create(&metrics)) {
		log_msg(LOG_ERROR, "out of memory");
		goto out;
	}
	if (cfg.kernel_dir[0]) {
		struct image_limits lim = {(unsigned)cfg.max_side, (unsigned)cfg.max_side,
		                           cfg.kernel_max_pixels < cfg.max_pixels
		                           ? cfg.kernel_max_pixels : cfg.max_pixels, NULL, NULL};
		char kerr[KERNELS_ERR_LEN];
		int loaded, removed;
		if (kernels_load_dir(kernels, cfg.kernel_dir, &lim, &loaded, &removed, kerr)) {
			log_msg(LOG_ERROR, "%s", kerr);
			goto out;
		}
		log_msg(LOG_INFO, "kernel-dir: %d kernels registered from %s", loaded, cfg.kernel_dir);
	}
	char jerr[JOBS_ERR_LEN];
	if (jobs_create(&cfg, devices, ndev, (const int(*)[2])warm, nwarm, kernels, metrics, &jobs,
	                jerr)) {
		log_msg(LOG_ERROR, "%s", jerr);
		goto out;
	}
	struct server_opts so = {&cfg, jobs, kernels, metrics, api_key, api_key_len, cert, key};
	char serr[SERVER_ERR_LEN];
	if (server_create(&so, &server, serr)) {
		log_msg(LOG_ERROR, "%s", serr);
		goto out;
	}
	int v6 = strchr(cfg.listen, ':') != NULL;
	log_msg(LOG_INFO, "fftbloomd listening on %s://%s%s%s:%d (%d GPU thread%s, %d codec threads, "
	        "queue %d)", cert ? "https" : "http", v6 ? "[" : "", cfg.listen, v6 ? "]" : "",
	        server_port(server), ndev, ndev == 1 ? "" : "s", cfg.codec_threads, cfg.queue_size);

	int sig;
	for (;;) {
		struct timespec tick = {1, 0};
		sig = sigtimedwait(&set, NULL, &tick);
		if (sig == SIGHUP)
			reload_kernels(&cfg, kernels);
		else if (sig == SIGUSR1)
			log_state(jobs, kernels, server);
		else if (sig > 0)
			break;
	}
	log_msg(LOG_INFO, "signal %d: no new connections; finishing accepted requests (up to %g s)",
	        sig, cfg.drain_timeout);
	server_quiesce(server);
	double t0 = now_s(), end = t0 + cfg.drain_timeout;
	/* Done when no request is open and none began or ended for a moment (a request whose
	 * headers are still on their way counts once they arrive). */
	while (now_s() < end && (server_active(server) > 0 || server_idle_s(server) < 0.2))
		sleep_s(0.01);
	int left = server_active(server);
	if (left)
		log_msg(LOG_WARN, "drain timeout: %d requests still open; queued jobs get 503", left);
	jobs_shutdown(jobs); /* answers what is still queued, waits for running jobs */
	for (double e2 = now_s() + 2; server_active(server) > 0 && now_s() < e2;)
		sleep_s(0.01);
	log_msg(LOG_INFO, "stopped after %.3f s of draining", now_s() - t0);
	rc = 0;
out:
	server_destroy(server);
	jobs_destroy(jobs);
	kernels_destroy(kernels);
	metrics_destroy(metrics);
	free(api_key);
	free(cert);
	free(key);
	return rc;
}
