/* A GPU thread's loop: jobs taken from the queue (frames in flight, lent results), idle work
 * between them, and a rebuilt context after a reset; running a job by its kind is gpu_jobs.c,
 * the context, warm-up and caches gpu_context.c. See jobs_impl.h. */
#include "daemon/jobs_impl.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/kernel_preset.h"
#include "daemon/gpu_cancel.h"
#include "core/log.h"
#include "gles/engine.h"
#include "core/clock.h"

/* The context codec threads decode frames' planes into (--jpeg-upload-lease): b, from now. */
static void uploads_offer(struct gpu *g, struct bloom_ctx *b)
{
	struct jobs *J = g->J;
	if (!J->lease_uploads)
		return;
	pthread_mutex_lock(&J->lock);
	g->uploads = b;
	pthread_mutex_unlock(&J->lock);
}

/* Before the context that lends upload buffers goes (a reset's rebuild, the thread's end):
 * codec threads take no more of them, and the jobs queued with planes in one get them copied
 * into memory of their own and give it back, as its destroy waits for every lent buffer (a
 * decode still writing into one does the same once it sees the generation change: do_decode).
 * A job that cannot (out of memory) is answered 503. */
static void uploads_withdraw(struct gpu *g)
{
	struct jobs *J = g->J;
	struct fifo again = {0};
	pthread_mutex_lock(&J->lock);
	g->uploads = NULL;
	g->upload_gen++;
	/* queued frames whose planes are in the going context's buffers (mapped for writing only,
	 * and lost with a reset): the buffers go back unread, and the frames go back to the codec
	 * threads, ahead of the frames not decoded yet, to be decoded again */
	struct job **pp = &J->gpuq.head, *prev = NULL;
	int moved = 0;
	while (*pp) {
		struct job *j = *pp;
		if (!j->upload.slot) {
			prev = j;
			pp = &j->next;
			continue;
		}
		*pp = j->next;
		if (J->gpuq.tail == j)
			J->gpuq.tail = prev;
		yuv_image_free(&j->yin);
		image_free(&j->in);
		image_free(&j->kimg);
		fifo_push(&again, j);
		moved++;
	}
	if (again.head) {
		again.tail->next = J->decode.head;
		J->decode.head = again.head;
		if (!J->decode.tail)
			J->decode.tail = again.tail;
		pthread_cond_broadcast(&J->codec_cv);
	}
	pthread_mutex_unlock(&J->lock);
	if (moved)
		log_msg(LOG_INFO, "gpu %d: %d queued frames decoded again: their planes were in the "
		        "upload buffers of the context going", g->id, moved);
}

/* After a GPU reset: the job that saw it fails with 503 (its result cannot be trusted), the
 * engine is destroyed and built again (every second until it works or the daemon stops), and
 * warmed; readiness is false meanwhile (not alive). Jobs queued with planes in its upload
 * buffers keep them (uploads_withdraw). */
static struct engine *gpu_rebuild(struct gpu *g, struct engine *e, int status, struct job *j)
{
	struct jobs *J = g->J;
	log_msg(LOG_ERROR, "gpu %d: the GPU context was lost (%s); rebuilding it", g->id,
	        egl_reset_name(status));
	if (j && j->status < 400) {
		gpu_job_drop(j);
		set_error(j, API_E_GPU_RESET, "the GPU was reset while this request ran (%s); its "
		          "context is being rebuilt: retry", egl_reset_name(status));
		j->retry_after = 1;
	}
	pthread_mutex_lock(&J->lock);
	g->alive = 0;
	g->rebuilding = 1;
	g->resets++;
	g->heartbeat = clock_s();
	/* the new engine's counters start at 0: nothing of theirs is the daemon's own frames */
	memset(&g->off.caches, 0, sizeof g->off.caches);
	memset(&g->off.programs, 0, sizeof g->off.programs);
	pthread_mutex_unlock(&J->lock);
	uploads_withdraw(g);
	engine_destroy(e);
	e = NULL;
	char why[BLOOM_ERR_LEN];
	for (;;) {
		if (!gpu_build(g, &e, why, sizeof why))
			break;
		log_msg(LOG_ERROR, "gpu %d: rebuilding after a reset: %s", g->id, why);
		pthread_mutex_lock(&J->lock);
		int stop = J->stop;
		g->heartbeat = clock_s();
		pthread_mutex_unlock(&J->lock);
		if (stop)
			return NULL;
		sleep(1);
	}
	gpu_warm(g, engine_bloom(e));
	uploads_offer(g, engine_bloom(e));
	pthread_mutex_lock(&J->lock);
	g->alive = 1;
	g->rebuilding = 0;
	g->heartbeat = clock_s();
	pthread_mutex_unlock(&J->lock);
	log_msg(LOG_WARN, "gpu %d: context rebuilt after a reset (%llu so far)", g->id,
	        (unsigned long long)g->resets);
	return e;
}

