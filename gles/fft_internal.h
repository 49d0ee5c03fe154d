/* Shared by the FFT engine's sources (gles/fft_*.c), not by its users: the storage-buffer
 * bindings of the FFT shaders, a built program with its uniform locations, the program
 * generators of fft_codegen.c, the axis constructor without the tuner, and the axis's fields
 * with the parts fft_axis.c and fft_bluestein.c share.
 *
 * GL contract: as gles/fft.h (the context's thread). */
#ifndef FFTBLOOM_FFT_INTERNAL_H
#define FFTBLOOM_FFT_INTERNAL_H

#include <stddef.h>

#include "gles/fft.h"

/* bindings of the FFT shaders (fft_shared, fft_global, fft_blocked, bluestein) */
#define FFT_B_DATA 0   /* the signals (in place), or the source of a ping-pong pass */
#define FFT_B_DST 2    /* the destination of a ping-pong pass */
#define FFT_B_BL_DATA 1 /* Bluestein's two-dispatch form: the outer signals (bluestein_io) */
#define FFT_B_WORK 3   /* Bluestein: the padded work rows */
#define FFT_B_CHIRP 4  /* Bluestein: the chirp */
#define FFT_B_FILTER 5 /* Bluestein: the filter spectrum */
#define FFT_B_KERNEL 8 /* the fused convolution: the kernel's spectrum */

/* A program held in the program cache (program_hold) with the uniform locations execute sets,
 * looked up once when it is built. */
struct fft_prog {
	unsigned id;
	int u_offset, u_sig_stride, u_elem_stride, u_count;
	int u_valid; /* fused convolutions: the elements loaded and stored (-1 elsewhere) */
};

/* Scale where a transform of length n ends: 1/n on the scaled direction (the inverse, or the
 * forward with o->norm_forward), else 1. */
double fft_end_scale(const struct fft_opts *o, int inverse, int n);

/* Program generators. Each builds (or finds in the cache) one program of plan p under options
 * o, holds it, and fills *out; on failure FFT_E_PROGRAM (err: the shader's name and info log)
 * or FFT_E_NOMEM, *out untouched.
 *   shared: the whole transform in one dispatch (fft_shared); conv 1: the fused forward,
 *     spectrum multiply (kgray: a real kernel's vec2 spectrum) and inverse; conv 2: the same on
 *     columns in the pair order (fft_pair_pos); tile_log: its columns read in tiles of
 *     2^tile_log (FFT_IO_TILES); shuffle: a colour kernel's pairs may meet by subgroup
 *     shuffles (egl_info's subgroup_pairs); scale on the store.
 *   global: pass `pass` through global memory (fft_global); adjacent: signals are columns.
 *   shared_io: shared with the caller's loads and/or stores (io: FFT_IO_* flags; src: its shader
 *     sources, io_id: its variant; fft_io_create).
 *   sweep: sweep `sweep` of a blocked plan (fft_blocked).
 *   bluestein: step `mode` 1-3 of Bluestein's algorithm around the inner transform. */
int fft_prog_shared(struct program_cache *pc, const struct fft_plan *p, const struct fft_opts *o,
                    int inverse, int conv, int kgray, int shuffle, int tile_log, double scale,
                    struct fft_prog *out, char err[FFT_ERR_LEN]);
int fft_prog_shared_io(struct program_cache *pc, const struct fft_plan *p,
                       const struct fft_opts *o, int inverse, int io, const char *src, int io_id,
                       struct fft_prog *out, char err[FFT_ERR_LEN]);
int fft_prog_global(struct program_cache *pc, const struct fft_plan *p, const struct fft_opts *o,
                    int adjacent, int inverse, int pass, struct fft_prog *out,
                    char err[FFT_ERR_LEN]);
int fft_prog_sweep(struct program_cache *pc, const struct fft_plan *p, const struct fft_opts *o,
                   int inverse, int sweep, struct fft_prog *out, char err[FFT_ERR_LEN]);
/* Bluestein in one dispatch (bluestein_io, CONV): the inner forward transform of plan p (length
 * m, shared; vec2 whole, vec4 at most in vec2 rounds) on the chirped outer signal, the filter's
 * multiply (in registers; in shared memory with o->mult_shared), the inner inverse with the
 * chirped, scaled stores. */
int fft_prog_bluestein_fused(struct program_cache *pc, const struct fft_plan *p,
                             const struct fft_opts *o, struct fft_prog *out,
                             char err[FFT_ERR_LEN]);
int fft_prog_bluestein(struct program_cache *pc, const struct fft_plan *p,
                       const struct fft_opts *o, int inverse, int mode, struct fft_prog *out,
                       char err[FFT_ERR_LEN]);
