/* fftbloomd: the render daemon. Reads the configuration table, starts the GPU thread (one per
 * --gpu-threads), the codec pool and the HTTP server, and serves until SIGTERM, SIGINT or
 * SIGQUIT; with several GPUs it forks one worker process a GPU, each serving so, under a
 * supervisor (supervisor.h, service.h) that is the service to the outside. On a stop the
 * daemon (each worker) stops accepting, finishes the accepted requests (up to --drain-timeout)
 * and exits 0. SIGHUP reloads
 * --kernel-dir and --image-dir; SIGUSR1 logs the daemon's state; SIGUSR2 and SIGPIPE are ignored. Under systemd
 * it reports readiness, status and a GPU-fed watchdog, and serves a socket it is handed
 * (lifecycle.h, sdnotify.h). Its other modes (modes.h: --help=json, --check-config, --health-check,
 * --print-openapi, --print-errors, --print-operations, --print-formats) serve installation,
 * deployment files, the docs and their tests. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <malloc.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/apiutil.h"
#include "core/cachedir.h"
#include "core/config.h"
#include "daemon/images.h"
#include "daemon/jobs.h"
#include "daemon/kernels.h"
#include "daemon/lifecycle.h"
#include "core/log.h"
#include "daemon/metrics.h"
#include "daemon/modes.h"
#include "daemon/sdnotify.h"
#include "daemon/server.h"
#include "daemon/service.h"
#include "daemon/successor.h"
#include "daemon/supervisor.h"
#include "core/urlsign.h"
#include "api/errors.h"
#include "gles/egl.h"
#include "gles/engine.h"
#include "core/clock.h"
#include "core/parallel.h"

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

/* The limits an --image-dir file is checked against (decoded once, as a PUT's image is). */
static struct image_limits image_dir_limits(const struct config *cfg)
{
	struct image_limits lim = {(unsigned)cfg->max_side, (unsigned)cfg->max_side,
	                           cfg->max_pixels, NULL, NULL, 0};
	return lim;
}

/* SIGHUP: --image-dir again; on a failure the store stays as it was. */
static void reload_images(const struct config *cfg, struct images *images)
{
	if (!cfg->image_dir[0]) {
		log_msg(LOG_INFO, "SIGHUP: no --image-dir to reload");
		return;
	}
	struct image_limits lim = image_dir_limits(cfg);
	char ierr[IMAGES_ERR_LEN];
	int loaded, removed;
	if (images_load_dir(images, cfg->image_dir, &lim, &loaded, &removed, ierr))
		log_msg(LOG_ERROR, "SIGHUP: stored images kept as they were: %s", ierr);
	else
		log_msg(LOG_INFO, "SIGHUP: image-dir %s reloaded: %d images stored, %d removed",
		        cfg->image_dir, loaded, removed);
}

/* The limits a kernel from --kernel-dir or the shared store is decoded within. */
static struct image_limits kernel_limits(const struct config *cfg)
{
	struct image_limits lim = {(unsigned)cfg->max_side, (unsigned)cfg->max_side,
	                           cfg->kernel_max_pixels < cfg->max_pixels
	                           ? cfg->kernel_max_pixels : cfg->max_pixels, NULL, NULL, 0};
	return lim;
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
	                           ? cfg->kernel_max_pixels : cfg->max_pixels, NULL, NULL, 0};
	char kerr[KERNELS_ERR_LEN];
	int loaded, removed;
	if (kernels_load_dir(kernels, cfg->kernel_dir, &lim, &loaded, &removed, kerr))
		log_msg(LOG_ERROR, "SIGHUP: kernels kept as they were: %s", kerr);
	else
		log_msg(LOG_INFO, "SIGHUP: kernel-dir %s reloaded: %d kernels registered, %d removed",
		        cfg->kernel_dir, loaded, removed);
}

/* SIGUSR1: one line of the daemon's state. */
static void log_state(struct jobs *jobs, struct kernels *kernels, struct images *images,
                      struct server *server)
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
	size_t ni;
	unsigned long long ib, mb;
	int mi;
	images_totals(images, &ni, &ib, &mi, &mb);
	log_msg(LOG_INFO, "state: %zu stored images (%llu KiB of %llu KiB --image-memory)", ni,
	        ib >> 10, mb >> 10);
	for (int i = 0; i < st.ngpus; i++)
		log_msg(LOG_INFO, "state: gpu %d: %s%s, %llu jobs, %llu failures, %.1f s busy, "
		        "heartbeat %.1f s ago, %u programs", i, st.gpu[i].alive ? "alive" : "down",
		        st.gpu[i].busy ? " and busy" : "", st.gpu[i].jobs, st.gpu[i].failures,
		        st.gpu[i].busy_s, st.gpu[i].heartbeat_age, st.gpu[i].programs.count);
}

