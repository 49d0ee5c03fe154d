/* IEEE binary16 conversions for frames that cross between host and GPU as float16: portable
 * code, and the F16C instructions where the CPU has them. */
#include "gles/half.h"

#include <string.h>

uint16_t half_from_float(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000u, mag = x & 0x7fffffffu;
	if (mag >= 0x7f800000u) /* inf or NaN */
		return (uint16_t)(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u : 0));
	if (mag >= 0x477ff000u) /* rounds past 65504 */
		return (uint16_t)(sign | 0x7c00u);
	if (mag < 0x38800000u) { /* subnormal half or zero */
		if (mag < 0x33000000u)
			return (uint16_t)sign;
		uint32_t m = (mag & 0x7fffffu) | 0x800000u, shift = 126 - (mag >> 23);
		uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
		r += rem > halfway || (rem == halfway && (r & 1));
		return (uint16_t)(sign | r);
	}
	uint32_t r = mag - 0x38000000u, h = r >> 13, rem = r & 0x1fffu;
	h += rem > 0x1000u || (rem == 0x1000u && (h & 1));
	return (uint16_t)(sign | h);
}

float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ffu, x;
	if (e == 0x1f)
		x = sign | 0x7f800000u | (m << 13);
	else if (e)
		x = sign | ((e + 112) << 23) | (m << 13);
	else if (m) { /* subnormal: normalise */
		e = 113;
		while (!(m & 0x400u))
			m <<= 1, e--;
		x = sign | (e << 23) | ((m & 0x3ffu) << 13);
	} else
		x = sign;
	float f;
	memcpy(&f, &x, 4);
	return f;
}

/* Four floats <-> four halves, with the F16C instructions where the CPU has them (x86-64 since
 * 2012; the portable code above runs elsewhere and costs about 10x more). */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
__attribute__((target("f16c"))) void half_pack4_f16c(const float *f, uint16_t *h)
{
	_mm_storel_epi64((__m128i *)h, _mm_cvtps_ph(_mm_loadu_ps(f), _MM_FROUND_TO_NEAREST_INT));
}
__attribute__((target("f16c"))) void half_unpack4_f16c(const uint16_t *h, float *f)
{
	_mm_storeu_ps(f, _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)h)));
}
int half_have_f16c(void)
{
	static int known = -1;
	if (known < 0)
		known = __builtin_cpu_supports("f16c") ? 1 : 0;
	return known;
}
#else
void half_pack4_f16c(const float *f, uint16_t *h) { (void)f, (void)h; }
void half_unpack4_f16c(const uint16_t *h, float *f) { (void)h, (void)f; }
int half_have_f16c(void) { return 0; }
#endif

