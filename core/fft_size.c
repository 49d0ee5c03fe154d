/* FFT lengths; see fft_size.h. */
#include "core/fft_size.h"
#include <limits.h>
#include <stddef.h>

int fft_factor(int n, int radices[FFT_MAX_PASSES])
{
	if (n < 1 || n > FFT_MAX_N)
		return FFT_SIZE_E_RANGE;
	int log2 = 0;
	while (!(n & 1)) {
		n >>= 1;
		log2++;
	}
	/* odd prime factors, smallest first, then reversed so the largest comes first */
	int odd[FFT_MAX_PASSES], nodd = 0;
	for (int f = 3; (long long)f * f <= n; f += 2)
		while (n % f == 0) {
			odd[nodd++] = f;
			n /= f;
		}
	if (n > 1)
		odd[nodd++] = n;
	int count = 0;
	for (int i = nodd - 1; i >= 0; i--)
		radices[count++] = odd[i];
	for (int i = 0; i < log2 / 3; i++)
		radices[count++] = 8;
	if (log2 % 3)
		radices[count++] = 1 << (log2 % 3);
	return count;
}

static int smooth7(int m)
{
	while (!(m % 2)) m /= 2;
	while (!(m % 3)) m /= 3;
	while (!(m % 5)) m /= 5;
	while (!(m % 7)) m /= 7;
	return m == 1;
}

double fft_point_cost(int m)
{
	int r[FFT_MAX_PASSES];
	int passes = fft_factor(m, r);
	if (passes < 0)
		return 1e300;
	double sum = FFT_AXIS_IO_WEIGHT;
	for (int i = 0; i < passes; i++)
		sum += r[i] == 7 ? 1.5 : r[i] == 3 ? 1.25 : 1;
	return sum;
}

double fft_cost(int m)
{
	return (double)m * fft_point_cost(m);
}

int fft_smooth_size(int n, double (*cost)(int m, const void *ctx), const void *ctx)
{
	if (n <= 1)
		return 1;
	int best = 0;
	double best_cost = 0;
	for (int m = n; m - n <= n && m <= FFT_MAX_N; m++) {
		if (!smooth7(m))
			continue;
		double c = cost(m, ctx);
		if (!best || c < best_cost) {
			best = m;
			best_cost = c;
		}
	}
	return best;
}

static double length_cost(int m, const void *ctx)
{
	(void)ctx;
	return fft_cost(m);
}

int fft_good_size(int n)
{
	return fft_smooth_size(n, length_cost, NULL);
}

/* A width's cost: its row transforms over rows[0] rows and the columns of rows[1] (the height
 * times its point cost) it adds. */
static double width_cost(int m, const void *ctx)
{
	const double *rc = ctx;
	return m * (rc[0] * fft_point_cost(m) + rc[1]);
}

void fft_conv_size(int h, int span_w, int span_h, int *pw, int *ph)
{
	*ph = fft_good_size(span_h);
	double rc[2] = {h < span_h ? h : span_h, *ph ? fft_cost(*ph) : 0};
	*pw = rc[0] < 1 ? fft_good_size(span_w) : fft_smooth_size(span_w, width_cost, rc);
}

void fft_conv_frame_size(int w, int h, int kw, int kh, int cx, int cy, int *pw, int *ph)
{
	fft_conv_size(h, fft_conv_span(w, kw, cx), fft_conv_span(h, kh, cy), pw, ph);
}

int fft_conv_span(int n, int k, int c)
{
	if (c < 0 || c >= k)
		return n + k - 1;
	int reach = c > k - 1 - c ? c : k - 1 - c;
	if (n > INT_MAX - reach)
		return INT_MAX;
	return n + reach > k ? n + reach : k;
}

int fft_tile_span(int n, int t, int k, int c)
{
	return t >= n ? fft_conv_span(n, k, c) : t + k - 1;
}