/* Whether flags holds no FFT_IO_* bits but `allowed` and tiles of at most FFT_TILE_LOG_MAX
 * (fft_io_create's io, fft_conv_create's layout). */
int fft_io_flags_valid(int flags, int allowed);
/* Drops the hold on a built program and clears *p (nothing for an empty one). */
void fft_prog_drop(struct program_cache *pc, struct fft_prog *p);
/* Makes p current and sets its region uniforms. */
void fft_prog_use(const struct fft_prog *p, size_t offset, size_t sig_stride, size_t elem_stride,
                  int count);

/* fft_axis_create without the tuner: the plan o asks for (its technique, threads and signals as
 * given; o->wisdom unused). */
int fft_axis_build(struct program_cache *pc, const struct egl_info *info, int n,
                   int signals_adjacent, size_t capacity, int max_count,
                   const struct fft_opts *o, const struct log_sink *log,
                   struct fft_axis **out, char err[FFT_ERR_LEN]);

/* Marks an axis built from the built-in rule while its shape waits to be measured. */
void fft_axis_set_provisional(struct fft_axis *a);
/* The options the axis was built with (its plan: fft_axis_plan); the device's work-group count
 * limit along x. */
const struct fft_opts *fft_axis_options(const struct fft_axis *a);
int fft_axis_max_group_x(const struct fft_axis *a);
int fft_axis_adjacent(const struct fft_axis *a); /* its signals are columns */
/* Dispatches `groups` work groups, wrapped into rows of at most max_x (the device's limit along
 * x; the shaders number groups as x + y * gl_NumWorkGroups.x), then a shader-storage barrier. */
void fft_dispatch_groups(unsigned groups, int max_x);

/* ---- an axis (fft_axis.c) and its Bluestein parts (fft_bluestein.c) ---- */
/* Signals per dispatch where the signal index runs over work-group y. */
#define FFT_MAX_Y 65535
#define FFT_BL_UNIFORMS 7 /* bluestein_io's uniforms (fft_bluestein.c) */

struct fft_axis {
	struct program_cache *pc;                /* holds the axis's programs (program_hold) */
	struct fft_plan plan;
	struct fft_opts opts;
	int n, adjacent, max_count;
	size_t capacity;
	const struct egl_info *info;
	struct log_sink log;
	struct fft_prog shared[2];               /* [inverse] */
	struct fft_prog pass[2][FFT_MAX_PASSES]; /* global technique, [inverse][pass] */
	struct fft_prog sweep[2][FFT_MAX_PASSES];/* blocked technique, [inverse][sweep] */
	unsigned scratch;                        /* global and blocked techniques' ping-pong buffer */
	/* Bluestein */
	struct fft_prog blf;                     /* the one-dispatch form (bluestein_io, CONV) */
	struct fft_plan blf_plan;                /* its inner transform's shape */
	int blf_u[FFT_BL_UNIFORMS];              /* its uniforms' locations (BLU_*) */
	struct fft_axis *inner;                  /* native length-m transforms on the work rows */
	struct fft_prog bl[2][3];                /* [inverse][mode-1] (the five-dispatch form) */
	struct bl_io {                           /* the two-dispatch form: [inner inverse] */
		struct fft_io *io;
		int u[FFT_BL_UNIFORMS];              /* its uniforms' locations (BLU_*) */
	} blio[2];
	unsigned work, chirp, filter[2];
	int provisional;                         /* fft_axis_provisional */
	int io_unmeasured;                       /* fft_axis_io_unmeasured */
	int shape_only;                          /* fft_axis_shape: a plan, no programs */
};

/* A shader-storage barrier after a dispatch whose writes the next one reads. */
void fft_storage_barrier(void);
/* A storage buffer of `bytes` bytes, optionally filled from data; 0 on failure (logged). */
unsigned fft_axis_buffer(size_t bytes, const void *data, const struct log_sink *log);
/* The axis's buffer (capacity elements) within the storage-buffer limit: 0, or FFT_E_LIMIT. */
int fft_axis_check_capacity(const struct fft_axis *a, char err[FFT_ERR_LEN]);
/* A native axis's transforms of `count` signals (fft_axis_execute's arguments). */
int fft_axis_run_native(struct fft_axis *a, unsigned buf, size_t offset, size_t sig_stride,
                        size_t elem_stride, int count, int inverse);
/* Bluestein's parts of an axis whose plan is Bluestein's: built (FFT_E_* with err on failure),
 * run as fft_axis_execute, and freed (its programs, buffers and inner axis; fft_axis_destroy). */
int fft_bluestein_build(struct fft_axis *a, char err[FFT_ERR_LEN]);
int fft_bluestein_run(struct fft_axis *a, unsigned buf, size_t offset, size_t sig_stride,
                      size_t elem_stride, int count, int inverse);
void fft_bluestein_free(struct fft_axis *a);

#endif
