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

/* The cost model for padding, a length's cost per sample: the axis's read and write of global
 * memory (FFT_AXIS_IO_WEIGHT) and its passes' weights, 1 for a pass of radix 2, 4, 5 or 8, 1.25
 * for radix 3 and 1.5 for radix 7 (a pass costs a read and a write of the signal through shared
 * memory, the radix-3 and radix-7 butterflies more arithmetic a sample; the weights ranked first
 * the sizes measured fastest on the H200's blooms, bench/RESULTS.md, "Padded sizes by a weighted
 * cost"). Past FFT_SHARED_MAX_N every pass weighs 1: such a signal's passes go through global
 * memory, whose traffic the radix does not change (the weights, unmeasured there, made the
 * 7680x4320 frame's tiles 0.8% slower). fft_cost is m times it. */
#define FFT_SHARED_MAX_N 6144 /* the longest signal a 48 KiB work group exchanges in shared memory
                               * (vec4 in vec2 rounds) */
/* An axis's read and write of global memory, in passes: the H200's 1080p fused column pass
 * took 0.079 ms, its 126 MB at the copy rate 0.031 of it, about 2.6 of its 4 passes' share a
 * direction; taken as 2 (the passes overlap the traffic in part). */
#define FFT_AXIS_IO_WEIGHT 2.0
double fft_point_cost(int m);
double fft_cost(int m);

/* The 7-smooth length in [n, 2n] (factors 2, 3, 5, 7, whose butterflies are specialised; 11
 * and 13 run natively but through the slower generic butterfly, so they are not chosen for
 * padding) of least cost(m, ctx), the smallest on a tie; n < 1 gives 1, n past FFT_MAX_N 0. */
int fft_smooth_size(int n, double (*cost)(int m, const void *ctx), const void *ctx);
/* The 7-smooth length >= n with the fewest samples (where the cheapest does not fit a memory
 * budget). */
int fft_smallest_size(int n);

/* The cheapest natively supported length >= n: fft_smooth_size under fft_cost. E.g. 1208 ->
 * 1280 (radices 5, 8, 8, 4), not 1225 = 5^2 7^2; 2174 -> 2240, not 2187 = 3^7. */
int fft_good_size(int n);

/* The padded sizes of a 2D convolution of a frame h samples tall whose transforms must span
 * span_w x span_h (fft_conv_span, fft_tile_span): *ph = fft_good_size(span_h), and *pw the
 * 7-smooth length in [span_w, 2 span_w] of least pw (r fft_point_cost(pw) + ph
 * fft_point_cost(ph)), the smallest on a tie, r = min(h, span_h) the rows the row transforms
 * take (the padding's zero rows are not transformed). A row longer than it must be costs its
 * row transforms and as many column transforms more, so the width is chosen with the height's
 * cost: 1080p with a full-frame kernel pads to 2880 wide (radices 5, 3, 3, 8, 8), not 3136
 * (7, 7, 8, 8). Sizes past FFT_MAX_N give 0. */
void fft_conv_size(int h, int span_w, int span_h, int *pw, int *ph);
/* fft_conv_size under a memory bound: where fits(ctx, pw, ph) refuses the cheapest size and
 * takes the fewest samples (fft_smallest_size of each span), those, so that a frame runs whole,
 * or in fewer tiles, rather than at its cheapest size; else the cheapest. The one rule of both
 * engines. */
void fft_conv_size_fit(int h, int span_w, int span_h,
                       int (*fits)(const void *ctx, int pw, int ph),
                       const void *ctx, int *pw, int *ph);
/* fft_conv_size of a whole w x h frame with a kw x kh kernel centred on tap cx, cy. */
void fft_conv_frame_size(int w, int h, int kw, int kh, int cx, int cy, int *pw, int *ph);

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
