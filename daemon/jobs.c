/* Admission, the bounded queue, the watchdog (deadlines, clients gone), status, readiness and
 * shutdown; see jobs.h. The threads' work is in codec.c and gpu_worker.c. */
#include "daemon/jobs.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/apiutil.h"
#include "daemon/gpu_cancel.h"
#include "daemon/jobs_impl.h"
#include "daemon/lifecycle.h"
#include "core/log.h"
#include "gles/egl.h"
#include "gles/program.h"
#include "gles/wisdom.h"
#include "core/clock.h"
#include "core/parallel.h"

void fifo_push(struct fifo *f, struct job *j)
{
	j->next = NULL;
	if (f->tail)
		f->tail->next = j;
	else
		f->head = j;
	f->tail = j;
}

struct job *fifo_pop(struct fifo *f)
{
	struct job *j = f->head;
	if (j) {
		f->head = j->next;
		if (!f->head)
			f->tail = NULL;
		j->next = NULL;
	}
	return j;
}

int is_gpu_kind(const struct job *j)
{
	return j->kind != JOB_KERNEL_PUT && j->kind != JOB_IMAGE_PUT;
}

/* Gives j's place in the queue back, once. Caller holds the lock. */
void unqueue(struct jobs *J, struct job *j)
{
	if (j->queued) {
		j->queued = 0;
		J->waiting--;
	}
}

void set_error(struct job *j, int error, const char *fmt, ...)
{
	const struct api_error_def *e = api_error(error);
	j->error = error;
	j->status = e->status;
	snprintf(j->code, sizeof j->code, "%s", e->code);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(j->message, sizeof j->message, fmt, ap);
	va_end(ap);
}

/* Answers j: frees what the job held, calls done(), then counts it out. Called without the lock;
 * j belongs to the submitter again once done() starts. */
void finish(struct jobs *J, struct job *j)
{
	image_free(&j->in);
	image_free(&j->kimg);
	image_free(&j->result);
	image_colour_free(&j->colour);
	yuv_image_free(&j->yin);
	tensor_free(&j->tx);
	tensor_free(&j->tw);
	tensor_free(&j->tb);
	tensor_free(&j->ty);
	int lent_by = j->lease ? j->gpu : -1; /* read now: j is the submitter's once done() starts */
	if (j->lease) { /* planes lent by the GPU thread's context: given back, not freed */
		j->yresult.data = NULL;
		bloom_lease_return(j->lease);
		j->lease = NULL;
	}
	yuv_image_free(&j->yresult);
	kernels_release(J->kernels, j->named);
	j->named = NULL;
	if (j->status < 400 && !j->dropped && !j->internal) {
		metrics_observe(J->metrics, METRICS_DECODE, j->decode_s);
		if (is_gpu_kind(j)) {
			metrics_observe(J->metrics, METRICS_QUEUE, j->queue_s);
			metrics_observe(J->metrics, METRICS_GPU, j->gpu_s);
			metrics_observe(J->metrics, METRICS_ENCODE, j->encode_s);
		}
	}
	pthread_mutex_lock(&J->lock);
	unqueue(J, j);
	J->mem_used -= j->reserved[0] + j->reserved[1];
	j->reserved[0] = j->reserved[1] = 0;
	pthread_mutex_unlock(&J->lock);
	j->done(j, j->done_ctx);
	pthread_mutex_lock(&J->lock);
	if (lent_by >= 0)
		J->gpus[lent_by].lent--;
	J->in_flight--;
	pthread_cond_broadcast(&J->watch_cv);
	pthread_mutex_unlock(&J->lock);
}

void job_hand_on_locked(struct jobs *J, struct job *j)
{
	if (j->status >= 400) {
		pthread_mutex_unlock(&J->lock);
		finish(J, j);
		pthread_mutex_lock(&J->lock);
	} else {
		fifo_push(&J->encode, j);
		pthread_cond_signal(&J->codec_cv);
	}
}

