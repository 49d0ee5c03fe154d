/* libfftbloom: the fftbloom GPU engine (OpenGL ES 3.1 compute; a GPU, or Mesa's llvmpipe) as a
 * C library: FFTs, FFT-convolution bloom and convolve of float images, conv2d and
 * conv2d_transpose of NCHW float32 tensors, and the image codecs.
 *
 * Rules every function follows:
 * - Names start with fftbloom_ / FFTBLOOM_; handles are opaque; create/destroy pairs, and
 *   destroy(NULL) does nothing. No global state: everything lives in a context or the caller's
 *   memory (process-wide are only tables made once). The library never prints, never exits and
 *   never aborts on bad input.
 * - Functions return 0 (FFTBLOOM_OK) or a negative enum fftbloom_status; fftbloom_strerror maps a
 *   code to a static string, and fftbloom_context_message says what the last failure of that
 *   context was, in words (valid until the next call on the context).
 * - Threads: one context per thread. A context's GL context is current on the thread that made
 *   it (fftbloom_context_create); only that thread calls functions taking the context, unless
 *   the caller moves it with fftbloom_context_release on one thread and
 *   fftbloom_context_make_current on the next (and serialises the calls itself). Several
 *   contexts on several threads work independently. The codec functions take no context and are
 *   safe on any thread.
 * - Memory: host arrays are the caller's (read or written, never kept); images the library
 *   makes (fftbloom_image.data) are freed with fftbloom_image_free, buffers with fftbloom_free.
 * - ABI: the structs are the caller's and filled by their *_init functions: their layout is
 *   part of the ABI of the SONAME (libfftbloom.so.0); a field added to one is a new SONAME. */
#ifndef FFTBLOOM_H
#define FFTBLOOM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && defined(FFTBLOOM_BUILDING)
#define FFTBLOOM_API __attribute__((visibility("default")))
#else
#define FFTBLOOM_API
#endif

#define FFTBLOOM_VERSION_MAJOR 0
#define FFTBLOOM_VERSION_MINOR 1
#define FFTBLOOM_VERSION_PATCH 0
#define FFTBLOOM_MESSAGE_LEN 4096 /* the longest context message, with its terminating 0 */

enum fftbloom_status {
	FFTBLOOM_OK = 0,
	FFTBLOOM_E_ARG = -1,       /* a bad argument, shape or parameter (the message names it) */
	FFTBLOOM_E_NOMEM = -2,     /* host memory exhausted */
	FFTBLOOM_E_CONTEXT = -3,   /* no OpenGL ES 3.1 context (message: each platform tried) */
	FFTBLOOM_E_GPU = -4,       /* a GL call or a program build failed */
	FFTBLOOM_E_TOO_LARGE = -5, /* beyond this device's limits (storage buffers, textures) */
	FFTBLOOM_E_UNSUPPORTED = -6, /* an algorithm asked for cannot run this shape */
	FFTBLOOM_E_FORMAT = -7,    /* codecs: unknown, corrupt or truncated image data */
	FFTBLOOM_E_NOT_FINITE = -8, /* a result (or an input) holds NaN or infinity */
	FFTBLOOM_E_GPU_MEMORY = -9  /* GPU memory exhausted, even in tiles */
};

/* A static string for a status code ("unknown status" for others); never NULL. */
FFTBLOOM_API const char *fftbloom_strerror(int status);
/* The library's version, "MAJOR.MINOR.PATCH". */
FFTBLOOM_API const char *fftbloom_version(void);

/* ---- the context ---- */
typedef struct fftbloom_context fftbloom_context;

enum fftbloom_platform {
	FFTBLOOM_PLATFORM_AUTO = 0,        /* the EGL device platform (device gpu), else Mesa's
	                                      surfaceless platform */
	FFTBLOOM_PLATFORM_DEVICE = 1,      /* the EGL device platform only: GPU number gpu */
	FFTBLOOM_PLATFORM_SURFACELESS = 2, /* Mesa's surfaceless platform only */
	FFTBLOOM_PLATFORM_CURRENT = 3      /* the caller's EGL context current on this thread (an
	                                      OpenGL ES 3.1 or OpenGL 4.3 one): used, not owned;
	                                      the library changes its shader-storage and buffer
	                                      bindings and its current program */
};

