/* A double-precision CPU DFT of any length (recursive mixed radix by the smallest prime factor,
 * direct sums for the prime leaves). The engine uses it for Bluestein's filter spectra; the tests
 * use it as a reference for large 2D shapes after checking it against a direct DFT. */
#ifndef FFTBLOOM_FFT_CPU_H
#define FFTBLOOM_FFT_CPU_H

#include <stddef.h>

/* out[k] = sum_n in[n*stride] * exp(sign*2*pi*i*n*k/n_len), unscaled; in and out are arrays of
 * (re, im) double pairs; out must not alias in. Returns 0, or -1 when out of memory. */
int fft_cpu(const double *in, size_t stride, double *out, int n, int sign);

#endif
