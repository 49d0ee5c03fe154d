/* Tests for codec/colour: the sRGB curve against an independent long-double evaluation of the
 * IEC 61966-2-1 formulas at all 256 and 65536 codes, exact round trips code -> linear -> code,
 * rounding at the decision thresholds, and the ordered dither's mean. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>

#include "codec/colour.h"

static long double ref_to_linear(long double s)
{
	return s <= 0.04045L ? s / 12.92L : powl((s + 0.055L) / 1.055L, 2.4L);
}

static long double ref_to_srgb(long double l)
{
	return l <= 0.0031308L ? l * 12.92L : 1.055L * powl(l, 1.0L / 2.4L) - 0.055L;
}

/* |a - b| in units of float ulp at b */
static double ulps(float a, long double b)
{
	float fb = (float)b;
	float u = nextafterf(fabsf(fb), INFINITY) - fabsf(fb);
	return (double)(fabsl((long double)a - b) / u);
}

static void check_table(const float *t, unsigned maxcode)
{
	double worst = 0;
	for (unsigned c = 0; c <= maxcode; c++) {
		long double ref = ref_to_linear((long double)c / maxcode);
		double e = ulps(t[c], ref);
		if (e > worst)
			worst = e;
		if (!(e <= 0.5 + 1e-6))
			fail_msg("code %u/%u: table %.9g, reference %.12Lg (%.3f ulp)", c, maxcode,
				 (double)t[c], ref, e);
		float in = (float)c / (float)maxcode; /* the function takes a float: judge it on that */
		double e2 = ulps(srgb_to_linear(in), ref_to_linear(in));
		if (!(e2 <= 0.5 + 1e-6))
			fail_msg("srgb_to_linear(%u/%u) off by %.3f ulp", c, maxcode, e2);
	}
	print_message("codes 0..%u: table worst error %.3f ulp (limit 0.5)\n", maxcode, worst);
	assert_true(t[0] == 0.0f && t[maxcode] == 1.0f);
	for (unsigned c = 1; c <= maxcode; c++)
		assert_true(t[c] > t[c - 1]);
}

static void test_table8(void **state)
{
	(void)state;
	check_table(colour_srgb8_table(), 255);
}

static void test_table16(void **state)
{
	(void)state;
	check_table(colour_srgb16_table(), 65535);
}

static void test_roundtrip_codes(void **state)
{
	(void)state;
	const float *t8 = colour_srgb8_table(), *t16 = colour_srgb16_table();
	for (unsigned c = 0; c < 256; c++)
		assert_int_equal(colour_linear_to_srgb8(t8[c]), c);
	for (unsigned c = 0; c < 65536; c++)
		if (colour_linear_to_srgb16(t16[c]) != c)
			fail_msg("16-bit code %u -> %.9g -> %u", c, (double)t16[c],
				 colour_linear_to_srgb16(t16[c]));
	for (unsigned c = 0; c < 256; c++) {
		long double s = ref_to_srgb(t8[c]);
		if (!(fabsl(s * 255 - c) < 1e-4L))
			fail_msg("linear_to_srgb(%g) = %Lg, want %u/255", (double)t8[c], s, c);
		assert_true(fabsf(linear_to_srgb(t8[c]) * 255.0f - (float)c) < 1e-3f);
	}
}

/* Rounding: for random values and values next to every decision point, the encoder gives
 * floor(srgb * 255 + 0.5) of the reference curve. */