enum fftbloom_wisdom {
	FFTBLOOM_WISDOM_SHIPPED = 0, /* the FFT shapes measured for this driver that the library
	                                ships, and wisdom_file's; a shape neither holds gets the
	                                built-in rule */
	FFTBLOOM_WISDOM_MEASURE = 1, /* as SHIPPED, and a shape neither holds is measured on first
	                                use (its candidates timed: seconds) and kept in wisdom_file */
	FFTBLOOM_WISDOM_RULES = 2    /* the built-in rule for every shape, nothing read */
};

struct fftbloom_context_opts {
	int platform;              /* enum fftbloom_platform */
	int gpu;                   /* EGL device index for the device platform (0: the first) */
	const char *program_cache; /* folder where compiled programs persist; NULL: none */
	int max_plans;             /* FFT plans and padded sizes kept (0: 8) */
	int wisdom;                /* enum fftbloom_wisdom */
	const char *wisdom_file;   /* file of measured FFT shapes read and extended; NULL: none */
	const char *shader_dir;    /* NULL: the embedded shaders; else NAME.comp from this folder */
	int gl_debug;              /* 1: a KHR_debug context (its messages are dropped: the
	                              library prints nothing) */
	size_t frame_bytes;        /* GPU memory (host memory on the CPU engine) one frame's pass
	                              may take before it runs in tiles (0: only the device's
	                              limits; the CPU engine: no bound) */
	int fft_technique;         /* fftbloom_fft's technique: 0 auto (shared memory where a
	                              signal fits, else the plan's or the wisdom's choice), 1 shared,
	                              2 global-memory passes, 3 blocked columns */
	int engine;                /* enum fftbloom_engine: where the operations run */
};

enum fftbloom_engine {
	FFTBLOOM_ENGINE_AUTO = 0, /* the GPU engine on a real GPU; the CPU engine where the GL
	                             renderer is a software one (llvmpipe, softpipe) or no GL context
	                             can be made (the caller's context, PLATFORM_CURRENT: the GPU) */
	FFTBLOOM_ENGINE_GPU = 1,  /* the GLES engine, on whatever renderer the platform gives */
	FFTBLOOM_ENGINE_CPU = 2   /* the CPU engine (FFTW and OpenBLAS; no GL context is made):
	                             the same answers within float rounding; the *_gl functions
	                             are FFTBLOOM_E_UNSUPPORTED */
};

/* Fills o with the defaults (AUTO platform, GPU 0, no program cache, shipped wisdom). */
FFTBLOOM_API void fftbloom_context_opts_init(struct fftbloom_context_opts *o);

/* Makes a context (o NULL: the defaults) and its GL context current on the calling thread.
 * Programs compile on first use of an operation and shape, and are kept. 0, or a negative
 * status with a message in err (err_len bytes; err may be NULL); *out is NULL on failure. */
FFTBLOOM_API int fftbloom_context_create(const struct fftbloom_context_opts *o,
                                         fftbloom_context **out, char *err, size_t err_len);
/* Destroys everything the context made; with an owned GL context, releases and destroys it
 * (call on its current thread), leaving its EGL display initialized: the display is the
 * process's, and other contexts may be on it. NULL-safe. */
FFTBLOOM_API void fftbloom_context_destroy(fftbloom_context *c);
/* The last failure's message of c ("" before any); valid until the next call on c. */
FFTBLOOM_API const char *fftbloom_context_message(const fftbloom_context *c);
/* "RENDERER / VERSION" of the GL context (e.g. "llvmpipe (LLVM 15.0.6, 256 bits) / OpenGL ES
 * 3.2 Mesa 22.3.6"). */
