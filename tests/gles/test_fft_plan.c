/* FFT planning on the CPU: factorization strategy, pass strides and twiddle offsets, shared-
 * memory fit, fft_good_size. No GPU needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "gles/fft_plan.h"

static int largest_prime(int n)
{
	int lp = 1;
	for (int f = 2; f * f <= n; f++)
		while (n % f == 0) {
			lp = f;
			n /= f;
		}
	return n > 1 ? n : lp;
}

static void check_factor(int n, int max_radix)
{
	int r[FFT_MAX_PASSES];
	int c = fft_factor(n, max_radix, r);
	assert_true(c >= 0);
	long long prod = 1;
	int seen_pow2 = 0, prev_odd = 1 << 30;
	for (int i = 0; i < c; i++) {
		prod *= r[i];
		int pow2 = (r[i] & (r[i] - 1)) == 0;
		if (pow2) {
			assert_true(r[i] <= max_radix);
			/* chunks of max_radix, then at most one smaller remainder, last */
			if (r[i] < max_radix)
				assert_int_equal(i, c - 1);
			seen_pow2 = 1;
		} else {
			assert_false(seen_pow2);          /* odd factors come first */
			assert_true(r[i] <= prev_odd);    /* largest first */
			assert_int_equal(largest_prime(r[i]), r[i]); /* each an odd prime */
			prev_odd = r[i];
		}
	}
	assert_true(prod == n);
}

static void test_factorization(void **state)
{
	(void)state;
	int radices[] = {4, 8, 16};
	for (int k = 0; k < 3; k++)
		for (int n = 1; n <= 5000; n++)
			check_factor(n, radices[k]);
	int big[] = {1 << 20, 3 * 5 * 7 * 11 * 13 * 16, 4099, 65537, 1 << 24, 16777213};
	for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
		check_factor(big[i], 8);
	int r[FFT_MAX_PASSES];
	assert_int_equal(fft_factor(1080, 8, r), 5); /* 5, 3, 3, 3, 8 */
	assert_int_equal(r[0], 5);
	assert_int_equal(r[4], 8);
	assert_int_equal(fft_factor(2048, 8, r), 4); /* 8, 8, 8, 4 */
	assert_int_equal(r[3], 4);
	assert_int_equal(fft_factor(1, 8, r), 0);
	assert_int_equal(fft_factor(0, 8, r), FFT_PLAN_E_SIZE);
	assert_int_equal(fft_factor(64, 32, r), FFT_PLAN_E_RADIX);
}

static void test_native_and_good_size(void **state)
{
	(void)state;
	assert_true(fft_is_native(1));
	assert_true(fft_is_native(2 * 3 * 5 * 7 * 11 * 13));
	assert_false(fft_is_native(17));
	assert_false(fft_is_native(4099));
	for (int n = 1; n <= 20000; n += (n < 3000 ? 1 : 7)) {
		int g = fft_good_size(n);
		assert_true(g >= n && g <= 2 * n);
		int k = g;
		for (int f = 2; f <= 7; f++)
			while (k % f == 0)
				k /= f;
		assert_int_equal(k, 1);
		/* nothing in [n, 2n] that is 7-smooth is cheaper, or as cheap and shorter */
		for (int m = n; m <= 2 * n; m++) {
			int q = m;
			for (int f = 2; f <= 7; f++)
				while (q % f == 0)
					q /= f;
			if (q != 1)
				continue;
			assert_true(fft_cost(m) > fft_cost(g) || (fft_cost(m) == fft_cost(g) && m >= g));
		}
	}
	assert_int_equal(fft_good_size(1080 + 256 - 1), 1344);
	assert_int_equal(fft_good_size(1920 + 256 - 1), 2240); /* not 2187 = 3^7: 4 passes, not 7 */
	assert_int_equal(fft_good_size(3840 + 512 - 1), 4375); /* 5^4*7: 5 passes, not 4374's 8 */
	assert_int_equal(fft_good_size(1), 1);
}

