/* A GPU thread: its jobs on the GPU (frames in flight, lent results), idle work between them,
 * and a rebuilt context after a reset; its context, warm-up and caches are gpu_context.c. See
 * jobs_impl.h. */
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

#include "daemon/apiutil.h"
#include "daemon/engine_errors.h"
#include "daemon/gpu_cancel.h"
#include "core/log.h"
#include "gles/engine.h"
#include "core/clock.h"

#define GPU_SLOW_JOB_MS 20.0 /* a bloom job holding the GPU thread this long is logged (debug) */

/* The engine calls of the tensor jobs: 0 or a spatial_* code (deconv's are the same) with
 * err. */
static int tensor_conv2d(struct engine *e, struct job *j, char *err)
{
	if (engine_want(e, ENGINE_SPATIAL, err))
		return SPATIAL_E_GPU;
	struct spatial_stats st;
	int rc = spatial_conv2d(engine_spatial(e), &j->sc, j->tx.data, j->tw.data, j->tb.data,
	                        j->ty.data, &st, err);
	j->gpu_copy_s = (st.upload_ms + st.stage_ms[GPU_STAGE_DOWNLOAD]) * 1e-3;
	return rc;
}

static int tensor_conv2d_t(struct engine *e, struct job *j, char *err)
{
	if (engine_want(e, ENGINE_DECONV, err))
		return SPATIAL_E_GPU;
	struct deconv_stats st;
	return deconv_run(engine_deconv(e), &j->dc, j->tx.data, j->tw.data, j->tb.data, j->ty.data,
	                  &st, err);
}

static void run_tensor(struct gpu *g, struct engine *e, struct job *j);
static void run_frame(struct gpu *g, struct engine *e, struct job *j);

/* How the GPU thread runs each kind of job (operation.h's job kinds): a frame (bloom, convolve)
 * or a tensor job and its engine call. Kinds without a row never reach the GPU queue. */
static const struct {
	void (*run)(struct gpu *g, struct engine *e, struct job *j);
	int (*tensor)(struct engine *e, struct job *j, char *err);
} gpu_jobs[JOB_KINDS] = {
	[JOB_BLOOM] = {run_frame, NULL},
	[JOB_CONVOLVE] = {run_frame, NULL},
	[JOB_CONV2D] = {run_tensor, tensor_conv2d},
	[JOB_CONV2D_T] = {run_tensor, tensor_conv2d_t},
};

/* A tensor job (its tensors decoded and described by a codec thread): its engine call, then
 * the answer to a failure. */
static void run_tensor(struct gpu *g, struct engine *e, struct job *j)
{
	static __thread char err[ENGINE_ERR_LEN];
	err[0] = 0;
	int rc = gpu_jobs[j->kind].tensor(e, j, err);
	const char *what = operation_job_label(j->kind);
	if (rc == SPATIAL_E_CANCELLED) {
		gpu_cancelled(g, j, what);
		tensor_free(&j->ty);
	} else if (rc) {
		set_error(j, engine_errors_spatial(rc), "%s", err[0] ? err : spatial_strerror(rc));
		if (j->status >= 500)
			log_msg(LOG_ERROR, "gpu %d: %s failed: %s", g->id, what, j->message);
		tensor_free(&j->ty);
	}
	tensor_free(&j->tx);
	tensor_free(&j->tw);
	tensor_free(&j->tb);
	j->gpu = g->id;
}

static int image_finite(const struct image *img);
static void take_result(struct gpu *g, struct job *j, int rc, struct bloom_result *res,
                        const char *err);
static void drop_result(struct job *j);

/* A convolve job the direct path may run (a float frame): the method by the model, then the
 * direct convolution when it wins. 1 when it ran the job (or failed it), 0 for the FFT path. */
