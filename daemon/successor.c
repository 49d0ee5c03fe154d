/* A --compile-mode process worker before its server starts; see successor.h. */
#include "daemon/successor.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/format.h"
#include "api/request.h"
#include "codec/image.h"
#include "core/clock.h"
#include "core/log.h"

/* --compile-mode process, before the server starts: the GPU threads build the frames' shapes
 * handed by the serving worker (if any) and every piece of idle work back to back, the worker's
 * beat published meanwhile (not ready, not serving). Returns 0 when done, 1 when a stop signal
 * came first, -1 when a GPU thread failed; *hup: a SIGHUP came meanwhile (reloaded once this
 * worker serves). */
static int build_before_serving(struct service *svc, struct jobs *jobs, const sigset_t *set,
                                const struct jobs_shape *hs, int nh, int *hup)
{
	struct jobs_status *st = malloc(sizeof *st);
	if (!st)
		return -1;
	jobs_set_idle(jobs, JOBS_IDLE_BUILD);
	if (nh)
		jobs_hand_shapes(jobs, hs, nh);
	double t0 = clock_s();
	int rc = 0;
	for (;;) {
		struct service_conns none;
		memset(&none, 0, sizeof none);
		service_publish(svc, jobs, &none, 0, 0);
		jobs_status(jobs, st);
		int done = st->ngpus > 0;
		for (int g = 0; g < st->ngpus; g++) {
			if (!st->gpu[g].alive || st->gpu[g].warm_failed) {
				log_msg(LOG_ERROR, "gpu %d failed while building its plans", g);
				rc = -1;
				break;
			}
			done &= st->gpu[g].warmed && !st->gpu[g].idle_pending;
		}
		if (rc || done)
			break;
		struct timespec tick = {0, 100 * 1000000L};
		int sig = sigtimedwait(set, NULL, &tick);
		if (sig == SIGTERM || sig == SIGINT || sig == SIGQUIT) {
			log_msg(LOG_INFO, "signal %d while building the plans: stopping", sig);
			rc = 1;
			break;
		}
		*hup |= sig == SIGHUP;
	}
	if (!rc)
		log_msg(LOG_INFO, "plans built and idle work done in %.1f s (%d frame shapes handed): "
		        "serving; idle work from now on is a successor's", clock_s() - t0, nh);
	free(st);
	jobs_set_idle(jobs, JOBS_IDLE_OFF);
	return rc;
}

struct warm_done {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int left;
};