/* Idle work (measuring FFT shapes, rebuilding plans) starts only once the queue has been empty
 * this long since the last job: a step cannot be interrupted and may compile programs (tens to
 * hundreds of milliseconds on a GPU driver), so under load, when the queue empties for a moment
 * between jobs, the GPU thread stays with the jobs. */
#define IDLE_GRACE_S 0.5

/* The idle work that only makes the FFT faster (a shape measured, a plan rebuilt) starts after
 * this long without a job: measuring compiles candidate programs, and a request that arrives
 * during a compile waits for the driver (up to 0.33 s on the H200), so traffic with shorter
 * gaps is never made to wait for it; frames run on the built-in choices meanwhile. */
#define TUNE_GRACE_S 2.0
#define GPU_IDLE_LATER 3 /* gpu_idle_step: only tuning is left, for after TUNE_GRACE_S */

#define GPU_DEPTH_MAX 8 /* --gpu-depth's bound */

/* Under load (no IDLE_GRACE_S without a job since a plan became wanted), an urgent wanted plan
 * (its frames borrow in tiles or a far larger plan) still gets one step (one program compiled at
 * most) every LOAD_STEP_S between jobs: frames of a size seen under load stop borrowing within
 * a second or two. A frame borrowing a smaller plan in tiles holds the GPU thread far longer
 * than a compile does, so the steps come nearly back to back (bench/RESULTS.md, "A size amid a
 * steady load"). The other wanted plans wait for idle time, or until the load has gone on
 * --plan-load-wait seconds (each compile holds the GPU thread's commands; bench/RESULTS.md,
 * "Compiles under load"). */
#define LOAD_STEP_S 0.05

/* One step of the engine's idle work (engine_idle: a plan a frame borrowed another's for,
 * an FFT shape measured, a plan rebuilt with measured shapes; with tune 0, engine_idle_plans:
 * the first only), the programs kept within their bounds after it, and the counts /v1/info
 * shows; a context lost meanwhile is rebuilt (*e NULL when the daemon stopped during that).
 * Returns 1 while work remains, ENGINE_IDLE_WAIT while it waits for the compile thread,
 * GPU_IDLE_LATER when (tune 0) no plan is wanted and tuning may remain. Without the lock. */
static int gpu_idle_step(struct gpu *g, struct engine **e, int tune)
{
	struct fft_wisdom *w = engine_wisdom(*e);
	int before = w ? fft_wisdom_count(w) : 0;
	int more = tune ? engine_idle(*e) : engine_idle_plans(*e);
	if (more == ENGINE_IDLE_WAIT && !engine_reset_status(*e))
		return ENGINE_IDLE_WAIT;
	int measured = w ? fft_wisdom_count(w) - before : 0;
	int pending = w ? fft_wisdom_pending_count(w) : 0;
	int reset = engine_reset_status(*e);
	if (reset && !(*e = gpu_rebuild(g, *e, reset, NULL)))
		return 0;
	if (more && !reset)
		trim_programs(g->J, engine_programs(*e), engine_bloom(*e));
	pthread_mutex_lock(&g->J->lock);
	g->fft_measured += measured > 0 ? (unsigned long long)measured : 0;
	g->fft_pending = pending;
	bloom_ctx_stats(engine_bloom(*e), &g->bs);
	program_cache_stats(engine_programs(*e), &g->ps);
	pthread_mutex_unlock(&g->J->lock);
	return more || reset ? 1 : tune ? 0 : GPU_IDLE_LATER;
}

/* The shapes another process handed (jobs_hand_shapes) wanted as if their frames had run here:
 * their plans, the built-in kernel's spectrum (a gray one of the kernel's size for a gray
 * kernel) and a rehearsal, in idle time. Called with the lock held; returns with it held. */