FFTBLOOM_API const char *fftbloom_context_renderer(const fftbloom_context *c);
/* "gpu" or "cpu": the engine the context's operations run on (fftbloom_context_opts.engine). */
FFTBLOOM_API const char *fftbloom_context_engine(const fftbloom_context *c);
/* 1 when the renderer is a CPU rasterizer (llvmpipe), else 0. */
FFTBLOOM_API int fftbloom_context_software(const fftbloom_context *c);
/* The GL context's facts, as `fftbloom info` prints them. */
struct fftbloom_device_info {
	char platform[16];          /* "device", "surfaceless" or "current" */
	int device_index;           /* -1 unless the device platform */
	int device_count;           /* EGL devices seen (0 without EGL_EXT_device_enumeration) */
	char egl_vendor[128], egl_version[64], device_ext[256];
	char gl_vendor[128], renderer[256], version[128], glsl_version[128];
	int max_shared_memory;      /* GL_MAX_COMPUTE_SHARED_MEMORY_SIZE, bytes */
	int max_invocations;        /* GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS */
	int max_group_size[3], max_group_count[3];
	long long max_ssbo_size;    /* GL_MAX_SHADER_STORAGE_BLOCK_SIZE, bytes */
	int max_ssbo_bindings;
	int timer_query, subgroup, subgroup_size, subgroup_shuffle, fp16, debug_output,
	    buffer_storage, robustness, reset_notification; /* 1: present (size: 0 unknown) */
	int software;               /* a CPU rasterizer (llvmpipe) */
};
FFTBLOOM_API void fftbloom_context_info(const fftbloom_context *c,
                                        struct fftbloom_device_info *out);

/* Moving a context between threads: release it on one, make it current on the next. 0, or
 * FFTBLOOM_E_CONTEXT. With FFTBLOOM_PLATFORM_CURRENT both act on the caller's context. */
FFTBLOOM_API int fftbloom_context_make_current(fftbloom_context *c);
FFTBLOOM_API void fftbloom_context_release(fftbloom_context *c);

/* ---- FFT: complex float32, numpy's conventions ----
 * A row-major width x height array of complex values, each two floats (real, imaginary),
 * transformed in place: FFTBLOOM_FFT_ROWS along each row (numpy axis -1; height 1 is a 1D
 * transform), FFTBLOOM_FFT_COLS along each column (axis -2), FFTBLOOM_FFT_BOTH both (fft2).
 * Forward unscaled, inverse scaled by 1/n per transformed axis. Any length >= 1 (natively where
 * the prime factors are at most 13, through Bluestein otherwise). Plans are kept per
 * (width, height, axes). */
enum fftbloom_fft_axes { FFTBLOOM_FFT_ROWS = 1, FFTBLOOM_FFT_COLS = 2, FFTBLOOM_FFT_BOTH = 3 };

FFTBLOOM_API int fftbloom_fft(fftbloom_context *c, float *data, int width, int height, int axes,
                              int inverse);
/* As fftbloom_fft, on a GL buffer object of the context's share group holding width * height
 * complex float32 values (8 bytes each, tightly packed), transformed in place on the GPU: no
 * host copy. Ends with a shader-storage barrier; the caller adds the barrier its next use
 * needs (GL_BUFFER_UPDATE_BARRIER_BIT before mapping). */
FFTBLOOM_API int fftbloom_fft_gl(fftbloom_context *c, unsigned buffer, int width, int height,
                                 int axes, int inverse);

/* ---- images: float32, interleaved, 1-4 channels (grey, grey + alpha, RGB, RGBA) ---- */
struct fftbloom_image {
	int width, height, channels;
	float *data; /* width * height * channels floats, row-major */
};
/* Frees an image the library made and zeroes it; NULL-safe. */
FFTBLOOM_API void fftbloom_image_free(struct fftbloom_image *img);

