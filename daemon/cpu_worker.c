/* The worker of a daemon on the CPU engine (--engine cpu, or auto without a GPU): lanes (threads
 * with an engine each) that take the jobs a GPU thread would (frames decoded to float by the
 * codec threads, tensor jobs), several small frames at once, and run them on cpu/engine.h and
 * cpu/conv.h, which spread over the cores the codec threads leave (core/parallel.h's par_each:
 * one pool, no oversubscription). No GL context, no planes in or
 * out, no idle work; the counts and caches are reported as a GPU thread's. See jobs_impl.h. */
#include "daemon/jobs_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/engine_errors.h"
#include "core/cachedir.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/parallel.h"
#include "cpu/conv.h"
#include "cpu/engine.h"
#include "cpu/resample.h"

#define CPU_IDLE_S 2.0 /* quiet seconds before a plan is measured (a measure holds the cores
                          up to cpu_engine_opts.measure_limit_s) */

/* A bloom or convolve frame: its result image, or the failure. */
static void cpu_frame(struct gpu *g, struct cpu_engine *e, struct job *j)
{
	const struct image *k = j->named ? &j->named->img : j->kimg.pixels ? &j->kimg : NULL;
	const uint64_t *digest = j->named ? j->named->digest : NULL;
	int op = j->kind == JOB_CONVOLVE ? BLOOM_OP_CONVOLVE : BLOOM_OP_BLOOM;
	static __thread char err[CPU_ERR_LEN];
	err[0] = 0;
	struct cpu_stats st;
	int rc;
	if (!j->in.pixels) { /* frames reach this worker decoded (engine_resolve: no planes) */
		snprintf(err, sizeof err, "the CPU engine takes decoded frames only");
		rc = CPU_E_ARG;
	} else {
		/* a sized answer: resized before (the input, its kernel scaled) or after (the result),
		 * as the GPU worker does (gpu_jobs.c) */
		struct resample_geom geo;
		int sized, threads = cpu_engine_frame_threads(e, j->in.width, j->in.height);
		rc = job_sized_geom(j, &geo, &sized);
		if (!rc && sized && j->req.resize == RESAMPLE_BEFORE) {
			struct image small;
			job_scale_kernel(j, &geo);
			if (!(rc = cpu_resample(&j->in, &geo, threads, &small, err))) {
				image_free(&j->in);
				j->in = small;
			}
		}
		if (rc) {
			job_resize_failed(g, j, rc, err);
			return;
		}
		rc = cpu_bloom_run(e, op, &j->in, k, digest, &j->req.p, &j->result, &st, err);
		if (!rc && sized && j->req.resize == RESAMPLE_AFTER) {
			struct image big;
			int rr = cpu_resample(&j->result, &geo, threads, &big, err);
			if (rr) {
				job_resize_failed(g, j, rr, err);
				return;
			}
			image_free(&j->result);
			j->result = big;
		}
	}
	if (!rc) {
		j->tiles_x = st.tiles_x, j->tiles_y = st.tiles_y;
		j->gpu_setup_s = st.setup_ms * 1e-3;
		j->gpu_wait_s = (st.wall_ms - st.setup_ms) * 1e-3;
	} else if (rc == CPU_E_ARG && strstr(err, "not finite")) {
		set_error(j, API_E_RESULT_NOT_FINITE, "%s; scale the image or kernel down", err);
	} else {
		set_error(j, engine_errors_bloom(rc), "%s", err[0] ? err : cpu_strerror(rc)); /* the same codes */
		if (j->status >= 500)
			log_msg(LOG_ERROR, "cpu: %s failed: %s", operation_job_label(j->kind), j->message);
	}
	j->method = CONVOLVE_FFT;
	image_free(&j->in);
	image_free(&j->kimg);
	j->gpu = g->id;
}

/* A tensor job: conv2d (im2col) or conv2d_transpose (col2im) over OpenBLAS (cpu/conv.h), its
 * output into j->ty (allocated by the codec thread at the described shape). */
