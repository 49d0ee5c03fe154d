/* The CPU engine: the GPU engine's operations on the host's cores, for hosts without a GPU (where
 * GL is a software renderer, or no context can be made). The FFT-convolution bloom and convolve
 * with FFTW single precision (batched r2c/c2r at the GPU's padded sizes, plans cached per padded
 * size, kernel spectra cached per kernel digest and padded size, FFTW wisdom persisted), the
 * FFT operation, and conv2d / conv2d_transpose (cpu/conv.h). The answers are the GPU engine's
 * (gles/bloom.h): the same prefilter, kernel centre and scale, normalisation and composite.
 *
 * Threads: FFTW's parallel loops and the engine's own row loops run on core/parallel.h's
 * par_each, which shares the process's cores (affinity and cgroup quota) with the codec
 * threads. One cpu_engine is used by one thread at a time; several engines may run at once. */
#ifndef FFTBLOOM_CPU_ENGINE_H
#define FFTBLOOM_CPU_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "codec/image.h"
#include "core/engine_params.h"
#include "core/log.h"

#define CPU_ERR_LEN 4096

/* The codes that match gles/bloom.h's enum bloom_error have its values, so callers map both alike. */
enum cpu_error {
	CPU_OK = 0,
	CPU_E_ARG = -1,       /* a bad parameter, kernel or shape (message names it): client error */
	CPU_E_TOO_LARGE = -2, /* beyond the engine's limits (FFT length, host memory bound) */
	CPU_E_NOMEM = -4,
	CPU_E_UNSUPPORTED = -8, /* an operation this engine does not have */
};

struct cpu_engine_opts {
	int threads;               /* the most threads an operation uses (0: par_cores()) */
	const char *wisdom_file;   /* FFTW wisdom read at create, written when a plan was measured;
	                              NULL or "": none kept */
	int measure;               /* enum cpu_measure: how a new padded size is planned */
	double measure_limit_s;    /* FFTW's planning time for one measured plan at most
	                              (fftwf_set_timelimit); 0: 1 s */
	size_t kernel_cache_bytes; /* LRU bound on cached kernel spectra; 0: 512 MiB */
	int max_plans;             /* padded sizes kept with their buffers; 0: 8 */
	size_t frame_bytes;        /* host memory one frame's pass may take (its planes' buffers
	                              and kernel spectrum); larger frames run in overlap-save tiles
	                              of one padded size; 0: no bound */
	int batched_plans;         /* 1: one transform batched over the planes; 0: one plane's
	                              transform run on each plane, whose rows and columns FFTW
	                              splits over all the threads (at 1080p on 16 cores 0.92x plain
	                              FFTW where the batched plan ran 1.45x: bench/RESULTS.md) */
	int min_frame_threads;     /* pixels_per_thread's rule gives a frame this many at least
	                              (e.g. the cores over the frames run at once) */
	long long pixels_per_thread; /* a w x h frame runs on ceil(w h / this) threads, at most
	                                threads (a daemon running several frames at once gives a
	                                small frame few threads, which FFTW uses better); 0:
	                                CPU_PIXELS_PER_THREAD; negative: every frame on all threads */
};

/* pixels_per_thread's default: past a few threads a small frame's transforms cost more in
 * handing out their pieces than they gain (on 16 cores a 480x270 bloom took 2.3 ms on 8
 * threads and 3.0 on 16, a 1080p one 41.5 and 25.0: bench/RESULTS.md), so a 480x270 frame
 * runs on 8 threads, 1080p and larger on all up to 100 */
#define CPU_PIXELS_PER_THREAD 20480LL

/* FFTW_ESTIMATE plans at once (the wisdom's measured plan where it holds one), or
 * FFTW_MEASURE: before the first frame of a size (seconds on few cores, then kept in the
 * wisdom), or in idle time (cpu_engine_idle), the frames meanwhile on the estimated plan. */
enum cpu_measure { CPU_MEASURE_NEVER = 0, CPU_MEASURE_NOW = 1, CPU_MEASURE_IDLE = 2 };

struct cpu_stats {
	int padded_w, padded_h;   /* the FFT size (of each tile, when tiled) */
	int tiles_x, tiles_y;     /* 1 x 1 untiled */
	int gray_kernel;          /* 1: one kernel spectrum for every channel */
	int kernel_cached;        /* 1: the kernel spectrum came from the cache */
	int planes;               /* real planes transformed forward */
	double setup_ms;          /* plan (made on a miss) and kernel spectrum (on a miss) */
	double forward_ms, multiply_ms, inverse_ms, pack_ms, composite_ms;
	double wall_ms;
};

