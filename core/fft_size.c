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

double fft_point_cost(int m)
{
	int r[FFT_MAX_PASSES];
	int passes = fft_factor(m, r);
	if (passes < 0)
		return 1e300;
	double sum = FFT_AXIS_IO_WEIGHT;
	for (int i = 0; i < passes; i++)
		sum += m > FFT_SHARED_MAX_N ? 1 : r[i] == 7 ? 1.5 : r[i] == 3 ? 1.25 : 1;
	return sum;
}

double fft_cost(int m)
{
	return (double)m * fft_point_cost(m);
}

/* m as a candidate of fft_smooth_size: the cheaper, or as cheap and shorter, is kept */
static void consider(long long m, double (*cost)(int m, const void *ctx), const void *ctx,
                     int *best, double *best_cost)
{
	double c = cost((int)m, ctx);
	if (!*best || c < *best_cost || (c == *best_cost && m < *best)) {
		*best = (int)m;
		*best_cost = c;
	}
}

int fft_smooth_size(int n, double (*cost)(int m, const void *ctx), const void *ctx)
{
	if (n <= 1)
		return 1;
	if (n > FFT_MAX_N)
		return 0;
	/* every 7-smooth m in [n, 2n]: each odd 7-smooth p <= 2n doubled until it is at least n
	 * (then below 2n, or n itself, whose double 2n is one too) */
	long long top = 2LL * n < FFT_MAX_N ? 2LL * n : FFT_MAX_N;
	int best = 0;
	double best_cost = 0;
	for (long long p3 = 1; p3 <= top; p3 *= 3)
		for (long long p5 = p3; p5 <= top; p5 *= 5)
			for (long long p7 = p5; p7 <= top; p7 *= 7) {
				long long m = p7;
				while (m < n)
					m *= 2;
				if (m <= top)
					consider(m, cost, ctx, &best, &best_cost);
				if (m == n && 2 * m <= top)
					consider(2 * m, cost, ctx, &best, &best_cost);
			}
	return best;
}

static double length_only(int m, const void *ctx)
{
	(void)ctx;
	return m;
}

int fft_smallest_size(int n)
{
	return fft_smooth_size(n, length_only, NULL);
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

void fft_conv_size_fit(int h, int span_w, int span_h,
                       int (*fits)(const void *ctx, int pw, int ph),
                       const void *ctx, int *pw, int *ph)
{
	fft_conv_size(h, span_w, span_h, pw, ph);
	if (*pw < 1 || *ph < 1 || fits(ctx, *pw, *ph))
		return;
	int mw = fft_smallest_size(span_w), mh = fft_smallest_size(span_h);
	if (mw > 0 && mh > 0 && fits(ctx, mw, mh))
		*pw = mw, *ph = mh;
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
