/* The GLES FFT engine: 1D transforms batched over the rows or the columns of a 2D buffer of
 * complex float32 (vec2: one signal per element; vec4: two signals per element), and 2D. Any
 * length >= 1: natively where the prime factors are at most 13, through Bluestein otherwise.
 * create compiles every program and allocates every buffer; execute only binds and dispatches.
 * Sources: fft_plan.c (planning, pure CPU), fft_codegen.c (the programs' preambles and pass
 * sequences), fft_axis.c (an axis's buffers and execution; 2D), fft_tune.c (measuring shapes
 * for the wisdom, wisdom.c), fft_conv.c (the fused convolution), fft_cache.c (the plan cache).
 *
 * GL contract: all calls on the context's thread. execute binds shader-storage buffers at
 * bindings 0-5 and a program, leaves them bound, and ends with a shader-storage memory barrier,
 * so the caller's next dispatch (or a buffer map after a GL_BUFFER_UPDATE barrier) sees results.
 * Conventions are numpy's: forward unscaled, inverse scaled by 1/n along each axis (or the
 * reverse with norm_forward). Elements are complex float32 pairs, or float16 pairs with half. */
#ifndef FFTBLOOM_FFT_H
#define FFTBLOOM_FFT_H

#include <stddef.h>

#include "gles/egl.h"
#include "gles/fft_plan.h"
#include "gles/program.h"
#include "gles/wisdom.h"

#define FFT_ERR_LEN PROGRAM_ERR_LEN

enum fft_error {
	FFT_OK = 0,
	FFT_E_PLAN = -1,    /* no plan for that length and options (message says why) */
	FFT_E_PROGRAM = -2, /* a program failed to compile or link */
	FFT_E_GL = -3,      /* a GL call failed (e.g. out of GPU memory) */
	FFT_E_NOMEM = -4,
	FFT_E_ARG = -5,     /* bad argument: size, axes, components */
	FFT_E_LIMIT = -6,   /* exceeds a device limit (storage-buffer size, group counts) */
};

enum fft_axes { FFT_ROWS = 1, FFT_COLS = 2, FFT_BOTH = 3 };

/* What a probe leaves out of a shared-technique program, each to isolate one factor of its
 * time (bench/RESULTS.md, "The rows' time taken apart"). */
enum fft_probe {
	FFT_PROBE_NONE = 0,         /* the transform */
	FFT_PROBE_COPY = 1,         /* the first pass's loads stored back: the memory traffic alone */
	FFT_PROBE_NO_ARITHMETIC = 2,/* loads, shared-memory exchanges and stores, no butterflies */
	FFT_PROBE_FAKE_TWIDDLES = 3,/* every butterfly, twiddles without sin and cos */
	FFT_PROBE_NO_BARRIERS = 4,  /* every butterfly and exchange, no barrier between them */
	FFT_PROBE_TWIDDLE_POWERS = 5,/* one sin and cos a butterfly, the other twiddles its powers
	                                (a candidate: correct, less accurate) */
	FFT_PROBE_COUNT
};

struct fft_opts {
	int technique;   /* enum fft_technique: auto picks shared where the signal fits; blocked
	                    applies to columns (signals_adjacent), and an axis of rows asked for it
	                    is planned as auto, so that a 2D or bloom plan can ask for it whole */
	int components;  /* 2 (vec2) or 4 (vec4) */
	int half;        /* 1: the data buffer holds float16 (packHalf2x16), arithmetic in float32 */
	int norm_forward;/* 1: scale the forward transform by 1/n and leave the inverse unscaled
	                    (keeps float16 spectra in range); 0: numpy's convention */
	int threads;     /* shared: invocations per signal; blocked: the most invocations per signal
	                    in a sweep; 0: the plan's choice */
	int signals;     /* signals per work group: blocked (0: the plan's choice, 64-byte rows) and
	                    shared (0: the plan's choice; else exactly so many, if they fit) */
	int split;       /* shared technique: exchanges through shared memory in exactly so many
	                    rounds of part of an element: 1 two rounds (vec4 as vec2, vec2 as float:
	                    the rule's for long vec2 rows and one-pass columns), 2 four (vec4 as
	                    float: the rule's for vec4 rows of 1025-4096; the fused convolution
	                    takes at most 1); 0: the rule (gles/fft_plan.h, FFT_ROUNDS_ABOVE) */
	int pad_from;    /* fft_plan_opts.pad_from: 0, the measured rule (FFT_PAD_FROM); tests
	                    lower it to run padded exchanges on small devices */
	int probe;       /* a measuring instrument for the shared technique's programs (fftbloom
	                    bench --fft-probe), enum fft_probe; 0 in the product: every other value
	                    gives wrong results */
	struct fft_wisdom *wisdom; /* with technique auto: the shape measured fastest (measuring
	                              the candidates on first use of a shape), or NULL */
	int mult_shared; /* fused convolutions (and Bluestein's filter): 1 multiply in shared
	                    memory between the forward and inverse passes (a measuring option); 0
	                    in registers, the inverse's radices in the reverse order (a colour
	                    kernel's Hermitian partners by subgroup shuffles where they pair
	                    neighbouring invocations, egl_info.subgroup_pairs, else through shared
	                    memory) */
	int io;          /* 1: rows its caller runs with its own loads and stores (fft_io): with
	                    technique auto their wisdom line of the ends (fft_wisdom_key.io) first,
	                    else the plain transform's shape (fft_axis_io_unmeasured) */
};

