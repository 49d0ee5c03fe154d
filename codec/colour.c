/* Colour transfer: exact sRGB formulas in double, code->linear tables built once (pthread_once),
 * and linear->8-bit encoding through precomputed decision thresholds. */
#include "codec/colour.h"

#include <math.h>
#include <pthread.h>

static float table8[256];
static float table16[65536];
static float thresh8[255]; /* thresh8[k]: smallest linear value that encodes to code k+1 */
/* start8[i]: the code of i / BUCKETS8, so a value in [i, i+1) / BUCKETS8 starts its search there
 * and steps at most a few thresholds (the steepest part of the curve, near 0, moves about 0.8
 * codes a bucket) instead of a binary search over 255 */
#define BUCKETS8 COLOUR_BUCKETS8
static unsigned char start8[BUCKETS8 + 1];
static const struct colour_srgb8_lut lut8 = {start8, thresh8};
static pthread_once_t once8 = PTHREAD_ONCE_INIT, once16 = PTHREAD_ONCE_INIT;

double srgb_to_linear_d(double s)
{
	return s <= 0.04045 ? s / 12.92 : pow((s + 0.055) / 1.055, 2.4);
}

double linear_to_srgb_d(double l)
{
	return l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1.0 / 2.4) - 0.055;
}

float srgb_to_linear(float s)
{
	return (float)srgb_to_linear_d(s);
}

float linear_to_srgb(float l)
{
	return (float)linear_to_srgb_d(l);
}

/* Encoding by the formula, the reference the threshold path must equal. */
static unsigned encode_formula(double l, double maxv, double offset)
{
	if (!(l > 0))
		return 0; /* also NaN */
	if (l >= 1)
		return (unsigned)maxv;
	double c = floor(linear_to_srgb_d(l) * maxv + offset);
	return c < 0 ? 0 : c > maxv ? (unsigned)maxv : (unsigned)c;
}

static void build8(void)
{
	for (int c = 0; c < 256; c++)
		table8[c] = (float)srgb_to_linear_d(c / 255.0);
	/* Threshold between codes k and k+1, as the smallest float that the formula encodes to k+1:
	 * start from the inverse at the midpoint and step by ulps until the formula agrees. */
	for (int k = 0; k < 255; k++) {
		float t = (float)srgb_to_linear_d((k + 0.5) / 255.0);
		while (t > 0 && encode_formula(nextafterf(t, 0), 255, 0.5) >= (unsigned)k + 1)
			t = nextafterf(t, 0);
		while (encode_formula(t, 255, 0.5) < (unsigned)k + 1)
			t = nextafterf(t, 2);
		thresh8[k] = t;
	}
	for (int i = 0; i <= BUCKETS8; i++) {
		float l = (float)i / BUCKETS8;
		unsigned c = 0;
		while (c < 255 && l >= thresh8[c])
			c++;
		start8[i] = (unsigned char)c;
	}
}

static void build16(void)
{
	for (int c = 0; c < 65536; c++)
		table16[c] = (float)srgb_to_linear_d(c / 65535.0);
}

const float *colour_srgb8_table(void)
{
	pthread_once(&once8, build8);
	return table8;
}

const float *colour_srgb16_table(void)
{
	pthread_once(&once16, build16);
	return table16;
}

const struct colour_srgb8_lut *colour_srgb8_lut(void)
{
	pthread_once(&once8, build8);
	return &lut8;
}

uint8_t colour_linear_to_srgb8(float l)
{
	/* the code is the number of thresholds <= l (NaN compares false: 0) */
	return colour_srgb8_fast(colour_srgb8_lut(), l);
}

uint16_t colour_linear_to_srgb16(float l)
{
	return (uint16_t)encode_formula(l, 65535, 0.5);
}

uint16_t colour_linear_to_srgb_max(float l, unsigned maxv)
{
	return (uint16_t)encode_formula(l, maxv > 65535 ? 65535 : maxv, 0.5);
}

static const unsigned char bayer8[8][8] = {
	{ 0, 32, 8, 40, 2, 34, 10, 42 },  { 48, 16, 56, 24, 50, 18, 58, 26 },
	{ 12, 44, 4, 36, 14, 46, 6, 38 }, { 60, 28, 52, 20, 62, 30, 54, 22 },
	{ 3, 35, 11, 43, 1, 33, 9, 41 },  { 51, 19, 59, 27, 49, 17, 57, 25 },
	{ 15, 47, 7, 39, 13, 45, 5, 37 }, { 63, 31, 55, 23, 61, 29, 53, 21 },
};

uint8_t colour_linear_to_srgb8_dither(float l, unsigned x, unsigned y)
{
	double offset = (bayer8[y & 7][x & 7] + 0.5) / 64.0;
	return (uint8_t)encode_formula(l, 255, offset);
}

uint8_t colour_unorm8(float v)
{
	if (!(v > 0))
		return 0;
	if (v >= 1)
		return 255;
	return (uint8_t)((double)v * 255.0 + 0.5);
}

uint16_t colour_unorm16(float v)
{
	if (!(v > 0))
		return 0;
	if (v >= 1)
		return 65535;
	return (uint16_t)((double)v * 65535.0 + 0.5);
}