static void cpu_tensor(struct gpu *g, struct cpu_engine *e, struct job *j)
{
	static __thread char err[CPU_CONV_ERR_LEN > DECONV_ERR_LEN ? CPU_CONV_ERR_LEN : DECONV_ERR_LEN];
	int oh, ow, top = 0, left = 0, rc, conv = j->kind == JOB_CONV2D;
	if (conv ? spatial_conv_output(&j->sc, &oh, &ow, err)
	         : deconv_output(&j->dc, &oh, &ow, &top, &left, err)) {
		rc = CPU_CONV_E_ARG;
	} else {
		int threads = cpu_engine_threads(e);
		rc = conv ? cpu_conv2d(&j->sc, oh, ow, j->tx.data, j->tw.data, j->tb.data, j->ty.data,
		                       threads, err)
		          : cpu_conv2d_transpose(&j->dc, oh, ow, top, left, j->tx.data, j->tw.data,
		                                 j->tb.data, j->ty.data, threads, err);
	}
	if (rc) {
		set_error(j, rc == CPU_CONV_E_NOMEM ? API_E_OUT_OF_MEMORY : rc == CPU_CONV_E_TOO_LARGE
		          ? API_E_TOO_LARGE_FOR_GPU : API_E_INVALID_REQUEST, "%s", err);
		tensor_free(&j->ty);
	}
	tensor_free(&j->tx);
	tensor_free(&j->tw);
	tensor_free(&j->tb);
	j->gpu = g->id;
}

/* Frames at once: a frame of w x h pixels runs on ceil(w h / CPU_LANE_PIXELS) threads (FFTW's
 * threads gain little on small transforms: one 1080p frame at a time kept 6.6 of 16 cores
 * busy), at least the cores over the lanes, and lanes take frames while their threads' sum fits
 * the process's cores, so on 16 cores (16 lanes) an idle daemon's 1080p frame runs on four
 * threads, 2160p on every core, and under load every frame on one (a frame's serial parts and
 * FFTW's pieces leave fewer of its threads idle: on 16 cores 16 lanes answered 8% more 1080p
 * requests a second than 8, bench/RESULTS.md). Each lane has an engine of its own (plans,
 * buffers, kernel spectra: memory grows with the lanes that ran, and the kernel cache bound is
 * shared out); every lane's helpers come from core/parallel.h's one pool, which never runs
 * more threads than cores. */
#define CPU_LANE_PIXELS (512LL * 1024)
#define CPU_LANES_MAX 64  /* --cpu-frames' bound */
#define CPU_LANES_AUTO 16 /* --cpu-frames 0: the cores, at most this many (measured to 16) */
#define CPU_TRIM_S 30.0  /* quiet seconds after which a lane other than the first frees its plans,
                            buffers and kernel spectra (a burst's lanes do not keep a size's
                            buffers each for good) */

struct cpu_lanes;

struct cpu_lane {
	struct cpu_lanes *L;
	int id;
	pthread_t th;
	int started;
	struct cpu_engine *e;
	struct cpu_cache_stats cs; /* its engine's, after its last job (guarded by J->lock) */
	int trimmed;               /* its caches freed since its last job (CPU_TRIM_S) */
};

struct cpu_lanes {
	struct gpu *g;
	int n, cores;
	int min_share;             /* a frame's threads at least: the cores over the lanes */
	int running, share;        /* frames running now and their threads (guarded by J->lock) */
	struct cpu_lane lane[CPU_LANES_MAX];
};

/* The threads a job takes from the lanes' cores: a frame's by its size, a tensor job all. With
 * other jobs waiting behind it, a frame takes a quarter of that, at least the cores over the
 * lanes: a frame's threads gain less the more there are (its serial parts leave them idle), so
 * under load more frames at once do more work a second; its FFTs still split as planned, their
 * pieces run by whichever of the pool's threads are free. */
static int lane_share(const struct cpu_lanes *L, const struct job *j, int others_waiting)
{
	if ((j->kind == JOB_BLOOM || j->kind == JOB_CONVOLVE) && j->in.pixels) {
		int t = cpu_frame_threads(CPU_LANE_PIXELS, L->min_share, L->cores, j->in.width,
		                          j->in.height);
		if (others_waiting && t / 4 < L->min_share)
			return t < L->min_share ? t : L->min_share;
		return others_waiting ? t / 4 : t;
	}
	return L->cores;
}