static void want_handed(struct gpu *g, struct engine *e)
{
	struct jobs *J = g->J;
	struct jobs_shape s[JOBS_SHAPES];
	int n = J->nhanded, gen = J->handed_gen;
	memcpy(s, J->handed, sizeof s[0] * (size_t)n);
	pthread_mutex_unlock(&J->lock);
	struct bloom_ctx *b = engine_bloom(e);
	int wanted = 0, ok[JOBS_SHAPES] = {0};
	/* the newest first: past --max-plans, or past the wanted queue (BLOOM_WANTS, whose
	 * oldest wish would go), the oldest are left out */
	for (int i = 0; b && i < n; i++) {
		struct bloom_cache_stats bs;
		bloom_ctx_stats(b, &bs);
		if (bs.plans_wanted >= BLOOM_WANTS)
			break;
		struct bloom_params p = s[i].p;
		if (s[i].kw || s[i].gray) {
			/* a kernel image: a built-in kernel of its size and kind (gray or colour) stands
			 * in for the spectrum and the rehearsal, at its own size */
			char spec[64], perr[KERNEL_PRESET_ERR_LEN];
			int side = s[i].kw > s[i].kh ? s[i].kw : s[i].kh;
			snprintf(spec, sizeof spec, "%s:size=%d", s[i].gray ? "gaussian" : "aperture",
			         (side < 3 ? 3 : side) | 1);
			if (kernel_preset_parse(spec, &p.preset, perr))
				memset(&p.preset, 0, sizeof p.preset);
			p.kernel_scale = 0;
		}
		ok[i] = !bloom_want_padded(b, s[i].pw, s[i].ph, s[i].w, s[i].h, &p);
		wanted += ok[i];
	}
	log_msg(LOG_INFO, "gpu %d: %d of %d frame shapes handed by the serving process wanted "
	        "(built before this one serves)", g->id, wanted, n);
	pthread_mutex_lock(&J->lock);
	for (int i = n - 1; i >= 0; i--) { /* those wanted remembered as this thread's own */
		if (!ok[i])
			continue;
		int k = g->nshapes < JOBS_SHAPES ? g->nshapes++ : JOBS_SHAPES - 1;
		memmove(&g->shapes[1], &g->shapes[0], sizeof s[0] * (size_t)k);
		g->shapes[0] = s[i];
	}
	g->handed_seen = gen;
	g->idle_pending = 1;
	if (b)
		bloom_ctx_stats(b, &g->bs);
}

/* Jobs in flight failed for a GPU reset: their results cannot be trusted (lent planes given
 * back first, as the context that lent them is destroyed). */
static void fail_in_flight(struct gpu *g, struct job **flight, int *nflight, int status)
{
	struct jobs *J = g->J;
	for (int i = 0; i < *nflight; i++) {
		struct job *j = flight[i];
		char err[BLOOM_ERR_LEN];
		bloom_result_finish(&j->flight, NULL, err);
		gpu_job_take(g, j, 0, &j->flight, "");
		memset(&j->flight, 0, sizeof j->flight);
		gpu_job_drop(j);
		set_error(j, API_E_GPU_RESET, "the GPU was reset while this request ran (%s); its "
		          "context is being rebuilt: retry", egl_reset_name(status));
		j->retry_after = 1;
		pthread_mutex_lock(&J->lock);
		g->njobs++;
		g->nfail++;
		pthread_mutex_unlock(&J->lock);
		finish(J, j);
	}
	*nflight = 0;
}

/* A job the GPU is done with (busy_s: the GPU thread's time on it since last counted): a reset
 * seen meanwhile fails it and every frame in flight and rebuilds the context; the counts, the
 * program cache kept within bounds, and the job on to its encoding (or answered, failed).
 * Called without the lock; returns with it held: 1, or 0 when the daemon stopped while the
 * context was being rebuilt (*e NULL). */
static int gpu_finish_job(struct gpu *g, struct engine **e, struct job *j, struct job **flight,
                          int *nflight, double busy_s)
{
	struct jobs *J = g->J;
	int reset = engine_reset_status(*e);
	if (reset) {
		fail_in_flight(g, flight, nflight, reset);
		*e = gpu_rebuild(g, *e, reset, j);
	}
	double t1 = clock_s();
	pthread_mutex_lock(&J->lock);
	g->in_flight = *nflight;
	g->busy = *nflight > 0;
	g->busy_s += busy_s;
	g->njobs++;
	if (j->lease) {
		g->lent++;
		g->lent_total++;
	}
	g->coef_frames += j->coef_in && j->status < 400;
	if (j->status < 400 && j->info.format == IMAGE_FORMAT_JPEG &&
	    (j->kind == JOB_BLOOM || j->kind == JOB_CONVOLVE))
		j->entropy_gpu ? g->entropy_gpu++ : g->entropy_cpu++;
	if (j->status >= 400)
		g->nfail++;
	else if (j->yresult.dct_quality && J->cfg.jpeg_gpu_entropy)
		j->yresult.coded ? g->scans++ : g->scan_fallbacks++;
	g->heartbeat = t1;
	pthread_mutex_unlock(&J->lock);
	if (*e) {
		trim_programs(J, engine_programs(*e), engine_bloom(*e));
		pthread_mutex_lock(&J->lock);
		program_cache_stats(engine_programs(*e), &g->ps);
		bloom_ctx_stats(engine_bloom(*e), &g->bs);
	} else {
		pthread_mutex_lock(&J->lock);
	}
	job_hand_on_locked(J, j);
	return *e != NULL;
}