const char *fft_strerror(int code);

/* ---- one axis: length-n transforms of `count` signals in a buffer ---- */
struct fft_axis;

/* Plans and builds transforms of length n. signals_adjacent: neighbouring signals are
 * neighbouring elements (columns of a row-major image). capacity: elements of the largest
 * buffer region it will run on (for the global technique's scratch); max_count: most signals
 * per execute (for Bluestein's work rows). */
int fft_axis_create(struct program_cache *pc, const struct egl_info *info, int n,
                    int signals_adjacent, size_t capacity, int max_count,
                    const struct fft_opts *o, const struct log_sink *log,
                    struct fft_axis **out, char err[FFT_ERR_LEN]);
void fft_axis_destroy(struct fft_axis *a); /* NULL-safe */

/* Transforms in place the signals s in [0, count): element i of signal s is at element index
 * offset + s*sig_stride + i*elem_stride of buffer `buf`. */
int fft_axis_execute(struct fft_axis *a, unsigned buf, size_t offset, size_t sig_stride,
                     size_t elem_stride, int count, int inverse);
const struct fft_plan *fft_axis_plan(const struct fft_axis *a);
/* 1 when the axis (or Bluestein's inner one) runs the built-in rule's choice while its shape
 * waits in the wisdom's queue to be measured (FFT_WISDOM_MEASURE_IDLE): a plan holding it is
 * rebuilt once the wisdom's generation moves. */
int fft_axis_provisional(const struct fft_axis *a);
/* 1 when the axis was made with o->io and the wisdom has no line of the ends for its shape:
 * it runs the plain transform's shape, and its caller may measure its own (the bloom's rows:
 * bloom_rows_tune_step) and put it under fft_wisdom_key_of's io key. */
int fft_axis_io_unmeasured(const struct fft_axis *a);
/* The wisdom key of a length-n axis of o's components and storage over batches of max_count,
 * with o->io the ends' key. */
void fft_wisdom_key_of(int n, int adjacent, int max_count, const struct fft_opts *o,
                       struct fft_wisdom_key *k);
/* Rows of length n planned as fft_axis_create would with o's shape (technique, threads,
 * signals, split; no wisdom looked up) but no program built: only fft_io_create runs them
 * (fft_axis_execute refuses it). For measuring the caller's ends at several shapes while
 * compiling only the io programs. FFT_E_PLAN for a Bluestein length. */
int fft_axis_shape(struct program_cache *pc, const struct egl_info *info, int n,
                   size_t capacity, int max_count, const struct fft_opts *o,
                   struct fft_axis **out, char err[FFT_ERR_LEN]);
/* Bluestein's inner transform of its padded length (its plan tells how it runs), or NULL (also
 * in the one-dispatch form, which has none). */
const struct fft_axis *fft_axis_inner(const struct fft_axis *a);
/* How a Bluestein axis runs: 1, in one dispatch (the inner forward transform, the filter's
 * multiply and the inner inverse in one program, where a float32 signal of the inner length
 * goes through shared memory whole, or for vec4 in vec2 rounds); 2, the inner transforms with
 * the chirps and the filter as their loads and stores (where it fits in float rounds); 5, three
 * outer steps around the inner transforms (float16 storage, or longer); 0: not Bluestein. */
int fft_axis_bluestein_form(const struct fft_axis *a);
/* The plan of the transform that runs: the axis's own for a native length; for Bluestein the
 * one-dispatch form's shape (inner length, invocations, signals a group, rounds) or the inner
 * transform's. What reports of an axis's shape print. */
const struct fft_plan *fft_axis_run_plan(const struct fft_axis *a);

/* ---- 2D: a width x height row-major buffer ---- */
struct fft;

int fft_create(struct program_cache *pc, const struct egl_info *info, int width, int height,
               int axes, const struct fft_opts *o, const struct log_sink *log,
               struct fft **out, char err[FFT_ERR_LEN]);
void fft_destroy(struct fft *f); /* NULL-safe */

