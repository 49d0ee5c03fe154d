/* FFT planning, pure CPU: the radix sequence for a length, the per-pass strides, the work-group
 * shape, whether a signal fits in shared memory and how its exchanges are laid out there.
 * Executing a plan (gles/fft) only binds and dispatches what is decided here.
 *
 * Index mapping (Stockham autosort, decimation in time, no bit reversal). For a length n with
 * radices R_0..R_{P-1} (product n), pass p has radix R = R_p and stride Ns = R_0*...*R_{p-1}
 * (Ns = 1 for the first pass). Each of the n/R butterflies j in [0, n/R) of pass p
 *   reads      x[j + r*(n/R)]                      for r = 0..R-1,
 *   multiplies input r by the twiddle  w^(r*k),   k = j mod Ns,  w = exp(-+2*pi*i/(Ns*R)),
 *   takes the R-point DFT, and
 *   writes     y[(j/Ns)*Ns*R + k + r*Ns]           for r = 0..R-1.
 * After the last pass y holds the DFT in natural order. Twiddles are computed in the shader
 * (sin and cos), not read from a table in a storage buffer, which measured slower at every size
 * (bench/RESULTS.md, "Log of decisions").
 *
 * Sweeps (blocked technique). Passes p0..p1-1 with stride S = Ns of p0 and radices multiplying
 * to L act like one pass of radix L: they touch the n/L closed sets g in [0, n/L), each of L
 * elements, and set g
 *   reads      x[g + t*(n/L)]                      into local element t = 0..L-1,
 *   runs the passes as a length-L Stockham on the local array: local pass q (radix R, local
 *     stride s = product of the sweep's earlier radices) reads local j + r*(L/R) and writes
 *     local (j/s)*s*R + j%s + r*s, j in [0, L/R), with the twiddle of the whole transform:
 *     w^(r*k), k = (j%s)*S + g%S, w = exp(-+2*pi*i/(S*s*R)), and
 *   writes     local u to y[(g/S)*S*L + g%S + u*S] u = 0..L-1.
 * (Proof: before a pass of stride Ns, index i = b*Ns + k holds output k of the length-Ns DFT of
 * the decimated subsequence b; the pass takes b = b0 + r*(n/(Ns*R)) to b0, k to k + r*Ns. Within
 * the sweep b = g/S + (n/(S*L))*b_loc and k = k_loc*S + g%S, which the passes map among
 * themselves; local index b_loc*s + k_loc.) A work group holds C neighbouring signals of one
 * set g, so for columns each local element is C contiguous elements of a row. Its invocations
 * hold the values in registers between passes and exchange them through shared memory, where
 * the C signals' L elements fit at once. */
#ifndef FFTBLOOM_FFT_PLAN_H
#define FFTBLOOM_FFT_PLAN_H

#include "core/fft_size.h"

#define FFT_MAX_PRIME 13   /* largest prime factor run natively; larger ones go through Bluestein */
#define FFT_MAX_RADIX 13   /* largest radix of a pass: the powers of two go in radix 8 (and one
                              smaller remainder), the odd primes each in a pass of their own */

/* The shortest power-of-two length whose shared-memory exchanges are padded against bank
 * conflicts (fft_plan_exchanges): padding pays where a power-of-two stride maps a whole exchange
 * onto a few banks, from 4096 up; shorter and 7-smooth lengths gain nothing from it (bench/
 * RESULTS.md, "Log of decisions"). */
#define FFT_PAD_FROM 4096

/* vec4 signals longer than this exchange through shared memory in rounds even where whole vec4
 * fit: the fused convolution in two vec2 rounds (half the shared memory a group, measured faster
 * on the H200 for 1176-2240: bench/RESULTS.md, "The fused columns in place, their shape"; its
 * multiply needs a complex plane whole), the shared technique's rows up to FFT_FLOAT_ROUNDS_TO
 * in four float rounds where two vec2 rounds would fit, longer rows in two vec2 rounds, and its
 * columns in vec2 rounds. */
#define FFT_ROUNDS_ABOVE 1024
/* The longest vec4 rows that exchange in four float rounds: measured faster than vec2 rounds
 * for the bloom's rows of 2240-4096 (bench/RESULTS.md, "vec2 in float rounds, ..."), slower for
 * the 2160p k512 bloom's rows of 4375 (the bloom 1.099 ms against 1.057-1.058 in vec2 rounds:
 * "Issue 40's rows at the session's last commits"). */
#define FFT_FLOAT_ROUNDS_TO 4096

/* auto: shared where the signal fits, else global; shared: the whole signal in shared memory,
 * one dispatch; global: one dispatch per radix pass; blocked: one dispatch per sweep of passes
 * (see above), for signals that are neighbours in memory (columns). Each wins for some shapes
 * (typically shared for rows that fit, blocked for long columns, global for lone vec4 columns),
 * so the tuner (fft.h, fft_opts.wisdom) measures them all (bench/RESULTS.md, "Built-in FFT
 * choices"). */
