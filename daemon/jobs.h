/* The work behind the HTTP API: a pool of codec threads that decode and encode images, one GPU
 * thread per GPU in use (each alone touches its own EGL context, program cache and bloom
 * context), a bounded queue between them, and a watchdog that drops queued jobs at their deadline
 * or when their client has hung up. The HTTP layer submits a job and is called back once, from a
 * worker thread, when the job's answer (or its refusal) is ready.
 *
 * Flow: submit -> decode queue -> codec thread (decode) -> GPU queue -> any free GPU thread
 * (bloom_run) -> encode queue -> codec thread (encode) -> done(). Since every GPU thread pulls
 * from the one queue as soon as it is free, a job always goes to the least-loaded GPU. */
#ifndef FFTBLOOM_JOBS_H
#define FFTBLOOM_JOBS_H

#include <stddef.h>

#include "core/config.h"
#include "daemon/kernels.h"
#include "daemon/metrics.h"
#include "gles/bloom.h"
#include "gles/conv_shape.h"
#include "api/format.h"
#include "codec/image.h"
#include "api/operation.h"
#include "api/request.h"
#include "codec/tensor.h"

#define JOBS_MAX_GPUS 16
#define JOBS_MAX_WARM 16
#define JOBS_MAX_SPARE 8 /* --spare-plans sizes: the wanted plans a bloom context queues */
#define JOBS_ERR_LEN 1024
#define JOBS_SHAPES 16 /* frames' shapes a GPU thread remembers for a successor (jobs_shape) */

/* A bloom or convolve frame's shape as a successor process builds its plan again
 * (--compile-mode process): the image's size, its plan's padded size, the kernel image's size
 * (0 x 0: the built-in kernel of p.preset), whether the kernel was gray, and the request's
 * parameters. */
struct jobs_shape {
	int w, h, pw, ph, kw, kh, gray;
	struct bloom_params p;
};

/* When a GPU thread does its engine's idle work (jobs_set_idle). */
enum jobs_idle {
	JOBS_IDLE_NORMAL = 0, /* between jobs, after a grace (fftbloomd without process mode) */
	JOBS_IDLE_BUILD,      /* back to back until none is left: a process not serving yet */
	JOBS_IDLE_OFF,        /* never: a serving process whose successor does it (it reports
	                         what waits in jobs_gpu_status.idle_pending) */
};

enum jobs_error {
	JOBS_OK = 0,
	JOBS_E_FULL = -1,     /* queue-size jobs already wait (kernel PUTs count): answer 503 */
	JOBS_E_STOPPING = -2, /* shutting down */
	JOBS_E_INIT = -3,     /* a GPU thread could not make its context */
	JOBS_E_NOMEM = -4,
	JOBS_E_BUDGET_SPENT = -5, /* --memory-budget held by the requests in progress: 503 */
	JOBS_E_OVER_BUDGET = -6,  /* more than the whole --memory-budget: 413 */
};


struct kernel_entry;
struct images;

struct job {
	/* Set by the submitter; the encoded buffers must live until done() is called. */
	int kind;
	const unsigned char *image;       /* encoded image, or kernel (JOB_KERNEL_PUT) */
	size_t image_len;
	const unsigned char *kernel_data; /* encoded kernel image, or NULL */
	size_t kernel_len;
	struct kernel_entry *named;       /* registered kernel; the reference moves in */
	struct request req;               /* the parameters, parsed (format OUT_AUTO: Accept's, else
	                                     the input's family; quality 0: the server's default
	                                     for the format) */
	struct format_accept accept;      /* the Accept header, for format OUT_AUTO */
	char put_name[65];                /* JOB_KERNEL_PUT, JOB_IMAGE_PUT: the name */
	struct images *store;             /* JOB_IMAGE_PUT: the store that keeps the image (its
	                                     bytes are copied in once it decodes) */
	const unsigned char *npy[3];      /* JOB_CONV2D, JOB_CONV2D_T: input, weight, bias (NULL:
	                                     none) as NPY bytes */
	size_t npy_len[3];
	int client_fd;                    /* the client's socket for hang-up checks; -1: none */
	char client[64];                  /* the client's address: its budget of new sizes */
	int internal;                     /* run by the daemon itself (a successor's warm frame):
	                                     observed in no metric (and see jobs_discount) */
	void (*done)(struct job *j, void *ctx);
	void *done_ctx;

