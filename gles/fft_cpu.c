/* Double-precision mixed-radix DFT on the CPU; see fft_cpu.h. */
#include "gles/fft_cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int smallest_factor(int n)
{
	for (int f = 2; (long long)f * f <= n; f++)
		if (n % f == 0)
			return f;
	return n;
}

/* out[0..n) = DFT of in[0], in[s], ...; tmp holds n pairs of scratch. */
static void rec(const double *in, size_t s, double *out, int n, int sign, double *tmp)
{
	if (n == 1) {
		out[0] = in[0];
		out[1] = in[1];
		return;
	}
	int p = smallest_factor(n), m = n / p;
	if (p == n) { /* prime: direct sum, angle reduced with integer arithmetic */
		for (int k = 0; k < n; k++) {
			double re = 0, im = 0;
			for (int j = 0; j < n; j++) {
				long long e = (long long)j * k % n;
				double a = sign * 2 * M_PI * (double)e / n;
				double c = cos(a), si = sin(a);
				double xr = in[2 * j * s], xi = in[2 * j * s + 1];
				re += xr * c - xi * si;
				im += xr * si + xi * c;
			}
			out[2 * k] = re;
			out[2 * k + 1] = im;
		}
		return;
	}
	/* p sub-transforms of length m over the decimated inputs, into tmp */
	for (int r = 0; r < p; r++)
		rec(in + 2 * r * s, s * p, tmp + 2 * r * m, m, sign, out);
	/* X[k + q*m] = sum_r w_n^(r*(k+q*m)) * Sub_r[k] */
	for (int k = 0; k < m; k++)
		for (int q = 0; q < p; q++) {
			int kk = k + q * m;
			double re = 0, im = 0;
			for (int r = 0; r < p; r++) {
				long long e = (long long)r * kk % n;
				double a = sign * 2 * M_PI * (double)e / n;
				double c = cos(a), si = sin(a);
				double xr = tmp[2 * (r * m + k)], xi = tmp[2 * (r * m + k) + 1];
				re += xr * c - xi * si;
				im += xr * si + xi * c;
			}
			out[2 * kk] = re;
			out[2 * kk + 1] = im;
		}
}

/* The recursion needs scratch at each level; each level writes its sub-results into `tmp` and
 * the combined result into `out`, using `out` as the children's scratch. Sizes match: a level of
 * length n uses n pairs of each. */
int fft_cpu(const double *in, size_t stride, double *out, int n, int sign)
{
	if (n < 1)
		return 0;
	double *tmp = malloc((size_t)n * 2 * sizeof *tmp);
	if (!tmp)
		return -1;
	rec(in, stride, out, n, sign, tmp);
	free(tmp);
	return 0;
}