static void warm_job_done(struct job *j, void *ctx)
{
	struct warm_done *w = ctx;
	(void)j;
	pthread_mutex_lock(&w->mu);
	w->left--;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

#define WARM_FRAMES 4 /* frame sizes a successor runs a JPEG frame of before it serves */

/* --compile-mode process, once the plans are built and before the server starts, on a GPU: a
 * JPEG frame (4:2:0, answered as a JPEG, the parameters of its shape) of each of the newest
 * handed shapes' sizes (WARM_FRAMES at most; none handed: the start plan's 1920x1080 with the
 * defaults), one a GPU thread at once, through the whole path a request takes (decode, upload,
 * the GPU's JPEG stages, encode), so that the first request does not meet the stages' first
 * dispatches and the upload buffers' making (27-29 ms against 10-12 on an H200). Answers are
 * dropped, the frames counted in no metric or counter; a failure is logged and changes
 * nothing. */
static void warm_jpeg_frames(struct jobs *jobs, const struct jobs_shape *hs, int nh)
{
	struct jobs_status *st = malloc(sizeof *st);
	if (!st)
		return;
	jobs_status(jobs, st); /* kept: the counters before, which these frames leave as they were */
	int ngpus = st->ngpus, software = ngpus && st->gpu[0].software;
	if (!ngpus || software) {
		free(st);
		return; /* a software renderer: seconds a frame, and nothing to gain */
	}
	struct jobs_shape one;
	memset(&one, 0, sizeof one);
	one.w = 1920, one.h = 1080;
	struct request def;
	request_init(&def, REQUEST_BLOOM);
	one.p = def.p;
	if (!nh)
		hs = &one, nh = 1;
	double t0 = clock_s();
	int done_sizes = 0, failed = 0;
	for (int i = 0; i < nh && done_sizes < WARM_FRAMES; i++) {
		int seen = 0;
		for (int k = 0; k < i; k++)
			seen |= hs[k].w == hs[i].w && hs[k].h == hs[i].h;
		if (seen || hs[i].w < 1 || hs[i].h < 1)
			continue;
		done_sizes++;
		struct image img = {hs[i].w, hs[i].h, 3, NULL, NULL, NULL};
		img.pixels = malloc(sizeof(float) * 3 * (size_t)img.width * (size_t)img.height);
		unsigned char *jpeg = NULL;
		size_t len = 0;
		unsigned lost;
		char ierr[IMAGE_ERR_LEN];
		struct image_encode_opts eo = {.quality = 90, .subsampling = 420};
		for (size_t p = 0; img.pixels && p < 3 * (size_t)img.width * (size_t)img.height; p++)
			img.pixels[p] = (float)((p * 2654435761u) % 1000u) / 1000.0f;
		int erc = img.pixels ? image_encode(&img, IMAGE_FORMAT_JPEG, &eo, &jpeg, &len, &lost,
		                                    ierr) : -1;
		free(img.pixels);
		if (erc) {
			failed++;
			continue;
		}
		struct job *j = calloc((size_t)ngpus, sizeof *j);
		struct warm_done w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
		for (int g = 0; j && g < ngpus; g++) {
			j[g].kind = JOB_BLOOM;
			j[g].image = jpeg, j[g].image_len = len;
			request_init(&j[g].req, REQUEST_BLOOM);
			j[g].req.p = hs[i].p;
			j[g].req.format = OUT_JPEG;
			j[g].client_fd = -1;
			snprintf(j[g].client, sizeof j[g].client, "warm-up");
			j[g].internal = 1;
			j[g].done = warm_job_done, j[g].done_ctx = &w;
			char rerr[REQUEST_ERR_LEN];
			if (request_finish(&j[g].req, 0, rerr) || jobs_reserve(jobs, JOB_BLOOM)) {
				failed++;
				continue;
			}
			pthread_mutex_lock(&w.mu);
			w.left++;
			pthread_mutex_unlock(&w.mu);
			jobs_start(jobs, &j[g]);
		}
		pthread_mutex_lock(&w.mu);
		while (w.left > 0)
			pthread_cond_wait(&w.cv, &w.mu);
		pthread_mutex_unlock(&w.mu);
		for (int g = 0; j && g < ngpus; g++) {
			failed += j[g].status >= 400;
			free(j[g].body);
		}
		free(j);
		free(jpeg);
	}
	jobs_discount(jobs, st);
	free(st);
	log_msg(failed ? LOG_WARN : LOG_INFO, "%d JPEG frame size%s run through the whole path "
	        "before serving in %.1f ms%s", done_sizes, done_sizes == 1 ? "" : "s",
	        (clock_s() - t0) * 1e3, failed ? " (some failed: their first requests pay instead)"
	                                       : "");
}

int successor_prepare(struct service *svc, struct jobs *jobs, const sigset_t *set, int *hup)
{
	struct jobs_shape *hs = malloc(sizeof *hs * JOBS_SHAPES);
	if (!hs)
		return -1;
	int nh = service_handed(svc, hs), rc = 0;
	if (service_quick(svc)) {
		/* a serving worker restarted after a fault: it serves once warm, and the shapes it
		 * served, wanted again, are a successor's to build (no GPU left answering meanwhile) */
		jobs_set_idle(jobs, JOBS_IDLE_OFF);
		if (nh)
			jobs_hand_shapes(jobs, hs, nh);
		log_msg(LOG_INFO, "restarted after a fault: serving once warm; %d frame shapes wanted "
		        "for a successor", nh);
	} else if (!(rc = build_before_serving(svc, jobs, set, hs, nh, hup))) {
		warm_jpeg_frames(jobs, hs, nh);
	}
	free(hs);
	return rc;
}