/* The lanes' caches summed as /v1/info's and /metrics' GPU caches. Caller holds the lock. */
static void cpu_cache_stats(struct gpu *g, const struct cpu_lanes *L)
{
	memset(&g->bs, 0, sizeof g->bs);
	for (int i = 0; i < L->n; i++) {
		const struct cpu_cache_stats *cs = &L->lane[i].cs;
		g->bs.kernel_hits += cs->kernel_hits, g->bs.kernel_misses += cs->kernel_misses;
		g->bs.kernel_evictions += cs->kernel_evictions, g->bs.kernel_bytes += cs->kernel_bytes;
		g->bs.kernel_entries += cs->kernel_entries;
		g->bs.plan_hits += cs->plan_hits, g->bs.plan_misses += cs->plan_misses;
		g->bs.plan_entries += cs->plan_entries;
	}
}

/* One lane: takes the queue's next job when its threads fit beside the running frames' (or
 * nothing runs), runs it on its own engine; measures its plans once the worker is quiet. */
static void *lane_main(void *arg)
{
	struct cpu_lane *ln = arg;
	struct cpu_lanes *L = ln->L;
	struct gpu *g = L->g;
	struct jobs *J = g->J;
	pthread_mutex_lock(&J->lock);
	double last_job = clock_s();
	int idle_work = 1;
	for (;;) {
		struct job *j = J->gpuq.head;
		int share = j ? lane_share(L, j, j->next != NULL) : 0;
		if (j && L->running && L->share + share > L->cores)
			j = NULL; /* waits for a running frame to finish (which wakes every lane) */
		else if (j)
			fifo_pop(&J->gpuq);
		if (!j) {
			if (J->stop && J->waiting == 0 && !J->gpuq.head)
				break;
			double quiet = clock_s() - last_job;
			if (idle_work && !J->stop && !L->running && quiet >= CPU_IDLE_S) {
				pthread_mutex_unlock(&J->lock);
				idle_work = cpu_engine_idle(ln->e); /* one plan measured (bounded in time) */
				pthread_mutex_lock(&J->lock);
				g->heartbeat = clock_s();
				continue;
			}
			if (!idle_work && !ln->trimmed && ln->id > 0 && quiet >= CPU_TRIM_S) {
				pthread_mutex_unlock(&J->lock);
				cpu_engine_trim(ln->e);
				struct cpu_cache_stats cs;
				cpu_engine_stats(ln->e, &cs);
				pthread_mutex_lock(&J->lock);
				ln->cs = cs;
				ln->trimmed = 1;
				cpu_cache_stats(g, L);
				continue;
			}
			long long wait_ns = idle_work && quiet < CPU_IDLE_S
			                    ? (long long)((CPU_IDLE_S - quiet) * 1e9) + 1000000LL
			                    : 250 * 1000000LL;
			clock_cond_wait_ns(&J->gpu_cv, &J->lock, wait_ns);
			g->heartbeat = clock_s();
			continue;
		}
		idle_work = 1;
		ln->trimmed = 0;
		unqueue(J, j);
		L->running++;
		L->share += share;
		g->busy = 1;
		g->in_flight = L->running;
		double t0 = clock_s();
		j->queue_s = t0 - j->t_queued;
		pthread_mutex_unlock(&J->lock);
		memset(&j->flight, 0, sizeof j->flight);
		if (j->kind == JOB_BLOOM || j->kind == JOB_CONVOLVE)
			cpu_frame(g, ln->e, j);
		else
			cpu_tensor(g, ln->e, j);
		j->gpu_s = clock_s() - t0;
		struct cpu_cache_stats cs;
		cpu_engine_stats(ln->e, &cs);
		pthread_mutex_lock(&J->lock);
		last_job = clock_s();
		L->running--;
		L->share -= share;
		g->busy = L->running > 0;
		g->in_flight = L->running;
		g->busy_s += j->gpu_s;
		g->njobs++;
		g->nfail += j->status >= 400;
		g->heartbeat = clock_s();
		ln->cs = cs;
		cpu_cache_stats(g, L);
		job_hand_on_locked(J, j);
		pthread_cond_broadcast(&J->gpu_cv); /* lanes that waited for these threads */
	}
	pthread_mutex_unlock(&J->lock);
	return NULL;
}

