/* The configuration table: every option of fftbloomd and of the fftbloom CLI's GPU selection,
 * declared once (name, type, bounds, default, help, FFTBLOOM_* variable). Flags, the
 * environment, --help and /v1/info all read it. */
#ifndef FFTBLOOM_CONFIG_H
#define FFTBLOOM_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "core/opts.h"

/* The daemon's version (/v1/info, /openapi.json, --help=json). */
#define FFTBLOOMD_VERSION "0.2.0"

/* Options that choose and set up a GPU context; shared by the daemon and the CLI. */
struct gpu_config {
	int platform;                  /* enum egl_platform: auto|device|surfaceless */
	int device;                    /* EGL device index */
	int gl_debug;                  /* KHR_debug messages to the log */
	char shader_dir[OPT_STR_MAX];  /* load shaders from here instead of the embedded copies */
	char program_cache[OPT_STR_MAX]; /* folder of persisted program binaries; auto, none or "" */
	char fft_wisdom[OPT_STR_MAX];  /* file of measured FFT shapes; auto, none, "" or builtin
	                                  (core/cachedir.h resolves them) */
	char driver_cache[OPT_STR_MAX]; /* the GL driver's shader disk cache: auto, none, "" or a
	                                   folder (cachedir_driver_setup) */
	unsigned long long frame_memory; /* GPU bytes a frame's pass may take before tiling; 0: limits */
	int require_gpu;               /* refuse a software renderer */
	int engine;                    /* enum engine_choice: auto|gpu|cpu */
};

/* --engine: where operations run (auto: the GPU engine on a GPU, the CPU engine on a software
 * renderer or without a context; with --require-gpu, the GPU engine). */
enum engine_choice { ENGINE_CHOICE_AUTO = 0, ENGINE_CHOICE_GPU, ENGINE_CHOICE_CPU };
/* A usage error (-1 with a message) for options that contradict each other: --engine cpu with
 * --require-gpu. */
int config_engine_check(const struct gpu_config *gc, char *err, size_t len);