enum fft_technique { FFT_TECH_AUTO = 0, FFT_TECH_SHARED, FFT_TECH_GLOBAL, FFT_TECH_BLOCKED };
#define FFT_TECH_COUNT 4
/* "auto", "shared", "global", "blocked", indexed by enum fft_technique, NULL after the last
 * (gles/names.c): what requests, flags and logs call them. */
extern const char *const fft_technique_names[FFT_TECH_COUNT + 1];

enum fft_plan_error {
	FFT_PLAN_OK = 0,
	FFT_PLAN_E_SIZE = -1,      /* n < 1 or n > FFT_MAX_N */
	FFT_PLAN_E_NOFIT = -2,     /* shared technique forced but the signal does not fit, or
	                              blocked and not even one pass of C signals fits */
	FFT_PLAN_E_ROWS = -3,      /* blocked technique asked for signals that are not adjacent */
};

struct fft_plan_opts {
	int technique;       /* enum fft_technique */
	int components;      /* floats per element: 2 (vec2, one signal) or 4 (vec4, two signals) */
	int shared_limit;    /* bytes of shared memory a work group may use (the device's) */
	int max_invocations; /* the device's work-group invocation limit */
	int signals_adjacent;/* 1 when neighbouring signals are neighbours in memory (columns) */
	int threads;         /* shared technique: invocations per signal; blocked: the most
	                        invocations per signal in a sweep; 0: the plan's choice */
	int signals;         /* signals per work group, blocked and shared techniques (shared: exactly
	                        so many, or the plan refuses); 0: the plan's choice */
	int half;            /* data stored as float16 pairs (the blocked plan's rows of C) */
	int split;           /* shared technique: exchanges in exactly so many rounds of part of an
	                        element: 1 two rounds (vec4 as vec2, vec2 as float), 2 four (vec4 as
	                        float); 0: FFT_ROUNDS_ABOVE's rule */
	int pad_from;        /* the shortest power-of-two length whose exchanges are padded
	                        (-1: every length, powers of two or not: a measuring instrument);
	                        0: FFT_PAD_FROM (tests lower it, to run the padded exchanges on a
	                        device whose shared memory cannot hold a padded 4096) */
};

struct fft_pass {
	int radix;     /* R */
	int ns;        /* product of the earlier radices */
	int pad;       /* shared technique: the exchange after this pass uses the padded index */
};

struct fft_sweep {
	int first, count; /* passes [first, first + count) */
	int len;          /* L: the product of their radices */
	int stride;       /* S: the product of the earlier radices (the first pass's ns) */
	int threads;      /* invocations per signal */
	int vregs;        /* values held per invocation */
};

struct fft_plan {
	int n;           /* the transform length asked for */
	int bluestein;   /* 1: n has a prime factor > FFT_MAX_PRIME; the passes are for m */
	int m;           /* length run natively: n, or Bluestein's padded length good_size(2n-1) */
	int npasses;
	struct fft_pass pass[FFT_MAX_PASSES];
	int shared;      /* 1: one dispatch with the whole signal in shared memory */
	int threads;     /* invocations per signal (shared technique) */
	int signals;     /* signals per work group (shared technique) */
	int shared_bytes;/* shared memory per work group (shared technique) */
	int split;       /* exchanged through shared memory in 1 << split rounds of part of an
	                    element (1: vec4 as vec2, vec2 as float; 2: vec4 as float) */
	int blocked;     /* 1: one dispatch per sweep (blocked technique); signals, shared_bytes
	                    and threads (the most of any sweep) describe its work groups */
	int nsweeps;
	struct fft_sweep sweep[FFT_MAX_PASSES];
	int bank_pad;    /* log2 of the padding period in elements when an exchange is padded, or 0 */
};

/* 1 when every prime factor of n is at most FFT_MAX_PRIME. */
int fft_is_native(int n);


/* A technique and work-group shape for one axis (fft_opts' fields of the same names). */
struct fft_choice {
	int technique, threads, signals, split;
};

/* The shortest length the built-in rule (fft_plan_rule) changes: below it the plan's own
 * shape is used (no measured shape is shorter). */
#define FFT_RULE_FROM 1024

/* vec2 float32 rows at least this long exchange in two float rounds (fft_plan_opts.split):
 * measured faster on the H200 at 2048, 2560, 3840 and 4096 (-2 to -12% of the 2D transform),
 * equal within 1% at 2187, slower at 1920 beside the one-pass columns below (bench/RESULTS.md,
 * "vec2 in float rounds"). */
#define FFT_ROWS_SPLIT_FROM 2048
/* vec2 float32 columns up to these lengths run in one pass, a work group holding neighbouring
 * columns whose exchanges go in two float rounds: 8 columns of 128 invocations up to
 * FFT_COLS_EIGHT_TO, 4 of 256 up to FFT_COLS_FOUR_TO, where no more than
 * FFT_COLS_ONE_PASS_COUNT columns are transformed (more made them slower than the blocked
 * sweeps: 1080-long columns of 3840 and 4096). */
