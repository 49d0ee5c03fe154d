/* FFT planning, pure CPU: the radix sequence for a length, the per-pass strides and twiddle
 * offsets, the work-group shape, and whether a signal fits in shared memory. Executing a plan
 * (gles/fft) only binds and dispatches what is decided here.
 *
 * Index mapping (Stockham autosort, decimation in time, no bit reversal). For a length n with
 * radices R_0..R_{P-1} (product n), pass p has radix R = R_p and stride Ns = R_0*...*R_{p-1}
 * (Ns = 1 for the first pass). Each of the n/R butterflies j in [0, n/R) of pass p
 *   reads      x[j + r*(n/R)]                      for r = 0..R-1,
 *   multiplies input r by the twiddle  w^(r*k),   k = j mod Ns,  w = exp(-+2*pi*i/(Ns*R)),
 *   takes the R-point DFT, and
 *   writes     y[(j/Ns)*Ns*R + k + r*Ns]           for r = 0..R-1.
 * After the last pass y holds the DFT in natural order. The twiddle table stores, per pass,
 * w^(r*k) at tw_offset + k*(R-1) + (r-1) (k < Ns, 1 <= r < R), computed in double.
 *
 * Sweeps (blocked technique). Passes p0..p1-1 with stride S = Ns of p0 and radices multiplying
 * to L act like one pass of radix L: they touch the n/L closed sets g in [0, n/L), each of L
 * elements, and set g
 *   reads      x[g + t*(n/L)]                      into local element t = 0..L-1,
 *   runs the passes as a length-L Stockham on the local array: local pass q (radix R, local
 *     stride s = product of the sweep's earlier radices) reads local j + r*(L/R) and writes
 *     local (j/s)*s*R + j%s + r*s, j in [0, L/R), with the twiddle of the whole transform:
 *     w^(r*k), k = (j%s)*S + g%S, w = exp(-+2*pi*i/(S*s*R)) (table offsets as above), and
 *   writes     local u to y[(g/S)*S*L + g%S + u*S] u = 0..L-1.
 * (Proof: before a pass of stride Ns, index i = b*Ns + k holds output k of the length-Ns DFT of
 * the decimated subsequence b; the pass takes b = b0 + r*(n/(Ns*R)) to b0, k to k + r*Ns. Within
 * the sweep b = g/S + (n/(S*L))*b_loc and k = k_loc*S + g%S, which the passes map among
 * themselves; local index b_loc*s + k_loc.) A work group holds C neighbouring signals of one
 * set g, so for columns each local element is C contiguous elements of a row. Its invocations
 * hold the values in registers between passes and exchange them through shared memory; where
 * the C signals' L elements do not fit there at once, a sweep may exchange them in `rounds`
 * rounds of C/rounds signals each (the registers hold them all meanwhile), so that a whole long
 * column (4096 vec2: 32 KiB a signal) runs in one sweep and still reads 32-64 contiguous bytes
 * of each row. */
#ifndef FFTBLOOM_FFT_PLAN_H
#define FFTBLOOM_FFT_PLAN_H

#define FFT_MAX_PASSES 32
#define FFT_MAX_PRIME 13   /* largest prime factor run natively; larger ones go through Bluestein */
#define FFT_MAX_RADIX 27   /* largest radix of a pass (the composite 27 = 3 x 9) */
#define FFT_MAX_N (1 << 24)

/* auto: shared where the signal fits, else global; shared: the whole signal in shared memory,
 * one dispatch; global: one dispatch per radix pass; blocked: one dispatch per sweep of passes
 * (see above), for signals that are neighbours in memory (columns) */
enum fft_technique { FFT_TECH_AUTO = 0, FFT_TECH_SHARED, FFT_TECH_GLOBAL, FFT_TECH_BLOCKED };
enum fft_twiddles { FFT_TW_COMPUTED = 0, FFT_TW_TABLE };