void *gpu_main(void *arg)
{
	struct gpu *g = arg;
	struct jobs *J = g->J;
	struct engine *e = NULL;
	int rc = gpu_build(g, &e, g->init_err, sizeof g->init_err);
	pthread_mutex_lock(&J->lock);
	if (rc) {
		g->failed = 1;
	} else {
		g->alive = 1;
		g->heartbeat = clock_s();
	}
	pthread_cond_broadcast(&J->init_cv);
	pthread_mutex_unlock(&J->lock);
	if (rc)
		return NULL;
	log_msg(LOG_INFO, "gpu %d: '%s' (%s) on the %s platform", g->id, g->renderer, g->version,
	        g->platform);
	log_msg(LOG_INFO, "gpu %d: FFT choices from %s%s", g->id, g->wisdom,
	        engine_wisdom(e) && fft_wisdom_measure(engine_wisdom(e)) == FFT_WISDOM_MEASURE_IDLE
	        ? "; new shapes measured in idle time" : "");
	if (g->software)
		log_msg(LOG_WARN, "gpu %d: '%s' is a software renderer: every frame runs on the CPU, "
		        "tens to hundreds of times slower than on a GPU (--require-gpu refuses it)",
		        g->id, g->renderer);
	gpu_warm(g, engine_bloom(e));
	uploads_offer(g, engine_bloom(e));
	pthread_mutex_lock(&J->lock);
	g->warmed = 1;
	g->heartbeat = clock_s();
	int idle_work = 1; /* a job (or the warm-up) may have queued FFT shapes to measure */
	double last_job = clock_s(); /* when the last job ended; < 0 while one runs */
	struct job *flight[GPU_DEPTH_MAX]; /* frames in flight, oldest first */
	int nflight = 0, depth = J->cfg.gpu_depth < GPU_DEPTH_MAX ? J->cfg.gpu_depth : GPU_DEPTH_MAX;
	double last_step = clock_s(); /* when a wanted plan last got a step under load */
	double want_since = -1;       /* since when a plan has been wanted; < 0: none is */
	double load_since = -1;       /* since when jobs have come without IDLE_GRACE_S of pause */
	for (;;) {
		if (g->handed_seen != J->handed_gen) {
			want_handed(g, e);
			idle_work = 1;
		}
		int idle_mode = J->idle_mode;
		if (idle_mode == JOBS_IDLE_BUILD) /* what build_before_serving waits on */
			g->idle_pending = idle_work != 0;
		if (last_job < 0 && !nflight)
			last_job = clock_s();
		double now = clock_s();
		if (!J->gpuq.head && !nflight && now - last_job >= IDLE_GRACE_S)
			load_since = -1;
		else if (load_since < 0 && J->gpuq.head)
			load_since = now;
		int long_load = load_since >= 0 && now - load_since >= J->cfg.plan_load_wait;
		if (!(long_load ? g->bs.plans_wanted : g->bs.plans_urgent))
			want_since = -1;
		else if (want_since < 0)
			want_since = now;
		/* a plan wanted for IDLE_GRACE_S without the idle time to build it: under load */
		if (J->gpuq.head && want_since >= 0 && now - want_since >= IDLE_GRACE_S &&
		    now - last_step >= LOAD_STEP_S && idle_mode == JOBS_IDLE_NORMAL) {
			pthread_mutex_unlock(&J->lock);
			engine_build_wanted(e, long_load);
			trim_programs(J, engine_programs(e), engine_bloom(e));
			pthread_mutex_lock(&J->lock);
			bloom_ctx_stats(engine_bloom(e), &g->bs);
			program_cache_stats(engine_programs(e), &g->ps);
			g->heartbeat = last_step = clock_s();
		}
		struct job *j = nflight < depth ? fifo_pop(&J->gpuq) : NULL;
		if (!j && nflight) {
			/* the queue is empty, or the frames in flight are as many as allowed: the oldest
			 * completes (its read-back waits for the GPU) */
			j = flight[0];
			memmove(flight, flight + 1, (size_t)--nflight * sizeof *flight);
			g->busy = 1;
			pthread_mutex_unlock(&J->lock);
			double t0 = clock_s();
			gpu_job_complete(g, j);
			j->gpu_s += clock_s() - t0;
			if (!gpu_finish_job(g, &e, j, flight, &nflight, clock_s() - t0))
				break;
			continue;
		}
		double quiet = clock_s() - last_job;
		if (idle_mode == JOBS_IDLE_BUILD)
			quiet = TUNE_GRACE_S; /* no frame comes: the work back to back */
		if (idle_mode == JOBS_IDLE_OFF && idle_work) {
			/* a successor does it: what waits is reported, nothing is done */
			pthread_mutex_unlock(&J->lock);
			int pending = engine_idle_pending(e);
			pthread_mutex_lock(&J->lock);
			g->idle_pending = pending;
			idle_work = 0;
		}
		if (!j && idle_work && !J->stop && quiet >= IDLE_GRACE_S &&
		    (idle_work != GPU_IDLE_LATER || quiet >= TUNE_GRACE_S)) {
			/* nothing queued: one short step of idle work (a wanted plan's; after
			 * TUNE_GRACE_S a shape's measuring, a plan rebuilt with the winners), then the
			 * queue is looked at again */
			pthread_mutex_unlock(&J->lock);
			idle_work = gpu_idle_step(g, &e, quiet >= TUNE_GRACE_S);
			pthread_mutex_lock(&J->lock);
			g->heartbeat = clock_s();
			g->idle_pending = idle_work != 0;
			if (!e)
				break;
			if (idle_work == ENGINE_IDLE_WAIT && !J->gpuq.head && !J->stop) {
				/* a program compiles on the compile thread: a moment, or a job */
				clock_cond_wait_ns(&J->gpu_cv, &J->lock, ENGINE_IDLE_WAIT_MS * 1000000LL);
			}
			continue;
		}
		if (!j) {
			if (J->stop && J->waiting == 0)
				break;
			long long wait_ns = 250 * 1000000LL;
			if (idle_work && quiet < IDLE_GRACE_S)
				wait_ns = (long long)((IDLE_GRACE_S - quiet) * 1e9) + 1000000LL;
			else if (idle_work == GPU_IDLE_LATER && quiet < TUNE_GRACE_S)
				wait_ns = (long long)((TUNE_GRACE_S - quiet) * 1e9) + 1000000LL;
			clock_cond_wait_ns(&J->gpu_cv, &J->lock, wait_ns);
			g->heartbeat = clock_s();
			pthread_mutex_unlock(&J->lock);
			/* upload buffers the last frames read come back free, and one is made for a
			 * take that found none, before the next frame rather than in it */
			int made = bloom_upload_tend(engine_bloom(e));
			int reset = engine_reset_status(e); /* a reset while idle */
			if (reset && !(e = gpu_rebuild(g, e, reset, NULL))) {
				pthread_mutex_lock(&J->lock);
				break;
			}
			pthread_mutex_lock(&J->lock);
			if (made && !reset) /* /v1/info and /metrics count the buffer made */
				bloom_ctx_stats(engine_bloom(e), &g->bs);
			continue;
		}
		unqueue(J, j);
		idle_work = 1;
		last_job = -1;
		g->busy = 1;
		g->tiles_done = g->tiles_total = 0;
		double t0 = clock_s();
		j->queue_s = t0 - j->t_queued;
		pthread_mutex_unlock(&J->lock);

		j->method = CONVOLVE_FFT;
		memset(&j->flight, 0, sizeof j->flight);
		gpu_cancel_arm(g, t0); /* its GPU work stops at the next dispatch past --gpu-timeout */
		gpu_job_run(g, e, j);
		gpu_cancel_disarm(g); /* idle work has no deadline */
		j->gpu_s = clock_s() - t0;
		if (nflight) { /* issued while another frame was on the GPU */
			pthread_mutex_lock(&J->lock);
			g->overlapped++;
			pthread_mutex_unlock(&J->lock);
		}
		if (j->flight.pending) { /* completes later, once the next frame is issued */
			flight[nflight++] = j;
			pthread_mutex_lock(&J->lock);
			g->in_flight = nflight;
			g->busy_s += j->gpu_s;
			g->heartbeat = clock_s();
			continue; /* a reset meanwhile is met when it completes */
		}
		if (!gpu_finish_job(g, &e, j, flight, &nflight, j->gpu_s))
			break;
	}
	g->alive = 0;
	pthread_mutex_unlock(&J->lock);
	uploads_withdraw(g);
	engine_destroy(e);
	return NULL;
}