/* A built-in kernel (what `fftbloom kernel` and --kernel-preset make). */
enum fftbloom_preset_kind {
	FFTBLOOM_PRESET_GAUSSIAN = 1,
	FFTBLOOM_PRESET_GLARE = 2,
	FFTBLOOM_PRESET_APERTURE = 3 /* the default: the diffraction pattern of a polygon */
};
struct fftbloom_preset {
	int kind;         /* enum fftbloom_preset_kind */
	int size;         /* side in pixels, made odd (gaussian 0: 2 ceil(3 sigma) + 1) */
	double sigma;     /* gaussian: standard deviation in pixels */
	double core;      /* glare: core sigma in pixels */
	double halo;      /* glare: halo sigma in pixels */
	double halo_gain; /* glare: halo weight against the core */
	int streaks;      /* glare: streaks through the centre */
	double length;    /* glare: streak length, a fraction of half the size */
	double rotation;  /* glare, aperture: degrees */
	int blades;       /* aperture: polygon sides (0: a circle) */
	double radius;    /* aperture: radius, a fraction of the FFT grid */
};
/* Fills p with kind's defaults (the CLI's: gaussian sigma 8; glare core 1.5, halo 24,
 * halo_gain 0.02, 4 streaks, length 1, size 255; aperture 6 blades, radius 0.2, size 255). */
FFTBLOOM_API void fftbloom_preset_init(struct fftbloom_preset *p, int kind);
/* The preset as an RGB image (peak at (size/2, size/2)), into *out (fftbloom_image_free). */
FFTBLOOM_API int fftbloom_preset_image(fftbloom_context *c, const struct fftbloom_preset *p,
                                       struct fftbloom_image *out);

enum fftbloom_composite { FFTBLOOM_COMPOSITE_ADD = 0, FFTBLOOM_COMPOSITE_MIX = 1 };
enum fftbloom_normalize { FFTBLOOM_NORMALIZE_LUMINANCE = 0, FFTBLOOM_NORMALIZE_NONE = 1 };
enum fftbloom_precision { FFTBLOOM_FP32 = 0, FFTBLOOM_FP16 = 1 };
enum fftbloom_method { FFTBLOOM_METHOD_AUTO = 0, FFTBLOOM_METHOD_FFT = 1,
                       FFTBLOOM_METHOD_SPATIAL = 2 };

enum fftbloom_center {
	FFTBLOOM_CENTER_DEFAULT = 0, /* pixel (floor(w/2), floor(h/2)) */
	FFTBLOOM_CENTER_PIXEL = 1,   /* (center_x, center_y) in pixels, inside the kernel */
	FFTBLOOM_CENTER_UV = 2       /* (center_x, center_y) in [0, 1]^2 of the kernel (clamped) */
};

/* The CLI's bloom and convolve parameters (docs/cli.md: same names, '-' as '_'). */
struct fftbloom_bloom_params {
	double threshold;    /* bloom: the prefilter keeps what is brighter (default 1) */
	double knee;         /* bloom: the soft threshold's width (0.5) */
	double clamp_max;    /* bloom: prefiltered values clamped to this (65472) */
	double intensity;    /* bloom, composite add: O = I + intensity * B (1) */
	double mix;          /* bloom, composite mix: O = (1 - mix) I + mix B (0.5) */
	double kernel_scale; /* the kernel's larger side = S x the image's shorter side; 0: its own
	                        size (0) */
	int composite;       /* enum fftbloom_composite (add) */
	int normalize;       /* enum fftbloom_normalize: the kernel divided by the sum of its Rec.
	                        709 luminance (bloom: luminance; fftbloom_convolve: none) */
	int precision;       /* enum fftbloom_precision: the image spectrum's storage (fp32) */
	int method;          /* convolve: enum fftbloom_method (bloom: always the FFT) (auto) */
	int technique;       /* the FFT technique, as fftbloom_context_opts.fft_technique (0) */
	int center_mode;     /* enum fftbloom_center: where the kernel's centre is */
	double center_x, center_y; /* PIXEL: pixels; UV: fractions of the kernel's size */
	const struct fftbloom_preset *preset; /* the kernel when none is given (NULL: aperture) */
	int time_stages;     /* 1: fftbloom_bloom_stats.stage_ms gets each GPU stage's time (timer
	                        queries, or a glFinish after each where there are none) */
};
/* Fills p with the defaults above for op 0 (bloom) or 1 (convolve: normalize none). */
FFTBLOOM_API void fftbloom_bloom_params_init(struct fftbloom_bloom_params *p, int convolve);

