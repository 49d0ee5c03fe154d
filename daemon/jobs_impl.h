/* The job pipeline's shared state, private to its files: jobs.c (admission, the queue, the
 * watchdog, status and shutdown), codec.c (the codec threads: decode with the memory budget,
 * encode, kernel PUTs), gpu_context.c (a GPU thread's engine, warm-up and spare plans, the
 * new-size budget, trimming programs), gpu_worker.c (a GPU thread: its loop, idle work,
 * resets), gpu_jobs.c (running a job by its kind) and gpu_cancel.c (deadlines and the
 * shutdown flag between dispatches). Not for use outside daemon/jobs.c, codec.c,
 * gpu_context.c, gpu_worker.c, gpu_jobs.c, gpu_cancel.c. */
#ifndef FFTBLOOM_JOBS_IMPL_H
#define FFTBLOOM_JOBS_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "daemon/jobs.h"
#include "api/errors.h"
#include "gles/convolve.h"
#include "core/resample_geom.h"

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
	int in_flight;                       /* frames issued to the GPU, not yet completed */
	unsigned long long overlapped;       /* frames issued while an earlier one was in flight */
	double heartbeat, busy_s;
	unsigned long long njobs, nfail;
	int lent;                            /* planes lent by this context, not yet given back */
	unsigned long long lent_total;
	unsigned long long scans, scan_fallbacks; /* JPEG answers coded on the GPU, and not */
	unsigned long long coef_frames; /* JPEG frames in as coefficients (the GPU's inverse DCT) */
	unsigned long long entropy_gpu, entropy_cpu; /* JPEG frames by where their entropy
	                                                decoding ran */
	/* upload buffers lent to codec threads (--jpeg-upload-lease): the context that lends
	 * them, NULL while none does (guarded by J->lock, as upload_gen, which changes whenever
	 * the context does: a buffer of an older generation is of a context being destroyed) */
	struct bloom_ctx *uploads;
	unsigned long long upload_gen;
	unsigned long long uploads_taken;    /* guarded by J->lock */
	atomic_int uploads_out;              /* lent to jobs, not yet given back (any thread) */
	char platform[16], renderer[256], version[128];
	char init_err[BLOOM_ERR_LEN];
	struct program_stats ps;
	struct bloom_cache_stats bs;
	struct convolve_model model;         /* the GPU thread's own: convolve's method choice */
	int software;                        /* the context is a software renderer */
	char wisdom[768];                    /* engine_wisdom_source */
	int fft_pending;                     /* FFT shapes queued for measuring in idle time */
	int idle_pending;                    /* jobs_gpu_status.idle_pending */
	int handed_seen;                     /* J->handed_gen it has wanted */
	struct jobs_shape shapes[JOBS_SHAPES]; /* jobs_gpu_status.shapes */
	int nshapes;
	unsigned long long fft_measured;     /* shapes measured in idle time */
	struct jobs_gpu_status off;          /* its JOBS_DISCOUNTED counters' share of the
	                                        daemon's own frames, taken off by jobs_status */
	int reset_notification;              /* the context learns of GPU resets */
	unsigned long long resets;           /* contexts rebuilt after a GPU reset */
	int rebuilding;                      /* rebuilding the context after a reset */
	int tiles_done, tiles_total;         /* the frame in hand, when tiled */
	long long max_buffer_bytes;          /* the context's storage-buffer limit */
	unsigned long long untiled_pixels;   /* bloom_limits */
	int max_kernel_side;
	/* what the engine looks at between dispatches: the running job's deadline (set by the
	 * GPU thread per job, 0 between jobs) and a flag jobs_shutdown raises (any thread) */
	struct gles_cancel cancel;
};

struct jobs {
	struct config cfg;
	struct image_limits lim, klim; /* images; kernels (--kernel-max-pixels) */
	struct kernels *kernels;
	struct metrics *metrics;
	int warm[JOBS_MAX_WARM][2], nwarm;
	int spare[JOBS_MAX_SPARE][2], nspare; /* --spare-plans (checked at start) */
	int spare_auto;                      /* --spare-plans auto */
	jobs_stored_fn stored;               /* jobs_set_stored: NULL, or after each stored PUT */
	void *stored_ctx;
	int lease_uploads;                   /* --jpeg-upload-lease (planes on) or
	                                        --float-upload-lease in effect, one GPU thread
	                                        (the job's, known at decode time) */

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
	int idle_mode;                       /* enum jobs_idle (guarded by lock) */
	struct jobs_shape handed[JOBS_SHAPES]; /* jobs_hand_shapes' (guarded by lock) */
	int nhanded, handed_gen;
};