void *cpu_main(void *arg)
{
	struct gpu *g = arg;
	struct jobs *J = g->J;
	struct cachedir_paths paths;
	cachedir_resolve(&J->cfg.gpu, &paths);
	char wisdom[sizeof paths.wisdom + 8] = "";
	if (paths.wisdom[0])
		snprintf(wisdom, sizeof wisdom, "%s.fftw", paths.wisdom);
	/* frames run on estimated plans at once; each size's plan is measured once the worker has
	 * been idle for CPU_IDLE_S (--fft-idle-tune: auto and on; off, or the built-in rules alone
	 * (--fft-wisdom builtin): never), then kept in the wisdom file */
	int tune = J->cfg.fft_idle_tune != 2 && !paths.no_wisdom;
	static struct cpu_lanes lanes; /* one CPU worker a process (jobs.c starts one "GPU") */
	struct cpu_lanes *L = &lanes;
	memset(L, 0, sizeof *L);
	L->g = g;
	long cores = par_cores();
	L->cores = cores < 1 ? 1 : cores > PAR_EACH_MAX ? PAR_EACH_MAX : (int)cores;
	L->n = L->cores < CPU_LANES_AUTO ? L->cores : CPU_LANES_AUTO;
	if (J->cfg.cpu_frames > 0) /* --cpu-frames */
		L->n = J->cfg.cpu_frames < CPU_LANES_MAX ? J->cfg.cpu_frames : CPU_LANES_MAX;
	struct cpu_engine_opts o = {.wisdom_file = wisdom,
	                            .measure = tune ? CPU_MEASURE_IDLE : CPU_MEASURE_NEVER,
	                            .kernel_cache_bytes = (size_t)(J->cfg.kernel_cache / L->n),
	                            .max_plans = J->cfg.max_plans,
	                            .frame_bytes = (size_t)J->cfg.gpu.frame_memory,
	                            .pixels_per_thread = CPU_LANE_PIXELS};
	L->min_share = o.min_frame_threads = (L->cores + L->n - 1) / L->n;
	if (J->cfg.kernel_cache && !o.kernel_cache_bytes)
		o.kernel_cache_bytes = 1;
	static __thread char err[CPU_ERR_LEN];
	int rc = 0;
	for (int i = 0; i < L->n && !rc; i++) {
		L->lane[i].L = L;
		L->lane[i].id = i;
		rc = cpu_engine_create(&o, &log_process_sink, &L->lane[i].e, err);
	}
	pthread_mutex_lock(&J->lock);
	if (rc) {
		snprintf(g->init_err, sizeof g->init_err, "CPU engine: %.2000s", err);
		g->failed = 1;
	} else {
		g->alive = 1;
		g->warmed = 1;
		g->heartbeat = clock_s();
		snprintf(g->platform, sizeof g->platform, "cpu");
		snprintf(g->renderer, sizeof g->renderer, "%s, up to %d frame%s at once",
		         cpu_engine_describe(L->lane[0].e), L->n, L->n == 1 ? "" : "s");
		snprintf(g->version, sizeof g->version, "%s", "");
		snprintf(g->wisdom, sizeof g->wisdom, "%s", wisdom[0] ? wisdom : "FFTW's planner");
		g->untiled_pixels = 1ull << 40;
		g->max_kernel_side = 16384;
	}
	pthread_cond_broadcast(&J->init_cv);
	pthread_mutex_unlock(&J->lock);
	if (!rc) {
		log_msg(LOG_INFO, "cpu: %s, FFTW wisdom %s", g->renderer, g->wisdom);
		for (int i = 1; i < L->n; i++) {
			struct cpu_lane *ln = &L->lane[i];
			ln->started = !pthread_create(&ln->th, NULL, lane_main, ln);
			if (!ln->started)
				log_msg(LOG_WARN, "cpu: lane %d could not start; fewer frames at once", i);
			else
				pthread_setname_np(ln->th, "fb-cpu-lane");
		}
		lane_main(&L->lane[0]);
		for (int i = 1; i < L->n; i++)
			if (L->lane[i].started)
				pthread_join(L->lane[i].th, NULL);
		pthread_mutex_lock(&J->lock);
		g->alive = 0;
		pthread_mutex_unlock(&J->lock);
	}
	for (int i = 0; i < L->n; i++)
		cpu_engine_destroy(L->lane[i].e);
	return NULL;
}