/* Transforms buffer `buf` (width*height elements) in place along the axes it was made for:
 * rows first, then columns (forward and inverse alike; the 2D DFT is separable). */
int fft_execute(struct fft *f, unsigned buf, int inverse);

/* ---- plans cached by (size, axes, options): created on first use, least recently used out ---- */
struct fft_cache;

int fft_cache_create(struct program_cache *pc, const struct egl_info *info,
                     const struct log_sink *log, int max_plans, struct fft_cache **out);
void fft_cache_destroy(struct fft_cache *c); /* NULL-safe; destroys its plans */

/* The plan for (width, height, axes, options), built with fft_create on a miss (the least
 * recently used plan is destroyed past max_plans: a plan got earlier is valid until then).
 * o->wisdom is used when building but is not part of the key. */
int fft_cache_get(struct fft_cache *c, int width, int height, int axes, const struct fft_opts *o,
                  struct fft **out, char err[FFT_ERR_LEN]);
void fft_cache_stats(const struct fft_cache *c, unsigned long long *hits,
                     unsigned long long *misses, int *plans);

/* ---- fused convolution: forward, spectrum multiply, inverse in one dispatch ---- */
struct fft_conv;

/* For `count` signals of length n of a vec4 buffer, either its rows (row-major, row stride n)
 * or the columns of a row-major buffer of n rows of `count` elements: signals k and
 * (count - k) mod count are transformed together in one work group, so the multiply can pair
 * each (k, l) with its Hermitian partner (count - k, n - l) as the packed real convolution needs
 * (gray: a real kernel's plain vec2 spectrum, multiplied directly, so neighbours k and k + 1
 * share a group instead), then transformed back and scaled by 1/n. The kernel buffer holds
 * (k, l) at k*n + l whichever the signals are (float32).
 * layout: FFT_IO_PAIRS (not gray), the columns (columns 1 only) in the pair order: signal k is
 * column fft_pair_pos(k, count), so a group's k and count - k are neighbours in memory; and/or
 * FFT_IO_TILES(L) (columns 1 only), the buffer's rows in tiles of 2^L columns (below).
 * FFT_E_PLAN when two signals do not fit the device's shared memory. o: components must be 4;
 * half, threads, split, pad_from, mult_shared and probe apply. */
int fft_conv_create(struct program_cache *pc, const struct egl_info *info, int n, int count,
                    int gray, int layout, const struct fft_opts *o, struct fft_conv **out,
                    char err[FFT_ERR_LEN]);
void fft_conv_destroy(struct fft_conv *c); /* NULL-safe */
const struct fft_plan *fft_conv_plan(const struct fft_conv *c); /* two signals a group */
/* columns 0: the signals are buf's rows (n elements apart); 1: its columns, of rows `pitch`
 * elements apart (0: count; less than count: FFT_E_ARG), or with FFT_IO_TILES(L) in tiles
 * `pitch` elements apart (at least n << L). Elements l >= valid of each signal are taken as
 * zero and not stored back (rows of padding; valid < 0 or > n: all n). A pairs or tiles
 * convolution runs on columns only (FFT_E_ARG on rows). */
int fft_conv_execute(struct fft_conv *c, unsigned buf, unsigned kernel, int columns, int valid,
                     int pitch);

/* ---- an axis's transform with the caller's loads or stores ---- */
/* The shared-memory program of axis a (its plan and options, both built by fft_axis_create) in
 * one direction, its first loads (FFT_IO_LOAD) and/or last stores (FFT_IO_STORE) replaced by the
 * caller's GLSL, which the shader sources `sources` ('+'-joined names, compiled after
 * fft_common, which defines T: vec4 with 4 components, else vec2) define:
 *   T fft_io_load(uint sig, uint i)           element i of signal sig (float32 whatever the
 *                                             storage), in place of the data buffer's;
 *   void fft_io_store(uint sig, uint i, T v)  element i of the result, scaled as the axis
 *                                             scales, in place of writing the data buffer.
 * So a pass before or after the transform (a prefilter, a composite) costs no pass over memory
 * of its own. The caller binds its buffers and sets its uniforms on fft_io_program (they are the
 * program's state); io_id tells its variants of the same sources apart in the program cache.
 * With FFT_IO_PAIRS beside one hook, the other end (the data buffer's stores, or its loads) is in
 * the pair order (fft_pair_pos): the row spectra a pairs fused convolution reads and writes.
 * With FFT_IO_TILES(L) (1 <= L <= FFT_TILE_LOG_MAX) beside one hook, the data buffer holds its
 * rows in tiles of 2^L columns: element c of row r at offset + (c >> L) * tile + (r << L) +
 * c % 2^L, tile (fft_io_execute's sig_stride) at least count << L apart. A fused convolution
 * over columns reads the same layout; a column's group then reads its element in a tile row of
 * 2^L contiguous elements shared with its neighbours, instead of one element a row pitch
 * apart.
 * FFT_E_PLAN unless a's signals are rows of a native length (not Bluestein's) run by the shared
 * technique (a whole signal a work group). */