struct config {
	struct gpu_config gpu;
	int log_level;                 /* error|warn|info|debug */
	int log_format;                /* text|json */
	/* fftbloomd: HTTP */
	char listen[OPT_STR_MAX];      /* IPv4 or IPv6 address to bind */
	int port;                      /* 0: an ephemeral port (logged) */
	int max_connections;           /* MHD connection limit */
	int max_per_ip;                /* MHD per-IP connection limit (0: none) */
	int conn_timeout;              /* stalled connection timeout, seconds */
	double idle_timeout;           /* seconds a keep-alive connection waits between requests */
	unsigned long long max_body;   /* request body limit, bytes */
	unsigned long long max_pixels; /* decoded image pixel limit (image and kernel) */
	int max_side;                  /* decoded image width / height limit */
	char cors_origins[OPT_STR_MAX];/* comma-separated allowed origins, or "*" */
	char api_key_file[OPT_STR_MAX];/* when set, /v1/ requires Authorization: Bearer <key> */
	char tls_cert[OPT_STR_MAX];    /* PEM certificate file: serve HTTPS */
	char tls_key[OPT_STR_MAX];     /* PEM private key file */
	char tls_priorities[OPT_STR_MAX]; /* GnuTLS priority string: protocol versions, ciphers */
	int reuse_port;                /* 1: SO_REUSEPORT, several daemons share the port */
	double header_timeout;         /* seconds from a request's start to its last header */
	unsigned long long min_body_rate; /* bytes a second a body must average (0: no floor) */
	/* fftbloomd: work */
	char gpus[OPT_STR_MAX];        /* "0", "0,1" or "all" */
	int gpu_threads;               /* GPU threads (each its own context) per device */
	int gpu_depth;                 /* frames a GPU thread keeps in flight */
	int codec_threads;             /* decode / encode threads */
	int queue_size;                /* jobs admitted but not yet on a GPU */
	int queue_high_water;          /* percent of queue_size above which /readyz fails */
	double deadline;               /* seconds from admission until a queued job is dropped */
	double gpu_timeout;            /* seconds a job's GPU work may run (0: no limit) */
	double drain_timeout;          /* seconds to finish accepted work on SIGTERM */
	double heartbeat_timeout;      /* a GPU thread silent this long makes /readyz fail */
	double worker_timeout;         /* several GPUs: a worker silent this long is restarted */
	int retry_after;               /* Retry-After seconds on 503 */
	char warm_sizes[OPT_STR_MAX];  /* "WxH,WxH": plans built before ready */
	char spare_plans[OPT_STR_MAX]; /* "auto", "" or "WxH,WxH": plans built in idle time after
	                                  start, for new sizes to borrow */
	char kernel_dir[OPT_STR_MAX];  /* named kernels loaded at start */
	int max_kernels;               /* named kernels held at most */
	unsigned long long kernel_memory; /* bytes of named kernels' pixels held at most */
	unsigned long long kernel_max_pixels; /* pixels of one kernel at most (named or uploaded) */
	char image_dir[OPT_STR_MAX];   /* stored source images loaded at start */
	int max_images;                /* stored source images held at most */
	unsigned long long image_memory; /* bytes of stored images (encoded) held at most */
	char cache_control[OPT_STR_MAX]; /* Cache-Control of public GET render answers */
	char url_signing_key_file[OPT_STR_MAX]; /* when set, GET renders need a signed URL */
	int url_require_expiry;        /* 1: a signed URL without exp= is refused */
	char origin_allow[OPT_STR_MAX]; /* origins ?src= may fetch from; "": none */
	double origin_connect_timeout; /* seconds for a connection to an origin */
	double origin_timeout;         /* seconds for a whole fetch, redirects included */
	unsigned long long origin_max_bytes; /* bytes of an origin's image at most */
	int origin_concurrency;        /* fetch threads */
	int origin_queue;              /* fetches waiting for a thread at most */
	char origin_ca[OPT_STR_MAX];   /* PEM CA file for https origins; "": the system's store */
	char result_cache[OPT_STR_MAX]; /* folder of stored GET render answers; "": none */
	unsigned long long result_cache_bytes; /* bytes of answers kept there */
	unsigned long long memory_budget; /* bytes of decoded images admitted jobs hold at most */
	int max_programs;              /* per GPU: compiled programs kept (least recently used out) */
	unsigned long long program_memory; /* per GPU: bytes of program binaries kept */
	int new_sizes_per_minute;      /* per client address: jobs a minute that build a new size */
	unsigned long long kernel_cache; /* per GPU: bytes of kernel spectra kept */
	int max_plans;                 /* per GPU: padded sizes kept with their buffers */
	int borrow_plans;              /* 1: a new padded size runs on a built plan meanwhile */
	int compile_thread;            /* 0 auto, 1 on, 2 off: enum engine_compile */
	int compile_mode;              /* 0 auto, 1 parallel, 2 thread, 3 inline, 4 process: enum
	                                  engine_compile_mode (process: daemon/supervisor.h) */
	double plan_load_wait;         /* seconds of load before cheaply borrowed sizes' plans
	                                  are built between its jobs */
	int upload_copy;               /* 0 auto, 1 on, 2 off: bloom_ctx_opts.upload_copy 0, 1, -1 */
	int fft_idle_tune;             /* 0 auto (GPUs only), 1 on, 2 off: measure in idle time */
	int jpeg_quality;              /* default JPEG quality of answers */
	int jpeg_subsampling;          /* 0: 4:4:4, 1: 4:2:0 for JPEG and AVIF answers */
	int webp_quality;              /* default WebP quality of answers */
	int avif_quality;              /* default AVIF quality of answers */
	int avif_speed;                /* libavif encoder speed of AVIF answers, 1-10 */
	int auto_avif;                 /* 1: Accept may choose AVIF like any type; 0: only alone */
	int jpeg_planes;               /* 1: JPEG in and out as YUV planes, converted on the GPU */
	int persistent_map;            /* 1: planes through persistently mapped buffers */
	int lend_planes;               /* 1: answers' planes encoded from the GPU's mapped buffer */
	int jpeg_gpu_dct;              /* 1: answers' DCT and quantisation on the GPU (planes on) */
	int jpeg_gpu_entropy;          /* 1: and their entropy coding (jpeg_gpu_dct on) */
	int jpeg_gpu_idct;             /* 1: frames in as DCT coefficients, the inverse on the GPU */
	int jpeg_gpu_entropy_decode;   /* 1: and baseline frames' entropy decoding on the GPU */
	int jpeg_upload_lease;         /* 1: frames' planes decoded into upload buffers the GPU
	                                  context lends (one GPU thread) */
	int float_upload_lease;        /* 1: PFM and EXR frames' pixels decoded, as RGBA, into
	                                  upload buffers the GPU context lends (one GPU thread) */
	int cpu_frames;                /* --engine cpu: frames at once at most (0: auto) */
};

extern const struct opt_def config_table[];
extern const size_t config_table_len;
extern const struct opt_def gpu_config_table[];

/* 1 for an option whose value names a file or folder (--image-dir, --tls-key, the caches...):
 * a string option named *-file, *-dir, *-cache, *-cert, *-key, or fft-wisdom. */
int config_is_path(const struct opt_def *d);

extern const size_t gpu_config_table_len;

/* Defaults, then FFTBLOOM_* variables, then flags from argv[first..]; positional arguments are
 * moved to argv[first..first+*npos). Returns 0 or a negative opt_error with a message in err. */
int config_load(struct config *c, int argc, char **argv, int first, int *npos,
                char err[OPT_ERR_LEN]);
int gpu_config_load(struct gpu_config *c, int argc, char **argv, int first, int *npos,
                    char err[OPT_ERR_LEN]);

#endif