#define FFTBLOOM_STAGES 24 /* stage_ms entries (more than the engine names) */
/* What a bloom or convolve did (an optional output). */
struct fftbloom_bloom_stats {
	int method;          /* enum fftbloom_method: FFT, or SPATIAL (the direct convolution: the
	                        fields below up to timed are then 0) */
	int padded_w, padded_h; /* the FFT size (of each tile, when tiled) */
	int tiles_x, tiles_y;   /* 1 x 1 untiled */
	int gray_kernel;     /* 1: the grey-kernel path */
	int kernel_cached;   /* 1: the kernel's spectrum came from the context's cache */
	int timed;           /* 0: not timed; 1: timer queries; 2: host clock around each stage */
	double stage_ms[FFTBLOOM_STAGES]; /* with time_stages: per stage s named by
	                                     fftbloom_stage_name(s); 0 for stages that did not run */
	double gpu_ms;       /* with time_stages: the FFT path's GPU stages, prefilter to composite */
	double wall_ms;      /* host clock, the whole call */
};
/* The name of stage s ("upload", "kernel", "rows", ...: the names of the daemon's
 * Server-Timing and the bench's JSON), NULL past the last. */
FFTBLOOM_API const char *fftbloom_stage_name(int stage);

/* Bloom: out = in composited with (prefilter(in) convolved with the kernel) by FFT.
 * Convolve: out = in convolved with the kernel, the linear convolution at the image's size
 * (zero outside), O[y, x] = sum_j,i I[y - (j - cy), x - (i - cx)] K[j, i] for the centre
 * (cx, cy). in: 1-4 channels (a missing alpha counts as 1 and is not returned). kernel: 1-4
 * channels, or NULL for p->preset; a kernel of 1-2 channels (or equal R, G, B) applies to every
 * channel, otherwise R, G and B to theirs and the luminance to alpha. p NULL: the defaults.
 * *out is made with in's channels (fftbloom_image_free). Kernel spectra are cached per (kernel
 * digest, padded size), so a kernel used again costs nothing. FFTBLOOM_E_NOT_FINITE when the
 * result overflowed float32. st (NULL: none) gets what ran. */
FFTBLOOM_API int fftbloom_bloom(fftbloom_context *c, const struct fftbloom_image *in,
                                const struct fftbloom_image *kernel,
                                const struct fftbloom_bloom_params *p, struct fftbloom_image *out,
                                struct fftbloom_bloom_stats *st);
FFTBLOOM_API int fftbloom_convolve(fftbloom_context *c, const struct fftbloom_image *in,
                                   const struct fftbloom_image *kernel,
                                   const struct fftbloom_bloom_params *p,
                                   struct fftbloom_image *out, struct fftbloom_bloom_stats *st);
/* A resize: the window (src_x, src_y, src_w, src_h; pixels, fractional) of the input mapped
 * onto the rectangle (dst_x, dst_y, dst_w, dst_h) of an out_w x out_h canvas whose other pixels
 * are 0 (the geometry of sharp's fit modes; the CLI computes it). */
struct fftbloom_resize {
	int out_w, out_h;
	int dst_x, dst_y, dst_w, dst_h;
	double src_x, src_y, src_w, src_h;
};
/* in resized on the GPU by a separable Lanczos-3 filter in linear light (widened when
 * shrinking, alpha premultiplied while filtering, edge taps renormalised) into *out, with in's
 * channels (fftbloom_image_free). FFTBLOOM_E_ARG for a geometry outside the canvas or a side
 * past 16384, FFTBLOOM_E_TOO_LARGE past the GPU's storage-buffer limit. */