	/* Results, valid in done(). */
	int status;                       /* HTTP status */
	int error;                        /* enum api_error (api/errors.h); API_E_NONE on
	                                     success */
	int retry_after;                  /* with 429: seconds to send in Retry-After (0: none) */
	char code[32];                    /* error code; "" on success */
	char message[JOBS_ERR_LEN];       /* error message; "" on success */
	unsigned char *body;              /* malloc'd answer body; the receiver takes and frees it */
	size_t body_len;
	const char *content_type;         /* static */
	int dropped;                      /* 1: the client had gone; nobody to answer */
	unsigned lost;                    /* IMAGE_LOST_* of the encoding */
	int method;                       /* JOB_CONVOLVE: the method that ran (convolve.h) */
	int tiles_x, tiles_y;             /* the overlap-save tiles the frame ran in (1 x 1: whole) */
	int borrowed_w, borrowed_h;       /* the padded size of the plan of another size the frame
	                                     ran on while its own is built (--borrow-plans); 0: its
	                                     own */
	int gpu;                          /* GPU thread that ran it; -1 */
	double decode_s, queue_s, gpu_s, encode_s;
	double gpu_copy_s, gpu_wait_s;    /* parts of gpu_s: copying the frame and the result
	                                     between host and GPU buffers, waiting for the GPU */
	double gpu_setup_s;               /* part of gpu_s: building the plan on the request path
	                                     and the kernel's spectrum on a cache miss */

	/* Private to jobs.c. */
	struct image in, kimg, result;
	int coef_in;                      /* 1: yin held the frame's coefficients (--jpeg-gpu-idct) */
	int entropy_gpu;                  /* 1: the GPU entropy-decoded the frame's JPEG scan
	                                     (--jpeg-gpu-entropy-decode) */
	struct yuv_image yin, yresult;    /* JPEG planes in and out (--jpeg-planes); yin's may lie
	                                     in an upload buffer the GPU context lent
	                                     (--jpeg-upload-lease): yuv_image_free gives it back */
	struct job_upload {               /* yin's upload buffer (yuv_memory's owner) */
		struct jobs *J;
		struct bloom_upload *slot;    /* NULL: none held */
		unsigned long long gen;       /* the lending context's generation (gpu.upload_gen) */
	} upload;
	struct bloom_lease *lease;        /* yresult's planes lent by a GPU thread (--lend-planes),
	                                     given back when the job finishes */
	struct bloom_result flight;       /* the GPU's result while it is in flight (--gpu-depth):
	                                     flight.pending until the GPU thread completes it */
	struct image_info info;
	struct image_colour colour;       /* the input's colour (keep_profile's answer is in it) */
	struct tensor tx, tw, tb, ty;     /* JOB_CONV2D*: input, weight, bias, output */
	struct spatial_conv sc;           /* JOB_CONV2D */
	struct deconv_conv dc;            /* JOB_CONV2D_T */
	double t_admit, t_queued, deadline;
	int queued;                       /* holds a place in the queue (jobs_reserve) */
	unsigned long long reserved[2];   /* bytes of --memory-budget held for the image, kernel */
	int output_refused;               /* the sized answer (width, height, dpr) was past the
	                                     limits: the decode's refusal is output_too_large */
	struct job_admit {                /* image_limits.admit's context for each */
		struct jobs *J;
		struct job *j;
		int which;
	} admit[2];
	struct job *next;
};