#define FFT_IO_LOAD 1
#define FFT_IO_STORE 2
#define FFT_IO_PAIRS 4
#define FFT_IO_TILE_SHIFT 3
#define FFT_IO_TILES(log) ((log) << FFT_IO_TILE_SHIFT)
#define FFT_IO_TILE_LOG(io) (((io) >> FFT_IO_TILE_SHIFT) & 7)
#define FFT_TILE_LOG_MAX 6
struct fft_io;
int fft_io_create(struct program_cache *pc, const struct fft_axis *a, int inverse, int io,
                  const char *sources, int io_id, struct fft_io **out, char err[FFT_ERR_LEN]);
void fft_io_destroy(struct fft_io *f); /* NULL-safe */
unsigned fft_io_program(const struct fft_io *f);
/* Signals s = 0..count-1 at buf[offset + s*sig_stride + i] (elements of the axis's type), as
 * fft_axis_execute, or with FFT_IO_TILES in tiles sig_stride elements apart (FFT_E_ARG under
 * count << L); the data buffer is still bound at binding 0 (read or written where not
 * replaced). */
int fft_io_execute(struct fft_io *f, unsigned buf, size_t offset, size_t sig_stride, int count);

struct fft_axis *fft_rows(struct fft *f); /* NULL unless rows are transformed */
struct fft_axis *fft_cols(struct fft *f);

/* ---- measuring queued shapes in idle time (FFT_WISDOM_MEASURE_IDLE) ---- */
/* The idle tuner's candidates for a length-n axis (fft_tune.c): the built-in rule's shape,
 * shared at several invocation counts (each invocation holding at most FFT_TUNE_MAX_VALUES
 * elements), global, and for adjacent signals blocked with rows of 64 (its default), 32 and 128
 * bytes and with half the invocations, each o with the shape set. Returns the count written
 * (at most FFT_TUNE_MAX_CAND). */
#define FFT_TUNE_MAX_CAND 13
/* The most elements an invocation of a shared candidate holds. More never measured fastest on a
 * GPU (the shipped wisdom's shared winners hold 4-11), and such programs take longest to build:
 * up to 0.6-1.1 s a program on the H200, held on the GPU thread while a request waits
 * (bench/RESULTS.md, "Issue 40's rows at the session's last commits"). */
#define FFT_TUNE_MAX_VALUES 16
int fft_tune_candidates(const struct egl_info *info, int n, int adjacent, int max_count,
                        const struct fft_opts *o, struct fft_opts cand[FFT_TUNE_MAX_CAND]);

/* The invocation counts worth measuring for rows a's shape run with their caller's ends
 * (fft_io): a's own first, then 256, 512, the device's most, and n / r for each radix r of a's
 * passes (a butterfly an invocation in that pass: the 4375 = 5^4 x 7 bloom rows measured
 * fastest on 875 on the H200, where the plain transform could not tell 512 from 875); each but
 * a's own at most a butterfly of the smallest radix an invocation, and all at most
 * FFT_TUNE_MAX_VALUES elements an invocation and no more than the device allows, distinct.
 * Returns the count (0 unless a is rows of the shared technique). */
#define FFT_IO_TUNE_MAX 10
int fft_io_tune_candidates(const struct egl_info *info, const struct fft_axis *a,
                           int threads[FFT_IO_TUNE_MAX]);

struct fft_tuner;

/* A tuner for the shapes queued in w (not owned; NULL: nothing ever to do). */
int fft_tuner_create(struct program_cache *pc, const struct egl_info *info, struct fft_wisdom *w,
                     const struct log_sink *log, struct fft_tuner **out);
void fft_tuner_destroy(struct fft_tuner *t); /* NULL-safe; a shape being measured is dropped */

/* One short step of measuring, on the context's thread between jobs: takes the next queued shape,
 * builds one of its candidates (a compile), runs one once (its first dispatch), warms them up
 * (about 50 ms of GPU time in all, 8 ms a step), or measures one round of them; after the last round the fastest goes into the wisdom (fft_wisdom_put: its
 * file gets the line, the generation moves). Returns 1 while work remains (call again), 0 when
 * nothing is queued. The same candidates and medians as FFT_WISDOM_MEASURE_NOW. */
int fft_tuner_step(struct fft_tuner *t);
/* What the last fft_tuner_step did, in words (for logs). */
const char *fft_tuner_last(const struct fft_tuner *t);
/* 1 while a shape is being measured or queued. */
int fft_tuner_busy(const struct fft_tuner *t);

#endif