/* jobs.c */
void fifo_push(struct fifo *f, struct job *j);
struct job *fifo_pop(struct fifo *f);
int is_gpu_kind(const struct job *j);
/* Gives j's place in the queue back, once. Caller holds the lock. */
void unqueue(struct jobs *J, struct job *j);
/* Fails j with the error table's row error (enum api_error) and a message made from fmt. */
void set_error(struct job *j, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Answers j: frees what the job held, calls done(), then counts it out. Called without the lock;
 * j belongs to the submitter again once done() starts. */
void finish(struct jobs *J, struct job *j);
/* A worker's finished job handed on, J->lock held (released and taken again around finish): a
 * failed one answered at once (finish), one with a result queued for the codec threads. */
void job_hand_on_locked(struct jobs *J, struct job *j);

/* codec.c */
void *codec_main(void *arg);
/* j's JPEG frame decoded again by libjpeg into coefficients (or planes) of its own, for a scan
 * the GPU's entropy decoder did not take (gpu_run): 0, or -1 with j's error set (libjpeg's
 * answer: a corrupt or truncated image). Frees the frame held before. */
int codec_redecode_jpeg(struct jobs *J, struct job *j);
/* j's planes moved out of the upload buffer they were decoded into, into memory of their own,
 * and the buffer given back: 0, or -1 when memory ran out (nothing changed). By the thread that
 * holds j, with or without J->lock. */

/* gpu_context.c */
struct engine;
/* Counts a new padded size (key) for client, if its budget allows: 0, or the seconds until it
 * does. Caller holds the lock. */
double charge_new_size(struct jobs *J, const char *client, unsigned long long key, double now);
/* Keeps the programs within --max-programs and --program-memory (releasing plans if need be).
 * Between jobs, on the GPU thread. */
void trim_programs(struct jobs *J, struct program_cache *pc, struct bloom_ctx *b);
/* The GPU thread's engine: 0, or -1 with why. */
int gpu_build(struct gpu *g, struct engine **out, char *why, size_t len);
/* --warm-sizes planned (a failure marks the thread's warm-up failed), then --spare-plans queued
 * for idle time. */
void gpu_warm(struct gpu *g, struct bloom_ctx *b);

/* gpu_jobs.c: by the GPU thread */
/* Runs j by its kind: answered (failed, or a result taken), or a frame left in flight in
 * j->flight (pending) for gpu_job_complete. */
void gpu_job_run(struct gpu *g, struct engine *e, struct job *j);
/* A frame left in flight: waits for the GPU, then takes its result. */
void gpu_job_complete(struct gpu *g, struct job *j);
/* A result from the GPU into j: its planes or image, or the failure rc (err), or the refusal
 * of a result that came out non-finite. */
void gpu_job_take(struct gpu *g, struct job *j, int rc, struct bloom_result *res,
                  const char *err);
/* j's results dropped (lent planes given back) for an error set after they were made. */
void gpu_job_drop(struct job *j);

/* gpu_worker.c */
void *gpu_main(void *arg);
/* The worker thread of the CPU engine (cpu_worker.c), in a GPU thread's place. */
void *cpu_main(void *arg);

/* Sized outputs, for either engine's worker (gpu_jobs.c). job_sized_geom: the geometry of a
 * bloom or convolve job's answer (resample_fit over its decoded input); *sized is 0 when the job
 * is not sized or the geometry changes nothing. 0, or a resample_error. */
int job_sized_geom(const struct job *j, struct resample_geom *geo, int *sized);
/* A sized bloom's rule (resize=before): the kernel takes the image's scale (its energy kept by
 * the engine's resampling of kernels), so that the bloom at the output size looks as the input's
 * bloom resized: kernel_scale becomes what makes the kernel's larger side the size it had at the
 * input times resample_scale. Left alone at scale 1 (the direct convolution takes no
 * kernel_scale). */
void job_scale_kernel(struct job *j, const struct resample_geom *geo);
/* Fails a sized job for a resample_error (its inputs freed), or a result it made. */
void job_resize_failed(struct gpu *g, struct job *j, int rc, const char *err);

#endif
