/* Codec pool, GPU threads, bounded queue and watchdog; see jobs.h. */
#include "daemon/jobs.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/apiutil.h"
#include "daemon/log.h"
#include "gles/egl.h"
#include "gles/program.h"
#include "gles/wisdom.h"

struct fifo {
	struct job *head, *tail;
};

#define NEW_SIZE_CLIENTS 1024 /* client addresses whose new sizes are counted at once */
#define NEW_SIZE_WINDOW 60.0  /* seconds --new-sizes-per-minute counts over */

/* The padded sizes a client address had planned anew within the last minute. */
struct new_sizes {
	char client[64];
	double *t;                 /* when, oldest first; --new-sizes-per-minute of them at most */
	unsigned long long *key;   /* which (bloom_plan_known's key) */
	int n;
};

struct gpu {
	struct jobs *J;
	int id, device;
	pthread_t th;
	int started;
	/* guarded by J->lock */
	int alive, failed, warmed, warm_failed, busy;
	double heartbeat, busy_s;
	unsigned long long njobs, nfail;
	int lent;                            /* planes lent by this context, not yet given back */
	unsigned long long lent_total;
	char platform[16], renderer[256], version[128];
	char init_err[BLOOM_ERR_LEN];
	struct program_stats ps;
	struct bloom_cache_stats bs;
};

struct jobs {
	struct config cfg;
	struct image_limits lim, klim; /* images; kernels (--kernel-max-pixels) */
	struct kernels *kernels;
	struct metrics *metrics;
	int warm[JOBS_MAX_WARM][2], nwarm;

	pthread_mutex_t lock;
	pthread_cond_t codec_cv, gpu_cv, init_cv, watch_cv;
	struct fifo decode, gpuq, encode;
	int waiting;   /* admitted jobs not yet taken by a GPU thread (or, for a kernel PUT, not
	                  yet decoded): the queue's depth */
	unsigned long long mem_used; /* bytes reserved for decoded images (--memory-budget) */
	int in_flight; /* submitted, done() not yet returned */
	int stop;      /* no new jobs; threads exit when their queues are empty */
	int joined;    /* jobs_shutdown ran */