static int run_direct(struct gpu *g, struct engine *e, const struct bloom_kernel *bk,
                      struct job *j)
{
	struct bloom_ctx *b = engine_bloom(e);
	static __thread char err[ENGINE_ERR_LEN];
	err[0] = 0;
	const struct bloom_params *p = &j->req.p;
	if (j->kind != JOB_CONVOLVE || p->method == CONVOLVE_FFT || !j->in.pixels)
		return 0;
	struct image gen = {0};
	const struct image *k = bk->img;
	char berr[BLOOM_ERR_LEN];
	int rc = 0, method = CONVOLVE_FFT;
	if (!k && !(rc = bloom_kernel_preset(b, &p->preset, &gen, berr)))
		k = &gen;
	if (rc)
		snprintf(err, CONVOLVE_ERR_LEN, "%.500s", berr);
	if (!rc)
		rc = engine_want(e, ENGINE_SPATIAL, err) ? BLOOM_E_GPU : 0;
	struct spatial_ctx *sp = engine_spatial(e);
	if (!rc)
		rc = convolve_choose(b, sp, &g->model, p->method, j->in.width, j->in.height,
		                     k->width, k->height, p, &method, NULL, NULL, err);
	if (!rc && method == CONVOLVE_SPATIAL) {
		double t0 = clock_s();
		struct spatial_stats sst;
		memset(&sst, 0, sizeof sst);
		rc = convolve_spatial(sp, &j->in, k, p, &j->result, &sst, err);
		j->gpu_wait_s = clock_s() - t0;
		j->tiles_x = sst.tiles_x, j->tiles_y = sst.tiles_y;
		if (rc == BLOOM_E_TOO_LARGE && p->method == CONVOLVE_AUTO) {
			method = CONVOLVE_FFT; /* beyond the direct path's limits (a kernel past the
			                          uniform-block limit): the FFT path runs it */
			rc = 0;
		}
	}
	image_free(&gen);
	if (!rc && method == CONVOLVE_FFT)
		return 0;
	if (rc == BLOOM_E_CANCELLED) {
		image_free(&j->result);
		gpu_cancelled(g, j, "a direct convolution");
	} else if (rc) {
		set_error(j, engine_errors_bloom(rc), "%s", err);
	} else if (!image_finite(&j->result)) {
		image_free(&j->result);
		set_error(j, API_E_RESULT_NOT_FINITE, "samples of the result are not finite: float32 "
		          "overflowed in the convolution (an image or kernel value near 3.4e38, or "
		          "infinite); scale the image or kernel down");
	}
	j->method = method;
	image_free(&j->in);
	image_free(&j->kimg);
	j->gpu = g->id;
	return 1;
}

/* 1 when every sample of img is finite. */
static int image_finite(const struct image *img)
{
	size_t n = (size_t)img->width * img->height * img->channels;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(img->pixels[i]))
			return 0;
	return 1;
}

