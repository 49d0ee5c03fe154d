/* FFT lengths as both engines choose them: the factorisation into passes, a length's cost and
 * the padded length a convolution transforms at (the GPU engine's rule, which the CPU engine
 * follows so that both pad alike). Pure arithmetic. */
#ifndef FFTBLOOM_FFT_SIZE_H
#define FFTBLOOM_FFT_SIZE_H

#define FFT_MAX_PASSES 32
#define FFT_MAX_N (1 << 24)
#define FFT_SIZE_E_RANGE -1 /* fft_factor: n < 1 or n > FFT_MAX_N (gles' FFT_PLAN_E_SIZE) */

/* Radices of n under the strategy: odd prime factors (largest first), then the powers of two in
 * radix-8 passes with the remainder (2 or 4) last. Returns the count, or FFT_SIZE_E_RANGE.
 * Factors larger than FFT_MAX_PRIME (13) are returned as they are (the caller decides on
 * Bluestein). Radix 8 is the largest power of two, and odd factors are not grouped into
 * composite radices (9, 25, 27): larger butterflies cost more registers than the exchanges they
 * save (radix 16 and the composite radices measured slower: bench/RESULTS.md, "Log of
 * decisions"). */
int fft_factor(int n, int radices[FFT_MAX_PASSES]);

/* The cost model for padding: m times its number of passes, since on a GPU each pass costs a
 * read and a write of the signal (through shared or global memory). */
double fft_cost(int m);

/* The cheapest natively supported length >= n: among the 7-smooth lengths in [n, 2n] (factors
 * 2, 3, 5, 7, whose butterflies are specialised; 11 and 13 run natively but through the slower
 * generic butterfly, so they are not chosen for padding), the one of least fft_cost, the
 * smallest on a tie. E.g. 2174 -> 2240 (4 passes), not 2187 = 3^7 (7 passes). n < 1 gives 1. */
int fft_good_size(int n);

/* The length along one axis at which a frame of n samples is convolved by FFT, untiled, without
 * a result sample taking a wrapped tap: n + max(c, k - 1 - c), and at least k, for a kernel of k
 * taps whose centre is tap c (0 <= c < k). The frame starts at index 0 and the kernel's centre
 * at 0, so result sample x reads x - (k - 1 - c) .. x + c: the reads before the frame wrap to
 * the transform's end and those after it run past the frame, and both land in one zero tail of
 * max(c, k - 1 - c) samples (a linear convolution's n + k - 1 gives each side a tail of its
 * own). The circular result past n is not part of the answer. c outside [0, k) counts as the
 * linear convolution's n + k - 1. */
int fft_conv_span(int n, int k, int c);

/* The length an overlap-save tile of t output samples along a side of n needs (kernel of k taps
 * centred at c): t + k - 1, its input carrying the kernel's reach both ways; where the tile is
 * the whole side (t >= n) the side's span, fft_conv_span, as for an untiled frame. */
int fft_tile_span(int n, int t, int k, int c);

#endif