struct jobs_gpu_status {
	int device;                  /* requested EGL device index */
	char platform[16], renderer[256], version[128];
	int alive, warmed, warm_failed, busy;
	int in_flight;                 /* frames issued to the GPU, not yet completed */
	unsigned long long overlapped; /* frames issued while an earlier one was in flight */
	double heartbeat_age;        /* seconds since the thread last showed life */
	double busy_s;               /* seconds spent in bloom_run */
	unsigned long long jobs, failures;
	int planes_lent;             /* answers' planes lent by this thread's context, not yet back */
	unsigned long long planes_lent_total; /* answers encoded straight from lent planes */
	unsigned long long jpeg_scans;         /* JPEG answers entropy-coded on the GPU */
	unsigned long long jpeg_coef_frames;   /* JPEG frames in as coefficients (--jpeg-gpu-idct) */
	unsigned long long jpeg_entropy_gpu;   /* JPEG frames entropy-decoded on the GPU */
	unsigned long long jpeg_entropy_cpu;   /* ... by libjpeg on the CPU */
	unsigned long long jpeg_scan_fallbacks; /* ... asked for, the coefficients came back
	                                           instead (a row past the GPU's room, or no GPU
	                                           memory to code them) */
	int uploads_out;             /* upload buffers its context lent to jobs being decoded or
	                                waiting for it, not yet given back */
	unsigned long long uploads_taken; /* frames decoded into an upload buffer it lent */
	struct program_stats programs;
	struct bloom_cache_stats caches;
	int software;                /* the context is a software renderer (llvmpipe) */
	char wisdom[768];            /* where the FFT choices come from (engine_wisdom_source) */
	int fft_pending;             /* FFT shapes queued for measuring in idle time */
	int idle_pending;            /* idle work waits (engine_idle_pending); with JOBS_IDLE_BUILD
	                                also while the handed shapes are not yet wanted */
	int nshapes;                 /* the frames' shapes it ran, the newest first */
	struct jobs_shape shapes[JOBS_SHAPES];
	unsigned long long fft_measured; /* shapes measured in idle time (plans switched after) */
	int reset_notification;      /* the context learns of GPU resets (robustness) */
	int rebuilding;              /* its context is being rebuilt after a GPU reset */
	unsigned long long resets;   /* contexts rebuilt after GPU resets */
	int tiles_done, tiles_total; /* the frame on the GPU, when it runs in tiles */
	long long max_buffer_bytes;  /* the context's storage-buffer limit */
	unsigned long long untiled_pixels; /* padded pixels a frame runs in one piece (bloom_limits) */
	int max_kernel_side;         /* the largest square kernel that runs */
};

struct jobs_status {
	int queued;                  /* admitted, not yet on a GPU (decoding or waiting); kernel
	                                PUTs count until decoded */
	int queue_size;
	int in_flight;               /* admitted and not yet answered */
	unsigned long long memory_used, memory_budget; /* bytes reserved for decoded images */
	int ngpus;
	struct jobs_gpu_status gpu[JOBS_MAX_GPUS];
};

/* The counters of jobs_gpu_status that describe the jobs run: jobs_discount takes the daemon's
 * own frames off them. */
#define JOBS_DISCOUNTED(X) X(jobs) X(failures) X(busy_s) X(overlapped) X(planes_lent_total) \
	X(jpeg_scans) X(jpeg_coef_frames) X(jpeg_entropy_gpu) X(jpeg_entropy_cpu)                 \
	X(jpeg_scan_fallbacks) X(uploads_taken) X(programs.hits) X(caches.kernel_hits)             \
	X(caches.kernel_misses) X(caches.plan_hits) X(caches.plan_misses) X(caches.plans_borrowed) \
	X(caches.uploads_lent) X(caches.uploads_copied) X(caches.entropy_flagged)

struct jobs;

/* Starts the codec threads, the watchdog and one GPU thread per device in `devices`, and waits
 * until every GPU thread has made its context (warm-up of the --warm-sizes then runs in the
 * background; see jobs_ready). On failure stops what it started and returns a negative code
 * with the reason in err. */
enum { JOBS_STORED_KERNEL = 0, JOBS_STORED_IMAGE = 1 };