static void gpu_run(struct gpu *g, struct bloom_ctx *b, struct job *j)
{
	struct jobs *J = g->J;
	struct bloom_kernel bk;
	memset(&bk, 0, sizeof bk);
	if (j->named) {
		bk.img = &j->named->img;
		memcpy(bk.digest, j->named->digest, sizeof bk.digest);
	} else if (j->kimg.pixels) {
		bk.img = &j->kimg;
	}
	struct bloom_stats st;
	memset(&st, 0, sizeof st);
	static __thread char err[BLOOM_ERR_LEN];
	err[0] = 0;
	int op = j->kind == JOB_CONVOLVE ? BLOOM_OP_CONVOLVE : BLOOM_OP_BLOOM;
	/* a JPEG answer comes back from the GPU as planes */
	enum image_format fmt;
	int bits;
	format_resolve(j->req.format, &j->accept, &j->info, &fmt, &bits);
	/* planes decoded into an upload buffer of this context are read there */
	struct bloom_frame f = {j->yin.data ? NULL : &j->in, j->yin.data ? &j->yin : NULL,
	                        j->yin.data ? j->upload.slot : NULL};
	struct bloom_result res;
	memset(&res, 0, sizeof res);
	res.want_yuv = J->cfg.jpeg_planes && fmt == IMAGE_FORMAT_JPEG;
	res.sub_x = res.sub_y = J->cfg.jpeg_subsampling ? 2 : 1;
	res.lend = J->cfg.lend_planes;
	/* the quality the codec thread encodes at (do_encode) */
	if (res.want_yuv && J->cfg.jpeg_gpu_dct) {
		res.dct_quality = j->req.quality ? j->req.quality : api_default_quality(&J->cfg, fmt);
		res.entropy = J->cfg.jpeg_gpu_entropy;
	}
	int known = 1, rc = 0;
	unsigned long long key = 0;
	if (J->cfg.new_sizes_per_minute > 0)
		rc = bloom_plan_known(b, &f, &bk, &j->req.p, &known, &key, err);
	if (!rc && !known) {
		pthread_mutex_lock(&J->lock);
		double wait = charge_new_size(J, j->client, key, clock_s());
		pthread_mutex_unlock(&J->lock);
		if (wait > 0) {
			set_error(j, API_E_TOO_MANY_NEW_SIZES, "this client sent %d images of sizes the GPU "
			          "had not planned within a minute (--new-sizes-per-minute); each compiles "
			          "programs. Retry in %.0f s, or send sizes seen before", J->cfg.new_sizes_per_minute,
			          ceil(wait));
			j->retry_after = (int)ceil(wait);
			image_free(&j->in);
			yuv_image_free(&j->yin);
			image_free(&j->kimg);
			j->gpu = g->id;
			return;
		}
	}
	if (!rc)
		rc = bloom_run_frame(b, op, &f, &bk, &j->req.p, J->cfg.gpu_depth > 1 ? BLOOM_DEFER : 0,
		                     &res, &st, err);
	if (st.wall_ms > GPU_SLOW_JOB_MS)
		log_msg(LOG_DEBUG, "gpu %d: a %dx%d job held the thread %.1f ms (setup %.1f, prepare "
		        "%.1f, copy %.1f, wait %.1f, read-back %.1f)", g->id, f.img ? f.img->width :
		        f.yuv->width, f.img ? f.img->height : f.yuv->height, st.wall_ms, st.setup_ms,
		        st.prepare_ms, st.copy_ms, st.wait_ms, st.readback_ms);
	j->tiles_x = st.tiles_x, j->tiles_y = st.tiles_y;
	/* the GPU made its planes from the coefficients (in tiles the CPU does): counted when the
	 * job finishes well */
	j->coef_in = !rc && f.yuv && f.yuv->coefs && st.tiles_x * st.tiles_y <= 1;
	j->borrowed_w = !rc && st.borrowed ? st.padded_w : 0;
	j->borrowed_h = !rc && st.borrowed ? st.padded_h : 0;
	j->gpu_copy_s = st.copy_ms * 1e-3;
	j->gpu_wait_s = st.wait_ms * 1e-3;
	j->gpu_setup_s = st.setup_ms * 1e-3;
	image_free(&j->in);
	yuv_image_free(&j->yin);
	image_free(&j->kimg);
	j->gpu = g->id;
	if (!rc && res.pending)
		j->flight = res; /* gpu_complete takes it */
	else
		take_result(g, j, rc, &res, err);
}

/* A result from the GPU into the job: its planes or image, or the failure, or the refusal of
 * a result that came out non-finite. */
static void take_result(struct gpu *g, struct job *j, int rc, struct bloom_result *res,
                        const char *err)
{
	j->lease = res->lease;
	j->result = res->img;
	j->yresult = res->yuv;
	j->lost = res->lost;
	if (rc == BLOOM_E_CANCELLED) {
		gpu_cancelled(g, j, "a frame in tiles");
		drop_result(j);
	} else if (rc) {
		set_error(j, engine_errors_bloom(rc), "%s", err[0] ? err : bloom_strerror(rc));
		if (j->status >= 500)
			log_msg(LOG_ERROR, "gpu %d: bloom_run failed: %s", g->id, j->message);
	} else if (res->nonfinite) {
		set_error(j, API_E_RESULT_NOT_FINITE, "%llu samples of the result are not finite: "
		          "float32 overflowed in the convolution (an image or kernel value near 3.4e38, "
		          "or infinite); scale the image or kernel down", res->nonfinite);
		drop_result(j);
	}
}