/* 1 when the peer has reset the connection or it failed. A peer that only shut down its
 * sending side (HTTP allows a client to send its request and then half-close) still waits
 * for its answer, and a half-close cannot be told from a close without writing: so neither
 * counts, and a job whose client closed is dropped when its answer cannot be written. */
static int client_gone(int fd)
{
	if (fd < 0)
		return 0;
	struct pollfd p = {fd, 0, 0};
	if (poll(&p, 1, 0) <= 0)
		return 0;
	return (p.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0;
}

/* Unlinks from f every job past its deadline or whose client is gone, into *out. */
static void sweep(struct jobs *J, struct fifo *f, double now, struct fifo *out)
{
	struct job **pp = &f->head, *prev = NULL;
	while (*pp) {
		struct job *j = *pp;
		int late = now > j->deadline, gone = !late && client_gone(j->client_fd);
		if (!late && !gone) {
			prev = j;
			pp = &j->next;
			continue;
		}
		*pp = j->next;
		if (f->tail == j)
			f->tail = prev;
		unqueue(J, j);
		if (late) {
			set_error(j, API_E_DEADLINE_EXCEEDED,
			          "the job waited %.3f s for a GPU, beyond the %g s deadline",
			          now - j->t_admit, J->cfg.deadline);
			metrics_drop(J->metrics, METRICS_DROP_DEADLINE);
		} else {
			j->dropped = 1;
			set_error(j, API_E_CLIENT_GONE, "the client closed the connection");
			metrics_drop(J->metrics, METRICS_DROP_CLIENT_GONE);
		}
		fifo_push(out, j);
	}
}

static void *watchdog_main(void *arg)
{
	struct jobs *J = arg;
	pthread_mutex_lock(&J->lock);
	while (!(J->stop && J->in_flight == 0)) {
		struct fifo drop = {0};
		double t = clock_s();
		sweep(J, &J->decode, t, &drop);
		sweep(J, &J->gpuq, t, &drop);
		if (drop.head) {
			pthread_mutex_unlock(&J->lock);
			struct job *j;
			while ((j = fifo_pop(&drop))) {
				if (j->dropped)
					log_msg(LOG_INFO, "queued job dropped: the client closed its connection");
				finish(J, j);
			}
			pthread_mutex_lock(&J->lock);
		}
		/* deadlines are kept to about 20 ms */
		clock_cond_wait_ns(&J->watch_cv, &J->lock, 20 * 1000000LL);
	}
	pthread_mutex_unlock(&J->lock);
	return NULL;
}

int jobs_reserve(struct jobs *J, int kind)
{
	pthread_mutex_lock(&J->lock);
	if (J->stop) {
		pthread_mutex_unlock(&J->lock);
		return JOBS_E_STOPPING;
	}
	(void)kind; /* every kind holds a place until it is decoded or taken by a GPU thread */
	if (J->waiting >= J->cfg.queue_size) {
		pthread_mutex_unlock(&J->lock);
		metrics_drop(J->metrics, METRICS_DROP_QUEUE_FULL);
		return JOBS_E_FULL;
	}
	J->waiting++;
	J->in_flight++;
	pthread_mutex_unlock(&J->lock);
	return 0;
}

void jobs_start(struct jobs *J, struct job *j)
{
	j->status = 0;
	j->error = 0;
	j->retry_after = 0;
	j->code[0] = j->message[0] = 0;
	j->body = NULL;
	j->body_len = 0;
	j->content_type = NULL;
	j->dropped = 0;
	j->lost = 0;
	j->gpu = -1;
	j->decode_s = j->queue_s = j->gpu_s = j->encode_s = j->gpu_copy_s = j->gpu_wait_s = 0;
	j->gpu_setup_s = 0;
	memset(&j->in, 0, sizeof j->in);
	memset(&j->kimg, 0, sizeof j->kimg);
	memset(&j->result, 0, sizeof j->result);
	memset(&j->info, 0, sizeof j->info);
	memset(&j->colour, 0, sizeof j->colour);
	memset(&j->tx, 0, sizeof j->tx);
	memset(&j->tw, 0, sizeof j->tw);
	memset(&j->tb, 0, sizeof j->tb);
	memset(&j->ty, 0, sizeof j->ty);
	memset(&j->yin, 0, sizeof j->yin);
	memset(&j->yresult, 0, sizeof j->yresult);
	memset(&j->upload, 0, sizeof j->upload);
	j->lease = NULL;
	j->queued = 1; /* the place jobs_reserve took */
	j->reserved[0] = j->reserved[1] = 0;
	j->t_admit = clock_s();
	j->deadline = j->t_admit + J->cfg.deadline;
	pthread_mutex_lock(&J->lock);
	fifo_push(&J->decode, j);
	pthread_cond_signal(&J->codec_cv);
	pthread_mutex_unlock(&J->lock);
}

void jobs_status(struct jobs *J, struct jobs_status *st)
{
	memset(st, 0, sizeof *st);
	double t = clock_s();
	pthread_mutex_lock(&J->lock);
	st->queued = J->waiting;
	st->queue_size = J->cfg.queue_size;
	st->in_flight = J->in_flight;
	st->memory_used = J->mem_used;
	st->memory_budget = J->cfg.memory_budget;
	st->ngpus = J->ngpus;
	for (int i = 0; i < J->ngpus; i++) {
		const struct gpu *g = &J->gpus[i];
		struct jobs_gpu_status *s = &st->gpu[i];
		s->device = g->device;
		memcpy(s->platform, g->platform, sizeof s->platform);
		memcpy(s->renderer, g->renderer, sizeof s->renderer);
		memcpy(s->version, g->version, sizeof s->version);
		s->alive = g->alive;
		s->warmed = g->warmed;
		s->warm_failed = g->warm_failed;
		s->busy = g->busy;
		s->in_flight = g->in_flight;
		s->overlapped = g->overlapped;
		s->heartbeat_age = g->alive ? t - g->heartbeat : 0;
		s->busy_s = g->busy_s;
		s->jobs = g->njobs;
		s->failures = g->nfail;
		s->planes_lent = g->lent;
		s->planes_lent_total = g->lent_total;
		s->jpeg_scans = g->scans;
		s->jpeg_coef_frames = g->coef_frames;
		s->jpeg_entropy_gpu = g->entropy_gpu;
		s->jpeg_entropy_cpu = g->entropy_cpu;
		s->jpeg_scan_fallbacks = g->scan_fallbacks;
		s->uploads_out = atomic_load(&g->uploads_out);
		s->uploads_taken = g->uploads_taken;
		s->programs = g->ps;
		s->caches = g->bs;
		s->software = g->software;
		memcpy(s->wisdom, g->wisdom, sizeof s->wisdom);
		s->fft_pending = g->fft_pending;
		s->fft_measured = g->fft_measured;
		s->idle_pending = g->idle_pending || (J->idle_mode == JOBS_IDLE_BUILD &&
		                                      g->handed_seen != J->handed_gen);
		s->nshapes = g->nshapes;
		memcpy(s->shapes, g->shapes, sizeof s->shapes[0] * (size_t)g->nshapes);
		s->reset_notification = g->reset_notification;
		s->rebuilding = g->rebuilding;
		s->resets = g->resets;
		s->tiles_done = g->tiles_done, s->tiles_total = g->tiles_total;
		s->max_buffer_bytes = g->max_buffer_bytes;
		s->untiled_pixels = g->untiled_pixels;
		s->max_kernel_side = g->max_kernel_side;
		if (g->rebuilding)
			s->heartbeat_age = t - g->heartbeat;
		/* clamped: the engine's counters start again with a context rebuilt after a GPU reset */
#define X(f) s->f = s->f > g->off.f ? s->f - g->off.f : 0;
		JOBS_DISCOUNTED(X)
#undef X
	}
	pthread_mutex_unlock(&J->lock);
}

void jobs_discount(struct jobs *J, const struct jobs_status *before)
{
	struct jobs_status *now = malloc(sizeof *now);
	if (!now)
		return;
	jobs_status(J, now);
	pthread_mutex_lock(&J->lock);
	for (int i = 0; i < J->ngpus && i < before->ngpus; i++) {
#define X(f) J->gpus[i].off.f += now->gpu[i].f - before->gpu[i].f;
		JOBS_DISCOUNTED(X)
#undef X
	}
	pthread_mutex_unlock(&J->lock);
	free(now);
}

int jobs_live(struct jobs *J, char *why, size_t len)
{
	struct jobs_status st;
	jobs_status(J, &st);
	int state = lifecycle_gpu_state(&st, J->cfg.heartbeat_timeout, why, len);
	if (state == LIFECYCLE_STALE || state == LIFECYCLE_FAILED)
		return -1;
	snprintf(why, len, "live");
	return 0;
}

int jobs_ready(struct jobs *J, char *why, size_t len)
{
	struct jobs_status st;
	jobs_status(J, &st);
	for (int i = 0; i < st.ngpus; i++) {
		const struct jobs_gpu_status *g = &st.gpu[i];
		if (g->rebuilding) {
			snprintf(why, len, "gpu %d: rebuilding its context after a GPU reset", i);
			return 0;
		}
		if (!g->alive) {
			snprintf(why, len, "gpu %d: no context", i);
			return 0;
		}
		if (g->warm_failed) {
			snprintf(why, len, "gpu %d: warm-up failed", i);
			return 0;
		}
		if (!g->warmed) {
			snprintf(why, len, "gpu %d: warming up", i);
			return 0;
		}
		if (g->heartbeat_age > J->cfg.heartbeat_timeout) {
			snprintf(why, len, "gpu %d: no heartbeat for %.1f s (limit %g s)", i,
			         g->heartbeat_age, J->cfg.heartbeat_timeout);
			return 0;
		}
	}
	long high = ((long)st.queue_size * J->cfg.queue_high_water + 99) / 100;
	if (st.queued >= high) {
		snprintf(why, len, "queue at %d of %d (high-water mark %ld)", st.queued, st.queue_size,
		         high);
		return 0;
	}
	snprintf(why, len, "ready");
	return 1;
}

void jobs_shutdown(struct jobs *J)
{
	pthread_mutex_lock(&J->lock);
	if (J->joined) {
		pthread_mutex_unlock(&J->lock);
		return;
	}
	J->joined = 1;
	J->stop = 1;
	struct fifo drop = {0};
	struct job *j;
	while ((j = fifo_pop(&J->decode)))
		fifo_push(&drop, j);
	while ((j = fifo_pop(&J->gpuq)))
		fifo_push(&drop, j);
	for (j = drop.head; j; j = j->next)
		unqueue(J, j);
	/* the drain is over: running jobs stop at their next dispatch (503 shutting_down), so
	 * that the GPU threads can be joined */
	gpu_cancel_all(J);
	pthread_cond_broadcast(&J->codec_cv);
	pthread_cond_broadcast(&J->gpu_cv);
	pthread_cond_broadcast(&J->watch_cv);
	pthread_mutex_unlock(&J->lock);
	while ((j = fifo_pop(&drop))) {
		set_error(j, API_E_SHUTTING_DOWN, "the server is shutting down");
		metrics_drop(J->metrics, METRICS_DROP_SHUTDOWN);
		finish(J, j);
	}
	for (int i = 0; i < J->ngpus; i++)
		if (J->gpus[i].started)
			pthread_join(J->gpus[i].th, NULL);
	/* GPU threads are gone: wake the codec threads and watchdog to see in_flight reach 0 */
	pthread_mutex_lock(&J->lock);
	pthread_cond_broadcast(&J->codec_cv);
	pthread_cond_broadcast(&J->watch_cv);
	pthread_mutex_unlock(&J->lock);
	for (int i = 0; i < J->ncodec; i++)
		pthread_join(J->codec[i], NULL);
	if (J->watchdog_started)
		pthread_join(J->watchdog, NULL);
}

/* Whether bytes more fit --memory-budget: 0, JOBS_E_BUDGET_SPENT or JOBS_E_OVER_BUDGET. Caller
 * holds J->lock. */
static int memory_fits_locked(const struct jobs *J, unsigned long long bytes)
{
	if (bytes > J->cfg.memory_budget)
		return JOBS_E_OVER_BUDGET;
	return J->mem_used + bytes > J->cfg.memory_budget ? JOBS_E_BUDGET_SPENT : 0;
}

int jobs_memory_hold(struct jobs *J, unsigned long long bytes)
{
	pthread_mutex_lock(&J->lock);
	int rc = memory_fits_locked(J, bytes);
	if (!rc)
		J->mem_used += bytes;
	pthread_mutex_unlock(&J->lock);
	return rc;
}

int jobs_memory_fits(struct jobs *J, unsigned long long bytes)
{
	pthread_mutex_lock(&J->lock);
	int rc = memory_fits_locked(J, bytes);
	pthread_mutex_unlock(&J->lock);
	return rc;
}

void jobs_memory_release(struct jobs *J, unsigned long long bytes)
{
	pthread_mutex_lock(&J->lock);
	J->mem_used -= bytes;
	pthread_mutex_unlock(&J->lock);
}

int jobs_in_flight(struct jobs *J)
{
	pthread_mutex_lock(&J->lock);
	int n = J->in_flight;
	pthread_mutex_unlock(&J->lock);
	return n;
}

int jobs_create(const struct config *cfg, const int *devices, int ndevices,
                const int (*warm)[2], int nwarm, struct kernels *kernels, struct metrics *metrics,
                struct jobs **out, char err[JOBS_ERR_LEN])
{
	*out = NULL;
	if (ndevices < 1 || ndevices > JOBS_MAX_GPUS || nwarm > JOBS_MAX_WARM) {
		snprintf(err, JOBS_ERR_LEN, "1 to %d GPUs and at most %d warm sizes", JOBS_MAX_GPUS,
		         JOBS_MAX_WARM);
		return JOBS_E_INIT;
	}
	struct jobs *J = calloc(1, sizeof *J);
	if (!J)
		return JOBS_E_NOMEM;
	J->cfg = *cfg;
	J->lim.max_width = J->lim.max_height = (unsigned)cfg->max_side;
	J->lim.max_pixels = cfg->max_pixels;
	J->klim = J->lim;
	if (cfg->kernel_max_pixels < J->klim.max_pixels)
		J->klim.max_pixels = cfg->kernel_max_pixels;
	J->kernels = kernels;
	J->metrics = metrics;
	if (nwarm > 0) /* warm may be NULL when there are none */
		memcpy(J->warm, warm, (size_t)nwarm * sizeof *warm);
	J->nwarm = nwarm;
	J->spare_auto = !strcmp(cfg->spare_plans, "auto");
	/* with several GPU threads a job's is not known while it decodes */
	J->lease_uploads = ndevices == 1 &&
	                   ((cfg->jpeg_upload_lease && cfg->jpeg_planes) || cfg->float_upload_lease);
	char aerr[API_ERR_LEN];
	if (!J->spare_auto && api_parse_sizes(cfg->spare_plans, cfg->max_side, J->spare,
	                                      JOBS_MAX_SPARE, &J->nspare, aerr))
		J->nspare = 0; /* checked at start (fftbloomd.c check_config) */
	pthread_mutex_init(&J->lock, NULL);
	pthread_cond_init(&J->codec_cv, NULL);
	pthread_cond_init(&J->gpu_cv, NULL);
	pthread_cond_init(&J->init_cv, NULL);
	pthread_cond_init(&J->watch_cv, NULL);
	int rc = 0;
	/* 0 (--codec-threads' default, which fftbloomd resolves at start): one per core */
	long ncodec = cfg->codec_threads > 0 ? cfg->codec_threads : par_cores();
	if (ncodec < 1)
		ncodec = 1;
	J->codec = calloc((size_t)ncodec, sizeof *J->codec);
	if (!J->codec) {
		rc = JOBS_E_NOMEM;
		goto fail;
	}
	for (int i = 0; i < ncodec; i++) {
		if (pthread_create(&J->codec[i], NULL, codec_main, J)) {
			snprintf(err, JOBS_ERR_LEN, "cannot start codec thread %d", i);
			rc = JOBS_E_INIT;
			goto fail;
		}
		J->ncodec++;
		char name[16]; /* threads by name for top -H and the e2e suite's CPU by thread */
		snprintf(name, sizeof name, "fb-codec%u", (unsigned)i % 10000u);
		pthread_setname_np(J->codec[i], name);
	}
	if (pthread_create(&J->watchdog, NULL, watchdog_main, J)) {
		snprintf(err, JOBS_ERR_LEN, "cannot start the watchdog thread");
		rc = JOBS_E_INIT;
		goto fail;
	}
	J->watchdog_started = 1;
	pthread_setname_np(J->watchdog, "fb-watchdog");
	for (int i = 0; i < ndevices; i++) {
		struct gpu *g = &J->gpus[i];
		g->J = J;
		atomic_init(&g->uploads_out, 0);
		gpu_cancel_init(g);
		g->id = i;
		g->device = devices[i];
		J->ngpus++;
		if (pthread_create(&g->th, NULL,
		                   J->cfg.gpu.engine == ENGINE_CHOICE_CPU ? cpu_main : gpu_main, g)) {
			snprintf(err, JOBS_ERR_LEN, "cannot start GPU thread %d", i);
			rc = JOBS_E_INIT;
			goto fail;
		}
		g->started = 1;
		char name[16];
		snprintf(name, sizeof name, "fb-gpu%u", (unsigned)i % 10000u);
		pthread_setname_np(g->th, name);
	}
	/* wait for every context */
	pthread_mutex_lock(&J->lock);
	for (;;) {
		int pending = 0, failed = -1;
		for (int i = 0; i < J->ngpus; i++) {
			if (J->gpus[i].failed && failed < 0)
				failed = i;
			else if (!J->gpus[i].alive && !J->gpus[i].failed)
				pending = 1;
		}
		if (failed >= 0) {
			snprintf(err, JOBS_ERR_LEN, "gpu %d: %.990s", failed, J->gpus[failed].init_err);
			rc = JOBS_E_INIT;
			break;
		}
		if (!pending)
			break;
		pthread_cond_wait(&J->init_cv, &J->lock);
	}
	pthread_mutex_unlock(&J->lock);
	if (rc)
		goto fail;
	*out = J;
	return 0;
fail:
	jobs_destroy(J);
	return rc;
}

void jobs_destroy(struct jobs *J)
{
	if (!J)
		return;
	jobs_shutdown(J);
	for (int i = 0; i < NEW_SIZE_CLIENTS; i++) {
		free(J->clients[i].t);
		free(J->clients[i].key);
	}
	free(J->codec);
	pthread_cond_destroy(&J->codec_cv);
	pthread_cond_destroy(&J->gpu_cv);
	pthread_cond_destroy(&J->init_cv);
	pthread_cond_destroy(&J->watch_cv);
	pthread_mutex_destroy(&J->lock);
	free(J);
}


void jobs_set_idle(struct jobs *J, int mode)
{
	pthread_mutex_lock(&J->lock);
	J->idle_mode = mode;
	for (int i = 0; i < J->ngpus && mode == JOBS_IDLE_BUILD; i++)
		J->gpus[i].idle_pending = 1; /* until its thread says what it has (its next turn) */
	pthread_cond_broadcast(&J->gpu_cv);
	pthread_mutex_unlock(&J->lock);
}

void jobs_hand_shapes(struct jobs *J, const struct jobs_shape *s, int n)
{
	pthread_mutex_lock(&J->lock);
	J->nhanded = n < 0 ? 0 : n > JOBS_SHAPES ? JOBS_SHAPES : n;
	memcpy(J->handed, s, sizeof J->handed[0] * (size_t)J->nhanded);
	J->handed_gen++;
	pthread_cond_broadcast(&J->gpu_cv);
	pthread_mutex_unlock(&J->lock);
}

void jobs_set_stored(struct jobs *J, jobs_stored_fn fn, void *ctx)
{
	J->stored = fn;
	J->stored_ctx = ctx;
}
