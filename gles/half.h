/* IEEE binary16 ("half") conversions, round to nearest even; NaN stays NaN, overflow gives
 * infinity. The array versions use the CPU's F16C instructions, eight at a time, where
 * half_have_f16c() (the same results: tested bit for bit), else the scalar ones. */
#ifndef FFTBLOOM_HALF_H
#define FFTBLOOM_HALF_H

#include <stddef.h>
#include <stdint.h>

uint16_t half_from_float(float f);
float half_to_float(uint16_t h);
int half_have_f16c(void);
void half_from_floats(const float *f, uint16_t *h, size_t n);
void half_to_floats(const uint16_t *h, float *f, size_t n);

#endif