static void test_rounding(void **state)
{
	(void)state;
	unsigned s = 99, checked = 0;
	for (int i = 0; i < 1000000; i++) {
		s = s * 1664525u + 1013904223u;
		float l = (float)(s >> 8) / 16777216.0f;
		unsigned want = (unsigned)floorl(ref_to_srgb(l) * 255 + 0.5L);
		if (colour_linear_to_srgb8(l) != want)
			fail_msg("l = %.9g: got %u want %u", (double)l, colour_linear_to_srgb8(l), want);
		unsigned want16 = (unsigned)floorl(ref_to_srgb(l) * 65535 + 0.5L);
		if (colour_linear_to_srgb16(l) != want16)
			fail_msg("l = %.9g: got %u want %u (16)", (double)l,
				 colour_linear_to_srgb16(l), want16);
		checked++;
	}
	/* around each midpoint: a few ulps either side, where rounding decides */
	for (unsigned k = 0; k < 255; k++) {
		float m = (float)ref_to_linear((k + 0.5L) / 255);
		float l = m;
		for (int j = 0; j < 4; j++)
			l = nextafterf(l, 0);
		for (int j = 0; j < 9; j++, l = nextafterf(l, 2)) {
			long double e = ref_to_srgb(l) * 255 + 0.5L;
			if (fabsl(e - floorl(e + 0.5L)) < 1e-12L)
				continue; /* a tie at long-double precision: either answer is fair */
			unsigned want = (unsigned)floorl(e);
			if (colour_linear_to_srgb8(l) != want)
				fail_msg("near threshold %u: l = %.9g got %u want %u", k, (double)l,
					 colour_linear_to_srgb8(l), want);
			checked++;
		}
	}
	/* out of range */
	assert_int_equal(colour_linear_to_srgb8(-1.0f), 0);
	assert_int_equal(colour_linear_to_srgb8(2.0f), 255);
	assert_int_equal(colour_linear_to_srgb8(NAN), 0);
	assert_int_equal(colour_linear_to_srgb8(INFINITY), 255);
	assert_int_equal(colour_linear_to_srgb16(NAN), 0);
	assert_int_equal(colour_linear_to_srgb16(1e30f), 65535);
	assert_int_equal(colour_unorm8(0.5f), 128);
	assert_int_equal(colour_unorm8(0.499f), 127);
	assert_int_equal(colour_unorm16(1.0f / 65535), 1);
	assert_int_equal(colour_unorm16(-3), 0);
	print_message("%u values checked against the reference\n", checked);
}

/* Dither: each code is the floor or ceiling of the exact value, and the mean over the 8x8
 * matrix is the exact value within 1/64 of a code. */
/* The inlined encoder (colour_srgb8_fast, what the codecs' loops call) against the reference
 * curve over (0, 1): every 61st float from 2^-16 up, and a few ulps either side of every
 * 4096th float from 2^-14 (where the float bits' top 20 bits change). */
static unsigned ref8(float l, int *tie)
{
	long double e = ref_to_srgb(l) * 255 + 0.5L;
	*tie = fabsl(e - floorl(e + 0.5L)) < 1e-12L;
	return (unsigned)floorl(e);
}

static void test_fast_every_bucket(void **state)
{
	(void)state;
	const struct colour_srgb8_lut *lut = colour_srgb8_lut();
	unsigned long checked = 0;
	union {
		float f;
		uint32_t u;
	} b = {0x1p-16f};
	for (; b.f < 1.0f; b.u += 61) {
		int tie;
		unsigned want = ref8(b.f, &tie);
		if (!tie && colour_srgb8_fast(lut, b.f) != want)
			fail_msg("l = %.9g: got %u want %u", (double)b.f, colour_srgb8_fast(lut, b.f), want);
		checked++;
	}
	for (uint32_t i = (127u - 14u) << 11; i < 127u << 11; i++)
		for (int d = -2; d <= 2; d++) {
			union {
				float f;
				uint32_t u;
			} e = {.u = (uint32_t)((int64_t)(i << 12) + d)};
			int tie;
			unsigned want = ref8(e.f, &tie);
			if (!tie && colour_srgb8_fast(lut, e.f) != want)
				fail_msg("bucket edge l = %.9g: got %u want %u", (double)e.f,
				         colour_srgb8_fast(lut, e.f), want);
			checked++;
		}
	assert_int_equal(colour_srgb8_fast(lut, 0x1p-30f), 0);
	assert_int_equal(colour_srgb8_fast(lut, 0.99999994f), 255);
	printf("colour_srgb8_fast: %lu values against the reference curve\n", checked);
}

static void test_dither(void **state)
{
	(void)state;
	for (int i = 0; i <= 1000; i++) {
		float l = (float)i / 1000.0f;
		long double e = ref_to_srgb(l) * 255;
		double sum = 0;
		for (unsigned y = 0; y < 8; y++)
			for (unsigned x = 0; x < 8; x++) {
				unsigned c = colour_linear_to_srgb8_dither(l, x + 16, y + 8);
				if (!(c == floorl(e) || c == ceill(e)))
					fail_msg("l=%g: dithered code %u, exact %Lg", (double)l, c, e);
				sum += c;
			}
		if (!(fabsl(sum / 64 - e) <= 1.0L / 64 + 1e-9L))
			fail_msg("l=%g: dither mean %g, exact %Lg", (double)l, sum / 64, e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table8),      cmocka_unit_test(test_table16),
		cmocka_unit_test(test_roundtrip_codes), cmocka_unit_test(test_rounding),
		cmocka_unit_test(test_dither), cmocka_unit_test(test_fast_every_bucket),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