/* "http://127.0.0.1:8080" for the socket fd is bound to. Returns the port, or -1. */
static int socket_endpoint(int fd, int tls, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char a[INET6_ADDRSTRLEN] = "?";
	int port = -1;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl))
		return -1;
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof a);
		port = ntohs(s4->sin_port);
	} else if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof a);
		port = ntohs(s6->sin6_port);
	} else {
		return -1;
	}
	int v6 = ss.ss_family == AF_INET6;
	snprintf(buf, len, "%s://%s%s%s:%d", tls ? "https" : "http", v6 ? "[" : "", a, v6 ? "]" : "",
	         port);
	return port;
}

/* Where the daemon answers, for its log and STATUS= lines: --listen and port, or the socket
 * passed in LISTEN_FDS (listen_fd > 0). */
static void endpoint_of(const struct config *cfg, int listen_fd, int port, char *buf, size_t len)
{
	int v6 = strchr(cfg->listen, ':') != NULL, tls = cfg->tls_cert[0] != 0;
	if (!listen_fd)
		snprintf(buf, len, "%s://%s%.64s%s:%d", tls ? "https" : "http", v6 ? "[" : "",
		         cfg->listen, v6 ? "]" : "", port);
	else if (socket_endpoint(listen_fd, tls, buf, len) < 0)
		snprintf(buf, len, "the socket passed in LISTEN_FDS");
}

/* What serve() needs: the configuration, the service manager's variables, the listening
 * sockets, the devices, and with several GPUs the shared region. */
struct serve_ctx {
	struct config *cfg;
	struct sdnotify *notify;
	const sigset_t *signals;
	int listen_fd;
	struct server_bound *bound; /* one, or one a worker (none with listen_fd) */
	const int *devices;
	int ndev;
	const int (*warm)[2];
	int nwarm;
	struct service *service; /* NULL: one GPU, one process */
};

/* A worker's share of --codec-threads (the service's total): at least one. */
static int worker_codec_threads(const struct config *cfg, int nworkers)
{
	int t = cfg->codec_threads / nworkers;
	return t < 1 ? 1 : t;
}

/* The named store's hook: a stored PUT goes to the shared folder for the other workers. */
static int store_shared(void *ctx, int kind, const char *name, const void *bytes, size_t len)
{
	return service_store_put(ctx, kind, name, bytes, len);
}

/* Serves until a stop signal: the single-GPU daemon (worker -1: this process is the service),
 * or worker `worker` of several (its one device, its share of the codec threads, its slot of
 * the shared region; it never speaks to the service manager). Returns the exit status. */