enum fft_plan_error {
	FFT_PLAN_OK = 0,
	FFT_PLAN_E_SIZE = -1,      /* n < 1 or n > FFT_MAX_N */
	FFT_PLAN_E_RADIX = -2,     /* max_radix not 4, 8 or 16 */
	FFT_PLAN_E_NOFIT = -3,     /* shared technique forced but the signal does not fit, or
	                              blocked and not even one pass of C signals fits */
	FFT_PLAN_E_ROWS = -4,      /* blocked technique asked for signals that are not adjacent */
};

struct fft_plan_opts {
	int max_radix;       /* 4, 8 or 16 (0: 8): the largest power-of-two radix */
	int technique;       /* enum fft_technique */
	int twiddles;        /* enum fft_twiddles */
	int components;      /* floats per element: 2 (vec2, one signal) or 4 (vec4, two signals) */
	int shared_limit;    /* bytes of shared memory a work group may use (the device's) */
	int max_invocations; /* the device's work-group invocation limit */
	int signals_adjacent;/* 1 when neighbouring signals are neighbours in memory (columns) */
	int threads;         /* shared technique: invocations per signal; blocked: the most
	                        invocations per signal in a sweep; 0: the plan's choice */
	int signals;         /* blocked technique: signals per work group; 0: the plan's choice */
	int half;            /* data stored as float16 pairs (the blocked plan's rows of C) */
	int bank_pad;        /* 1: pad the shared-memory index of the exchanges prone to bank
	                        conflicts (fft_plan_exchanges), where the padded array still fits */
	int subgroup;        /* consecutive invocations that can exchange registers by shuffles (the
	                        subgroup size, a power of two), or 0: every exchange through shared */
	int rounds;          /* blocked technique: the most rounds a sweep may exchange its signals
	                        in (a divisor of C signals at a time); 0 or 1: all at once */
	int composite;       /* 1: odd factors grouped into composite radices (fft_factor) */
};

struct fft_pass {
	int radix;     /* R */
	int ns;        /* product of the earlier radices */
	int tw_offset; /* first twiddle of this pass in the table */
	int pad;       /* shared technique: the exchange after this pass uses the padded index */
	int shuffle;   /* shared technique: the exchange after this pass is a register transpose by
	                  subgroup shuffles, this pass and the next in the block mapping */
};

struct fft_sweep {
	int first, count; /* passes [first, first + count) */
	int len;          /* L: the product of their radices */
	int stride;       /* S: the product of the earlier radices (the first pass's ns) */
	int threads;      /* invocations per signal */
	int vregs;        /* values held per invocation */
	int rounds;       /* exchanges go through shared memory in this many rounds, C/rounds
	                     signals each (1: all C at once; a sweep of one pass exchanges nothing) */
};

struct fft_plan {
	int n;           /* the transform length asked for */
	int bluestein;   /* 1: n has a prime factor > FFT_MAX_PRIME; the passes are for m */
	int m;           /* length run natively: n, or Bluestein's padded length good_size(2n-1) */
	int npasses;
	struct fft_pass pass[FFT_MAX_PASSES];
	int tw_count;    /* complex twiddles in the table, all passes */
	int shared;      /* 1: one dispatch with the whole signal in shared memory */
	int threads;     /* invocations per signal (shared technique) */
	int signals;     /* signals per work group (shared technique) */
	int shared_bytes;/* shared memory per work group (shared technique) */
	int split;       /* vec4 data exchanged through shared memory in two vec2 rounds */
	int blocked;     /* 1: one dispatch per sweep (blocked technique); signals, shared_bytes
	                    and threads (the most of any sweep) describe its work groups */
	int nsweeps;
	struct fft_sweep sweep[FFT_MAX_PASSES];
	int rounds;      /* blocked: the most exchange rounds of any sweep (1: none split) */
	int bank_pad;    /* log2 of the padding period in elements when an exchange is padded, or 0 */
	int subgroup;    /* the subgroup width the shuffled exchanges assume, or 0 when none */
};

/* Radices of n under the strategy: odd prime factors (largest first), then the powers of two in
 * chunks of max_radix with the remainder last. Returns the count, or a negative error. Factors
 * larger than FFT_MAX_PRIME are returned as they are (the caller decides on Bluestein).
 * composite: the threes grouped into radices 27 and 9 and the fives into 25, in the fewest
 * passes and as evenly as they go (3^7 = 27 x 9 x 9, 3^4 = 9 x 9, 5^3 = 25 x 5), each group of
 * passes one pass whose butterfly runs the smaller DFTs in registers (fft_common's NESTED_BFLY);
 * the largest radix still comes first. */
