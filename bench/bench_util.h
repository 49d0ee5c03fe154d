/* Helpers shared by the benchmark programs (fftbloom bench, the FFTW peer, the codec ceiling,
 * the encode formats): a monotonic clock, the median of a sample, a whole file read. */
#ifndef FFTBLOOM_BENCH_UTIL_H
#define FFTBLOOM_BENCH_UTIL_H

#include <stdio.h>
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

/* The whole file at path (1 byte to 1 GiB) in a new buffer the caller frees, its length in *len;
 * NULL when it cannot be read. */
static inline unsigned char *bench_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	unsigned char *b = NULL;
	long n = fseek(f, 0, SEEK_END) ? -1 : ftell(f);
	if (n > 0 && n < (1l << 30) && (b = malloc((size_t)n)) != NULL) {
		rewind(f);
		if (fread(b, 1, (size_t)n, f) != (size_t)n) {
			free(b);
			b = NULL;
		}
	}
	fclose(f);
	*len = b ? (size_t)n : 0;
	return b;
}

#endif
