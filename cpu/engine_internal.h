/* Shared by the CPU engine's sources, not by its users: the context, a padded size's plans and
 * buffers, the kernel spectrum cache's entries, a kernel as a frame uses it.
 *   engine.c          the context, FFTW's threads on par_each, wisdom, the FFT operation;
 *   fftconv.c         the bloom and convolve: plans per padded size, the frame function;
 *   fftconv_kernel.c  their kernels: built-in ones kept, a kernel's pixels and spectra. */
#ifndef FFTBLOOM_CPU_ENGINE_INTERNAL_H
#define FFTBLOOM_CPU_ENGINE_INTERNAL_H

#include <fftw3.h>
#include <pthread.h>

#include "core/checked.h"
#include "cpu/engine.h"

#define CPU_PRESETS 8      /* generated built-in kernels kept */
#define CPU_FFT_PLANS 8    /* the FFT operation's plans kept */
#define CPU_MAX_PLANS 64   /* padded sizes kept at most (opts.max_plans above is clamped) */
#define CPU_MAX_N (1 << 24) /* the longest transform */
#define CPU_CHUNK 65536    /* floats a par_each item scales at least */
#define CPU_TILE_MIN 32    /* output pixels a tile side at least (opts.frame_bytes) */
#define CPU_ROWS 8         /* rows a par_each item packs, multiplies or composites */

/* One padded size with a number of real planes in (nsrc) and out (nout): FFTW's batched 2D
 * r2c of the image's planes and c2r of the products, and the buffers they run on. */
struct cpu_plan {
	int pw, ph, nsrc, nout;
	fftwf_plan fwd, inv;
	int threads;          /* FFTW's threads for it (the first frame's cpu_engine_frame_threads) */
	int measured;         /* planned with FFTW_MEASURE (or the wisdom's measured plan) */
	int per_plane;        /* fwd/inv transform one plane, run on each (unless opts.batched_plans) */
	float *real;          /* max(nsrc, nout) planes of ph x pw */
	fftwf_complex *spec;  /* max(nsrc, nout) planes of ph x (pw / 2 + 1) */
	unsigned long long last_use;
};

/* A kernel's spectrum at a padded size: 1 plane (gray) or 4 (R, G, B and luminance), scaled by
 * the normalisation and FFTW's 1 / (pw ph). */
struct cpu_kentry {
	uint64_t digest[2];
	int pw, ph, cx, cy, kw, kh, normalize, gray;
	double scale;           /* kernel_scale it was made at */
	fftwf_complex *spec;
	size_t bytes;
	unsigned long long last_use;
};

struct cpu_preset {
	struct kernel_preset spec;
	struct image img;
	uint64_t digest[2];
	unsigned long long last_use;
};

struct cpu_fft_plan {
	fftwf_plan plan;
	int w, h, axes, inverse;
	unsigned long long last_use;
};

struct cpu_engine {
	struct cpu_engine_opts opts;
	struct log_sink log;
	int threads;
	char wisdom[4096];
	int wisdom_dirty;       /* a plan was measured since the wisdom was read or written */
	char describe[128];
	unsigned long long tick;
	struct cpu_plan plans[CPU_MAX_PLANS];
	int nplans;
	struct cpu_kentry *spectra;
	size_t nspectra, cap_spectra, spectra_bytes;
	struct cpu_preset presets[CPU_PRESETS];
	struct cpu_fft_plan ffts[CPU_FFT_PLANS];
	struct cpu_cache_stats st;
};

/* FFTW planning: the flags of opts.measure; begin/end hold the process's planner lock, begin
 * sets FFTW's threads for the plans made until end (1 to the engine's threads). */
unsigned cpu_plan_flags(struct cpu_engine *e);
/* FFTW's batched r2c and c2r of q's size and planes, with flags. 0, or -1 when FFTW cannot. */
int cpu_plan_make(struct cpu_engine *e, struct cpu_plan *q, unsigned flags);
void cpu_plan_begin(struct cpu_engine *e, int threads);
void cpu_plan_end(struct cpu_engine *e);
extern pthread_mutex_t cpu_plan_lock;
void cpu_plan_free(struct cpu_plan *q);
/* Bytes of `planes` planes of the padded size's real and complex buffers; -1 on overflow. */
int cpu_plan_bytes(int pw, int ph, int planes, size_t *real, size_t *spec);

/* The kernel as used: its pixels (R, G, B, Rec. 709 luminance), size, centre and sums. */
struct cpu_kinfo {
	const struct image *img;
	uint64_t digest[2];
	int kw, kh, cx, cy;
	int gray;
	double lum_sum;
	float *rgbl; /* the source pixels, 4 floats each */
};

/* The built-in kernel spec names, with its digest: a kept one, or generated now. */
int cpu_preset_image(struct cpu_engine *e, const struct kernel_preset *spec,
                     const struct image **img, const uint64_t **digest, char err[CPU_ERR_LEN]);
/* The kernel's spectrum at (pw, ph): cached (*cached 1), or made now (its planes padded, one
 * batched r2c) from ki's pixels, which it reads into ki->rgbl for the caller to free. 0, or
 * CPU_E_ARG (a non-finite pixel, or a luminance sum of zero to normalise), CPU_E_TOO_LARGE or
 * CPU_E_NOMEM. */
int cpu_kernel_spectrum(struct cpu_engine *e, struct cpu_kinfo *ki, int pw, int ph, int threads,
                        const struct bloom_params *p, struct cpu_kentry **out, int *cached,
                        char err[CPU_ERR_LEN]);

#endif