FFTBLOOM_API int fftbloom_resize(fftbloom_context *c, const struct fftbloom_image *in,
                                 const struct fftbloom_resize *r, struct fftbloom_image *out);
/* fftbloom_bloom between GL buffer objects of the context's share group, each width * height *
 * channels float32 values as fftbloom_image.data: in_buf read, out_buf (at least as large)
 * written. Today the pixels pass through host memory on the way (the engine's frames enter from
 * host memory); the call saves the caller its own read-back and upload, not the bus. */
FFTBLOOM_API int fftbloom_bloom_gl(fftbloom_context *c, unsigned in_buf, unsigned out_buf,
                                   int width, int height, int channels,
                                   const struct fftbloom_image *kernel,
                                   const struct fftbloom_bloom_params *p);

/* ---- tensors: conv2d and conv2d_transpose, float32 NCHW, torch.nn.functional's semantics ---- */
struct fftbloom_conv_params {
	int stride_h, stride_w;         /* >= 1 (1) */
	int pad_h, pad_w;               /* zero padding each side (transpose: torch's padding) (0) */
	int dilation_h, dilation_w;     /* >= 1 (1) */
	int groups;                     /* >= 1 (1) */
	int output_pad_h, output_pad_w; /* transpose: torch's output_padding (0) */
	int precision;                  /* conv2d: 0 Q2.6 mediump, 1 Q2.6 highp, 2 float16, 3 float32
	                                   (3; the CLI's --precision) */
	int algorithm;                  /* the spatial algorithm: 0 auto, 1 batch4, 2 interp,
	                                   3 planes4, 4 shared, 5 gemm, 6 winograd (the CLI's
	                                   --algorithm) (0) */
	int method;                     /* transpose: 0 auto, 1 zero-insert, 2 overlap-add,
	                                   3 subkernel (0) */
	int padding_mode;               /* transpose: 0 torch, 1 TensorFlow SAME, 2 TensorFlow VALID
	                                   (then pad and output_pad 0) (0) */
	int out_h, out_w;               /* transpose, TF modes: the output's size (0, 0: Keras's
	                                   default) */
	int time_stages;                /* 1: fftbloom_conv_stats gets the GPU time (timer queries,
	                                   or a glFinish after each stage where there are none) */
};
FFTBLOOM_API void fftbloom_conv_params_init(struct fftbloom_conv_params *p);

/* What a convolution did (an optional output). */
struct fftbloom_conv_stats {
	int algorithm;  /* the spatial algorithm that ran (1-6; transpose: of its inner
	                   convolutions, 0 for overlap-add, which has none) */
	int method;     /* transpose: the method that ran (1-3) */
	int timed;      /* 1: gpu_ms and conv_ms are timer queries' GPU time; 0: not timed
	                   (no time_stages) or host clock around each stage */
	double gpu_ms;  /* with time_stages: the GPU's work without the transfers */
	double conv_ms; /* conv2d with time_stages: the convolution's dispatches alone */
	double wall_ms; /* host clock, the whole call */
};
/* The CLI's names of an algorithm ("auto", "batch4", "interp", "planes4", "shared", "gemm",
 * "winograd") and a transpose method ("auto", "zero-insert", "overlap-add", "subkernel"); "?" out
 * of range. */
FFTBLOOM_API const char *fftbloom_conv_algorithm_name(int algorithm);
FFTBLOOM_API const char *fftbloom_conv_method_name(int method);

/* The output shape (B, Cout, OH, OW) of conv2d (transpose 0) or conv2d_transpose (1) for input
 * (B, Cin, H, W) and weight (conv2d: (Cout, Cin / groups, kH, kW); transpose: (Cin,
 * Cout / groups, kH, kW)). No context: pure arithmetic, any thread. 0, or FFTBLOOM_E_ARG with a
 * message in err (err_len bytes; may be NULL) naming what does not fit. */