#define FFT_COLS_EIGHT_TO 1152
#define FFT_COLS_FOUR_TO 1536
#define FFT_COLS_ONE_PASS_COUNT 2048

/* The built-in choice for a shape that no wisdom holds, derived from the H200's measured
 * winners (bench/RESULTS.md, "Built-in FFT choices"): on a GPU (software 0), for n >=
 * FFT_RULE_FROM,
 *   rows (adjacent 0): the shared technique with 256 invocations a signal up to n = 2048 and
 *     512 above (at most max_invocations; where the signal does not fit shared memory the plan
 *     falls back to global passes, as measured at 8192), vec2 float32 rows from
 *     FFT_ROWS_SPLIT_FROM exchanging in float rounds;
 *   vec2 float32 columns up to FFT_COLS_FOUR_TO, at most FFT_COLS_ONE_PASS_COUNT of them: one
 *     pass in shared memory, 8 or 4 neighbouring columns a group in float rounds (above),
 *     where that fits shared_limit and max_invocations;
 *   other columns (adjacent 1) longer than FFT_RULE_FROM: blocked sweeps with 128-byte rows of
 *     neighbouring signals (16 vec2 or 8 vec4 float32 columns a group) and at most 8
 *     invocations a signal, except float16 vec4 columns, which run global passes;
 * and otherwise FFT_TECH_AUTO with no shape (the plan's choices: shared where the signal fits).
 * count: the signals transformed. A software renderer (llvmpipe) keeps the plan's choices,
 * which is what it has always run. */
void fft_plan_rule(int n, int adjacent, int components, int half, int software,
                   int max_invocations, int shared_limit, int count, struct fft_choice *c);

/* Bluestein's one-dispatch form (gles/fft.h, fft_axis_bluestein_form 1) on a GPU: the
 * invocations a signal of its inner length m, about four values an invocation, a power of two
 * and at most FFT_BLUESTEIN_FUSED_THREADS (a native transform's rule holds eight: the inner 2048
 * of a 1009-long axis on 512 ran its columns 8% faster than on 256, its rows as fast;
 * bench/RESULTS.md), halved until `signals` a group (asked for; 0 or 1: one) fit the device's
 * invocations; 0 (the plan's own choice) where it passes the work-group height. A software
 * renderer keeps the plan's choice (its caller does not ask then). */
#define FFT_BLUESTEIN_FUSED_THREADS 512
int fft_bluestein_fused_threads(int m, int signals, int max_invocations, int max_group_y);

/* Plans a 1D transform of length n. Returns 0 or a negative fft_plan_error. */
int fft_plan_make(int n, const struct fft_plan_opts *o, struct fft_plan *p);

/* For a shared-technique plan whose threads, signals and split are set: decides which exchanges
 * between passes use the padded index (pass[i].pad, bank_pad) and sets shared_bytes to the array
 * that layout needs (the padding is dropped when the padded array would not fit
 * o->shared_limit). fft_plan_make calls it; callers that change a plan's shape (two signals a
 * group for the fused convolution) call it again. The exchange after the last pass (the fused
 * convolution's multiply) is never padded.
 *
 * Padding applies to power-of-two lengths m >= o->pad_from (FFT_PAD_FROM: where it measured
 * faster). Element index i of the shared array is stored at i + (i >> L), with 2^L elements per
 * 128 bytes (32 banks of 4 bytes: 16 vec2, 8 vec4). Pass p stores butterfly j's output r at
 * (j/Ns)*Ns*R + j%Ns + r*Ns (times the signals a group), so where Ns*signals < 2^L neighbouring
 * invocations store R*signals elements apart: with R even they meet in the same banks (R-way at
 * Ns = 1), and one skipped element per 2^L spreads them. Long runs (large Ns) already spread,
 * and there the padding only moves the consecutive loads across a padding step, so only
 * exchanges after an even radix with Ns*signals < 2^L are padded. */
void fft_plan_exchanges(struct fft_plan *p, const struct fft_plan_opts *o);

/* The pair order of a length-n signal (FFT_IO_PAIRS, fft_conv_create's pairs): element k at
 * 2(k-1) for 1 <= k <= h and at 2(n-k)-1 for n-h <= k < n, h = (n-1)/2, so that k and n-k (the
 * Hermitian partners of a real signal's spectrum) are neighbours; then k = 0 at 2h and, for even
 * n, n/2 at n-1. A permutation of [0, n). */
static inline unsigned fft_pair_pos(unsigned k, unsigned n)
{
	unsigned h = (n - 1) / 2;
	return k == 0 ? 2 * h : k <= h ? 2 * (k - 1) : k >= n - h ? 2 * (n - k) - 1 : n - 1;
}

const char *fft_plan_strerror(int code);

/* fft_technique_names[technique]; "?" out of range. */
const char *fft_technique_name(int technique);

/* What a made plan runs: "blocked", "shared" or "global" (also for n = 1, which runs nothing). */
const char *fft_plan_kind(const struct fft_plan *p);

#endif