static void test_passes(void **state)
{
	(void)state;
	struct fft_plan_opts o = {8, FFT_TECH_AUTO, FFT_TW_COMPUTED, 2, 49152, 1024, 0, 0};
	int ns_[] = {1, 2, 7, 64, 97, 360, 1000, 1080, 1920, 2048, 2187, 4096, 4099, 6144, 8192};
	for (size_t i = 0; i < sizeof ns_ / sizeof ns_[0]; i++) {
		struct fft_plan p;
		assert_int_equal(fft_plan_make(ns_[i], &o, &p), 0);
		assert_int_equal(p.n, ns_[i]);
		assert_int_equal(p.bluestein, !fft_is_native(ns_[i]));
		if (p.bluestein)
			assert_true(p.m >= 2 * p.n - 1);
		long long ns = 1;
		int tw = 0;
		for (int k = 0; k < p.npasses; k++) {
			assert_int_equal(p.pass[k].ns, ns);
			assert_int_equal(p.pass[k].tw_offset, tw);
			tw += (int)ns * (p.pass[k].radix - 1);
			ns *= p.pass[k].radix;
		}
		assert_true(ns == p.m);
		assert_int_equal(p.tw_count, tw);
		assert_true(p.tw_count < p.m || p.m == 1);
		if (p.shared) {
			assert_true(p.shared_bytes <= o.shared_limit);
			assert_true(p.signals * p.threads <= o.max_invocations);
			assert_int_equal(p.shared_bytes, p.signals * p.m * 8);
		}
		printf("n %5d: m %5d, %d passes, %s, %d x %d invocations, %d B shared\n", p.n, p.m,
		       p.npasses, p.shared ? "shared" : "global", p.signals, p.threads, p.shared_bytes);
	}
	/* fit: 6144 vec2 fits 48 KiB, 6145.. does not; vec4 splits */
	struct fft_plan p;
	assert_int_equal(fft_plan_make(6144, &o, &p), 0);
	assert_true(p.shared);
	assert_int_equal(fft_plan_make(8192, &o, &p), 0);
	assert_false(p.shared);
	o.technique = FFT_TECH_SHARED;
	assert_int_equal(fft_plan_make(8192, &o, &p), FFT_PLAN_E_NOFIT);
	o.technique = FFT_TECH_AUTO;
	o.components = 4;
	assert_int_equal(fft_plan_make(4096, &o, &p), 0);
	assert_true(p.shared && p.split);
	assert_int_equal(fft_plan_make(2048, &o, &p), 0);
	assert_true(p.shared && !p.split);
	o.technique = FFT_TECH_GLOBAL;
	assert_int_equal(fft_plan_make(64, &o, &p), 0);
	assert_false(p.shared);
	/* columns: several neighbouring signals per group for coalesced reads */
	o.technique = FFT_TECH_AUTO;
	o.components = 2;
	o.signals_adjacent = 1;
	assert_int_equal(fft_plan_make(256, &o, &p), 0);
	assert_true(p.shared && p.signals * 8 >= 64);
	assert_int_equal(fft_plan_make(1080, &o, &p), 0);
	assert_true(p.shared && p.signals >= 4);
	/* ... but a lone vec4 column per group takes global passes in auto */
	o.components = 4;
	o.max_radix = 0;
	assert_int_equal(fft_plan_make(2744, &o, &p), 0);
	assert_false(p.shared);
	assert_int_equal(p.npasses, 4); /* 7 * 7 * 7 * 8 */
	o.technique = FFT_TECH_SHARED;
	assert_int_equal(fft_plan_make(2744, &o, &p), 0);
	assert_true(p.shared && p.signals == 1);
	o.components = 2;
	assert_int_equal(fft_plan_make(0, &o, &p), FFT_PLAN_E_SIZE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_factorization),
		cmocka_unit_test(test_native_and_good_size),
		cmocka_unit_test(test_passes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