/* A frame left in flight by gpu_run: waits for the GPU, then takes its result. */
static void gpu_complete(struct gpu *g, struct job *j)
{
	static __thread char err[BLOOM_ERR_LEN];
	err[0] = 0;
	double wait_ms = 0;
	int rc = bloom_result_finish(&j->flight, &wait_ms, err);
	j->gpu_wait_s += wait_ms * 1e-3;
	take_result(g, j, rc, &j->flight, err);
	memset(&j->flight, 0, sizeof j->flight);
}

/* A job's results dropped (lent planes given back) for an error set after they were made. */
static void drop_result(struct job *j)
{
	if (j->lease) {
		j->yresult.data = NULL;
		bloom_lease_return(j->lease);
		j->lease = NULL;
	}
	image_free(&j->result);
	yuv_image_free(&j->yresult);
	tensor_free(&j->ty);
}

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
		drop_result(j);
		set_error(j, API_E_GPU_RESET, "the GPU was reset while this request ran (%s); its "
		          "context is being rebuilt: retry", egl_reset_name(status));
		j->retry_after = 1;
	}
	pthread_mutex_lock(&J->lock);
	g->alive = 0;
	g->rebuilding = 1;
	g->resets++;
	g->heartbeat = clock_s();
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

/* Jobs in flight failed for a GPU reset: their results cannot be trusted (lent planes given
 * back first, as the context that lent them is destroyed). */
static void fail_in_flight(struct gpu *g, struct job **flight, int *nflight, int status)
{
	struct jobs *J = g->J;
	for (int i = 0; i < *nflight; i++) {
		struct job *j = flight[i];
		char err[BLOOM_ERR_LEN];
		bloom_result_finish(&j->flight, NULL, err);
		take_result(g, j, 0, &j->flight, "");
		memset(&j->flight, 0, sizeof j->flight);
		drop_result(j);
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
	if (j->status >= 400) {
		pthread_mutex_unlock(&J->lock);
		finish(J, j);
		pthread_mutex_lock(&J->lock);
	} else {
		fifo_push(&J->encode, j);
		pthread_cond_signal(&J->codec_cv);
	}
	return *e != NULL;
}

/* A bloom or convolve frame: the direct convolution when it wins, else the FFT path. */
static void run_frame(struct gpu *g, struct engine *e, struct job *j)
{
	struct bloom_kernel bk = {j->named ? &j->named->img : j->kimg.pixels ? &j->kimg : NULL,
	                          {0, 0}};
	if (!run_direct(g, e, &bk, j))
		gpu_run(g, engine_bloom(e), j);
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
		    now - last_step >= LOAD_STEP_S) {
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
			gpu_complete(g, j);
			j->gpu_s += clock_s() - t0;
			if (!gpu_finish_job(g, &e, j, flight, &nflight, clock_s() - t0))
				break;
			continue;
		}
		double quiet = clock_s() - last_job;
		if (!j && idle_work && !J->stop && quiet >= IDLE_GRACE_S &&
		    (idle_work != GPU_IDLE_LATER || quiet >= TUNE_GRACE_S)) {
			/* nothing queued: one short step of idle work (a wanted plan's; after
			 * TUNE_GRACE_S a shape's measuring, a plan rebuilt with the winners), then the
			 * queue is looked at again */
			pthread_mutex_unlock(&J->lock);
			idle_work = gpu_idle_step(g, &e, quiet >= TUNE_GRACE_S);
			pthread_mutex_lock(&J->lock);
			g->heartbeat = clock_s();
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
		gpu_jobs[j->kind].run(g, e, j);
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