struct cpu_cache_stats {
	unsigned long long kernel_hits, kernel_misses, kernel_evictions;
	size_t kernel_bytes, kernel_entries;
	unsigned long long plan_hits, plan_misses;
	size_t plan_entries;
};

struct cpu_engine;

/* 0, or a negative cpu_error with err saying what failed. log: where the engine reports (NULL
 * or a NULL fn: nothing), e.g. an unreadable wisdom file. */
int cpu_engine_create(const struct cpu_engine_opts *o, const struct log_sink *log,
                      struct cpu_engine **out, char err[CPU_ERR_LEN]);
/* Writes the wisdom (when measured plans were added), frees everything. NULL-safe. */
void cpu_engine_destroy(struct cpu_engine *e);

int cpu_engine_threads(const struct cpu_engine *e);
/* The threads a w x h frame runs on (opts.pixels_per_thread's rule): 1 to cpu_engine_threads. */
int cpu_engine_frame_threads(const struct cpu_engine *e, int w, int h);
/* The same rule without an engine: ceil(w h / pixels_per_thread) clamped to
 * [min_threads, threads] (pixels_per_thread 0: threads). */
int cpu_frame_threads(long long pixels_per_thread, int min_threads, int threads, int w, int h);
/* "FFTW 3.3.10 (single), N threads": what `info` and /v1/info say the engine is. */
const char *cpu_engine_describe(const struct cpu_engine *e);
void cpu_engine_stats(const struct cpu_engine *e, struct cpu_cache_stats *st);

/* As gles/bloom.h's bloom_run: op BLOOM_OP_BLOOM or BLOOM_OP_CONVOLVE on `in` (1-4 channels;
 * missing alpha counts as 1 and is not returned) with kernel (NULL: p->preset generated; its
 * digest in digest[2], or zeros to have it computed); the result in *out (image_free) with in's
 * channels, two more when a colour kernel meets a gray image. A result with NaN or infinite
 * samples where the input's were finite is CPU_E_ARG. st may be NULL. */
int cpu_bloom_run(struct cpu_engine *e, int op, const struct image *in,
                  const struct image *kernel, const uint64_t digest[2],
                  const struct bloom_params *p, struct image *out, struct cpu_stats *st,
                  char err[CPU_ERR_LEN]);

/* A built-in kernel (p->preset's kind) as an RGB image, the same as the GPU engine makes. */
int cpu_kernel_preset(struct cpu_engine *e, const struct kernel_preset *ks, struct image *out,
                      char err[CPU_ERR_LEN]);

/* The FFT operation: width x height complex float32 (re, im) in place, along rows (axes 1),
 * columns (2) or both (3); forward unscaled, inverse scaled by 1/n per transformed axis
 * (numpy's conventions). Any length >= 1. */
int cpu_fft(struct cpu_engine *e, float *data, int width, int height, int axes, int inverse,
            char err[CPU_ERR_LEN]);

/* One step of idle work (CPU_MEASURE_IDLE): the oldest plan not measured yet is planned again
 * with FFTW_MEASURE and replaces its estimated one (the same transforms; within float
 * rounding). Between frames only. 1 when it took a step, 0 when no plan waits. */
int cpu_engine_idle(struct cpu_engine *e);

/* FFTW's own account of the kept plans of padded size pw x ph (the solvers and how each splits
 * the threads: fftwf_sprint_plan), "forward ...\ninverse ..." into buf, cut at len; 0, or -1
 * when no plan of that size is kept. */
int cpu_engine_plan_text(struct cpu_engine *e, int pw, int ph, char *buf, size_t len);

/* Frees every padded size's plan and buffers and every kernel spectrum: what an idle engine
 * holds (the FFTW wisdom stays, so a size planned again is quick). Between frames only. */
void cpu_engine_trim(struct cpu_engine *e);

const char *cpu_strerror(int code);

/* Before the first cpu_engine_create only, for a benchmark's comparison: FFTW runs its own
 * threads instead of core/parallel.h's pool (which then no longer bounds them: beside codec
 * threads they oversubscribe the cores). */
void cpu_engine_fftw_own_threads(void);

#endif