FFTBLOOM_API int fftbloom_conv_output(int transpose, const int in_shape[4],
                                      const int weight_shape[4],
                                      const struct fftbloom_conv_params *p, int out_shape[4],
                                      char *err, size_t err_len);
/* out = conv2d(in, weight) + bias (cross-correlation, as torch): host float32 arrays, in of
 * in_shape, weight of weight_shape, bias (Cout) or NULL, out of fftbloom_conv_output's shape.
 * p NULL: the defaults; st (NULL: none) gets what ran. */
FFTBLOOM_API int fftbloom_conv2d(fftbloom_context *c, const float *in, const int in_shape[4],
                                 const float *weight, const int weight_shape[4],
                                 const float *bias, const struct fftbloom_conv_params *p,
                                 float *out, struct fftbloom_conv_stats *st);
/* out = conv_transpose2d(in, weight) + bias, as torch.nn.functional.conv_transpose2d (or
 * TensorFlow's SAME / VALID with p->padding_mode). */
FFTBLOOM_API int fftbloom_conv2d_transpose(fftbloom_context *c, const float *in,
                                           const int in_shape[4], const float *weight,
                                           const int weight_shape[4], const float *bias,
                                           const struct fftbloom_conv_params *p, float *out,
                                           struct fftbloom_conv_stats *st);

/* fftbloom_conv2d and fftbloom_conv2d_transpose with the input and the output in GL buffer
 * objects of the context's share group (the tensors' float32 NCHW values from offset 0, each
 * buffer at least the tensor's bytes, else FFTBLOOM_E_ARG), copied on the GPU into and out of
 * the engine's buffers: no host transfer of the tensors. weight and bias stay host arrays (they
 * are small and reused). A shader's writes to in_buf must be made visible first
 * (glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT)); out_buf is written by a buffer copy, which
 * every later command sees. Binds GL_COPY_READ_BUFFER and GL_COPY_WRITE_BUFFER. */
FFTBLOOM_API int fftbloom_conv2d_gl(fftbloom_context *c, unsigned in_buf, const int in_shape[4],
                                    const float *weight, const int weight_shape[4],
                                    const float *bias, const struct fftbloom_conv_params *p,
                                    unsigned out_buf, struct fftbloom_conv_stats *st);
FFTBLOOM_API int fftbloom_conv2d_transpose_gl(fftbloom_context *c, unsigned in_buf,
                                              const int in_shape[4], const float *weight,
                                              const int weight_shape[4], const float *bias,
                                              const struct fftbloom_conv_params *p,
                                              unsigned out_buf,
                                              struct fftbloom_conv_stats *st);

/* ---- codecs: bytes <-> float RGBA (no context, any thread) ----
 * Formats by name: "jpeg", "png", "exr", "hdr", "pfm", "webp", "avif". Decoding sniffs the
 * format; pixels are linear light for the float formats and sRGB-decoded to linear for the
 * 8/16-bit ones, as the CLI reads them. err (err_len bytes, may be NULL) gets the message. */
FFTBLOOM_API int fftbloom_image_decode(const void *bytes, size_t len, struct fftbloom_image *out,
                                       char *err, size_t err_len);
FFTBLOOM_API int fftbloom_image_read(const char *path, struct fftbloom_image *out, char *err,
                                     size_t err_len);
/* Encodes img as format (quality 0: the format's default; bits 0: the format's default, else
 * PNG 8/16, EXR 16/32, AVIF 8/10/12) into *bytes (fftbloom_free). */
FFTBLOOM_API int fftbloom_image_encode(const struct fftbloom_image *img, const char *format,
                                       int quality, int bits, void **bytes, size_t *len,
                                       char *err, size_t err_len);
FFTBLOOM_API void fftbloom_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
