/* Helpers shared by the benchmark programs (fftbloom bench, the FFTW peer, the codec ceiling):
 * a monotonic clock and the median of a sample. */
#ifndef FFTBLOOM_BENCH_UTIL_H
#define FFTBLOOM_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median of v[0..n); sorts v in place (so v[0] is then the minimum). */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