	struct new_sizes clients[NEW_SIZE_CLIENTS]; /* guarded by lock */
	pthread_t *codec;
	int ncodec;
	pthread_t watchdog;
	int watchdog_started;
	struct gpu gpus[JOBS_MAX_GPUS];
	int ngpus;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void fifo_push(struct fifo *f, struct job *j)
{
	j->next = NULL;
	if (f->tail)
		f->tail->next = j;
	else
		f->head = j;
	f->tail = j;
}

static struct job *fifo_pop(struct fifo *f)
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

static int is_gpu_kind(const struct job *j)
{
	return j->kind == JOB_BLOOM || j->kind == JOB_CONVOLVE;
}

/* Gives j's place in the queue back, once. Caller holds the lock. */
static void unqueue(struct jobs *J, struct job *j)
{
	if (j->queued) {
		j->queued = 0;
		J->waiting--;
	}
}

/* Decoded bytes a pixel reserves: the image in and the result (float RGBA each, or JPEG planes
 * in and out), or a kernel. */
enum { COST_FLOAT = 32, COST_PLANES = 8, COST_KERNEL = 16 };

/* image_limits.admit: reserves w x h pixels of the job's image or kernel against
 * --memory-budget, replacing what that image reserved before. */
static int admit_image(void *ctx, unsigned long long w, unsigned long long h, char *err)
{
	struct job_admit *a = ctx;
	struct jobs *J = a->J;
	struct job *j = a->j;
	int cost = a->which == 1 ? COST_KERNEL : a->which == 2 ? COST_PLANES : COST_FLOAT;
	int slot = a->which == 1;
	unsigned long long want = w * h * (unsigned long long)cost, budget = J->cfg.memory_budget;
	if (want > budget) {
		snprintf(err, IMAGE_ERR_LEN, "%s of %llux%llu needs %llu MiB, more than the whole "
		         "--memory-budget of %llu MiB", slot ? "a kernel" : "an image", w, h, want >> 20,
		         budget >> 20);
		return IMAGE_E_TOO_LARGE;
	}
	pthread_mutex_lock(&J->lock);
	unsigned long long others = J->mem_used - j->reserved[slot];
	if (others + want > budget) {
		pthread_mutex_unlock(&J->lock);
		snprintf(err, IMAGE_ERR_LEN, "the %s of %llux%llu needs %llu MiB; the requests in "
		         "progress hold %llu of the %llu MiB --memory-budget", slot ? "kernel" : "image",
		         w, h, want >> 20, others >> 20, budget >> 20);
		return IMAGE_E_BUSY;
	}
	J->mem_used = others + want;
	j->reserved[slot] = want;
	pthread_mutex_unlock(&J->lock);
	return 0;
}

/* Limits for decoding j's image (which 0: float, 2: JPEG planes) or kernel (1), with the
 * admission hook. */
static struct image_limits job_limits(struct jobs *J, struct job *j, int which)
{
	struct image_limits l = which == 1 ? J->klim : J->lim;
	j->admit[which == 1] = (struct job_admit){J, j, which};
	l.admit = admit_image;
	l.admit_ctx = &j->admit[which == 1];
	return l;
}

static void set_error(struct job *j, int status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void set_error(struct job *j, int status, const char *code, const char *fmt, ...)
{
	j->status = status;
	snprintf(j->code, sizeof j->code, "%s", code);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(j->message, sizeof j->message, fmt, ap);
	va_end(ap);
}

/* Answers j: frees what the job held, calls done(), then counts it out. Called without the lock;
 * j belongs to the submitter again once done() starts. */
static void finish(struct jobs *J, struct job *j)
{
	image_free(&j->in);
	image_free(&j->kimg);
	image_free(&j->result);
	yuv_image_free(&j->yin);
	int lent_by = j->lease ? j->gpu : -1; /* read now: j is the submitter's once done() starts */
	if (j->lease) { /* planes lent by the GPU thread's context: given back, not freed */
		j->yresult.data = NULL;
		bloom_lease_return(j->lease);
		j->lease = NULL;
	}
	yuv_image_free(&j->yresult);
	kernels_release(J->kernels, j->named);
	j->named = NULL;
	if (j->status < 400 && !j->dropped) {
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

/* Maps an image_error from decoding to an HTTP status and code. */
static void decode_error(struct job *j, int rc, const char *what, const char *msg)
{
	switch (rc) {
	case IMAGE_E_UNSUPPORTED:
		set_error(j, 415, "unsupported_image", "%s: %s", what, msg);
		break;
	case IMAGE_E_TOO_LARGE:
		set_error(j, 413, "image_too_large", "%s: %s", what, msg);
		break;
	case IMAGE_E_NOMEM:
		set_error(j, 503, "out_of_memory", "%s: %s", what, msg);
		break;
	case IMAGE_E_BUSY:
		set_error(j, 503, "memory_budget", "%s: %s; retry later", what, msg);
		break;
	case IMAGE_E_EMPTY:
		set_error(j, 422, "image_empty", "%s: %s", what, msg);
		break;
	case IMAGE_E_TRUNCATED:
		set_error(j, 422, "image_truncated", "%s: %s", what, msg);
		break;
	default:
		set_error(j, 422, "image_corrupt", "%s: %s", what, msg);
	}
}

static void kernel_put_answer(struct jobs *J, struct job *j)
{
	struct image_info info = j->info;
	int w = j->in.width, h = j->in.height, c = j->in.channels;
	int replaced = 0;
	int rc = kernels_put(J->kernels, j->put_name, &j->in, &info, &replaced);
	if (rc == KERNELS_E_FULL) {
		set_error(j, 409, "kernel_registry_full", "%d kernels are registered already "
		          "(--max-kernels); DELETE one first", J->cfg.max_kernels);
		return;
	}
	unsigned long long kb = (unsigned long long)w * h * c * sizeof(float);
	if (rc == KERNELS_E_TOO_LARGE) {
		set_error(j, 413, "kernel_too_large", "the %dx%d kernel takes %llu KiB, more than the "
		          "whole --kernel-memory of %llu KiB", w, h, kb >> 10,
		          J->cfg.kernel_memory >> 10);
		return;
	}
	if (rc == KERNELS_E_BYTES) {
		size_t nk, held;
		kernels_totals(J->kernels, &nk, &held);
		set_error(j, 409, "kernel_memory_full", "the %dx%d kernel takes %llu KiB; the %zu "
		          "kernels registered hold %zu of the %llu KiB --kernel-memory; DELETE one "
		          "first", w, h, kb >> 10, nk, held >> 10, J->cfg.kernel_memory >> 10);
		return;
	}
	if (rc) {
		set_error(j, rc == KERNELS_E_NAME ? 400 : 500, "kernel_rejected", "%s",
		          kernels_strerror(rc));
		return;
	}
	struct kernel_entry *e = kernels_get(J->kernels, j->put_name);
	char digest[40] = "";
	if (e)
		snprintf(digest, sizeof digest, "%016llx%016llx", (unsigned long long)e->digest[0],
		         (unsigned long long)e->digest[1]);
	kernels_release(J->kernels, e);
	json_t *o = json_pack("{s:s,s:i,s:i,s:i,s:s,s:s,s:b}", "name", j->put_name, "width", w,
	                      "height", h, "channels", c, "format", image_format_name(info.format),
	                      "digest", digest, "replaced", replaced);
	char *s = o ? json_dumps(o, JSON_INDENT(2)) : NULL;
	json_decref(o);
	char *t = s ? realloc(s, strlen(s) + 2) : NULL;
	if (t)
		strcat(s = t, "\n");
	if (!s) {
		set_error(j, 500, "out_of_memory", "out of memory");
		return;
	}
	j->status = replaced ? 200 : 201;
	j->body = (unsigned char *)s;
	j->body_len = strlen(s);
	j->content_type = "application/json";
}

static void do_decode(struct jobs *J, struct job *j)
{
	double t0 = now_s();
	char err[IMAGE_ERR_LEN];
	int rc = IMAGE_E_UNSUPPORTED;
	/* JPEG frames stay as planes for the GPU to convert, unless they carry what planes cannot */
	struct image_limits lim;
	if (J->cfg.jpeg_planes && j->kind != JOB_KERNEL_PUT &&
	    image_sniff(j->image, j->image_len) == IMAGE_FORMAT_JPEG) {
		lim = job_limits(J, j, 2);
		rc = image_decode_jpeg_yuv(j->image, j->image_len, &lim, &j->yin, &j->info, err);
	}
	if (rc == IMAGE_E_UNSUPPORTED) {
		lim = job_limits(J, j, j->kind == JOB_KERNEL_PUT ? 1 : 0);
		rc = image_decode(j->image, j->image_len, &lim, &j->in, &j->info, err);
	}
	if (rc) {
		decode_error(j, rc, j->kind == JOB_KERNEL_PUT ? "kernel" : "image", err);
	} else if (j->kernel_data) {
		struct image_info ki;
		lim = job_limits(J, j, 1);
		rc = image_decode(j->kernel_data, j->kernel_len, &lim, &j->kimg, &ki, err);
		if (rc)
			decode_error(j, rc, "kernel", err);
	}
	double t1 = now_s();
	j->decode_s = t1 - t0;
	j->deadline += j->decode_s; /* the deadline counts waiting, not the job's own decoding */
	if (j->kind == JOB_KERNEL_PUT) { /* its queue place was for the decoding */
		if (!rc)
			kernel_put_answer(J, j);
		finish(J, j);
		return;
	}
	pthread_mutex_lock(&J->lock);
	if (!rc && t1 > j->deadline) {
		set_error(j, 504, "deadline_exceeded", "the job waited longer than the %g s deadline",
		          J->cfg.deadline);
		metrics_drop(J->metrics, METRICS_DROP_DEADLINE);
		rc = -1;
	}
	if (rc) {
		pthread_mutex_unlock(&J->lock);
		finish(J, j);
		return;
	}
	j->t_queued = now_s();
	fifo_push(&J->gpuq, j);
	pthread_cond_signal(&J->gpu_cv);
	pthread_mutex_unlock(&J->lock);
}

static void do_encode(struct jobs *J, struct job *j)
{
	double t0 = now_s();
	enum image_format fmt;
	struct image_encode_opts eo;
	memset(&eo, 0, sizeof eo);
	format_resolve(j->req.format, j->png_from_accept, &j->info, &fmt, &eo.bits);
	eo.quality = j->req.quality ? j->req.quality : J->cfg.jpeg_quality;
	eo.subsampling = J->cfg.jpeg_subsampling ? 420 : 444;
	char err[IMAGE_ERR_LEN];
	int rc;
	if (j->yresult.data) /* planes made on the GPU; lost came with them */
		rc = image_encode_jpeg_yuv(&j->yresult, eo.quality, &j->body, &j->body_len, err);
	else
		rc = image_encode(&j->result, fmt, &eo, &j->body, &j->body_len, &j->lost, err);
	j->encode_s = now_s() - t0;
	if (rc) {
		j->body = NULL;
		j->body_len = 0;
		set_error(j, 500, "encode_failed", "encoding %s: %s", image_format_name(fmt), err);
	} else {
		j->status = 200;
		j->content_type = format_content_type(fmt);
	}
	finish(J, j);
}

static void *codec_main(void *arg)
{
	struct jobs *J = arg;
	pthread_mutex_lock(&J->lock);
	for (;;) {
		struct job *j;
		if ((j = fifo_pop(&J->encode))) { /* finishing work first frees memory first */
			pthread_mutex_unlock(&J->lock);
			do_encode(J, j);
			pthread_mutex_lock(&J->lock);
		} else if ((j = fifo_pop(&J->decode))) {
			pthread_mutex_unlock(&J->lock);
			do_decode(J, j);
			pthread_mutex_lock(&J->lock);
		} else if (J->stop && J->in_flight == 0) {
			break;
		} else {
			pthread_cond_wait(&J->codec_cv, &J->lock);
		}
	}
	pthread_mutex_unlock(&J->lock);
	return NULL;
}

static int bloom_status(int rc, const char **code)
{
	switch (rc) {
	case BLOOM_E_ARG: *code = "invalid_request"; return 422;
	case BLOOM_E_TOO_LARGE: *code = "too_large_for_gpu"; return 413;
	case BLOOM_E_NOMEM: *code = "out_of_memory"; return 503;
	default: *code = "gpu_error"; return 500;
	}
}

/* Counts a new padded size (key) for client, if its budget allows: 0, or the seconds until it
 * does (the job is then refused). A size the client was charged for within the window is free,
 * whichever GPU thread plans it. Caller holds the lock. */
static double charge_new_size(struct jobs *J, const char *client, unsigned long long key,
                              double now)
{
	int limit = J->cfg.new_sizes_per_minute;
	struct new_sizes *e = NULL, *free_slot = NULL, *oldest = NULL;
	for (int i = 0; i < NEW_SIZE_CLIENTS; i++) {
		struct new_sizes *c = &J->clients[i];
		while (c->n && now - c->t[0] > NEW_SIZE_WINDOW) { /* forget what left the window */
			memmove(c->t, c->t + 1, (size_t)(c->n - 1) * sizeof *c->t);
			memmove(c->key, c->key + 1, (size_t)(c->n - 1) * sizeof *c->key);
			c->n--;
		}
		if (c->n && !strcmp(c->client, client))
			e = c;
		else if (!c->n && !free_slot)
			free_slot = c;
		else if (c->n && (!oldest || c->t[c->n - 1] < oldest->t[oldest->n - 1]))
			oldest = c;
	}
	if (!e) {
		e = free_slot ? free_slot : oldest; /* a full table forgets its longest-quiet client */
		if (!e->t)
			e->t = calloc((size_t)limit, sizeof *e->t);
		if (!e->key)
			e->key = calloc((size_t)limit, sizeof *e->key);
		if (!e->t || !e->key)
			return 0; /* out of memory: not counted rather than refused */
		snprintf(e->client, sizeof e->client, "%s", client);
		e->n = 0;
	}
	for (int i = 0; i < e->n; i++)
		if (e->key[i] == key)
			return 0;
	if (e->n >= limit)
		return NEW_SIZE_WINDOW - (now - e->t[0]);
	e->key[e->n] = key;
	e->t[e->n++] = now;
	return 0;
}

/* Keeps a GPU thread's programs within --max-programs and --program-memory: the least recently
 * used that no plan holds go first, then the least recently used plans (which release theirs).
 * Between jobs, on the GPU thread. */
static void trim_programs(struct jobs *J, struct program_cache *pc, struct bloom_ctx *b)
{
	size_t max = (size_t)J->cfg.max_programs, bytes = (size_t)J->cfg.program_memory;
	for (;;) {
		program_cache_trim(pc, max, bytes);
		struct program_stats ps;
		program_cache_stats(pc, &ps);
		if ((ps.count <= max && ps.bytes <= bytes) || bloom_release_plan(b))
			return;
	}
}

static void gpu_warm(struct gpu *g, struct bloom_ctx *b)
{
	struct jobs *J = g->J;
	if (!J->nwarm)
		return;
	struct request req;
	request_init(&req, REQUEST_BLOOM);
	const struct bloom_params *p = &req.p;
	struct image k;
	char err[BLOOM_ERR_LEN];
	int rc = bloom_kernel_preset(b, &p->preset, &k, err);
	for (int i = 0; !rc && i < J->nwarm; i++) {
		double t0 = now_s();
		rc = bloom_warm(b, J->warm[i][0], J->warm[i][1], k.width, k.height, p, err);
		if (!rc)
			log_msg(LOG_INFO, "gpu %d: warmed %dx%d in %.1f ms", g->id, J->warm[i][0],
			        J->warm[i][1], (now_s() - t0) * 1e3);
		pthread_mutex_lock(&J->lock);
		g->heartbeat = now_s();
		pthread_mutex_unlock(&J->lock);
	}
	image_free(&k);
	if (rc) {
		log_msg(LOG_ERROR, "gpu %d: warm-up failed: %s", g->id, err);
		pthread_mutex_lock(&J->lock);
		g->warm_failed = 1;
		pthread_mutex_unlock(&J->lock);
	}
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
	format_resolve(j->req.format, j->png_from_accept, &j->info, &fmt, &bits);
	struct bloom_frame f = {j->yin.data ? NULL : &j->in, j->yin.data ? &j->yin : NULL};
	struct bloom_result res;
	memset(&res, 0, sizeof res);
	res.want_yuv = J->cfg.jpeg_planes && fmt == IMAGE_FORMAT_JPEG;
	res.sub_x = res.sub_y = J->cfg.jpeg_subsampling ? 2 : 1;
	res.lend = J->cfg.lend_planes;
	int known = 1, rc = 0;
	unsigned long long key = 0;
	if (J->cfg.new_sizes_per_minute > 0)
		rc = bloom_plan_known(b, &f, &bk, &j->req.p, &known, &key, err);
	if (!rc && !known) {
		pthread_mutex_lock(&J->lock);
		double wait = charge_new_size(J, j->client, key, now_s());
		pthread_mutex_unlock(&J->lock);
		if (wait > 0) {
			set_error(j, 429, "too_many_new_sizes", "this client sent %d images of sizes the GPU "
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
		rc = bloom_run_frame(b, op, &f, &bk, &j->req.p, 0, &res, &st, err);
	j->lease = res.lease;
	j->gpu_copy_s = st.copy_ms * 1e-3;
	j->gpu_wait_s = st.wait_ms * 1e-3;
	j->result = res.img;
	j->yresult = res.yuv;
	j->lost = res.lost;
	if (rc) {
		const char *code;
		int status = bloom_status(rc, &code);
		set_error(j, status, code, "%s", err[0] ? err : bloom_strerror(rc));
		if (status >= 500)
			log_msg(LOG_ERROR, "gpu %d: bloom_run failed: %s", g->id, j->message);
	} else if (res.nonfinite) {
		set_error(j, 422, "result_not_finite", "%llu samples of the result are not finite: "
		          "float32 overflowed in the convolution (an image or kernel value near 3.4e38, "
		          "or infinite); scale the image or kernel down",
		          (unsigned long long)res.nonfinite);
		if (j->lease) {
			j->yresult.data = NULL;
			bloom_lease_return(j->lease);
			j->lease = NULL;
		}
		image_free(&j->result);
		yuv_image_free(&j->yresult);
	}
	image_free(&j->in);
	yuv_image_free(&j->yin);
	image_free(&j->kimg);
	j->gpu = g->id;
}

static void *gpu_main(void *arg)
{
	struct gpu *g = arg;
	struct jobs *J = g->J;
	struct egl_opts eo = {J->cfg.gpu.platform, g->device, J->cfg.gpu.gl_debug};
	struct egl_ctx *ctx = NULL;
	struct program_cache *pc = NULL;
	struct fft_wisdom *wisdom = NULL;
	struct bloom_ctx *b = NULL;
	char eerr[EGL_ERR_LEN];
	int rc = egl_ctx_create(&eo, &log_gles_sink, &ctx, eerr);
	if (rc)
		snprintf(g->init_err, sizeof g->init_err, "device %d: no OpenGL ES 3.1 context: %s",
		         g->device, eerr);
	if (!rc && (rc = program_cache_create(J->cfg.gpu.shader_dir, &log_gles_sink, &pc)))
		snprintf(g->init_err, sizeof g->init_err, "device %d: program cache: %s", g->device,
		         program_strerror(rc));
	if (!rc) { /* persisted program binaries and FFT wisdom, per driver (--program-cache,
	            * --fft-wisdom); each GPU thread keeps its own */
		const struct egl_info *i = egl_ctx_info(ctx);
		char driver[512];
		snprintf(driver, sizeof driver, "%.250s / %.120s", i->renderer, i->version);
		if (J->cfg.gpu.program_cache[0])
			program_cache_set_binary_dir(pc, J->cfg.gpu.program_cache, driver);
		if (J->cfg.gpu.fft_wisdom[0] &&
		    (rc = fft_wisdom_create(J->cfg.gpu.fft_wisdom, driver, &log_gles_sink, &wisdom)))
			snprintf(g->init_err, sizeof g->init_err, "device %d: FFT wisdom: out of memory",
			         g->device);
	}
	if (!rc) {
		struct bloom_ctx_opts bo = {.kernel_cache_bytes = (size_t)J->cfg.kernel_cache,
		                            .max_plans = J->cfg.max_plans, .wisdom = wisdom,
		                            .no_persistent_map = !J->cfg.persistent_map};
		static __thread char berr[BLOOM_ERR_LEN];
		if ((rc = bloom_ctx_create(pc, egl_ctx_info(ctx), &bo, &log_gles_sink, &b, berr)))
			snprintf(g->init_err, sizeof g->init_err, "device %d: %.3900s", g->device, berr);
	}
	pthread_mutex_lock(&J->lock);
	if (rc) {
		g->failed = 1;
	} else {
		const struct egl_info *i = egl_ctx_info(ctx);
		snprintf(g->platform, sizeof g->platform, "%s", i->platform);
		snprintf(g->renderer, sizeof g->renderer, "%s", i->renderer);
		snprintf(g->version, sizeof g->version, "%s", i->version);
		g->alive = 1;
		g->heartbeat = now_s();
	}
	pthread_cond_broadcast(&J->init_cv);
	pthread_mutex_unlock(&J->lock);
	if (rc)
		goto out;
	log_msg(LOG_INFO, "gpu %d: '%s' (%s) on the %s platform", g->id, g->renderer, g->version,
	        g->platform);
	gpu_warm(g, b);
	pthread_mutex_lock(&J->lock);
	g->warmed = 1;
	g->heartbeat = now_s();
	for (;;) {
		struct job *j = fifo_pop(&J->gpuq);
		if (!j) {
			if (J->stop && J->waiting == 0)
				break;
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 250 * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&J->gpu_cv, &J->lock, &ts);
			g->heartbeat = now_s();
			continue;
		}
		unqueue(J, j);
		g->busy = 1;
		double t0 = now_s();
		j->queue_s = t0 - j->t_queued;
		pthread_mutex_unlock(&J->lock);

		gpu_run(g, b, j);
		double t1 = now_s();
		j->gpu_s = t1 - t0;

		pthread_mutex_lock(&J->lock);
		g->busy = 0;
		g->busy_s += j->gpu_s;
		g->njobs++;
		if (j->lease) {
			g->lent++;
			g->lent_total++;
		}
		if (j->status >= 400)
			g->nfail++;
		g->heartbeat = t1;
		pthread_mutex_unlock(&J->lock);
		trim_programs(J, pc, b);
		pthread_mutex_lock(&J->lock);
		program_cache_stats(pc, &g->ps);
		bloom_ctx_stats(b, &g->bs);
		if (j->status >= 400) {
			pthread_mutex_unlock(&J->lock);
			finish(J, j);
			pthread_mutex_lock(&J->lock);
		} else {
			fifo_push(&J->encode, j);
			pthread_cond_signal(&J->codec_cv);
		}
	}
	g->alive = 0;
	pthread_mutex_unlock(&J->lock);
out:
	bloom_ctx_destroy(b);
	fft_wisdom_destroy(wisdom);
	program_cache_destroy(pc);
	egl_ctx_destroy(ctx);
	return NULL;
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
			set_error(j, 504, "deadline_exceeded",
			          "the job waited %.3f s for a GPU, beyond the %g s deadline",
			          now - j->t_admit, J->cfg.deadline);
			metrics_drop(J->metrics, METRICS_DROP_DEADLINE);
		} else {
			j->dropped = 1;
			set_error(j, 499, "client_gone", "the client closed the connection");
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
		double t = now_s();
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
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20 * 1000000L; /* deadlines are kept to about 20 ms */
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&J->watch_cv, &J->lock, &ts);
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
	j->retry_after = 0;
	j->code[0] = j->message[0] = 0;
	j->body = NULL;
	j->body_len = 0;
	j->content_type = NULL;
	j->dropped = 0;
	j->lost = 0;
	j->gpu = -1;
	j->decode_s = j->queue_s = j->gpu_s = j->encode_s = j->gpu_copy_s = j->gpu_wait_s = 0;
	memset(&j->in, 0, sizeof j->in);
	memset(&j->kimg, 0, sizeof j->kimg);
	memset(&j->result, 0, sizeof j->result);
	memset(&j->info, 0, sizeof j->info);
	j->lease = NULL;
	j->queued = 1; /* the place jobs_reserve took */
	j->reserved[0] = j->reserved[1] = 0;
	j->t_admit = now_s();
	j->deadline = j->t_admit + J->cfg.deadline;
	pthread_mutex_lock(&J->lock);
	fifo_push(&J->decode, j);
	pthread_cond_signal(&J->codec_cv);
	pthread_mutex_unlock(&J->lock);
}

void jobs_status(struct jobs *J, struct jobs_status *st)
{
	memset(st, 0, sizeof *st);
	double t = now_s();
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
		s->heartbeat_age = g->alive ? t - g->heartbeat : 0;
		s->busy_s = g->busy_s;
		s->jobs = g->njobs;
		s->failures = g->nfail;
		s->planes_lent = g->lent;
		s->planes_lent_total = g->lent_total;
		s->programs = g->ps;
		s->caches = g->bs;
	}
	pthread_mutex_unlock(&J->lock);
}

int jobs_ready(struct jobs *J, char *why, size_t len)
{
	struct jobs_status st;
	jobs_status(J, &st);
	for (int i = 0; i < st.ngpus; i++) {
		const struct jobs_gpu_status *g = &st.gpu[i];
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
	pthread_cond_broadcast(&J->codec_cv);
	pthread_cond_broadcast(&J->gpu_cv);
	pthread_cond_broadcast(&J->watch_cv);
	pthread_mutex_unlock(&J->lock);
	while ((j = fifo_pop(&drop))) {
		set_error(j, 503, "shutting_down", "the server is shutting down");
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
	pthread_mutex_init(&J->lock, NULL);
	pthread_cond_init(&J->codec_cv, NULL);
	pthread_cond_init(&J->gpu_cv, NULL);
	pthread_cond_init(&J->init_cv, NULL);
	pthread_cond_init(&J->watch_cv, NULL);
	int rc = 0;
	J->codec = calloc((size_t)cfg->codec_threads, sizeof *J->codec);
	if (!J->codec) {
		rc = JOBS_E_NOMEM;
		goto fail;
	}
	for (int i = 0; i < cfg->codec_threads; i++) {
		if (pthread_create(&J->codec[i], NULL, codec_main, J)) {
			snprintf(err, JOBS_ERR_LEN, "cannot start codec thread %d", i);
			rc = JOBS_E_INIT;
			goto fail;
		}
		J->ncodec++;
	}
	if (pthread_create(&J->watchdog, NULL, watchdog_main, J)) {
		snprintf(err, JOBS_ERR_LEN, "cannot start the watchdog thread");
		rc = JOBS_E_INIT;
		goto fail;
	}
	J->watchdog_started = 1;
	for (int i = 0; i < ndevices; i++) {
		struct gpu *g = &J->gpus[i];
		g->J = J;
		g->id = i;
		g->device = devices[i];
		J->ngpus++;
		if (pthread_create(&g->th, NULL, gpu_main, g)) {
			snprintf(err, JOBS_ERR_LEN, "cannot start GPU thread %d", i);
			rc = JOBS_E_INIT;
			goto fail;
		}
		g->started = 1;
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
			snprintf(err, JOBS_ERR_LEN, "gpu %d: %s", failed, J->gpus[failed].init_err);
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