static int serve(struct serve_ctx *sc, int worker)
{
	struct config cfg = *sc->cfg;
	struct sdnotify *notify = worker < 0 ? sc->notify : NULL; /* what is sent */
	struct service *svc = sc->service;
	int listen_fd = sc->listen_fd;
	/* with --compile-mode process workers d and d + ndev alternate on device d */
	struct server_bound bound = sc->bound[worker < 0 ? 0 : worker % sc->ndev]; /* none with
	                                                                            LISTEN_FDS */
	int devices[JOBS_MAX_GPUS], ndev = worker < 0 ? sc->ndev : 1;
	int alternates = svc && service_alternates(svc);
	if (worker < 0) {
		memcpy(devices, sc->devices, sizeof devices[0] * (size_t)ndev);
	} else {
		devices[0] = sc->devices[worker % sc->ndev];
		cfg.codec_threads = worker_codec_threads(sc->cfg, sc->ndev);
	}
	for (int i = ndev - 1; i >= 0; i--) /* device order kept: 0,0,1,1 */
		for (int t = 0; t < cfg.gpu_threads; t++)
			devices[i * cfg.gpu_threads + t] = devices[i];
	ndev *= cfg.gpu_threads;
	sigset_t set = *sc->signals;
	int rc = 1;
	char *api_key = NULL, *cert = NULL, *key = NULL;
	size_t api_key_len = 0;
	struct kernels *kernels = NULL;
	struct images *images = NULL;
	unsigned char *sign_key = NULL;
	size_t sign_key_len = 0;
	struct metrics *metrics = NULL;
	struct jobs *jobs = NULL;
	struct server *server = NULL;
	struct origin *origin = NULL;
	struct result_cache *results = NULL;
	struct lifecycle *life = NULL;
	char serr[SERVER_ERR_LEN];
	/* The API key: --api-key-file, else the credential "api-key" a service manager passed
	 * (systemd LoadCredential=api-key:FILE). */
	char key_path[OPT_STR_MAX + 16];
	snprintf(key_path, sizeof key_path, "%s", cfg.api_key_file);
	const char *creds = sdnotify_credentials_dir(sc->notify);
	if (!key_path[0] && creds) {
		snprintf(key_path, sizeof key_path, "%.500s/api-key", creds);
		if (access(key_path, F_OK))
			key_path[0] = 0;
		else
			log_msg(LOG_INFO, "api key: the service manager's credential %s", key_path);
	}
	if (key_path[0]) {
		api_key = read_text(key_path, &api_key_len);
		while (api_key && api_key_len && strchr(" \t\r\n", api_key[api_key_len - 1]))
			api_key[--api_key_len] = 0;
		if (!api_key || !api_key_len) {
			log_msg(LOG_ERROR, "api-key-file: cannot read a key from '%s'", key_path);
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
	if (cfg.url_signing_key_file[0]) {
		char uerr[URLSIGN_ERR_LEN];
		if (urlsign_read_key(cfg.url_signing_key_file, &sign_key, &sign_key_len, uerr)) {
			log_msg(LOG_ERROR, "url-signing-key-file: %s", uerr);
			goto out;
		}
		if (!api_key)
			log_msg(LOG_WARN, "url-signing-key-file without --api-key-file: GET render URLs "
			        "need a signature, but the rest of /v1/ (POST, PUT) is open to anyone");
	}
	if (cfg.url_require_expiry && !sign_key)
		log_msg(LOG_WARN, "url-require-expiry without --url-signing-key-file: no URL is "
		        "signed, so none needs an expiry");
	if (svc)
		metrics = service_metrics(svc, worker);
	if (kernels_create(cfg.max_kernels, cfg.kernel_memory, &kernels) ||
	    images_create(cfg.max_images, cfg.image_memory, &images) ||
	    (!metrics && metrics_create(&metrics))) {
		log_msg(LOG_ERROR, "out of memory");
		goto out;
	}
	if (cfg.kernel_dir[0]) {
		struct image_limits lim = {(unsigned)cfg.max_side, (unsigned)cfg.max_side,
		                           cfg.kernel_max_pixels < cfg.max_pixels
		                           ? cfg.kernel_max_pixels : cfg.max_pixels, NULL, NULL, 0};
		char kerr[KERNELS_ERR_LEN];
		int loaded, removed;
		if (kernels_load_dir(kernels, cfg.kernel_dir, &lim, &loaded, &removed, kerr)) {
			log_msg(LOG_ERROR, "%s", kerr);
			goto out;
		}
		log_msg(LOG_INFO, "kernel-dir: %d kernels registered from %s", loaded, cfg.kernel_dir);
	}
	if (cfg.image_dir[0]) {
		struct image_limits lim = image_dir_limits(&cfg);
		char ierr[IMAGES_ERR_LEN];
		int loaded, removed;
		if (images_load_dir(images, cfg.image_dir, &lim, &loaded, &removed, ierr)) {
			log_msg(LOG_ERROR, "%s", ierr);
			goto out;
		}
		log_msg(LOG_INFO, "image-dir: %d images stored from %s", loaded, cfg.image_dir);
	}
	if (svc) { /* what the other workers stored before this one started */
		struct image_limits klim = kernel_limits(&cfg), ilim = image_dir_limits(&cfg);
		service_store_sync(svc, kernels, images, &klim, &ilim);
	}
	sdnotify_sendf(notify, "STATUS=making %d GPU context%s", ndev, ndev == 1 ? "" : "s");
	char jerr[JOBS_ERR_LEN];
	if (jobs_create(&cfg, devices, ndev, sc->warm, sc->nwarm, kernels, metrics, &jobs,
	                jerr)) {
		log_msg(LOG_ERROR, "%s", jerr);
		goto out;
	}
	if (svc)
		jobs_set_stored(jobs, store_shared, svc);
	if (alternates) {
		int hup = 0, b = successor_prepare(svc, jobs, &set, &hup);
		if (b) {
			rc = b < 0;
			jobs_shutdown(jobs);
			goto out;
		}
		if (hup) { /* --kernel-dir and --image-dir as they are now */
			reload_kernels(&cfg, kernels);
			reload_images(&cfg, images);
		}
	}
	struct origin_opts oo = {.allow = cfg.origin_allow,
	                         .connect_timeout = cfg.origin_connect_timeout,
	                         .timeout = cfg.origin_timeout, .max_bytes = cfg.origin_max_bytes,
	                         .concurrency = cfg.origin_concurrency, .queue = cfg.origin_queue,
	                         .ca_file = cfg.origin_ca};
	char oerr[ORIGIN_ERR_LEN];
	if (origin_create(&oo, &origin, oerr)) {
		log_msg(LOG_ERROR, "%s", oerr);
		goto out;
	}
	if (cfg.result_cache[0]) {
		char rerr[RESULT_CACHE_ERR_LEN];
		if (result_cache_open(cfg.result_cache, cfg.result_cache_bytes, &results, rerr)) {
			log_msg(LOG_ERROR, "%s", rerr);
			goto out;
		}
	}
	struct server_opts so = {.cfg = &cfg, .jobs = jobs, .kernels = kernels, .images = images,
	                         .metrics = metrics, .api_key = api_key, .api_key_len = api_key_len,
	                         .sign_key = sign_key, .sign_key_len = sign_key_len,
	                         .tls_cert = cert, .tls_key = key, .listen_fd = listen_fd,
	                         .bound = &bound, .service = svc, .origin = origin,
	                         .results = results, .shared_listen = alternates};
	if (server_create(&so, &server, serr)) {
		log_msg(LOG_ERROR, "%s", listen_fd ? "cannot serve the socket passed in LISTEN_FDS "
		        "(a listening TCP socket?)" : serr);
		goto out;
	}
	char endpoint[128];
	endpoint_of(&cfg, listen_fd, server_port(server), endpoint, sizeof endpoint);
	log_msg(LOG_INFO, "fftbloomd listening on %s%s (%d GPU thread%s, %d codec threads, queue %d)",
	        endpoint, listen_fd ? " (socket from the service manager; --listen and --port not "
	        "used)" : server_listeners(server) > 1 ? " (127.0.0.1 and ::1)" : "", ndev, ndev == 1 ? "" : "s", cfg.codec_threads, cfg.queue_size);
	if (lifecycle_create(notify, jobs, cfg.heartbeat_timeout, endpoint, &life)) {
		log_msg(LOG_ERROR, "out of memory");
		goto out;
	}

	int sig;
	for (;;) {
		double wait = lifecycle_tick(life);
		if (svc) { /* the worker's beat */
			struct service_conns sconns;
			server_conns(server, &sconns);
			service_publish(svc, jobs, &sconns, 0, 1);
			if (wait > 0.1)
				wait = 0.1;
		}
		struct timespec tick = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
		sig = sigtimedwait(&set, NULL, &tick);
		if (sig == SIGHUP) {
			reload_kernels(&cfg, kernels);
			reload_images(&cfg, images);
		} else if (sig == SIGUSR1) {
			log_state(jobs, kernels, images, server);
		}
		else if (sig > 0)
			break;
	}
	lifecycle_stop_guard(cfg.drain_timeout); /* ends the process if a GL call never returns */
	lifecycle_stopping(life, server_active(server), cfg.drain_timeout);
	server_quiesce(server); /* the listening sockets closed: said only once it is true */
	log_msg(LOG_INFO, "signal %d: no new connections; finishing accepted requests (up to %g s)",
	        sig, cfg.drain_timeout);
	double t0 = clock_s(), end = t0 + cfg.drain_timeout;
	/* Done when no request is open and none began or ended for a moment (a request whose
	 * headers are still on their way counts once they arrive); a worker retiring for its
	 * successor also waits for its clients' open connections, each closed after its next answer
	 * (or by the client, or idle past --idle-timeout), so that no request meets a reset or a
	 * 503 in the takeover. */
	int retiring = svc && service_retiring(svc);
	for (;;) {
		struct service_conns sconns;
		server_conns(server, &sconns);
		if (!(clock_s() < end && (server_active(server) > 0 || server_idle_s(server) < 0.2 ||
		                          (retiring && sconns.open_conns > 0))))
			break;
		lifecycle_tick(life); /* the watchdog stays fed while the GPU threads are */
		if (svc)
			service_publish(svc, jobs, &sconns, 1, 1);
		sleep_s(0.01);
	}
	int left = server_active(server);
	if (left)
		log_msg(LOG_WARN, "drain timeout: %d requests still open; queued jobs get 503", left);
	jobs_shutdown(jobs); /* answers what is still queued, waits for running jobs */
	for (double e2 = clock_s() + 2; server_active(server) > 0 && clock_s() < e2;)
		sleep_s(0.01);
	log_msg(LOG_INFO, "stopped after %.3f s of draining", clock_s() - t0);
	rc = 0;
out:
	lifecycle_destroy(life);
	server_destroy(server);
	origin_destroy(origin);
	result_cache_close(results);
	if (worker >= 0)
		server_bound_close(&bound); /* the worker's copies; the supervisor keeps its own */
	else
		sc->bound[0] = bound; /* main closes those server_create did not take */
	jobs_destroy(jobs);
	kernels_destroy(kernels);
	images_destroy(images);
	free(sign_key);
	metrics_destroy(metrics);
	free(api_key);
	free(cert);
	free(key);
	return rc;
}

/* supervisor_opts.worker_main: worker i serves its GPU. */
static int worker_main(void *ctx, int worker)
{
	struct serve_ctx *sc = ctx;
	/* the other workers' sockets are theirs: one left open here would keep its port share
	 * listening after a stop */
	for (int w = 0; w < sc->ndev; w++)
		if (w != worker % sc->ndev)
			for (int i = 0; i < sc->bound[w].n; i++)
				close(sc->bound[w].fd[i]);
	return serve(ctx, worker);
}


int main(int argc, char **argv)
{
	/* Frames are tens of MB: glibc would mmap each and unmap it when freed, so every request
	 * would fault its buffers in page by page. Keep freed blocks in the heap for the next one. */
	mallopt(M_MMAP_THRESHOLD, 512 << 20);
	mallopt(M_TRIM_THRESHOLD, 1024 << 20);
	/* libmicrohttpd serves each connection on a thread of its own, and glibc gives threads
	 * arenas of their own (up to 8 a core), each keeping the frames freed in it: under the
	 * soak's mixed load RSS kept growing (631 to 790 MB in 300 s on 2 cores); with two arenas it
	 * stayed at 240-290 MB. MALLOC_ARENA_MAX in the environment still decides. */
	if (!getenv("MALLOC_ARENA_MAX"))
		mallopt(M_ARENA_MAX, 2);
	int mode = daemon_run_mode(argc, argv);
	if (mode >= 0)
		return mode;
	struct config cfg;
	int lrc = daemon_load_config(&cfg, argc, argv, 1);
	if (lrc)
		return lrc;
	log_setup(cfg.log_level, cfg.log_format == 1);
	cachedir_driver_setup(&cfg.gpu); /* before any thread and any EGL call */

	/* The service manager's variables, read before any thread starts. */
	struct sdnotify *notify = NULL;
	char nerr[SDNOTIFY_ERR_LEN];
	if (sdnotify_create(&notify, nerr)) {
		fprintf(stderr, "fftbloomd: %s\n", nerr);
		return 2;
	}
	if (sdnotify_listen_count(notify) > 1) {
		fprintf(stderr, "fftbloomd: %d sockets passed in LISTEN_FDS; fftbloomd serves one (one "
		        "ListenStream= in the socket unit)\n", sdnotify_listen_count(notify));
		sdnotify_destroy(notify);
		return 2;
	}
	int listen_fd = sdnotify_listen_count(notify) == 1 ? SDNOTIFY_LISTEN_FDS_START : 0;

	/* Signals go to this thread alone, through sigtimedwait; every thread started later
	 * (and every worker process forked) inherits the mask. */
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
	int warm[JOBS_MAX_WARM][2], nwarm;
	char cerr[API_ERR_LEN + 64];
	if (!cfg.codec_threads) { /* one per core */
		long cores = par_cores();
		cfg.codec_threads = cores < 1 ? 1 : cores > 256 ? 256 : (int)cores;
	}
	int count = daemon_gpus_all(&cfg);
	if (daemon_check_config(&cfg, count, devices, &ndev, warm, &nwarm, cerr, sizeof cerr)) {
		fprintf(stderr, "fftbloomd: %s\n", cerr);
		sdnotify_destroy(notify);
		return 2;
	}
	daemon_engine_resolve(&cfg, devices, &ndev);
	int rc = 1, nbound = 0;
	struct service *svc = NULL;
	/* The port first: one in use is said at once, not after the GPU contexts are made. With
	 * several GPUs each worker gets sockets of its own on the port (SO_REUSEPORT): the kernel
	 * spreads connections evenly over them, where workers racing to accept on one socket
	 * leave the spread to chance (one may take them all). The supervisor holds every socket,
	 * so a restarting worker's connections wait in its backlog. A socket passed in LISTEN_FDS
	 * is one, shared by the workers. */
	struct server_bound bound[SERVICE_MAX_WORKERS];
	for (int i = 0; i < SERVICE_MAX_WORKERS; i++)
		bound[i] = (struct server_bound){{-1, -1}, 0, 0};
	char serr[SERVER_ERR_LEN];
	if (!listen_fd) {
		struct config bc = cfg;
		if (ndev > 1 && !cfg.reuse_port && cfg.port) {
			/* the workers share the port among themselves, but a port another process
			 * holds is refused as a single daemon refuses it (without --reuse-port, a
			 * second service would join the first one's port and split its traffic) */
			struct server_bound probe = {{-1, -1}, 0, 0};
			if (server_bind(&cfg, &probe, serr)) {
				log_msg(LOG_ERROR, "%s", serr);
				goto out;
			}
			server_bound_close(&probe);
		}
		bc.reuse_port = cfg.reuse_port || ndev > 1;
		for (; nbound < ndev; nbound++) {
			if (server_bind(&bc, &bound[nbound], serr)) {
				log_msg(LOG_ERROR, "%s", serr);
				goto out;
			}
			bc.port = bound[0].port; /* --port 0 picked one: the others take it too */
			if (ndev == 1)
				break;
		}
	}
	struct serve_ctx sc = {&cfg, notify, &set, listen_fd, bound, devices, ndev,
	                       (const int(*)[2])warm, nwarm, NULL};
	int process = cfg.compile_mode == ENGINE_CMODE_PROCESS && cfg.gpu.engine != ENGINE_CHOICE_CPU;
	if (ndev == 1 && !process) {
		rc = serve(&sc, -1);
		goto out;
	}
	/* Several GPUs, or idle work in successor processes: a worker process a GPU (two slots a
	 * GPU with process), forked before any thread or EGL call. */
	char verr[SERVICE_ERR_LEN];
	int slots = process ? 2 * ndev : ndev, sdev[SERVICE_MAX_WORKERS];
	if (slots > SERVICE_MAX_WORKERS) {
		log_msg(LOG_ERROR, "--compile-mode process: %d GPUs take %d worker slots, more than %d",
		        ndev, slots, SERVICE_MAX_WORKERS);
		goto out;
	}
	for (int i = 0; i < slots; i++)
		sdev[i] = devices[i % ndev];
	if (service_create(slots, sdev, getenv("RUNTIME_DIRECTORY"), &svc, verr)) {
		log_msg(LOG_ERROR, "%s", verr);
		goto out;
	}
	if (process)
		service_set_alternates(svc);
	sc.service = svc;
	log_msg(LOG_INFO, "%d GPU%s: one worker process each (devices %s), %d codec threads each%s",
	        ndev, ndev == 1 ? "" : "s", cfg.gpus, worker_codec_threads(&cfg, ndev),
	        process ? "; idle work in a successor process that takes over once it is done "
	                  "(--compile-mode process)" : "");
	int lfds[2 * SERVICE_MAX_WORKERS + 1], nl = 0;
	if (listen_fd)
		lfds[nl++] = listen_fd;
	for (int w = 0; w < nbound; w++)
		for (int i = 0; i < bound[w].n; i++)
			lfds[nl++] = bound[w].fd[i];
	char endpoint[128];
	endpoint_of(&cfg, listen_fd, bound[0].port, endpoint, sizeof endpoint);
	struct supervisor_opts so = {&cfg, svc, notify, &set, worker_main, &sc, lfds, nl, endpoint};
	rc = supervisor_run(&so);
	for (int w = 0; w < nbound; w++)
		bound[w].n = 0; /* lfds holds them: those the supervisor did not close yet */
	for (int i = 0; i < nl; i++)
		if (lfds[i] >= 0)
			close(lfds[i]);
out:
	service_destroy(svc);
	for (int w = 0; w < nbound || w < 1; w++)
		server_bound_close(&bound[w]);
	sdnotify_destroy(notify);
	return rc;
}
