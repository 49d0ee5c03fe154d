/* The worker of a daemon on the CPU engine (--engine cpu, or auto without a GPU): one thread
 * that takes the jobs a GPU thread would (frames decoded to float by the codec threads, tensor
 * jobs) and runs them on cpu/engine.h and cpu/conv.h, which spread over the cores the codec threads leave
 * (core/parallel.h's par_each: one pool, no oversubscription). No GL context, no planes in or
 * out, no idle work; the counts and caches are reported as a GPU thread's. See jobs_impl.h. */
#include "daemon/jobs_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/engine_errors.h"
#include "core/cachedir.h"
#include "core/clock.h"
#include "core/log.h"
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
		int sized, threads = cpu_engine_threads(e);
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

/* The engine's caches as /v1/info's and /metrics' GPU caches. Caller holds the lock. */
static void cpu_cache_stats(struct gpu *g, const struct cpu_engine *e)
{
	struct cpu_cache_stats cs;
	cpu_engine_stats(e, &cs);
	memset(&g->bs, 0, sizeof g->bs);
	g->bs.kernel_hits = cs.kernel_hits, g->bs.kernel_misses = cs.kernel_misses;
	g->bs.kernel_evictions = cs.kernel_evictions, g->bs.kernel_bytes = cs.kernel_bytes;
	g->bs.kernel_entries = cs.kernel_entries;
	g->bs.plan_hits = cs.plan_hits, g->bs.plan_misses = cs.plan_misses;
	g->bs.plan_entries = cs.plan_entries;
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
	struct cpu_engine_opts o = {.wisdom_file = wisdom,
	                            .measure = tune ? CPU_MEASURE_IDLE : CPU_MEASURE_NEVER,
	                            .kernel_cache_bytes = (size_t)J->cfg.kernel_cache,
	                            .max_plans = J->cfg.max_plans};
	struct cpu_engine *e = NULL;
	static __thread char err[CPU_ERR_LEN];
	int rc = cpu_engine_create(&o, &log_process_sink, &e, err);
	pthread_mutex_lock(&J->lock);
	if (rc) {
		snprintf(g->init_err, sizeof g->init_err, "CPU engine: %.2000s", err);
		g->failed = 1;
	} else {
		g->alive = 1;
		g->warmed = 1;
		g->heartbeat = clock_s();
		snprintf(g->platform, sizeof g->platform, "cpu");
		snprintf(g->renderer, sizeof g->renderer, "%s", cpu_engine_describe(e));
		snprintf(g->version, sizeof g->version, "%s", "");
		snprintf(g->wisdom, sizeof g->wisdom, "%s", wisdom[0] ? wisdom : "FFTW's planner");
		g->untiled_pixels = 1ull << 40;
		g->max_kernel_side = 16384;
	}
	pthread_cond_broadcast(&J->init_cv);
	pthread_mutex_unlock(&J->lock);
	if (rc)
		return NULL;
	log_msg(LOG_INFO, "cpu: %s, FFTW wisdom %s", g->renderer, g->wisdom);
	pthread_mutex_lock(&J->lock);
	double last_job = clock_s();
	int idle_work = 1;
	for (;;) {
		struct job *j = fifo_pop(&J->gpuq);
		if (!j) {
			if (J->stop && J->waiting == 0)
				break;
			double quiet = clock_s() - last_job;
			if (idle_work && !J->stop && quiet >= CPU_IDLE_S) {
				pthread_mutex_unlock(&J->lock);
				idle_work = cpu_engine_idle(e); /* one plan measured (bounded in time) */
				pthread_mutex_lock(&J->lock);
				g->heartbeat = clock_s();
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
		unqueue(J, j);
		g->busy = 1;
		double t0 = clock_s();
		j->queue_s = t0 - j->t_queued;
		pthread_mutex_unlock(&J->lock);
		memset(&j->flight, 0, sizeof j->flight);
		if (j->kind == JOB_BLOOM || j->kind == JOB_CONVOLVE)
			cpu_frame(g, e, j);
		else
			cpu_tensor(g, e, j);
		j->gpu_s = clock_s() - t0;
		pthread_mutex_lock(&J->lock);
		last_job = clock_s();
		g->busy = 0;
		g->busy_s += j->gpu_s;
		g->njobs++;
		g->nfail += j->status >= 400;
		g->heartbeat = clock_s();
		cpu_cache_stats(g, e);
		job_hand_on_locked(J, j);
	}
	g->alive = 0;
	pthread_mutex_unlock(&J->lock);
	cpu_engine_destroy(e);
	return NULL;
}