/* Called on a codec thread once a kernel or image PUT is stored, with the name and the body as
 * it came, before the PUT is answered: 0, or -1 to answer it 500 (what was stored stays). */
typedef int (*jobs_stored_fn)(void *ctx, int kind, const char *name, const void *bytes,
                              size_t len);

int jobs_create(const struct config *cfg, const int *devices, int ndevices,
                const int (*warm)[2], int nwarm, struct kernels *kernels, struct metrics *metrics,
                struct jobs **out, char err[JOBS_ERR_LEN]);

/* Stops taking jobs, answers those still queued with 503 (shutting down), lets running ones
 * finish and joins every thread; J stays valid (jobs_reserve then says JOBS_E_STOPPING). */
void jobs_shutdown(struct jobs *J);

/* jobs_shutdown if not done, then frees everything. NULL-safe. */
void jobs_destroy(struct jobs *J);

/* Admission in two steps, so the caller can answer a refusal before it commits: jobs_reserve
 * takes a place in the queue for a job of `kind` (every kind: a kernel PUT holds one until it
 * is decoded) and returns 0, JOBS_E_FULL (queue-size jobs already wait) or JOBS_E_STOPPING;
 * after a 0 the caller must call jobs_start, which queues j; done() is then called exactly
 * once, from another thread. Decoding reserves each image's decoded size (from its header,
 * before its pixels) against --memory-budget until the job is answered: a job that finds it
 * spent is answered 503 (out_of_memory_budget), one larger than the whole budget 413. */
int jobs_reserve(struct jobs *J, int kind);
void jobs_start(struct jobs *J, struct job *j);

/* What the GPU threads' JOBS_DISCOUNTED counters gained since `before` (a jobs_status taken
 * earlier, with no request admitted since: a successor's warm frames) is kept off every later
 * jobs_status, so the counters say what the daemon served. */
void jobs_discount(struct jobs *J, const struct jobs_status *before);

/* Jobs reserved and not yet answered. */
int jobs_in_flight(struct jobs *J);

/* Holds `bytes` of --memory-budget for something outside a job (a request body as it arrives):
 * 0, JOBS_E_BUDGET_SPENT (the requests in progress hold too much of it now) or
 * JOBS_E_OVER_BUDGET (more than the whole budget), holding nothing on failure. Every 0 is
 * paired with jobs_memory_release of the same bytes. */
int jobs_memory_hold(struct jobs *J, unsigned long long bytes);
/* jobs_memory_hold's answer for bytes without holding them: whether they fit now. */
int jobs_memory_fits(struct jobs *J, unsigned long long bytes);
void jobs_memory_release(struct jobs *J, unsigned long long bytes);

void jobs_status(struct jobs *J, struct jobs_status *st);

/* Sets the hook every stored PUT calls (several GPUs' workers share their store through it).
 * Call before the first job is submitted. */
void jobs_set_stored(struct jobs *J, jobs_stored_fn fn, void *ctx);

/* Sets when the GPU threads do idle work (enum jobs_idle; JOBS_IDLE_NORMAL at create). */
void jobs_set_idle(struct jobs *J, int mode);

/* Hands every GPU thread n frames' shapes (another process's: jobs_gpu_status.shapes) to want
 * in idle time as if frames of them had run (bloom_want, the kernel made from p.preset or a
 * gray one of the kernel's size), and remembers them as its own. */
void jobs_hand_shapes(struct jobs *J, const struct jobs_shape *s, int n);

/* 1 when every GPU thread is alive, warmed and heard from within --heartbeat-timeout, and the
 * queue is below its high-water mark; otherwise 0 with the reason in why. */
int jobs_ready(struct jobs *J, char *why, size_t len);

/* 0 while the GPU threads live: none stale past --heartbeat-timeout (hung in a frame), failed
 * or ended; otherwise -1 with the reason (liveness: a supervisor restarts the daemon). A thread
 * rebuilding its context after a reset shows life and is not failed. */
int jobs_live(struct jobs *J, char *why, size_t len);

#endif