int fft_factor(int n, int max_radix, int composite, int radices[FFT_MAX_PASSES]);

/* 1 when every prime factor of n is at most FFT_MAX_PRIME. */
int fft_is_native(int n);

/* The cost model for padding: m times its number of passes (radix 8 at most), since on a GPU
 * each pass costs a read and a write of the signal (through shared or global memory). */
double fft_cost(int m);

/* The cheapest natively supported length >= n: among the 7-smooth lengths in [n, 2n] (factors
 * 2, 3, 5, 7, whose butterflies are specialised; 11 and 13 run natively but through the slower
 * generic butterfly, so they are not chosen for padding), the one of least fft_cost, the
 * smallest on a tie. E.g. 2174 -> 2240 (4 passes), not 2187 = 3^7 (7 passes). n < 1 gives 1. */
int fft_good_size(int n);

/* Plans a 1D transform of length n. Returns 0 or a negative fft_plan_error. */
int fft_plan_make(int n, const struct fft_plan_opts *o, struct fft_plan *p);

/* For a shared-technique plan whose threads, signals and split are set: decides which exchanges
 * between passes go by subgroup shuffles and which use the padded index (pass[i].shuffle,
 * pass[i].pad, bank_pad, subgroup), and sets shared_bytes to the array that layout needs (the
 * padding is dropped when the padded array would not fit o->shared_limit). fft_plan_make calls
 * it; callers that change a plan's shape (two signals a group for the fused convolution) call it
 * again. The exchange after the last pass (the fused convolution's multiply) is never padded.
 *
 * Padding (o->bank_pad): element index i of the shared array is stored at i + (i >> L), with
 * 2^L elements per 128 bytes (32 banks of 4 bytes: 16 vec2, 8 vec4). Pass p stores butterfly j's
 * output r at (j/Ns)*Ns*R + j%Ns + r*Ns (times the signals a group), so where Ns*signals < 2^L
 * neighbouring invocations store R*signals elements apart: with R even they meet in the same
 * banks (R-way at Ns = 1), and one skipped element per 2^L spreads them. Odd R and long runs
 * (large Ns) already spread, and there the padding only moves the consecutive loads across a
 * padding step, so only exchanges after an even radix with Ns*signals < 2^L are padded.
 *
 * Shuffles (o->subgroup): in the plain mapping (butterfly j on invocation j mod threads) an
 * exchange stays inside one subgroup only where a pass's butterflies all sit on one subgroup's
 * invocations (signals of 256 or less); elsewhere the store index moves the R digit into the
 * invocation bits, so values cross subgroups (or, with Ns a multiple of threads, stay in the
 * invocation: no such exchange in the default plans). Two neighbouring passes of the
 * same power-of-two radix R <= subgroup/signals are therefore given another mapping: with
 * M = n/(Ns*R*R), block c = lo + Ns*hm (lo < Ns, hm < M) and lane digit k < R, pass p runs
 * butterfly lo + Ns*(hm + M*k) and pass p+1 butterfly lo + Ns*k + Ns*R*hm; then output r of
 * (c, k) in pass p is input k of (c, r) in pass p+1: an R x R transpose over the R lanes of the
 * block. Lane digit k sits at invocation bits of weight subgroup/(R*signals) inside one subgroup,
 * so the transpose is log2(R) rounds of subgroupShuffleXor. Pairs are taken greedily from the
 * first pass (a pass is in one pair at most); both passes need threads to be a multiple of
 * subgroup/signals, and threads <= n. */
void fft_plan_exchanges(struct fft_plan *p, const struct fft_plan_opts *o);

const char *fft_plan_strerror(int code);

/* "auto", "shared", "global", "blocked" ("?" out of range). */
const char *fft_technique_name(int technique);

/* What a made plan runs: "blocked", "shared" or "global" (also for n = 1, which runs nothing). */
const char *fft_plan_kind(const struct fft_plan *p);

#endif
