/* Colour transfer: the exact piecewise sRGB curve (IEC 61966-2-1) between encoded values in [0,1]
 * and linear light, plus table paths for 8- and 16-bit codes. Integer image formats are sRGB
 * encoded; float formats are linear and never pass through here. */
#ifndef FFTBLOOM_COLOUR_H
#define FFTBLOOM_COLOUR_H

#include <stdint.h>

/* Exact formulas, evaluated in double: s <= 0.04045 ? s/12.92 : ((s+0.055)/1.055)^2.4, and its
 * inverse l <= 0.0031308 ? 12.92 l : 1.055 l^(1/2.4) - 0.055. Inputs outside [0,1] follow the
 * same pieces (negative values take the linear piece); NaN gives NaN. */
float srgb_to_linear(float s);
float linear_to_srgb(float l);
double srgb_to_linear_d(double s);
double linear_to_srgb_d(double l);

/* Tables of linear values for every 8-bit (256) and 16-bit (65536) code: table[c] is
 * srgb_to_linear(c / 255.0) resp. c / 65535.0, rounded once to float. Built on first use,
 * thread-safe; never NULL. */
const float *colour_srgb8_table(void);
const float *colour_srgb16_table(void);

/* Linear -> nearest sRGB code: round(linear_to_srgb(clamp(l, 0, 1)) * 255) with ties rounding up;
 * NaN gives 0. The 8-bit path is a binary search over the exact decision thresholds, so it equals
 * the formula without calling pow. */
uint8_t colour_linear_to_srgb8(float l);

/* The tables behind colour_linear_to_srgb8, for encoder loops that inline it: fetch them once,
 * then colour_srgb8_fast(lut, l) gives the same code. start[i] is the code of i / 4096; thresh[k]
 * the smallest linear value encoding to k + 1. */
#define COLOUR_BUCKETS8 4096
struct colour_srgb8_lut {
	const unsigned char *start; /* COLOUR_BUCKETS8 + 1 codes */
	const float *thresh;        /* 255 thresholds */
};
const struct colour_srgb8_lut *colour_srgb8_lut(void);

static inline uint8_t colour_srgb8_fast(const struct colour_srgb8_lut *t, float l)
{
	if (!(l > 0)) /* NaN too */
		return 0;
	unsigned c = l >= 1 ? t->start[COLOUR_BUCKETS8] : t->start[(unsigned)(l * COLOUR_BUCKETS8)];
	while (c < 255 && l >= t->thresh[c])
		c++;
	return (uint8_t)c;
}
uint16_t colour_linear_to_srgb16(float l);
/* As colour_linear_to_srgb16 for codes 0..maxv (1023 for 10 bits, 4095 for 12; at most 65535):
 * round(linear_to_srgb(clamp(l, 0, 1)) * maxv), ties up, NaN 0. Evaluates the formula. */
uint16_t colour_linear_to_srgb_max(float l, unsigned maxv);

/* As colour_linear_to_srgb8 with an ordered dither: the threshold offset comes from an 8x8 Bayer
 * matrix at pixel (x, y) in place of the 0.5 of rounding, so flat gradients do not band. */
uint8_t colour_linear_to_srgb8_dither(float l, unsigned x, unsigned y);

/* Linear (straight, not sRGB) quantisation as used for alpha: round(clamp(v,0,1) * max). */
uint8_t colour_unorm8(float v);
uint16_t colour_unorm16(float v);

#endif
