/* float16 conversions: every half round-trips through float; the portable float -> half agrees
 * bit for bit with the CPU's F16C instruction on a million random floats over every exponent
 * range (normal, subnormal, overflow, rounding ties). No GPU needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gles/half.h"
#include "tests/testutil.h"

static void test_every_half_round_trips(void **state)
{
	(void)state;
	int bad = 0;
	for (unsigned h = 0; h < 65536; h++) {
		float f = half_to_float((uint16_t)h);
		int nan = ((h >> 10) & 0x1f) == 0x1f && (h & 0x3ff);
		if (nan ? !isnan(f) : half_from_float(f) != h)
			bad++;
	}
	printf("halves that did not round-trip: %d of 65536\n", bad);
	assert_int_equal(bad, 0);
	assert_true(half_to_float(0x3c00) == 1.0f && half_to_float(0x7bff) == 65504.0f);
	assert_true(half_to_float(0x0001) == ldexpf(1, -24));
	assert_int_equal(half_from_float(1e9f), 0x7c00);
	assert_int_equal(half_from_float(-65520.0f), 0xfc00); /* rounds past the largest */
	assert_int_equal(half_from_float(65519.0f), 0x7bff);
}

static void test_agrees_with_f16c(void **state)
{
	(void)state;
	if (!half_have_f16c()) {
		printf("no F16C on this CPU: comparing against the double-rounded reference only\n");
	}
	int bad = 0, n = 1000000;
	for (int i = 0; i < n; i++) {
		/* random sign, exponent across [-30, 17] and mantissa; every 7th a tie case */
		float f = ldexpf((float)(1 + tu_uniform()), (int)(tu_uniform() * 48) - 30);
		if (i % 7 == 0) {
			uint32_t x;
			memcpy(&x, &f, 4);
			x = (x & ~0x1fffu) | 0x1000u; /* exactly halfway between two halves */
			memcpy(&f, &x, 4);
		}
		if (tu_uniform() < 0.5)
			f = -f;
		uint16_t a = half_from_float(f);
		if (half_have_f16c()) {
			float four[4] = {f, 0, 0, 0};
			uint16_t h[4];
			half_pack4_f16c(four, h);
			if (a != h[0])
				bad++;
			float back[4];
			half_unpack4_f16c(h, back);
			if (back[0] != half_to_float(h[0]) && !(isnan(back[0]) && isnan(half_to_float(h[0]))))
				bad++;
		} else {
			/* nearest: no other half is closer than the one chosen */
			double d = fabs((double)half_to_float(a) - f);
			if (isfinite(half_to_float(a)) && (fabs((double)half_to_float(a + 1) - f) < d ||
			                                   ((a & 0x7fff) && fabs((double)half_to_float(a - 1) - f) < d)))
				bad++;
		}
	}
	printf("disagreements: %d of %d\n", bad, n);
	assert_int_equal(bad, 0);
}

int main(void)
{
	tu_seed_from_clock();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_half_round_trips),
		cmocka_unit_test(test_agrees_with_f16c),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
